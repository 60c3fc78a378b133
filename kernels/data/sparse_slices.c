/* data/sparse_slices.c — from_tensor_slices of elements holding SparseTensors:
 * one stage, validated once, whose rows are views between row offsets. */
#include "stage.h"

#include <stdio.h>

/* Index k's tuple as "a,b,c" into buf (cut short with "..." when long). */
static const char *tuple_str(char *buf, size_t cap, const tide_tensor *ix, int64_t k) {
  size_t at = 0;
  buf[0] = '\0';
  const int64_t *p = ix->data;
  for (int64_t d = 0; d < ix->dims[1]; d++) {
    int w = snprintf(buf + at, cap - at, "%s%lld", d ? "," : "", (long long)p[k * ix->strides[0] + d * ix->strides[1]]);
    if (w < 0 || (size_t)w >= cap - at) {
      if (cap >= 4) memcpy(buf + cap - 4, "...", 4);
      break;
    }
    at += (size_t)w;
  }
  return buf;
}

/* Row offsets of a SparseTensor cut along its first dim: off[0 .. rows]
 * such that row r's entries are off[r] .. off[r+1) of indices (int64 [nnz,
 * rank >= 1], any strides). Fails, the message prefixed "what: ", on an
 * index outside [0, rows) in dim 0, and on indices out of row-major order:
 * every dim when full_order (TF's from_tensor_slices check, repeats refused
 * too), else dim 0 only (all that cutting rows needs). O(nnz + rows); off is
 * the caller's. */
static tide_status row_offsets(const tide_tensor *indices, int64_t rows, int full_order, const char *what,
                                int64_t *off) {
  if (indices->dt != TIDE_INT64 || indices->ndim != 2 || indices->dims[1] < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: a SparseTensor's indices must be int64 [N, r] with r >= 1", what);
  const int64_t *ix = indices->data;
  int64_t nnz = indices->dims[0], rank = indices->dims[1], s0 = indices->strides[0], s1 = indices->strides[1];
  int64_t bad = -1; /* the first index outside the rows; reported after the order, as the Lua check did */
  for (int64_t r = 0; r <= rows; r++) off[r] = 0;
  for (int64_t k = 0; k < nnz; k++) {
    const int64_t *cur = ix + k * s0;
    if (k > 0) { /* row-major: compare with the previous tuple */
      const int64_t *prev = cur - s0;
      int cmp = 0;
      for (int64_t d = 0; d < (full_order ? rank : 1) && !cmp; d++)
        if (prev[d * s1] != cur[d * s1]) cmp = prev[d * s1] < cur[d * s1] ? -1 : 1;
      if (cmp > 0 || (cmp == 0 && full_order)) {
        char buf[256];
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: indices[%lld] = [%s] is %s. Many sparse ops require sorted indices. "
                         "Use tide.sparse.reorder to create a correctly ordered copy", what, (long long)k,
                         tuple_str(buf, sizeof buf, indices, k), cmp == 0 ? "repeated" : "out of order");
      }
    }
    if (cur[0] < 0 || cur[0] >= rows) {
      if (bad < 0) bad = k;
    } else {
      off[cur[0] + 1]++;
    }
  }
  if (bad >= 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the SparseTensor's index %lld has %lld in dim 0, outside its dense shape's "
                     "%lld", what, (long long)bad, (long long)ix[bad * s0], (long long)rows);
  for (int64_t r = 0; r < rows; r++) off[r + 1] += off[r];
  return TIDE_OK;
}

/* Check the triple at component k (indices, values, dense_shape); its rows into *rows. */
static tide_status check_triple(const tide_tensor *const *t, int k, int64_t *rows) {
  const tide_tensor *ix = t[k], *vals = t[k + 1], *shape = t[k + 2];
  char s1[128], s2[128], s3[128];
  if (shape->dt != TIDE_INT64 || shape->ndim != 1 || ix->dt != TIDE_INT64 || ix->ndim != 2 || vals->ndim != 1 ||
      ix->dims[1] != shape->dims[0] || vals->dims[0] != ix->dims[0])
    return TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: components %d-%d are not a SparseTensor: indices %s %s, "
                     "values %s, dense_shape %s %s (expected int64 [N, r], [N] and int64 [r])", k, k + 2,
                     tide_dtype_name(ix->dt), TIDE_SHAPE_STR(s1, ix), TIDE_SHAPE_STR(s2, vals),
                     tide_dtype_name(shape->dt), TIDE_SHAPE_STR(s3, shape));
  if (shape->dims[0] < 1)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: a SparseTensor of rank 0 has no first dimension to slice");
  if (shape->dims[0] == 1) /* as TF 2.21, whose sparse rows go through SerializeManySparse */
    return TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: a SparseTensor of rank 1 cannot be sliced: its rows would be "
                     "SparseTensors of rank 0 (TF: \"Rank of input SparseTensor should be > 1\"); slice "
                     "tide.sparse.to_dense(sp) instead, or reshape it to [n, 1] first");
  const int64_t *dims = shape->data;
  for (int64_t d = 0; d < shape->dims[0]; d++) {
    if (dims[d * shape->strides[0]] < 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: components %d-%d: a SparseTensor's dense shape has %lld "
                       "in dim %lld", k, k + 2, (long long)dims[d * shape->strides[0]], (long long)d);
  }
  *rows = dims[0];
  return TIDE_OK;
}

