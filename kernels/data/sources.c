/* data/sources.c — the stages at the bottom of a pass: rows of tensors
 * (from_tensor_slices), integer ranges, and plugged-in tide_data_sources. */
#include "stage.h"

/* ---- rows of tensors ---------------------------------------------------------- */

typedef struct slices_ds {
  tide_dataset base;
  int64_t rows;
  tide_tensor *tensors; /* ncomp contiguous tensors (rows are views of them) */
} slices_ds;

static const dstage_ops slices_stage;

tide_dataset *tide_dataset_slices(int n, const tide_tensor *const *tensors) {
  if (n < 1 || n > TIDE_DATA_MAX_COMPONENTS || !tensors) {
    TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: expected 1 to %d tensors, got %d", TIDE_DATA_MAX_COMPONENTS, n);
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    const tide_tensor *t = tensors[k];
    char s0[128], sk[128];
    if (!t || (t->flags & TIDE_TENSOR_SYMBOLIC) || (!t->data && t->nelem > 0)) {
      TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: component %d is not an eager tensor with data", k);
      return NULL;
    }
    if (t->ndim < 1) {
      TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: component %d is a scalar; slicing needs at least one dimension",
                k);
      return NULL;
    }
    if (t->dims[0] != tensors[0]->dims[0]) {
      TIDE_FAIL(TIDE_ERR_SHAPE,
                "from_tensor_slices: the components have different first dimensions: component 0 is %s, "
                "component %d is %s",
                TIDE_SHAPE_STR(s0, tensors[0]), k, TIDE_SHAPE_STR(sk, t));
      return NULL;
    }
  }
  slices_ds *s = (slices_ds *)dstage_new(&slices_stage, n);
  if (!s) return NULL;
  s->rows = tensors[0]->dims[0];
  if (!(s->tensors = calloc((size_t)n, sizeof *s->tensors))) {
    tide_dataset_free(&s->base);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    if (dtensor_own_contiguous(&s->tensors[k], tensors[k])) { /* rows are views of it */
      tide_dataset_free(&s->base);
      return NULL;
    }
  }
  return &s->base;
}

typedef struct slices_node {
  dnode base;
  const slices_ds *ds;
  int64_t next_row;
} slices_node;

