/* core/random.c — the global random stream (a seed gives the Philox key; each
 * random op reserves a block of counters) and Philox's public face (philox.h). */
#include "internal.h"
#include "philox.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void tide_philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]) {
  tide_philox(key, counter_lo, counter_hi, out);
}

/* SplitMix64: spreads a user's small seed over all 64 key bits. */
static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t seed_value, key_value, counter_value;
static int seeded, user_seeded;

/* The op-seed streams: op seed -> next free counter (a short list; a program
 * uses a handful of op seeds). set_seed empties it: every stream restarts. */
static struct op_stream { uint64_t op_seed, next; } *op_streams;
static int n_op_streams, cap_op_streams;
static pthread_mutex_t op_streams_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_seed(uint64_t seed, int by_user) {
  pthread_mutex_lock(&op_streams_lock);
  n_op_streams = 0;
  seed_value = seed;
  key_value = splitmix64(seed);
  user_seeded = by_user;
  __atomic_store_n(&counter_value, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&seeded, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&op_streams_lock);
}

/* Seed the global stream from the clock and pid, once, unless a seed was set. */
static void ensure_seeded(void) {
  if (__atomic_load_n(&seeded, __ATOMIC_ACQUIRE)) return;
  /* Unseeded programs differ run to run, as in TensorFlow. The seed keeps
   * 53 bits so that a Lua number holds it exactly (set_seed(get_seed()) repeats). */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  set_seed(splitmix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid()) >> 11, 0);
}

void tide_random_set_seed(uint64_t seed) { set_seed(seed, 1); }

uint64_t tide_random_get_seed(void) {
  ensure_seeded();
  return seed_value;
}

void tide_random_reserve(uint64_t count, uint64_t *key, uint64_t *counter) {
  ensure_seeded();
  *key = key_value;
  *counter = __atomic_fetch_add(&counter_value, count, __ATOMIC_RELAXED);
}

tide_status tide_random_reserve_op(uint64_t op_seed, uint64_t count, uint64_t *key, uint64_t *counter) {
  ensure_seeded();
  pthread_mutex_lock(&op_streams_lock);
  *key = tide_random_derive_key(user_seeded ? seed_value : TIDE_RANDOM_DEFAULT_SEED, op_seed);
  int i = 0;
  while (i < n_op_streams && op_streams[i].op_seed != op_seed) i++;
  if (i == n_op_streams) {
    if (n_op_streams == cap_op_streams) {
      int cap = cap_op_streams ? 2 * cap_op_streams : 8;
      struct op_stream *grown = realloc(op_streams, (size_t)cap * sizeof *grown);
      if (!grown) {
        pthread_mutex_unlock(&op_streams_lock);
        return TIDE_FAIL(TIDE_ERR_MEMORY, "random: out of memory for the stream of op seed %llu",
                         (unsigned long long)op_seed);
      }
      op_streams = grown, cap_op_streams = cap;
    }
    op_streams[n_op_streams++] = (struct op_stream){op_seed, 0};
  }
  *counter = op_streams[i].next;
  op_streams[i].next += count;
  pthread_mutex_unlock(&op_streams_lock);
  return TIDE_OK;
}

uint64_t tide_random_derive_key(uint64_t seed, uint64_t op_seed) {
  return splitmix64(splitmix64(seed) ^ (op_seed * 0xD6E8FEB86659FD93ull + 1));
}

uint64_t tide_random_counters(int op, int dtype, int64_t n) {
  if (n <= 0) return 0;
  uint64_t per = (uint64_t)tide_random_per_block(op, dtype);
  return ((uint64_t)n + per - 1) / per;
}

tide_status tide_random_draw_counters(int op, const tide_tensor *out, tide_attrs *a) {
  int64_t n = out->nelem;
  if (op == TIDE_OP_RANDOM_SHUFFLE) n = out->ndim ? out->dims[0] : 1;
  uint64_t count = tide_random_counters(op, out->dt, n);
  if (op == TIDE_OP_SAMPLE_DISTORTED_BOUNDING_BOX) count = a->n > 0 ? (uint64_t)a->n : 1; /* a block an attempt, as TF */
  if (a->flags & TIDE_ATTR_OP_SEED) return tide_random_reserve_op(a->rng_key, count, &a->rng_key, &a->rng_counter);
  tide_random_reserve(count, &a->rng_key, &a->rng_counter);
  return TIDE_OK;
}
