/* io/summary_effect.c — summaries inside traced functions: a graph node
 * (tide_graph_effect) that writes a scalar or histogram at each run. */
#include "summary_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"

typedef struct summary_effect {
  tide_summary_writer *w; /* a reference of its own (tide_summary_writer_retain) */
  int kind;               /* TIDE_SUMMARY_* */
  char *tag;
  char *description;      /* NULL: none */
  int buckets;
} summary_effect;

static void effect_release(void *ctx) {
  summary_effect *e = ctx;
  if (!e) return;
  tide_summary_writer_free(e->w);
  free(e->tag);
  free(e->description);
  free(e);
}

/* The one element of a scalar tensor t as int64 (int32/int64) or bool (condition). */
static tide_status scalar_int(const tide_tensor *t, const char *tag, const char *what, int64_t *out) {
  if (t->nelem != 1 || !t->data)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "summary '%s': the %s must be one value, got %lld", tag, what, (long long)t->nelem);
  switch (t->dt) {
  case TIDE_INT32: *out = *(const int32_t *)t->data; return TIDE_OK;
  case TIDE_INT64: *out = *(const int64_t *)t->data; return TIDE_OK;
  case TIDE_BOOL: *out = *(const uint8_t *)t->data != 0; return TIDE_OK;
  default: return TIDE_FAIL(TIDE_ERR_DTYPE, "summary '%s': the %s must be an integer, got %s", tag, what, tide_dtype_name(t->dt));
  }
}

static tide_status effect_run(void *ctx, int n, const tide_tensor *const *in) {
  summary_effect *e = ctx;
  if (n < 2) return TIDE_FAIL(TIDE_ERR_INTERNAL, "summary '%s': the node has %d inputs", e->tag, n);
  int64_t step = 0, record = 1;
  tide_status s = TIDE_OK;
  if (n >= 3 && (s = scalar_int(in[2], e->tag, "record_if condition", &record))) return s;
  if (!record) return TIDE_OK;
  if ((s = scalar_int(in[0], e->tag, "step", &step))) return s;
  const tide_tensor *d = in[1];
  if (e->kind == TIDE_SUMMARY_SCALAR) {
    if (d->dt != TIDE_FLOAT32 || d->nelem != 1 || !d->data)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "summary.scalar '%s': data must be one float32 value", e->tag);
    return tide_summary_write_scalar(e->w, e->tag, step, *(const float *)d->data, e->description);
  }
  if (d->dt != TIDE_FLOAT64 || (d->nelem > 0 && !d->data))
    return TIDE_FAIL(TIDE_ERR_DTYPE, "summary.histogram '%s': data must be float64", e->tag);
  if (tide_tensor_is_contiguous(d))
    return tide_summary_write_histogram(e->w, e->tag, step, d->data, d->nelem, e->buckets, e->description);
  /* A view (a transpose, a broadcast): its elements in row-major order. */
  double *vals = malloc(sizeof(double) * (size_t)(d->nelem > 0 ? d->nelem : 1));
  if (!vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary.histogram '%s': out of memory", e->tag);
  int64_t idx[TIDE_MAX_DIMS] = {0};
  for (int64_t i = 0; i < d->nelem; i++) {
    int64_t off = 0;
    for (int k = 0; k < d->ndim; k++) off += idx[k] * d->strides[k];
    vals[i] = ((const double *)d->data)[off];
    for (int k = d->ndim - 1; k >= 0; k--) {
      if (++idx[k] < d->dims[k]) break;
      idx[k] = 0;
    }
  }
  s = tide_summary_write_histogram(e->w, e->tag, step, vals, d->nelem, e->buckets, e->description);
  free(vals);
  return s;
}

static const tide_effect SCALAR_EFFECT = {"summary.scalar", effect_run, effect_release};
static const tide_effect HISTOGRAM_EFFECT = {"summary.histogram", effect_run, effect_release};

tide_status tide_summary_record(tide_graph *g, tide_summary_writer *w, int kind, const char *tag,
                                const char *description, int buckets, const tide_tensor *step,
                                const tide_tensor *data, const tide_tensor *condition) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "summary: no graph is being built");
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "summary: no writer");
  if (!tag || !*tag) return TIDE_FAIL(TIDE_ERR_VALUE, "summary: the name must be a non-empty string");
  if (kind != TIDE_SUMMARY_SCALAR && kind != TIDE_SUMMARY_HISTOGRAM)
    return TIDE_FAIL(TIDE_ERR_VALUE, "summary '%s': unknown kind %d", tag, kind);
  if (buckets < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "summary.histogram '%s': buckets must be >= 0, got %d", tag, buckets);
  if (!step || !data) return TIDE_FAIL(TIDE_ERR_VALUE, "summary '%s': no step or no data", tag);
  summary_effect *e = calloc(1, sizeof *e);
  if (!e) return TIDE_FAIL(TIDE_ERR_MEMORY, "summary '%s': out of memory", tag);
  e->kind = kind;
  e->buckets = buckets;
  e->tag = strdup(tag);
  e->description = description && *description ? strdup(description) : NULL;
  if (!e->tag || (description && *description && !e->description)) {
    free(e->tag);
    free(e->description);
    free(e);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "summary '%s': out of memory", tag);
  }
  tide_summary_writer_retain(w);
  e->w = w;
  const tide_tensor *ins[3] = {step, data, condition};
  /* the graph owns e from here, also when it refuses the node */
  return tide_graph_effect(g, kind == TIDE_SUMMARY_SCALAR ? &SCALAR_EFFECT : &HISTOGRAM_EFFECT, e, condition ? 3 : 2, ins);
}