static tide_status slices_next(dnode *self, tide_tensor *out, int *end) {
  slices_node *s = (slices_node *)self;
  if (s->next_row >= s->ds->rows) {
    *end = 1;
    return TIDE_OK;
  }
  int64_t row = s->next_row++;
  for (int k = 0; k < self->ncomp; k++) {
    const tide_tensor *t = &s->ds->tensors[k];
    tide_status st;
    if (t->nelem == 0) /* an empty row: nothing to view */
      st = tide_tensor_init(&out[k], t->dt, t->ndim - 1, t->dims + 1);
    else
      st = tide_tensor_view(&out[k], t, t->ndim - 1, t->dims + 1, t->strides + 1, row * t->strides[0]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}

static void plain_free(dnode *self) { free(self); }

static const dnode_ops slices_ops = {slices_next, plain_free, "from_tensor_slices"};

static dnode *slices_node_make(tide_dataset *ds, dpass *pass) {
  slices_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&slices_ops, ds->ncomp, pass};
  s->ds = (const slices_ds *)ds;
  return &s->base;
}

static int64_t slices_cardinality(const tide_dataset *ds) { return ((const slices_ds *)ds)->rows; }

static void slices_release(tide_dataset *ds) {
  slices_ds *s = (slices_ds *)ds;
  if (s->tensors) delem_release(s->tensors, ds->ncomp);
  free(s->tensors);
}

/* A leaf: interleave's param leaves make new ones, it is never copied. */
static const dstage_ops slices_stage = {"from_tensor_slices", sizeof(slices_ds), slices_node_make, slices_cardinality,
                                        NULL, slices_release, NULL, NULL};

/* ---- ranges ------------------------------------------------------------------- */

typedef struct range_ds {
  tide_dataset base;
  int64_t start, stop, step;
  int dtype;
} range_ds;

static const dstage_ops range_stage;

tide_dataset *tide_dataset_range(int64_t start, int64_t stop, int64_t step, int dtype) {
  if (step == 0) {
    TIDE_FAIL(TIDE_ERR_VALUE, "range: step must not be 0");
    return NULL;
  }
  if (dtype != TIDE_INT32 && dtype != TIDE_INT64) {
    TIDE_FAIL(TIDE_ERR_DTYPE, "range: dtype must be int32 or int64, got %s", tide_dtype_name(dtype));
    return NULL;
  }
  range_ds *r = (range_ds *)dstage_new(&range_stage, 1);
  if (!r) return NULL;
  r->start = start, r->stop = stop, r->step = step, r->dtype = dtype;
  return &r->base;
}

typedef struct range_node {
  dnode base;
  const range_ds *ds;
  int64_t value;
} range_node;

static tide_status range_next(dnode *self, tide_tensor *out, int *end) {
  range_node *r = (range_node *)self;
  const range_ds *ds = r->ds;
  if (ds->step > 0 ? r->value >= ds->stop : r->value <= ds->stop) {
    *end = 1;
    return TIDE_OK;
  }
  tide_status st = tide_tensor_init(out, ds->dtype, 0, NULL);
  if (st) return st;
  if (ds->dtype == TIDE_INT32) *(int32_t *)out->data = (int32_t)r->value;
  else *(int64_t *)out->data = r->value;
  r->value += ds->step;
  return TIDE_OK;
}

static const dnode_ops range_ops = {range_next, plain_free, "range"};

static dnode *range_node_make(tide_dataset *ds, dpass *pass) {
  range_node *r = calloc(1, sizeof *r);
  if (!r) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  r->base = (dnode){&range_ops, 1, pass};
  r->ds = (const range_ds *)ds;
  r->value = r->ds->start;
  return &r->base;
}

static int64_t range_cardinality(const tide_dataset *ds) {
  const range_ds *r = (const range_ds *)ds;
  int64_t span = r->stop - r->start, step = r->step;
  if ((span > 0) != (step > 0) || span == 0) return 0;
  return step > 0 ? (span + step - 1) / step : (-span + -step - 1) / -step;
}

/* A leaf: interleave's param leaves make new ones, it is never copied. */
static const dstage_ops range_stage = {"range", sizeof(range_ds), range_node_make, range_cardinality, NULL, NULL, NULL,
                                       NULL};

/* ---- plugged-in sources ------------------------------------------------------------ */

typedef struct source_ds {
  tide_dataset base;
  tide_data_source src;
} source_ds;

static const dstage_ops source_stage;

tide_dataset *tide_dataset_from_source(const tide_data_source *src) {
  if (!src || !src->next || src->ncomp < 1 || src->ncomp > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: a source needs next() and 1 to %d components", TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  source_ds *s = (source_ds *)dstage_new(&source_stage, src->ncomp);
  if (s) s->src = *src;
  return s ? &s->base : NULL;
}

const tide_data_source *dsource_of(const tide_dataset *ds) {
  return ds && ds->stage == &source_stage ? &((const source_ds *)ds)->src : NULL;
}

typedef struct source_node {
  dnode base;
  tide_data_source *src;
  void *state;
} source_node;

static tide_status source_next(dnode *self, tide_tensor *out, int *end) {
  source_node *s = (source_node *)self;
  tide_tensor *ptrs[TIDE_DATA_MAX_COMPONENTS];
  for (int k = 0; k < self->ncomp; k++) ptrs[k] = &out[k];
  tide_status st = s->src->next(s->src->ctx, s->state, ptrs, end);
  if (st || *end) delem_release(out, self->ncomp);
  if (st && !tide_last_error()[0]) TIDE_FAIL(st, "data: a source failed without saying why");
  return st;
}

static void source_free(dnode *self) {
  source_node *s = (source_node *)self;
  if (s->src->close) s->src->close(s->src->ctx, s->state);
  free(s);
}

static const dnode_ops source_ops = {source_next, source_free, "source"};

static dnode *source_node_make(tide_dataset *ds, dpass *pass) {
  source_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&source_ops, ds->ncomp, pass};
  s->src = &((source_ds *)ds)->src;
  if (s->src->open && s->src->open(s->src->ctx, &s->state) != TIDE_OK) {
    free(s);
    return NULL;
  }
  return &s->base;
}

static int64_t source_cardinality(const tide_dataset *ds) { return ((const source_ds *)ds)->src.cardinality; }

static void source_release(tide_dataset *ds) {
  tide_data_source *src = &((source_ds *)ds)->src;
  if (src->free_ctx) src->free_ctx(src->ctx);
}

/* A leaf: interleave's file leaves make new ones (ctx_for_files), it is never copied. */
static const dstage_ops source_stage = {"source", sizeof(source_ds), source_node_make, source_cardinality, NULL,
                                        source_release, NULL, NULL};
