/* data/split.c — the stages that thin or split the stream in the consumer's
 * thread: shard (every num-th element from index on) and unbatch (each element's rows). */
#include "stage.h"

#include <stdio.h>

/* ---- shard -------------------------------------------------------------------- */

/* TF's ShardDataset: input element i is given when i % num == index. */
typedef struct shard_ds {
  tide_dataset base;
  int64_t num, index;
} shard_ds;

static const dstage_ops shard_stage;

tide_dataset *tide_dataset_shard(tide_dataset *in, int64_t num_shards, int64_t index) {
  if (num_shards < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shard: num_shards must be at least 1, got %lld", (long long)num_shards);
    return NULL;
  }
  if (index < 0 || index >= num_shards) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shard: index must be in [0, num_shards) = [0, %lld), got %lld", (long long)num_shards,
              (long long)index);
    return NULL;
  }
  shard_ds *s = (shard_ds *)dstage_new_on(&shard_stage, in);
  if (s) s->num = num_shards, s->index = index;
  return s ? &s->base : NULL;
}

typedef struct shard_node {
  dnode base;
  const shard_ds *ds;
  dnode *in;
  int64_t seen; /* elements the input gave */
} shard_node;

static tide_status shard_next(dnode *self, tide_tensor *out, int *end) {
  shard_node *s = (shard_node *)self;
  int64_t num = s->ds->num, index = s->ds->index;
  for (;;) {
    if (dpass_stopping(self->pass)) return dstopped();
    tide_status st = dnext(s->in, out, end);
    if (st || *end) return st;
    if (s->seen++ % num == index) return TIDE_OK;
    delem_release(out, self->ncomp);
  }
}

static void shard_free(dnode *self) {
  shard_node *s = (shard_node *)self;
  s->in->ops->free(s->in);
  free(s);
}

static const dnode_ops shard_ops = {shard_next, shard_free, "shard"};

static dnode *shard_node_make(tide_dataset *ds, dpass *pass) {
  shard_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&shard_ops, ds->ncomp, pass};
  s->ds = (const shard_ds *)ds;
  if (!(s->in = dnode_make(ds->input, pass))) {
    free(s);
    return NULL;
  }
  return &s->base;
}

static int64_t shard_cardinality(const tide_dataset *ds) {
  const shard_ds *s = (const shard_ds *)ds;
  int64_t in = dstage_input_cardinality(ds);
  if (in < 0) return in;
  return in / s->num + (s->index < in % s->num ? 1 : 0);
}

static tide_status shard_copy(tide_dataset *dst, const tide_dataset *src) {
  shard_ds *d = (shard_ds *)dst;
  const shard_ds *s = (const shard_ds *)src;
  d->num = s->num, d->index = s->index;
  return TIDE_OK;
}

static const dstage_ops shard_stage = {"shard", sizeof(shard_ds), shard_node_make, shard_cardinality, shard_copy, NULL,
                                       NULL, NULL};

/* ---- unbatch ------------------------------------------------------------------ */

/* The description is the shared part alone. */
static const dstage_ops unbatch_stage;

tide_dataset *tide_dataset_unbatch(tide_dataset *in) { return dstage_new_on(&unbatch_stage, in); }

/* Rows up to this size are copied into the row's own header (no storage,
 * no shared reference to count); larger rows, and strings (whose storage
 * owns its elements), are views of the element's storage. */
enum { UNBATCH_COPY_BYTES = TIDE_INLINE_BYTES };

typedef struct unbatch_node {
  dnode base;
  dnode *in;
  tide_tensor cur[TIDE_DATA_MAX_COMPONENTS]; /* the element whose rows are being given */
  size_t row_bytes[TIDE_DATA_MAX_COMPONENTS]; /* per component: a row's bytes when copied, else 0 (a view) */
  int64_t row, rows;
  int64_t index; /* elements the input gave */
} unbatch_node;

