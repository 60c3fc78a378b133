/* cpu/fused_f32.c — the float32 fused engine's hot loop: per strip of 8
 * SIMD vectors, one pass over the program with the strip held in registers.
 * Compiled once per ISA (see cpu/fused_f32.h); depends only on vmath.h. */
#include "fused_f32.h"
#include "elementwise.h"
#include "vmath.h"

#ifndef TIDE_FUSED_F32_ISA
#define TIDE_FUSED_F32_ISA native
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

enum { L = TIDE_VF_LANES, STRIP = 8 * TIDE_VF_LANES };
_Static_assert((int)STRIP <= (int)F32_STRIP_MAX, "a strip must fit the program's tiles");

/* The accumulator is eight named vectors, not an array: each handler below
 * touches all eight through these macros, so the compiler keeps them in
 * registers across the dispatch. */
#define EACH(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define LOAD_K(k) acc##k = tide_vload(q + (k) * L);
#define STORE_K(k) tide_vstore(o + (k) * L, acc##k);
#define STREAM_K(k) tide_vstream(o + (k) * L, acc##k);
/* acc = F(acc) and acc = F(acc, P[a]) for each vector. */
#define ON_ACC(F) \
  acc0 = F(acc0); acc1 = F(acc1); acc2 = F(acc2); acc3 = F(acc3); \
  acc4 = F(acc4); acc5 = F(acc5); acc6 = F(acc6); acc7 = F(acc7);
#define WITH_Q(F)                                                                                   \
  acc0 = F(acc0, tide_vload(q)); acc1 = F(acc1, tide_vload(q + L)); acc2 = F(acc2, tide_vload(q + 2 * L)); \
  acc3 = F(acc3, tide_vload(q + 3 * L)); acc4 = F(acc4, tide_vload(q + 4 * L));                      \
  acc5 = F(acc5, tide_vload(q + 5 * L)); acc6 = F(acc6, tide_vload(q + 6 * L));                      \
  acc7 = F(acc7, tide_vload(q + 7 * L));
#define WITH_QR(F, r)                                                                               \
  acc0 = F(acc0, tide_vload(q), tide_vload(r)); acc1 = F(acc1, tide_vload(q + L), tide_vload(r + L)); \
  acc2 = F(acc2, tide_vload(q + 2 * L), tide_vload(r + 2 * L));                                      \
  acc3 = F(acc3, tide_vload(q + 3 * L), tide_vload(r + 3 * L));                                      \
  acc4 = F(acc4, tide_vload(q + 4 * L), tide_vload(r + 4 * L));                                      \
  acc5 = F(acc5, tide_vload(q + 5 * L), tide_vload(r + 5 * L));                                      \
  acc6 = F(acc6, tide_vload(q + 6 * L), tide_vload(r + 6 * L));                                      \
  acc7 = F(acc7, tide_vload(q + 7 * L), tide_vload(r + 7 * L));

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

/* ---- the loop -------------------------------------------------------------------------- */

