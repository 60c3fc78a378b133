/* data/pipeline.h — inside the input pipeline: dataset descriptions, the
 * iterator nodes a pass builds from them, element moves and thread helpers.
 *
 * A pass is a tree of nodes (dnode), one per dataset stage, each pulling
 * elements from its input with next(). Stages that run threads (map with
 * workers, prefetch) register their mutex and condition with the pass
 * (dpass): freeing the iterator sets the pass's stop flag and wakes every
 * registered wait, so a thread blocked anywhere in the tree returns, and
 * each node then joins its threads in its free. */
#ifndef TIDE_DATA_PIPELINE_H
#define TIDE_DATA_PIPELINE_H

#include "../core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum dkind { DS_SOURCE, DS_SLICES, DS_RANGE, DS_MAP, DS_BATCH, DS_SHUFFLE, DS_TAKE, DS_SKIP, DS_REPEAT, DS_PREFETCH, DS_FILTER, DS_ZIP, DS_CONCAT, DS_PADDED_BATCH,
             DS_PARAM, DS_INTERLEAVE, DS_CACHE, DS_SHARD, DS_UNBATCH };

struct tide_dataset {
  int refs;              /* atomic */
  enum dkind kind;
  int ncomp;
  tide_dataset *input;
  int64_t n;             /* batch size, buffer, count, range start */
  int64_t stop, step;    /* range; shard: stop is the index (n: num_shards) */
  int dtype;             /* range */
  int flag;              /* drop_remainder, reshuffle, deterministic */
  int parallel;          /* map */
  uint64_t seed;         /* shuffle */
  uint64_t passes;       /* atomic: passes begun (shuffle's reshuffle counter) */
  int tuned;             /* atomic: AUTOTUNE: the prefetch depth, or the map's active workers + 1, the last pass settled on (0: none yet) */
  int tuned_backoffs;    /* atomic: map AUTOTUNE: the tuner's backoffs the last pass left (dtune_save) */
  int64_t tuned_ns;      /* atomic: map AUTOTUNE: ns per element at the setting it left (0: none) */
  tide_graph *graph;     /* map */
  tide_tensor *tensors;  /* slices: ncomp contiguous tensors */
  tide_data_source src;  /* source */
  tide_dataset **inputs; /* zip, concatenate: ninputs datasets (held) */
  unsigned char *sparse_roles; /* batch, slices: NULL, or per component 1 where a SparseTensor's indices are
                                * (values and dense_shape follow), else 0 */
  int64_t **row_offsets; /* slices with sparse_roles: at each SparseTensor's indices component, its n + 1 row
                          * offsets (dsparse_row_offsets); tensors[k] then holds the indices without dim 0 */
  int64_t *pad_shapes;   /* padded_batch: ncomp * TIDE_MAX_DIMS dims, -1: the batch's longest */
  uint64_t *pad_values;  /* padded_batch: ncomp values, each its component dtype's bytes */
  int ninputs;
  int64_t cycle, block;  /* interleave (inputs[0]: its template); param: first arg, nargs (inputs[0]: proto) */
  struct dcache *cache;  /* cache: its file or memory store (cache.c) */
  /* map, filter, interleave inside an interleave's template whose graph
   * captures values of that interleave's function (its element): the
   * function's results cap_first .. + ncaps feed the captures; each copy
   * of the template holds its input element's values in cap_vals */
  int cap_first, ncaps;
  tide_tensor *cap_vals;
};

typedef struct dpass dpass;
typedef struct dnode dnode;

typedef struct dnode_ops {
  /* The next element into the node's ncomp blank headers, or *end = 1. */
  tide_status (*next)(dnode *self, tide_tensor *out, int *end);
  /* Stop threads, release everything, free the node and its inputs. */
  void (*free)(dnode *self);
  const char *name;      /* the stage, in profiles ("batch", "map") */
} dnode_ops;

struct dnode {
  const dnode_ops *ops;
  int ncomp;
  dpass *pass;
};

