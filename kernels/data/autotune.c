/* data/autotune.c — AUTOTUNE's decisions (see autotune.h): the trial-and-
 * revert climb of a map's parallelism, the CPU and RAM budgets. */
#include "autotune.h"

#include "pipeline.h"
#include "../core/parallel.h"

#include <unistd.h>

/* A move up must make the caller's time per element this much shorter to
 * stay (a worker more costs CPU the consumer's kernels could use); a move
 * down may make it this much longer (fewer threads, fewer hand-offs, less
 * CPU taken from the consumer) and stays. Measured windows on a shared
 * machine vary by a few percent; a wrong call is undone by a later trial. */
static const double GAIN = 0.05, SLACK = 0.02, ABORT = 0.25;
/* The caller spends more than this share of its time inside next: the stage
 * holds it up, so more parallelism is tried first. Below it the stage keeps
 * up and only fewer threads are tried. */
static const double GROW_SHARE = 0.10;

void dtune_init(dtune *k, int value, int lo, int hi) {
  memset(k, 0, sizeof *k);
  k->lo = lo, k->hi = hi < lo ? lo : hi;
  k->value = value < k->lo ? k->lo : value > k->hi ? k->hi : value;
  k->backoff_up = k->backoff_down = k->backoff_far = 1;
}

static int log2i(int v) {
  int e = 0;
  while (v > 1) v >>= 1, e++;
  return e;
}

int dtune_save(const dtune *k) {
  return log2i(k->backoff_up) | log2i(k->backoff_down) << 4 | log2i(k->backoff_far) << 8 | 1 << 12;
}

void dtune_restore(dtune *k, int saved, int64_t settled_ns) {
  if (settled_ns > 0) k->settled = (double)settled_ns, k->settled_n = DTUNE_TRIAL;
  if (!(saved & 1 << 12)) return; /* nothing saved yet */
  k->hold_up = k->backoff_up = 1 << (saved & 15);
  k->hold_down = k->backoff_down = 1 << (saved >> 4 & 15);
  k->hold_far = k->backoff_far = 1 << (saved >> 8 & 15);
  if (k->backoff_up == 1) k->hold_up = 0; /* not rejected: free to try at once */
  if (k->backoff_down == 1) k->hold_down = 0;
  if (k->backoff_far == 1) k->hold_far = 0;
}

static void reject(int *backoff, int *hold) {
  *backoff = *backoff * 2 > DTUNE_BACKOFF_MAX ? DTUNE_BACKOFF_MAX : *backoff * 2;
  *hold = *backoff;
}

/* A move is judged by the fastest of DTUNE_TRIAL windows at the new value
 * against the fastest recent window of the settled value (a minimum that
 * rises 2% a window, so it follows a slower phase of the pass). On a shared
 * machine other programs only ever add time to a window, so minima are what
 * compare the settings; one 10 ms window alone is too noisy to judge by. */
