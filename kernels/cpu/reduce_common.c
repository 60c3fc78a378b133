/* cpu/reduce_common.c — what the reduce family's axis kernels (argreduce, scan,
 * sort, top_k, softmax) share: their input as contiguous [outer, len, inner],
 * halves as float32, and the split of that view into strips run in parallel. */
#include "reduce.h"
#include "iter.h"
#include "../core/parallel.h"

#include <stdlib.h>
#include <string.h>

tide_status tide_axis_open(const char *op, const tide_tensor *x, int axis, tide_tensor *out, tide_axis_view *v) {
  memset(v, 0, sizeof *v);
  v->out = out;
  v->outer = v->inner = 1;
  for (int d = 0; d < axis; d++) v->outer *= x->dims[d];
  for (int d = axis + 1; d < x->ndim; d++) v->inner *= x->dims[d];
  v->len = x->dims[axis];
  const tide_tensor *src;
  tide_status st = tide_contiguous_or_copy(op, x, &v->tmp, &src);
  if (st) {
    tide_tensor_release(&v->tmp);
    return st;
  }
  v->x = src->data;
  v->y = out ? out->data : NULL;
  v->dt = x->dt;
  if (tide_is_half(x->dt)) {
    int64_t ny = out ? out->nelem : 0;
    v->conv = malloc((size_t)(x->nelem + ny) * sizeof(float));
    if (!v->conv) {
      tide_tensor_release(&v->tmp);
      return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a float32 copy of %lld elements", op,
                       (long long)(x->nelem + ny));
    }
    tide_halves_to_float(x->dt, x->nelem, src->data, 2, v->conv);
    v->x = (const char *)v->conv;
    if (out) v->y = (char *)(v->conv + x->nelem);
    v->dt = TIDE_FLOAT32;
  }
  return TIDE_OK;
}

void tide_axis_close(tide_axis_view *v, bool write_back) {
  if (v->conv && v->out && write_back)
    tide_float_to_halves(v->out->dt, v->out->nelem, (const float *)v->y, v->out->data, 2);
  free(v->conv);
  v->conv = NULL;
  tide_tensor_release(&v->tmp);
}

typedef struct strips_ctx {
  const tide_axis_view *v;
  int64_t width, nstrips;
  tide_axis_strip_fn strip;
  void *ctx;
} strips_ctx;

/* Units [u0, u1): (outer position, strip) pairs; with one strip (short rows
 * when inner is 1), the outer positions themselves, without a division each. */
static void strips_range(void *arg, int64_t u0, int64_t u1) {
  const strips_ctx *s = arg;
  if (s->nstrips == 1) {
    for (int64_t o = u0; o < u1; o++) s->strip(s->ctx, s->v, o, 0, s->v->inner);
    return;
  }
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / s->nstrips, j0 = (u % s->nstrips) * s->width;
    int64_t n = s->v->inner - j0 < s->width ? s->v->inner - j0 : s->width;
    s->strip(s->ctx, s->v, o, j0, n);
  }
}

tide_status tide_axis_for_strips(const tide_op_def *def, int axis, const tide_tensor *x, tide_tensor *out,
                                 int64_t width, int64_t grain, tide_axis_strip_fn strip, void *ctx) {
  int ax = tide_normalize_axis(def->name, axis, x->ndim);
  if (ax < 0) return tide_last_status();
  int64_t lines = 1; /* outer * inner: the results of an arg-reduction */
  for (int d = 0; d < x->ndim; d++)
    if (d != ax) lines *= x->dims[d];
  if (lines == 0 || (out && out->nelem == 0)) return TIDE_OK;
  tide_axis_view v;
  tide_status st = tide_axis_open(def->name, x, ax, out, &v);
  if (st) return st;
  strips_ctx s = {&v, width, (v.inner + width - 1) / width, strip, ctx};
  int64_t per = v.len * (v.inner < width ? v.inner : width); /* elements in one unit */
  int64_t unit_grain = grain / (per > 0 ? per : 1);
  tide_parallel_for(v.outer * s.nstrips, unit_grain > 0 ? unit_grain : 1, strips_range, &s);
  tide_axis_close(&v, true);
  return TIDE_OK;
}
