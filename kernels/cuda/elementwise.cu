// cuda/elementwise.cu — one templated kernel family for the registry's elementwise ops
// (unary and binary: a functor per row of core/elementwise.def; where, clip, cast/copy), over broadcast strided inputs.
#include "common.cuh"
#include "../core/formulas.h"

#include <cmath>

using namespace tcu;

namespace {

// ---- the formulas of core/elementwise.def ---------------------------------------------------------

// One functor per row: f(x) (or f(x, y, bad)) in compute type T, as the CPU's
// loops compute it (cpu/unary.c, cpu/binary.c expand the same rows).
#define UN_FN(ID, RESULT, EXPR)                                                                     \
  struct un_##ID {                                                                                  \
    template <typename T> __device__ __forceinline__ static RESULT f(T x, double alpha, bool approx) { \
      (void)alpha, (void)approx;                                                                    \
      return (RESULT)(EXPR);                                                                        \
    }                                                                                               \
  };
#define UN_FN_FLOAT(ID, F) UN_FN(ID, T, F)
#define UN_FN_INT(ID, I) UN_FN(ID, T, I)
#define UN_FN_PRED(ID, F) UN_FN(ID, uint8_t, (F) != 0) /* 0 or 1, as the CPU writes it */
#define UN_FN_BOOL(ID, B) UN_FN(ID, uint8_t, B)
#define UN_FN_NUM(ID, F, I)                                                                         \
  struct un_##ID {                                                                                  \
    template <typename T> __device__ __forceinline__ static T f(T x, double alpha, bool approx) {   \
      (void)alpha, (void)approx;                                                                    \
      if constexpr (std::is_floating_point<T>::value) return (T)(F);                               \
      else return (T)(I);                                                                           \
    }                                                                                               \
  };
#define TIDE_UNARY(ID, FAMILY, ...) UN_FN_##FAMILY(ID, __VA_ARGS__)
#include "../core/elementwise.def"

#define BIN_FN(ID, RESULT, EXPR)                                                                    \
  struct bin_##ID {                                                                                 \
    template <typename T> __device__ __forceinline__ static RESULT f(T x, T y, int *bad) {          \
      (void)bad;                                                                                    \
      return (RESULT)(EXPR);                                                                        \
    }                                                                                               \
  };
#define BIN_FN_FLOAT(ID, F) BIN_FN(ID, T, F)
#define BIN_FN_INT(ID, I) BIN_FN(ID, T, I)
#define BIN_FN_TRUEDIV(ID, F) BIN_FN(ID, T, F)
#define BIN_FN_COMPARE(ID, F) BIN_FN(ID, uint8_t, F)
#define BIN_FN_EQUALITY(ID, F) BIN_FN(ID, uint8_t, F)
#define BIN_FN_LOGIC(ID, F) BIN_FN(ID, uint8_t, F)
#define BIN_FN_NUM(ID, F, I)                                                                        \
  struct bin_##ID {                                                                                 \
    template <typename T> __device__ __forceinline__ static T f(T x, T y, int *bad) {               \
      (void)bad;                                                                                    \
      if constexpr (std::is_floating_point<T>::value) return (T)(F);                               \
      else return (T)(I);                                                                           \
    }                                                                                               \
  };
#define TIDE_BINARY(ID, FAMILY, ...) BIN_FN_##FAMILY(ID, __VA_ARGS__)
#include "../core/elementwise.def"

// ---- unary -------------------------------------------------------------------

// TI in, computed as C (the input's compute type; bool for bool ops), TO out.
template <typename F, typename TI, typename TO, typename C>
__global__ void unary_kernel(tcu_iter it, double alpha, bool approx) {
  const TI *x = (const TI *)it.in[0];
  TO *y = (TO *)it.out;
  TCU_FOR_EACH(i, it.n) y[i] = narrow<TO>(F::f((C)widen(x[offset_of(it, 0, i)]), alpha, approx));
}

template <typename F, typename TI, typename TO, typename C>
int launch_unary(cudaStream_t s, const tcu_iter *it, double alpha, int approx) {
  unary_kernel<F, TI, TO, C><<<blocks_for(it->n), kThreads, 0, s>>>(*it, alpha, approx != 0);
  return (int)cudaGetLastError();
}

