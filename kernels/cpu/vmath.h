/* cpu/vmath.h — float32 exp, sigmoid and tanh written for the vectorizer:
 * no branches, no libm calls, only IEEE adds, multiplies, divides, compares
 * and bit moves, so a loop over them becomes SIMD code at every level of
 * simd.h and gives the same bits at each (no FMA: tide compiles as ISO C,
 * where GCC does not contract a*b+c).
 *
 * Why: glibc's expf/tanhf are scalar calls of ~60-100 instructions each;
 * an LSTM cell's activations spent more time there than in its matmuls.
 * Accuracy (tests/c/test_vmath.c checks every float32 in wide ranges against
 * double-precision libm): exp within 1.5 ulp, sigmoid within 2.5, tanh within 1.5;
 * NaN, infinities, overflow to inf and underflow to 0 or a denormal as libm. */
#ifndef TIDE_CPU_VMATH_H
#define TIDE_CPU_VMATH_H

#include <stdint.h>
#include <string.h>

static inline float tide_vm_from_bits(int32_t i) {
  float f;
  memcpy(&f, &i, sizeof f);
  return f;
}

static inline int32_t tide_vm_bits(float f) {
  int32_t i;
  memcpy(&i, &f, sizeof i);
  return i;
}

/* e^x. Cephes' reduction x = n ln2 + r with |r| <= ln2/2 (ln2 split in two
 * so n ln2_hi is exact), its degree-6 polynomial for e^r, then 2^n applied
 * as two factors, each a normal float, so results that overflow give inf and
 * results below FLT_MIN round to denormals or 0 as one multiply would. */
static inline float tide_vm_expf(float x) {
  const float lo = -104.0f, hi = 89.0f; /* beyond: 0 and inf for sure */
  float xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  xc = x != x ? 0.0f : xc; /* NaN: computed on 0, then given back */
  /* n = round(x / ln2) by the 1.5 * 2^23 trick: exact for |n| < 2^22 */
  const float shift = 12582912.0f;
  float t = xc * 1.44269504088896341f + shift;
  float n = t - shift;
  int32_t ni = tide_vm_bits(t) - tide_vm_bits(shift);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float z = r * r;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * z + r + 1.0f;
  int32_t n1 = ni >> 1, n2 = ni - n1; /* each in [-75, 65]: 2^n1, 2^n2 are normal */
  float y = p * tide_vm_from_bits((n1 + 127) << 23) * tide_vm_from_bits((n2 + 127) << 23);
  return x != x ? x : y;
}

/* 1 / (1 + e^-x), from e = e^-|x| (never overflows): 1/(1+e) for x >= 0 and
 * e/(1+e) below, so small results keep their relative accuracy. */
static inline float tide_vm_sigmoidf(float x) {
  float ax = x < 0 ? -x : x;
  float e = tide_vm_expf(-ax);
  return (x < 0 ? e : 1.0f) / (1.0f + e);
}

/* tanh: Cephes' odd polynomial below |x| = 0.625, else 1 - 2/(e^2|x| + 1)
 * with the sign of x (which gives +-1 once e^2|x| overflows). */
static inline float tide_vm_tanhf(float x) {
  float ax = x < 0 ? -x : x;
  float z = x * x;
  float p = -5.70498872745E-3f;
  p = p * z + 2.06390887954E-2f;
  p = p * z - 5.37397155531E-2f;
  p = p * z + 1.33314422036E-1f;
  p = p * z - 3.33332819422E-1f;
  float small = p * z * x + x;
  float e = tide_vm_expf(ax + ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0 ? -big : big;
  small = x == 0 ? x : small; /* tanh(-0) is -0 */
  return ax < 0.625f ? small : big; /* NaN: ax < 0.625 fails, big is NaN */
}

#endif
