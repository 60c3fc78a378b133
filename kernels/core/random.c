/* core/random.c — the global random stream (a seed gives the Philox key; each
 * random op reserves a block of counters), one per random state (the process's,
 * each VM's), and Philox's public face (philox.h). */
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

/* A random state: the global seed, its stream and the op-seed streams. The
 * process has one (the host's); each tide_vm has its own, current on its
 * thread during its calls and on the pipeline threads they start, so one
 * sandboxed script's set_seed reaches neither another VM nor the host. */
struct tide_random_state {
  int64_t refs;                /* atomic; the process's own state is never freed */
  pthread_mutex_t lock;        /* guards seeding and the op-seed streams */
  uint64_t seed_value, key_value, counter_value;
  int seeded, user_seeded;
  /* The op-seed streams: op seed -> next free counter (a short list; a program
   * uses a handful of op seeds). set_seed empties it: every stream restarts. */
  struct op_stream { uint64_t op_seed, next; } *op_streams;
  int n_op_streams, cap_op_streams;
};

static tide_random_state process_state = {.refs = 1, .lock = PTHREAD_MUTEX_INITIALIZER};
static __thread tide_random_state *current_state;

/* This thread's state: the one swapped in, else the process's. */
static tide_random_state *state_now(void) { return current_state ? current_state : &process_state; }

tide_random_state *tide_random_state_new(void) {
  tide_random_state *r = calloc(1, sizeof *r);
  if (!r) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a random state");
    return NULL;
  }
  r->refs = 1;
  pthread_mutex_init(&r->lock, NULL);
  return r;
}

void tide_random_state_retain(tide_random_state *r) {
  if (r && r != &process_state) __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
}

void tide_random_state_release(tide_random_state *r) {
  if (!r || r == &process_state || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  pthread_mutex_destroy(&r->lock);
  free(r->op_streams);
  free(r);
}

tide_random_state *tide_random_state_swap(tide_random_state *r) {
  tide_random_state *prev = current_state;
  current_state = r;
  return prev;
}

tide_random_state *tide_random_state_current(void) { return current_state; }

/* (lock held) */
static void set_seed_locked(tide_random_state *r, uint64_t seed, int by_user) {
  r->n_op_streams = 0;
  r->seed_value = seed;
  r->key_value = splitmix64(seed);
  r->user_seeded = by_user;
  __atomic_store_n(&r->counter_value, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->seeded, 1, __ATOMIC_RELEASE);
}

static void set_seed(tide_random_state *r, uint64_t seed, int by_user) {
  pthread_mutex_lock(&r->lock);
  set_seed_locked(r, seed, by_user);
  pthread_mutex_unlock(&r->lock);
}

/* Seed a state from the clock and pid, once, unless a seed was set. */
static tide_random_state *ensure_seeded(void) {
  tide_random_state *r = state_now();
  if (__atomic_load_n(&r->seeded, __ATOMIC_ACQUIRE)) return r;
  /* Unseeded programs differ run to run, as in TensorFlow. The seed keeps
   * 53 bits so that a Lua number holds it exactly (set_seed(get_seed()) repeats).
   * The state's address tells two VMs seeded in one clock tick apart. */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t mix = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)r;
  pthread_mutex_lock(&r->lock); /* two threads' first draws (or a set_seed meanwhile): one seeds */
  if (!r->seeded) set_seed_locked(r, splitmix64(mix) >> 11, 0);
  pthread_mutex_unlock(&r->lock);
  return r;
}

void tide_random_set_seed(uint64_t seed) { set_seed(state_now(), seed, 1); }

uint64_t tide_random_get_seed(void) { return ensure_seeded()->seed_value; }

void tide_random_reserve(uint64_t count, uint64_t *key, uint64_t *counter) {
  tide_random_state *r = ensure_seeded();
  *key = r->key_value;
  *counter = __atomic_fetch_add(&r->counter_value, count, __ATOMIC_RELAXED);
}

tide_status tide_random_reserve_op(uint64_t op_seed, uint64_t count, uint64_t *key, uint64_t *counter) {
  tide_random_state *r = ensure_seeded();
  pthread_mutex_lock(&r->lock);
  *key = tide_random_derive_key(r->user_seeded ? r->seed_value : TIDE_RANDOM_DEFAULT_SEED, op_seed);
  int i = 0;
  while (i < r->n_op_streams && r->op_streams[i].op_seed != op_seed) i++;
  if (i == r->n_op_streams) {
    if (r->n_op_streams == r->cap_op_streams) {
      int cap = r->cap_op_streams ? 2 * r->cap_op_streams : 8;
      struct op_stream *grown = realloc(r->op_streams, (size_t)cap * sizeof *grown);
      if (!grown) {
        pthread_mutex_unlock(&r->lock);
        return TIDE_FAIL(TIDE_ERR_MEMORY, "random: out of memory for the stream of op seed %llu",
                         (unsigned long long)op_seed);
      }
      r->op_streams = grown, r->cap_op_streams = cap;
    }
    r->op_streams[r->n_op_streams++] = (struct op_stream){op_seed, 0};
  }
  *counter = r->op_streams[i].next;
  r->op_streams[i].next += count;
  pthread_mutex_unlock(&r->lock);
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
