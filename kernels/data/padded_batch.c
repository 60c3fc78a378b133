/* data/padded_batch.c — padded_batch: n elements at a time, each component
 * padded at the end of every dim to the padded shape (a dim of -1: the
 * batch's longest) with its padding value, then stacked (numbers and bools).
 * Its node is batch's (batch.c) with this assembly. */
#include "batch.h"

typedef struct padded_batch_ds {
  tide_dataset base;
  int64_t n;
  int drop;
  int64_t *shapes;  /* ncomp * TIDE_MAX_DIMS dims, -1: the batch's longest */
  uint64_t *values; /* ncomp values, each its component dtype's bytes */
} padded_batch_ds;

static const dstage_ops padded_batch_stage;

tide_dataset *tide_dataset_padded_batch(tide_dataset *in, int64_t n, int drop_remainder, const int64_t *shapes,
                                        const uint64_t *values) {
  if (n < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "padded_batch: batch_size must be at least 1, got %lld", (long long)n);
    return NULL;
  }
  padded_batch_ds *p = (padded_batch_ds *)dstage_new_on(&padded_batch_stage, in);
  if (!p) return NULL;
  p->n = n, p->drop = drop_remainder != 0;
  int nc = p->base.ncomp;
  size_t nd = (size_t)nc * TIDE_MAX_DIMS;
  p->shapes = malloc(nd * sizeof *p->shapes);
  p->values = calloc((size_t)nc, sizeof *p->values);
  if (!p->shapes || !p->values) {
    tide_dataset_free(&p->base);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  for (size_t i = 0; i < nd; i++) p->shapes[i] = shapes && shapes[i] >= 0 ? shapes[i] : -1;
  if (values) memcpy(p->values, values, (size_t)nc * sizeof *values);
  return &p->base;
}

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
static tide_status pad_stack(const padded_batch_ds *ds, const tide_tensor *pending, int64_t count, int k,
                             tide_tensor *out) {
  int nc = ds->base.ncomp;
  const tide_tensor *first = &pending[k];
  const int64_t *want = ds->shapes + (size_t)k * TIDE_MAX_DIMS;
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
  if (out->nelem > 0) fill_pattern(out->data, out->nelem, es, &ds->values[k]);
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

/* Every component of the `count` pending elements, padded and stacked into out. */
static tide_status padding_stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out) {
  for (int k = 0; k < ds->ncomp; k++) {
    tide_status st = pad_stack((const padded_batch_ds *)ds, pending, count, k, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}

static dnode *padded_batch_node_make(tide_dataset *ds, dpass *pass) {
  const padded_batch_ds *p = (const padded_batch_ds *)ds;
  return dbatch_node(ds, pass, "padded_batch", p->n, p->drop, padding_stack);
}

static int64_t padded_batch_cardinality(const tide_dataset *ds) {
  const padded_batch_ds *p = (const padded_batch_ds *)ds;
  return dbatch_cardinality(dstage_input_cardinality(ds), p->n, p->drop);
}

static tide_status padded_batch_copy(tide_dataset *dst, const tide_dataset *src) {
  padded_batch_ds *d = (padded_batch_ds *)dst;
  const padded_batch_ds *s = (const padded_batch_ds *)src;
  size_t nc = (size_t)src->ncomp;
  d->n = s->n, d->drop = s->drop;
  if (!(d->shapes = dstage_dup(s->shapes, nc * TIDE_MAX_DIMS * sizeof *s->shapes))) return tide_last_status();
  if (!(d->values = dstage_dup(s->values, nc * sizeof *s->values))) return tide_last_status();
  return TIDE_OK;
}

static void padded_batch_release(tide_dataset *ds) {
  padded_batch_ds *p = (padded_batch_ds *)ds;
  free(p->shapes);
  free(p->values);
}

static const dstage_ops padded_batch_stage = {"padded_batch", sizeof(padded_batch_ds), padded_batch_node_make,
                                              padded_batch_cardinality, padded_batch_copy, padded_batch_release,
                                              NULL, NULL};
