/* core/views.c — the view ops (reshape, transpose, slice, broadcast_to,
 * squeeze, expand_dims): shape inference and header arithmetic over a shared
 * storage, and slice_update's inference. Device independent; reshape copies
 * only when strides forbid a view. */
#include "views.h"
#include "backend.h"
#include "unknown_dims.h"
#include "infer_rank.h"

#include <string.h>

/* Copy src's elements into dst (same dtype, src's shape or broadcast to dst's)
 * with the COPY kernel of src's device's backend: the strided copy is a
 * backend's kernel, which core reaches only through the backend tables (a
 * GPU tensor exists only once its backend loaded, with a COPY kernel). */
static tide_status copy_elements(tide_tensor *dst, const tide_tensor *src) {
  const tide_backend *be = TIDE_LIKELY(src->dev == TIDE_CPU) ? &tide_cpu_backend : tide_backend_for(src->dev);
  return be->kernels[TIDE_OP_COPY](&tide_op_defs[TIDE_OP_COPY], &tide_default_attrs, 1, &src, 1, &dst);
}

/* Contract in views.h. */
void tide_view_borrow(tide_tensor *dst, const tide_tensor *src, const tide_view_plan *p) {
  memset(dst, 0, sizeof *dst);
  tide_tensor_set_contiguous_layout(dst, src->dt, p->ndim, p->dims);
  for (int i = 0; i < p->ndim; i++) dst->strides[i] = p->strides[i];
  dst->data = (char *)src->data + p->offset * (int64_t)tide_dtype_size_unchecked(src->dt);
  dst->dev = src->dev;
}

/* Make dst the view p of src; if src keeps its data inline (it has no storage
 * to share), dst gets a copy of the viewed elements instead. */
static tide_status view_or_copy(tide_tensor *dst, const tide_tensor *src, const tide_view_plan *p) {
  if (!(src->flags & TIDE_TENSOR_INLINE)) return tide_tensor_view(dst, src, p->ndim, p->dims, p->strides, p->offset);
  tide_tensor borrowed;
  tide_view_borrow(&borrowed, src, p);
  tide_status st = tide_tensor_init(dst, src->dt, p->ndim, p->dims);
  if (!st) st = copy_elements(dst, &borrowed);
  return st;
}

/* How a view op (all but reshape) works: it plans its result's view of the
 * input from the input and its attributes; inference keeps the plan's dims,
 * the kernel takes the view. */
typedef tide_status (*view_plan_fn)(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                                    tide_view_plan *p);

static tide_status infer_view(view_plan_fn plan, const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                              tide_tensor *out) {
  tide_view_plan p;
  tide_status st = plan(def, a, x, &p);
  if (st) return st;
  tide_tensor_set_contiguous_layout(out, x->dt, p.ndim, p.dims);
  return TIDE_OK;
}

static tide_status run_view(view_plan_fn plan, const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                            tide_tensor *out) {
  tide_view_plan p;
  tide_status st = plan(def, a, x, &p);
  if (st) return st;
  return view_or_copy(out, x, &p);
}

/* The target shape of an op with a shape input (reshape, broadcast_to): *use
 * gets the attrs that hold it. When it is a traced value not known until the
 * graph runs, *unknown is set and out is given that many unknown dims. */
