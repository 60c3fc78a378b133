/* data/autotune.h — AUTOTUNE's decisions: the hill-climbing controller of a
 * map's parallelism, the RAM cap of a prefetch depth and the pass's CPU budget.
 *
 * What is taken from TF's model-based autotune (tf.data's model.cc): the
 * tunables are a map's parallelism and a prefetch buffer's depth; they are
 * set from per-stage timings measured while the pass runs, not from static
 * guesses; the parallelism of all tuned maps of a pass together stays within
 * a CPU budget of the machine's cores, and buffers within a RAM budget (half
 * the physical memory, TF's default). What differs: TF predicts the output
 * latency from a queueing model of every node's processing time and climbs
 * that model; on 2 cores the cost that decides (the hand-off of an element
 * between threads, a few µs, more than a Fashion-MNIST map's work) is not in
 * such a model, so here each step of the climb is a trial that the measured
 * time per element accepts or reverts, and the budget subtracts the cores
 * the consumer (the training step and its kernel pool) keeps busy. */
#ifndef TIDE_DATA_AUTOTUNE_H
#define TIDE_DATA_AUTOTUNE_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC (the tuner's clock). */
static inline int64_t dtune_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One tuned integer (a map's active workers, 0 = in the caller's thread). */
typedef struct dtune {
  int value, lo, hi;        /* the setting and its bounds */
  int trial;                /* on trial: +1 one more, -1 one fewer, -2 straight to lo, +2 from 0 to 2; 0: settled */
  int trial_left;           /* windows of the trial still to measure */
  double trial_best;        /* the fewest ns per element among them */
  int before;               /* the value before the trial */
  double settled;           /* ns per element at the settled value (a slowly rising minimum) */
  int settled_n;            /* windows measured at it */
  int hold_up, hold_down, hold_far; /* windows to wait before the next trial that way */
  int backoff_up, backoff_down, backoff_far;
} dtune;

enum {
  DTUNE_WINDOW_NS = 10000000, /* a decision every 10 ms of the caller's time ... */
  DTUNE_WINDOW_MIN = 16,      /* ... and at least this many elements */
  DTUNE_BACKOFF_MAX = 128,    /* a rejected direction is retried after at most 128 windows (1.3 s) */
  DTUNE_TRIAL = 3             /* windows a trial is measured over */
};

void dtune_init(dtune *k, int value, int lo, int hi);
/* The tuner's backoffs in one int, for the next pass to start with
 * (dtune_restore: it then waits that long before retrying a direction the
 * last pass rejected, instead of paying for the same trials every epoch),
 * and with the settled setting's time per element (settled_ns > 0), so a
 * short pass (a few windows) can judge a trial without measuring it again. */
int dtune_save(const dtune *k);
void dtune_restore(dtune *k, int saved, int64_t settled_ns);
/* The setting to carry to the next pass: the settled one (not one on trial). */
static inline int dtune_settled_value(const dtune *k) { return k->trial ? k->before : k->value; }
/* One window's measurements: cycle_ns, the caller's time per element (from
 * one call of next to the next); share, the part of it spent inside next
 * (waiting for, or in the caller's thread running, the stage); budget, the
 * most the value may be now. Returns the value for the next window. */
int dtune_window(dtune *k, double cycle_ns, double share, int budget);

/* The workers tuned maps of a pass may run together: the cores
 * (tide_parallel_threads) less those the consumer keeps busy, consumer_busy
 * being the share of its time it spends outside next (in permille), at
 * least 1. */
int dtune_cpu_budget(int consumer_busy_permille);

/* The most elements of elem_bytes each a prefetch buffer may hold within the
 * RAM budget. */
int dtune_ram_cap(int64_t elem_bytes, int cap);

/* The consumer of a pass called next at `enter` (its thread only): the
 * time since its last call came back counts as its own work. */
typedef struct dpass dpass;
void dtune_consumer_enter(dpass *pass, int64_t enter);


#endif
