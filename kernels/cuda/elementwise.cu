// cuda/elementwise.cu — one templated kernel family for the registry's
// elementwise ops (unary, binary, where, clip, cast/copy), over broadcast strided inputs.
#include "common.cuh"

#include <cmath>

using namespace tcu;

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// ---- unary -------------------------------------------------------------------

// op(x) in compute type C, as cpu/unary.c writes it.
template <int OP, typename C> __device__ __forceinline__ auto unary_fn(C x, double alpha, bool approx) {
  if constexpr (OP == TIDE_OP_NEG) return (C)-x;
  else if constexpr (OP == TIDE_OP_ABS) { if constexpr (std::is_floating_point<C>::value) return (C)fabs(x); else return (C)(x < 0 ? -x : x); }
  else if constexpr (OP == TIDE_OP_SIGN) { if constexpr (std::is_floating_point<C>::value) return x > 0 ? (C)1 : (x < 0 ? (C)-1 : x); else return (C)((x > 0) - (x < 0)); }
  else if constexpr (OP == TIDE_OP_SQUARE) return (C)(x * x);
  else if constexpr (OP == TIDE_OP_RELU) return x < 0 ? (C)0 : x;
  else if constexpr (OP == TIDE_OP_ROUND) { if constexpr (std::is_floating_point<C>::value) return (C)rint(x); else return x; }
  else if constexpr (OP == TIDE_OP_EXP) return (C)exp(x);
  else if constexpr (OP == TIDE_OP_EXPM1) return (C)expm1(x);
  else if constexpr (OP == TIDE_OP_LOG) return (C)log(x);
  else if constexpr (OP == TIDE_OP_LOG1P) return (C)log1p(x);
  else if constexpr (OP == TIDE_OP_SQRT) return (C)sqrt(x);
  else if constexpr (OP == TIDE_OP_RSQRT) return (C)((C)1 / sqrt(x));
  else if constexpr (OP == TIDE_OP_RECIPROCAL) return (C)((C)1 / x);
  else if constexpr (OP == TIDE_OP_SIN) return (C)sin(x);
  else if constexpr (OP == TIDE_OP_COS) return (C)cos(x);
  else if constexpr (OP == TIDE_OP_TAN) return (C)tan(x);
  else if constexpr (OP == TIDE_OP_TANH) return (C)tanh(x);
  else if constexpr (OP == TIDE_OP_SIGMOID) return x >= 0 ? (C)(1 / (1 + exp(-x))) : (C)(exp(x) / (1 + exp(x)));
  else if constexpr (OP == TIDE_OP_ELU) return x > 0 ? x : (C)expm1(x);
  else if constexpr (OP == TIDE_OP_SELU) return (C)((C)kSeluScale * (x > 0 ? x : (C)kSeluAlpha * (C)expm1(x)));
  else if constexpr (OP == TIDE_OP_GELU) {
    if (approx) {  // cpu/unary.c's gelu_tanh: the sigmoid form where 1 + tanh(u) cancels
      C u = (C)kSqrt2OverPi * (x + (C)0.044715 * x * x * x);
      if (u >= 0) return (C)((C)0.5 * x * (1 + tanh(u)));
      C e = exp(2 * u);
      return (C)(x * e / (1 + e));
    }
    return (C)((C)0.5 * x * erfc(-x * (C)kSqrt1_2));
  }
  else if constexpr (OP == TIDE_OP_LEAKY_RELU) return x > 0 ? x : (C)((C)alpha * x);
  else if constexpr (OP == TIDE_OP_SOFTPLUS) return x > 0 ? (C)(x + log1p(exp(-x))) : (C)log1p(exp(x));
  else if constexpr (OP == TIDE_OP_ERF) return (C)erf(x);
  else if constexpr (OP == TIDE_OP_ERFC) return (C)erfc(x);
  else if constexpr (OP == TIDE_OP_FLOOR) return (C)floor(x);
  else if constexpr (OP == TIDE_OP_CEIL) return (C)ceil(x);
  else if constexpr (OP == TIDE_OP_ISNAN) return (uint8_t)isnan(x);
  else if constexpr (OP == TIDE_OP_ISFINITE) return (uint8_t)isfinite(x);
  else if constexpr (OP == TIDE_OP_ISINF) return (uint8_t)isinf(x);
  else if constexpr (OP == TIDE_OP_LOGICAL_NOT) return (uint8_t)!x;
  else if constexpr (OP == TIDE_OP_INVERT) return (C)~x;
  else static_assert(OP < 0, "no such unary op");
}