/* The next element of node n: n's next, timed while the profiler records. */
tide_status dnext_profiled(dnode *n, tide_tensor *out, int *end);
static inline tide_status dnext(dnode *n, tide_tensor *out, int *end) {
  if (TIDE_UNLIKELY(tide_hooks_now() & TIDE_HOOK_PROFILE)) return dnext_profiled(n, out, end);
  return n->ops->next(n, out, end);
}

/* A wait a stopping pass must wake. */
typedef struct dwaiter {
  pthread_mutex_t *mu;
  pthread_cond_t *cv;
  struct dwaiter *next;
} dwaiter;

struct dpass {
  int stop;              /* atomic: the iterator is being freed */
  tide_interrupt *intr;  /* the pass's threads' interrupt token, raised with stop (so a map's graph stuck
                          * in a loop returns), child of the token current where the pass began; NULL: none */
  pthread_mutex_t mu;    /* guards waiters */
  dwaiter *waiters;
  /* AUTOTUNE (autotune.c): what the tuned stages of the pass read */
  int consumer_busy;     /* atomic: permille of the consumer's time spent outside next, last window */
  int map_workers;       /* atomic: workers the pass's tuned maps have active together */
  int64_t cons_t0, cons_busy, cons_exit; /* the consumer's window (its thread only) */
  int cons_n;
};

/* A node for a pass over ds (NULL with the error set). */
dnode *dnode_make(tide_dataset *ds, dpass *pass);

/* Register / unregister a node's wait with the pass. */
void dpass_watch(dpass *pass, dwaiter *w, pthread_mutex_t *mu, pthread_cond_t *cv);
void dpass_unwatch(dpass *pass, dwaiter *w);
static inline int dpass_stopping(const dpass *pass) { return __atomic_load_n(&pass->stop, __ATOMIC_ACQUIRE); }

/* Hand-offs between pipeline threads. A node's waits and wake-ups go through
 * these: dsignal bumps *seq (under mu) with every broadcast on cv, and dwait
 * first spins, with mu released, for up to DSPIN_NS watching *seq and the
 * pass's stop flag, and only then sleeps on cv. Sleeping at once made every
 * element's hand-off pay the kernel's wake-up latency (about 30 µs on an
 * idle core of a VM: a Fashion-MNIST map pipeline ran at 32k samples/s on an
 * idle machine and at 207k with a core kept busy by another program).
 * Callers loop on their own condition as with pthread_cond_wait. */
enum { DSPIN_NS = 50000 };
static inline void dsignal(pthread_cond_t *cv, unsigned *seq) {
  __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(cv);
}
void dwait(pthread_cond_t *cv, pthread_mutex_t *mu, const unsigned *seq, const dpass *pass);

/* Start a pipeline thread: kernels it calls run inline, signals are blocked. */
int dthread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* Join it (and count it gone). */
void dthread_join(pthread_t t);
/* Every pipeline thread calls this first (kernels inline). */
void dthread_enter(void);

/* Move an element's headers (fixing inline data pointers), leaving src blank. */
static inline void delem_move(tide_tensor *dst, tide_tensor *src, int n) {
  for (int k = 0; k < n; k++) {
    memcpy(&dst[k], &src[k], sizeof *dst);
    if (dst[k].flags & TIDE_TENSOR_INLINE) dst[k].data = dst[k].inline_data.bytes;
    memset(&src[k], 0, sizeof *src);
  }
}
static inline void delem_release(tide_tensor *e, int n) {
  for (int k = 0; k < n; k++) tide_tensor_release(&e[k]);
}

/* A saved failure (status and message), to hand to another thread. */
typedef struct derror {
  tide_status st;
  char *msg;
} derror;
static inline void derror_save(derror *e, tide_status st) {
  e->st = st;
  e->msg = strdup(tide_last_error());
}
/* Raise the saved failure on this thread (prefixed), and forget it. */
static inline tide_status derror_raise(derror *e, const char *prefix) {
  tide_status st = e->st;
  if (prefix) tide_set_error(st, "%s%s", prefix, e->msg ? e->msg : "");
  else tide_set_error(st, "%s", e->msg ? e->msg : "");
  free(e->msg);
  e->msg = NULL;
  e->st = TIDE_OK;
  return st;
}