/* Check the element just pulled into u->cur and choose how its rows go out. */
static tide_status unbatch_take(unbatch_node *u) {
  int nc = u->base.ncomp;
  const tide_tensor *cur = u->cur;
  for (int k = 0; k < nc; k++)
    if (cur[k].ndim < 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "unbatch: component %d of element %lld is a scalar; every component needs a "
                       "first dimension", k, (long long)u->index);
  for (int k = 1; k < nc; k++) {
    if (cur[k].dims[0] == cur[0].dims[0]) continue;
    char dims[512];
    int at = 0;
    for (int j = 0; j < nc && at < (int)sizeof dims - 24; j++)
      at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%lld", j ? ", " : "", (long long)cur[j].dims[0]);
    return TIDE_FAIL(TIDE_ERR_SHAPE, "unbatch: the components of element %lld have different first dimensions (%s); "
                     "each must have the same number of rows", (long long)u->index, dims);
  }
  for (int k = 0; k < nc; k++) {
    tide_tensor *t = &u->cur[k];
    size_t row = t->dims[0] > 0 ? (size_t)(t->nelem / t->dims[0]) * tide_dtype_size_unchecked(t->dt) : 0;
    u->row_bytes[k] = 0;
    if (t->dt != TIDE_STRING && row <= UNBATCH_COPY_BYTES && tide_tensor_is_contiguous(t)) u->row_bytes[k] = row;
    else if ((t->flags & TIDE_TENSOR_INLINE) && t->nelem > 0) { /* a view needs a storage */
      tide_status st = tide_tensor_promote(t);
      if (st) return st;
    }
  }
  u->rows = cur[0].dims[0];
  u->row = 0;
  return TIDE_OK;
}

/* Row r of component t into the blank header out. */
static tide_status unbatch_row(const tide_tensor *t, size_t row_bytes, int64_t r, tide_tensor *out) {
  if (row_bytes > 0) {
    tide_status st = tide_tensor_init(out, t->dt, t->ndim - 1, t->dims + 1);
    if (!st) memcpy(out->data, (const char *)t->data + (size_t)r * row_bytes, row_bytes);
    return st;
  }
  if (t->nelem == 0) return tide_tensor_init(out, t->dt, t->ndim - 1, t->dims + 1); /* nothing to view */
  return tide_tensor_view(out, t, t->ndim - 1, t->dims + 1, t->strides + 1, r * t->strides[0]);
}

static tide_status unbatch_next(dnode *self, tide_tensor *out, int *end) {
  unbatch_node *u = (unbatch_node *)self;
  int nc = self->ncomp;
  while (u->row >= u->rows) {
    if (dpass_stopping(self->pass)) return dstopped();
    delem_release(u->cur, nc);
    u->row = u->rows = 0;
    tide_status st = dnext(u->in, u->cur, end);
    if (st || *end) return st;
    st = unbatch_take(u);
    u->index++;
    if (st) {
      delem_release(u->cur, nc);
      u->row = u->rows = 0;
      return st;
    }
  }
  for (int k = 0; k < nc; k++) {
    tide_status st = unbatch_row(&u->cur[k], u->row_bytes[k], u->row, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  u->row++;
  return TIDE_OK;
}

static void unbatch_free(dnode *self) {
  unbatch_node *u = (unbatch_node *)self;
  u->in->ops->free(u->in);
  delem_release(u->cur, self->ncomp);
  free(u);
}

static const dnode_ops unbatch_ops = {unbatch_next, unbatch_free, "unbatch"};

static dnode *unbatch_node_make(tide_dataset *ds, dpass *pass) {
  unbatch_node *u = calloc(1, sizeof *u);
  if (!u) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  u->base = (dnode){&unbatch_ops, ds->ncomp, pass};
  if (!(u->in = dnode_make(ds->input, pass))) {
    free(u);
    return NULL;
  }
  return &u->base;
}

/* The rows per element are not known here (element_spec's side knows a fixed batch dim). */
static int64_t unbatch_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds);
  return in == TIDE_DATA_INFINITE || in == 0 ? in : TIDE_DATA_UNKNOWN;
}

static const dstage_ops unbatch_stage = {"unbatch", sizeof(tide_dataset), unbatch_node_make, unbatch_cardinality,
                                         dstage_copy_nothing, NULL, NULL, NULL};