typedef struct sparse_slices_ds {
  tide_dataset base;
  int64_t rows;
  tide_tensor *tensors;    /* ncomp: at a SparseTensor's indices component, the indices without dim 0 */
  int64_t **row_offsets;   /* at each SparseTensor's indices component, its rows + 1 row offsets */
  unsigned char *roles;    /* per component 1 where a SparseTensor's indices are (values and dense_shape follow) */
} sparse_slices_ds;

static const dstage_ops sparse_slices_stage;

/* The triple at component k of ds from t: indices without their first
 * column (contiguous, so every row's are a contiguous view), values and
 * dense_shape shared, and the row offsets. */
static tide_status take_triple(sparse_slices_ds *ds, const tide_tensor *const *t, int k, int64_t rows) {
  const tide_tensor *ix = t[k];
  int64_t nnz = ix->dims[0], rank = ix->dims[1];
  if ((uint64_t)rows >= SIZE_MAX / sizeof(int64_t) ||
      !(ds->row_offsets[k] = malloc((size_t)(rows + 1) * sizeof(int64_t))))
    return TIDE_FAIL(TIDE_ERR_MEMORY, "from_tensor_slices: out of memory for the row offsets of a SparseTensor of "
                     "%lld rows", (long long)rows);
  tide_status st = row_offsets(ix, rows, 1, "from_tensor_slices", ds->row_offsets[k]);
  if (st) return st;
  int64_t rest_dims[2] = {nnz, rank - 1};
  st = tide_tensor_init_heap(&ds->tensors[k], TIDE_INT64, 2, rest_dims);
  if (st) return st;
  int64_t *dst = ds->tensors[k].data;
  const int64_t *src = ix->data;
  for (int64_t j = 0; j < nnz; j++)
    for (int64_t d = 1; d < rank; d++) *dst++ = src[j * ix->strides[0] + d * ix->strides[1]];
  st = dtensor_own_contiguous(&ds->tensors[k + 1], t[k + 1]);
  if (!st) st = dtensor_own_contiguous(&ds->tensors[k + 2], t[k + 2]);
  return st;
}

tide_dataset *tide_dataset_sparse_slices(int n, const tide_tensor *const *tensors, const unsigned char *sparse_roles) {
  if (!sparse_roles) return tide_dataset_slices(n, tensors);
  if (n < 1 || n > TIDE_DATA_MAX_COMPONENTS || !tensors) {
    TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: expected 1 to %d tensors, got %d", TIDE_DATA_MAX_COMPONENTS, n);
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    const tide_tensor *t = tensors[k];
    if (!t || (t->flags & TIDE_TENSOR_SYMBOLIC) || (!t->data && t->nelem > 0)) {
      TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: component %d is not an eager tensor with data", k);
      return NULL;
    }
  }
  /* the SparseTensors first, in order (their rows set the count), then the dense components */
  int64_t rows = -1;
  bool any = false;
  for (int k = 0; k < n; k++) {
    if (!sparse_roles[k]) continue;
    if (k + 2 >= n || sparse_roles[k + 1] || sparse_roles[k + 2]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: component %d marks a SparseTensor's indices, but its values and "
                "dense_shape (components %d and %d) are missing or marked too", k, k + 1, k + 2);
      return NULL;
    }
    int64_t r;
    if (check_triple(tensors, k, &r)) return NULL;
    if (rows >= 0 && r != rows) {
      TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: the components have different first dimensions: %lld and %lld",
                (long long)rows, (long long)r);
      return NULL;
    }
    rows = r, any = true;
    k += 2;
  }
  if (!any) return tide_dataset_slices(n, tensors);
  for (int k = 0; k < n; k++) {
    if (sparse_roles[k]) {
      k += 2;
      continue;
    }
    const tide_tensor *t = tensors[k];
    if (t->ndim < 1) {
      TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: component %d is a scalar; slicing needs at least one dimension",
                k);
      return NULL;
    }
    if (t->dims[0] != rows) {
      TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: the components have different first dimensions: %lld and %lld",
                (long long)rows, (long long)t->dims[0]);
      return NULL;
    }
  }
  sparse_slices_ds *ds = (sparse_slices_ds *)dstage_new(&sparse_slices_stage, n);
  if (!ds) return NULL;
  ds->rows = rows;
  ds->tensors = calloc((size_t)n, sizeof *ds->tensors);
  ds->row_offsets = calloc((size_t)n, sizeof *ds->row_offsets);
  ds->roles = malloc((size_t)n);
  if (!ds->tensors || !ds->row_offsets || !ds->roles) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    tide_dataset_free(&ds->base);
    return NULL;
  }
  memcpy(ds->roles, sparse_roles, (size_t)n);
  for (int k = 0; k < n; k++) {
    tide_status st = sparse_roles[k] ? take_triple(ds, tensors, k, rows) : dtensor_own_contiguous(&ds->tensors[k], tensors[k]);
    if (st) {
      tide_dataset_free(&ds->base);
      return NULL;
    }
    if (sparse_roles[k]) k += 2;
  }
  return &ds->base;
}