/* The status a node returns when its pass is stopping. */
static inline tide_status dstopped(void) { return TIDE_FAIL(TIDE_ERR_INTERRUPTED, "data: the iterator was closed"); }

/* *dst: t itself when it is contiguous in a storage of its own (rows are
 * then views of it), else a contiguous copy: a source's tensors. */
tide_status dtensor_own_contiguous(tide_tensor *dst, const tide_tensor *t);

/* Run ds's graph (a map, filter or interleave's) on n_in tensors, with the
 * values its captures were bound to (tide_dataset_bind_captures) if any. */
tide_status dgraph_run(const tide_dataset *ds, int n_in, const tide_tensor *const *in, int n_out,
                       tide_tensor *const *out);

/* Node makers (data/sources.c, transform.c, padded_batch.c, map.c, filter.c, combine.c, prefetch.c). */
dnode *dnode_source(tide_dataset *ds, dpass *pass);
dnode *dnode_slices(tide_dataset *ds, dpass *pass);
dnode *dnode_sparse_slices(tide_dataset *ds, dpass *pass); /* sparse_slices.c: slices with sparse_roles */
dnode *dnode_range(tide_dataset *ds, dpass *pass);
dnode *dnode_map(tide_dataset *ds, dpass *pass);
dnode *dnode_batch(tide_dataset *ds, dpass *pass);
dnode *dnode_shuffle(tide_dataset *ds, dpass *pass);
dnode *dnode_take_skip(tide_dataset *ds, dpass *pass);
dnode *dnode_repeat(tide_dataset *ds, dpass *pass);
dnode *dnode_prefetch(tide_dataset *ds, dpass *pass);
dnode *dnode_filter(tide_dataset *ds, dpass *pass);
dnode *dnode_multi(tide_dataset *ds, dpass *pass); /* zip, concatenate */
dnode *dnode_padded_batch(tide_dataset *ds, dpass *pass); /* transform.c: batch's node, padding_stack's assembly */
dnode *dnode_interleave(tide_dataset *ds, dpass *pass); /* interleave.c (and DS_PARAM's refusal) */
dnode *dnode_cache(tide_dataset *ds, dpass *pass);
dnode *dnode_shard(tide_dataset *ds, dpass *pass);   /* split.c */
dnode *dnode_unbatch(tide_dataset *ds, dpass *pass); /* split.c */

/* A cache dataset's store (cache.c): path NULL or "" for memory; NULL with the error set. */
typedef struct dcache dcache;
dcache *dcache_new(const char *path, int ncomp, const int32_t *dtypes);
void dcache_free(dcache *c);

/* padded_batch's assembly (padded_batch.c): the `count` elements pending[i *
 * ncomp + k] padded to ds's padded shapes with its padding values and
 * stacked into out[0 .. ncomp); on failure out holds nothing. */
tide_status padding_stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out);

/* batch's stacking of component k of the `count` pending elements into *out
 * (transform.c); on failure *out holds nothing. */
tide_status batch_stack_component(const tide_dataset *ds, const tide_tensor *pending, int64_t count, int k,
                                  tide_tensor *out);
/* Row offsets of a SparseTensor cut along its first dim (sparse_slices.c):
 * off[0 .. rows] such that row r's entries are off[r] .. off[r+1) of
 * indices (int64 [nnz, rank >= 1], any strides). Fails, the message
 * prefixed "what: ", on an index outside [0, rows) in dim 0, and on indices
 * out of row-major order: every dim when full_order (TF's from_tensor_slices
 * check, repeats refused too), else dim 0 only (all that cutting rows needs).
 * O(nnz + rows); off is the caller's. */
tide_status dsparse_row_offsets(const tide_tensor *indices, int64_t rows, int full_order, const char *what,
                                int64_t *off);

/* batch's assembly when components are SparseTensors (sparse_batch.c): each
 * sparse triple batched by TF's rule, the other components stacked. */
tide_status sparse_stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out);

#endif
