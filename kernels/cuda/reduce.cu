// cuda/reduce.cu — sum, mean, max, min, prod, any, all over the middle axis
// of a contiguous [outer, r, inner] view (the C side arranges any axes so).
#include "common.cuh"

using namespace tcu;

namespace {

// The accumulator, identity, combination and final step of reduction OP on T.
template <int OP, typename T> struct Reducer {
  using A = typename Acc<T>::type;
  __device__ static A identity() {
    if constexpr (OP == TIDE_OP_SUM || OP == TIDE_OP_MEAN || OP == TIDE_OP_ANY) return (A)0;
    else if constexpr (OP == TIDE_OP_PROD || OP == TIDE_OP_ALL) return (A)1;
    else if constexpr (OP == TIDE_OP_MAX) { if constexpr (std::is_floating_point<A>::value) return (A)-INFINITY; else return std::numeric_limits<A>::lowest(); }
    else if constexpr (OP == TIDE_OP_MIN) { if constexpr (std::is_floating_point<A>::value) return (A)INFINITY; else return std::numeric_limits<A>::max(); }
    else static_assert(OP < 0, "no such reduction");
  }
  __device__ static A load(T v) {
    if constexpr (OP == TIDE_OP_ANY || OP == TIDE_OP_ALL) return (A)(v != 0);  // any nonzero byte is true
    else return widen(v);
  }
  __device__ static A combine(A a, A b) {
    if constexpr (OP == TIDE_OP_SUM || OP == TIDE_OP_MEAN) return (A)(a + b);
    else if constexpr (OP == TIDE_OP_PROD) return (A)(a * b);
    else if constexpr (OP == TIDE_OP_ANY) return (A)(a | b);
    else if constexpr (OP == TIDE_OP_ALL) return (A)(a & b);
    else if constexpr (OP == TIDE_OP_MAX) return (a > b || a != a) ? a : b;  // NaN propagates
    else return (a < b || a != a) ? a : b;
  }
  __device__ static T finish(A a, int64_t r) {
    if constexpr (OP == TIDE_OP_MEAN) {
      if constexpr (std::is_integral<A>::value) return r ? (T)(a / (A)r) : (T)0;
      else return narrow<T>(a / (A)r);  // r == 0: NaN, as 0 / 0
    } else {
      return narrow<T>(a);
    }
  }
};

// One block per output row when inner == 1: threads stride over r, then a tree in shared memory.
template <int OP, typename T> __global__ void reduce_rows(const T *x, T *out, int64_t outer, int64_t r) {
  using R = Reducer<OP, T>;
  using A = typename R::A;
  __shared__ A part[kThreads];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    A acc = R::identity();
    for (int64_t j = threadIdx.x; j < r; j += blockDim.x) acc = R::combine(acc, R::load(x[row * r + j]));
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if ((int)threadIdx.x < w) part[threadIdx.x] = R::combine(part[threadIdx.x], part[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[row] = R::finish(part[0], r);
    __syncthreads();
  }
}

// One thread per output element when inner > 1: neighbouring threads read neighbouring columns.
template <int OP, typename T> __global__ void reduce_cols(const T *x, T *out, int64_t outer, int64_t r, int64_t inner) {
  using R = Reducer<OP, T>;
  TCU_FOR_EACH(i, outer * inner) {
    int64_t o = i / inner, c = i % inner;
    typename R::A acc = R::identity();
    for (int64_t j = 0; j < r; j++) acc = R::combine(acc, R::load(x[(o * r + j) * inner + c]));
    out[i] = R::finish(acc, r);
  }
}

template <int OP, typename T> int launch_reduce(cudaStream_t s, const void *x, void *out, int64_t outer, int64_t r, int64_t inner) {
  if (outer * inner == 0) return 0;
  if (inner == 1) {
    unsigned blocks = (unsigned)(outer < 65536 ? outer : 65536);
    reduce_rows<OP, T><<<blocks, kThreads, 0, s>>>((const T *)x, (T *)out, outer, r);
  } else {
    reduce_cols<OP, T><<<blocks_for(outer * inner), kThreads, 0, s>>>((const T *)x, (T *)out, outer, r, inner);
  }
  return (int)cudaGetLastError();
}

#define REDUCE_NUM(OP)                                                                                   \
  case OP: switch (dt) {                                                                                 \
      TCU_FLOAT_CASES(return launch_reduce<OP, T>(s, x, out, outer, r, inner))                           \
      TCU_INT_CASES(return launch_reduce<OP, T>(s, x, out, outer, r, inner)) default: break; } break;

}  // namespace

extern "C" int tcu_reduce(cudaStream_t s, int op, int dt, const void *x, void *out, int64_t outer, int64_t r,
                          int64_t inner) {
  switch (op) {
    REDUCE_NUM(TIDE_OP_SUM)
    REDUCE_NUM(TIDE_OP_MEAN)
    REDUCE_NUM(TIDE_OP_MAX)
    REDUCE_NUM(TIDE_OP_MIN)
    REDUCE_NUM(TIDE_OP_PROD)
  case TIDE_OP_ANY:
    if (dt == TIDE_BOOL) return launch_reduce<TIDE_OP_ANY, uint8_t>(s, x, out, outer, r, inner);
    break;
  case TIDE_OP_ALL:
    if (dt == TIDE_BOOL) return launch_reduce<TIDE_OP_ALL, uint8_t>(s, x, out, outer, r, inner);
    break;
  default: break;
  }
  return TCU_UNSUPPORTED;
}
