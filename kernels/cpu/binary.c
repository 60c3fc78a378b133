/* cpu/binary.c — elementwise ops of two broadcast inputs: arithmetic,
 * comparisons, logic and tf.bitwise. Integer division by zero and negative integer
 * powers are reported as errors, as TensorFlow does on CPU. The loops are
 * built once per instruction set; the kernel once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <tgmath.h>

/* Loops are stamped out for unsigned types too, where `x < 0` is always false. */
#pragma GCC diagnostic ignored "-Wtype-limits"

enum { BAD_DIV_ZERO = TIDE_BINARY_DIV_ZERO, BAD_NEG_POW = TIDE_BINARY_NEG_POW };

static inline void flag_bad(void *ctx, int bit) {
  __atomic_or_fetch(&((tide_binary_ctx *)ctx)->bad, bit, __ATOMIC_RELAXED);
}

/* Integer floor division and modulo with Python/TF semantics. */
#define INT_HELPERS(T, SUF)                                                                 \
  static inline T ifloordiv_##SUF(T x, T y, void *ctx) {                                  \
    if (y == 0) { flag_bad(ctx, BAD_DIV_ZERO); return 0; }                                \
    if ((T)-1 < 0 && y == (T)-1) return (T)(0 - x); /* signed only: MIN / -1 overflows */ \
    T q = x / y;                                                                          \
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;                                        \
    return q;                                                                             \
  }                                                                                       \
  static inline T imod_##SUF(T x, T y, void *ctx) {                                       \
    if (y == 0) { flag_bad(ctx, BAD_DIV_ZERO); return 0; }                                \
    if ((T)-1 < 0 && y == (T)-1) return 0;                                                \
    T r = x % y;                                                                          \
    if (r != 0 && ((r < 0) != (y < 0))) r += y;                                           \
    return r;                                                                             \
  }                                                                                       \
  static inline T ipow_##SUF(T x, T y, void *ctx) {                                       \
    if (y < 0) { flag_bad(ctx, BAD_NEG_POW); return 0; }                                  \
    T r = 1;                                                                              \
    while (y) {                                                                           \
      if (y & 1) r = (T)(r * x);                                                          \
      x = (T)(x * x);                                                                     \
      y >>= 1;                                                                            \
    }                                                                                     \
    return r;                                                                             \
  }
INT_HELPERS(int8_t, i8)
INT_HELPERS(uint8_t, u8)
INT_HELPERS(int32_t, i32)
INT_HELPERS(int64_t, i64)

/* Integer truncating division and remainder (C's / and %, TF's truncatediv
 * and truncatemod), with division by zero an error and MIN / -1 wrapping. */
#define INT_TRUNC_HELPERS(T, SUF)                                                           \
  static inline T itruncdiv_##SUF(T x, T y, void *ctx) {                                  \
    if (y == 0) { flag_bad(ctx, BAD_DIV_ZERO); return 0; }                                \
    if ((T)-1 < 0 && y == (T)-1) return (T)(0 - x);                                       \
    return (T)(x / y);                                                                    \
  }                                                                                       \
  static inline T itruncmod_##SUF(T x, T y, void *ctx) {                                  \
    if (y == 0) { flag_bad(ctx, BAD_DIV_ZERO); return 0; }                                \
    if ((T)-1 < 0 && y == (T)-1) return 0;                                                \
    return (T)(x % y);                                                                    \
  }
INT_TRUNC_HELPERS(int8_t, i8)
INT_TRUNC_HELPERS(uint8_t, u8)
INT_TRUNC_HELPERS(int32_t, i32)
INT_TRUNC_HELPERS(int64_t, i64)

/* Shifts as TF's CPU kernels do them: the count clamped into [0, bits - 1]
 * (so no count is undefined), the left shift done unsigned (bits shifted
 * out are lost, none is UB), the right shift arithmetic for signed types. */
#define SHIFT_HELPERS(T, U, SUF)                                                           \
  static inline T shift_count_##SUF(T y) {                                                \
    const T top = (T)(sizeof(T) * 8 - 1);                                                 \
    return y < 0 ? 0 : y > top ? top : y;                                                 \
  }                                                                                       \
  static inline T ishl_##SUF(T x, T y) { return (T)((U)x << shift_count_##SUF(y)); }      \
  static inline T ishr_##SUF(T x, T y) { return (T)(x >> shift_count_##SUF(y)); }
SHIFT_HELPERS(int8_t, uint8_t, i8)
SHIFT_HELPERS(uint8_t, uint8_t, u8)
SHIFT_HELPERS(int32_t, uint32_t, i32)
SHIFT_HELPERS(int64_t, uint64_t, i64)

