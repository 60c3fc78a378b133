/* cpu/pool_grad_grad.c — max_pool2d_grad_grad (TF's MaxPoolGradGrad): for each
 * window, the gradient-of-the-input value at the window's maximum; halves via float32. */
#include "pool.h"
#include "iter.h"
#include "../core/parallel.h"

#include <string.h>

typedef struct gg_job {
  const tide_conv_geom *g;
  const void *x, *gx;
  void *out;
} gg_job;

/* Output rows [r0, r1) of (n, oy): out[n, oy, ox, k] = gx[n, at, k], where at
 * is the position max_pool2d_grad sends dy[n, oy, ox, k] to (pool.h's argmax),
 * so this op is that one's transpose in dy, ties included. */
#define GRAD_GRAD(NAME, T, ARGMAX)                                                      \
  static void NAME(void *arg, int64_t r0, int64_t r1) {                                \
    const gg_job *j = arg;                                                             \
    const tide_conv_geom *g = j->g;                                                    \
    int64_t c = g->c, plane = g->h * g->w * c;                                         \
    int64_t at[TIDE_POOL_CBLOCK];                                                      \
    for (int64_t r = r0; r < r1; r++) {                                                \
      int64_t n = r / g->oh, oy = r % g->oh;                                           \
      const T *img = (const T *)j->x + n * plane, *gimg = (const T *)j->gx + n * plane; \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                         \
        int64_t y0, y1, x0, x1;                                                        \
        tide_pool_window(g, oy, ox, &y0, &y1, &x0, &x1);                               \
        T *o = (T *)j->out + (r * g->ow + ox) * c;                                     \
        for (int64_t c0 = 0; c0 < c; c0 += TIDE_POOL_CBLOCK) {                         \
          int64_t cn = c - c0 < TIDE_POOL_CBLOCK ? c - c0 : TIDE_POOL_CBLOCK;          \
          ARGMAX(img + c0, g, cn, y0, y1, x0, x1, at);                                 \
          for (int64_t k = 0; k < cn; k++) o[c0 + k] = gimg[at[k] * c + c0 + k];       \
        }                                                                              \
      }                                                                                \
    }                                                                                  \
  }
GRAD_GRAD(grad_grad_f32, float, tide_pool_argmax_f32)
GRAD_GRAD(grad_grad_f64, double, tide_pool_argmax_f64)

/* (input, output, grad) -> [n, oh, ow, c]; the output is not read: the maxima
 * are found again in the input, as max_pool2d_grad finds them. */
tide_status tide_cpu_max_pool2d_grad_grad(const tide_op_def *def, const tide_attrs *a, int ni,
                                          const tide_tensor *const *in, int no, tide_tensor *const *out) {
  TIDE_UNUSED(ni), TIDE_UNUSED(no);
  const tide_tensor *x = in[0], *gx = in[2];
  tide_tensor *o = out[0];
  tide_conv_geom g;
  tide_status st = tide_pool_geometry(def->name, a, x->dims, &g);
  if (st || o->nelem == 0) return st; /* empty: a VALID window larger than the input, or a zero dim */
  bool half = tide_is_half(o->dt);
  int dt = half ? TIDE_FLOAT32 : o->dt;
  tide_tensor tmp[3];
  memset(tmp, 0, sizeof tmp);
  char *px = NULL, *pg = NULL, *po = o->data;
  st = tide_conv_operand(def->name, x, dt, &tmp[0], &px);
  if (!st) st = tide_conv_operand(def->name, gx, dt, &tmp[1], &pg);
  if (!st && half) {
    st = tide_tensor_init(&tmp[2], TIDE_FLOAT32, o->ndim, o->dims);
    po = tmp[2].data;
  }
  if (!st) {
    gg_job j = {&g, px, pg, po};
    int64_t row_work = g.ow * g.kh * g.kw * g.c;
    tide_parallel_for(g.n * g.oh, TIDE_GRAIN_CHEAP / (row_work + 1) + 1,
                      dt == TIDE_FLOAT32 ? grad_grad_f32 : grad_grad_f64, &j);
  }
  if (!st && half)
    tide_float_to_halves(o->dt, o->nelem, (const float *)po, o->data, (int64_t)tide_dtype_size_unchecked(o->dt));
  for (int i = 0; i < 3; i++) tide_tensor_release(&tmp[i]);
  return st;
}
