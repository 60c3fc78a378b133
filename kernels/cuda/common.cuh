// cuda/common.cuh — what the .cu files share: dtype dispatch, half types
// computed in float, conversions as the CPU's cast, the iteration's offsets.
#pragma once
#include "launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <limits>
#include <type_traits>

namespace tcu {

constexpr int kThreads = 256;

// A grid-stride loop covers n: enough blocks to fill the GPU, no more than n needs.
inline unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  return (unsigned)(b > 65536 ? 65536 : b);
}

#define TCU_FOR_EACH(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// Half types compute in float (as the CPU's kernels do); others in themselves.
template <typename T> struct Acc { using type = T; };
template <> struct Acc<__half> { using type = float; };
template <> struct Acc<__nv_bfloat16> { using type = float; };

template <typename T> constexpr bool is_half_v = std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;
template <typename T> constexpr bool is_float_v = std::is_floating_point<T>::value || is_half_v<T>;

template <typename T> __device__ __forceinline__ typename Acc<T>::type widen(T v) {
  if constexpr (std::is_same<T, __half>::value) return __half2float(v);
  else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __bfloat162float(v);
  else return v;
}

// The CPU's float-to-int rule (core/internal.h tide_sat_*): truncate, saturate, NaN -> 0.
template <typename I, typename F> __device__ __forceinline__ I saturate(F v) {
  if (v != v) return 0;
  constexpr double lo = (double)std::numeric_limits<I>::min();
  constexpr double hi = std::is_same<I, int64_t>::value ? 9223372036854775808.0 : (double)std::numeric_limits<I>::max();
  double d = (double)v;
  if (std::is_same<I, int64_t>::value ? d < lo : d <= lo) return std::numeric_limits<I>::min();
  if (d >= hi) return std::numeric_limits<I>::max();
  return (I)d;
}

// Convert a computed value to storage type T as the CPU's cast does: floats
// to halves round to nearest even (through float), floats to ints saturate,
// anything to bool is `!= 0` (stored as uint8_t 0/1 by the callers that mean bool).
template <typename T, typename C> __device__ __forceinline__ T narrow(C v) {
  if constexpr (std::is_same<T, __half>::value) return __float2half_rn((float)v);
  else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __float2bfloat16_rn((float)v);
  else if constexpr (std::is_integral<T>::value && std::is_floating_point<C>::value) return saturate<T>(v);
  else return (T)v;
}

// Element offset of output element i in input k.
__device__ __forceinline__ int64_t offset_of(const tcu_iter &it, int k, int64_t i) {
  if (it.mode[k] == TCU_LINEAR) return i;
  if (it.mode[k] == TCU_SCALAR) return 0;
  int64_t off = 0;
  for (int d = it.ndim - 1; d >= 0; d--) {
    int64_t q = i % it.dims[d];
    i /= it.dims[d];
    off += q * it.strides[k][d];
  }
  return off;
}

}  // namespace tcu

// Run BODY with T bound to dtype dt's storage type; `bool` is uint8_t.
#define TCU_CASE(code, type, ...) \
  case code: {                    \
    using T = type;               \
    __VA_ARGS__;                  \
  } break;
#define TCU_FLOAT_CASES(...)                          \
  TCU_CASE(TIDE_FLOAT32, float, __VA_ARGS__)          \
  TCU_CASE(TIDE_FLOAT64, double, __VA_ARGS__)         \
  TCU_CASE(TIDE_FLOAT16, __half, __VA_ARGS__)         \
  TCU_CASE(TIDE_BFLOAT16, __nv_bfloat16, __VA_ARGS__)
#define TCU_INT_CASES(...)                    \
  TCU_CASE(TIDE_INT8, int8_t, __VA_ARGS__)    \
  TCU_CASE(TIDE_UINT8, uint8_t, __VA_ARGS__)  \
  TCU_CASE(TIDE_INT32, int32_t, __VA_ARGS__)  \
  TCU_CASE(TIDE_INT64, int64_t, __VA_ARGS__)
