/* cpu/resize.c — tf.image.resize's bilinear and nearest kernels (TF2's
 * half-pixel centers) and their gradients, on [N, H, W, C] (or [H, W, C]). */
#include "iter.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An image's layout, a rank-3 one read as a batch of one. */
typedef struct dims4 { int64_t n, h, w, c; } dims4;

static dims4 dims_of(const tide_tensor *t) {
  const int64_t *d = t->dims;
  return t->ndim == 4 ? (dims4){d[0], d[1], d[2], d[3]} : (dims4){1, d[0], d[1], d[2]};
}

/* One output coordinate's two source rows (or columns) and the weight of the
 * second, as TF's CachedInterpolation: in = (out + 0.5) * scale - 0.5, in
 * float (double for float64 images) as TF computes it. */
typedef struct lerp_f { int64_t lo, hi; float t; } lerp_f;
typedef struct lerp_d { int64_t lo, hi; double t; } lerp_d;

static void lerps_f(int64_t out, int64_t in, lerp_f *L) {
  float scale = (float)in / (float)out;
  for (int64_t i = 0; i < out; i++) {
    float v = ((float)i + 0.5f) * scale - 0.5f, fl = floorf(v);
    L[i].lo = fl > 0 ? (int64_t)fl : 0;
    L[i].hi = (int64_t)ceilf(v) < in - 1 ? (int64_t)ceilf(v) : in - 1;
    L[i].t = v - fl;
  }
}

static void lerps_d(int64_t out, int64_t in, lerp_d *L) {
  double scale = (double)in / (double)out;
  for (int64_t i = 0; i < out; i++) {
    double v = ((double)i + 0.5) * scale - 0.5, fl = floor(v);
    L[i].lo = fl > 0 ? (int64_t)fl : 0;
    L[i].hi = (int64_t)ceil(v) < in - 1 ? (int64_t)ceil(v) : in - 1;
    L[i].t = v - fl;
  }
}

/* Nearest's source index: floor((out + 0.5) * scale) clamped to [0, in),
 * in float (TF's HalfPixelScalerForNN). */
static void nearest_index(int64_t out, int64_t in, int64_t *idx) {
  float scale = (float)in / (float)out;
  for (int64_t i = 0; i < out; i++) {
    int64_t v = (int64_t)floorf(((float)i + 0.5f) * scale);
    idx[i] = v < 0 ? 0 : v > in - 1 ? in - 1 : v;
  }
}

/* TF's "input image must be of non-zero size": an empty image has nothing to
 * read from (a batch of none is fine). */
static tide_status check_source(const tide_op_def *def, const tide_tensor *x, const tide_tensor *y) {
  dims4 di = dims_of(x);
  char s[128];
  if (y->nelem > 0 && (di.h == 0 || di.w == 0))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: images %s have no pixels to resize from", def->name, TIDE_SHAPE_STR(s, x));
  return TIDE_OK;
}

/* ---- bilinear forward ----------------------------------------------------- */

typedef struct bilinear_ctx {
  const void *x;  /* contiguous input */
  void *y;        /* contiguous output */
  dims4 in, out;
  const void *ly, *lx; /* lerp_f or lerp_d per output row and column */
} bilinear_ctx;

/* One typed loop over output rows [begin, end) of all images (row r is image
 * r / out.h): TF's compute_lerp, top then bottom then between them. */
