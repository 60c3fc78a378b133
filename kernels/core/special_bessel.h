/* core/special_bessel.h — Bessel functions and tf.math.special's other functions, in double for C and
 * CUDA alike: I0, I1, K0, K1 (and their exponentially scaled forms), J0, J1, Y0, Y1, Dawson's integral,
 * the exponential integral Ei, the Fresnel integrals and Spence's function (the dilogarithm).
 *
 * Each gives Eigen's (TF's) answers at infinities and outside its domain. J and Y are libm's (glibc on the
 * host, CUDA's own on the device). I and K are computed here from convergent and asymptotic series and a
 * trapezoidal integral that converges exponentially, rather than from Cephes' Chebyshev tables. */
#ifndef TIDE_CORE_SPECIAL_BESSEL_H
#define TIDE_CORE_SPECIAL_BESSEL_H

#include "special.h"

/* ---- I0 and I1 ------------------------------------------------------------------------------------ */

/* For x >= 0, sets *s so that I_nu(x) = e^(x * scaled) * s, nu = 0 or 1: below 30 the power series (every
 * term positive), above it the asymptotic series e^x / sqrt(2 pi x) sum_k a_k / x^k, whose smallest term
 * (near k = 2x) is far below an ulp there. */
TIDE_HD double tide_bessel_i(int nu, double x, bool scaled) {
  if (x <= 30) {
    double q = 0.25 * x * x, t = 1, s = 1;
    for (int k = 1; k < 200; k++) {
      t *= q / ((double)k * (k + nu));
      s += t;
      if (t < s * 1e-17) break;
    }
    if (nu == 1) s *= 0.5 * x;
    return scaled ? s * exp(-x) : s;
  }
  double mu = 4.0 * nu * nu, t = 1, s = 1;
  for (int k = 1; k < 100; k++) {
    double m = 2 * k - 1;
    t *= (m * m - mu) / (8 * k * x);
    s += t;
    if (fabs(t) < s * 1e-17) break;
  }
  s /= sqrt(2 * TIDE_PI * x);
  return scaled ? s : exp(x) * s; /* as Cephes: inf * 0 = NaN at x = inf, overflow past 709.78 */
}

TIDE_HD double tide_bessel_i0_d(double x) { return tide_bessel_i(0, fabs(x), false); }
TIDE_HD double tide_bessel_i0e_d(double x) { return isinf(x) ? 0 : tide_bessel_i(0, fabs(x), true); }
/* I1 is odd; its sign is x < 0's, so -0 gives +0 (as Cephes). */
TIDE_HD double tide_bessel_i1_d(double x) {
  double v = tide_bessel_i(1, fabs(x), false);
  return x < 0 ? -v : v;
}
TIDE_HD double tide_bessel_i1e_d(double x) {
  double v = isinf(x) ? 0 : tide_bessel_i(1, fabs(x), true);
  return x < 0 ? -v : v;
}

/* ---- K0 and K1 ------------------------------------------------------------------------------------ */

/* K_nu(x) e^(x * scaled) for x > 0, nu = 0 or 1. Up to 1 the series (A&S 9.6.11-13): K0 =
 * -(log(x/2) + euler) I0 + sum q^k/(k!)^2 H_k, K1 = 1/x + log(x/2) I1 - x/4 sum q^k/(k!(k+1)!) (psi(k+1) +
 * psi(k+2)), q = x^2/4. Above, e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the
 * trapezoidal rule, whose error for this analytic, doubly-exponentially decaying integrand is about
 * exp(x - pi^2 / h) (h <= 0.2) or exp(-2 pi^2 / (h^2 x)) (h <= 0.6 / sqrt x): below 1e-17 either way. */
TIDE_HD double tide_bessel_k(int nu, double x, bool scaled) {
  if (isnan(x)) return x;
  if (x <= 0) return INFINITY;
  if (x == INFINITY) return 0;
  if (x <= 1) {
    double q = 0.25 * x * x, lg = log(0.5 * x), t = 1, s, k;
    if (nu == 0) {
      double h = 0;
      s = 0;
      for (k = 1; k < 60; k++) {
        t *= q / (k * k);
        h += 1 / k;
        s += t * h;
        if (t * h < s * 1e-17) break;
      }
      s -= (lg + TIDE_EULER) * tide_bessel_i(0, x, false);
    } else {
      double psi1 = -TIDE_EULER, psi2 = 1 - TIDE_EULER; /* psi(k + 1), psi(k + 2) */
      double sum = psi1 + psi2;
      for (k = 1; k < 60; k++) {
        t *= q / (k * (k + 1));
        psi1 = psi2;
        psi2 += 1 / (k + 1);
        sum += t * (psi1 + psi2);
        if (fabs(t * (psi1 + psi2)) < fabs(sum) * 1e-17) break;
      }
      s = 1 / x + lg * tide_bessel_i(1, x, false) - 0.25 * x * sum;
    }
    return scaled ? s * exp(x) : s;
  }
  double h = fmin(0.2, 0.6 / sqrt(x)), s = 0.5;
  for (int k = 1; k < 10000; k++) {
    double t = k * h, sh = sinh(0.5 * t);
    double f = exp(-2 * x * sh * sh); /* cosh t - 1 = 2 sinh^2(t/2), without cancelling */
    if (nu == 1) f *= cosh(t);
    s += f;
    if (f < s * 1e-18) break;
  }
  s *= h;
  return scaled ? s : s * exp(-x);
}