// Each family's dtypes; the result dtype is the input's, or bool (uint8_t) for predicates.
#define UN_ARGS s, it, alpha, approx
template <typename F> int unary_FLOAT(cudaStream_t s, int dt, const tcu_iter *it, double alpha, int approx) {
  switch (dt) { TCU_FLOAT_CASES(return launch_unary<F, T, T, typename Acc<T>::type>(UN_ARGS)) default: break; }
  return TCU_UNSUPPORTED;
}
template <typename F> int unary_INT(cudaStream_t s, int dt, const tcu_iter *it, double alpha, int approx) {
  switch (dt) { TCU_INT_CASES(return launch_unary<F, T, T, T>(UN_ARGS)) default: break; }
  return TCU_UNSUPPORTED;
}
template <typename F> int unary_NUM(cudaStream_t s, int dt, const tcu_iter *it, double alpha, int approx) {
  switch (dt) {
    TCU_FLOAT_CASES(return launch_unary<F, T, T, typename Acc<T>::type>(UN_ARGS))
    TCU_INT_CASES(return launch_unary<F, T, T, T>(UN_ARGS))
  default: break;
  }
  return TCU_UNSUPPORTED;
}
template <typename F> int unary_PRED(cudaStream_t s, int dt, const tcu_iter *it, double alpha, int approx) {
  switch (dt) { TCU_FLOAT_CASES(return launch_unary<F, T, uint8_t, typename Acc<T>::type>(UN_ARGS)) default: break; }
  return TCU_UNSUPPORTED;
}
// bool is stored as a byte; any nonzero byte reads as true (C++'s bool conversion).
template <typename F> int unary_BOOL(cudaStream_t s, int dt, const tcu_iter *it, double alpha, int approx) {
  return dt == TIDE_BOOL ? launch_unary<F, uint8_t, uint8_t, bool>(UN_ARGS) : TCU_UNSUPPORTED;
}

// ---- binary ------------------------------------------------------------------

// TI in, computed as C (the input's compute type, the float type true division of ints gives, bool for bools), TO out.
template <typename F, typename TI, typename TO, typename C>
__global__ void binary_kernel(tcu_iter it, int *bad) {
  const TI *a = (const TI *)it.in[0], *b = (const TI *)it.in[1];
  TO *o = (TO *)it.out;
  TCU_FOR_EACH(i, it.n) {
    C x = (C)widen(a[offset_of(it, 0, i)]), y = (C)widen(b[offset_of(it, 1, i)]);
    o[i] = narrow<TO>(F::f(x, y, bad));
  }
}

template <typename F, typename TI, typename TO, typename C>
int launch_binary(cudaStream_t s, const tcu_iter *it, int *bad) {
  binary_kernel<F, TI, TO, C><<<blocks_for(it->n), kThreads, 0, s>>>(*it, bad);
  return (int)cudaGetLastError();
}

template <typename F> int binary_FLOAT(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  switch (dt) { TCU_FLOAT_CASES(return launch_binary<F, T, T, typename Acc<T>::type>(s, it, bad)) default: break; }
  return TCU_UNSUPPORTED;
}
template <typename F> int binary_INT(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  switch (dt) { TCU_INT_CASES(return launch_binary<F, T, T, T>(s, it, bad)) default: break; }
  return TCU_UNSUPPORTED;
}
template <typename F> int binary_NUM(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  switch (dt) {
    TCU_FLOAT_CASES(return launch_binary<F, T, T, typename Acc<T>::type>(s, it, bad))
    TCU_INT_CASES(return launch_binary<F, T, T, T>(s, it, bad))
  default: break;
  }
  return TCU_UNSUPPORTED;
}
// True division (and div_no_nan): floats stay; int8/uint8 give float32, int32/int64 float64 (TF's truediv).
template <typename F> int binary_TRUEDIV(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  switch (dt) {
    TCU_FLOAT_CASES(return launch_binary<F, T, T, typename Acc<T>::type>(s, it, bad))
  case TIDE_INT8: return launch_binary<F, int8_t, float, float>(s, it, bad);
  case TIDE_UINT8: return launch_binary<F, uint8_t, float, float>(s, it, bad);
  case TIDE_INT32: return launch_binary<F, int32_t, double, double>(s, it, bad);
  case TIDE_INT64: return launch_binary<F, int64_t, double, double>(s, it, bad);
  default: break;
  }
  return TCU_UNSUPPORTED;
}
template <typename F> int binary_COMPARE(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  switch (dt) {
    TCU_FLOAT_CASES(return launch_binary<F, T, uint8_t, typename Acc<T>::type>(s, it, bad))
    TCU_INT_CASES(return launch_binary<F, T, uint8_t, T>(s, it, bad))
  default: break;
  }
  return TCU_UNSUPPORTED;
}
// Bool inputs: any nonzero byte is true.
template <typename F> int binary_LOGIC(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  return dt == TIDE_BOOL ? launch_binary<F, uint8_t, uint8_t, bool>(s, it, bad) : TCU_UNSUPPORTED;
}
template <typename F> int binary_EQUALITY(cudaStream_t s, int dt, const tcu_iter *it, int *bad) {
  return dt == TIDE_BOOL ? binary_LOGIC<F>(s, dt, it, bad) : binary_COMPARE<F>(s, dt, it, bad);
}

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
#define TIDE_UNARY(ID, FAMILY, ...) case TIDE_OP_##ID: return unary_##FAMILY<un_##ID>(s, dt, it, alpha, approx);
#include "../core/elementwise.def"
  default: return TCU_UNSUPPORTED;
  }
}

extern "C" int tcu_binary(cudaStream_t s, int op, int dt, int dt_out, const tcu_iter *it, int *bad) {
  (void)dt_out;
  if (it->n == 0) return 0;
  switch (op) {
#define TIDE_BINARY(ID, FAMILY, ...) case TIDE_OP_##ID: return binary_##FAMILY<bin_##ID>(s, dt, it, bad);
#include "../core/elementwise.def"
  default: return TCU_UNSUPPORTED;
  }
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
