/* cpu/conv.c — conv2d, depthwise_conv2d and their backprop kernels: operands made
 * contiguous (halves as float32), float32 through oneDNN, else im2col + GEMM (cpu/gemm.c). */
#include "conv.h"
#include "iter.h"
#include "../core/linalg.h"
#include "../core/parallel.h"
#include "../core/scratch.h"

#include <limits.h>
#include <string.h>

/* Patch matrices are built a few images at a time so that one stays in cache-sized memory. */
enum { COL_BYTES = 16 << 20 };

/* C = op(A) * op(B) + beta * C, row-major, in float32 or float64 (over the pool when large). */
static void gemm(int dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                 const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  tide_cpu_gemm(dt, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

/* ---- im2col + GEMM ---------------------------------------------------------------------- */

typedef struct im2col {
  const tide_conv_geom *g;
  int dt;
  size_t es;
  char *x;          /* the images [n, h, w, c] (dx for col2im) */
  char *col;        /* patch rows of the chunk: [rows, kh * kw * c] */
  int64_t first;    /* first image of the chunk */
} im2col;

/* Patch rows [r0, r1) of the chunk: row (n, oy, ox) holds the window's kh*kw*c
 * values in filter order, zeros where it covers padding. */
static void im2col_rows(void *arg, int64_t r0, int64_t r1) {
  const im2col *p = arg;
  const tide_conv_geom *g = p->g;
  size_t es = p->es, crow = (size_t)g->c * es;
  int64_t K = g->kh * g->kw * g->c, per = g->oh * g->ow;
  for (int64_t r = r0; r < r1; r++) {
    int64_t n = p->first + r / per, oy = r % per / g->ow, ox = r % g->ow;
    char *dst = p->col + (size_t)(r * K) * es;
    int64_t y0 = oy * g->sh - g->pt, x0 = ox * g->sw - g->pl;
    const char *img = p->x + (size_t)(n * g->h * g->w * g->c) * es;
    for (int64_t ki = 0; ki < g->kh; ki++) {
      int64_t ih = y0 + ki * g->dh;
      if (ih < 0 || ih >= g->h) {
        memset(dst, 0, crow * (size_t)g->kw);
        dst += crow * (size_t)g->kw;
        continue;
      }
      const char *row = img + (size_t)(ih * g->w * g->c) * es;
      if (g->dw == 1 && x0 >= 0 && x0 + g->kw <= g->w) { /* the whole window row is inside: one copy */
        memcpy(dst, row + (size_t)(x0 * g->c) * es, crow * (size_t)g->kw);
        dst += crow * (size_t)g->kw;
        continue;
      }
      for (int64_t kj = 0; kj < g->kw; kj++, dst += crow) {
        int64_t iw = x0 + kj * g->dw;
        if (iw < 0 || iw >= g->w) memset(dst, 0, crow);
        else memcpy(dst, row + (size_t)(iw * g->c) * es, crow);
      }
    }
  }
}

/* Add patch rows back into images [i0, i1) of the chunk (dx, zeroed before). */
#define COL2IM(NAME, T)                                                                              \
  static void NAME(void *arg, int64_t i0, int64_t i1) {                                             \
    const im2col *p = arg;                                                                          \
    const tide_conv_geom *g = p->g;                                                                 \
    int64_t K = g->kh * g->kw * g->c, per = g->oh * g->ow, c = g->c;                                \
    for (int64_t i = i0; i < i1; i++) {                                                             \
      T *img = (T *)p->x + (p->first + i) * g->h * g->w * c;                                        \
      for (int64_t r = i * per; r < (i + 1) * per; r++) {                                           \
        int64_t oy = r % per / g->ow, ox = r % g->ow;                                               \
        const T *src = (const T *)p->col + r * K;                                                   \
        for (int64_t ki = 0; ki < g->kh; ki++) {                                                    \
          int64_t ih = oy * g->sh - g->pt + ki * g->dh;                                             \
          for (int64_t kj = 0; kj < g->kw; kj++, src += c) {                                        \
            int64_t iw = ox * g->sw - g->pl + kj * g->dw;                                           \
            if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) continue;                             \
            T *d = img + (ih * g->w + iw) * c;                                                      \
            for (int64_t k = 0; k < c; k++) d[k] += src[k];                                         \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }
COL2IM(col2im_f32, float)
COL2IM(col2im_f64, double)

/* One pass of conv2d by im2col + GEMM on contiguous float32/float64 data
 * (x, w, y as tide_dnnl_conv names them). */
static tide_status im2col_conv(const char *op, tide_conv_pass pass, const tide_conv_geom *g, int dt, char *x,
                               char *w, char *y) {
  size_t es = tide_dtype_size_unchecked(dt);
  int64_t K = g->kh * g->kw * g->c, per = g->oh * g->ow;
  bool direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && !g->pt && !g->pb && !g->pl && !g->pr;
  int64_t imgs = direct ? g->n : (int64_t)(COL_BYTES / ((size_t)(per * K) * es + 1));
  if (imgs < 1) imgs = 1;
  if (imgs * per > INT_MAX || K > INT_MAX || g->oc > INT_MAX)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: the problem exceeds BLAS's dimension limit of %d", op, INT_MAX);
  size_t colbytes = direct ? 0 : (size_t)(imgs * per * K) * es;
  char *col = colbytes ? tide_scratch_alloc(colbytes, op, "a patch buffer") : NULL; /* charged to a VM's cap */
  if (colbytes && !col) return tide_last_status();
  if (pass == TIDE_CONV_BWD_DATA) memset(x, 0, (size_t)(g->n * g->h * g->w * g->c) * es);
  for (int64_t first = 0; first < g->n; first += imgs) {
    int64_t nimg = g->n - first < imgs ? g->n - first : imgs, rows = nimg * per;
    char *ychunk = y + (size_t)(first * per * g->oc) * es;
    im2col p = {g, dt, es, x, col, first};
    char *patches = direct ? x + (size_t)(first * per * K) * es : col;
    if (!direct && pass != TIDE_CONV_BWD_DATA) {
      int64_t grain = 16384 / (K > 0 ? K : 1) + 1;
      tide_parallel_for(rows, grain, im2col_rows, &p);
    }
    switch (pass) {
    case TIDE_CONV_FWD: gemm(dt, false, false, rows, g->oc, K, patches, K, w, g->oc, 0.0, ychunk, g->oc); break;
    case TIDE_CONV_BWD_FILTER:
      gemm(dt, true, false, K, g->oc, rows, patches, K, ychunk, g->oc, first ? 1.0 : 0.0, w, g->oc);
      break;
    case TIDE_CONV_BWD_DATA:
      /* direct: the patch rows are dx itself, written (beta 0) rather than added. */
      gemm(dt, false, true, rows, K, g->oc, ychunk, g->oc, w, g->oc, 0.0, patches, K);
      if (!direct) {
        int64_t grain = 16384 / (per * K > 0 ? per * K : 1) + 1;
        tide_parallel_for(nimg, grain, dt == TIDE_FLOAT32 ? col2im_f32 : col2im_f64, &p);
      }
      break;
    }
  }
  if (col) tide_scratch_free(col, colbytes);
  return TIDE_OK;
}

/* ---- the kernels -------------------------------------------------------------------------- */

tide_status tide_conv_operand(const char *op, const tide_tensor *t, int dt, tide_tensor *tmp, char **data) {
  if (t->dt == dt && tide_tensor_is_contiguous(t)) {
    *data = t->data;
    return TIDE_OK;
  }
  tide_status st;
  if (t->dt == dt) {
    st = tide_tensor_init(tmp, dt, t->ndim, t->dims);
    if (!st) st = tide_copy_strided(op, tmp, t);
  } else {
    tide_attrs cast = {0};
    cast.dtype = dt;
    st = tide_op_run(TIDE_OP_CAST, &cast, 1, &t, 1, &tmp);
  }
  *data = tmp->data;
  return st;
}

/* One pass: a and b are the op's inputs, out its (allocated, contiguous) output;
 * they take the roles x, w, y of tide_dnnl_conv by pass. */
static tide_status run_pass(const tide_op_def *def, const tide_attrs *attrs, tide_conv_pass pass, bool depthwise,
                            const tide_tensor *a, const tide_tensor *b, tide_tensor *out) {
  tide_conv_geom g;
  const int64_t *xd = pass == TIDE_CONV_BWD_DATA ? out->dims : a->dims;
  const int64_t *fd = pass == TIDE_CONV_FWD ? b->dims : pass == TIDE_CONV_BWD_DATA ? b->dims : out->dims;
  tide_status st = tide_conv_geometry(def->name, attrs, xd, fd, depthwise, &g);
  if (st) return st;
  if (out->nelem == 0) return TIDE_OK;
  size_t es = tide_dtype_size_unchecked(out->dt);
  if (g.n == 0 || g.c == 0 || g.oc == 0 || g.oh == 0 || g.ow == 0) { /* nothing to sum: zeros */
    memset(out->data, 0, (size_t)out->nelem * es);
    return TIDE_OK;
  }
  bool half = tide_is_half(out->dt);
  int dt = half ? TIDE_FLOAT32 : out->dt;
  tide_tensor tmp[3];
  memset(tmp, 0, sizeof tmp);
  char *pa = NULL, *pb = NULL, *po = out->data;
  st = tide_conv_operand(def->name, a, dt, &tmp[0], &pa);
  if (!st) st = tide_conv_operand(def->name, b, dt, &tmp[1], &pb);
  if (!st && half) {
    st = tide_tensor_init(&tmp[2], TIDE_FLOAT32, out->ndim, out->dims);
    po = tmp[2].data;
  }
  if (!st) {
    char *x = pass == TIDE_CONV_BWD_DATA ? po : pa;
    char *w = pass == TIDE_CONV_BWD_FILTER ? po : pb;
    char *y = pass == TIDE_CONV_FWD ? po : pass == TIDE_CONV_BWD_DATA ? pa : pb;
    st = TIDE_ERR_UNSUPPORTED;
    if (dt == TIDE_FLOAT32) st = tide_dnnl_conv(def->name, pass, &g, depthwise, (float *)x, (float *)w, (float *)y);
    if (st == TIDE_ERR_UNSUPPORTED) {
      if (depthwise) st = tide_depthwise_direct(def->name, pass, &g, dt, x, w, y);
      else st = im2col_conv(def->name, pass, &g, dt, x, w, y);
    }
  }
  if (!st && half) tide_float_to_halves(out->dt, out->nelem, (const float *)po, out->data, (int64_t)es);
  for (int i = 0; i < 3; i++) tide_tensor_release(&tmp[i]);
  return st;
}

tide_status tide_cpu_conv2d(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in, int no,
                            tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_FWD, false, in[0], in[1], out[0]);
}

tide_status tide_cpu_conv2d_bp_input(const tide_op_def *def, const tide_attrs *a, int ni,
                                     const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_BWD_DATA, false, in[0], in[1], out[0]);
}

tide_status tide_cpu_conv2d_bp_filter(const tide_op_def *def, const tide_attrs *a, int ni,
                                      const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_BWD_FILTER, false, in[0], in[1], out[0]);
}

tide_status tide_cpu_depthwise(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                               int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_FWD, true, in[0], in[1], out[0]);
}

tide_status tide_cpu_depthwise_bp_input(const tide_op_def *def, const tide_attrs *a, int ni,
                                        const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_BWD_DATA, true, in[0], in[1], out[0]);
}

tide_status tide_cpu_depthwise_bp_filter(const tide_op_def *def, const tide_attrs *a, int ni,
                                         const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pass(def, a, TIDE_CONV_BWD_FILTER, true, in[0], in[1], out[0]);
}
