/* cpu/unary.c — the CPU loops of the one-input ops of core/elementwise.def
 * (neg ... invert): typed inner loops for the strided engine, picked by op and
 * dtype; halves compute through float32. The loops are built once per
 * instruction set; the kernel once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "vmath.h"
#include "../core/formulas.h"
#include "../core/parallel.h"
#include "../core/registry.h"

/* The typed loops are stamped out for unsigned types too, where `x < 0` is
 * always false: that is intended, so the warning is silenced here. */
#pragma GCC diagnostic ignored "-Wtype-limits"

/* One loop: TI in, computed as TC (T in the formula), TO out; EXPR reads `x`
 * and may use `alpha` (a double: only the float ops that read it convert it)
 * and `approx`. */
#define UN_LOOP(NAME, TI, TC, TO, EXPR)                                              \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {               \
    typedef TC T;                                                                    \
    const tide_attrs *attrs = ctx;                                                   \
    const double alpha = attrs->scalars[0];                                          \
    const bool approx = (attrs->flags & TIDE_ATTR_APPROXIMATE) != 0;                 \
    (void)alpha, (void)approx;                                                       \
    if (s[0] == sizeof(TO) && s[1] == sizeof(TI)) {                                  \
      TO *restrict o = (TO *)p[0];                                                   \
      const TI *restrict a = (const TI *)p[1];                                       \
      for (int64_t i = 0; i < n; i++) {                                              \
        T x = (T)a[i];                                                               \
        o[i] = (TO)(EXPR);                                                           \
      }                                                                              \
    } else {                                                                         \
      for (int64_t i = 0; i < n; i++) {                                              \
        T x = (T)(*(const TI *)(p[1] + i * s[1]));                                   \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR);                                       \
      }                                                                              \
    }                                                                                \
  }

