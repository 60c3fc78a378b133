/* core/threads.c — a small fork-join thread pool: each participant starts on
 * its own slice of a range and then helps with the others', chunk by chunk. */
#include "internal.h"
#include "parallel.h"
#include "tide/profiler.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How work is split, and why.
 * - The range is cut into one region per participant (the caller is one),
 *   and each region into a few chunks. A participant claims chunks of its own
 *   region first (an atomic counter per region), so with even progress each
 *   thread walks the same part of memory call after call (its own cache),
 *   then claims chunks of the other regions. A thread that is descheduled
 *   (another program busy on its core) or wakes late holds up at most the
 *   chunk it is running: the others take the rest of its region.
 * - The caller never waits long with its core busy: once its claims run out
 *   it spins briefly for a helper still running a chunk, then sleeps. Its
 *   core then goes idle, and the scheduler moves a helper that was
 *   preempted there, instead of leaving it queued behind the other program.
 * - Workers spin for a moment after a job, so back-to-back ops start with no
 *   wake-up syscall, then sleep. */

enum {
  MAX_THREADS = 256,
  MAX_REGIONS = 64,        /* threads beyond this share regions */
  CHUNKS_PER_REGION = 4,   /* finer chunks balance better but cost an atomic each */
  WORKER_SPIN_NS = 50000,  /* a worker's wait for the next job before it sleeps */
  CALLER_SPIN_NS = 20000   /* the caller's wait for helpers before it sleeps */
};

/* A region's next chunk start and end, alone on a cache line (claims from
 * two threads must not contend on a neighbour's line). */
typedef struct __attribute__((aligned(64))) region {
  int64_t next; /* atomic */
  int64_t end;
} region;

typedef struct job {
  tide_range_fn fn;
  void *ctx;
  int64_t chunk;
  int nregions;
  int slots;               /* atomic: participants so far (the caller is slot 0) */
  int max_slots;           /* the thread count when the job began: more never help */
  region *regions;
  const char *label;       /* while the profiler records: the op's name, for each participant's event; else NULL */
  tide_memory_account *account; /* the caller's: workers charge their chunks' scratch to it (core/scratch.h) */
} job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int nworkers;          /* started workers (written under the lock) */
static int nthreads;          /* configured: workers + caller */
static int sleepers;          /* atomic: workers asleep or about to sleep on `wake` */
static uint64_t generation;   /* atomic; bumped for each job */
static job *current;          /* atomic: the job open to workers, or NULL */
static int busy;              /* atomic: workers that may be reading `current`'s job */
static int caller_waiting;    /* atomic: the caller sleeps on `done` */
static _Thread_local int in_pool;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin until *word != value or about `ns` pass; true when it changed. */
static bool spin_while_equal64(const uint64_t *word, uint64_t value, int64_t ns) {
  int64_t deadline = 0;
  for (int i = 1;; i++) {
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) return true;
    tide_spin_pause();
    if ((i & 31) == 0) { /* a clock read costs ~20 ns: not on every turn */
      int64_t t = now_ns();
      if (!deadline) deadline = t + ns;
      else if (t >= deadline) return false;
    }
  }
}

/* Claim and run chunks: of region `first` first, then of the others in
 * turn. Made twice: with `profiled` (a constant) 0 the loop is as it was. */
static inline __attribute__((always_inline)) int64_t claim_chunks(job *j, int first, int profiled, int *chunks) {
  int nr = j->nregions;
  int64_t items = 0;
  for (int k = 0; k < nr; k++) {
    region *r = &j->regions[(first + k) % nr];
    for (;;) {
      if (__atomic_load_n(&r->next, __ATOMIC_RELAXED) >= r->end) break;
      int64_t begin = __atomic_fetch_add(&r->next, j->chunk, __ATOMIC_RELAXED);
      if (begin >= r->end) break;
      int64_t end = begin + j->chunk < r->end ? begin + j->chunk : r->end;
      j->fn(j->ctx, begin, end);
      if (profiled) items += end - begin, ++*chunks;
    }
  }
  return items;
}

