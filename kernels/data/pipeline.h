/* data/pipeline.h — inside the input pipeline: the nodes a pass builds
 * from dataset descriptions (stage.h), element moves and thread helpers.
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

/* Register / unregister a node's wait with the pass. */
void dpass_watch(dpass *pass, dwaiter *w, pthread_mutex_t *mu, pthread_cond_t *cv);
void dpass_unwatch(dpass *pass, dwaiter *w);
static inline int dpass_stopping(const dpass *pass) { return __atomic_load_n(&pass->stop, __ATOMIC_ACQUIRE); }
/* Stop a pass: set its stop flag and wake every wait registered with it. */
void dpass_stop(dpass *pass);

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

#endif
