/* core/views.c — the view ops (reshape, transpose, slice, broadcast_to,
 * squeeze, expand_dims): shape inference and header arithmetic over a shared
 * storage, and slice_update's inference. Device independent; reshape copies
 * only when strides forbid a view. */
#include "views.h"
#include "unknown_dims.h"

#include <string.h>

/* Copy src's elements into dst (same dtype, src's shape or broadcast to dst's)
 * with the kernel of the table's COPY row: the strided copy is a backend's
 * kernel, which core reaches only through the op table. */
static tide_status copy_elements(tide_tensor *dst, const tide_tensor *src) {
  const tide_op_def *copy = &tide_op_defs[TIDE_OP_COPY];
  return copy->cpu(copy, &tide_default_attrs, 1, &src, 1, &dst);
}

/* Make dst a view of src; if src keeps its data inline (it has no storage to
 * share), dst gets a copy of the viewed elements instead. */
static tide_status view_or_copy(tide_tensor *dst, const tide_tensor *src, int ndim, const int64_t *dims,
                                const int64_t *strides, int64_t offset) {
  if (!(src->flags & TIDE_TENSOR_INLINE)) return tide_tensor_view(dst, src, ndim, dims, strides, offset);
  tide_tensor tmp;
  memset(&tmp, 0, sizeof tmp);
  tide_tensor_set_contiguous_layout(&tmp, src->dt, ndim, dims);
  for (int i = 0; i < ndim; i++) tmp.strides[i] = strides[i];
  tmp.data = (char *)src->data + offset * (int64_t)tide_dtype_size_unchecked(src->dt);
  tmp.dev = src->dev;
  tide_status st = tide_tensor_init(dst, src->dt, ndim, dims);
  if (!st) st = copy_elements(dst, &tmp);
  return st;
}

/* ---- reshape ------------------------------------------------------------------ */

/* reshape of an input with unknown (-1) dims (a traced graph's None), as TF's
 * shape function: a -1 in the target stays unknown; a fully known target is
 * accepted when the product of the input's known dims divides it (the graph's
 * run checks the rest). */
static tide_status reshape_unknown(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, int unknown,
                                   int64_t known, int64_t *dims) {
  char sx[128], sn[128];
  if (unknown >= 0) {
    if (known == 0) /* as with known dims: a -1 beside a 0 is never allowed */
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot reshape a tensor of shape %s to %s", def->name,
                       TIDE_SHAPE_STR(sx, x), tide_fmt_dims(sn, sizeof sn, a->nints, a->ints));
    dims[unknown] = -1;
    return TIDE_OK;
  }
  int64_t known_in = 1;
  for (int i = 0; i < x->ndim; i++)
    if (x->dims[i] >= 0 && __builtin_mul_overflow(known_in, x->dims[i], &known_in)) return TIDE_OK;
  if (known_in > 0 && known % known_in != 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE,
                     "%s: cannot reshape a tensor of shape %s (a multiple of %lld elements) to %s (%lld elements)",
                     def->name, TIDE_SHAPE_STR(sx, x), (long long)known_in,
                     tide_fmt_dims(sn, sizeof sn, a->nints, a->ints), (long long)known);
  return TIDE_OK;
}

static tide_status reshape_dims(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, int64_t *dims) {
  if (a->nints > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: rank %d is out of range (at most %d)", def->name, a->nints, TIDE_MAX_DIMS);
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < a->nints; i++) {
    int64_t d = a->ints[i];
    if (d == -1) {
      if (unknown >= 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: only one dimension can be -1", def->name);
      unknown = i;
    } else if (d < 0) {
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dimension %d is negative (%lld)", def->name, i, (long long)d);
    } else if (__builtin_mul_overflow(known, d, &known)) {
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape has too many elements", def->name);
    }
    dims[i] = d;
  }
  if (x->nelem < 0) return reshape_unknown(def, a, x, unknown, known, dims);
  char sx[128], sn[128];
  if (unknown >= 0) {
    if (known == 0 || x->nelem % known != 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot reshape a tensor of shape %s (%lld elements) to %s", def->name,
                       TIDE_SHAPE_STR(sx, x), (long long)x->nelem, tide_fmt_dims(sn, sizeof sn, a->nints, a->ints));
    dims[unknown] = x->nelem / known;
  } else if (known != x->nelem) {
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot reshape a tensor of shape %s (%lld elements) to %s (%lld elements)",
                     def->name, TIDE_SHAPE_STR(sx, x), (long long)x->nelem,
                     tide_fmt_dims(sn, sizeof sn, a->nints, a->ints), (long long)known);
  }
  return TIDE_OK;
}

