/* cpu/fft_plan.h — the FFT engine under tf.signal's kernels (cpu/fft.c): plans for complex and
 * real transforms of one length, in double precision, unscaled, shared through a small cache. */
#ifndef TIDE_CPU_FFT_PLAN_H
#define TIDE_CPU_FFT_PLAN_H

#include <stdint.h>

typedef struct fftp_cpx {
  double r, i;
} fftp_cpx;

typedef struct fftp_plan fftp_plan;

/* The plan for a complex transform of length n >= 1 (real = 0), or for a real one (real = 1),
 * from the shared cache; NULL when out of memory. Every plan got is given back with fftp_put. */
fftp_plan *fftp_get(int64_t n, int real);
void fftp_put(fftp_plan *p);

/* Complex elements of scratch that fftp_c2c, fftp_r2c and fftp_c2r need with this plan. */
int64_t fftp_scratch(const fftp_plan *p);

/* out = DFT(in) (sign -1) or, with inverse, the unscaled inverse (sign +1); in and out of n
 * elements, in != out. A complex plan. */
void fftp_c2c(const fftp_plan *p, const fftp_cpx *in, fftp_cpx *out, int inverse, fftp_cpx *scratch);

/* out[0 .. n/2] = the first half of the DFT of the n reals in. A real plan. */
void fftp_r2c(const fftp_plan *p, const double *in, fftp_cpx *out, fftp_cpx *scratch);

/* out[0 .. n) = n times the real signal whose half spectrum is in[0 .. n/2] (imaginary parts of
 * the 0th and, for an even n, the n/2-th ignored, as Hermitian symmetry makes them 0). A real plan. */
void fftp_c2r(const fftp_plan *p, const fftp_cpx *in, double *out, fftp_cpx *scratch);

#endif
