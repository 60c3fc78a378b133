/* cpu/reduce.c — sum, mean, max, min, prod, any, all over any set of axes and
 * any input layout: typed row and column kernels driven by one layout planner.
 *
 * Strategy.
 * 1. Plan. Size-1 dims are dropped, negative strides flipped (a reduction does
 *    not care about order), dims sorted by input stride (largest outside) so a
 *    transposed view walks memory in order, and neighbours of the same kind
 *    (both reduced or both kept) that are contiguous with each other merged.
 *    The innermost remaining dim picks the kernel:
 *      ROW  it is reduced: each output reduces rows of n elements of stride s
 *           (stride 1 is the vectorized case: a sum over the last axis);
 *      COL  it is kept: each reduced position adds a vector of up to KC
 *           outputs into KC accumulators, out[k] += in[r, k], vectorized over k
 *           (a sum over an outer axis), four rows a pass for sums; narrow
 *           columns ([N, 4] over axis 0) fold G rows into one G * 4-lane row
 *           and combine the lanes at the end.
 *    Sliced, transposed or broadcast inputs run the same kernels with strides,
 *    so any layout is correct and the common ones are fast.
 * 2. Accumulate. Float results accumulate in double, integer ones in int64
 *    (wrapping to the output type at the end). float32 sums and max/min run
 *    in LANES independent float32 accumulators (SIMD registers, since the
 *    compiler may not reorder one float sum) over blocks of FBLOCK elements;
 *    each block's total is added into a double: the speed of a float loop and
 *    nearly the accuracy of a double one. max/min propagate NaN inside the
 *    lanes. Rows shorter than two blocks of lanes are walked side by side
 *    (one accumulator per row) so their adds overlap. float16/bfloat16 are
 *    converted to float32 in small blocks.
 * 3. Parallelize deterministically. Work is cut into units from the shape,
 *    never from the thread count: many outputs -> units are runs of outputs
 *    (ROW) or KC-wide column strips (COL); few outputs over a long reduction
 *    -> each output's reduced range is cut into fixed chunks whose partials are
 *    stored and then combined in chunk order. A sum gives the same bits with
 *    one thread or sixty-four. */
#include "reduce.h"
#include "simd.h"
#include "../core/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
  LANES = 32,     /* float32 accumulators of a row block (4 AVX2 / 2 AVX-512 registers) */
  DLANES = 16,    /* double accumulators of a row block */
  FBLOCK = 4096,  /* row elements summed in float32 before entering the double total */
  KC = 1024,      /* outputs in one column strip */
  CB = 128,       /* rows a column strip sums in float32 before the double flush */
  RUN = 256,      /* outputs one row-kernel call fills */
  HBLK = 1024,    /* half elements converted per row block */
  HROWS = 2,      /* half rows converted per column block */
  MAX_UNITS = 64  /* COL: strips x chunks when the rows of few strips are cut */
};

typedef enum { K_SUM, K_PROD, K_MAX, K_MIN } kind;

/* One accumulator: double for float inputs, int64 for integer and bool ones. */
typedef union acc_t { double f; int64_t i; } acc_t;

/* acc[q] op= reduction of row q (n elements, stride s bytes) for q < nrows;
 * rows start prs bytes apart. */
typedef void (*row_fn)(const char *p, int64_t nrows, int64_t prs, int64_t n, int64_t s, void *acc);
/* acc[j] op= p[r * rs + j * s] for j < n and r < nrows (strides in bytes). */
typedef void (*col_fn)(void *acc, const char *p, int64_t n, int64_t s, int64_t nrows, int64_t rs);
/* Write n accumulators to o (stride os bytes); mean divides by count first. */
typedef void (*store_fn)(char *o, int64_t os, const acc_t *acc, int64_t n, bool mean, int64_t count);

/* NaN-propagating steps: once m is NaN, neither test can replace it. */
#define ST_SUM(a, v) ((a) + (v))
#define ST_PROD(a, v) ((a) * (v))
#define ST_MAX(a, v) ((((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define ST_MIN(a, v) ((((v) < (a)) | ((v) != (v))) ? (v) : (a))

#define FOLD_HALF(lane, W, STEP) \
  for (int l = 0; l < (W); l++) lane[l] = STEP(lane[l], lane[l + (W)]);

/* ---- float rows: L lanes of type LT per block, folded into a double ---------- */

/* Rows shorter than 2 * L walk side by side (j outer, rows inner), so each
 * row's accumulator is independent and the adds overlap instead of waiting
 * on one another: this is the [batch, 10] case of a softmax. */