int dtune_window(dtune *k, double cycle_ns, double share, int budget) {
  int hi = k->hi < budget ? k->hi : budget;
  if (hi < k->lo) hi = k->lo;
  if (k->trial) {
    if (k->trial_left == DTUNE_TRIAL || cycle_ns < k->trial_best) k->trial_best = cycle_ns;
    /* a trial already far slower ends at once: trials cost what they lose */
    if (--k->trial_left > 0 && k->trial_best <= k->settled * (1 + ABORT)) return k->value;
    double c = k->trial_best;
    bool keep = k->trial > 0 ? c < k->settled * (1 - GAIN) : c <= k->settled * (1 + SLACK);
    int *backoff = k->trial == 1 ? &k->backoff_up : k->trial == -1 ? &k->backoff_down : &k->backoff_far;
    int *hold = k->trial == 1 ? &k->hold_up : k->trial == -1 ? &k->hold_down : &k->hold_far;
    if (keep) {
      *backoff = 1, *hold = 0;
      k->settled = c, k->settled_n = DTUNE_TRIAL;
    } else {
      k->value = k->before;
      reject(backoff, hold);
    }
    k->trial = 0;
    if (k->value > hi) k->value = hi, k->settled_n = 0;
    return k->value;
  }
  if (k->value > hi) { /* the budget shrank: no trial, at once */
    k->settled_n = 0;
    return k->value = hi;
  }
  k->settled = k->settled_n && k->settled * 1.02 < cycle_ns ? k->settled * 1.02 : cycle_ns;
  k->settled_n++;
  if (k->hold_up) k->hold_up--;
  if (k->hold_down) k->hold_down--;
  if (k->hold_far) k->hold_far--;
  if (k->settled_n < DTUNE_TRIAL) return k->value;
  /* Besides one step either way, two jumps past a local optimum that one
   * step cannot see: straight down to lo (with lo 0, the caller's own
   * thread, which has no hand-offs at all and can beat every worker count
   * when one fewer worker alone does not), and from 0 straight up to 2 (one
   * worker runs the map's work on one thread as the caller did; only the
   * second adds a core). They share a backoff. */
  bool up = k->value < hi && !k->hold_up, down = k->value > k->lo && !k->hold_down;
  bool far_down = k->value - 1 > k->lo && !k->hold_far, far_up = k->value == 0 && hi >= 2 && !k->hold_far;
  int dir = 0;
  if (share > GROW_SHARE && (up || far_up)) dir = up ? 1 : 2; /* held up: more first, else see whether fewer does as well */
  else if (down) dir = -1;                                    /* keeping up: fewer threads if that keeps up too */
  else if (far_down) dir = -2;
  if (dir) {
    k->trial = dir;
    k->trial_left = DTUNE_TRIAL;
    k->before = k->value;
    k->value = dir == -2 ? k->lo : k->value + dir;
  }
  return k->value;
}

int dtune_cpu_budget(int consumer_busy_permille) {
  int cores = tide_parallel_threads();
  int busy = consumer_busy_permille < 0 ? 0 : consumer_busy_permille > 1000 ? 1000 : consumer_busy_permille;
  int left = (cores * (1000 - busy) + 500) / 1000;
  return left < 1 ? 1 : left;
}

void dtune_consumer_enter(dpass *pass, int64_t enter) {
  if (pass->cons_exit) pass->cons_busy += enter - pass->cons_exit;
  if (!pass->cons_t0) pass->cons_t0 = enter;
  int64_t span = enter - pass->cons_t0;
  if (++pass->cons_n >= DTUNE_WINDOW_MIN && span >= DTUNE_WINDOW_NS) {
    __atomic_store_n(&pass->consumer_busy, (int)(pass->cons_busy * 1000 / span), __ATOMIC_RELAXED);
    pass->cons_t0 = enter, pass->cons_busy = 0, pass->cons_n = 0;
  }
}

int dtune_ram_cap(int64_t elem_bytes, int cap) {
  static int64_t budget; /* half the physical memory, TF's default ram_budget */
  int64_t b = __atomic_load_n(&budget, __ATOMIC_RELAXED);
  if (b == 0) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    b = pages > 0 && size > 0 ? (int64_t)pages * size / 2 : (int64_t)1 << 30;
    __atomic_store_n(&budget, b, __ATOMIC_RELAXED);
  }
  if (elem_bytes <= 0) return cap;
  int64_t n = b / elem_bytes;
  return n < 1 ? 1 : n < cap ? (int)n : cap;
}

int tide_data_autotune_simulate(int start, int hi, int budget, const double *cycle_ns, const double *share, int windows,
                                int *trace) {
  if (hi < 0 || !cycle_ns || !share || windows < 0) return -1;
  dtune k;
  dtune_init(&k, start, 0, hi);
  for (int w = 0; w < windows; w++) {
    int v = dtune_window(&k, cycle_ns[k.value], share[k.value], budget);
    if (trace) trace[w] = v;
  }
  return k.value;
}
