/* cpu/unary.c — elementwise ops of one input (neg ... logical_not): typed
 * inner loops for the strided engine; halves compute through float32. The
 * loops are built once per instruction set; the kernel once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "vmath.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <tgmath.h>

/* The typed loops are stamped out for unsigned types too, where `x < 0` is
 * always false: that is intended, so the warning is silenced here. */
#pragma GCC diagnostic ignored "-Wtype-limits"

#define SQRT1_2 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_ALPHA 1.6732632423543772848170429916717

/* One loop: TI in, TO out; EXPR reads `x` (of type T) and may use `alpha` (a
 * double: only the float ops that read it convert it) and `approx`. */
#define UN_LOOP(NAME, TI, TO, EXPR)                                                  \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {               \
    typedef TI T;                                                                    \
    const tide_attrs *attrs = ctx;                                                   \
    const double alpha = attrs->scalars[0];                                          \
    const bool approx = (attrs->flags & TIDE_ATTR_APPROXIMATE) != 0;                 \
    (void)alpha, (void)approx;                                                       \
    if (s[0] == sizeof(TO) && s[1] == sizeof(TI)) {                                  \
      TO *restrict o = (TO *)p[0];                                                   \
      const TI *restrict a = (const TI *)p[1];                                       \
      for (int64_t i = 0; i < n; i++) {                                              \
        T x = a[i];                                                                  \
        o[i] = (TO)(EXPR);                                                           \
      }                                                                              \
    } else {                                                                         \
      for (int64_t i = 0; i < n; i++) {                                              \
        T x = *(const TI *)(p[1] + i * s[1]);                                        \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR);                                       \
      }                                                                              \
    }                                                                                \
  }

#define FLOAT_OP(NAME, EXPR) UN_LOOP(NAME##_f32, float, float, EXPR) UN_LOOP(NAME##_f64, double, double, EXPR)
#define INT_OP(NAME, EXPR)                                                                              \
  UN_LOOP(NAME##_i8, int8_t, int8_t, EXPR) UN_LOOP(NAME##_u8, uint8_t, uint8_t, EXPR)                  \
  UN_LOOP(NAME##_i32, int32_t, int32_t, EXPR) UN_LOOP(NAME##_i64, int64_t, int64_t, EXPR)
#define NUM_OP(NAME, FEXPR, IEXPR) FLOAT_OP(NAME, FEXPR) INT_OP(NAME, IEXPR)

NUM_OP(neg, -x, -x)
NUM_OP(abs, fabs(x), x < 0 ? -x : x)
NUM_OP(sign, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x), (x > 0) - (x < 0))
NUM_OP(square, x * x, x * x)
NUM_OP(relu, x < 0 ? (T)0 : x, x < 0 ? 0 : x)
NUM_OP(round, rint(x), x)
/* float32 exp, tanh and sigmoid through vmath.h's vector forms (glibc's
 * expf/tanhf are scalar calls of ~60-100 instructions; an LSTM cell spent
 * more time in them than in its matmuls). The fused engine uses the same
 * functions, so a fused node and the eager op give the same bits. A short
 * tail or a strided run goes through one padded vector: every element gets
 * the lane computation whatever its position. float64 calls libm. */
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
VEC_F32_LOOP(exp_f32, tide_vexp)
VEC_F32_LOOP(tanh_f32, tide_vtanh)
VEC_F32_LOOP(sigmoid_f32, tide_vsigmoid)
UN_LOOP(exp_f64, double, double, exp(x))
FLOAT_OP(expm1, expm1(x))
FLOAT_OP(log, log(x))
FLOAT_OP(log1p, log1p(x))
FLOAT_OP(sqrt, sqrt(x))
FLOAT_OP(rsqrt, (T)1 / sqrt(x))
FLOAT_OP(reciprocal, (T)1 / x)
FLOAT_OP(sin, sin(x))
FLOAT_OP(cos, cos(x))
UN_LOOP(tanh_f64, double, double, tanh(x))
UN_LOOP(sigmoid_f64, double, double, x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)))
FLOAT_OP(elu, x > 0 ? x : expm1(x))
FLOAT_OP(selu, (T)SELU_SCALE * (x > 0 ? x : (T)SELU_ALPHA * expm1(x)))
/* gelu's tanh approximation 0.5 x (1 + tanh(u)): as written (TF's) where
 * u >= 0; below, as the same function x * sigmoid(2u) = x e^2u / (1 + e^2u),
 * because 1 + tanh(u) cancels there (digits lost from u of about -1, and the
 * whole tail rounded to -0 below u of about -9 in float32). */