tide_status tide_infer_reshape(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_attrs buf;
  bool unknown;
  tide_status st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown);
  if (st) return st;
  if (unknown) { /* a traced shape tensor: every dim unknown until the graph runs */
    tide_shape_input_unknown(out[0], in[0]->dt, a->nints);
    return TIDE_OK;
  }
  int64_t dims[TIDE_MAX_DIMS];
  st = reshape_dims(def, a, in[0], dims);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, a->nints, dims);
  return TIDE_OK;
}

/* Strides for viewing x with new dims without a copy (numpy's rule), or false. */
static bool nocopy_strides(const tide_tensor *x, int nd, const int64_t *nd_dims, int64_t *ns) {
  int64_t od[TIDE_MAX_DIMS], os[TIDE_MAX_DIMS];
  int on = 0;
  for (int i = 0; i < x->ndim; i++)
    if (x->dims[i] != 1) od[on] = x->dims[i], os[on] = x->strides[i], on++;
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nd && oi < on) {
    int64_t np = nd_dims[ni], op = od[oi];
    while (np != op) {
      if (np < op) np *= nd_dims[nj++];
      else op *= od[oj++];
    }
    for (int k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return false;
    ns[nj - 1] = os[oj - 1];
    for (int k = nj - 1; k > ni; k--) ns[k - 1] = ns[k] * nd_dims[k];
    ni = nj++;
    oi = oj++;
  }
  int64_t last = ni >= 1 ? ns[ni - 1] : 1;
  for (int k = ni; k < nd; k++) ns[k] = last;
  return true;
}

tide_status tide_cpu_reshape(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  int nd = o->ndim;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  memcpy(dims, o->dims, sizeof dims);
  if (x->nelem > 0 && nocopy_strides(x, nd, dims, strides)) return view_or_copy(o, x, nd, dims, strides, 0);
  /* Strides forbid a view: copy into a fresh contiguous tensor. */
  tide_tensor flat;
  tide_status st = tide_tensor_init(o, x->dt, nd, dims);
  if (st) return st;
  if (x->nelem == 0) return TIDE_OK;
  /* Read x in row-major order: a borrowed header with x's shape over o's memory. */
  memset(&flat, 0, sizeof flat);
  tide_tensor_set_contiguous_layout(&flat, x->dt, x->ndim, x->dims);
  flat.data = o->data;
  flat.dev = o->dev;
  return copy_elements(&flat, x);
}

/* ---- transpose ------------------------------------------------------------------ */

static tide_status transpose_perm(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, int *perm) {
  int n = x->ndim;
  if (a->nints == 0) {
    for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
    return TIDE_OK;
  }
  char sp[128];
  if (a->nints != n)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: perm %s has %d entries but the tensor has rank %d", def->name,
                     tide_fmt_dims(sp, sizeof sp, a->nints, a->ints), a->nints, n);
  bool seen[TIDE_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) {
    int64_t p = a->ints[i] < 0 ? a->ints[i] + n : a->ints[i];
    if (p < 0 || p >= n || seen[p])
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: perm %s is not a permutation of 0..%d", def->name,
                       tide_fmt_dims(sp, sizeof sp, a->nints, a->ints), n - 1);
    seen[p] = true;
    perm[i] = (int)p;
  }
  return TIDE_OK;
}

tide_status tide_infer_transpose(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int perm[TIDE_MAX_DIMS];
  tide_status st = transpose_perm(def, a, in[0], perm);
  if (st) return st;
  int64_t dims[TIDE_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = in[0]->dims[perm[i]];
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, in[0]->ndim, dims);
  return TIDE_OK;
}

tide_status tide_cpu_transpose(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int perm[TIDE_MAX_DIMS];
  tide_status st = transpose_perm(def, a, in[0], perm);
  if (st) return st;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  for (int i = 0; i < in[0]->ndim; i++) dims[i] = in[0]->dims[perm[i]], strides[i] = in[0]->strides[perm[i]];
  return view_or_copy(out[0], in[0], in[0]->ndim, dims, strides, 0);
}

/* ---- slice (Python semantics per dim; see ops.def for the attribute layout) ---- */

/* The length of start:stop:step over a dim of unknown size: 0 when both ends
 * are given, on the same side (both from the start or both from the end) and
 * in the wrong order for the step, whatever the size; else unknown (-1). An
 * index into it (shrink) is checked when the graph runs. */
static int64_t unknown_slice_len(int64_t start, int64_t stop, int64_t step, bool no_start, bool no_stop) {
  if (no_start || no_stop || (start < 0) != (stop < 0)) return -1;
  bool empty = step > 0 ? stop <= start : stop >= start;
  return empty ? 0 : -1;
}

