/* data/padded_batch.c — padded_batch: n elements at a time, each component
 * padded at the end of every dim to the padded shape (a dim of -1: the
 * batch's longest) with its padding value, then stacked (numbers and bools). */
#include "pipeline.h"

typedef struct pbatch_node {
  dnode base;
  tide_dataset *ds;
  dnode *in;
  tide_tensor *pending; /* n * ncomp headers */
  int done;
} pbatch_node;

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
static tide_status pad_stack(pbatch_node *b, int64_t count, int k, tide_tensor *out) {
  int nc = b->base.ncomp;
  const tide_tensor *first = &b->pending[k];
  const int64_t *want = b->ds->pad_shapes + (size_t)k * TIDE_MAX_DIMS;
  int rank = first->ndim;
  int64_t target[TIDE_MAX_DIMS];
  char s0[128], si[128];
  for (int d = 0; d < rank; d++) target[d] = want[d] >= 0 ? want[d] : 0;
  for (int64_t i = 0; i < count; i++) {
    const tide_tensor *e = &b->pending[i * nc + k];
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
  if (out->nelem > 0) fill_pattern(out->data, out->nelem, es, &b->ds->pad_values[k]);
  for (int64_t i = 0; i < count && row > 0; i++) {
    const tide_tensor *e = &b->pending[i * nc + k];
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

static tide_status pbatch_next(dnode *self, tide_tensor *out, int *end) {
  pbatch_node *b = (pbatch_node *)self;
  int nc = self->ncomp;
  int64_t count = 0;
  tide_status st = TIDE_OK;
  while (!b->done && count < b->ds->n) {
    int e = 0;
    st = b->in->ops->next(b->in, &b->pending[count * nc], &e);
    if (st) break;
    if (e) b->done = 1;
    else count++;
  }
  if (!st && (count == 0 || (b->ds->flag && count < b->ds->n))) *end = 1;
  for (int k = 0; !st && !*end && k < nc; k++) {
    st = pad_stack(b, count, k, &out[k]);
    if (st) delem_release(out, k);
  }
  for (int64_t i = 0; i < count; i++) delem_release(&b->pending[i * nc], nc);
  return st;
}

static void pbatch_free(dnode *self) {
  pbatch_node *b = (pbatch_node *)self;
  b->in->ops->free(b->in);
  free(b->pending);
  free(b);
}

static const dnode_ops pbatch_ops = {pbatch_next, pbatch_free, "padded_batch"};

dnode *dnode_padded_batch(tide_dataset *ds, dpass *pass) {
  pbatch_node *b = calloc(1, sizeof *b);
  if (b && ds->n <= (int64_t)1 << 24) b->pending = calloc((size_t)(ds->n * ds->ncomp), sizeof *b->pending);
  if (!b || !b->pending) {
    free(b);
    TIDE_FAIL(TIDE_ERR_MEMORY, "padded_batch: out of memory for a batch of %lld", (long long)ds->n);
    return NULL;
  }
  b->base = (dnode){&pbatch_ops, ds->ncomp, pass};
  b->ds = ds;
  if (!(b->in = dnode_make(ds->input, pass))) {
    free(b->pending);
    free(b);
    return NULL;
  }
  return &b->base;
}