TIDE_HD double tide_bessel_k0_d(double x) { return tide_bessel_k(0, x, false); }
TIDE_HD double tide_bessel_k0e_d(double x) { return tide_bessel_k(0, x, true); }
TIDE_HD double tide_bessel_k1_d(double x) { return tide_bessel_k(1, x, false); }
TIDE_HD double tide_bessel_k1e_d(double x) { return tide_bessel_k(1, x, true); }

/* ---- J0, J1, Y0, Y1 (libm) with Eigen's values where libm's differ -------------------------------- */

/* NaN at +-inf (libm gives 0: the limit; Eigen's Cephes gives NaN). */
TIDE_HD double tide_bessel_j0_d(double x) { return isinf(x) ? NAN : j0(x); }
TIDE_HD double tide_bessel_j1_d(double x) { return isinf(x) ? NAN : j1(x); }
/* -inf for x <= 0 (libm: NaN below 0), NaN at +inf. */
TIDE_HD double tide_bessel_y0_d(double x) { return x <= 0 ? -INFINITY : x == INFINITY ? NAN : y0(x); }
TIDE_HD double tide_bessel_y1_d(double x) { return x <= 0 ? -INFINITY : x == INFINITY ? NAN : y1(x); }

/* ---- Dawson's integral ------------------------------------------------------------------------------ */

/* F(x) = e^(-x^2) int_0^x e^(t^2) dt. Near 0 its series; up to 50 Rybicki's sum (Numerical Recipes'
 * dawson) with h = 0.2 and 20 pairs of terms, whose errors are about exp(-(pi / 2h)^2) and
 * exp(-(39 h)^2), far below an ulp; past 50 the asymptotic series 1/(2x) sum (2k-1)!! / (2x^2)^k. */
TIDE_HD double tide_dawsn_d(double x) {
  if (isnan(x)) return x;
  if (x == 0 || isinf(x)) return 0; /* +0 for -0 and -inf, as Eigen */
  double ax = fabs(x);
  if (ax < 0.2) {
    double x2 = x * x, t = x, s = x;
    for (int n = 1; n < 30; n++) {
      t *= -2 * x2 / (2 * n + 1);
      s += t;
      if (fabs(t) < fabs(s) * 1e-17) break;
    }
    return s;
  }
  if (ax > 50) {
    double r = 1 / (2 * x * x), t = 1, s = 1;
    for (int k = 1; k < 30; k++) {
      t *= (2 * k - 1) * r;
      s += t;
      if (t < s * 1e-17) break;
    }
    return 0.5 / x * s; /* 0 at +-inf */
  }
  const double h = 0.2;
  double n0 = 2 * round(0.5 * ax / h), xp = ax - n0 * h;
  double e1 = exp(2 * xp * h), e2 = e1 * e1, d1 = n0 + 1, d2 = d1 - 2, sum = 0;
  for (int i = 1; i <= 20; i++) {
    double c = (2 * i - 1) * h;
    sum += exp(-c * c) * (e1 / d1 + 1 / (d2 * e1));
    d1 += 2, d2 -= 2, e1 *= e2;
  }
  return copysign(0.56418958354775628695 * exp(-xp * xp) * sum, x); /* 1 / sqrt(pi) */
}

/* ---- the exponential integral Ei ------------------------------------------------------------------- */

/* Ei(x) (tf.math.special.expint): NaN below 0 and at inf, -inf at 0. The series euler + log x +
 * sum x^k / (k k!) up to 50; past it the asymptotic e^x / x sum k! / x^k, stopped at its smallest term. */
TIDE_HD double tide_expint_d(double x) {
  if (isnan(x) || x < 0 || x == INFINITY) return NAN;
  if (x == 0) return -INFINITY;
  if (x <= 50) {
    double t = 1, s = 0;
    for (int k = 1; k < 400; k++) {
      t *= x / k;
      double term = t / k;
      s += term;
      if (term < s * 1e-17) break;
    }
    return TIDE_EULER + log(x) + s;
  }
  double t = 1, s = 1;
  for (int k = 1; k < 60; k++) {
    double next = t * k / x;
    if (next > t) break;
    t = next;
    s += t;
    if (t < s * 1e-17) break;
  }
  return exp(x) / x * s;
}

/* ---- the Fresnel integrals ------------------------------------------------------------------------- */

/* S(x) = int_0^x sin(pi t^2 / 2) dt and C(x) likewise with cos: Numerical Recipes' frenel, in double.
 * Up to 1.5 the two power series; above, the continued fraction of erfc at the complex argument
 * (1 - i) sqrt(pi) x / 2 (modified Lentz). Past 36974 both are 1/2, as Cephes gives them. */
