/* cpu/fused_f32.c — the float32 fused engine's hot loops: per strip of 8
 * SIMD vectors (or 2, for short runs and tails), one pass over the program
 * with the strip held in registers. Compiled once per instruction set (the
 * Makefile's SIMD_SRC, cpu/simd.h); depends only on vmath.h. */
#include "fused_f32.h"
#include "elementwise.h"
#include "simd.h"
#include "vmath.h"

#define STR2(x) #x
#define STR(x) STR2(x)

enum { L = TIDE_VF_LANES, STRIP = 8 * TIDE_VF_LANES, SHORT = 2 * TIDE_VF_LANES };
_Static_assert((int)STRIP <= (int)F32_STRIP_MAX, "a strip must fit the program's tiles");

/* The accumulator is KVEC named vectors, not an array: each handler touches
 * all of them through these macros, so the compiler keeps them in registers
 * across the dispatch. */
#define LOAD_K(k) acc##k = tide_vload(q + (k) * L);
#define STORE_K(k) tide_vstore(o + (k) * L, acc##k);
#define STREAM_K(k) tide_vstream(o + (k) * L, acc##k);
/* acc = F(acc), acc = F(acc, P[a]) and acc = F(acc, P[a], P[b]) for each vector. */
#define ON_ACC_1(F, k) acc##k = F(acc##k);
#define WITH_Q_1(F, k) acc##k = F(acc##k, tide_vload(q + (k) * L));
#define WITH_QR_1(F, r, k) acc##k = F(acc##k, tide_vload(q + (k) * L), tide_vload((r) + (k) * L));
/* ---- the ops, each exactly as its scalar C loop computes it -------------------------- */

#define ZERO ((tide_vf){0})
#define ONE tide_vsplat(1.0f)
static inline tide_vf v_neg(tide_vf x) { return -x; }
static inline tide_vf v_abs(tide_vf x) { return (tide_vf)((tide_vi)x & ((tide_vi){0} + INT32_MAX)); }
static inline tide_vf v_sign(tide_vf x) { /* x > 0 ? 1 : (x < 0 ? -1 : x) */
  return tide_vselect(x > ZERO, ONE, tide_vselect(x < ZERO, -ONE, x));
}
static inline tide_vf v_square(tide_vf x) { return x * x; }
static inline tide_vf v_relu(tide_vf x) { return tide_vselect(x < ZERO, ZERO, x); } /* -0 and NaN stay */
static inline tide_vf v_rsqrt(tide_vf x) { return ONE / tide_vsqrt(x); }
static inline tide_vf v_recip(tide_vf x) { return ONE / x; }
static inline tide_vf v_isnan(tide_vf x) { return tide_vbits(x != x); }
static inline tide_vf v_isfinite(tide_vf x) { return tide_vbits(v_abs(x) < tide_vsplat(__builtin_inff())); }
static inline tide_vf v_not(tide_vf x) { return tide_vbits(~tide_vmask(x)); }
static inline tide_vf v_to_mask(tide_vf x) { return tide_vbits(x != ZERO); }
static inline tide_vf v_from_mask(tide_vf x) { return (tide_vf)(tide_vmask(x) & tide_vmask(ONE)); }

static inline tide_vf v_add(tide_vf x, tide_vf y) { return x + y; }
static inline tide_vf v_sub(tide_vf x, tide_vf y) { return x - y; }
static inline tide_vf v_rsub(tide_vf y, tide_vf x) { return x - y; }
static inline tide_vf v_mul(tide_vf x, tide_vf y) { return x * y; }
static inline tide_vf v_div(tide_vf x, tide_vf y) { return x / y; }
static inline tide_vf v_rdiv(tide_vf y, tide_vf x) { return x / y; }
/* maximum: (x > y || x != x) ? x : y — NaN from either side, and y on ties
 * (+0 and -0), so the R forms keep the operands' order. */