template <int OP, typename TI, typename TO>
__global__ void unary_kernel(tcu_iter it, double alpha, bool approx) {
  const TI *x = (const TI *)it.in[0];
  TO *y = (TO *)it.out;
  TCU_FOR_EACH(i, it.n) y[i] = narrow<TO>(unary_fn<OP>(widen(x[offset_of(it, 0, i)]), alpha, approx));
}

template <int OP, typename TI, typename TO>
int launch_unary(cudaStream_t s, const tcu_iter *it, double alpha, int approx) {
  unary_kernel<OP, TI, TO><<<blocks_for(it->n), kThreads, 0, s>>>(*it, alpha, approx != 0);
  return (int)cudaGetLastError();
}

// Ops by dtype family; the result dtype is the input's, or bool (uint8_t) for predicates.
#define UNARY_FLOAT(OP) \
  case OP: switch (dt) { TCU_FLOAT_CASES(return launch_unary<OP, T, T>(s, it, alpha, approx)) default: break; } break;
#define UNARY_NUM(OP)                                                                          \
  case OP: switch (dt) {                                                                       \
      TCU_FLOAT_CASES(return launch_unary<OP, T, T>(s, it, alpha, approx))                     \
      TCU_INT_CASES(return launch_unary<OP, T, T>(s, it, alpha, approx)) default: break; } break;
#define UNARY_PRED(OP) \
  case OP: switch (dt) { TCU_FLOAT_CASES(return launch_unary<OP, T, uint8_t>(s, it, alpha, approx)) default: break; } break;

// ---- binary ------------------------------------------------------------------

enum { BAD_DIV_ZERO = 1, BAD_NEG_POW = 2 };  // cpu/elementwise.h's TIDE_BINARY_*

