/* cpu/vmath.h — float32 SIMD vectors of the width the file is compiled for
 * (AVX-512: 16 lanes, AVX: 8, else 4), their loads, stores, rounding and
 * square root, and vector exp, sigmoid and tanh (within a few ulp of libm). */
#ifndef TIDE_CPU_VMATH_H
#define TIDE_CPU_VMATH_H

/* Everything here is static inline and follows the -m flags of the file
 * that includes it: a kernel compiled once per ISA gets that ISA's vectors.
 * The exact operations (+ - * /, sqrt, rint, floor, ceil, compares, selects)
 * give the same bits as the scalar C loops; exp, sigmoid and tanh are
 * polynomial approximations (tests/c/test_vmath.c measures their error at
 * every level) and the one float32 form of those ops: the unary kernels
 * (cpu/unary.c) and the fused engine (cpu/fused_f32.c) both call them, so
 * a fused node and the eager op agree bit for bit. They use FMA where the
 * level has it (about a quarter faster), so levels may differ in the last
 * bit (tests/c/test_simd.c allows 2 ulp there and nowhere else). */

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define TIDE_VF_LANES 16
#elif defined(__AVX__)
#define TIDE_VF_LANES 8
#else
#define TIDE_VF_LANES 4
#endif

/* A vector of floats, of int32 lanes (masks: all bits set or none), and
 * unaligned, aliasing views of memory as either. */
typedef float tide_vf __attribute__((vector_size(4 * TIDE_VF_LANES)));
typedef int32_t tide_vi __attribute__((vector_size(4 * TIDE_VF_LANES)));
typedef float tide_vf_mem __attribute__((vector_size(4 * TIDE_VF_LANES), aligned(4), may_alias));
typedef int32_t tide_vi_mem __attribute__((vector_size(4 * TIDE_VF_LANES), aligned(4), may_alias));

static inline tide_vf tide_vload(const float *p) { return *(const tide_vf_mem *)p; }
static inline void tide_vstore(float *p, tide_vf v) { *(tide_vf_mem *)p = v; }
/* x in every lane (x - 0 keeps -0 and NaN exactly, where 0 + x would not). */
static inline tide_vf tide_vsplat(float x) { return x - (tide_vf){0}; }
static inline tide_vf tide_vbits(tide_vi m) { return (tide_vf)m; }
static inline tide_vi tide_vmask(tide_vf v) { return (tide_vi)v; }

/* Lanes of a where m is set, else of b. */
static inline tide_vf tide_vselect(tide_vi m, tide_vf a, tide_vf b) {
  return (tide_vf)(((tide_vi)a & m) | ((tide_vi)b & ~m));
}

/* A store past the caches (p 64-byte aligned where the ISA wants it). */
static inline void tide_vstream(float *p, tide_vf v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, (__m512)v);
#elif defined(__AVX__)
  _mm256_stream_ps(p, (__m256)v);
#elif defined(__SSE2__)
  _mm_stream_ps(p, (__m128)v);
#else
  tide_vstore(p, v);
#endif
}

/* a * b + c, fused where the ISA has it (only the approximations use it:
 * exact ops never contract). */
