/* cpu/pool.h — what max pooling's gradient kernels share (pool.c, pool_grad_grad.c):
 * a window clipped to the image, and the choice of each window's maximum. */
#ifndef TIDE_CPU_POOL_H
#define TIDE_CPU_POOL_H

#include "conv.h"

/* Channels per step of the argmax (its best/at arrays live on the stack). */
enum { TIDE_POOL_CBLOCK = 64 };

/* The window of output (oy, ox) clipped to the image: rows [y0, y1), cols [x0, x1). */
/* The pooling loops' kinds (cpu/pool.c, simd.def's pool_loop). */
enum { TIDE_POOL_MAX_FWD, TIDE_POOL_AVG_FWD, TIDE_POOL_MAX_GRAD, TIDE_POOL_AVG_GRAD };

static inline void tide_pool_window(const tide_conv_geom *g, int64_t oy, int64_t ox, int64_t *y0, int64_t *y1,
                                    int64_t *x0, int64_t *x1) {
  int64_t ys = oy * g->sh - g->pt, xs = ox * g->sw - g->pl;
  *y0 = ys < 0 ? 0 : ys;
  *y1 = ys + g->kh < g->h ? ys + g->kh : g->h;
  *x0 = xs < 0 ? 0 : xs;
  *x1 = xs + g->kw < g->w ? xs + g->kw : g->w;
}

/* NAME(img, g, cn, y0, y1, x0, x1, at): for channels [0, cn) of img (an image's
 * first channel of a block, pixels g->c apart), at[k] = the pixel (ih * w + iw)
 * of the window's first maximum in row-major order, as TF's CPU MaxPoolGrad
 * picks it. The first- and second-order gradients both choose by this one
 * rule, so they agree on ties. The window must not be empty; cn <= TIDE_POOL_CBLOCK. */
#define TIDE_POOL_ARGMAX(NAME, T)                                                                                \
  static inline void NAME(const T *img, const tide_conv_geom *g, int64_t cn, int64_t y0, int64_t y1, int64_t x0, \
                          int64_t x1, int64_t *at) {                                                             \
    int64_t c = g->c, first = y0 * g->w + x0;                                                                    \
    T best[TIDE_POOL_CBLOCK];                                                                                    \
    for (int64_t k = 0; k < cn; k++) best[k] = img[first * c + k], at[k] = first;                                \
    for (int64_t ih = y0; ih < y1; ih++)                                                                         \
      for (int64_t iw = x0; iw < x1; iw++) {                                                                     \
        int64_t pos = ih * g->w + iw;                                                                            \
        const T *v = img + pos * c;                                                                              \
        for (int64_t k = 0; k < cn; k++)                                                                         \
          if (v[k] > best[k]) best[k] = v[k], at[k] = pos;                                                       \
      }                                                                                                          \
  }
TIDE_POOL_ARGMAX(tide_pool_argmax_f32, float)
TIDE_POOL_ARGMAX(tide_pool_argmax_f64, double)

#endif