static void u64_text(char *p, uint64_t v) { /* decimal, no printf on this path */
  char digits[24], *d = digits + sizeof digits;
  *--d = 0;
  do *--d = (char)('0' + v % 10); while ((v /= 10) > 0);
  while ((*p++ = *d++)) {}
}

/* While the profiler records: this thread's share of the job as one event
 * named as the op, on this thread ("3 chunks, 98304 items"). */
static __attribute__((noinline, cold)) void run_chunks_profiled(job *j, int first) {
  int chunks = 0;
  int64_t t0 = tide_prof_now();
  int64_t items = claim_chunks(j, first, 1, &chunks);
  if (chunks == 0) return; /* came too late: nothing left to claim */
  char text[64];
  u64_text(text, (uint64_t)chunks);
  size_t n = strlen(text);
  memcpy(text + n, chunks == 1 ? " chunk, " : " chunks, ", chunks == 1 ? 9 : 10);
  n = strlen(text);
  u64_text(text + n, (uint64_t)items);
  n = strlen(text);
  memcpy(text + n, " items", 7);
  tide_prof_record(TIDE_PROF_WORKER, j->label, text, t0, tide_prof_now());
}

static void run_chunks(job *j, int first) {
  if (TIDE_UNLIKELY(j->label != NULL)) run_chunks_profiled(j, first);
  else claim_chunks(j, first, 0, NULL);
}

/* A worker: spin, then sleep, until a new generation brings a job; help with it. */
static void *worker_main(void *arg) {
  (void)arg;
  in_pool = 1;
  uint64_t seen = 0;
  for (;;) {
    if (!spin_while_equal64(&generation, seen, WORKER_SPIN_NS)) {
      /* Count as a sleeper before the last look at `generation`; a caller
       * bumps it before it reads `sleepers`: one of the two sees the other. */
      pthread_mutex_lock(&lock);
      __atomic_add_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
      while (__atomic_load_n(&generation, __ATOMIC_SEQ_CST) == seen) pthread_cond_wait(&wake, &lock);
      __atomic_sub_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&lock);
    }
    seen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    /* Announce first, then look: the caller clears `current` before it
     * waits for `busy` to drain, so a job seen here is still alive. */
    __atomic_add_fetch(&busy, 1, __ATOMIC_SEQ_CST);
    job *j = __atomic_load_n(&current, __ATOMIC_SEQ_CST);
    if (j) {
      int slot = __atomic_fetch_add(&j->slots, 1, __ATOMIC_RELAXED);
      if (slot < j->max_slots) { /* workers left from a larger count sit out */
        tide_memory_account_swap(j->account);
        run_chunks(j, slot % j->nregions);
        tide_memory_account_swap(NULL);
      }
    }
    if (__atomic_sub_fetch(&busy, 1, __ATOMIC_SEQ_CST) == 0 && __atomic_load_n(&caller_waiting, __ATOMIC_SEQ_CST)) {
      pthread_mutex_lock(&lock);
      pthread_cond_broadcast(&done);
      pthread_mutex_unlock(&lock);
    }
  }
  return NULL;
}

/* TIDE_NUM_THREADS when set, else the online cores (at most MAX_THREADS). */
static int default_threads(void) {
  const char *env = getenv("TIDE_NUM_THREADS");
  if (env && atoi(env) > 0) return atoi(env) < MAX_THREADS ? atoi(env) : MAX_THREADS;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n < MAX_THREADS ? n : MAX_THREADS) : 1;
}

