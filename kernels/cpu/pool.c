/* cpu/pool.c — max_pool2d, avg_pool2d and their gradients by NHWC loops with the
 * channels innermost (they vectorize); halves run through float32. The loops
 * are built once per instruction set, the kernels once (see simd.h): the max
 * gradient's scatter to each window's maximum is 4-5x faster with AVX-512's
 * than at the x86-64-v2 baseline. */
#include "pool.h"
#include "iter.h"
#include "simd.h"
#include "../core/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Channels per task of the gradients, which split work by (image, channel block). */
enum { CBLOCK = TIDE_POOL_CBLOCK };

typedef struct pool_job {
  const tide_conv_geom *g;
  const void *x, *dy;
  void *out;
  int64_t nblk;
} pool_job;

/* Forward over output rows [r0, r1) of (n, oy): the max, or the mean over the
 * window's elements inside the image (TF leaves padding out of the count). */
#define POOL_FWD(NAME, T, MAX)                                                                  \
  static void NAME(void *arg, int64_t r0, int64_t r1) {                                        \
    const pool_job *j = arg;                                                                   \
    const tide_conv_geom *g = j->g;                                                            \
    int64_t c = g->c;                                                                          \
    for (int64_t r = r0; r < r1; r++) {                                                        \
      int64_t n = r / g->oh, oy = r % g->oh;                                                   \
      const T *img = (const T *)j->x + n * g->h * g->w * c;                                    \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                                 \
        int64_t y0, y1, x0, x1;                                                                \
        tide_pool_window(g, oy, ox, &y0, &y1, &x0, &x1);                                       \
        T *o = (T *)j->out + (r * g->ow + ox) * c;                                             \
        for (int64_t k = 0; k < c; k++) o[k] = MAX ? -(T)INFINITY : 0;                         \
        for (int64_t ih = y0; ih < y1; ih++)                                                   \
          for (int64_t iw = x0; iw < x1; iw++) {                                               \
            const T *v = img + (ih * g->w + iw) * c;                                           \
            if (MAX)                                                                           \
              for (int64_t k = 0; k < c; k++) o[k] = v[k] > o[k] ? v[k] : o[k];                \
            else                                                                               \
              for (int64_t k = 0; k < c; k++) o[k] += v[k];                                    \
          }                                                                                    \
        if (!MAX) {                                                                            \
          T inv = (T)1 / (T)((y1 - y0) * (x1 - x0));                                           \
          for (int64_t k = 0; k < c; k++) o[k] *= inv;                                         \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
POOL_FWD(max_fwd_f32, float, 1)
POOL_FWD(max_fwd_f64, double, 1)
POOL_FWD(avg_fwd_f32, float, 0)
POOL_FWD(avg_fwd_f64, double, 0)

/* Gradients over tasks [t0, t1) of (image, channel block), each zeroing its
 * part of dx and scattering into it. max: all of dy goes to the window's first maximum in
 * row-major order (pool.h's argmax); avg: dy / count to each element. */
#define POOL_GRAD(NAME, T, MAX, ARGMAX)                                                         \
  static void NAME(void *arg, int64_t t0, int64_t t1) {                                        \
    const pool_job *j = arg;                                                                   \
    const tide_conv_geom *g = j->g;                                                            \
    int64_t c = g->c;                                                                          \
    int64_t at[CBLOCK];                                                                        \
    for (int64_t t = t0; t < t1; t++) {                                                        \
      int64_t n = t / j->nblk, c0 = t % j->nblk * CBLOCK;                                      \
      int64_t cn = c - c0 < CBLOCK ? c - c0 : CBLOCK;                                          \
      const T *img = (const T *)j->x + n * g->h * g->w * c + c0;                               \
      T *dimg = (T *)j->out + n * g->h * g->w * c + c0;                                        \
      if (cn == c) memset(dimg, 0, (size_t)(g->h * g->w * c) * sizeof(T));                     \
      else                                                                                     \
        for (int64_t p = 0; p < g->h * g->w; p++) memset(dimg + p * c, 0, (size_t)cn * sizeof(T)); \
      for (int64_t oy = 0; oy < g->oh; oy++)                                                   \
        for (int64_t ox = 0; ox < g->ow; ox++) {                                               \
          int64_t y0, y1, x0, x1;                                                              \
          tide_pool_window(g, oy, ox, &y0, &y1, &x0, &x1);                                     \
          const T *dy = (const T *)j->dy + ((n * g->oh + oy) * g->ow + ox) * c + c0;           \
          if (MAX) {                                                                           \
            ARGMAX(img, g, cn, y0, y1, x0, x1, at);                                            \
            for (int64_t k = 0; k < cn; k++) dimg[at[k] * c + k] += dy[k];                     \
          } else {                                                                             \
            T inv = (T)1 / (T)((y1 - y0) * (x1 - x0));                                         \
            for (int64_t ih = y0; ih < y1; ih++)                                               \
              for (int64_t iw = x0; iw < x1; iw++) {                                           \
                T *d = dimg + (ih * g->w + iw) * c;                                            \
                for (int64_t k = 0; k < cn; k++) d[k] += dy[k] * inv;                          \
              }                                                                                \
          }                                                                                    \
        }                                                                                      \
    }                                                                                          \
  }
POOL_GRAD(max_grad_f32, float, 1, tide_pool_argmax_f32)
POOL_GRAD(max_grad_f64, double, 1, tide_pool_argmax_f64)
POOL_GRAD(avg_grad_f32, float, 0, tide_pool_argmax_f32)
POOL_GRAD(avg_grad_f64, double, 0, tide_pool_argmax_f64)

/* This level's loop of a pooling kind (cpu/pool.h's tide_pool_kind) on float32 or float64. */
tide_range_fn TIDE_SIMD(pool_loop)(int kind, bool f32) {
  switch (kind) {
  case TIDE_POOL_MAX_FWD: return f32 ? max_fwd_f32 : max_fwd_f64;
  case TIDE_POOL_AVG_FWD: return f32 ? avg_fwd_f32 : avg_fwd_f64;
  case TIDE_POOL_MAX_GRAD: return f32 ? max_grad_f32 : max_grad_f64;
  default: return f32 ? avg_grad_f32 : avg_grad_f64;
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernels, in the baseline build only --------------------------------- */

typedef enum {
  MAX_FWD = TIDE_POOL_MAX_FWD,
  AVG_FWD = TIDE_POOL_AVG_FWD,
  MAX_GRAD = TIDE_POOL_MAX_GRAD,
  AVG_GRAD = TIDE_POOL_AVG_GRAD
} pool_kind;

/* Run a pooling op: x is the input, dy the output gradient (gradients only). */
static tide_status run_pool(const tide_op_def *def, const tide_attrs *a, pool_kind kind, const tide_tensor *x,
                            const tide_tensor *dy, tide_tensor *out) {
  tide_conv_geom g;
  tide_status st = tide_pool_geometry(def->name, a, x->dims, &g);
  if (st || out->nelem == 0) return st;
  bool half = tide_is_half(out->dt);
  int dt = half ? TIDE_FLOAT32 : out->dt;
  size_t es = tide_dtype_size_unchecked(out->dt);
  tide_tensor tmp[3];
  memset(tmp, 0, sizeof tmp);
  char *px = NULL, *pdy = NULL, *po = out->data;
  st = tide_conv_operand(def->name, x, dt, &tmp[0], &px);
  if (!st && dy) st = tide_conv_operand(def->name, dy, dt, &tmp[1], &pdy);
  if (!st && half) {
    st = tide_tensor_init(&tmp[2], TIDE_FLOAT32, out->ndim, out->dims);
    po = tmp[2].data;
  }
  if (!st) {
    bool f32 = dt == TIDE_FLOAT32;
    pool_job j = {&g, px, pdy, po, (g.c + CBLOCK - 1) / CBLOCK};
    int64_t window_work = g.kh * g.kw * g.c;
    if (kind == MAX_FWD || kind == AVG_FWD) {
      tide_range_fn fn = tide_simd.pool_loop(kind, f32);
      tide_parallel_for(g.n * g.oh, TIDE_GRAIN_CHEAP / (g.ow * window_work + 1) + 1, fn, &j);
    } else {
      tide_range_fn fn = tide_simd.pool_loop(kind, f32);
      int64_t per_task = g.oh * g.ow * g.kh * g.kw * (g.c < CBLOCK ? g.c : CBLOCK);
      tide_parallel_for(g.n * j.nblk, TIDE_GRAIN_CHEAP / (per_task + 1) + 1, fn, &j);
    }
  }
  if (!st && half) tide_float_to_halves(out->dt, out->nelem, (const float *)po, out->data, (int64_t)es);
  for (int i = 0; i < 3; i++) tide_tensor_release(&tmp[i]);
  return st;
}

tide_status tide_cpu_max_pool2d(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pool(def, a, MAX_FWD, in[0], NULL, out[0]);
}

tide_status tide_cpu_avg_pool2d(const tide_op_def *def, const tide_attrs *a, int ni, const tide_tensor *const *in,
                                int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pool(def, a, AVG_FWD, in[0], NULL, out[0]);
}

/* (input, output, out_backprop): the output is not needed, the maxima are found again in the input. */
tide_status tide_cpu_max_pool2d_grad(const tide_op_def *def, const tide_attrs *a, int ni,
                                     const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pool(def, a, MAX_GRAD, in[0], in[2], out[0]);
}

tide_status tide_cpu_avg_pool2d_grad(const tide_op_def *def, const tide_attrs *a, int ni,
                                     const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  return run_pool(def, a, AVG_GRAD, in[0], in[1], out[0]);
}

#endif /* TIDE_SIMD_ONCE */
