/* data/batch.c — batch: n elements at a time stacked along a new first dim
 * (SparseTensors batched by TF's rule: sparse_batch.c), and the node every
 * batching stage runs (padded_batch's too). */
#include "batch.h"

/* ---- the node ----------------------------------------------------------------- */

typedef struct batch_node {
  dnode base;
  dnode_ops ops;        /* the batch node's, under its stage's name */
  const tide_dataset *ds;
  dnode *in;
  int64_t n;
  int drop;
  tide_tensor *pending; /* n * ncomp headers: the elements of the batch being made */
  int done;
  dbatch_assembly assemble;
} batch_node;

static tide_status batch_next(dnode *self, tide_tensor *out, int *end) {
  batch_node *b = (batch_node *)self;
  int nc = self->ncomp;
  int64_t count = 0;
  tide_status st = TIDE_OK;
  while (!b->done && count < b->n) {
    int e = 0;
    st = dnext(b->in, &b->pending[count * nc], &e);
    if (st) break;
    if (e) b->done = 1;
    else count++;
  }
  if (!st && (count == 0 || (b->drop && count < b->n))) *end = 1;
  else if (!st) st = b->assemble(b->ds, b->pending, count, out);
  for (int64_t i = 0; i < count; i++) delem_release(&b->pending[i * nc], nc);
  return st;
}

static void batch_free(dnode *self) {
  batch_node *b = (batch_node *)self;
  b->in->ops->free(b->in);
  free(b->pending);
  free(b);
}

dnode *dbatch_node(tide_dataset *ds, dpass *pass, const char *name, int64_t n, int drop, dbatch_assembly assemble) {
  batch_node *b = calloc(1, sizeof *b);
  if (b && n <= (int64_t)1 << 24) b->pending = calloc((size_t)(n * ds->ncomp), sizeof *b->pending);
  if (!b || !b->pending) {
    free(b);
    TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a batch of %lld", name, (long long)n);
    return NULL;
  }
  b->ops = (dnode_ops){batch_next, batch_free, name};
  b->base = (dnode){&b->ops, ds->ncomp, pass};
  b->ds = ds;
  b->n = n, b->drop = drop;
  b->assemble = assemble;
  if (!(b->in = dnode_make(ds->input, pass))) {
    free(b->pending);
    free(b);
    return NULL;
  }
  return &b->base;
}

int64_t dbatch_cardinality(int64_t in, int64_t n, int drop) {
  if (in < 0) return in;
  return drop ? in / n : (in + n - 1) / n;
}

/* ---- stacking ----------------------------------------------------------------- */

tide_status dbatch_stack_component(int nc, const tide_tensor *pending, int64_t count, int k, tide_tensor *out) {
  const tide_tensor *first = &pending[k];
  for (int64_t i = 1; i < count; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    bool same = e->dt == first->dt && e->ndim == first->ndim;
    for (int d = 0; same && d < e->ndim; d++) same = e->dims[d] == first->dims[d];
    if (!same) {
      char s0[128], si[128];
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "batch: cannot batch tensors with different shapes in component %d: the first element "
                       "is %s %s and element %lld is %s %s; use padded_batch for elements of different shapes",
                       k, tide_dtype_name(first->dt), TIDE_SHAPE_STR(s0, first), (long long)i,
                       tide_dtype_name(e->dt), TIDE_SHAPE_STR(si, e));
    }
  }
  int64_t dims[TIDE_MAX_DIMS];
  if (first->ndim + 1 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d has rank %d; a batch of it passes the limit of %d", k,
                     first->ndim, TIDE_MAX_DIMS);
  dims[0] = count;
  for (int d = 0; d < first->ndim; d++) dims[d + 1] = first->dims[d];
  tide_status st = tide_tensor_init(out, first->dt, first->ndim + 1, dims);
  if (st) return st;
  size_t row = (size_t)first->nelem * tide_dtype_size_unchecked(first->dt);
  for (int64_t i = 0; i < count && row > 0; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    char *dst = (char *)out->data + (size_t)i * row;
    if (tide_tensor_is_contiguous(e)) {
      memcpy(dst, e->data, row);
    } else {
      tide_tensor view;
      memset(&view, 0, sizeof view);
      tide_status vs = tide_tensor_wrap(&view, dst, e->dt, e->ndim, e->dims, NULL, NULL, NULL);
      if (!vs) vs = tide_tensor_copy_into(&view, e);
      tide_tensor_release(&view);
      if (vs) {
        tide_tensor_release(out);
        return vs;
      }
    }
  }
  /* string rows were copied as raw references: the batch takes its own */
  if (first->dt == TIDE_STRING && out->storage) tide_strings_own(out->storage);
  return TIDE_OK;
}

