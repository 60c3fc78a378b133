/* data/stage.c — what every dataset description shares: making and freeing
 * them, the calls through a stage's table, and the helpers stage files lean on. */
#include "stage.h"

/* ---- making ------------------------------------------------------------------ */

tide_dataset *dstage_new(const dstage_ops *stage, int ncomp) {
  tide_dataset *ds = calloc(1, stage->size);
  if (!ds) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  ds->refs = 1;
  ds->stage = stage;
  ds->ncomp = ncomp;
  return ds;
}

tide_dataset *dstage_new_on(const dstage_ops *stage, tide_dataset *in) {
  if (!in) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: the input dataset is NULL");
    return NULL;
  }
  tide_dataset *ds = dstage_new(stage, in->ncomp);
  if (ds) ds->input = dstage_hold(in);
  return ds;
}

tide_status dstage_set_inputs(tide_dataset *ds, int n, tide_dataset *const *inputs) {
  if (!(ds->inputs = calloc((size_t)n, sizeof *ds->inputs))) return TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
  for (int i = 0; i < n; i++) ds->inputs[i] = dstage_hold(inputs[i]);
  ds->ninputs = n;
  return TIDE_OK;
}

tide_status dstage_copy_nothing(tide_dataset *dst, const tide_dataset *src) {
  (void)dst, (void)src;
  return TIDE_OK;
}

void *dstage_dup(const void *src, size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
  else if (n) memcpy(p, src, n);
  return p;
}

void tide_dataset_free(tide_dataset *ds) {
  while (ds && __atomic_sub_fetch(&ds->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    tide_dataset *input = ds->input; /* freed next, in this loop: a long chain does not recurse */
    if (ds->stage->free) ds->stage->free(ds);
    for (int i = 0; i < ds->ninputs; i++) tide_dataset_free(ds->inputs[i]);
    free(ds->inputs);
    if (ds->fn.cap_vals) {
      delem_release(ds->fn.cap_vals, ds->fn.ncaps);
      free(ds->fn.cap_vals);
    }
    if (ds->fn.graph) tide_graph_free(ds->fn.graph);
    free(ds);
    ds = input;
  }
}

tide_status tide_dataset_bind_captures(tide_dataset *ds, int first) {
  if (!ds || !ds->fn.graph) /* only map, filter and interleave run a function */
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: only a map, filter or interleave with a graph can bind captures");
  int n = tide_graph_num_captures(ds->fn.graph);
  if (first < 0 || n < 1 || first + n > TIDE_DATA_MAX_COMPONENTS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: cannot bind %d capture(s) to the function's results %d.. (at most %d)",
                     n, first, TIDE_DATA_MAX_COMPONENTS);
  if (ds->fn.ncaps || ds->fn.cap_vals)
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: this stage's captures are bound already");
  ds->fn.cap_first = first, ds->fn.ncaps = n;
  return TIDE_OK;
}

/* ---- using them -------------------------------------------------------------- */

int tide_dataset_num_components(const tide_dataset *ds) { return ds ? ds->ncomp : 0; }

int64_t tide_dataset_cardinality(const tide_dataset *ds) {
  if (!ds) return TIDE_DATA_UNKNOWN;
  return ds->stage->cardinality(ds);
}

int64_t dstage_input_cardinality(const tide_dataset *ds) { return tide_dataset_cardinality(ds->input); }

int tide_dataset_autotuned(const tide_dataset *ds) {
  return ds && ds->stage->autotuned ? ds->stage->autotuned(ds) : -1;
}

tide_status tide_dataset_set_autotuned(tide_dataset *ds, int value) {
  if (tide_dataset_autotuned(ds) < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: only a map or prefetch given AUTOTUNE has a tuned setting");
  return ds->stage->set_autotuned(ds, value);
}

tide_status dgraph_run(const tide_dataset *ds, int n_in, const tide_tensor *const *in, int n_out,
                       tide_tensor *const *out) {
  const dfunc *fn = &ds->fn;
  if (!fn->ncaps) return tide_graph_run(fn->graph, n_in, in, n_out, out);
  if (!fn->cap_vals)
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: this dataset uses an interleave function's traced element; only that "
                                     "interleave can read it");
  const tide_tensor *caps[TIDE_DATA_MAX_COMPONENTS];
  for (int k = 0; k < fn->ncaps; k++) caps[k] = &fn->cap_vals[k];
  return tide_graph_run_captured(fn->graph, n_in, in, fn->ncaps, caps, n_out, out);
}

tide_status dtensor_own_contiguous(tide_tensor *dst, const tide_tensor *t) {
  if (tide_tensor_is_contiguous(t) && !(t->flags & TIDE_TENSOR_INLINE) && t->storage) return tide_tensor_share(dst, t);
  tide_status st = tide_tensor_init_heap(dst, t->dt, t->ndim, t->dims);
  if (!st && t->nelem > 0) st = tide_tensor_copy_into(dst, t);
  return st;
}
