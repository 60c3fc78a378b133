// cuda/random.cu — the random creation ops on the GPU: Philox4x32-10 with the
// CPU's counter layout (cpu/random.c: element i reads block counter + i / per).
#include "common.cuh"

#include <cmath>

using namespace tcu;

namespace {

// core/random.c's tide_philox4x32, word for word.
__device__ __forceinline__ void philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  uint32_t c0 = (uint32_t)counter_lo, c1 = (uint32_t)(counter_lo >> 32);
  uint32_t c2 = (uint32_t)counter_hi, c3 = (uint32_t)(counter_hi >> 32);
  for (int round = 0; round < 10; round++) {
    uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

constexpr double kTwoPi = 6.283185307179586476925286766559;

// The CPU's uniforms; products and sums rounded separately (no FMA contraction),
// as the CPU's baseline build computes them, so uniforms agree bit for bit.
__device__ __forceinline__ float u24(uint32_t w) { return __fmul_rn((float)(w >> 8), 0x1p-24f); }
__device__ __forceinline__ float u24_open0(uint32_t w) { return __fmul_rn((float)((w >> 8) + 1), 0x1p-24f); }
__device__ __forceinline__ uint64_t join64(uint32_t hi, uint32_t lo) { return (uint64_t)hi << 32 | lo; }
__device__ __forceinline__ double u53(uint64_t x) { return __dmul_rn((double)(x >> 11), 0x1p-53); }
__device__ __forceinline__ double u53_open0(uint64_t x) { return __dmul_rn((double)((x >> 11) + 1), 0x1p-53); }

__device__ __forceinline__ void normals_f32(const uint32_t w[4], float z[4]) {
  for (int p = 0; p < 2; p++) {
    float r = sqrtf(__fmul_rn(-2.0f, logf(u24_open0(w[2 * p])))), t = __fmul_rn((float)kTwoPi, u24(w[2 * p + 1]));
    z[2 * p] = __fmul_rn(r, cosf(t));
    z[2 * p + 1] = __fmul_rn(r, sinf(t));
  }
}

__device__ __forceinline__ void normals_f64(const uint32_t w[4], double z[2]) {
  double r = sqrt(__dmul_rn(-2.0, log(u53_open0(join64(w[0], w[1]))))), t = __dmul_rn(kTwoPi, u53(join64(w[2], w[3])));
  z[0] = __dmul_rn(r, cos(t));
  z[1] = __dmul_rn(r, sin(t));
}

// The largest half below bits h (cpu/random.c's half_below).
__device__ __forceinline__ uint16_t half_below(uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0x8001u;
  return (h & 0x8000u) ? (uint16_t)(h + 1) : (uint16_t)(h - 1);
}

// cpu/random.c's store_float.
__device__ __forceinline__ void store_float(void *p, int64_t i, int dt, double v, bool below, double hi) {
  switch (dt) {
  case TIDE_FLOAT64:
    if (below && v >= hi) v = nextafter(hi, -INFINITY);
    ((double *)p)[i] = v;
    break;
  case TIDE_FLOAT32: {
    float f = (float)v;
    if (below && f >= hi) f = nextafterf((float)hi, -INFINITY);
    ((float *)p)[i] = f;
    break;
  }
  case TIDE_FLOAT16: {
    __half h = __float2half_rn((float)v);
    if (below && __half2float(h) >= hi) {
      __half top = __float2half_rn((float)hi);
      h = __ushort_as_half(half_below(__half_as_ushort(top)));
    }
    ((__half *)p)[i] = h;
    break;
  }
  default: {
    __nv_bfloat16 h = __float2bfloat16_rn((float)v);
    if (below && __bfloat162float(h) >= hi) {
      __nv_bfloat16 top = __float2bfloat16_rn((float)hi);
      h = __ushort_as_bfloat16(half_below(__bfloat16_as_ushort(top)));
    }
    ((__nv_bfloat16 *)p)[i] = h;
    break;
  }
  }
}

__device__ __forceinline__ void store_int(void *p, int64_t i, int dt, int64_t v) {
  switch (dt) {
  case TIDE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
  case TIDE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TIDE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int64_t *)p)[i] = v; break;
  }
}

