/* data/padded_batch.c — padded_batch: n elements at a time, each component
 * padded at the end of every dim to the padded shape (a dim of -1: the
 * batch's longest) with its padding value, then stacked (numbers and bools).
 * The stage itself is batch's node (transform.c) with this assembly. */
#include "pipeline.h"

/* Fill count elements of size es at p with the pattern `value`. */
static void fill_pattern(char *p, int64_t count, size_t es, const void *value) {
  static const uint64_t zero;
  if (!memcmp(value, &zero, es)) {
    memset(p, 0, (size_t)count * es);
    return;
  }
  for (int64_t i = 0; i < count; i++) memcpy(p + (size_t)i * es, value, es);
}

/* Component k of the `count` pending elements, padded and stacked into out. */
static tide_status pad_stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, int k,
                             tide_tensor *out) {
  int nc = ds->ncomp;
  const tide_tensor *first = &pending[k];
  const int64_t *want = ds->pad_shapes + (size_t)k * TIDE_MAX_DIMS;
  int rank = first->ndim;
  int64_t target[TIDE_MAX_DIMS];
  char s0[128], si[128];
  for (int d = 0; d < rank; d++) target[d] = want[d] >= 0 ? want[d] : 0;
  for (int64_t i = 0; i < count; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    if (e->ndim != rank || e->dt != first->dt)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "padded_batch: element %lld component %d is %s %s but the first is %s %s",
                       (long long)i, k, tide_dtype_name(e->dt), TIDE_SHAPE_STR(si, e), tide_dtype_name(first->dt),
                       TIDE_SHAPE_STR(s0, first));
    for (int d = 0; d < rank; d++) {
      if (want[d] < 0 && e->dims[d] > target[d]) target[d] = e->dims[d];
      if (want[d] >= 0 && e->dims[d] > want[d])
        return TIDE_FAIL(TIDE_ERR_SHAPE, "padded_batch: element %lld component %d has %lld in dim %d, more than the "
                         "padded shape's %lld", (long long)i, k, (long long)e->dims[d], d, (long long)want[d]);
    }
  }
  if (rank + 1 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "padded_batch: component %d has rank %d; a batch of it passes the limit of %d", k,
                     rank, TIDE_MAX_DIMS);
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS], row = 1;
  dims[0] = count;
  for (int d = rank - 1; d >= 0; d--) {
    dims[d + 1] = target[d];
    strides[d] = row;
    row *= target[d];
  }
  tide_status st = tide_tensor_init(out, first->dt, rank + 1, dims);
  if (st) return st;
  size_t es = tide_dtype_size_unchecked(first->dt);
  if (out->nelem > 0) fill_pattern(out->data, out->nelem, es, &ds->pad_values[k]);
  for (int64_t i = 0; i < count && row > 0; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    if (e->nelem == 0) continue;
    tide_tensor view;
    memset(&view, 0, sizeof view);
    st = tide_tensor_wrap(&view, (char *)out->data + (size_t)(i * row) * es, e->dt, rank, e->dims, strides, NULL, NULL);
    if (!st) st = tide_tensor_copy_into(&view, e);
    tide_tensor_release(&view);
    if (st) {
      tide_tensor_release(out);
      return st;
    }
  }
  return TIDE_OK;
}

tide_status padding_stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out) {
  for (int k = 0; k < ds->ncomp; k++) {
    tide_status st = pad_stack(ds, pending, count, k, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}