static tide_status shape_target(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                tide_attrs *buf, const tide_attrs **use, tide_tensor *out, bool *unknown) {
  tide_status st = tide_shape_input(def, a, n_in, in, buf, use, unknown);
  if (!st && *unknown) tide_shape_input_unknown(out, in[0]->dt, *use);
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
  tide_status st = shape_target(def, a, n_in, in, &buf, &a, out[0], &unknown);
  if (st || unknown) return st;
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
  tide_view_plan p = {.ndim = o->ndim, .offset = 0};
  memcpy(p.dims, o->dims, sizeof p.dims);
  if (x->nelem > 0 && nocopy_strides(x, p.ndim, p.dims, p.strides)) return view_or_copy(o, x, &p);
  /* Strides forbid a view: copy into a fresh contiguous tensor. */
  tide_tensor flat;
  tide_status st;
  if (TIDE_LIKELY(x->dev == TIDE_CPU)) {
    st = tide_tensor_init(o, x->dt, p.ndim, p.dims);
  } else { /* the same layout, on x's GPU */
    tide_tensor_set_contiguous_layout(o, x->dt, p.ndim, p.dims);
    st = tide_device_alloc_data(o, x->dev);
  }
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

/* attrs.ints is the perm: the input dim of each result dim (none: reversed). */
static tide_status transpose_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                                  tide_view_plan *p) {
  int n = x->ndim, perm[TIDE_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
  char sp[128];
  if (a->nints != 0 && a->nints != n)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: perm %s has %d entries but the tensor has rank %d", def->name,
                     tide_fmt_dims(sp, sizeof sp, a->nints, a->ints), a->nints, n);
  bool seen[TIDE_MAX_DIMS] = {0};
  for (int i = 0; i < a->nints; i++) {
    int64_t q = a->ints[i] < 0 ? a->ints[i] + n : a->ints[i];
    if (q < 0 || q >= n || seen[q])
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: perm %s is not a permutation of 0..%d", def->name,
                       tide_fmt_dims(sp, sizeof sp, a->nints, a->ints), n - 1);
    seen[q] = true;
    perm[i] = (int)q;
  }
  p->ndim = n;
  p->offset = 0;
  for (int i = 0; i < n; i++) p->dims[i] = x->dims[perm[i]], p->strides[i] = x->strides[perm[i]];
  return TIDE_OK;
}

tide_status tide_infer_transpose(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return infer_view(transpose_plan, def, a, in[0], out[0]);
}