static inline float fmodf_floor(float x, float y) {
  float r = fmodf(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
static inline double fmod_floor(double x, double y) {
  double r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
#define FMOD_FLOOR(x, y) _Generic((x), float: fmodf_floor, default: fmod_floor)(x, y)

/* One loop: TI inputs, TO output; EXPR reads x, y (type T) and may use ctx.
 * Contiguous and scalar-broadcast rows get plain loops the compiler vectorizes. */
#define BIN_LOOP(NAME, TI, TO, EXPR)                                                    \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {                  \
    typedef TI T;                                                                       \
    (void)ctx;                                                                          \
    TO *restrict o = (TO *)p[0];                                                        \
    const TI *restrict a = (const TI *)p[1], *restrict b = (const TI *)p[2];            \
    if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == sizeof(TI)) {               \
      for (int64_t i = 0; i < n; i++) { T x = a[i], y = b[i]; o[i] = (TO)(EXPR); }      \
    } else if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == 0) {                 \
      const T y = b[0];                                                                 \
      for (int64_t i = 0; i < n; i++) { T x = a[i]; o[i] = (TO)(EXPR); }                \
    } else if (s[0] == sizeof(TO) && s[1] == 0 && s[2] == sizeof(TI)) {                 \
      const T x = a[0];                                                                 \
      for (int64_t i = 0; i < n; i++) { T y = b[i]; o[i] = (TO)(EXPR); }                \
    } else {                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                 \
        T x = *(const TI *)(p[1] + i * s[1]), y = *(const TI *)(p[2] + i * s[2]);       \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR);                                          \
      }                                                                                 \
    }                                                                                   \
  }