#define FROW(NAME, T, LT, L, ID, STEP)                                                           \
  static void NAME(const char *p, int64_t nrows, int64_t prs, int64_t n, int64_t s, void *accv) { \
    double *restrict acc = accv;                                                                 \
    if (n < 2 * L) {                                                                             \
      for (int64_t j = 0; j < n; j++)                                                            \
        for (int64_t q = 0; q < nrows; q++)                                                      \
          acc[q] = STEP(acc[q], (double)*(const T *)(p + q * prs + j * s));                      \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t q = 0; q < nrows; q++) {                                                        \
      const char *row = p + q * prs;                                                             \
      double a = acc[q];                                                                         \
      for (int64_t i0 = 0; i0 < n; i0 += FBLOCK) {                                               \
        int64_t m = n - i0 < FBLOCK ? n - i0 : FBLOCK;                                           \
        LT lane[L];                                                                              \
        for (int l = 0; l < L; l++) lane[l] = (LT)(ID);                                          \
        int64_t j = 0;                                                                           \
        if (s == (int64_t)sizeof(T)) {                                                           \
          const T *b = (const T *)row + i0;                                                      \
          for (; j + L <= m; j += L)                                                             \
            for (int l = 0; l < L; l++) lane[l] = STEP(lane[l], (LT)b[j + l]);                   \
          for (; j < m; j++) lane[0] = STEP(lane[0], (LT)b[j]);                                  \
        } else {                                                                                 \
          const char *b = row + i0 * s;                                                          \
          for (; j + L <= m; j += L)                                                             \
            for (int l = 0; l < L; l++) lane[l] = STEP(lane[l], (LT) * (const T *)(b + (j + l) * s)); \
          for (; j < m; j++) lane[0] = STEP(lane[0], (LT) * (const T *)(b + j * s));             \
        }                                                                                        \
        /* Fold pairwise, halves of constant width, so it stays in registers. */                \
        if (L >= 32) FOLD_HALF(lane, 16, STEP)                                                   \
        if (L >= 16) FOLD_HALF(lane, 8, STEP)                                                    \
        FOLD_HALF(lane, 4, STEP) FOLD_HALF(lane, 2, STEP) FOLD_HALF(lane, 1, STEP)               \
        a = STEP(a, (double)lane[0]);                                                            \
      }                                                                                          \
      acc[q] = a;                                                                                \
    }                                                                                            \
  }

/* ---- float columns: a block of up to KC lanes of type LT, flushed every CB rows ---- */

#define FCOL(NAME, T, LT, ID, STEP, UNROLL)                                                              \
  static void NAME(void *accv, const char *p, int64_t n, int64_t s, int64_t nrows, int64_t rs) {   \
    double *restrict acc = accv;                                                                   \
    LT blk[KC];                                                                                    \
    for (int64_t r0 = 0; r0 < nrows; r0 += CB) {                                                   \
      int64_t r1 = r0 + CB < nrows ? r0 + CB : nrows;                                              \
      for (int64_t j = 0; j < n; j++) blk[j] = (LT)(ID);                                           \
      int64_t r = r0;                                                                              \
      if (UNROLL && s == (int64_t)sizeof(T)) /* four rows a pass: a quarter of the block traffic */ \
        for (; r + 4 <= r1; r += 4) {                                                              \
          const T *restrict x0 = (const T *)(p + r * rs), *restrict x1 = (const T *)(p + (r + 1) * rs); \
          const T *restrict x2 = (const T *)(p + (r + 2) * rs), *restrict x3 = (const T *)(p + (r + 3) * rs); \
          for (int64_t j = 0; j < n; j++)                                                          \
            blk[j] = STEP(blk[j], STEP(STEP((LT)x0[j], (LT)x1[j]), STEP((LT)x2[j], (LT)x3[j])));     \
        }                                                                                          \
      for (; r < r1; r++) {                                                                        \
        const char *row = p + r * rs;                                                              \
        if (s == (int64_t)sizeof(T)) {                                                             \
          const T *restrict x = (const T *)row;                                                    \
          for (int64_t j = 0; j < n; j++) blk[j] = STEP(blk[j], (LT)x[j]);                         \
        } else {                                                                                   \
          for (int64_t j = 0; j < n; j++) blk[j] = STEP(blk[j], (LT) * (const T *)(row + j * s));  \
        }                                                                                          \
      }                                                                                            \
      for (int64_t j = 0; j < n; j++) acc[j] = STEP(acc[j], (double)blk[j]);                       \
    }                                                                                              \
  }