#define BILINEAR_LOOP(NAME, T, R, L)                                                           \
  static void NAME(void *arg, int64_t begin, int64_t end) {                                  \
    const bilinear_ctx *g = arg;                                                              \
    const T *x = g->x;                                                                        \
    R *y = g->y;                                                                              \
    const L *ly = g->ly, *lx = g->lx;                                                         \
    int64_t C = g->in.c, W = g->out.w, rs = g->in.w * C;                                      \
    for (int64_t r = begin; r < end; r++) {                                                   \
      int64_t b = r / g->out.h, oy = r % g->out.h;                                            \
      const T *top = x + (b * g->in.h + ly[oy].lo) * rs, *bot = x + (b * g->in.h + ly[oy].hi) * rs; \
      R ty = ly[oy].t, *dst = y + r * W * C;                                                  \
      for (int64_t ox = 0; ox < W; ox++) {                                                    \
        int64_t l = lx[ox].lo * C, h = lx[ox].hi * C;                                         \
        R tx = lx[ox].t;                                                                      \
        for (int64_t c = 0; c < C; c++) {                                                     \
          R tl = (R)top[l + c], tr = (R)top[h + c], bl = (R)bot[l + c], br = (R)bot[h + c];   \
          R t = tl + (tr - tl) * tx, bt = bl + (br - bl) * tx;                                \
          dst[ox * C + c] = t + (bt - t) * ty;                                                \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
BILINEAR_LOOP(bilinear_u8, uint8_t, float, lerp_f)
BILINEAR_LOOP(bilinear_i8, int8_t, float, lerp_f)
BILINEAR_LOOP(bilinear_i32, int32_t, float, lerp_f)
BILINEAR_LOOP(bilinear_i64, int64_t, float, lerp_f)
BILINEAR_LOOP(bilinear_f32, float, float, lerp_f)
BILINEAR_LOOP(bilinear_f64, double, double, lerp_d)

/* x as a contiguous tensor whose dtype the typed loops read: strided
 * tensors are copied into the blank tmp[0], halves converted to float32 in
 * the blank tmp[1]. The caller releases both (headers are never copied by
 * value: a small one keeps its data inside itself). */
static tide_status readable(const char *op, const tide_tensor *x, tide_tensor tmp[2], const tide_tensor **use) {
  tide_status st = tide_contiguous_or_copy(op, x, &tmp[0], use);
  if (st || !tide_is_half(x->dt)) return st;
  const tide_tensor *c = *use;
  st = tide_tensor_init(&tmp[1], TIDE_FLOAT32, c->ndim, c->dims);
  if (!st) tide_halves_to_float(c->dt, c->nelem, c->data, (int64_t)tide_dtype_size_unchecked(c->dt), tmp[1].data);
  *use = &tmp[1];
  return st;
}

tide_status tide_cpu_resize_bilinear(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp[2] = {{0}, {0}}, res = {0};
  const tide_tensor *x;
  tide_status st = check_source(def, in[0], out[0]);
  if (st) return st;
  st = readable(def->name, in[0], tmp, &x);
  if (st) goto done;
  bilinear_ctx g = {x->data, out[0]->data, dims_of(x), dims_of(out[0]), NULL, NULL};
  bool wide = x->dt == TIDE_FLOAT64;
  tide_tensor *y = out[0];
  if (wide != (y->dt == TIDE_FLOAT64) || (!wide && y->dt != TIDE_FLOAT32)) { /* compute, then cast */
    if ((st = tide_tensor_init(&res, wide ? TIDE_FLOAT64 : TIDE_FLOAT32, y->ndim, y->dims))) goto done;
    g.y = res.data;
  }
  size_t ls = wide ? sizeof(lerp_d) : sizeof(lerp_f);
  void *L = malloc(ls * (size_t)(g.out.h + g.out.w));
  if (!L) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  g.ly = L;
  g.lx = (char *)L + ls * (size_t)g.out.h;
  if (wide) {
    lerps_d(g.out.h, g.in.h, (lerp_d *)L);
    lerps_d(g.out.w, g.in.w, (lerp_d *)g.lx);
  } else {
    lerps_f(g.out.h, g.in.h, (lerp_f *)L);
    lerps_f(g.out.w, g.in.w, (lerp_f *)g.lx);
  }
  tide_range_fn fn;
  switch (x->dt) {
  case TIDE_UINT8: fn = bilinear_u8; break;
  case TIDE_INT8: fn = bilinear_i8; break;
  case TIDE_INT32: fn = bilinear_i32; break;
  case TIDE_INT64: fn = bilinear_i64; break;
  case TIDE_FLOAT64: fn = bilinear_f64; break;
  default: fn = bilinear_f32; break;
  }
  int64_t row_work = g.out.w * g.out.c > 0 ? g.out.w * g.out.c : 1;
  if (g.out.n * g.out.h * row_work > 0) tide_parallel_for(g.out.n * g.out.h, TIDE_GRAIN_COSTLY / row_work + 1, fn, &g);
  free(L);
  if (g.y != y->data) {
    if (tide_is_half(y->dt))
      tide_float_to_halves(y->dt, y->nelem, res.data, y->data, (int64_t)tide_dtype_size_unchecked(y->dt));
    else if (y->dt == TIDE_FLOAT64)
      for (int64_t i = 0; i < y->nelem; i++) ((double *)y->data)[i] = ((float *)res.data)[i];
    else
      for (int64_t i = 0; i < y->nelem; i++) ((float *)y->data)[i] = (float)((double *)res.data)[i];
  }
done:
  tide_tensor_release(&res);
  tide_tensor_release(&tmp[0]);
  tide_tensor_release(&tmp[1]);
  return st;
}

/* ---- nearest forward ------------------------------------------------------ */

tide_status tide_cpu_resize_nearest(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp = {0};
  const tide_tensor *x;
  tide_status st = check_source(def, in[0], out[0]);
  if (st) return st;
  st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) goto done;
  dims4 di = dims_of(x), dout = dims_of(out[0]);
  int64_t *idx = malloc(sizeof *idx * (size_t)(dout.h + dout.w));
  if (!idx) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  nearest_index(dout.h, di.h, idx);
  nearest_index(dout.w, di.w, idx + dout.h);
  size_t px = (size_t)di.c * tide_dtype_size_unchecked(x->dt);
  const char *src = x->data;
  char *dst = out[0]->data;
  for (int64_t b = 0; b < dout.n; b++)
    for (int64_t oy = 0; oy < dout.h; oy++) {
      const char *row = src + ((b * di.h + idx[oy]) * di.w) * (int64_t)px;
      for (int64_t ox = 0; ox < dout.w; ox++, dst += px) memcpy(dst, row + idx[dout.h + ox] * (int64_t)px, px);
    }
  free(idx);
done:
  tide_tensor_release(&tmp);
  return st;
}

/* ---- gradients: scatter dy back to where each output read from ------------ */

/* Accumulate the gradient in float (double when dy or the result is
 * float64) into acc[x's elements], zeroed; `bilinear` picks the op. */
#define GRAD_LOOP(NAME, R, L, LERPS)                                                             \
  static void NAME(const R *dy, R *acc, dims4 di, dims4 dd, bool bilinear, void *scratch) {     \
    int64_t C = di.c;                                                                           \
    if (bilinear) {                                                                             \
      L *ly = scratch, *lx = ly + dd.h;                                                         \
      LERPS(dd.h, di.h, ly);                                                                    \
      LERPS(dd.w, di.w, lx);                                                                    \
      for (int64_t b = 0; b < dd.n; b++)                                                        \
        for (int64_t oy = 0; oy < dd.h; oy++) {                                                 \
          R *top = acc + (b * di.h + ly[oy].lo) * di.w * C, *bot = acc + (b * di.h + ly[oy].hi) * di.w * C; \
          R ty = ly[oy].t, iy = 1 - ty;                                                         \
          const R *g = dy + (b * dd.h + oy) * dd.w * C;                                         \
          for (int64_t ox = 0; ox < dd.w; ox++) {                                               \
            int64_t l = lx[ox].lo * C, h = lx[ox].hi * C;                                       \
            R tx = lx[ox].t, ix = 1 - tx;                                                       \
            for (int64_t c = 0; c < C; c++) {                                                   \
              R v = g[ox * C + c];                                                              \
              top[l + c] += v * iy * ix;                                                        \
              top[h + c] += v * iy * tx;                                                        \
              bot[l + c] += v * ty * ix;                                                        \
              bot[h + c] += v * ty * tx;                                                        \
            }                                                                                   \
          }                                                                                     \
        }                                                                                       \
    } else {                                                                                    \
      int64_t *iy = scratch, *ix = iy + dd.h;                                                   \
      nearest_index(dd.h, di.h, iy);                                                            \
      nearest_index(dd.w, di.w, ix);                                                            \
      for (int64_t b = 0; b < dd.n; b++)                                                        \
        for (int64_t oy = 0; oy < dd.h; oy++) {                                                 \
          R *row = acc + (b * di.h + iy[oy]) * di.w * C;                                        \
          const R *g = dy + (b * dd.h + oy) * dd.w * C;                                         \
          for (int64_t ox = 0; ox < dd.w; ox++)                                                 \
            for (int64_t c = 0; c < C; c++) row[ix[ox] * C + c] += g[ox * C + c];               \
        }                                                                                       \
    }                                                                                           \
  }
GRAD_LOOP(grad_f32, float, lerp_f, lerps_f)
GRAD_LOOP(grad_f64, double, lerp_d, lerps_d)

/* dy as a contiguous tensor of dtype `want` (float32 or float64): dy itself,
 * or a copy in one of the blank tmp[0..3), which the caller releases. */
static tide_status as_compute(const char *op, const tide_tensor *dy, int want, tide_tensor tmp[3],
                              const tide_tensor **use) {
  const tide_tensor *c;
  tide_status st = readable(op, dy, tmp, &c); /* contiguous, halves as float32 */
  *use = c;
  if (st || c->dt == want) return st;
  st = tide_tensor_init(&tmp[2], want, c->ndim, c->dims);
  if (st) return st;
  if (want == TIDE_FLOAT64)
    for (int64_t i = 0; i < c->nelem; i++) ((double *)tmp[2].data)[i] = ((const float *)c->data)[i];
  else
    for (int64_t i = 0; i < c->nelem; i++) ((float *)tmp[2].data)[i] = (float)((const double *)c->data)[i];
  *use = &tmp[2];
  return TIDE_OK;
}

static tide_status resize_grad(const tide_op_def *def, const tide_tensor *dy_in, tide_tensor *out, bool bilinear) {
  tide_tensor tmp[3] = {{0}, {0}, {0}}, acc = {0};
  const tide_tensor *dy;
  int cdt = dy_in->dt == TIDE_FLOAT64 || out->dt == TIDE_FLOAT64 ? TIDE_FLOAT64 : TIDE_FLOAT32;
  tide_status st = as_compute(def->name, dy_in, cdt, tmp, &dy);
  if (st) goto done;
  tide_tensor *target = out;
  if (out->dt != cdt) {
    if ((st = tide_tensor_init(&acc, cdt, out->ndim, out->dims))) goto done;
    target = &acc;
  }
  memset(target->data, 0, (size_t)target->nelem * tide_dtype_size_unchecked(cdt));
  dims4 di = dims_of(out), dd = dims_of(dy);
  void *scratch = malloc(sizeof(lerp_d) * (size_t)(dd.h + dd.w));
  if (!scratch) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  if (cdt == TIDE_FLOAT64) grad_f64(dy->data, target->data, di, dd, bilinear, scratch);
  else grad_f32(dy->data, target->data, di, dd, bilinear, scratch);
  free(scratch);
  if (target != out) {
    if (tide_is_half(out->dt))
      tide_float_to_halves(out->dt, out->nelem, acc.data, out->data, (int64_t)tide_dtype_size_unchecked(out->dt));
    else
      for (int64_t i = 0; i < out->nelem; i++) ((float *)out->data)[i] = (float)((double *)acc.data)[i];
  }
done:
  tide_tensor_release(&acc);
  for (int i = 0; i < 3; i++) tide_tensor_release(&tmp[i]);
  return st;
}

/* The shapes must agree where the inference could not check them (unknown
 * dims while tracing): batch and channels. */
static tide_status check_grad_shapes(const tide_op_def *def, const tide_tensor *dy, const tide_tensor *out) {
  dims4 di = dims_of(out), dd = dims_of(dy);
  char sd[128], so[128];
  if (di.n != dd.n || di.c != dd.c)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dy %s and x %s must agree in batch and channels", def->name,
                     TIDE_SHAPE_STR(sd, dy), TIDE_SHAPE_STR(so, out));
  if (dy->nelem > 0 && (di.h == 0 || di.w == 0))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: x %s has no pixels to take dy %s", def->name, TIDE_SHAPE_STR(so, out),
                     TIDE_SHAPE_STR(sd, dy));
  return TIDE_OK;
}

tide_status tide_cpu_resize_bilinear_grad(const tide_op_def *def, const tide_attrs *a, int n_in,
                                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = check_grad_shapes(def, in[0], out[0]);
  return st ? st : resize_grad(def, in[0], out[0], true);
}

tide_status tide_cpu_resize_nearest_grad(const tide_op_def *def, const tide_attrs *a, int n_in,
                                         const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = check_grad_shapes(def, in[0], out[0]);
  return st ? st : resize_grad(def, in[0], out[0], false);
}
