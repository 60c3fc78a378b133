/* data/sparse_batch.c — batch's assembly for elements holding SparseTensors:
 * each (indices, values, dense_shape) triple batched by TF's rule, the rest stacked. */
#include "batch.h"

/* Element i's value at position j of a 1-D int64 tensor (any strides). */
static int64_t i64_at(const tide_tensor *t, int64_t j) { return ((const int64_t *)t->data)[j * t->strides[0]]; }

/* Check element i's triple (component k on) against the first's rank r and
 * values dtype; its number of values into *nnz. */
static tide_status check_triple(const tide_tensor *e, int k, int64_t i, int64_t r, int dt, int64_t *nnz) {
  const tide_tensor *ix = &e[0], *vals = &e[1], *shape = &e[2];
  char s1[128], s2[128], s3[128];
  if (shape->dt != TIDE_INT64 || shape->ndim != 1 || ix->dt != TIDE_INT64 || ix->ndim != 2 || vals->ndim != 1 ||
      ix->dims[1] != shape->dims[0] || vals->dims[0] != ix->dims[0])
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d: element %lld is not a SparseTensor: indices %s %s, values "
                     "%s, dense_shape %s %s (expected int64 [N, r], [N] and int64 [r])", k, (long long)i,
                     tide_dtype_name(ix->dt), TIDE_SHAPE_STR(s1, ix), TIDE_SHAPE_STR(s2, vals),
                     tide_dtype_name(shape->dt), TIDE_SHAPE_STR(s3, shape));
  if (shape->dims[0] != r)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d: element %lld is a SparseTensor of rank %lld but the first "
                     "is of rank %lld (every element's SparseTensor needs the same rank)", k, (long long)i,
                     (long long)shape->dims[0], (long long)r);
  if (vals->dt != dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "batch: component %d: element %lld's SparseTensor holds %s values but the "
                     "first's hold %s", k, (long long)i, tide_dtype_name(vals->dt), tide_dtype_name(dt));
  *nnz = ix->dims[0];
  return TIDE_OK;
}

/* Batch the triple at component k of `count` elements into out[0..2]; on
 * failure out holds nothing. */
static tide_status batch_triple(int nc, const tide_tensor *pending, int64_t count, int k, tide_tensor *out) {
  const tide_tensor *first = &pending[k];
  if (first[2].ndim != 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d: a SparseTensor's dense_shape must be 1-D", k + 2);
  int64_t r = first[2].dims[0], total = 0;
  if (r + 1 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d: a SparseTensor of rank %lld; a batch of it passes the "
                     "limit of %d", k, (long long)r, TIDE_MAX_DIMS);
  int64_t maxdims[TIDE_MAX_DIMS] = {0};
  for (int64_t i = 0; i < count; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    int64_t nnz = 0;
    tide_status st = check_triple(e, k, i, r, first[1].dt, &nnz);
    if (st) return st;
    for (int64_t d = 0; d < r; d++) {
      int64_t v = i64_at(&e[2], d);
      if (v > maxdims[d]) maxdims[d] = v;
    }
    total += nnz;
  }
  int64_t idims[2] = {total, r + 1}, sdims[1] = {r + 1};
  tide_status st = tide_tensor_init(&out[0], TIDE_INT64, 2, idims);
  if (!st) st = tide_tensor_init(&out[1], first[1].dt, 1, &total);
  if (!st) st = tide_tensor_init(&out[2], TIDE_INT64, 1, sdims);
  if (st) goto fail;
  int64_t *oix = out[0].data, *oshape = out[2].data;
  oshape[0] = count;
  for (int64_t d = 0; d < r; d++) oshape[d + 1] = maxdims[d];
  size_t es = tide_dtype_size_unchecked(first[1].dt);
  int64_t at = 0;
  for (int64_t i = 0; i < count; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    const tide_tensor *ix = &e[0], *vals = &e[1];
    int64_t nnz = ix->dims[0];
    const int64_t *src = ix->data;
    for (int64_t j = 0; j < nnz; j++) {
      int64_t *row = oix + (at + j) * (r + 1);
      row[0] = i;
      for (int64_t d = 0; d < r; d++) row[d + 1] = src[j * ix->strides[0] + d * ix->strides[1]];
    }
    if (nnz > 0) {
      char *dst = (char *)out[1].data + (size_t)at * es;
      if (tide_tensor_is_contiguous(vals)) {
        memcpy(dst, vals->data, (size_t)nnz * es);
      } else {
        tide_tensor view;
        memset(&view, 0, sizeof view);
        st = tide_tensor_wrap(&view, dst, vals->dt, 1, vals->dims, NULL, NULL, NULL);
        if (!st) st = tide_tensor_copy_into(&view, vals);
        tide_tensor_release(&view);
        if (st) goto fail;
      }
    }
    at += nnz;
  }
  /* string values were copied as raw references: the batch takes its own */
  if (first[1].dt == TIDE_STRING && out[1].storage) tide_strings_own(out[1].storage);
  return TIDE_OK;
fail:
  delem_release(out, 3);
  return st;
}

tide_status dsparse_stack(const unsigned char *roles, int nc, const tide_tensor *pending, int64_t count,
                          tide_tensor *out) {
  for (int k = 0; k < nc; k++) {
    tide_status st;
    int width = roles[k] ? 3 : 1;
    if (width == 3) st = batch_triple(nc, pending, count, k, &out[k]);
    else st = dbatch_stack_component(nc, pending, count, k, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
    k += width - 1;
  }
  return TIDE_OK;
}
