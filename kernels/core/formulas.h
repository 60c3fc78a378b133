/* core/formulas.h — the elementwise formulas too long for a row of
 * elementwise.def, and the integer error bits, for the CPU loops and CUDA alike.
 *
 * One text per formula. Each is written once inside a macro that stamps it
 * for every type it serves: in C as suffixed functions (tide_floordiv_i8 ...)
 * with a _Generic macro named like the formula (tide_floordiv(x, y, bad)), in
 * C++ as overloads of that name, so a row of elementwise.def reads the same
 * in both. C includers get <tgmath.h>: exp(x) of a float x is expf, as it is
 * in CUDA's overloads. Halves never come here: both backends compute them in
 * float32. Everything is TIDE_HD (hd.h): static, inlined, host and device. */
#ifndef TIDE_CORE_FORMULAS_H
#define TIDE_CORE_FORMULAS_H

#include "hd.h"
#include "special_bessel.h" /* the special functions, in double (special.h too) */

#include <stdint.h>
#ifdef __cplusplus
#include <math.h> /* libstdc++'s puts the float overloads in the global namespace */
#else
#include <stdbool.h>
#include <tgmath.h>
#endif

/* Integer errors a binary formula reports through `bad` (an int of flags
 * that any thread may set): the CPU turns them into tide_binary_check's
 * errors, CUDA's kernel into the same messages (cuda/ops.c). */
enum { TIDE_BAD_DIV_ZERO = 1, TIDE_BAD_NEG_POW = 2 };
#if defined(__CUDA_ARCH__)
#define TIDE_FLAG_BAD(bad, bit) atomicOr((bad), (bit))
#else
#define TIDE_FLAG_BAD(bad, bit) __atomic_or_fetch((bad), (bit), __ATOMIC_RELAXED)
#endif

#define TIDE_SQRT1_2 0.70710678118654752440
#define TIDE_SQRT_2_OVER_PI 0.79788456080286535588
#define TIDE_SELU_SCALE 1.0507009873554804934193349852946
#define TIDE_SELU_ALPHA 1.6732632423543772848170429916717

/* The name of the formula NAME stamped for the type of suffix S. */
#ifdef __cplusplus
#define TIDE_TYPED(NAME, S) NAME
#else
#define TIDE_TYPED(NAME, S) NAME##_##S
#endif

/* The unsigned loops meet `x < 0`, always false there: intended. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
#endif

/* ---- float formulas (float and double) ----------------------------------------------- */

#define TIDE_FLOAT_FORMULAS(T, S)                                                                  \
  /* 1 / (1 + e^-x), as e^x / (1 + e^x) below 0, where it keeps its relative accuracy. */        \
  TIDE_HD T TIDE_TYPED(tide_sigmoid, S)(T x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); } \
  /* log(1 + e^x) without overflow for large x. */                                                 \
  TIDE_HD T TIDE_TYPED(tide_softplus, S)(T x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); } \
  TIDE_HD T TIDE_TYPED(tide_selu, S)(T x) {                                                        \
    return (T)TIDE_SELU_SCALE * (x > 0 ? x : (T)TIDE_SELU_ALPHA * expm1(x));                       \
  }                                                                                                \
  /* gelu's tanh approximation 0.5 x (1 + tanh(u)): as written (TF's) where                        \
   * u >= 0; below, as the same function x * sigmoid(2u) = x e^2u / (1 + e^2u),                   \
   * because 1 + tanh(u) cancels there (digits lost from u of about -1), but for                   \
   * the tail where 1 + tanh(u) rounds to 0 (u below about -9 in float32, -19 in                   \
   * float64): TF gives exactly -0 there, and so does tide. The erf form as                        \
   * 0.5 x erfc(-x / sqrt 2) (TF's): 1 + erf(x / sqrt 2) loses every digit                         \
   * below x of about -5.5 in float32, erfc keeps them. */                                         \
  TIDE_HD T TIDE_TYPED(tide_gelu, S)(T x, bool approx) {                                           \
    if (approx) {                                                                                  \
      T u = (T)TIDE_SQRT_2_OVER_PI * (x + (T)0.044715 * x * x * x);                                \
      T t = tanh(u);                                                                               \
      /* where 1 + tanh(u) rounds to 0, TF's formula gives exactly (-)0: so does tide */          \
      if (u >= 0 || 1 + t == 0) return (T)0.5 * x * (1 + t);                                       \
      T e = exp(2 * u);                                                                            \
      return x * e / (1 + e);                                                                      \
    }                                                                                              \
    return (T)0.5 * x * erfc(-x * (T)TIDE_SQRT1_2);                                                \
  }                                                                                                \
  /* Python's and TF's floormod: the remainder takes the divisor's sign. */                        \
  TIDE_HD T TIDE_TYPED(tide_fmod_floor, S)(T x, T y) {                                             \
    T r = fmod(x, y);                                                                              \
    if (r != 0 && ((r < 0) != (y < 0))) r += y;                                                    \
    return r;                                                                                      \
  }

TIDE_FLOAT_FORMULAS(float, f32)
TIDE_FLOAT_FORMULAS(double, f64)

/* ---- integer formulas (int8, uint8, int32, int64) ------------------------------------------ */

/* U is T's unsigned twin. Division by zero and negative powers set `bad` and
 * give 0 (TF's CPU kernels raise); MIN / -1 wraps instead of trapping. */
