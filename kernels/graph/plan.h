/* graph/plan.h — a run plan: for one set of input shapes, every value's
 * layout, how its memory is had (fixed, per run, or filled by its node),
 * the steps to run with what each releases, and the intermediates' arena. */
#ifndef TIDE_GRAPH_PLAN_H
#define TIDE_GRAPH_PLAN_H

#include "graph_internal.h"
#include "../core/backend.h"

/* One node to run. */
typedef struct gstep {
  gnode *n;
  int node;
  int arg;        /* its inputs' value ids start at args[arg] */
  int val;        /* its first output's value id */
  int rel, nrel;  /* values released right after it: rels[rel .. rel + nrel) */
  bool late;      /* its output layouts are inferred when it runs (an input's dims are unknown until then) */
  bool leaves;    /* every output is a graph result no later node reads (a hint for fused nodes) */
  int view;       /* its entry in the plan's views, or -1 */
} gstep;

/* A view step resolved when planning (graph/exec.c): slices, and reshapes of
 * contiguous data, need no kernel call when their source has the strides
 * assumed here; the run then only points the header into the source. */
typedef struct gview {
  int64_t offset;                       /* bytes from the source's first element */
  bool borrow;                          /* the source outlives the run (an argument, a constant, in the arena):
                                           the view need not hold a reference to its storage */
  int64_t nelem;
  int ndim, src_ndim;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  int64_t src_dims[TIDE_MAX_DIMS], src_strides[TIDE_MAX_DIMS];
} gview;

/* How a value gets its header. */
enum {
  VAL_FIXED = 0,  /* prepared once: a constant, an argument, or a result held inline or in the arena */
  VAL_ALLOC,      /* new data at each run (results that leave the run), released after the last use */
  VAL_FILLED      /* built by its node (views, control flow, variable reads), released after the last use */
};

typedef struct gplan {
  struct gplan *next;
  const tide_backend *backend; /* whose kernels its op nodes run: the CPU's (graphs run on the CPU today) */
  int n_key;                /* arguments, then captures */
  int *key_ndim, *key_dt;
  int64_t *key_dims;        /* n_key * TIDE_MAX_DIMS */
  int nvals;
  int *base;                /* per node: its first value id */
  tide_tensor *layout;      /* per value: resolved dtype, dims, contiguous strides (no data) */
  tide_tensor *hdr;         /* per value: the header a run fills */
  tide_tensor **cur;        /* per value: where a run reads it */
  uint8_t *mode;            /* per value: VAL_* */
  int *last_use;            /* per value: the last node reading it; nnodes for graph outputs; -1 none */
  int64_t *offset;          /* per value: its place in the arena, or -1 */
  uint8_t *late;            /* per value: its layout is known only when its node runs (never in the arena) */
  int nsteps;
  gstep *steps;
  int nviews;
  gview *views;
  uint8_t *borrowed;        /* per value: its header points into a storage without holding a reference (a view) */
  const tide_tensor **ins;  /* one node's inputs and outputs while it is planned or run (the most any node has) */
  tide_tensor **outs;
  int *args, *rels;
  int n_dyn, n_end;
  int *dyn;                 /* VAL_ALLOC and VAL_FILLED values (released after a failure) */
  int *end;                 /* those still held when the last step is done (outputs) */
  int64_t arena_bytes;      /* what the memory plan reserves */
  tide_storage *arena;      /* made at the first run, kept between runs */
  int busy;                 /* a run is using this plan's headers */
} gplan;

/* Decide which VAL_ALLOC values live in the arena and where (graph/plan.c):
 * results that never leave the run share memory by liveness; a view keeps
 * the buffer it looks into alive. Sets offset[], mode[] and arena_bytes. */
tide_status tide_plan_memory(const tide_graph *g, gplan *p);

#endif