/* ---- the rows ---------------------------------------------------------------- */

typedef struct sparse_slices_node {
  dnode base;
  const sparse_slices_ds *ds;
  int64_t next_row;
} sparse_slices_node;

/* out: a view of t (contiguous from element `at`) of the given dims, or a
 * fresh empty tensor when it has no elements. */
static tide_status row_view(tide_tensor *out, const tide_tensor *t, int ndim, const int64_t *dims, int64_t at) {
  int64_t strides[2] = {ndim == 2 ? dims[1] : 1, 1}, count = 1;
  for (int d = 0; d < ndim; d++) count *= dims[d];
  if (count == 0) return tide_tensor_init(out, t->dt, ndim, dims);
  return tide_tensor_view(out, t, ndim, dims, strides, at);
}

static tide_status sparse_slices_next(dnode *self, tide_tensor *out, int *end) {
  sparse_slices_node *s = (sparse_slices_node *)self;
  const sparse_slices_ds *ds = s->ds;
  if (s->next_row >= ds->rows) {
    *end = 1;
    return TIDE_OK;
  }
  int64_t row = s->next_row++;
  for (int k = 0; k < self->ncomp; k++) {
    const tide_tensor *t = &ds->tensors[k];
    tide_status st;
    if (ds->roles[k]) { /* indices[a:b, 1:], values[a:b], dense_shape[1:] */
      int64_t a = ds->row_offsets[k][row], b = ds->row_offsets[k][row + 1], rest = t->dims[1];
      int64_t ix_dims[2] = {b - a, rest}, val_dims[1] = {b - a}, shape_dims[1] = {rest};
      st = row_view(&out[k], t, 2, ix_dims, a * rest);
      if (!st && (st = row_view(&out[k + 1], &ds->tensors[k + 1], 1, val_dims, a))) tide_tensor_release(&out[k]);
      if (!st && (st = row_view(&out[k + 2], &ds->tensors[k + 2], 1, shape_dims, 1))) delem_release(&out[k], 2);
      if (!st) k += 2;
    } else if (t->nelem == 0) {
      st = tide_tensor_init(&out[k], t->dt, t->ndim - 1, t->dims + 1);
    } else {
      st = tide_tensor_view(&out[k], t, t->ndim - 1, t->dims + 1, t->strides + 1, row * t->strides[0]);
    }
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}

static void sparse_slices_free(dnode *self) { free(self); }

static const dnode_ops sparse_slices_ops = {sparse_slices_next, sparse_slices_free, "from_tensor_slices"};

static dnode *sparse_slices_node_make(tide_dataset *ds, dpass *pass) {
  sparse_slices_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&sparse_slices_ops, ds->ncomp, pass};
  s->ds = (const sparse_slices_ds *)ds;
  return &s->base;
}

static int64_t sparse_slices_cardinality(const tide_dataset *ds) { return ((const sparse_slices_ds *)ds)->rows; }

static void sparse_slices_release(tide_dataset *ds) {
  sparse_slices_ds *s = (sparse_slices_ds *)ds;
  if (s->tensors) delem_release(s->tensors, ds->ncomp);
  free(s->tensors);
  for (int k = 0; s->row_offsets && k < ds->ncomp; k++) free(s->row_offsets[k]);
  free(s->row_offsets);
  free(s->roles);
}

/* A leaf: never on the path an interleave copies. */
static const dstage_ops sparse_slices_stage = {"from_tensor_slices", sizeof(sparse_slices_ds), sparse_slices_node_make,
                                               sparse_slices_cardinality, NULL, sparse_slices_release, NULL, NULL};