/* Arithmetic: same type in and out; integer expressions name their helper suffix. */
#define ARITH(NAME, FEXPR, IEXPR)                                                        \
  BIN_LOOP(NAME##_f32, float, float, FEXPR)                                              \
  BIN_LOOP(NAME##_f64, double, double, FEXPR)                                            \
  BIN_LOOP(NAME##_i8, int8_t, int8_t, IEXPR(i8))                                         \
  BIN_LOOP(NAME##_u8, uint8_t, uint8_t, IEXPR(u8))                                       \
  BIN_LOOP(NAME##_i32, int32_t, int32_t, IEXPR(i32))                                     \
  BIN_LOOP(NAME##_i64, int64_t, int64_t, IEXPR(i64))

#define I_ADD(S) x + y
#define I_SUB(S) x - y
#define I_MUL(S) x * y
#define I_FLOORDIV(S) ifloordiv_##S(x, y, ctx)
#define I_MOD(S) imod_##S(x, y, ctx)
#define I_POW(S) ipow_##S(x, y, ctx)
#define I_MAX(S) x > y ? x : y
#define I_MIN(S) x < y ? x : y

ARITH(add, x + y, I_ADD)
ARITH(sub, x - y, I_SUB)
ARITH(mul, x * y, I_MUL)
ARITH(floordiv, floor(x / y), I_FLOORDIV)
ARITH(mod, FMOD_FLOOR(x, y), I_MOD)
ARITH(pow, pow(x, y), I_POW)
ARITH(maximum, (x > y || x != x) ? x : y, I_MAX) /* NaN propagates */
ARITH(minimum, (x < y || x != x) ? x : y, I_MIN)

#define I_TRUNCATEDIV(S) itruncdiv_##S(x, y, ctx)
#define I_TRUNCATEMOD(S) itruncmod_##S(x, y, ctx)
#define I_SQUARED_DIFFERENCE(S) (x - y) * (x - y)

ARITH(truncatediv, trunc(x / y), I_TRUNCATEDIV)
ARITH(truncatemod, fmod(x, y), I_TRUNCATEMOD)
ARITH(squared_difference, (x - y) * (x - y), I_SQUARED_DIFFERENCE)

/* Float-only ops. xlogy and friends give x where x == 0 (0 * log(0) is 0,
 * the convention of entropy terms), as TF's vectorized kernels do. */
#define FLOAT_BIN(NAME, EXPR) BIN_LOOP(NAME##_f32, float, float, EXPR) BIN_LOOP(NAME##_f64, double, double, EXPR)
FLOAT_BIN(atan2, atan2(x, y))
FLOAT_BIN(xlogy, x == 0 ? x : x * log(y))
FLOAT_BIN(xlog1py, x == 0 ? x : x * log1p(y))
FLOAT_BIN(xdivy, x == 0 ? x : x / y)

/* Integer-only ops (tf.bitwise). */
#define INT_BIN(NAME, IEXPR)                                                             \
  BIN_LOOP(NAME##_i8, int8_t, int8_t, IEXPR(i8))                                         \
  BIN_LOOP(NAME##_u8, uint8_t, uint8_t, IEXPR(u8))                                       \
  BIN_LOOP(NAME##_i32, int32_t, int32_t, IEXPR(i32))                                     \
  BIN_LOOP(NAME##_i64, int64_t, int64_t, IEXPR(i64))
#define I_AND(S) x & y
#define I_OR(S) x | y
#define I_XOR(S) x ^ y
#define I_SHL(S) ishl_##S(x, y)
#define I_SHR(S) ishr_##S(x, y)
INT_BIN(bitwise_and, I_AND)
INT_BIN(bitwise_or, I_OR)
INT_BIN(bitwise_xor, I_XOR)
INT_BIN(left_shift, I_SHL)
INT_BIN(right_shift, I_SHR)

/* True division: floats stay, ints become floats (TF's truediv). */
BIN_LOOP(div_f32, float, float, x / y)
BIN_LOOP(div_f64, double, double, x / y)
BIN_LOOP(div_i8, int8_t, float, (float)x / (float)y)
BIN_LOOP(div_u8, uint8_t, float, (float)x / (float)y)
BIN_LOOP(div_i32, int32_t, double, (double)x / (double)y)
BIN_LOOP(div_i64, int64_t, double, (double)x / (double)y)
/* divide_no_nan: truediv's types, 0 where y == 0 (whatever x is). */
BIN_LOOP(div_no_nan_f32, float, float, y == 0 ? (T)0 : x / y)
BIN_LOOP(div_no_nan_f64, double, double, y == 0 ? (T)0 : x / y)
BIN_LOOP(div_no_nan_i8, int8_t, float, y == 0 ? 0.0f : (float)x / (float)y)
BIN_LOOP(div_no_nan_u8, uint8_t, float, y == 0 ? 0.0f : (float)x / (float)y)
BIN_LOOP(div_no_nan_i32, int32_t, double, y == 0 ? 0.0 : (double)x / (double)y)
BIN_LOOP(div_no_nan_i64, int64_t, double, y == 0 ? 0.0 : (double)x / (double)y)

/* Comparisons: any numeric type in, bool out. */
#define COMPARE(NAME, EXPR)                                                              \
  BIN_LOOP(NAME##_f32, float, uint8_t, EXPR)                                             \
  BIN_LOOP(NAME##_f64, double, uint8_t, EXPR)                                            \
  BIN_LOOP(NAME##_i8, int8_t, uint8_t, EXPR)                                             \
  BIN_LOOP(NAME##_u8, uint8_t, uint8_t, EXPR)                                            \
  BIN_LOOP(NAME##_i32, int32_t, uint8_t, EXPR)                                           \
  BIN_LOOP(NAME##_i64, int64_t, uint8_t, EXPR)

COMPARE(equal, x == y)
COMPARE(not_equal, x != y)
COMPARE(less, x < y)
COMPARE(less_equal, x <= y)
COMPARE(greater, x > y)
COMPARE(greater_equal, x >= y)
BIN_LOOP(equal_b, uint8_t, uint8_t, (x != 0) == (y != 0))
BIN_LOOP(not_equal_b, uint8_t, uint8_t, (x != 0) != (y != 0))
BIN_LOOP(logical_and_b, uint8_t, uint8_t, (x != 0) & (y != 0))
BIN_LOOP(logical_or_b, uint8_t, uint8_t, (x != 0) | (y != 0))
BIN_LOOP(logical_xor_b, uint8_t, uint8_t, (x != 0) ^ (y != 0))

#define PICK(NAME) TIDE_RETURN_NUM_LOOP(NAME, dt)

tide_loop_fn TIDE_SIMD(binary_loop)(int op, int dt) {
  switch (op) {
  case TIDE_OP_ADD: PICK(add);
  case TIDE_OP_SUB: PICK(sub);
  case TIDE_OP_MUL: PICK(mul);
  case TIDE_OP_DIV: PICK(div);
  case TIDE_OP_FLOORDIV: PICK(floordiv);
  case TIDE_OP_MOD: PICK(mod);
  case TIDE_OP_POW: PICK(pow);
  case TIDE_OP_MAXIMUM: PICK(maximum);
  case TIDE_OP_MINIMUM: PICK(minimum);
  case TIDE_OP_EQUAL: if (dt == TIDE_BOOL) return equal_b; PICK(equal);
  case TIDE_OP_NOT_EQUAL: if (dt == TIDE_BOOL) return not_equal_b; PICK(not_equal);
  case TIDE_OP_LESS: PICK(less);
  case TIDE_OP_LESS_EQUAL: PICK(less_equal);
  case TIDE_OP_GREATER: PICK(greater);
  case TIDE_OP_GREATER_EQUAL: PICK(greater_equal);
  case TIDE_OP_LOGICAL_AND: return logical_and_b;
  case TIDE_OP_LOGICAL_OR: return logical_or_b;
  case TIDE_OP_LOGICAL_XOR: return logical_xor_b;
  case TIDE_OP_TRUNCATEDIV: PICK(truncatediv);
  case TIDE_OP_TRUNCATEMOD: PICK(truncatemod);
  case TIDE_OP_DIV_NO_NAN: PICK(div_no_nan);
  case TIDE_OP_SQUARED_DIFFERENCE: PICK(squared_difference);
  case TIDE_OP_ATAN2: return dt == TIDE_FLOAT64 ? atan2_f64 : atan2_f32;
  case TIDE_OP_XLOGY: return dt == TIDE_FLOAT64 ? xlogy_f64 : xlogy_f32;
  case TIDE_OP_XLOG1PY: return dt == TIDE_FLOAT64 ? xlog1py_f64 : xlog1py_f32;
  case TIDE_OP_XDIVY: return dt == TIDE_FLOAT64 ? xdivy_f64 : xdivy_f32;
  case TIDE_OP_BITWISE_AND: TIDE_RETURN_INT_LOOP(bitwise_and, dt);
  case TIDE_OP_BITWISE_OR: TIDE_RETURN_INT_LOOP(bitwise_or, dt);
  case TIDE_OP_BITWISE_XOR: TIDE_RETURN_INT_LOOP(bitwise_xor, dt);
  case TIDE_OP_LEFT_SHIFT: TIDE_RETURN_INT_LOOP(left_shift, dt);
  case TIDE_OP_RIGHT_SHIFT: TIDE_RETURN_INT_LOOP(right_shift, dt);
  default: return NULL;
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernel, in the baseline build only ---------------------------------- */

tide_loop_fn tide_binary_loop(int op, int dt) { return tide_simd.binary_loop(op, dt); }

/* Whether the flat loop can walk t as an operand of an n-element contiguous
 * output, and its byte stride *s: one element broadcasts (stride 0); n
 * contiguous elements (then t has the output's shape) walk along. */
static inline bool flat_operand(const tide_tensor *t, int64_t n, int64_t *s) {
  if (t->nelem == 1) {
    *s = 0;
    return true;
  }
  *s = (int64_t)tide_dtype_size_unchecked(t->dt);
  return t->nelem == n && tide_tensor_is_contiguous(t);
}

tide_status tide_cpu_binary(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_loop_fn loop = in[0]->dt == TIDE_STRING ? tide_string_compare_loop(def->id) : tide_binary_loop(def->id, in[0]->dt);
  if (!loop) return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no CPU loop", def->name);
  tide_binary_ctx ctx = {0};
  tide_tensor *o = out[0];
  const tide_tensor *a = in[0], *b = in[1];
  int64_t s[3] = {(int64_t)tide_dtype_size_unchecked(o->dt), 0, 0};
  tide_status st;
  if (!tide_is_half(a->dt) && flat_operand(a, o->nelem, &s[1]) && flat_operand(b, o->nelem, &s[2])) {
    /* Same-shape contiguous inputs, or scalars: one flat row, no iterator set-up. */
    char *p[3] = {o->data, a->data, b->data};
    st = tide_run_flat(loop, 3, p, s, o->nelem, TIDE_GRAIN_CHEAP, &ctx);
  } else {
    tide_iter it;
    st = tide_iter_build(&it, def->name, o, 2, in);
    if (st) return st;
    if (def->id == TIDE_OP_ATAN2 || def->id == TIDE_OP_XLOGY || def->id == TIDE_OP_XLOG1PY)
      it.grain = TIDE_GRAIN_COSTLY; /* transcendental work pays for threads sooner */
    st = tide_iter_run(&it, loop, &ctx);
  }
  return st ? st : tide_binary_check(def->name, ctx.bad);
}

tide_status tide_binary_check(const char *op, int bad) {
  if (bad & TIDE_BINARY_DIV_ZERO) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integer division by zero", op);
  if (bad & TIDE_BINARY_NEG_POW)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integers to negative integer powers are not allowed (cast to float)", op);
  return TIDE_OK;
}

#endif /* TIDE_SIMD_ONCE */
