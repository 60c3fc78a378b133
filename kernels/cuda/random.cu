// cuda/random.cu — the random creation ops on the GPU: core/philox.h's Philox,
// counter layout and mapping, as the CPU's (cpu/random.c: element i reads block counter + i / per).
#include "common.cuh"
#include "../core/philox.h"

#include <cmath>

using namespace tcu;

namespace {

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
      h = __ushort_as_half(tide_half_below(__half_as_ushort(top)));
    }
    ((__half *)p)[i] = h;
    break;
  }
  default: {
    __nv_bfloat16 h = __float2bfloat16_rn((float)v);
    if (below && __bfloat162float(h) >= hi) {
      __nv_bfloat16 top = __float2bfloat16_rn((float)hi);
      h = __ushort_as_bfloat16(tide_half_below(__bfloat16_as_ushort(top)));
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

// One thread per Philox block, filling its `per` elements as cpu/random.c's rng_blocks does.
__global__ void random_blocks(tcu_random c, int per, int64_t blocks, void *data) {
  TCU_FOR_EACH(b, blocks) {
    uint32_t w[4];
    tide_philox(c.key, c.counter + (uint64_t)b, 0, w);
    int64_t i0 = b * per;
    int m = c.n - i0 < per ? (int)(c.n - i0) : per;
    bool is_int = c.dt == TIDE_INT8 || c.dt == TIDE_UINT8 || c.dt == TIDE_INT32 || c.dt == TIDE_INT64;
    if (c.op == TIDE_OP_RANDOM_UNIFORM) {
      if (is_int) {
        for (int j = 0; j < m; j++) {
          uint64_t x = tide_join64(w[2 * j], w[2 * j + 1]);
          store_int(data, i0 + j, c.dt, (int64_t)((uint64_t)c.imin + x % c.irange));
        }
      } else if (c.dt == TIDE_FLOAT64) {
        for (int j = 0; j < m; j++) {
          double u = tide_u53(tide_join64(w[2 * j], w[2 * j + 1]));
          store_float(data, i0 + j, c.dt, tide_affine_f64(c.a, c.b - c.a, u), c.below, c.b);
        }
      } else if (c.dt == TIDE_FLOAT32) {
        float lo = (float)c.a, range = (float)(c.b - c.a), hi = (float)c.b;
        float *o = (float *)data + i0;
        for (int j = 0; j < m; j++) {
          float v = tide_affine_f32(lo, range, tide_u24(w[j]));
          o[j] = c.below && v >= hi ? c.top : v;
        }
      } else {
        for (int j = 0; j < m; j++)
          store_float(data, i0 + j, c.dt, tide_affine_f64(c.a, c.b - c.a, (double)tide_u24(w[j])), c.below, c.b);
      }
      continue;
    }
    double z[4];
    if (c.dt == TIDE_FLOAT64) {
      tide_normals_f64(w, z);
    } else {
      float zf[4];
      tide_normals_f32(w, zf);
      for (int j = 0; j < 4; j++) z[j] = zf[j];
    }
    for (int j = 0; j < m; j++) {
      double v = c.op == TIDE_OP_TRUNCATED_NORMAL
                   ? tide_truncated_normal(c.key, c.counter + (uint64_t)b, j, c.dt == TIDE_FLOAT64, z[j])
                   : z[j];
      store_float(data, i0 + j, c.dt, tide_affine_f64(c.a, c.b, v), false, 0);
    }
  }
}

}  // namespace

extern "C" int tcu_random_fill(cudaStream_t s, const tcu_random *r, void *out) {
  if (r->n <= 0) return 0;
  if (r->op != TIDE_OP_RANDOM_UNIFORM && r->op != TIDE_OP_RANDOM_NORMAL && r->op != TIDE_OP_TRUNCATED_NORMAL)
    return TCU_UNSUPPORTED;
  int per = tide_random_per_block(r->op, r->dt);
  int64_t blocks = (r->n + per - 1) / per;
  random_blocks<<<blocks_for(blocks), kThreads, 0, s>>>(*r, per, blocks, out);
  return (int)cudaGetLastError();
}