#define FLOAT_KERNELS(SUF, T, SUM_LT, SUM_L)                      \
  FROW(row_sum_##SUF, T, SUM_LT, SUM_L, 0, ST_SUM)                \
  FROW(row_prod_##SUF, T, double, DLANES, 1, ST_PROD)             \
  FROW(row_max_##SUF, T, T, SUM_L, -INFINITY, ST_MAX)             \
  FROW(row_min_##SUF, T, T, SUM_L, INFINITY, ST_MIN)              \
  FCOL(col_sum_##SUF, T, SUM_LT, 0, ST_SUM, 1)                    \
  FCOL(col_prod_##SUF, T, double, 1, ST_PROD, 1)                  \
  FCOL(col_max_##SUF, T, T, -INFINITY, ST_MAX, 0)                 \
  FCOL(col_min_##SUF, T, T, INFINITY, ST_MIN, 0)

FLOAT_KERNELS(f32, float, float, LANES)
FLOAT_KERNELS(f64, double, double, DLANES)

/* ---- integer rows and columns: int64 sums/products (wrapping), max/min in T ---- */

#define IROW(NAME, T, AT, STEP)                                                                  \
  static void NAME(const char *p, int64_t nrows, int64_t prs, int64_t n, int64_t s, void *accv) { \
    int64_t *restrict acc = accv;                                                                \
    if (n < 16) { /* short rows side by side, as FROW */                                         \
      for (int64_t j = 0; j < n; j++)                                                            \
        for (int64_t q = 0; q < nrows; q++)                                                      \
          acc[q] = (int64_t)STEP((AT)acc[q], (AT) * (const T *)(p + q * prs + j * s));           \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t q = 0; q < nrows; q++) {                                                        \
      const char *row = p + q * prs;                                                             \
      AT a = (AT)acc[q];                                                                         \
      if (s == (int64_t)sizeof(T)) {                                                             \
        const T *x = (const T *)row;                                                             \
        for (int64_t j = 0; j < n; j++) a = STEP(a, (AT)x[j]);                                   \
      } else {                                                                                   \
        for (int64_t j = 0; j < n; j++) a = STEP(a, (AT) * (const T *)(row + j * s));            \
      }                                                                                          \
      acc[q] = (int64_t)a;                                                                       \
    }                                                                                            \
  }

#define ICOL(NAME, T, STEP)                                                                        \
  static void NAME(void *accv, const char *p, int64_t n, int64_t s, int64_t nrows, int64_t rs) {   \
    int64_t *restrict acc = accv;                                                                  \
    for (int64_t r = 0; r < nrows; r++) {                                                          \
      const char *row = p + r * rs;                                                                \
      if (s == (int64_t)sizeof(T)) {                                                               \
        const T *restrict x = (const T *)row;                                                      \
        for (int64_t j = 0; j < n; j++) acc[j] = STEP(acc[j], (int64_t)x[j]);                      \
      } else {                                                                                     \
        for (int64_t j = 0; j < n; j++) acc[j] = STEP(acc[j], (int64_t) * (const T *)(row + j * s)); \
      }                                                                                            \
    }                                                                                              \
  }

#define INT_KERNELS(SUF, T)                        \
  IROW(row_sum_##SUF, T, int64_t, ST_SUM)          \
  IROW(row_prod_##SUF, T, int64_t, ST_PROD)        \
  IROW(row_max_##SUF, T, T, ST_MAX)                \
  IROW(row_min_##SUF, T, T, ST_MIN)                \
  ICOL(col_sum_##SUF, T, ST_SUM)                   \
  ICOL(col_prod_##SUF, T, ST_PROD)                 \
  ICOL(col_max_##SUF, T, ST_MAX)                   \
  ICOL(col_min_##SUF, T, ST_MIN)

/* v != v is always false for integers; the shared steps keep it for floats. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare"
INT_KERNELS(i8, int8_t)
INT_KERNELS(u8, uint8_t)
INT_KERNELS(i32, int32_t)
INT_KERNELS(i64, int64_t)
#pragma GCC diagnostic pop

/* ---- halves: converted to float32 blocks, then the float32 kernels ---------- */

#define HROW(NAME, DT, F32)                                                                      \
  static void NAME(const char *p, int64_t nrows, int64_t prs, int64_t n, int64_t s, void *accv) { \
    double *acc = accv;                                                                          \
    float buf[HBLK];                                                                             \
    for (int64_t q = 0; q < nrows; q++)                                                          \
      for (int64_t i0 = 0; i0 < n; i0 += HBLK) {                                                 \
        int64_t m = n - i0 < HBLK ? n - i0 : HBLK;                                               \
        tide_halves_to_float(DT, m, p + q * prs + i0 * s, s, buf);                               \
        F32((const char *)buf, 1, 0, m, sizeof(float), &acc[q]);                                 \
      }                                                                                          \
  }

#define HCOL(NAME, DT, F32)                                                                      \
  static void NAME(void *acc, const char *p, int64_t n, int64_t s, int64_t nrows, int64_t rs) {  \
    float buf[HROWS * KC];                                                                       \
    for (int64_t r0 = 0; r0 < nrows; r0 += HROWS) {                                              \
      int64_t m = nrows - r0 < HROWS ? nrows - r0 : HROWS;                                       \
      for (int64_t r = 0; r < m; r++) tide_halves_to_float(DT, n, p + (r0 + r) * rs, s, buf + r * KC); \
      F32(acc, (const char *)buf, n, sizeof(float), m, KC * (int64_t)sizeof(float));             \
    }                                                                                            \
  }

#define HALF_KERNELS(SUF, DT)                                                          \
  HROW(row_sum_##SUF, DT, row_sum_f32) HROW(row_prod_##SUF, DT, row_prod_f32)          \
  HROW(row_max_##SUF, DT, row_max_f32) HROW(row_min_##SUF, DT, row_min_f32)            \
  HCOL(col_sum_##SUF, DT, col_sum_f32) HCOL(col_prod_##SUF, DT, col_prod_f32)          \
  HCOL(col_max_##SUF, DT, col_max_f32) HCOL(col_min_##SUF, DT, col_min_f32)

HALF_KERNELS(f16, TIDE_FLOAT16)
HALF_KERNELS(bf16, TIDE_BFLOAT16)

/* ---- stores ------------------------------------------------------------------ */

/* The loop body is written twice so the common case (contiguous, not a mean)
 * is a plain conversion loop the compiler vectorizes. */
#define FSTORE(NAME, T, CONV)                                                                    \
  static void NAME(char *o, int64_t os, const acc_t *acc, int64_t n, bool mean, int64_t count) {  \
    if (!mean && os == (int64_t)sizeof(T)) {                                                     \
      T *restrict out = (T *)o;                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                          \
        double v = acc[i].f;                                                                     \
        out[i] = CONV;                                                                           \
      }                                                                                          \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                            \
      double v = acc[i].f;                                                                       \
      if (mean) v /= (double)count; /* an empty mean is 0/0 = NaN, as TF */                      \
      *(T *)(o + i * os) = CONV;                                                                 \
    }                                                                                            \
  }
FSTORE(store_f32, float, (float)v)
FSTORE(store_f64, double, v)
FSTORE(store_f16, uint16_t, tide_float_to_half((float)v))
FSTORE(store_bf16, uint16_t, tide_float_to_bfloat16((float)v))

/* Integer means truncate toward zero as TF's integer division does; an empty
 * integer mean is 0 (TF's identity for it). Sums wrap to the type. */
#define ISTORE(NAME, T, CONV)                                                                    \
  static void NAME(char *o, int64_t os, const acc_t *acc, int64_t n, bool mean, int64_t count) {  \
    if (!mean && os == (int64_t)sizeof(T)) {                                                     \
      T *restrict out = (T *)o;                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                          \
        int64_t v = acc[i].i;                                                                    \
        out[i] = CONV;                                                                           \
      }                                                                                          \
      return;                                                                                    \
    }                                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                            \
      int64_t v = acc[i].i;                                                                      \
      if (mean) v = count ? v / count : 0;                                                       \
      *(T *)(o + i * os) = CONV;                                                                 \
    }                                                                                            \
  }
ISTORE(store_i8, int8_t, (int8_t)v)
ISTORE(store_u8, uint8_t, (uint8_t)v)
ISTORE(store_i32, int32_t, (int32_t)v)
ISTORE(store_i64, int64_t, v)
ISTORE(store_bool, uint8_t, (uint8_t)(v != 0))

/* ---- kernel tables -------------------------------------------------------------- */

#define KTAB(PFX, SUF) {PFX##_sum_##SUF, PFX##_prod_##SUF, PFX##_max_##SUF, PFX##_min_##SUF}

/* A reduction's kernels, as simd.def's reduce_kernels picks them. */
struct tide_reduce_kernels {
  row_fn row;
  col_fn col;
  store_fn store;
};

/* The row and column kernels of kind k for input dtype dt (bool reads as uint8). */
void TIDE_SIMD(reduce_kernels)(int dt, int k, struct tide_reduce_kernels *out) {
  static const row_fn rows[][4] = {KTAB(row, f32), KTAB(row, f64), KTAB(row, f16), KTAB(row, bf16),
                                   KTAB(row, i8),  KTAB(row, u8),  KTAB(row, i32), KTAB(row, i64),
                                   KTAB(row, u8)};
  static const col_fn cols[][4] = {KTAB(col, f32), KTAB(col, f64), KTAB(col, f16), KTAB(col, bf16),
                                   KTAB(col, i8),  KTAB(col, u8),  KTAB(col, i32), KTAB(col, i64),
                                   KTAB(col, u8)};
  static const store_fn stores[] = {store_f32, store_f64, store_f16, store_bf16, store_i8,
                                    store_u8,  store_i32, store_i64, store_bool};
  out->row = rows[dt][k];
  out->col = cols[dt][k];
  out->store = stores[dt];
}

#ifdef TIDE_SIMD_ONCE /* ---- the planner and the kernel, in the baseline build only ------------------ */

/* Reduced elements per partial when one output's reduction is split. */
static const int64_t CHUNK = 65536;


/* ---- the plan ------------------------------------------------------------------- */

typedef struct plan {
  kind k;
  bool mean, isfloat;
  bool row_mode;   /* the innermost dim is reduced (ROW), else kept (COL) */
  int dt;
  row_fn row;
  col_fn col;
  store_fn store;
  const char *in;  /* input base (moved to the lowest address of flipped dims) */
  char *out;       /* output base, likewise */
  /* kept dims outer -> inner (the last is the run or column dim); strides in bytes */
  int nk;
  int64_t kn[TIDE_MAX_DIMS], kis[TIDE_MAX_DIMS], kos[TIDE_MAX_DIMS];
  /* reduced dims outer -> inner (the last is the row dim) */
  int nr;
  int64_t rn[TIDE_MAX_DIMS], ris[TIDE_MAX_DIMS];
  int64_t nout, rsize;   /* outputs; reduced elements per output */
  int64_t nouter_r;      /* reduced positions outside the row dim */
  int64_t nkc;           /* column strips per outer kept position (COL) */
  int64_t fold;          /* COL: rows read as one wide row (1 = none) */
  int64_t nch, chunk;    /* chunks per output or strip, and their length in reduced positions */
  acc_t *partial;        /* nch > 1: one partial per chunk (KC per chunk for COL) */
} plan;

/* Byte offset of row-major position idx in dims n[0..nd) of strides st. */
static inline int64_t offset_of(int nd, const int64_t *n, const int64_t *st, int64_t idx) {
  int64_t off = 0;
  for (int d = nd - 1; d >= 0 && idx; d--) {
    off += (idx % n[d]) * st[d];
    idx /= n[d];
  }
  return off;
}

/* acc[0..n) = the op's identity (the value of an empty reduction). */
static void init_acc(const plan *P, acc_t *acc, int64_t n) {
  static const int64_t lo[] = {0, 0, 0, 0, INT8_MIN, 0, INT32_MIN, INT64_MIN, 0};
  static const int64_t hi[] = {0, 0, 0, 0, INT8_MAX, UINT8_MAX, INT32_MAX, INT64_MAX, 1};
  if (P->isfloat) {
    double v = P->k == K_SUM ? 0.0 : P->k == K_PROD ? 1.0 : P->k == K_MAX ? -INFINITY : INFINITY;
    for (int64_t i = 0; i < n; i++) acc[i].f = v;
  } else {
    int64_t v = P->k == K_SUM ? 0 : P->k == K_PROD ? 1 : P->k == K_MAX ? lo[P->dt] : hi[P->dt];
    for (int64_t i = 0; i < n; i++) acc[i].i = v;
  }
}

/* a[i] op= b[i] for i < n: how partials and folded lanes meet, always in a fixed order. */
static void combine(const plan *P, acc_t *a, const acc_t *b, int64_t n) {
  if (P->isfloat) {
    switch (P->k) {
    case K_SUM: for (int64_t i = 0; i < n; i++) a[i].f = a[i].f + b[i].f; break;
    case K_PROD: for (int64_t i = 0; i < n; i++) a[i].f = a[i].f * b[i].f; break;
    case K_MAX: for (int64_t i = 0; i < n; i++) a[i].f = ST_MAX(a[i].f, b[i].f); break;
    case K_MIN: for (int64_t i = 0; i < n; i++) a[i].f = ST_MIN(a[i].f, b[i].f); break;
    }
  } else {
    switch (P->k) {
    case K_SUM: for (int64_t i = 0; i < n; i++) a[i].i = a[i].i + b[i].i; break;
    case K_PROD: for (int64_t i = 0; i < n; i++) a[i].i = a[i].i * b[i].i; break;
    case K_MAX: for (int64_t i = 0; i < n; i++) a[i].i = b[i].i > a[i].i ? b[i].i : a[i].i; break;
    case K_MIN: for (int64_t i = 0; i < n; i++) a[i].i = b[i].i < a[i].i ? b[i].i : a[i].i; break;
    }
  }
}

/* ---- ROW units ---------------------------------------------------------------- */

/* Units are outputs; each whole reduction in one call chain, RUN outputs a time. */
static void row_outputs(void *ctx, int64_t u0, int64_t u1) {
  const plan *P = ctx;
  int ki = P->nk - 1, ri = P->nr - 1;
  int64_t kn = P->kn[ki], kis = P->kis[ki], kos = P->kos[ki];
  acc_t acc[RUN];
  for (int64_t o = u0; o < u1;) {
    int64_t ko = o / kn, c = o % kn;
    int64_t len = kn - c;
    if (len > u1 - o) len = u1 - o;
    if (len > RUN) len = RUN;
    const char *ib = P->in + offset_of(ki, P->kn, P->kis, ko) + c * kis;
    init_acc(P, acc, len);
    for (int64_t q = 0; q < P->nouter_r; q++)
      P->row(ib + offset_of(ri, P->rn, P->ris, q), len, kis, P->rn[ri], P->ris[ri], acc);
    P->store(P->out + offset_of(ki, P->kn, P->kos, ko) + c * kos, kos, acc, len, P->mean, P->rsize);
    o += len;
  }
}

/* Units are (output, chunk) pairs; each leaves its partial in P->partial[u]. */
static void row_chunks(void *ctx, int64_t u0, int64_t u1) {
  const plan *P = ctx;
  int ki = P->nk - 1, ri = P->nr - 1;
  int64_t kn = P->kn[ki], n_in = P->rn[ri], s_in = P->ris[ri];
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / P->nch, ch = u % P->nch;
    const char *ib = P->in + offset_of(ki, P->kn, P->kis, o / kn) + (o % kn) * P->kis[ki];
    acc_t acc;
    init_acc(P, &acc, 1);
    int64_t r = ch * P->chunk, r1 = r + P->chunk < P->rsize ? r + P->chunk : P->rsize;
    while (r < r1) {
      int64_t q = r / n_in, j = r % n_in;
      int64_t len = n_in - j < r1 - r ? n_in - j : r1 - r;
      P->row(ib + offset_of(ri, P->rn, P->ris, q) + j * s_in, 1, 0, len, s_in, &acc);
      r += len;
    }
    P->partial[u] = acc;
  }
}

/* ---- COL units ---------------------------------------------------------------- */

/* Units are (strip, chunk) pairs: a strip is up to KC outputs of the column dim
 * under one outer kept position; with one chunk the strip is stored at once.
 * Narrow columns (kn <= KC / 4 whose rows follow one another) are folded: G
 * consecutive rows read as one row of G * kn lanes, and lane g * kn + k is
 * combined into output k at the end; so [N, 4] summed over axis 0 runs as
 * wide vectors rather than 4-lane ones. */
static void col_units(void *ctx, int64_t u0, int64_t u1) {
  const plan *P = ctx;
  int ki = P->nk - 1, ri = P->nr - 1;
  int64_t kn = P->kn[ki], kis = P->kis[ki], kos = P->kos[ki];
  int64_t n_in = P->rn[ri], s_in = P->ris[ri], G = P->fold;
  acc_t acc[KC];
  for (int64_t u = u0; u < u1; u++) {
    int64_t uk = u / P->nch, ch = u % P->nch;
    int64_t ko = uk / P->nkc, k0 = (uk % P->nkc) * KC;
    int64_t lanes = kn - k0 < KC ? kn - k0 : KC;
    const char *ib = P->in + offset_of(ki, P->kn, P->kis, ko) + k0 * kis;
    init_acc(P, acc, lanes * G);
    int64_t r = ch * P->chunk, r1 = r + P->chunk < P->rsize ? r + P->chunk : P->rsize;
    while (r < r1) {
      int64_t q = r / n_in, j = r % n_in;
      int64_t len = n_in - j < r1 - r ? n_in - j : r1 - r;
      const char *pp = ib + offset_of(ri, P->rn, P->ris, q) + j * s_in;
      if (G == 1) {
        P->col(acc, pp, lanes, kis, len, s_in);
      } else {
        int64_t ng = len / G, rest = len % G;
        if (ng) P->col(acc, pp, G * kn, kis, ng, G * s_in);
        if (rest) P->col(acc, pp + ng * G * s_in, rest * kn, kis, 1, 0);
      }
      r += len;
    }
    for (int64_t g = 1; g < G; g++) combine(P, acc, acc + g * kn, kn);
    if (P->nch == 1)
      P->store(P->out + offset_of(ki, P->kn, P->kos, ko) + k0 * kos, kos, acc, lanes, P->mean, P->rsize);
    else
      memcpy(P->partial + u * KC, acc, (size_t)lanes * sizeof(acc_t));
  }
}

/* ---- driver ------------------------------------------------------------------- */

typedef struct gdim { int64_t n, is, os; bool red; } gdim;

/* Fill P's dims from x (and y's strides): drop 1s, flip negatives, sort, merge. */
static void plan_layout(plan *P, const tide_tensor *x, tide_tensor *y, const bool *mask, bool keep) {
  int64_t esz = (int64_t)tide_dtype_size_unchecked(x->dt), osz = (int64_t)tide_dtype_size_unchecked(y->dt);
  const char *ib = x->data;
  char *ob = y->data;
  gdim g[TIDE_MAX_DIMS];
  int nd = 0, od = 0;
  for (int d = 0; d < x->ndim; d++) {
    bool red = mask[d];
    int64_t os = 0;
    if (!red) os = y->strides[od] * osz;
    if (!red || keep) od++;
    int64_t n = x->dims[d], is = x->strides[d] * esz;
    if (n == 1) continue;
    if (is < 0) { /* walk it forwards: the output of a kept dim walks backwards to match */
      ib += (n - 1) * is, is = -is;
      ob += (n - 1) * os, os = -os;
    }
    g[nd++] = (gdim){n, is, os, red};
  }
  /* Largest input stride outside; broadcast (stride 0) dims outermost. */
  for (int i = 1; i < nd; i++) {
    gdim t = g[i];
    uint64_t kt = t.is ? (uint64_t)t.is : UINT64_MAX;
    int j = i;
    for (; j > 0 && (g[j - 1].is ? (uint64_t)g[j - 1].is : UINT64_MAX) < kt; j--) g[j] = g[j - 1];
    g[j] = t;
  }
  int m = 0;
  for (int i = 0; i < nd; i++) {
    if (m > 0 && g[m - 1].red == g[i].red && g[m - 1].is == g[i].is * g[i].n && g[m - 1].os == g[i].os * g[i].n) {
      g[m - 1].n *= g[i].n, g[m - 1].is = g[i].is, g[m - 1].os = g[i].os;
    } else {
      g[m++] = g[i];
    }
  }
  P->in = ib, P->out = ob;
  P->row_mode = m > 0 && g[m - 1].red;
  P->nk = P->nr = 0;
  P->nout = P->rsize = 1;
  for (int i = 0; i < m; i++) {
    if (g[i].red) {
      P->rn[P->nr] = g[i].n, P->ris[P->nr++] = g[i].is;
      P->rsize *= g[i].n;
    } else {
      P->kn[P->nk] = g[i].n, P->kis[P->nk] = g[i].is, P->kos[P->nk++] = g[i].os;
      P->nout *= g[i].n;
    }
  }
  /* Placeholder size-1 dims keep the units free of special cases. */
  if (P->nk == 0) P->kn[0] = 1, P->kis[0] = 0, P->kos[0] = 0, P->nk = 1;
  if (P->nr == 0) P->rn[0] = 1, P->ris[0] = 0, P->nr = 1;
  P->nouter_r = P->rsize / P->rn[P->nr - 1];
}

/* The reduction kernel of sum ... all: plan the layout, run the units, combine partials. */
tide_status tide_cpu_reduce(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *y = out[0];
  bool mask[TIDE_MAX_DIMS];
  tide_status st = tide_reduce_axes(def, attrs, x->ndim, mask);
  if (st) return st;
  if (y->nelem == 0) return TIDE_OK;

  plan P;
  memset(&P, 0, sizeof P);
  switch (def->id) {
  case TIDE_OP_SUM: case TIDE_OP_MEAN: P.k = K_SUM; break;
  case TIDE_OP_PROD: P.k = K_PROD; break;
  case TIDE_OP_MAX: case TIDE_OP_ANY: P.k = K_MAX; break;
  case TIDE_OP_MIN: case TIDE_OP_ALL: P.k = K_MIN; break;
  default: return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: not a reduction", def->name);
  }
  P.mean = def->id == TIDE_OP_MEAN;
  P.dt = x->dt;
  P.isfloat = tide_dtype_is_float(x->dt);
  struct tide_reduce_kernels ks;
  tide_simd.reduce_kernels(x->dt, P.k, &ks);
  P.row = ks.row, P.col = ks.col, P.store = ks.store;
  int64_t osz = (int64_t)tide_dtype_size_unchecked(y->dt);

  if (x->nelem == 0) { /* empty reductions give the identity (mean: NaN / 0) */
    acc_t acc[RUN];
    for (int64_t i = 0; i < y->nelem; i += RUN) {
      int64_t len = y->nelem - i < RUN ? y->nelem - i : RUN;
      init_acc(&P, acc, len);
      P.store((char *)y->data + i * osz, osz, acc, len, P.mean, 0);
    }
    return TIDE_OK;
  }

  plan_layout(&P, x, y, mask, (attrs->flags & TIDE_ATTR_KEEPDIMS) != 0);
  bool row_mode = P.row_mode;
  int64_t kn = P.kn[P.nk - 1];
  P.nkc = (kn + KC - 1) / KC;
  int64_t lanes = kn < KC ? kn : KC;
  int64_t units, per_unit;
  tide_range_fn fn;
  P.fold = 1;
  if (row_mode) {
    if (P.rsize > CHUNK) {
      P.chunk = CHUNK, P.nch = (P.rsize + CHUNK - 1) / CHUNK;
      units = P.nout * P.nch, per_unit = CHUNK, fn = row_chunks;
    } else {
      P.chunk = P.rsize, P.nch = 1;
      units = P.nout, per_unit = P.rsize, fn = row_outputs;
    }
  } else {
    int64_t s_in = P.ris[P.nr - 1], kis = P.kis[P.nk - 1];
    if (kn * 4 <= KC && kis != 0 && s_in == kn * kis) P.fold = KC / kn;
    int64_t strips = (P.nout / kn) * P.nkc;
    P.chunk = P.rsize, P.nch = 1;
    /* Few strips over a long reduction: cut the rows too, into at most
     * MAX_UNITS units in all (which bounds the partials to that many strips). */
    if (strips < MAX_UNITS) {
      int64_t want = (P.rsize * lanes + CHUNK - 1) / CHUNK, cap = MAX_UNITS / strips;
      int64_t nch = want < cap ? want : cap;
      if (nch > 1) {
        P.chunk = (P.rsize + nch - 1) / nch;
        P.nch = (P.rsize + P.chunk - 1) / P.chunk;
      }
    }
    units = strips * P.nch, per_unit = lanes * P.chunk, fn = col_units;
  }
  if (P.nch > 1) {
    size_t per = row_mode ? 1 : KC;
    P.partial = malloc((size_t)units * per * sizeof(acc_t));
    if (!P.partial) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld partial results", def->name,
                                     (long long)units);
  }
  int64_t grain = per_unit > 0 ? TIDE_GRAIN_CHEAP / per_unit : 1;
  tide_parallel_for(units, grain > 0 ? grain : 1, fn, &P);

  if (P.nch > 1) { /* combine the partials in chunk order */
    int ki = P.nk - 1;
    if (row_mode) {
      for (int64_t o = 0; o < P.nout; o++) {
        acc_t *a = P.partial + o * P.nch;
        for (int64_t c = 1; c < P.nch; c++) combine(&P, a, a + c, 1);
        char *ob = P.out + offset_of(ki, P.kn, P.kos, o / kn) + (o % kn) * P.kos[ki];
        P.store(ob, 0, a, 1, P.mean, P.rsize);
      }
    } else {
      for (int64_t uk = 0; uk < units / P.nch; uk++) {
        int64_t ko = uk / P.nkc, k0 = (uk % P.nkc) * KC;
        int64_t ln = kn - k0 < KC ? kn - k0 : KC;
        acc_t *a = P.partial + uk * P.nch * KC;
        for (int64_t c = 1; c < P.nch; c++) combine(&P, a, a + c * KC, ln);
        char *ob = P.out + offset_of(ki, P.kn, P.kos, ko) + k0 * P.kos[ki];
        P.store(ob, P.kos[ki], a, ln, P.mean, P.rsize);
      }
    }
    free(P.partial);
  }
  return TIDE_OK;
}

#endif /* TIDE_SIMD_ONCE */
