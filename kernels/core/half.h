/* core/half.h — the float16/bfloat16 <-> float conversions as static inline
 * functions: dtype.c's exported tide_float_to_half & co. are these, and the
 * bulk loops (cpu/iter.c) inline them rather than call through the PLT. */
#ifndef TIDE_CORE_HALF_H
#define TIDE_CORE_HALF_H
#include <stdint.h>
#include <string.h>

static inline uint32_t half_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float half_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* IEEE half from float, round to nearest even; NaN and infinity kept. */
static inline uint16_t half_from_float(float f) {
  uint32_t x = half_float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* inf or NaN (keep a quiet NaN) */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow to infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
    /* Adding 0.5 shifts the mantissa so that float rounding does ours. */
    float v = half_bits_float(abs) + 0.5f;
    return (uint16_t)(sign | (half_float_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round to even */
  return (uint16_t)(sign | (abs >> 13));
}

/* The float an IEEE half holds (exactly). */
static inline float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return half_bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) { /* zero or subnormal: mant * 2^-24 */
    float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return half_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* bfloat16 from float, round to nearest even; NaN stays a quiet NaN. */
static inline uint16_t bfloat16_from_float(float f) {
  uint32_t x = half_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* The float a bfloat16 holds (exactly). */
static inline float bfloat16_to_float(uint16_t b) { return half_bits_float((uint32_t)b << 16); }

#endif