tide_status tide_cpu_transpose(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return run_view(transpose_plan, def, a, in[0], out[0]);
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
tide_status tide_plan_slice(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, tide_view_plan *p) {
  const char *op = def->name;
  int n = x->ndim;
  /* Triples for the leading dims; the dims after them are taken whole, as in
   * TF's strided_slice (x[0] of a tensor whose rank is known only at run time). */
  if (a->nints % 3 != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects (start, stop, step) for each dim, got %d numbers", op, a->nints);
  if (a->nints > 3 * n) { /* a spec for a tensor of unknown rank, which turned out smaller */
    char sx[128];
    return TIDE_FAIL(TIDE_ERR_INDEX, "%s: the spec names %d dim(s) but the tensor has rank %d (shape %s)", op,
                     a->nints / 3, n, TIDE_SHAPE_STR(sx, x));
  }
  int given = a->nints / 3;
  p->ndim = 0;
  p->offset = 0;
  for (int i = 0; i < n; i++) {
    if (i >= given) { /* whole */
      p->dims[p->ndim] = x->dims[i];
      p->strides[p->ndim++] = x->strides[i];
      continue;
    }
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
  return infer_view(tide_plan_slice, def, a, in[0], out[0]);
}

tide_status tide_cpu_slice(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return run_view(tide_plan_slice, def, a, in[0], out[0]);
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
  tide_view_plan p;
  st = tide_plan_slice(def, a, x, &p);
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

/* The target shape is attrs.ints (the shape input already read into them). */
static tide_status broadcast_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                                  tide_view_plan *p) {
  char sx[128], st[128];
  if (a->nints > TIDE_MAX_DIMS || a->nints < x->ndim)
    goto bad;
  p->ndim = a->nints;
  p->offset = 0;
  for (int i = 0; i < a->nints; i++) {
    int xi = i - (a->nints - x->ndim);
    if (a->ints[i] < 0) goto bad;
    p->dims[i] = a->ints[i];
    if (xi < 0) p->strides[i] = 0;
    else if (x->dims[xi] == a->ints[i]) p->strides[i] = x->strides[xi];
    else if (x->dims[xi] == 1 || x->dims[xi] < 0) p->strides[i] = 0; /* unknown: 1 or the target, checked at run */
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
  tide_status st = shape_target(def, a, n_in, in, &buf, &a, out[0], &unknown);
  if (st) return st;
  char sx[128];
  if (unknown && a->nints >= 0 && a->nints < in[0]->ndim) /* nints -1: a shape of unknown length */
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot broadcast shape %s to a shape of rank %d", def->name,
                     TIDE_SHAPE_STR(sx, in[0]), a->nints);
  return unknown ? TIDE_OK : infer_view(broadcast_plan, def, a, in[0], out[0]);
}

tide_status tide_cpu_broadcast_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_attrs buf;
  bool unknown;
  tide_status st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown); /* known when the op runs */
  if (st) return st;
  return run_view(broadcast_plan, def, a, in[0], out[0]);
}

/* ---- squeeze and expand_dims ------------------------------------------------------ */

static tide_status squeeze_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                                tide_view_plan *p) {
  bool drop[TIDE_MAX_DIMS] = {0};
  char sx[128];
  if (a->nints == 0) {
    for (int i = 0; i < x->ndim; i++) drop[i] = x->dims[i] == 1; /* known dims: tide_infer_squeeze sees to it */
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
  p->ndim = 0;
  p->offset = 0;
  for (int i = 0; i < x->ndim; i++)
    if (!drop[i]) p->dims[p->ndim] = x->dims[i], p->strides[p->ndim] = x->strides[i], p->ndim++;
  return TIDE_OK;
}

tide_status tide_infer_squeeze(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  /* Every size-1 dim, and one is unknown until the graph runs: which dims go
   * is known only then, so the result's rank is unknown (TF's rule). */
  if (a->nints == 0 && tide_dims_any_unknown(in[0]->ndim, in[0]->dims)) {
    tide_tensor_set_contiguous_layout(out[0], in[0]->dt, TIDE_UNKNOWN_RANK, NULL);
    return TIDE_OK;
  }
  return infer_view(squeeze_plan, def, a, in[0], out[0]);
}

tide_status tide_cpu_squeeze(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return run_view(squeeze_plan, def, a, in[0], out[0]);
}

static tide_status expand_plan(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x,
                               tide_view_plan *p) {
  int n = x->ndim;
  if (n >= TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result would have more than %d dims", def->name, TIDE_MAX_DIMS);
  int ax = tide_normalize_axis(def->name, a->axis, n + 1);
  if (ax < 0) return tide_last_status();
  p->ndim = n + 1;
  p->offset = 0;
  for (int i = 0, j = 0; i <= n; i++) {
    if (i == ax) {
      p->dims[i] = 1;
      p->strides[i] = ax < n ? x->dims[ax] * x->strides[ax] : 1;
    } else {
      p->dims[i] = x->dims[j], p->strides[i] = x->strides[j];
      j++;
    }
  }
  return TIDE_OK;
}

tide_status tide_infer_expand_dims(const tide_op_def *def, const tide_attrs *a, int n_in,
                                   const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return infer_view(expand_plan, def, a, in[0], out[0]);
}

tide_status tide_cpu_expand_dims(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return run_view(expand_plan, def, a, in[0], out[0]);
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* reshape's x: an unknown number of elements; the shape comes from the attrs or the shape input. */
static int reshape_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 1;
}
const tide_rank_rule tide_infer_reshape_rank = {reshape_rank, tide_rank_keeps, NULL};
/* x: a scalar fits any target shape. */
const tide_rank_rule tide_infer_broadcast_to_rank = {tide_rank_scalar, tide_rank_keeps, NULL};

/* One perm entry per dim; no perm (reverse the dims) gives nothing. */
static int transpose_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return tide_rank_capped(a->nints);
}
static bool transpose_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return a->nints > 0;
}
const tide_rank_rule tide_infer_transpose_rank = {transpose_rank, transpose_keeps, NULL};

/* The leading dims the spec names (the rest pass through, of unknown count). */
static int slice_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return tide_rank_capped(a->nints / 3);
}
const tide_rank_rule tide_infer_slice_rank = {slice_rank, NULL, NULL};

/* Several axes, checked when the graph runs: the generic rule (x's dtype, an unknown rank). */
const tide_rank_rule tide_infer_squeeze_rank = {NULL, NULL, NULL};

/* One axis of a result one rank higher. */
static int expand_dims_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return TIDE_MAX_DIMS - 1;
}
const tide_rank_rule tide_infer_expand_dims_rank = {expand_dims_rank, NULL, NULL};

/* (x, update) -> x's shape: the dtypes checked, the slice when the graph runs. */
static tide_status slice_update_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                             const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "x");
  if (st) return st;
  if (in[1]->dt != x->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: update is %s but x is %s (convert with :cast(\"%s\"))", def->name,
                     tide_dtype_name(in[1]->dt), tide_dtype_name(x->dt), tide_dtype_name(x->dt));
  tide_rank_shape_of_first(x, out[0]);
  return TIDE_OK;
}
const tide_rank_rule tide_infer_slice_update_rank = {NULL, NULL, slice_update_unknown_rank};
