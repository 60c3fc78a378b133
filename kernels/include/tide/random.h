/* tide/random.h — the global counter-based (Philox4x32-10) random stream.
 * A random op reserves a block of counters; element i of its output depends
 * only on (key, counter + i), so results match across threads and devices. */
#ifndef TIDE_RANDOM_H
#define TIDE_RANDOM_H
#include "tide/error.h"
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- random states ----
 * The global seed and its streams belong to a random state. This thread's
 * current one (tide_random_state_swap) is used, else the process's own: a
 * tide_vm makes one of its own, current in its calls and on the pipeline
 * threads they start, so a script's set_seed reaches no other VM and not
 * the host. A new state is unseeded (seeded from the clock at its first draw). */
typedef struct tide_random_state tide_random_state;
/* A new, unseeded state holding one reference; NULL when out of memory. */
TIDE_API tide_random_state *tide_random_state_new(void);
/* Drop a reference (pipeline threads hold one while they run). */
TIDE_API void tide_random_state_release(tide_random_state *r);
/* Make `r` (NULL: the process's) this thread's current state; returns the previous one. */
TIDE_API tide_random_state *tide_random_state_swap(tide_random_state *r);

/* Restart the global stream (this thread's current state's) from `seed`. */
TIDE_API void tide_random_set_seed(uint64_t seed);
/* The seed of the global stream (the default one when never set). */
TIDE_API uint64_t tide_random_get_seed(void);
/* Reserve `count` counters of the global stream: its key and the first one. */
TIDE_API void tide_random_reserve(uint64_t count, uint64_t *key, uint64_t *counter);
/* A key derived from (seed, op_seed), for ops given their own seed. */
TIDE_API uint64_t tide_random_derive_key(uint64_t seed, uint64_t op_seed);
/* The global seed an op seed pairs with while none was set: TF's default
 * graph seed, so that op-seeded draws repeat from run to run. */
#define TIDE_RANDOM_DEFAULT_SEED 87654321u
/* Reserve `count` counters of op seed `op_seed`'s stream (TF's rule): key
 * derive_key(global seed, op_seed), where the global seed is the one set or
 * TIDE_RANDOM_DEFAULT_SEED; counters follow on from the stream's last draw,
 * eager or traced alike, and tide_random_set_seed restarts every such stream. */
TIDE_API tide_status tide_random_reserve_op(uint64_t op_seed, uint64_t count, uint64_t *key, uint64_t *counter);
/* Counters (Philox blocks) random op `op` consumes for dtype `dtype` and `n`
 * values: n elements for the creation ops, n rows (dim 0) for random_shuffle.
 * A caller reserves exactly this many for attrs.rng_counter. Per block:
 * 4 values of 32-bit floats and halves; 2 of float64 and the integer dtypes
 * (64 random bits each); 2 shuffle rows. truncated_normal re-draws with the
 * counter's high word as the attempt number, so it needs no more. */
TIDE_API uint64_t tide_random_counters(int op, int dtype, int64_t n);
/* One Philox4x32-10 block: four 32-bit words for (key, counter). */
TIDE_API void tide_philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi,
                              uint32_t out[4]);

#ifdef __cplusplus
}
#endif
#endif