#define TIDE_INT_FORMULAS(T, U, S)                                                                 \
  /* Floor division and modulo with Python/TF semantics. */                                        \
  TIDE_HD T TIDE_TYPED(tide_floordiv, S)(T x, T y, int *bad) {                                     \
    if (y == 0) { TIDE_FLAG_BAD(bad, TIDE_BAD_DIV_ZERO); return 0; }                               \
    if ((T)-1 < 0 && y == (T)-1) return (T)(0 - x); /* signed only: MIN / -1 overflows */         \
    T q = (T)(x / y);                                                                              \
    if ((x % y != 0) && ((x < 0) != (y < 0))) q--;                                                 \
    return q;                                                                                      \
  }                                                                                                \
  TIDE_HD T TIDE_TYPED(tide_mod, S)(T x, T y, int *bad) {                                          \
    if (y == 0) { TIDE_FLAG_BAD(bad, TIDE_BAD_DIV_ZERO); return 0; }                               \
    if ((T)-1 < 0 && y == (T)-1) return 0;                                                         \
    T r = (T)(x % y);                                                                              \
    if (r != 0 && ((r < 0) != (y < 0))) r = (T)(r + y);                                            \
    return r;                                                                                      \
  }                                                                                                \
  /* Truncating division and remainder (C's / and %, TF's truncatediv and truncatemod). */         \
  TIDE_HD T TIDE_TYPED(tide_truncdiv, S)(T x, T y, int *bad) {                                     \
    if (y == 0) { TIDE_FLAG_BAD(bad, TIDE_BAD_DIV_ZERO); return 0; }                               \
    if ((T)-1 < 0 && y == (T)-1) return (T)(0 - x);                                                \
    return (T)(x / y);                                                                             \
  }                                                                                                \
  TIDE_HD T TIDE_TYPED(tide_truncmod, S)(T x, T y, int *bad) {                                     \
    if (y == 0) { TIDE_FLAG_BAD(bad, TIDE_BAD_DIV_ZERO); return 0; }                               \
    if ((T)-1 < 0 && y == (T)-1) return 0;                                                         \
    return (T)(x % y);                                                                             \
  }                                                                                                \
  /* x^y by squaring, wrapping as T does. */                                                       \
  TIDE_HD T TIDE_TYPED(tide_ipow, S)(T x, T y, int *bad) {                                         \
    if (y < 0) { TIDE_FLAG_BAD(bad, TIDE_BAD_NEG_POW); return 0; }                                 \
    T r = 1;                                                                                       \
    while (y) {                                                                                    \
      if (y & 1) r = (T)(r * x);                                                                   \
      x = (T)(x * x);                                                                              \
      y >>= 1;                                                                                     \
    }                                                                                              \
    return r;                                                                                      \
  }                                                                                                \
  /* Shifts as TF's CPU kernels do them: the count clamped into [0, bits - 1]                      \
   * (so no count is undefined), the left shift done unsigned (bits shifted                       \
   * out are lost, none is UB), the right shift arithmetic for signed types. */                    \
  TIDE_HD T TIDE_TYPED(tide_shift_count, S)(T y) {                                                 \
    const T top = (T)(sizeof(T) * 8 - 1);                                                          \
    return y < 0 ? 0 : y > top ? top : y;                                                          \
  }                                                                                                \
  TIDE_HD T TIDE_TYPED(tide_shl, S)(T x, T y) { return (T)((U)x << TIDE_TYPED(tide_shift_count, S)(y)); } \
  TIDE_HD T TIDE_TYPED(tide_shr, S)(T x, T y) { return (T)(x >> TIDE_TYPED(tide_shift_count, S)(y)); }

TIDE_INT_FORMULAS(int8_t, uint8_t, i8)
TIDE_INT_FORMULAS(uint8_t, uint8_t, u8)
TIDE_INT_FORMULAS(int32_t, uint32_t, i32)
TIDE_INT_FORMULAS(int64_t, uint64_t, i64)

#if defined(__GNUC__) && !defined(__CUDACC__)
#pragma GCC diagnostic pop
#endif

/* ---- C: one name per formula, whatever the type -------------------------------------------- */

#ifndef __cplusplus
#define TIDE_BY_FLOAT(NAME, x) _Generic((x), float: NAME##_f32, default: NAME##_f64)
#define TIDE_BY_INT(NAME, x) \
  _Generic((x), int8_t: NAME##_i8, uint8_t: NAME##_u8, int32_t: NAME##_i32, int64_t: NAME##_i64)
#define tide_sigmoid(x) TIDE_BY_FLOAT(tide_sigmoid, x)(x)
#define tide_softplus(x) TIDE_BY_FLOAT(tide_softplus, x)(x)
#define tide_selu(x) TIDE_BY_FLOAT(tide_selu, x)(x)
#define tide_gelu(x, approx) TIDE_BY_FLOAT(tide_gelu, x)(x, approx)
#define tide_fmod_floor(x, y) TIDE_BY_FLOAT(tide_fmod_floor, x)(x, y)
#define tide_floordiv(x, y, bad) TIDE_BY_INT(tide_floordiv, x)(x, y, bad)
#define tide_mod(x, y, bad) TIDE_BY_INT(tide_mod, x)(x, y, bad)
#define tide_truncdiv(x, y, bad) TIDE_BY_INT(tide_truncdiv, x)(x, y, bad)
#define tide_truncmod(x, y, bad) TIDE_BY_INT(tide_truncmod, x)(x, y, bad)
#define tide_ipow(x, y, bad) TIDE_BY_INT(tide_ipow, x)(x, y, bad)
#define tide_shl(x, y) TIDE_BY_INT(tide_shl, x)(x, y)
#define tide_shr(x, y) TIDE_BY_INT(tide_shr, x)(x, y)
#endif

#endif
