/* core/philox.h — Philox4x32-10 (Salmon et al., SC'11), the counter layout of
 * the random ops and the mapping of a block's bits to uniforms and normals:
 * one text for the CPU's random kernels (cpu/random.c) and CUDA's (cuda/random.cu).
 *
 * Uniforms agree bit for bit between the two: products and sums are rounded
 * one by one (TIDE_MUL_RN, TIDE_ADD_RN), never contracted into an FMA, as
 * the CPU's build computes them. Normals go through each side's log, sqrt,
 * sin and cos, and so agree only to their accuracy. */
#ifndef TIDE_CORE_PHILOX_H
#define TIDE_CORE_PHILOX_H

#include "hd.h"
#include "tide/ops.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__)
#define TIDE_FMUL_RN(a, b) __fmul_rn(a, b)
#define TIDE_FADD_RN(a, b) __fadd_rn(a, b)
#define TIDE_DMUL_RN(a, b) __dmul_rn(a, b)
#define TIDE_DADD_RN(a, b) __dadd_rn(a, b)
#else
#define TIDE_FMUL_RN(a, b) ((a) * (b))
#define TIDE_FADD_RN(a, b) ((a) + (b))
#define TIDE_DMUL_RN(a, b) ((a) * (b))
#define TIDE_DADD_RN(a, b) ((a) + (b))
#endif

/* a * b: the low word, and the high word in *hi. */
TIDE_HD uint32_t tide_philox_mulhilo(uint32_t a, uint32_t b, uint32_t *hi) {
#if defined(__CUDA_ARCH__)
  *hi = __umulhi(a, b);
  return a * b;
#else
  uint64_t p = (uint64_t)a * b;
  *hi = (uint32_t)(p >> 32);
  return (uint32_t)p;
#endif
}

/* The four words of block (counter_lo, counter_hi) under key (core/random.c's
 * tide_philox4x32, the public face, is this). */
TIDE_HD void tide_philox(uint64_t key, uint64_t counter_lo, uint64_t counter_hi, uint32_t out[4]) {
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  uint32_t c0 = (uint32_t)counter_lo, c1 = (uint32_t)(counter_lo >> 32);
  uint32_t c2 = (uint32_t)counter_hi, c3 = (uint32_t)(counter_hi >> 32);
  for (int round = 0; round < 10; round++) {
    uint32_t hi0, hi1;
    uint32_t lo0 = tide_philox_mulhilo(0xD2511F53u, c0, &hi0), lo1 = tide_philox_mulhilo(0xCD9E8D57u, c2, &hi1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Values one block of four words yields for random op `op` of dtype dt:
 * 4 for 32-bit and half floats of the creation ops, else 2 (64 bits each).
 * Element i of an op reads block counter + i / per (see tide_random_counters). */
TIDE_HD int tide_random_per_block(int op, int dt) {
  bool creation = op == TIDE_OP_RANDOM_UNIFORM || op == TIDE_OP_RANDOM_NORMAL || op == TIDE_OP_TRUNCATED_NORMAL;
  return creation && (dt == TIDE_FLOAT32 || dt == TIDE_FLOAT16 || dt == TIDE_BFLOAT16) ? 4 : 2;
}

/* Uniforms: [0, 1) from 24 or 53 bits; (0, 1] for the logarithm of Box-Muller. */
TIDE_HD float tide_u24(uint32_t w) { return TIDE_FMUL_RN((float)(w >> 8), 0x1p-24f); }
TIDE_HD float tide_u24_open0(uint32_t w) { return TIDE_FMUL_RN((float)((w >> 8) + 1), 0x1p-24f); }
TIDE_HD uint64_t tide_join64(uint32_t hi, uint32_t lo) { return (uint64_t)hi << 32 | lo; }
TIDE_HD double tide_u53(uint64_t x) { return TIDE_DMUL_RN((double)(x >> 11), 0x1p-53); }
TIDE_HD double tide_u53_open0(uint64_t x) { return TIDE_DMUL_RN((double)((x >> 11) + 1), 0x1p-53); }

#define TIDE_TWO_PI 6.283185307179586476925286766559

/* Box-Muller: four standard normals from one block (32-bit precision). */
TIDE_HD void tide_normals_f32(const uint32_t w[4], float z[4]) {
  for (int p = 0; p < 2; p++) {
    float r = sqrtf(TIDE_FMUL_RN(-2.0f, logf(tide_u24_open0(w[2 * p]))));
    float t = TIDE_FMUL_RN((float)TIDE_TWO_PI, tide_u24(w[2 * p + 1]));
    z[2 * p] = TIDE_FMUL_RN(r, cosf(t));
    z[2 * p + 1] = TIDE_FMUL_RN(r, sinf(t));
  }
}

/* Box-Muller: two standard normals from one block (64-bit precision). */
TIDE_HD void tide_normals_f64(const uint32_t w[4], double z[2]) {
  double r = sqrt(TIDE_DMUL_RN(-2.0, log(tide_u53_open0(tide_join64(w[0], w[1])))));
  double t = TIDE_DMUL_RN(TIDE_TWO_PI, tide_u53(tide_join64(w[2], w[3])));
  z[0] = TIDE_DMUL_RN(r, cos(t));
  z[1] = TIDE_DMUL_RN(r, sin(t));
}

/* Normal j of block `block` (its first draw z), re-drawn (counter high word =
 * attempt) until |z| < 2 as TF's truncated normal does; each element's
 * attempts are its own, so the result depends on nothing but (key, block, j). */
TIDE_HD double tide_truncated_normal(uint64_t key, uint64_t block, int j, bool f64, double z) {
  for (uint64_t attempt = 1; fabs(z) >= 2.0; attempt++) {
    uint32_t w[4];
    tide_philox(key, block, attempt, w);
    if (f64) {
      double zz[2];
      tide_normals_f64(w, zz);
      z = zz[j];
    } else {
      float zz[4];
      tide_normals_f32(w, zz);
      z = zz[j];
    }
  }
  return z;
}

/* lo + scale * u (uniforms in [lo, hi) with scale = hi - lo; normals with mean
 * and stddev), rounded as the CPU does it. */
TIDE_HD float tide_affine_f32(float lo, float scale, float u) { return TIDE_FADD_RN(lo, TIDE_FMUL_RN(scale, u)); }
TIDE_HD double tide_affine_f64(double lo, double scale, double u) { return TIDE_DADD_RN(lo, TIDE_DMUL_RN(scale, u)); }

/* The largest half (float16 or bfloat16) below bits h, in IEEE sign-magnitude order. */
TIDE_HD uint16_t tide_half_below(uint16_t h) {
  if ((h & 0x7fffu) == 0) return 0x8001u;
  return (h & 0x8000u) ? (uint16_t)(h + 1) : (uint16_t)(h - 1);
}

#endif
