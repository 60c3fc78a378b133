/* data/stage.h — a dataset description: the part every stage shares, the
 * table through which the engine reaches a stage, and the helpers stages lean on.
 *
 * A stage (batch, map, range, ...) is one file: its public constructor, its
 * description struct, its node (pipeline.h) and its table (dstage_ops).
 * The description struct starts with a tide_dataset and holds the stage's
 * own fields after it, as a node starts with a dnode; nothing outside the
 * stage's file reads them. The engine calls the table for the four things
 * it does to every dataset: make a pass's node, count the elements, copy the
 * description for one of interleave's elements, and free it. (Per-stage
 * structs rather than a union in tide_dataset: a new stage's fields stay in
 * its file, and each description costs only its own bytes.)
 *
 * Copies start from zeros: the engine allocates `size` zeroed bytes, fills
 * the shared part (inputs copied, graph held, captures bound) and the
 * stage's copy fills its own fields. A field the copy forgets is then 0 or
 * NULL in the copy, never a pointer shared with the template (a batch's
 * sparse roles, shared that way, were once freed twice).
 *
 * A new stage: its file here (constructor, struct, node, table; the
 * Makefile builds every .c file here), its declaration in tide/data.h,
 * and its case in tests/c/test_data_stage_copy.c (which refuses a
 * constructor of the data headers without one). */
#ifndef TIDE_DATA_STAGE_H
#define TIDE_DATA_STAGE_H

#include "pipeline.h"

typedef struct dstage_ops dstage_ops;

/* The traced function a stage runs (map, filter, interleave's arguments)
 * and, inside an interleave's template, its captures' binding: results
 * cap_first .. + ncaps of that interleave's function feed the captures, and
 * each per-element copy holds its element's values in cap_vals. */
typedef struct dfunc {
  tide_graph *graph;     /* held (tide_graph_retain), or NULL */
  int cap_first, ncaps;
  tide_tensor *cap_vals; /* a copy's ncaps values, or NULL */
} dfunc;

struct tide_dataset {
  int refs;              /* atomic */
  const dstage_ops *stage;
  int ncomp;
  tide_dataset *input;   /* a stage over one dataset: it (held), else NULL */
  tide_dataset **inputs; /* a stage over several (zip, concatenate): ninputs of them (held) */
  int ninputs;
  dfunc fn;              /* map, filter, interleave */
};

struct dstage_ops {
  const char *name; /* the transformation, as TF names it ("batch"), in errors */
  size_t size;      /* the stage's description struct, which starts with a tide_dataset */
  /* A node for a pass over ds (NULL with the error set). */
  dnode *(*make_node)(tide_dataset *ds, dpass *pass);
  /* Elements in one pass (TF's rule), or TIDE_DATA_INFINITE / TIDE_DATA_UNKNOWN. */
  int64_t (*cardinality)(const tide_dataset *ds);
  /* Interleave's per-element copy: src's own fields into dst, which holds
   * zeros there (the shared part is filled). A pointer field gets its own
   * copy or its own reference. dst is freed through `free` on failure.
   * NULL: the stage cannot be copied (an interleave refuses it above a
   * template leaf); dstage_copy_nothing: it has no fields of its own. */
  tide_status (*copy)(tide_dataset *dst, const tide_dataset *src);
  /* Release ds's own fields (not the shared part, not ds); each may be
   * zero or NULL (a copy or a constructor that failed midway). NULL: none. */
  void (*free)(tide_dataset *ds);
  /* AUTOTUNE (map, prefetch; NULL elsewhere): tide_dataset_autotuned's
   * answer (-1: not tuned), and tide_dataset_set_autotuned on such a dataset. */
  int (*autotuned)(const tide_dataset *ds);
  tide_status (*set_autotuned)(tide_dataset *ds, int value);
};

/* ---- making descriptions ---------------------------------------------------------- */

/* A zeroed description of `stage` with ncomp components and no input (NULL
 * with the error set). */
tide_dataset *dstage_new(const dstage_ops *stage, int ncomp);
/* A zeroed description of `stage` over in (held; its components), NULL
 * with the error set when in is NULL. */
tide_dataset *dstage_new_on(const dstage_ops *stage, tide_dataset *in);
/* Hold inputs[0 .. n) as ds's inputs (ds->inputs; the error set on failure). */
tide_status dstage_set_inputs(tide_dataset *ds, int n, tide_dataset *const *inputs);
/* A stage function: hold g (a pass's threads may outlive the caller's reference). */
static inline void dstage_set_graph(tide_dataset *ds, tide_graph *g) {
  tide_graph_retain(g);
  ds->fn.graph = g;
}
static inline tide_dataset *dstage_hold(tide_dataset *ds) {
  __atomic_add_fetch(&ds->refs, 1, __ATOMIC_RELAXED);
  return ds;
}
/* The copy of a stage with no fields of its own. */
tide_status dstage_copy_nothing(tide_dataset *dst, const tide_dataset *src);
/* A new copy of the n bytes at src (a copy's arrays), or NULL with "data: out of memory" set. */
void *dstage_dup(const void *src, size_t n);

/* ---- using them ------------------------------------------------------------------ */

/* A node for a pass over ds (NULL with the error set). */
static inline dnode *dnode_make(tide_dataset *ds, dpass *pass) { return ds->stage->make_node(ds, pass); }
/* The cardinality of a stage that gives what its input gives, one for one. */
int64_t dstage_input_cardinality(const tide_dataset *ds);

/* Run ds's function on n_in tensors, with the values its captures were
 * bound to (tide_dataset_bind_captures) if any. */
tide_status dgraph_run(const tide_dataset *ds, int n_in, const tide_tensor *const *in, int n_out,
                       tide_tensor *const *out);

/* *dst: t itself when it is contiguous in a storage of its own (rows are
 * then views of it), else a contiguous copy: a source's tensors. */
tide_status dtensor_own_contiguous(tide_tensor *dst, const tide_tensor *t);

/* ---- what stages ask of one another ------------------------------------------------ */

/* A plugged-in source's reader, or NULL when ds is not one (sources.c):
 * interleave's file leaves read other files with it. */
const tide_data_source *dsource_of(const tide_dataset *ds);
/* The dataset template t stands for with one element's arguments
 * args[0 .. nargs) (template.c): the stages on the way to its param leaves,
 * and those whose captures are bound, are copied; the rest is shared. */
tide_dataset *dtemplate_instance(tide_dataset *t, const tide_tensor *args, int nargs);

#endif