static inline float gelu_tanh_f32(float x) {
  float u = (float)SQRT_2_OVER_PI * (x + 0.044715f * x * x * x);
  if (u >= 0) return 0.5f * x * (1 + tanhf(u));
  float e = expf(2 * u);
  return x * e / (1 + e);
}
static inline double gelu_tanh_f64(double x) {
  double u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
  if (u >= 0) return 0.5 * x * (1 + tanh(u));
  double e = exp(2 * u);
  return x * e / (1 + e);
}
#define GELU_TANH(x) _Generic((x), float: gelu_tanh_f32, default: gelu_tanh_f64)(x)
/* The erf form as 0.5 x erfc(-x / sqrt 2) (TF's): 1 + erf(x / sqrt 2) loses
 * every digit below x of about -5.5 in float32, erfc keeps them. */
FLOAT_OP(gelu, approx ? GELU_TANH(x) : (T)0.5 * x * erfc(-x * (T)SQRT1_2))
FLOAT_OP(leaky_relu, x > 0 ? x : (T)alpha * x)
FLOAT_OP(softplus, x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)))
FLOAT_OP(erf, erf(x))
FLOAT_OP(floor, floor(x))
FLOAT_OP(ceil, ceil(x))
UN_LOOP(isnan_f32, float, uint8_t, isnan(x))
UN_LOOP(isnan_f64, double, uint8_t, isnan(x))
UN_LOOP(isfinite_f32, float, uint8_t, isfinite(x))
UN_LOOP(isfinite_f64, double, uint8_t, isfinite(x))
UN_LOOP(logical_not_b, uint8_t, uint8_t, !x)
FLOAT_OP(tan, tan(x))
FLOAT_OP(erfc, erfc(x))
UN_LOOP(isinf_f32, float, uint8_t, isinf(x))
UN_LOOP(isinf_f64, double, uint8_t, isinf(x))
INT_OP(invert, ~x)

#define PICK_FLOAT(NAME) return dt == TIDE_FLOAT64 ? NAME##_f64 : NAME##_f32
#define PICK_NUM(NAME) TIDE_RETURN_NUM_LOOP(NAME, dt)

tide_loop_fn TIDE_SIMD(unary_loop)(int op, int dt) {
  switch (op) {
  case TIDE_OP_NEG: PICK_NUM(neg);
  case TIDE_OP_ABS: PICK_NUM(abs);
  case TIDE_OP_SIGN: PICK_NUM(sign);
  case TIDE_OP_SQUARE: PICK_NUM(square);
  case TIDE_OP_RELU: PICK_NUM(relu);
  case TIDE_OP_ROUND: PICK_NUM(round);
  case TIDE_OP_EXP: PICK_FLOAT(exp);
  case TIDE_OP_EXPM1: PICK_FLOAT(expm1);
  case TIDE_OP_LOG: PICK_FLOAT(log);
  case TIDE_OP_LOG1P: PICK_FLOAT(log1p);
  case TIDE_OP_SQRT: PICK_FLOAT(sqrt);
  case TIDE_OP_RSQRT: PICK_FLOAT(rsqrt);
  case TIDE_OP_RECIPROCAL: PICK_FLOAT(reciprocal);
  case TIDE_OP_SIN: PICK_FLOAT(sin);
  case TIDE_OP_COS: PICK_FLOAT(cos);
  case TIDE_OP_TANH: PICK_FLOAT(tanh);
  case TIDE_OP_SIGMOID: PICK_FLOAT(sigmoid);
  case TIDE_OP_ELU: PICK_FLOAT(elu);
  case TIDE_OP_SELU: PICK_FLOAT(selu);
  case TIDE_OP_GELU: PICK_FLOAT(gelu);
  case TIDE_OP_LEAKY_RELU: PICK_FLOAT(leaky_relu);
  case TIDE_OP_SOFTPLUS: PICK_FLOAT(softplus);
  case TIDE_OP_ERF: PICK_FLOAT(erf);
  case TIDE_OP_FLOOR: PICK_FLOAT(floor);
  case TIDE_OP_CEIL: PICK_FLOAT(ceil);
  case TIDE_OP_ISNAN: PICK_FLOAT(isnan);
  case TIDE_OP_ISFINITE: PICK_FLOAT(isfinite);
  case TIDE_OP_LOGICAL_NOT: return logical_not_b;
  case TIDE_OP_TAN: PICK_FLOAT(tan);
  case TIDE_OP_ERFC: PICK_FLOAT(erfc);
  case TIDE_OP_ISINF: PICK_FLOAT(isinf);
  case TIDE_OP_INVERT: TIDE_RETURN_INT_LOOP(invert, dt);
  default: return NULL;
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernel, in the baseline build only ---------------------------------- */

tide_loop_fn tide_unary_loop(int op, int dt) { return tide_simd.unary_loop(op, dt); }

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
