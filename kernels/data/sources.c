/* data/sources.c — the nodes at the bottom of a pass: rows of tensors
 * (from_tensor_slices), integer ranges, and plugged-in tide_data_sources. */
#include "pipeline.h"

/* ---- rows of tensors ---------------------------------------------------------- */

typedef struct slices_node {
  dnode base;
  tide_dataset *ds;
  int64_t next_row;
} slices_node;

static tide_status slices_next(dnode *self, tide_tensor *out, int *end) {
  slices_node *s = (slices_node *)self;
  if (s->next_row >= s->ds->n) {
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

dnode *dnode_slices(tide_dataset *ds, dpass *pass) {
  slices_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&slices_ops, ds->ncomp, pass};
  s->ds = ds;
  return &s->base;
}

/* ---- ranges ------------------------------------------------------------------- */

typedef struct range_node {
  dnode base;
  tide_dataset *ds;
  int64_t value;
} range_node;

static tide_status range_next(dnode *self, tide_tensor *out, int *end) {
  range_node *r = (range_node *)self;
  const tide_dataset *ds = r->ds;
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

dnode *dnode_range(tide_dataset *ds, dpass *pass) {
  range_node *r = calloc(1, sizeof *r);
  if (!r) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  r->base = (dnode){&range_ops, 1, pass};
  r->ds = ds;
  r->value = ds->n;
  return &r->base;
}

/* ---- plugged-in sources ------------------------------------------------------------ */

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

dnode *dnode_source(tide_dataset *ds, dpass *pass) {
  source_node *s = calloc(1, sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  s->base = (dnode){&source_ops, ds->ncomp, pass};
  s->src = &ds->src;
  if (s->src->open && s->src->open(s->src->ctx, &s->state) != TIDE_OK) {
    free(s);
    return NULL;
  }
  return &s->base;
}