static inline tide_vf v_max(tide_vf x, tide_vf y) { return tide_vselect((x > y) | (x != x), x, y); }
static inline tide_vf v_rmax(tide_vf y, tide_vf x) { return v_max(x, y); }
static inline tide_vf v_min(tide_vf x, tide_vf y) { return tide_vselect((x < y) | (x != x), x, y); }
static inline tide_vf v_rmin(tide_vf y, tide_vf x) { return v_min(x, y); }
static inline tide_vf v_floordiv(tide_vf x, tide_vf y) { return tide_vfloor(x / y); }
static inline tide_vf v_rfloordiv(tide_vf y, tide_vf x) { return tide_vfloor(x / y); }
static inline tide_vf v_eq(tide_vf x, tide_vf y) { return tide_vbits(x == y); }
static inline tide_vf v_ne(tide_vf x, tide_vf y) { return tide_vbits(x != y); }
static inline tide_vf v_lt(tide_vf x, tide_vf y) { return tide_vbits(x < y); }
static inline tide_vf v_le(tide_vf x, tide_vf y) { return tide_vbits(x <= y); }
static inline tide_vf v_gt(tide_vf x, tide_vf y) { return tide_vbits(x > y); }
static inline tide_vf v_ge(tide_vf x, tide_vf y) { return tide_vbits(x >= y); }
static inline tide_vf v_and(tide_vf x, tide_vf y) { return tide_vbits(tide_vmask(x) & tide_vmask(y)); }
static inline tide_vf v_or(tide_vf x, tide_vf y) { return tide_vbits(tide_vmask(x) | tide_vmask(y)); }
static inline tide_vf v_xor(tide_vf x, tide_vf y) { return tide_vbits(tide_vmask(x) ^ tide_vmask(y)); }
static inline tide_vf v_eq_mask(tide_vf x, tide_vf y) { return tide_vbits(~(tide_vmask(x) ^ tide_vmask(y))); }

static inline tide_vf v_where_c(tide_vf c, tide_vf x, tide_vf y) { return tide_vselect(tide_vmask(c), x, y); }
static inline tide_vf v_where_x(tide_vf x, tide_vf c, tide_vf y) { return tide_vselect(tide_vmask(c), x, y); }
static inline tide_vf v_where_y(tide_vf y, tide_vf c, tide_vf x) { return tide_vselect(tide_vmask(c), x, y); }
/* x < lo ? lo : (x > hi ? hi : x) */
static inline tide_vf v_clip(tide_vf x, tide_vf lo, tide_vf hi) {
  return tide_vselect(x < lo, lo, tide_vselect(x > hi, hi, x));
}

/* Strips of 8 vectors. */
#define KVEC 8
#define RUN_NAME run8
#define EACH(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define ON_ACC(F) ON_ACC_1(F, 0) ON_ACC_1(F, 1) ON_ACC_1(F, 2) ON_ACC_1(F, 3) ON_ACC_1(F, 4) ON_ACC_1(F, 5) ON_ACC_1(F, 6) ON_ACC_1(F, 7)
#define WITH_Q(F) WITH_Q_1(F, 0) WITH_Q_1(F, 1) WITH_Q_1(F, 2) WITH_Q_1(F, 3) WITH_Q_1(F, 4) WITH_Q_1(F, 5) WITH_Q_1(F, 6) WITH_Q_1(F, 7)
#define WITH_QR(F, r) \
  WITH_QR_1(F, r, 0) WITH_QR_1(F, r, 1) WITH_QR_1(F, r, 2) WITH_QR_1(F, r, 3) \
  WITH_QR_1(F, r, 4) WITH_QR_1(F, r, 5) WITH_QR_1(F, r, 6) WITH_QR_1(F, r, 7)
#define ACC_DECL \
  tide_vf acc0 = ZERO, acc1 = ZERO, acc2 = ZERO, acc3 = ZERO, acc4 = ZERO, acc5 = ZERO, acc6 = ZERO, acc7 = ZERO;
#include "fused_f32_loop.h"
#undef KVEC
#undef RUN_NAME
#undef EACH
#undef ON_ACC
#undef WITH_Q
#undef WITH_QR
#undef ACC_DECL

/* Strips of 2 vectors: a run shorter than a long strip (an LSTM's 32
 * elements) does a quarter of the work, and tails copy less. */
#define KVEC 2
#define RUN_NAME run2
#define EACH(M) M(0) M(1)
#define ON_ACC(F) ON_ACC_1(F, 0) ON_ACC_1(F, 1)
#define WITH_Q(F) WITH_Q_1(F, 0) WITH_Q_1(F, 1)
#define WITH_QR(F, r) WITH_QR_1(F, r, 0) WITH_QR_1(F, r, 1)
#define ACC_DECL tide_vf acc0 = ZERO, acc1 = ZERO;
#include "fused_f32_loop.h"

/* This level's kernel (simd.def's fused_f32_kernel). */
static const tide_fused_f32_kernel kernel = {STR(TIDE_SIMD_LEVEL), STRIP, run8, SHORT, run2};
const tide_fused_f32_kernel *TIDE_SIMD(fused_f32_kernel)(void) { return &kernel; }