static inline tide_vf tide_vfma(tide_vf a, tide_vf b, tide_vf c) {
#if defined(__AVX512F__)
  return (tide_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__)
  return (tide_vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
  return a * b + c;
#endif
}

/* Lane by lane through a scalar function (ISAs without the instruction). */
#define TIDE_VF_PER_LANE(v, fn)                                      \
  do {                                                               \
    float lanes_[TIDE_VF_LANES];                                     \
    memcpy(lanes_, &(v), sizeof lanes_);                             \
    for (int i_ = 0; i_ < TIDE_VF_LANES; i_++) lanes_[i_] = fn(lanes_[i_]); \
    memcpy(&(v), lanes_, sizeof lanes_);                             \
  } while (0)

/* IEEE square root (as sqrtf). */
static inline tide_vf tide_vsqrt(tide_vf x) {
#if defined(__AVX512F__)
  return (tide_vf)_mm512_sqrt_ps((__m512)x);
#elif defined(__AVX__)
  return (tide_vf)_mm256_sqrt_ps((__m256)x);
#elif defined(__SSE2__)
  return (tide_vf)_mm_sqrt_ps((__m128)x);
#else
  TIDE_VF_PER_LANE(x, __builtin_sqrtf);
  return x;
#endif
}

/* Round to an integral value: mode 0 nearest even (rint), 1 down (floor), 2 up (ceil). */
#if defined(__AVX512F__)
#define TIDE_VROUND(x, mode) ((tide_vf)_mm512_roundscale_ps((__m512)(x), (mode) | _MM_FROUND_NO_EXC))
#elif defined(__AVX__)
#define TIDE_VROUND(x, mode) ((tide_vf)_mm256_round_ps((__m256)(x), (mode) | _MM_FROUND_NO_EXC))
#elif defined(__SSE4_1__)
#define TIDE_VROUND(x, mode) ((tide_vf)_mm_round_ps((__m128)(x), (mode) | _MM_FROUND_NO_EXC))
#endif
static inline tide_vf tide_vrint(tide_vf x) {
#ifdef TIDE_VROUND
  return TIDE_VROUND(x, _MM_FROUND_TO_NEAREST_INT);
#else
  TIDE_VF_PER_LANE(x, __builtin_rintf);
  return x;
#endif
}
static inline tide_vf tide_vfloor(tide_vf x) {
#ifdef TIDE_VROUND
  return TIDE_VROUND(x, _MM_FROUND_TO_NEG_INF);
#else
  TIDE_VF_PER_LANE(x, __builtin_floorf);
  return x;
#endif
}
static inline tide_vf tide_vceil(tide_vf x) {
#ifdef TIDE_VROUND
  return TIDE_VROUND(x, _MM_FROUND_TO_POS_INF);
#else
  TIDE_VF_PER_LANE(x, __builtin_ceilf);
  return x;
#endif
}

/* e^x: n = rint(x / ln 2), r = x - n ln 2 in two parts, a degree-6
 * polynomial for e^r (Cephes' expf), then 2^n applied as two factors so
 * that results in the subnormal range and overflow to inf come out right.
 * NaN gives NaN; -inf gives 0; +inf gives inf. */
static inline tide_vf tide_vexp(tide_vf x) {
  const tide_vf hi = tide_vsplat(89.0f), lo = tide_vsplat(-104.0f);
  tide_vf xc = tide_vselect(x > hi, hi, x);
  xc = tide_vselect(xc < lo, lo, xc);
  tide_vf n = tide_vrint(xc * tide_vsplat(1.44269504088896341f));
  tide_vf r = tide_vfma(n, tide_vsplat(-0.693359375f), xc);
  r = tide_vfma(n, tide_vsplat(2.12194440e-4f), r);
  tide_vf p = tide_vsplat(1.9875691500e-4f);
  p = tide_vfma(p, r, tide_vsplat(1.3981999507e-3f));
  p = tide_vfma(p, r, tide_vsplat(8.3334519073e-3f));
  p = tide_vfma(p, r, tide_vsplat(4.1665795894e-2f));
  p = tide_vfma(p, r, tide_vsplat(1.6666665459e-1f));
  p = tide_vfma(p, r, tide_vsplat(5.0000001201e-1f));
  p = tide_vfma(p, r * r, r) + tide_vsplat(1.0f);
  /* n in [-150, 129]: split so that each factor's exponent is normal. NaN
   * lanes convert to some integer; p is NaN there and stays so. */
  tide_vi ni = __builtin_convertvector(tide_vselect(n == n, n, tide_vsplat(0.0f)), tide_vi);
  tide_vi n1 = ni >> 1, n2 = ni - n1;
  tide_vf s1 = (tide_vf)((n1 + 127) << 23), s2 = (tide_vf)((n2 + 127) << 23);
  return p * s1 * s2;
}

/* 1 / (1 + e^-x), written as the scalar kernel does so that it keeps its
 * relative accuracy for negative x: e^x / (1 + e^x) there. */
static inline tide_vf tide_vsigmoid(tide_vf x) {
  const tide_vf one = tide_vsplat(1.0f);
  tide_vi neg = x < tide_vsplat(0.0f);
  tide_vf e = tide_vexp(tide_vselect(neg, x, -x)); /* e^-|x| */
  tide_vf d = one + e;
  return tide_vselect(neg, e / d, one / d);
}

/* tanh: an odd polynomial below |x| = 0.625 (Cephes' tanhf), else
 * 1 - 2 / (e^2|x| + 1); both on |x|, then x's sign (so -0 stays -0). */
static inline tide_vf tide_vtanh(tide_vf x) {
  const tide_vi sign = (tide_vi){0} + INT32_MIN;
  tide_vf a = (tide_vf)((tide_vi)x & ~sign);
  tide_vf z = a * a;
  tide_vf p = tide_vsplat(-5.70498872745e-3f);
  p = tide_vfma(p, z, tide_vsplat(2.06390887954e-2f));
  p = tide_vfma(p, z, tide_vsplat(-5.37397155531e-2f));
  p = tide_vfma(p, z, tide_vsplat(1.33314422036e-1f));
  p = tide_vfma(p, z, tide_vsplat(-3.33332819422e-1f));
  tide_vf small = tide_vfma(p * z, a, a);
  tide_vf e = tide_vexp(a + a);
  tide_vf big = tide_vsplat(1.0f) - tide_vsplat(2.0f) / (e + tide_vsplat(1.0f));
  tide_vf t = tide_vselect(a < tide_vsplat(0.625f), small, big);
  return (tide_vf)((tide_vi)t | ((tide_vi)x & sign));
}

#endif
