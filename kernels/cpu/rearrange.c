/* cpu/rearrange.c — tile, pad and reverse: each copies its input through a
 * rearranged strided view (repeated, framed, or walked backwards). */
#include "fill_value.h"
#include "../core/registry.h"

/* ---- tile --------------------------------------------------------------------------- */

/* out[k0*d0 + j0, k1*d1 + j1, ...] = x[j0, j1, ...]: iterate the interleaved
 * space [m0, d0, m1, d1, ...] with stride 0 on the multiples for x, so the
 * engine merges and splits it like any elementwise copy. */
tide_status tide_cpu_tile(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (o->nelem == 0) return TIDE_OK;
  int n = x->ndim;
  int64_t dims[TIDE_ITER_MAX_DIMS], ostr[TIDE_ITER_MAX_DIMS], xstr[TIDE_ITER_MAX_DIMS];
  for (int d = 0; d < n; d++) {
    dims[2 * d] = a->ints[d];
    dims[2 * d + 1] = x->dims[d];
    ostr[2 * d] = x->dims[d] * o->strides[d];
    ostr[2 * d + 1] = o->strides[d];
    xstr[2 * d] = 0;
    xstr[2 * d + 1] = x->strides[d];
  }
  tide_iter it;
  tide_iter_init_raw(&it, 2 * n, dims);
  tide_iter_add_raw(&it, o->data, o->dt, ostr);
  tide_iter_add_raw(&it, x->data, x->dt, xstr);
  it.convert_halves = false; /* raw element copies */
  return tide_iter_run(&it, tide_copy_loop(tide_dtype_size_unchecked(o->dt)), NULL);
}

/* ---- pad ---------------------------------------------------------------------------- */

/* Fill the output with scalars[0], then copy x into the interior view. */
tide_status tide_cpu_pad(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                         int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (o->nelem == 0) return TIDE_OK;
  if (o->nelem != x->nelem) {
    tide_status st = tide_fill_value(def->name, o, a->scalars[0]);
    if (st) return st;
  }
  if (x->nelem == 0) return TIDE_OK;
  tide_tensor inner; /* borrowed header over o's memory: x's shape at the pads' offset */
  memset(&inner, 0, sizeof inner);
  tide_tensor_set_contiguous_layout(&inner, o->dt, o->ndim, x->dims);
  int64_t off = 0;
  for (int d = 0; d < o->ndim; d++) {
    inner.strides[d] = o->strides[d];
    off += a->ints[2 * d] * o->strides[d];
  }
  inner.data = (char *)o->data + off * (int64_t)tide_dtype_size_unchecked(o->dt);
  inner.dev = o->dev;
  return tide_copy_strided(def->name, &inner, x);
}

/* ---- reverse ------------------------------------------------------------------------- */

/* Copy a view of x that walks each listed axis backwards (negative stride). */
tide_status tide_cpu_reverse(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  bool flip[TIDE_MAX_DIMS];
  tide_status st = tide_axis_mask(def->name, a->nints, a->ints, x->ndim, flip); /* checked by tide_infer_reverse */
  if (st) return st;
  tide_tensor view; /* borrowed header over x's memory */
  memset(&view, 0, sizeof view);
  tide_tensor_set_contiguous_layout(&view, x->dt, x->ndim, x->dims);
  int64_t off = 0;
  for (int d = 0; d < x->ndim; d++) {
    view.strides[d] = flip[d] ? -x->strides[d] : x->strides[d];
    if (flip[d] && x->dims[d] > 0) off += (x->dims[d] - 1) * x->strides[d];
  }
  if (x->nelem == 0) return TIDE_OK;
  view.data = (char *)x->data + off * (int64_t)tide_dtype_size_unchecked(x->dt);
  view.dev = x->dev;
  return tide_copy_strided(def->name, out[0], &view);
}