// cpu/random.c's truncated_at: re-draw (counter high word = attempt) until |z| < 2.
__device__ double truncated_at(const tcu_random &c, uint64_t b, int j, double z) {
  for (uint64_t attempt = 1; fabs(z) >= 2.0; attempt++) {
    uint32_t w[4];
    philox4x32(c.key, c.counter + b, attempt, w);
    if (c.dt == TIDE_FLOAT64) {
      double zz[2];
      normals_f64(w, zz);
      z = zz[j];
    } else {
      float zz[4];
      normals_f32(w, zz);
      z = zz[j];
    }
  }
  return z;
}

// One thread per Philox block, filling its `per` elements as rng_blocks does.
__global__ void random_blocks(tcu_random c, int per, int64_t blocks, void *data) {
  TCU_FOR_EACH(b, blocks) {
    uint32_t w[4];
    philox4x32(c.key, c.counter + (uint64_t)b, 0, w);
    int64_t i0 = b * per;
    int m = c.n - i0 < per ? (int)(c.n - i0) : per;
    bool is_int = c.dt == TIDE_INT8 || c.dt == TIDE_UINT8 || c.dt == TIDE_INT32 || c.dt == TIDE_INT64;
    if (c.op == TIDE_OP_RANDOM_UNIFORM) {
      if (is_int) {
        for (int j = 0; j < m; j++) {
          uint64_t x = join64(w[2 * j], w[2 * j + 1]);
          store_int(data, i0 + j, c.dt, (int64_t)((uint64_t)c.imin + x % c.irange));
        }
      } else if (c.dt == TIDE_FLOAT64) {
        for (int j = 0; j < m; j++) {
          double u = u53(join64(w[2 * j], w[2 * j + 1]));
          store_float(data, i0 + j, c.dt, __dadd_rn(c.a, __dmul_rn(c.b - c.a, u)), c.below, c.b);
        }
      } else if (c.dt == TIDE_FLOAT32) {
        float lo = (float)c.a, range = (float)(c.b - c.a), hi = (float)c.b;
        float *o = (float *)data + i0;
        for (int j = 0; j < m; j++) {
          float v = __fadd_rn(lo, __fmul_rn(range, u24(w[j])));
          o[j] = c.below && v >= hi ? c.top : v;
        }
      } else {
        for (int j = 0; j < m; j++)
          store_float(data, i0 + j, c.dt, __dadd_rn(c.a, __dmul_rn(c.b - c.a, (double)u24(w[j]))), c.below, c.b);
      }
      continue;
    }
    double z[4];
    if (c.dt == TIDE_FLOAT64) {
      normals_f64(w, z);
    } else {
      float zf[4];
      normals_f32(w, zf);
      for (int j = 0; j < 4; j++) z[j] = zf[j];
    }
    for (int j = 0; j < m; j++) {
      double v = c.op == TIDE_OP_TRUNCATED_NORMAL ? truncated_at(c, (uint64_t)b, j, z[j]) : z[j];
      store_float(data, i0 + j, c.dt, __dadd_rn(c.a, __dmul_rn(c.b, v)), false, 0);
    }
  }
}

}  // namespace

extern "C" int tcu_random_fill(cudaStream_t s, const tcu_random *r, void *out) {
  if (r->n <= 0) return 0;
  if (r->op != TIDE_OP_RANDOM_UNIFORM && r->op != TIDE_OP_RANDOM_NORMAL && r->op != TIDE_OP_TRUNCATED_NORMAL)
    return TCU_UNSUPPORTED;
  // Values per block: 4 for 32-bit and half floats, else 2 (core/random.c's tide_random_counters).
  int per = r->dt == TIDE_FLOAT32 || r->dt == TIDE_FLOAT16 || r->dt == TIDE_BFLOAT16 ? 4 : 2;
  int64_t blocks = (r->n + per - 1) / per;
  random_blocks<<<blocks_for(blocks), kThreads, 0, s>>>(*r, per, blocks, out);
  return (int)cudaGetLastError();
}