/* Each family's loops, named ID_f32 ... ID_i64 (ID_b for bools). */
#define UN_FLOAT(ID, F) UN_LOOP(ID##_f32, float, float, float, F) UN_LOOP(ID##_f64, double, double, double, F)
#define UN_INT(ID, I)                                                                                   \
  UN_LOOP(ID##_i8, int8_t, int8_t, int8_t, I) UN_LOOP(ID##_u8, uint8_t, uint8_t, uint8_t, I)           \
  UN_LOOP(ID##_i32, int32_t, int32_t, int32_t, I) UN_LOOP(ID##_i64, int64_t, int64_t, int64_t, I)
#define UN_NUM(ID, F, I) UN_FLOAT(ID, F) UN_INT(ID, I)
/* A predicate writes 0 or 1 (tide/tensor.h: a bool byte is never anything else), whatever
 * nonzero value its C test returns (glibc's isinf gives -1 for -inf). */
#define UN_PRED(ID, F) UN_LOOP(ID##_f32, float, float, uint8_t, (F) != 0) UN_LOOP(ID##_f64, double, double, uint8_t, (F) != 0)
#define UN_BOOL(ID, B) UN_LOOP(ID##_b, uint8_t, bool, uint8_t, B)
#define TIDE_UNARY(ID, FAMILY, ...) UN_##FAMILY(ID, __VA_ARGS__)
#include "../core/elementwise.def"

/* float32 exp, tanh and sigmoid through vmath.h's vector forms (glibc's
 * expf/tanhf are scalar calls of ~60-100 instructions; an LSTM cell spent
 * more time in them than in its matmuls). The fused engine uses the same
 * functions, so a fused node and the eager op give the same bits. A short
 * tail or a strided run goes through one padded vector: every element gets
 * the lane computation whatever its position. float64 runs the formula. */
#define VEC_F32_LOOP(NAME, VFN)                                                      \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {               \
    (void)ctx;                                                                       \
    enum { L = TIDE_VF_LANES };                                                      \
    int64_t i = 0;                                                                   \
    if (s[0] == 4 && s[1] == 4) {                                                    \
      float *o = (float *)p[0];                                                      \
      const float *a = (const float *)p[1];                                          \
      for (; i + L <= n; i += L) tide_vstore(o + i, VFN(tide_vload(a + i)));         \
    }                                                                                \
    for (; i < n; i += L) {                                                          \
      float lanes[L] = {0};                                                          \
      int64_t m = n - i < L ? n - i : L;                                             \
      for (int64_t j = 0; j < m; j++) lanes[j] = *(const float *)(p[1] + (i + j) * s[1]); \
      tide_vstore(lanes, VFN(tide_vload(lanes)));                                    \
      for (int64_t j = 0; j < m; j++) *(float *)(p[0] + (i + j) * s[0]) = lanes[j];  \
    }                                                                                \
  }
VEC_F32_LOOP(exp_vf32, tide_vexp)
VEC_F32_LOOP(tanh_vf32, tide_vtanh)
VEC_F32_LOOP(sigmoid_vf32, tide_vsigmoid)

/* The float32 loop of a FLOAT op: its vector form where vmath.h has one, else the formula's. */
static inline tide_loop_fn f32_loop(int op, tide_loop_fn formula) {
  switch (op) {
  case TIDE_OP_EXP: return exp_vf32;
  case TIDE_OP_TANH: return tanh_vf32;
  case TIDE_OP_SIGMOID: return sigmoid_vf32;
  default: return formula;
  }
}

/* Each family's pick for dtype dt (halves and any other dtype get the float32 loop). */
#define PICK_FLOAT(ID) return dt == TIDE_FLOAT64 ? ID##_f64 : f32_loop(TIDE_OP_##ID, ID##_f32);
#define PICK_INT(ID) TIDE_RETURN_INT_LOOP(ID, dt)
#define PICK_NUM(ID) TIDE_RETURN_NUM_LOOP(ID, dt)
#define PICK_PRED(ID) return dt == TIDE_FLOAT64 ? ID##_f64 : ID##_f32;
#define PICK_BOOL(ID) return ID##_b;

tide_loop_fn TIDE_SIMD(unary_loop)(int op, int dt) {
  switch (op) {
#define TIDE_UNARY(ID, FAMILY, ...) case TIDE_OP_##ID: PICK_##FAMILY(ID)
#include "../core/elementwise.def"
  default: return NULL;
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernel, in the baseline build only ---------------------------------- */

tide_loop_fn tide_unary_loop(int op, int dt) { return tide_simd.unary_loop(op, dt); }

/* elementwise.def and ops.def agree, or this file does not compile: each
 * TIDE_UNARY row names an op whose CPU kernel is tide_cpu_unary, no op has
 * two rows (their enumerators would clash), and the rows are as many as those ops. */
enum {
#define TIDE_UNARY(ID, ...) unary_formula_of_##ID,
#include "../core/elementwise.def"
  n_unary_formulas
};
enum {
#define TIDE_OP(ID, name, n_in, n_out, dts, out, infer, cpu, ...) \
  kernel_of_##ID##_is_unary = TIDE_IS_UNARY_KERNEL(cpu),
#include "tide/ops.def"
#undef TIDE_OP
  n_unary_kernel_ops = 0
#define TIDE_OP(ID, name, n_in, n_out, dts, out, infer, cpu, ...) +TIDE_IS_UNARY_KERNEL(cpu)
#include "tide/ops.def"
#undef TIDE_OP
};
#define TIDE_UNARY(ID, ...) \
  _Static_assert(kernel_of_##ID##_is_unary, "elementwise.def: " #ID "'s CPU kernel in ops.def is not tide_cpu_unary");
#include "../core/elementwise.def"
_Static_assert((int)n_unary_formulas == (int)n_unary_kernel_ops,
               "core/elementwise.def needs one TIDE_UNARY row per tide_cpu_unary op of ops.def");

tide_status tide_cpu_unary(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_loop_fn loop = tide_unary_loop(def->id, in[0]->dt);
  if (!loop) return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no CPU loop", def->name);
  /* Transcendental work pays for threads sooner. */
  bool cheap = def->id == TIDE_OP_NEG || def->id == TIDE_OP_ABS || def->id == TIDE_OP_SQUARE || def->id == TIDE_OP_RELU;
  int64_t grain = cheap ? TIDE_GRAIN_CHEAP : TIDE_GRAIN_COSTLY;
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (!tide_is_half(x->dt) && x->nelem == o->nelem && tide_tensor_is_contiguous(x)) {
    /* Contiguous input: one flat row, no iterator set-up. */
    char *p[2] = {o->data, x->data};
    int64_t s[2] = {(int64_t)tide_dtype_size_unchecked(o->dt), (int64_t)tide_dtype_size_unchecked(x->dt)};
    return tide_run_flat(loop, 2, p, s, o->nelem, grain, (void *)attrs);
  }
  tide_iter it;
  tide_status st = tide_iter_build(&it, def->name, o, 1, in);
  if (st) return st;
  it.grain = grain;
  return tide_iter_run(&it, loop, (void *)attrs);
}

#endif /* TIDE_SIMD_ONCE */