/* Contract in views.h: slice and slice_update share it. */
tide_status tide_plan_slice(const char *op, const tide_attrs *a, const tide_tensor *x, tide_slice_plan *p) {
  int n = x->ndim;
  if (a->nints != 3 * n)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects (start, stop, step) for each of %d dims, got %d numbers", op,
                     n, a->nints);
  p->ndim = 0;
  p->offset = 0;
  for (int i = 0; i < n; i++) {
    int64_t d = x->dims[i], start = a->ints[3 * i], stop = a->ints[3 * i + 1], step = a->ints[3 * i + 2];
    bool shrink = (a->n >> i) & 1, no_start = (a->m >> i) & 1, no_stop = (a->m >> (i + 8)) & 1;
    if (TIDE_UNLIKELY(d < 0)) { /* unknown until the graph runs (only shape inference sees this) */
      if (!shrink && step == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: step cannot be zero (dimension %d)", op, i);
      if (!shrink) {
        p->dims[p->ndim] = unknown_slice_len(start, stop, step, no_start, no_stop);
        p->strides[p->ndim++] = x->strides[i];
      }
      continue;
    }
    if (shrink) {
      int64_t idx = start < 0 ? start + d : start;
      if (idx < 0 || idx >= d)
        return TIDE_FAIL(TIDE_ERR_INDEX, "%s: index %lld is out of range for dimension %d of size %lld", op,
                         (long long)start, i, (long long)d);
      p->offset += idx * x->strides[i];
      continue;
    }
    if (step == 0) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: step cannot be zero (dimension %d)", op, i);
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    if (no_start) start = step > 0 ? 0 : d - 1;
    else {
      if (start < 0) start += d;
      start = start < lo ? lo : start > hi ? hi : start;
    }
    if (no_stop) stop = step > 0 ? d : -1;
    else {
      if (stop < 0) stop += d;
      stop = stop < lo ? lo : stop > hi ? hi : stop;
    }
    /* In unsigned arithmetic: a step near +-2^63 must not overflow (x[0:5:2**62] is [x[0]]). */
    uint64_t ustep = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
    int64_t span = step > 0 ? stop - start : start - stop, len = 0;
    if (span > 0) len = (int64_t)(((uint64_t)span - 1) / ustep + 1);
    p->dims[p->ndim] = len;
    /* With two or more elements |step| < d, so the product stays inside the storage. */
    p->strides[p->ndim] = len > 1 ? step * x->strides[i] : x->strides[i];
    p->ndim++;
    if (len > 0) p->offset += start * x->strides[i];
  }
  return TIDE_OK;
}

tide_status tide_infer_slice(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_slice_plan p;
  tide_status st = tide_plan_slice(def->name, a, in[0], &p);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, p.ndim, p.dims);
  return TIDE_OK;
}

tide_status tide_cpu_slice(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_slice_plan p;
  tide_status st = tide_plan_slice(def->name, a, in[0], &p);
  if (st) return st;
  return view_or_copy(out[0], in[0], p.ndim, p.dims, p.strides, p.offset);
}

/* ---- slice_update: x's shape; its kernel is in cpu/slice_update.c ---------------- */

/* update must have exactly the slice's shape: TF's tensor_strided_slice_update
 * does not broadcast it either. */
tide_status tide_infer_slice_update(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *u = in[1];
  tide_status st = tide_check_dtype(def, x, "x");
  if (st) return st;
  if (u->dt != x->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: update is %s but x is %s (convert with :cast(\"%s\"))", def->name,
                     tide_dtype_name(u->dt), tide_dtype_name(x->dt), tide_dtype_name(x->dt));
  tide_slice_plan p;
  st = tide_plan_slice(def->name, a, x, &p);
  if (st) return st;
  bool same = u->ndim == p.ndim;
  for (int i = 0; same && i < p.ndim; i++) same = tide_dims_agree(u->dims[i], p.dims[i]);
  if (!same) {
    char su[128], sp[128], sx[128];
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: update has shape %s but the slice has shape %s (x has shape %s)", def->name,
                     TIDE_SHAPE_STR(su, u), tide_fmt_dims(sp, sizeof sp, p.ndim, p.dims), TIDE_SHAPE_STR(sx, x));
  }
  tide_tensor_set_contiguous_layout(out[0], x->dt, x->ndim, x->dims);
  return TIDE_OK;
}

/* ---- broadcast_to ----------------------------------------------------------------- */

static tide_status broadcast_strides(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                                     int64_t *strides) {
  char sx[128], st[128];
  if (a->nints > TIDE_MAX_DIMS || a->nints < x->ndim)
    goto bad;
  for (int i = 0; i < a->nints; i++) {
    int xi = i - (a->nints - x->ndim);
    if (a->ints[i] < 0) goto bad;
    if (xi < 0) strides[i] = 0;
    else if (x->dims[xi] == a->ints[i]) strides[i] = x->strides[xi];
    else if (x->dims[xi] == 1 || x->dims[xi] < 0) strides[i] = 0; /* unknown: 1 or the target, checked at run */
    else goto bad;
  }
  return TIDE_OK;
bad:
  return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot broadcast shape %s to %s", def->name, TIDE_SHAPE_STR(sx, x),
                   tide_fmt_dims(st, sizeof st, a->nints < TIDE_MAX_INTS ? a->nints : 0, a->ints));
}