static void run(const f32_prog *p, const void *base, float **ptr, const int64_t *adv, int64_t nstrips, bool stream) {
  static const void *const label[F32_NUM_OPS] = {
    [F32_END] = &&l_end, [F32_LOAD] = &&l_load, [F32_SAVE] = &&l_save, [F32_OUT] = &&l_out,
    [F32_CALL] = &&l_call, [F32_NEG] = &&l_neg, [F32_ABS] = &&l_abs, [F32_SIGN] = &&l_sign,
    [F32_SQUARE] = &&l_square, [F32_RELU] = &&l_relu, [F32_RINT] = &&l_rint, [F32_FLOOR] = &&l_floor,
    [F32_CEIL] = &&l_ceil, [F32_SQRT] = &&l_sqrt, [F32_RSQRT] = &&l_rsqrt, [F32_RECIP] = &&l_recip,
    [F32_EXP] = &&l_exp, [F32_TANH] = &&l_tanh, [F32_SIGMOID] = &&l_sigmoid, [F32_LEAKY] = &&l_leaky,
    [F32_ISNAN] = &&l_isnan, [F32_ISFINITE] = &&l_isfinite, [F32_NOT] = &&l_not,
    [F32_TO_MASK] = &&l_to_mask, [F32_FROM_MASK] = &&l_from_mask, [F32_ADD] = &&l_add, [F32_SUB] = &&l_sub,
    [F32_RSUB] = &&l_rsub, [F32_MUL] = &&l_mul, [F32_DIV] = &&l_div, [F32_RDIV] = &&l_rdiv,
    [F32_MAX] = &&l_max, [F32_RMAX] = &&l_rmax, [F32_MIN] = &&l_min, [F32_RMIN] = &&l_rmin,
    [F32_FLOORDIV] = &&l_floordiv, [F32_RFLOORDIV] = &&l_rfloordiv, [F32_EQ] = &&l_eq, [F32_NE] = &&l_ne,
    [F32_LT] = &&l_lt, [F32_LE] = &&l_le, [F32_GT] = &&l_gt, [F32_GE] = &&l_ge, [F32_AND] = &&l_and,
    [F32_OR] = &&l_or, [F32_XOR] = &&l_xor, [F32_EQ_MASK] = &&l_eq_mask, [F32_NE_MASK] = &&l_xor,
    [F32_WHERE_C] = &&l_where_c, [F32_WHERE_X] = &&l_where_x, [F32_WHERE_Y] = &&l_where_y,
    [F32_CLIP] = &&l_clip,
  };
  tide_vf acc0 = ZERO, acc1 = ZERO, acc2 = ZERO, acc3 = ZERO, acc4 = ZERO, acc5 = ZERO, acc6 = ZERO, acc7 = ZERO;
  const f32_ins *ip;
  const float *q, *r;
#define NEXT goto *label[(++ip)->op]
#define UN(F) ON_ACC(F) NEXT;
#define BIN(F) q = ptr[ip->a]; WITH_Q(F) NEXT;
#define TRI(F) q = ptr[ip->a]; r = ptr[ip->b]; WITH_QR(F, r) NEXT;
  for (int64_t s = 0; s < nstrips; s++) {
    ip = p->ins;
    goto *label[ip->op];
  l_load: q = ptr[ip->a]; EACH(LOAD_K) NEXT;
  l_save: { float *o = ptr[ip->a]; EACH(STORE_K) } NEXT;
  l_out: {
      float *o = ptr[ip->a];
      if (stream) { EACH(STREAM_K) } else { EACH(STORE_K) }
    }
    NEXT;
  l_call: {
      /* The registry's loop for this op, on tiles: the accumulator goes out
       * to one tile and the result comes back from another. */
      float *in = ptr[p->call_in], *out = ptr[p->call_out], *o = in;
      EACH(STORE_K)
      char *pp[1 + TIDE_FUSED_MAX_ARGS];
      int64_t ss[1 + TIDE_FUSED_MAX_ARGS];
      pp[0] = (char *)out, ss[0] = sizeof(float);
      for (int j = 0; j < ip->nargs; j++) {
        pp[1 + j] = (char *)(ip->args[j] == F32_ACC ? in : ptr[ip->args[j]]);
        ss[1 + j] = sizeof(float);
      }
      tide_binary_ctx unused = {0}; /* float loops report nothing */
      void *ctx = ip->ctx ? (void *)((const char *)base + ip->ctx) : (void *)&unused;
      ip->fn(STRIP, pp, ss, ctx);
      q = out;
      EACH(LOAD_K)
    }
    NEXT;
  l_neg: UN(v_neg)
  l_abs: UN(v_abs)
  l_sign: UN(v_sign)
  l_square: UN(v_square)
  l_relu: UN(v_relu)
  l_rint: UN(tide_vrint)
  l_floor: UN(tide_vfloor)
  l_ceil: UN(tide_vceil)
  l_sqrt: UN(tide_vsqrt)
  l_rsqrt: UN(v_rsqrt)
  l_recip: UN(v_recip)
  l_exp: UN(tide_vexp)
  l_tanh: UN(tide_vtanh)
  l_sigmoid: UN(tide_vsigmoid)
  l_leaky: {
      const tide_vf alpha = tide_vsplat(ip->k);
#define V_LEAKY(x) tide_vselect((x) > ZERO, (x), alpha * (x))
      ON_ACC(V_LEAKY)
#undef V_LEAKY
    }
    NEXT;
  l_isnan: UN(v_isnan)
  l_isfinite: UN(v_isfinite)
  l_not: UN(v_not)
  l_to_mask: UN(v_to_mask)
  l_from_mask: UN(v_from_mask)
  l_add: BIN(v_add)
  l_sub: BIN(v_sub)
  l_rsub: BIN(v_rsub)
  l_mul: BIN(v_mul)
  l_div: BIN(v_div)
  l_rdiv: BIN(v_rdiv)
  l_max: BIN(v_max)
  l_rmax: BIN(v_rmax)
  l_min: BIN(v_min)
  l_rmin: BIN(v_rmin)
  l_floordiv: BIN(v_floordiv)
  l_rfloordiv: BIN(v_rfloordiv)
  l_eq: BIN(v_eq)
  l_ne: BIN(v_ne)
  l_lt: BIN(v_lt)
  l_le: BIN(v_le)
  l_gt: BIN(v_gt)
  l_ge: BIN(v_ge)
  l_and: BIN(v_and)
  l_or: BIN(v_or)
  l_xor: BIN(v_xor)
  l_eq_mask: BIN(v_eq_mask)
  l_where_c: TRI(v_where_c)
  l_where_x: TRI(v_where_x)
  l_where_y: TRI(v_where_y)
  l_clip: TRI(v_clip)
  l_end:
    for (int i = 0; i < p->n_adv; i++) ptr[i] += adv[i];
  }
#undef NEXT
#undef UN
#undef BIN
#undef TRI
}

#define KERNEL_NAME TIDE_FUSED_F32_CAT(tide_fused_f32_, TIDE_FUSED_F32_ISA)
const tide_fused_f32_kernel KERNEL_NAME = {STR(TIDE_FUSED_F32_ISA), STRIP, run};