template <typename T> __device__ __forceinline__ T fmod_floor(T x, T y) {
  T r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

// op(x, y) in compute type C, as cpu/binary.c writes it; integer errors set bits of *bad.
template <int OP, typename C> __device__ __forceinline__ auto binary_fn(C x, C y, int *bad) {
  constexpr bool F = std::is_floating_point<C>::value;
  constexpr bool SIGNED = std::is_signed<C>::value;
  if constexpr (OP == TIDE_OP_ADD) return (C)(x + y);
  else if constexpr (OP == TIDE_OP_SUB) return (C)(x - y);
  else if constexpr (OP == TIDE_OP_MUL) return (C)(x * y);
  else if constexpr (OP == TIDE_OP_SQUARED_DIFFERENCE) return (C)((x - y) * (x - y));
  else if constexpr (OP == TIDE_OP_MAXIMUM) { if constexpr (F) return (x > y || x != x) ? x : y; else return x > y ? x : y; }
  else if constexpr (OP == TIDE_OP_MINIMUM) { if constexpr (F) return (x < y || x != x) ? x : y; else return x < y ? x : y; }
  else if constexpr (OP == TIDE_OP_FLOORDIV) {
    if constexpr (F) return (C)floor(x / y);
    else {
      if (y == 0) { atomicOr(bad, BAD_DIV_ZERO); return (C)0; }
      if (SIGNED && y == (C)-1) return (C)(0 - x);
      C q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
      return q;
    }
  }
  else if constexpr (OP == TIDE_OP_MOD) {
    if constexpr (F) return fmod_floor(x, y);
    else {
      if (y == 0) { atomicOr(bad, BAD_DIV_ZERO); return (C)0; }
      if (SIGNED && y == (C)-1) return (C)0;
      C r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
  }
  else if constexpr (OP == TIDE_OP_TRUNCATEDIV) {
    if constexpr (F) return (C)trunc(x / y);
    else {
      if (y == 0) { atomicOr(bad, BAD_DIV_ZERO); return (C)0; }
      if (SIGNED && y == (C)-1) return (C)(0 - x);
      return (C)(x / y);
    }
  }
  else if constexpr (OP == TIDE_OP_TRUNCATEMOD) {
    if constexpr (F) return (C)fmod(x, y);
    else {
      if (y == 0) { atomicOr(bad, BAD_DIV_ZERO); return (C)0; }
      if (SIGNED && y == (C)-1) return (C)0;
      return (C)(x % y);
    }
  }
  else if constexpr (OP == TIDE_OP_POW) {
    if constexpr (F) return (C)pow(x, y);
    else {
      if (y < 0) { atomicOr(bad, BAD_NEG_POW); return (C)0; }
      C r = 1;
      while (y) {
        if (y & 1) r = (C)(r * x);
        x = (C)(x * x);
        y >>= 1;
      }
      return r;
    }
  }
  else if constexpr (OP == TIDE_OP_ATAN2) return (C)atan2(x, y);
  else if constexpr (OP == TIDE_OP_XLOGY) return x == 0 ? x : (C)(x * log(y));
  else if constexpr (OP == TIDE_OP_XLOG1PY) return x == 0 ? x : (C)(x * log1p(y));
  else if constexpr (OP == TIDE_OP_XDIVY) return x == 0 ? x : (C)(x / y);
  else if constexpr (OP == TIDE_OP_EQUAL) return (uint8_t)(x == y);
  else if constexpr (OP == TIDE_OP_NOT_EQUAL) return (uint8_t)(x != y);
  else if constexpr (OP == TIDE_OP_LESS) return (uint8_t)(x < y);
  else if constexpr (OP == TIDE_OP_LESS_EQUAL) return (uint8_t)(x <= y);
  else if constexpr (OP == TIDE_OP_GREATER) return (uint8_t)(x > y);
  else if constexpr (OP == TIDE_OP_GREATER_EQUAL) return (uint8_t)(x >= y);
  else if constexpr (OP == TIDE_OP_BITWISE_AND) return (C)(x & y);
  else if constexpr (OP == TIDE_OP_BITWISE_OR) return (C)(x | y);
  else if constexpr (OP == TIDE_OP_BITWISE_XOR) return (C)(x ^ y);
  else if constexpr (OP == TIDE_OP_LEFT_SHIFT || OP == TIDE_OP_RIGHT_SHIFT) {
    // TF's CPU rule: the count clamped into [0, bits - 1]; left shifts unsigned.
    const C top = (C)(sizeof(C) * 8 - 1);
    C n = y < 0 ? (C)0 : y > top ? top : y;
    if constexpr (OP == TIDE_OP_LEFT_SHIFT) return (C)((typename std::make_unsigned<C>::type)x << n);
    else return (C)(x >> n);
  }
  else static_assert(OP < 0, "no such binary op");
}

// Bool inputs: logic ops and equality see any nonzero byte as true.
template <int OP> __device__ __forceinline__ uint8_t logic_fn(uint8_t a, uint8_t b) {
  bool x = a != 0, y = b != 0;
  if constexpr (OP == TIDE_OP_LOGICAL_AND) return x & y;
  else if constexpr (OP == TIDE_OP_LOGICAL_OR) return x | y;
  else if constexpr (OP == TIDE_OP_LOGICAL_XOR) return x ^ y;
  else if constexpr (OP == TIDE_OP_EQUAL) return x == y;
  else if constexpr (OP == TIDE_OP_NOT_EQUAL) return x != y;
  else static_assert(OP < 0, "no such logic op");
}

// TI in, TO out, computing in C (the input's compute type, or TO for true division of ints).
template <int OP, typename TI, typename TO, typename C>
__global__ void binary_kernel(tcu_iter it, int *bad) {
  const TI *a = (const TI *)it.in[0], *b = (const TI *)it.in[1];
  TO *o = (TO *)it.out;
  TCU_FOR_EACH(i, it.n) {
    C x = (C)widen(a[offset_of(it, 0, i)]), y = (C)widen(b[offset_of(it, 1, i)]);
    if constexpr (OP == TIDE_OP_DIV) o[i] = narrow<TO>(x / y);
    else if constexpr (OP == TIDE_OP_DIV_NO_NAN) o[i] = narrow<TO>(y == 0 ? (C)0 : x / y);
    else o[i] = narrow<TO>(binary_fn<OP, C>(x, y, bad));
  }
}

template <int OP> __global__ void logic_kernel(tcu_iter it) {
  const uint8_t *a = (const uint8_t *)it.in[0], *b = (const uint8_t *)it.in[1];
  uint8_t *o = (uint8_t *)it.out;
  TCU_FOR_EACH(i, it.n) o[i] = logic_fn<OP>(a[offset_of(it, 0, i)], b[offset_of(it, 1, i)]);
}

template <int OP, typename TI, typename TO, typename C>
int launch_binary(cudaStream_t s, const tcu_iter *it, int *bad) {
  binary_kernel<OP, TI, TO, C><<<blocks_for(it->n), kThreads, 0, s>>>(*it, bad);
  return (int)cudaGetLastError();
}

template <int OP> int launch_logic(cudaStream_t s, const tcu_iter *it) {
  logic_kernel<OP><<<blocks_for(it->n), kThreads, 0, s>>>(*it);
  return (int)cudaGetLastError();
}

#define BIN_SAME(OP, CASES) \
  case OP: switch (dt) { CASES(return launch_binary<OP, T, T, typename Acc<T>::type>(s, it, bad)) default: break; } break;
#define BIN_NUM(OP)                                                                                  \
  case OP: switch (dt) {                                                                             \
      TCU_FLOAT_CASES(return launch_binary<OP, T, T, typename Acc<T>::type>(s, it, bad))            \
      TCU_INT_CASES(return launch_binary<OP, T, T, T>(s, it, bad)) default: break; } break;
#define BIN_COMPARE(OP)                                                                              \
  case OP: switch (dt) {                                                                             \
      TCU_FLOAT_CASES(return launch_binary<OP, T, uint8_t, typename Acc<T>::type>(s, it, bad))      \
      TCU_INT_CASES(return launch_binary<OP, T, uint8_t, T>(s, it, bad)) default: break; } break;
// True division (and div_no_nan): floats stay; int8/uint8 give float32, int32/int64 float64 (TF's truediv).
#define BIN_TRUEDIV(OP)                                                                              \
  case OP: switch (dt) {                                                                             \
      TCU_FLOAT_CASES(return launch_binary<OP, T, T, typename Acc<T>::type>(s, it, bad))            \
      case TIDE_INT8: return launch_binary<OP, int8_t, float, float>(s, it, bad);                    \
      case TIDE_UINT8: return launch_binary<OP, uint8_t, float, float>(s, it, bad);                  \
      case TIDE_INT32: return launch_binary<OP, int32_t, double, double>(s, it, bad);                \
      case TIDE_INT64: return launch_binary<OP, int64_t, double, double>(s, it, bad);                \
      default: break; } break;

// ---- where, clip, cast --------------------------------------------------------------

template <typename T> __global__ void where_kernel(tcu_iter it) {
  const uint8_t *c = (const uint8_t *)it.in[0];
  const T *x = (const T *)it.in[1], *y = (const T *)it.in[2];
  T *o = (T *)it.out;
  TCU_FOR_EACH(i, it.n) o[i] = c[offset_of(it, 0, i)] ? x[offset_of(it, 1, i)] : y[offset_of(it, 2, i)];
}

// clip as cpu/ternary.c: min(max(x, lo), hi) with NaN in x kept.
template <typename T> __global__ void clip_kernel(tcu_iter it) {
  using C = typename Acc<T>::type;
  const T *x = (const T *)it.in[0], *lo = (const T *)it.in[1], *hi = (const T *)it.in[2];
  T *o = (T *)it.out;
  TCU_FOR_EACH(i, it.n) {
    C v = widen(x[offset_of(it, 0, i)]), l = widen(lo[offset_of(it, 1, i)]), h = widen(hi[offset_of(it, 2, i)]);
    v = v < l ? l : v;
    v = v > h ? h : v;
    o[i] = narrow<T>(v);
  }
}

// bool is stored as a byte; any nonzero byte reads as true (tide's rule), so
// bool sides are uint8_t here with their own conversions, never C++ bool.
enum { CAST_PLAIN = 0, CAST_TO_BOOL = 1, CAST_FROM_BOOL = 2 };

template <typename TI, typename TO, int MODE> __global__ void cast_kernel(tcu_iter it) {
  const TI *x = (const TI *)it.in[0];
  TO *o = (TO *)it.out;
  TCU_FOR_EACH(i, it.n) {
    TI v = x[offset_of(it, 0, i)];
    if constexpr (MODE == CAST_TO_BOOL) o[i] = (uint8_t)(widen(v) != 0);
    else if constexpr (MODE == CAST_FROM_BOOL) o[i] = narrow<TO>(v != 0 ? 1 : 0);
    else if constexpr (std::is_same<TI, TO>::value) o[i] = v;
    else if constexpr (is_half_v<TO> && std::is_same<TI, double>::value) o[i] = narrow<TO>((float)v);  // as the CPU: through float
    else o[i] = narrow<TO>(widen(v));
  }
}

template <typename TI, int MODE> int launch_cast_from(cudaStream_t s, int dt_out, const tcu_iter *it) {
#define CAST_TO(code, type, mode) \
  case code: cast_kernel<TI, type, mode><<<blocks_for(it->n), kThreads, 0, s>>>(*it); return (int)cudaGetLastError();
  switch (dt_out) {
    CAST_TO(TIDE_FLOAT32, float, MODE)
    CAST_TO(TIDE_FLOAT64, double, MODE)
    CAST_TO(TIDE_FLOAT16, __half, MODE)
    CAST_TO(TIDE_BFLOAT16, __nv_bfloat16, MODE)
    CAST_TO(TIDE_INT8, int8_t, MODE)
    CAST_TO(TIDE_UINT8, uint8_t, MODE)
    CAST_TO(TIDE_INT32, int32_t, MODE)
    CAST_TO(TIDE_INT64, int64_t, MODE)
    CAST_TO(TIDE_BOOL, uint8_t, MODE == CAST_FROM_BOOL ? CAST_FROM_BOOL : CAST_TO_BOOL)
  default: return TCU_UNSUPPORTED;
  }
#undef CAST_TO
}

}  // namespace

extern "C" int tcu_unary(cudaStream_t s, int op, int dt, int dt_out, const tcu_iter *it, double alpha, int approx) {
  (void)dt_out;
  if (it->n == 0) return 0;
  switch (op) {
    UNARY_NUM(TIDE_OP_NEG)
    UNARY_NUM(TIDE_OP_ABS)
    UNARY_NUM(TIDE_OP_SIGN)
    UNARY_NUM(TIDE_OP_SQUARE)
    UNARY_NUM(TIDE_OP_RELU)
    UNARY_NUM(TIDE_OP_ROUND)
    UNARY_FLOAT(TIDE_OP_EXP)
    UNARY_FLOAT(TIDE_OP_EXPM1)
    UNARY_FLOAT(TIDE_OP_LOG)
    UNARY_FLOAT(TIDE_OP_LOG1P)
    UNARY_FLOAT(TIDE_OP_SQRT)
    UNARY_FLOAT(TIDE_OP_RSQRT)
    UNARY_FLOAT(TIDE_OP_RECIPROCAL)
    UNARY_FLOAT(TIDE_OP_SIN)
    UNARY_FLOAT(TIDE_OP_COS)
    UNARY_FLOAT(TIDE_OP_TAN)
    UNARY_FLOAT(TIDE_OP_TANH)
    UNARY_FLOAT(TIDE_OP_SIGMOID)
    UNARY_FLOAT(TIDE_OP_ELU)
    UNARY_FLOAT(TIDE_OP_SELU)
    UNARY_FLOAT(TIDE_OP_GELU)
    UNARY_FLOAT(TIDE_OP_LEAKY_RELU)
    UNARY_FLOAT(TIDE_OP_SOFTPLUS)
    UNARY_FLOAT(TIDE_OP_ERF)
    UNARY_FLOAT(TIDE_OP_ERFC)
    UNARY_FLOAT(TIDE_OP_FLOOR)
    UNARY_FLOAT(TIDE_OP_CEIL)
    UNARY_PRED(TIDE_OP_ISNAN)
    UNARY_PRED(TIDE_OP_ISFINITE)
    UNARY_PRED(TIDE_OP_ISINF)
  case TIDE_OP_LOGICAL_NOT:
    if (dt == TIDE_BOOL) return launch_unary<TIDE_OP_LOGICAL_NOT, uint8_t, uint8_t>(s, it, alpha, approx);
    break;
  case TIDE_OP_INVERT:
    switch (dt) { TCU_INT_CASES(return launch_unary<TIDE_OP_INVERT, T, T>(s, it, alpha, approx)) default: break; }
    break;
  default: break;
  }
  return TCU_UNSUPPORTED;
}

extern "C" int tcu_binary(cudaStream_t s, int op, int dt, int dt_out, const tcu_iter *it, int *bad) {
  (void)dt_out;
  if (it->n == 0) return 0;
  if (dt == TIDE_BOOL) {
    switch (op) {
    case TIDE_OP_LOGICAL_AND: return launch_logic<TIDE_OP_LOGICAL_AND>(s, it);
    case TIDE_OP_LOGICAL_OR: return launch_logic<TIDE_OP_LOGICAL_OR>(s, it);
    case TIDE_OP_LOGICAL_XOR: return launch_logic<TIDE_OP_LOGICAL_XOR>(s, it);
    case TIDE_OP_EQUAL: return launch_logic<TIDE_OP_EQUAL>(s, it);
    case TIDE_OP_NOT_EQUAL: return launch_logic<TIDE_OP_NOT_EQUAL>(s, it);
    default: return TCU_UNSUPPORTED;
    }
  }
  switch (op) {
    BIN_NUM(TIDE_OP_ADD)
    BIN_NUM(TIDE_OP_SUB)
    BIN_NUM(TIDE_OP_MUL)
    BIN_NUM(TIDE_OP_FLOORDIV)
    BIN_NUM(TIDE_OP_MOD)
    BIN_NUM(TIDE_OP_POW)
    BIN_NUM(TIDE_OP_MAXIMUM)
    BIN_NUM(TIDE_OP_MINIMUM)
    BIN_NUM(TIDE_OP_TRUNCATEDIV)
    BIN_NUM(TIDE_OP_TRUNCATEMOD)
    BIN_NUM(TIDE_OP_SQUARED_DIFFERENCE)
    BIN_TRUEDIV(TIDE_OP_DIV)
    BIN_TRUEDIV(TIDE_OP_DIV_NO_NAN)
    BIN_COMPARE(TIDE_OP_EQUAL)
    BIN_COMPARE(TIDE_OP_NOT_EQUAL)
    BIN_COMPARE(TIDE_OP_LESS)
    BIN_COMPARE(TIDE_OP_LESS_EQUAL)
    BIN_COMPARE(TIDE_OP_GREATER)
    BIN_COMPARE(TIDE_OP_GREATER_EQUAL)
    BIN_SAME(TIDE_OP_ATAN2, TCU_FLOAT_CASES)
    BIN_SAME(TIDE_OP_XLOGY, TCU_FLOAT_CASES)
    BIN_SAME(TIDE_OP_XLOG1PY, TCU_FLOAT_CASES)
    BIN_SAME(TIDE_OP_XDIVY, TCU_FLOAT_CASES)
    BIN_SAME(TIDE_OP_BITWISE_AND, TCU_INT_CASES)
    BIN_SAME(TIDE_OP_BITWISE_OR, TCU_INT_CASES)
    BIN_SAME(TIDE_OP_BITWISE_XOR, TCU_INT_CASES)
    BIN_SAME(TIDE_OP_LEFT_SHIFT, TCU_INT_CASES)
    BIN_SAME(TIDE_OP_RIGHT_SHIFT, TCU_INT_CASES)
  default: break;
  }
  return TCU_UNSUPPORTED;
}

// where moves elements: one kernel per element size.
extern "C" int tcu_where(cudaStream_t s, int dt, const tcu_iter *it) {
  if (it->n == 0) return 0;
  switch (dt) {
  case TIDE_INT8: case TIDE_UINT8: case TIDE_BOOL: where_kernel<uint8_t><<<blocks_for(it->n), kThreads, 0, s>>>(*it); break;
  case TIDE_FLOAT16: case TIDE_BFLOAT16: where_kernel<uint16_t><<<blocks_for(it->n), kThreads, 0, s>>>(*it); break;
  case TIDE_FLOAT32: case TIDE_INT32: where_kernel<uint32_t><<<blocks_for(it->n), kThreads, 0, s>>>(*it); break;
  case TIDE_FLOAT64: case TIDE_INT64: where_kernel<uint64_t><<<blocks_for(it->n), kThreads, 0, s>>>(*it); break;
  default: return TCU_UNSUPPORTED;
  }
  return (int)cudaGetLastError();
}

extern "C" int tcu_clip(cudaStream_t s, int dt, const tcu_iter *it) {
  if (it->n == 0) return 0;
  switch (dt) {
    TCU_FLOAT_CASES(clip_kernel<T><<<blocks_for(it->n), kThreads, 0, s>>>(*it); return (int)cudaGetLastError())
    TCU_INT_CASES(clip_kernel<T><<<blocks_for(it->n), kThreads, 0, s>>>(*it); return (int)cudaGetLastError())
  default: break;
  }
  return TCU_UNSUPPORTED;
}

extern "C" int tcu_cast(cudaStream_t s, int dt_in, int dt_out, const tcu_iter *it) {
  if (it->n == 0) return 0;
  switch (dt_in) {
    TCU_FLOAT_CASES(return launch_cast_from<T, CAST_PLAIN>(s, dt_out, it))
    TCU_INT_CASES(return launch_cast_from<T, CAST_PLAIN>(s, dt_out, it))
    TCU_CASE(TIDE_BOOL, uint8_t, return launch_cast_from<T, CAST_FROM_BOOL>(s, dt_out, it))
  default: break;
  }
  return TCU_UNSUPPORTED;
}