TIDE_HD void tide_fresnel(double x, double *s_out, double *c_out) {
  double ax = fabs(x), s, c;
  if (isnan(x)) {
    *s_out = *c_out = x;
    return;
  }
  if (ax > 36974) {
    s = c = 0.5;
  } else if (ax <= 1.5) {
    /* alternate terms feed c (even powers of pi/2 x^2) and s (odd) */
    double sum = 0, sums = 0, sumc = ax, sign = 1, fact = 0.5 * TIDE_PI * ax * ax, term = ax, n = 3;
    bool odd = true;
    for (int k = 1; k < 100; k++) {
      term *= fact / k;
      sum += sign * term / n;
      double test = fabs(sum) * 1e-17;
      if (odd) {
        sign = -sign;
        sums = sum;
        sum = sumc;
      } else {
        sumc = sum;
        sum = sums;
      }
      if (term < test) break;
      odd = !odd;
      n += 2;
    }
    s = sums, c = sumc;
  } else {
    const double fpmin = 1e-300;
    double pix2 = TIDE_PI * ax * ax;
    double br = 1, bi = -pix2;                            /* b */
    double cr = 1 / fpmin, ci = 0;                        /* cc */
    double den = br * br + bi * bi, dr = br / den, di = -bi / den; /* d = 1 / b */
    double hr = dr, hi = di, n = -1;                     /* h = d */
    for (int k = 2; k < 200; k++) {
      n += 2;
      double a = -n * (n + 1);
      br += 4;
      double xr = a * dr + br, xi = a * di + bi;         /* d = 1 / (a d + b) */
      den = xr * xr + xi * xi;
      dr = xr / den, di = -xi / den;
      den = cr * cr + ci * ci;                           /* cc = b + a / cc */
      double qr = a * cr / den, qi = -a * ci / den;
      cr = br + qr, ci = bi + qi;
      double delr = cr * dr - ci * di, deli = cr * di + ci * dr; /* del = cc d */
      double tr = hr * delr - hi * deli;
      hi = hr * deli + hi * delr, hr = tr;
      if (fabs(delr - 1) + fabs(deli) < 1e-16) break;
    }
    double tr = hr * ax + hi * ax; /* h *= (ax, -ax) */
    hi = hi * ax - hr * ax, hr = tr;
    double er = cos(0.5 * pix2), ei = sin(0.5 * pix2);
    double pr = 1 - (er * hr - ei * hi), pi = -(er * hi + ei * hr); /* 1 - e h */
    c = 0.5 * pr - 0.5 * pi;                                   /* (0.5, 0.5) (1 - e h) */
    s = 0.5 * pr + 0.5 * pi;
  }
  /* odd functions, but TF's (Cephes's) keep +0 at x = -0: the sign by x < 0, not copysign */
  *s_out = x < 0 ? -s : s;
  *c_out = x < 0 ? -c : c;
}

TIDE_HD double tide_fresnel_sin_d(double x) {
  double s, c;
  tide_fresnel(x, &s, &c);
  return s;
}

TIDE_HD double tide_fresnel_cos_d(double x) {
  double s, c;
  tide_fresnel(x, &s, &c);
  return c;
}

/* ---- Spence's function ------------------------------------------------------------------------------ */

/* Li2(z) = sum z^k / k^2 for |z| <= 1/2. */
TIDE_HD double tide_li2_series(double z) {
  double t = 1, s = 0;
  for (int k = 1; k < 80; k++) {
    t *= z;
    double term = t / ((double)k * k);
    s += term;
    if (fabs(term) <= fabs(s) * 1e-17) break;
  }
  return s;
}

/* spence(x) = int_1^x log t / (1 - t) dt = Li2(1 - x) (scipy's, tf.math.special.spence), for x >= 0
 * (NaN below and at inf): the series at an argument of at most 1/2 after the reflection
 * Li2(z) + Li2(1 - z) = pi^2/6 - log z log(1 - z), Landen's Li2(z) = -Li2(z / (z - 1)) - log^2(1 - z) / 2
 * and the inversion Li2(z) = -pi^2/6 - log^2(-z) / 2 - Li2(1 / z), each written in x so no argument
 * rounds. */
TIDE_HD double tide_spence_d(double x) {
  const double pi2_6 = 1.64493406684822643647;
  if (isnan(x) || x < 0 || x == INFINITY) return NAN;
  if (x == 0) return pi2_6;
  if (x <= 0.5) return pi2_6 - log1p(-x) * log(x) - tide_li2_series(x);
  if (x <= 1) return tide_li2_series(1 - x);
  if (x <= 2) {
    double l = log(x);
    return -tide_li2_series((x - 1) / x) - 0.5 * l * l;
  }
  double l = log(x - 1), m = log1p(-1 / x);
  return -pi2_6 - 0.5 * l * l + tide_li2_series(1 / x) + 0.5 * m * m;
}

#endif