/* Stack `count` elements (pending[i * ncomp + k]) into out[k]. */
static tide_status stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out) {
  for (int k = 0; k < ds->ncomp; k++) {
    tide_status st = dbatch_stack_component(ds->ncomp, pending, count, k, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}

/* ---- the stage ---------------------------------------------------------------- */

typedef struct batch_ds {
  tide_dataset base;
  int64_t n;
  int drop;
  unsigned char *sparse_roles; /* NULL, or per component 1 where a SparseTensor's indices are (values and
                                * dense_shape follow), else 0 */
} batch_ds;

static const dstage_ops batch_stage;

tide_dataset *tide_dataset_batch(tide_dataset *in, int64_t n, int drop_remainder) {
  if (n < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "batch: batch_size must be at least 1, got %lld", (long long)n);
    return NULL;
  }
  batch_ds *b = (batch_ds *)dstage_new_on(&batch_stage, in);
  if (!b) return NULL;
  b->n = n, b->drop = drop_remainder != 0;
  return &b->base;
}

tide_dataset *tide_dataset_sparse_batch(tide_dataset *in, int64_t n, int drop_remainder,
                                        const unsigned char *sparse_roles) {
  if (!sparse_roles) return tide_dataset_batch(in, n, drop_remainder);
  for (int k = 0; in && k < in->ncomp; k++) {
    if (!sparse_roles[k]) continue;
    if (k + 2 >= in->ncomp || sparse_roles[k + 1] || sparse_roles[k + 2]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "batch: component %d marks a SparseTensor's indices, but its values and dense_shape "
                "(components %d and %d) are missing or marked too", k, k + 1, k + 2);
      return NULL;
    }
    k += 2;
  }
  tide_dataset *ds = tide_dataset_batch(in, n, drop_remainder);
  if (!ds) return NULL;
  batch_ds *b = (batch_ds *)ds;
  if (!(b->sparse_roles = dstage_dup(sparse_roles, (size_t)ds->ncomp))) {
    tide_dataset_free(ds);
    return NULL;
  }
  return ds;
}

static tide_status sparse_assembly(const tide_dataset *ds, const tide_tensor *pending, int64_t count,
                                   tide_tensor *out) {
  return dsparse_stack(((const batch_ds *)ds)->sparse_roles, ds->ncomp, pending, count, out);
}

static dnode *batch_node_make(tide_dataset *ds, dpass *pass) {
  const batch_ds *b = (const batch_ds *)ds;
  return dbatch_node(ds, pass, "batch", b->n, b->drop, b->sparse_roles ? sparse_assembly : stack);
}

static int64_t batch_cardinality(const tide_dataset *ds) {
  const batch_ds *b = (const batch_ds *)ds;
  return dbatch_cardinality(dstage_input_cardinality(ds), b->n, b->drop);
}

static tide_status batch_copy(tide_dataset *dst, const tide_dataset *src) {
  batch_ds *d = (batch_ds *)dst;
  const batch_ds *s = (const batch_ds *)src;
  d->n = s->n, d->drop = s->drop;
  if (s->sparse_roles && !(d->sparse_roles = dstage_dup(s->sparse_roles, (size_t)src->ncomp))) return tide_last_status();
  return TIDE_OK;
}

static void batch_release(tide_dataset *ds) { free(((batch_ds *)ds)->sparse_roles); }

static const dstage_ops batch_stage = {"batch", sizeof(batch_ds), batch_node_make, batch_cardinality, batch_copy,
                                       batch_release, NULL, NULL};