tide_status tide_infer_broadcast_to(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_attrs buf;
  bool unknown;
  tide_status st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown);
  if (st) return st;
  char sx[128];
  if (unknown && a->nints < in[0]->ndim)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot broadcast shape %s to a shape of rank %d", def->name,
                     TIDE_SHAPE_STR(sx, in[0]), a->nints);
  if (unknown) { /* a traced shape tensor: every dim unknown until the graph runs */
    tide_shape_input_unknown(out[0], in[0]->dt, a->nints);
    return TIDE_OK;
  }
  int64_t strides[TIDE_MAX_DIMS];
  st = broadcast_strides(def, a, in[0], strides);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, a->nints, a->ints);
  return TIDE_OK;
}

tide_status tide_cpu_broadcast_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_attrs buf;
  bool unknown;
  tide_status st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown);
  if (st) return st;
  int64_t strides[TIDE_MAX_DIMS];
  st = broadcast_strides(def, a, in[0], strides);
  if (st) return st;
  return view_or_copy(out[0], in[0], a->nints, a->ints, strides, 0);
}

/* ---- squeeze and expand_dims ------------------------------------------------------ */

static tide_status squeeze_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, int *nd,
                                int64_t *dims, int64_t *strides) {
  bool drop[TIDE_MAX_DIMS] = {0};
  char sx[128];
  if (a->nints == 0) {
    for (int i = 0; i < x->ndim; i++) {
      /* TF's result then has an unknown rank, which a tide shape cannot say. */
      if (x->dims[i] < 0)
        return TIDE_FAIL(TIDE_ERR_SHAPE,
                         "%s: cannot tell which dimensions to squeeze: dimension %d of shape %s is unknown until "
                         "the graph runs; name the axes to squeeze (axis = ...)", def->name, i, TIDE_SHAPE_STR(sx, x));
      drop[i] = x->dims[i] == 1;
    }
  } else {
    for (int k = 0; k < a->nints; k++) {
      int ax = tide_normalize_axis(def->name, a->ints[k], x->ndim);
      if (ax < 0) return tide_last_status();
      if (x->dims[ax] != 1 && x->dims[ax] >= 0) { /* an unknown dim is checked when the graph runs */
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: cannot squeeze axis %lld of size %lld (shape %s)", def->name,
                         (long long)a->ints[k], (long long)x->dims[ax], TIDE_SHAPE_STR(sx, x));
      }
      drop[ax] = true;
    }
  }
  *nd = 0;
  for (int i = 0; i < x->ndim; i++)
    if (!drop[i]) dims[*nd] = x->dims[i], strides[*nd] = x->strides[i], (*nd)++;
  return TIDE_OK;
}

tide_status tide_infer_squeeze(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int nd;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  tide_status st = squeeze_plan(def, a, in[0], &nd, dims, strides);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, nd, dims);
  return TIDE_OK;
}

tide_status tide_cpu_squeeze(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int nd;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  tide_status st = squeeze_plan(def, a, in[0], &nd, dims, strides);
  if (st) return st;
  return view_or_copy(out[0], in[0], nd, dims, strides, 0);
}

static tide_status expand_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, int64_t *dims,
                               int64_t *strides) {
  int n = x->ndim;
  if (n >= TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have more than %d dims", def->name, TIDE_MAX_DIMS);
  int ax = tide_normalize_axis(def->name, a->axis, n + 1);
  if (ax < 0) return tide_last_status();
  for (int i = 0, j = 0; i <= n; i++) {
    if (i == ax) {
      dims[i] = 1;
      strides[i] = ax < n ? x->dims[ax] * x->strides[ax] : 1;
    } else {
      dims[i] = x->dims[j], strides[i] = x->strides[j];
      j++;
    }
  }
  return TIDE_OK;
}

tide_status tide_infer_expand_dims(const tide_op_def *def, const tide_attrs *a, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  tide_status st = expand_plan(def, a, in[0], dims, strides);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out[0], in[0]->dt, in[0]->ndim + 1, dims);
  return TIDE_OK;
}

tide_status tide_cpu_expand_dims(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  tide_status st = expand_plan(def, a, in[0], dims, strides);
  if (st) return st;
  return view_or_copy(out[0], in[0], in[0]->ndim + 1, dims, strides, 0);
}