int tide_parallel_threads(void) {
  int n = __atomic_load_n(&nthreads, __ATOMIC_RELAXED);
  if (n == 0) {
    n = default_threads();
    int expected = 0;
    if (!__atomic_compare_exchange_n(&nthreads, &expected, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      n = expected;
  }
  return n;
}

/* Start workers up to the configured count (called with the lock held).
 * Workers block every asynchronous signal (they inherit the mask at
 * creation): a process signal (SIGINT for the REPL's Ctrl-C, SIGPROF for
 * LuaJIT's profiler jit.p) then reaches a thread of the program's own,
 * never a worker, whose handler would touch the Lua VM from a thread that
 * does not run it (jit.p corrupted the heap that way). */
static void ensure_workers(int want) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (nworkers < want - 1 && nworkers < MAX_THREADS) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker_main, NULL) != 0) break;
    pthread_detach(t);
    __atomic_store_n(&nworkers, nworkers + 1, __ATOMIC_RELAXED);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tide_parallel_run_inline(int on) { in_pool = on != 0; }

void tide_parallel_set_threads(int n) {
  if (n < 1) n = 1;
  if (n > MAX_THREADS) n = MAX_THREADS;
  __atomic_store_n(&nthreads, n, __ATOMIC_RELAXED);
}

/* Wait until no worker can still be reading the finished job (`current` is
 * already cleared): spin a little, then sleep so this core can go idle. */
static void wait_for_helpers(void) {
  if (!__atomic_load_n(&busy, __ATOMIC_SEQ_CST)) return;
  int64_t deadline = 0;
  for (int i = 1; __atomic_load_n(&busy, __ATOMIC_SEQ_CST); i++) {
    tide_spin_pause();
    if ((i & 31) == 0) {
      int64_t t = now_ns();
      if (!deadline) deadline = t + CALLER_SPIN_NS;
      else if (t >= deadline) break;
    }
  }
  pthread_mutex_lock(&lock);
  __atomic_store_n(&caller_waiting, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&busy, __ATOMIC_SEQ_CST)) pthread_cond_wait(&done, &lock);
  __atomic_store_n(&caller_waiting, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&lock);
}

void tide_parallel_for(int64_t n, int64_t grain, tide_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int threads = tide_parallel_threads();
  if (in_pool || threads <= 1 || n < 2 * grain) {
    fn(ctx, 0, n);
    return;
  }
  /* Regions of at least a grain; chunks of at least half a grain. */
  int64_t parts = n / grain;
  int nregions = (int)(parts < threads ? parts : threads);
  if (nregions > MAX_REGIONS) nregions = MAX_REGIONS;
  int64_t per_region = (n + nregions - 1) / nregions;
  int64_t chunk = (per_region + CHUNKS_PER_REGION - 1) / CHUNKS_PER_REGION;
  if (chunk < (grain + 1) / 2) chunk = (grain + 1) / 2;
  region regions[MAX_REGIONS];
  for (int r = 0; r < nregions; r++) {
    regions[r].next = per_region * r < n ? per_region * r : n;
    regions[r].end = per_region * (r + 1) < n ? per_region * (r + 1) : n;
  }
  /* read once per job, past the inline path: a tiny op never gets here */
  const char *label = NULL;
  if (TIDE_UNLIKELY(tide_hooks_now() & TIDE_HOOK_PROFILE)) label = tide_prof_label ? tide_prof_label : "parallel_for";
  job j = {fn, ctx, chunk, nregions, 1, threads, regions, label, tide_memory_account_current()};

  /* One job at a time: a second thread calling in meanwhile runs alone. */
  job *expected = NULL;
  if (!__atomic_compare_exchange_n(&current, &expected, &j, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    fn(ctx, 0, n);
    return;
  }
  /* Workers spinning on `generation` see the job with no lock or syscall;
   * sleeping ones need the signal. */
  __atomic_add_fetch(&generation, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&nworkers, __ATOMIC_RELAXED) < threads - 1) {
    pthread_mutex_lock(&lock);
    ensure_workers(threads);
    pthread_mutex_unlock(&lock);
  }
  if (__atomic_load_n(&sleepers, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
  }

  in_pool = 1;
  run_chunks(&j, 0);
  in_pool = 0;
  /* Every chunk is claimed: no new helper may join, then wait out those in it. */
  __atomic_store_n(&current, NULL, __ATOMIC_SEQ_CST);
  wait_for_helpers();
}
