/* cpu/depthwise.c — depthwise_conv2d's passes by direct NHWC loops with the
 * channels innermost (they vectorize); float64 and oneDNN's misses come here. */
#include "conv.h"
#include "../core/parallel.h"
#include "../core/scratch.h"

#include <string.h>

typedef struct dw_job {
  const tide_conv_geom *g;
  void *x, *w, *y;
  void *parts;        /* BWD_FILTER: one partial filter gradient per chunk */
  int64_t nchunks, wsize;
} dw_job;

/* Forward over output rows [r0, r1) of (n, oy): y[.., ci*M + m] = sum x[.., ci] * w[ki, kj, ci, m]. */
#define DW_FWD(NAME, T)                                                                         \
  static void NAME(void *arg, int64_t r0, int64_t r1) {                                        \
    const dw_job *j = arg;                                                                     \
    const tide_conv_geom *g = j->g;                                                            \
    int64_t c = g->c, M = g->mult, oc = g->oc;                                                 \
    for (int64_t r = r0; r < r1; r++) {                                                        \
      int64_t n = r / g->oh, oy = r % g->oh;                                                   \
      const T *img = (const T *)j->x + n * g->h * g->w * c;                                    \
      for (int64_t ox = 0; ox < g->ow; ox++) {                                                 \
        T *o = (T *)j->y + (r * g->ow + ox) * oc;                                              \
        for (int64_t k = 0; k < oc; k++) o[k] = 0;                                             \
        for (int64_t ki = 0; ki < g->kh; ki++) {                                               \
          int64_t ih = oy * g->sh - g->pt + ki * g->dh;                                        \
          if (ih < 0 || ih >= g->h) continue;                                                  \
          for (int64_t kj = 0; kj < g->kw; kj++) {                                             \
            int64_t iw = ox * g->sw - g->pl + kj * g->dw;                                      \
            if (iw < 0 || iw >= g->w) continue;                                                \
            const T *xr = img + (ih * g->w + iw) * c;                                          \
            const T *wr = (const T *)j->w + (ki * g->kw + kj) * oc;                            \
            if (M == 1)                                                                        \
              for (int64_t k = 0; k < c; k++) o[k] += xr[k] * wr[k];                           \
            else                                                                               \
              for (int64_t ci = 0; ci < c; ci++)                                               \
                for (int64_t m = 0; m < M; m++) o[ci * M + m] += xr[ci] * wr[ci * M + m];      \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
DW_FWD(dw_fwd_f32, float)
DW_FWD(dw_fwd_f64, double)

/* Backward data over input rows [r0, r1) of (n, ih): each dx element gathers
 * from the outputs whose windows cover it, so rows never collide. */
#define DW_BWD_DATA(NAME, T)                                                                    \
  static void NAME(void *arg, int64_t r0, int64_t r1) {                                        \
    const dw_job *j = arg;                                                                     \
    const tide_conv_geom *g = j->g;                                                            \
    int64_t c = g->c, M = g->mult, oc = g->oc;                                                 \
    for (int64_t r = r0; r < r1; r++) {                                                        \
      int64_t n = r / g->h, ih = r % g->h;                                                     \
      for (int64_t iw = 0; iw < g->w; iw++) {                                                  \
        T *d = (T *)j->x + (r * g->w + iw) * c;                                                \
        for (int64_t k = 0; k < c; k++) d[k] = 0;                                              \
        for (int64_t ki = 0; ki < g->kh; ki++) {                                               \
          int64_t ty = ih + g->pt - ki * g->dh;                                                \
          if (ty < 0 || ty % g->sh) continue;                                                  \
          int64_t oy = ty / g->sh;                                                             \
          if (oy >= g->oh) continue;                                                           \
          for (int64_t kj = 0; kj < g->kw; kj++) {                                             \
            int64_t tx = iw + g->pl - kj * g->dw;                                              \
            if (tx < 0 || tx % g->sw) continue;                                                \
            int64_t ox = tx / g->sw;                                                           \
            if (ox >= g->ow) continue;                                                         \
            const T *dy = (const T *)j->y + ((n * g->oh + oy) * g->ow + ox) * oc;              \
            const T *wr = (const T *)j->w + (ki * g->kw + kj) * oc;                            \
            if (M == 1)                                                                        \
              for (int64_t k = 0; k < c; k++) d[k] += dy[k] * wr[k];                           \
            else                                                                               \
              for (int64_t ci = 0; ci < c; ci++) {                                             \
                T s = 0;                                                                       \
                for (int64_t m = 0; m < M; m++) s += dy[ci * M + m] * wr[ci * M + m];          \
                d[ci] += s;                                                                    \
              }                                                                                \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
DW_BWD_DATA(dw_bwd_data_f32, float)
DW_BWD_DATA(dw_bwd_data_f64, double)

/* Backward filter for chunks [c0, c1): chunk i sums its share of the output
 * rows (n, oy) into its own partial gradient. */
#define DW_BWD_FILTER(NAME, T)                                                                  \
  static void NAME(void *arg, int64_t c0, int64_t c1) {                                        \
    const dw_job *j = arg;                                                                     \
    const tide_conv_geom *g = j->g;                                                            \
    int64_t c = g->c, M = g->mult, oc = g->oc, rows = g->n * g->oh;                            \
    for (int64_t i = c0; i < c1; i++) {                                                        \
      T *dw = (T *)j->parts + i * j->wsize;                                                    \
      for (int64_t k = 0; k < j->wsize; k++) dw[k] = 0;                                        \
      for (int64_t r = rows * i / j->nchunks; r < rows * (i + 1) / j->nchunks; r++) {          \
        int64_t n = r / g->oh, oy = r % g->oh;                                                 \
        const T *img = (const T *)j->x + n * g->h * g->w * c;                                  \
        for (int64_t ox = 0; ox < g->ow; ox++) {                                               \
          const T *dy = (const T *)j->y + (r * g->ow + ox) * oc;                               \
          for (int64_t ki = 0; ki < g->kh; ki++) {                                             \
            int64_t ih = oy * g->sh - g->pt + ki * g->dh;                                      \
            if (ih < 0 || ih >= g->h) continue;                                                \
            for (int64_t kj = 0; kj < g->kw; kj++) {                                           \
              int64_t iw = ox * g->sw - g->pl + kj * g->dw;                                    \
              if (iw < 0 || iw >= g->w) continue;                                              \
              const T *xr = img + (ih * g->w + iw) * c;                                        \
              T *wr = dw + (ki * g->kw + kj) * oc;                                             \
              if (M == 1)                                                                      \
                for (int64_t k = 0; k < c; k++) wr[k] += xr[k] * dy[k];                        \
              else                                                                             \
                for (int64_t ci = 0; ci < c; ci++)                                             \
                  for (int64_t m = 0; m < M; m++) wr[ci * M + m] += xr[ci] * dy[ci * M + m];   \
            }                                                                                  \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
DW_BWD_FILTER(dw_bwd_filter_f32, float)
DW_BWD_FILTER(dw_bwd_filter_f64, double)

tide_status tide_depthwise_direct(const char *op, tide_conv_pass pass, const tide_conv_geom *g, int dt, void *x,
                                  void *w, void *y) {
  bool f32 = dt == TIDE_FLOAT32;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  dw_job j = {g, x, w, y, NULL, 1, g->kh * g->kw * g->oc};
  int64_t taps = g->kh * g->kw * g->oc; /* multiply-adds per output position */
  switch (pass) {
  case TIDE_CONV_FWD:
    tide_parallel_for(g->n * g->oh, TIDE_GRAIN_COSTLY / (g->ow * taps + 1) + 1, f32 ? dw_fwd_f32 : dw_fwd_f64, &j);
    return TIDE_OK;
  case TIDE_CONV_BWD_DATA:
    tide_parallel_for(g->n * g->h, TIDE_GRAIN_COSTLY / (g->w * taps + 1) + 1,
                      f32 ? dw_bwd_data_f32 : dw_bwd_data_f64, &j);
    return TIDE_OK;
  case TIDE_CONV_BWD_FILTER: break;
  }
  int64_t rows = g->n * g->oh, work = rows * g->ow * taps;
  int64_t chunks = work < TIDE_GRAIN_COSTLY * 8 ? 1 : tide_parallel_threads();
  if (chunks > rows) chunks = rows;
  if (chunks < 1) chunks = 1;
  j.nchunks = chunks;
  size_t bytes = (size_t)(chunks * j.wsize) * es;
  j.parts = chunks > 1 ? tide_scratch_alloc(bytes, op, "partial sums") : w; /* charged to a VM's cap */
  if (!j.parts) return tide_last_status();
  tide_parallel_for(chunks, 1, f32 ? dw_bwd_filter_f32 : dw_bwd_filter_f64, &j);
  if (chunks > 1) {
    for (int64_t k = 0; k < j.wsize; k++) {
      if (f32) {
        float s = 0;
        for (int64_t i = 0; i < chunks; i++) s += ((float *)j.parts)[i * j.wsize + k];
        ((float *)w)[k] = s;
      } else {
        double s = 0;
        for (int64_t i = 0; i < chunks; i++) s += ((double *)j.parts)[i * j.wsize + k];
        ((double *)w)[k] = s;
      }
    }
    tide_scratch_free(j.parts, bytes);
  }
  return TIDE_OK;
}
