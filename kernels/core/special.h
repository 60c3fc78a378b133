/* core/special.h — the gamma-family special functions of elementwise.def, in double for C and CUDA alike:
 * lgamma, digamma, Hurwitz zeta, polygamma, the regularized incomplete gamma (and its derivative in a),
 * the regularized incomplete beta, and the inverses of erf and of the normal CDF.
 *
 * The algorithms are Cephes' (S. Moshier), as TF's Eigen implements them, with Eigen's answers at poles,
 * infinities and outside the domain (TF's). float32 rows call them in double and round once: a result
 * within half an ulp of float32 where Eigen's float versions may be a few ulps off. The inverses of erf
 * refine an estimate by Newton steps on libm's erf/erfc instead of Cephes' rational tables. */
#ifndef TIDE_CORE_SPECIAL_H
#define TIDE_CORE_SPECIAL_H

#include "hd.h"

#include <math.h>
#include <stdbool.h>

#define TIDE_PI 3.14159265358979323846
#define TIDE_EULER 0.57721566490153286061
#define TIDE_MACHEP 1.11022302462515654042e-16 /* 2^-53 */
#define TIDE_MAXLOG 7.09782712893383996843e2   /* log(DBL_MAX) */
#define TIDE_MINLOG (-7.451332191019412076235e2)
#define TIDE_MAXGAM 171.624376956302725       /* Gamma overflows past it */
#define TIDE_BIG 4.503599627370496e15         /* continued fractions rescale past it */
#define TIDE_BIGINV 2.22044604925031308085e-16

/* log|Gamma(x)|: libm's (the reentrant form on the host: lgamma writes the global signgam). */
TIDE_HD double tide_lgamma_d(double x) {
#if defined(__CUDA_ARCH__)
  return lgamma(x);
#else
  int sign;
  return lgamma_r(x, &sign);
#endif
}

/* ---- digamma, zeta, polygamma ----------------------------------------------------------------- */

/* psi(x) (Cephes psi): NaN at 0, the negative integers and -inf, as Eigen. Below 0 by the reflection
 * psi(1 - x) - pi / tan(pi x); up to 10 by recurrence; then the asymptotic series in 1/x^2, whose
 * coefficients are B_2k / 2k. */
TIDE_HD double tide_digamma_d(double x) {
  if (isnan(x) || x == INFINITY) return x;
  double reflect = 0;
  bool negative = false;
  if (x <= 0) {
    double p = floor(x);
    if (p == x) return NAN;
    negative = true;
    double nz = x - p;
    if (nz != 0.5) {
      if (nz > 0.5) nz = x - (p + 1);
      reflect = TIDE_PI / tan(TIDE_PI * nz);
    }
    x = 1 - x;
  }
  double y;
  if (x <= 10 && x == floor(x)) { /* harmonic numbers: exact to the last bit */
    y = 0;
    int n = (int)x;
    for (int i = 1; i < n; i++) y += 1.0 / i;
    y -= TIDE_EULER;
  } else {
    double s = x, w = 0;
    while (s < 10) {
      w += 1 / s;
      s += 1;
    }
    double z = 0;
    if (s < 1e17) {
      double q = 1 / (s * s);
      z = q * (8.33333333333333333333e-2 + q * (-8.33333333333333333333e-3 + q * (3.96825396825396825397e-3 +
          q * (-4.16666666666666666667e-3 + q * (7.57575757575757575758e-3 + q * (-2.10927960927960927961e-2 +
          q * 8.33333333333333333333e-2))))));
    }
    y = log(s) - 0.5 / s - z - w;
  }
  return negative ? y - reflect : y;
}

/* The Hurwitz zeta function sum (k + q)^-x over k >= 0 (Cephes zeta; Eigen's domain): +inf at x = 1,
 * NaN below; for q a non-positive integer +inf when x is an even integer, else NaN; for other q <= 0,
 * NaN unless x is an integer. Euler-Maclaurin: nine terms summed (until k + q > 9), the rest by the
 * integral and Bernoulli corrections; A[i] = (2i + 2)! / B_(2i + 2). */
TIDE_HD double tide_zeta_d(double x, double q) {
  if (x == 1) return INFINITY;
  if (x < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return (x == floor(x) && fmod(x, 2) == 0) ? INFINITY : NAN;
    if (x != floor(x)) return NAN;
  }
  double s = pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i++;
    a += 1;
    b = pow(a, -x);
    s += b;
    if (fabs(b / s) < TIDE_MACHEP) return s;
  }
  if (b == 0) return s; /* the tail is 0 too (and its `a` could overflow) */
  const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                        7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                        -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  double w = a, k = 0;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  a = 1;
  for (i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    double t = a * b / A[i];
    s += t;
    if (fabs(t / s) < TIDE_MACHEP) break;
    k += 1;
    a *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

/* The n-th derivative of digamma: NaN unless n is an integer; (-1)^(n+1) n! zeta(n + 1, x). */
TIDE_HD double tide_polygamma_d(double n, double x) {
  if (isnan(n) || floor(n) != n) return NAN;
  if (n == 0) return tide_digamma_d(x);
  double np1 = n + 1;
  double sign = isinf(np1) || fmod(np1, 2) == 0 ? 1 : -1; /* (-1)^(n+1), 1 at n = inf as TF's pow(-1, inf) */
  return sign * exp(tide_lgamma_d(np1)) * tide_zeta_d(np1, x);
}

/* ---- the regularized incomplete gamma function ---------------------------------------------- */

/* x^a e^-x / Gamma(a), or 0 where it underflows (or is NaN: a = inf). */
TIDE_HD double tide_igamma_num(double a, double x) {
  double logax = a * log(x) - x - tide_lgamma_d(a);
  if (logax < -TIDE_MAXLOG || isnan(logax)) return 0;
  return exp(logax);
}

/* P(a, x) by its power series (x <= 1 or x <= a). With d, also dP/da: each term's derivative is the term
 * times -sum 1/(a + k), and the prefactor x^a e^-x / Gamma(a + 1) adds (log x - psi(a + 1)) P. */
TIDE_HD double tide_igamma_series(double a, double x, double *d) {
  double ax = tide_igamma_num(a, x);
  if (ax == 0) {
    if (d) *d = 0;
    return 0;
  }
  ax /= a;
  double r = a, c = 1, ans = 1, dc = 0, dans = 0;
  for (int i = 0; i < 2000; i++) {
    r += 1;
    dc = dc * x / r - c * x / (r * r); /* d/da of c * x / r, r = a + n */
    c *= x / r;
    ans += c;
    dans += dc;
    if (c <= TIDE_MACHEP * ans && (!d || fabs(dc) <= TIDE_MACHEP * fabs(dans))) break;
  }
  if (d) *d = ax * (ans * (log(x) - tide_digamma_d(a + 1)) + dans);
  return ans * ax;
}

/* Q(a, x) = 1 - P(a, x) by its continued fraction (x > 1 and x > a). With d, also dQ/da, by carrying the
 * derivatives of the recurrence's numerators and denominators along (y and z move with -a). */
TIDE_HD double tide_igammac_cf(double a, double x, double *d) {
  if (isinf(x)) {
    if (d) *d = 0;
    return 0;
  }
  double ax = tide_igamma_num(a, x);
  if (ax == 0) {
    if (d) *d = 0;
    return 0;
  }
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double ans = pkm1 / qkm1, dans = (dpkm1 - ans * dqkm1) / qkm1;
  for (int i = 0; i < 2000; i++) {
    c += 1;
    y += 1;
    z += 2;
    double yc = y * c;
    double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c, dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    double t = 1, dt = 0;
    if (qk != 0) {
      double r = pk / qk, dr = (dpk - r * dqk) / qk;
      t = fabs((ans - r) / r);
      dt = fabs(dans - dr) <= TIDE_MACHEP * fabs(dr) ? 0 : 1;
      ans = r;
      dans = dr;
    }
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    dpkm2 = dpkm1, dpkm1 = dpk, dqkm2 = dqkm1, dqkm1 = dqk;
    if (fabs(pk) > TIDE_BIG) {
      pkm2 *= TIDE_BIGINV, pkm1 *= TIDE_BIGINV, qkm2 *= TIDE_BIGINV, qkm1 *= TIDE_BIGINV;
      dpkm2 *= TIDE_BIGINV, dpkm1 *= TIDE_BIGINV, dqkm2 *= TIDE_BIGINV, dqkm1 *= TIDE_BIGINV;
    }
    if (t <= TIDE_MACHEP && (!d || dt == 0)) break;
  }
  if (d) *d = ax * (ans * (log(x) - tide_digamma_d(a)) + dans);
  return ans * ax;
}

/* P(a, x) (tf.math.igamma): 0 at x = 0, NaN for x < 0 or a <= 0. */
TIDE_HD double tide_igamma_d(double a, double x) {
  if (x == 0) return 0;
  if (x < 0 || a <= 0 || isnan(a) || isnan(x)) return NAN;
  if (x > 1 && x > a) return 1 - tide_igammac_cf(a, x, 0);
  return tide_igamma_series(a, x, 0);
}

/* Q(a, x) (tf.math.igammac): NaN for x < 0 or a <= 0. */
TIDE_HD double tide_igammac_d(double a, double x) {
  if (x < 0 || a <= 0 || isnan(a) || isnan(x)) return NAN;
  if (x < 1 || x < a) return 1 - tide_igamma_series(a, x, 0);
  return tide_igammac_cf(a, x, 0);
}

/* dP(a, x)/da (TF's IgammaGradA, igamma's gradient in a). */
TIDE_HD double tide_igamma_grad_a_d(double a, double x) {
  if (x == 0) return 0;
  if (x < 0 || a <= 0 || isnan(a) || isnan(x)) return NAN;
  double d;
  if (x > 1 && x > a) {
    tide_igammac_cf(a, x, &d);
    return -d;
  }
  tide_igamma_series(a, x, &d);
  return d;
}

/* ---- the regularized incomplete beta function (Cephes incbet) -------------------------------- */

/* Gamma(a + b) / (Gamma(a) Gamma(b)) x^a (1-x)^b / a, times w; in logs where it would overflow. */
TIDE_HD double tide_incbet_scale(double a, double b, double x, double xc, double w) {
  double y = a * log(x), t = b * log(xc);
  if (a + b < TIDE_MAXGAM && fabs(y) < TIDE_MAXLOG && fabs(t) < TIDE_MAXLOG)
    return pow(xc, b) * pow(x, a) / a * w * (tgamma(a + b) / (tgamma(a) * tgamma(b)));
  y += t + tide_lgamma_d(a + b) - tide_lgamma_d(a) - tide_lgamma_d(b) + log(w / a);
  return y < TIDE_MINLOG ? 0 : exp(y);
}

/* The power series of incbet, for b x <= 1 and x <= 0.95. */
TIDE_HD double tide_incbet_pseries(double a, double b, double x) {
  double ai = 1 / a, u = (1 - b) * x, v = u / (a + 1), t1 = v, t = u, n = 2, s = 0, z = TIDE_MACHEP * ai;
  while (fabs(v) > z) {
    u = (n - b) * x / n;
    t *= u;
    v = t / (a + n);
    s += v;
    n += 1;
  }
  s += t1;
  s += ai;
  u = a * log(x);
  if (a + b < TIDE_MAXGAM && fabs(u) < TIDE_MAXLOG) return s * (tgamma(a + b) / (tgamma(a) * tgamma(b))) * pow(x, a);
  t = tide_lgamma_d(a + b) - tide_lgamma_d(a) - tide_lgamma_d(b) + u + log(s);
  return t < TIDE_MINLOG ? 0 : exp(t);
}

/* The continued fractions of incbet: kind 1 in x (incbcf), kind 2 in z = x / (1 - x) (incbd). */
TIDE_HD double tide_incbet_cf(double a, double b, double x, int kind) {
  double k1 = a, k2 = kind == 1 ? a + b : b - 1, k3 = a, k4 = a + 1, k5 = 1, k6 = kind == 1 ? b - 1 : a + b;
  double k7 = a + 1, k8 = a + 2, z = kind == 1 ? x : x / (1 - x);
  double pkm2 = 0, qkm2 = 1, pkm1 = 1, qkm1 = 1, ans = 1, r = 1;
  const double thresh = 3 * TIDE_MACHEP;
  for (int n = 0; n < 300; n++) {
    double xk = -(z * k1 * k2) / (k3 * k4);
    double pk = pkm1 + pkm2 * xk, qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    xk = (z * k5 * k6) / (k7 * k8);
    pk = pkm1 + pkm2 * xk;
    qk = qkm1 + qkm2 * xk;
    pkm2 = pkm1, pkm1 = pk, qkm2 = qkm1, qkm1 = qk;
    if (qk != 0) r = pk / qk;
    double t = 1;
    if (r != 0) {
      t = fabs((ans - r) / r);
      ans = r;
    }
    if (t < thresh) break;
    k1 += 1, k3 += 2, k4 += 2, k5 += 1, k7 += 2, k8 += 2;
    if (kind == 1) k2 += 1, k6 -= 1;
    else k2 -= 1, k6 += 1;
    if (fabs(qk) + fabs(pk) > TIDE_BIG) pkm2 *= TIDE_BIGINV, pkm1 *= TIDE_BIGINV, qkm2 *= TIDE_BIGINV, qkm1 *= TIDE_BIGINV;
    if (fabs(qk) < TIDE_BIGINV || fabs(pk) < TIDE_BIGINV) pkm2 *= TIDE_BIG, pkm1 *= TIDE_BIG, qkm2 *= TIDE_BIG, qkm1 *= TIDE_BIG;
  }
  return ans;
}

/* I_x(a, b) (tf.math.betainc): NaN for a <= 0, b <= 0 or x outside [0, 1]; 0 at x = 0, 1 at x = 1. */
TIDE_HD double tide_betainc_d(double a, double b, double x) {
  if (isnan(a) || isnan(b) || isnan(x) || a <= 0 || b <= 0 || x < 0 || x > 1) return NAN;
  if (x == 0) return 0;
  if (x == 1) return 1;
  if (isinf(a) || isinf(b)) return NAN;
  if (b * x <= 1 && x <= 0.95) return tide_incbet_pseries(a, b, x);
  double w = 1 - x, xc;
  bool flip = false;
  if (x > a / (a + b)) { /* past the mean: I_x(a, b) = 1 - I_(1-x)(b, a) */
    flip = true;
    double t = a;
    a = b, b = t;
    xc = x, x = w;
  } else {
    xc = w;
  }
  double t;
  if (flip && b * x <= 1 && x <= 0.95) {
    t = tide_incbet_pseries(a, b, x);
  } else {
    double y = x * (a + b - 2) - (a - 1);
    w = y < 0 ? tide_incbet_cf(a, b, x, 1) : tide_incbet_cf(a, b, x, 2) / xc;
    t = tide_incbet_scale(a, b, x, xc, w);
  }
  if (flip) t = t <= TIDE_MACHEP ? 1 - TIDE_MACHEP : 1 - t;
  return t;
}

/* ---- inverses of erf and of the normal CDF ------------------------------------------------------ */

/* x >= 0 with erfc(x) = q, q in (0, 1]: Winitzki's estimate (a = 0.147, 2e-3 relative), then Newton
 * steps on log erfc, which converge from either side without overshooting into the tail. */
TIDE_HD double tide_erfcinv_tail(double q) {
  if (q == 1) return 0;
  double l = log(q * (2 - q)); /* log(1 - y^2), y = 1 - q */
  double t1 = 2 / (TIDE_PI * 0.147) + 0.5 * l, t2 = l / 0.147;
  double x = sqrt(sqrt(t1 * t1 - t2) - t1);
  for (int i = 0; i < 12; i++) {
    double e = erfc(x);
    if (e == 0) break;                                        /* q below erfc's range: x is as far as it goes */
    double g = log(e / q), dg = -1.1283791670955126 * exp(-x * x) / e; /* d log erfc / dx */
    double dx = g / dg;
    x -= dx;
    if (fabs(dx) <= 4e-16 * x) break;
  }
  return x;
}

/* erfinv(y) (tf.math.erfinv): +-inf at +-1, NaN outside [-1, 1]. Newton on erf itself near 0, the
 * tail through erfc (1 - |y| is exact there). */
TIDE_HD double tide_erfinv_d(double y) {
  if (isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  double ay = fabs(y);
  if (ay > 0.5) return copysign(tide_erfcinv_tail(1 - ay), y);
  if (y == 0) return 0; /* +0 for -0 too, as Eigen */
  double x = y * 0.88622692545275801365; /* sqrt(pi) / 2: erfinv's slope at 0 */
  for (int i = 0; i < 8; i++) {
    double dx = (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
    x -= dx;
    if (fabs(dx) <= 2e-16 * fabs(x)) break;
  }
  return x;
}

/* ndtri(p) (tf.math.ndtri), the inverse of the standard normal CDF: -inf at 0, inf at 1, NaN outside
 * [0, 1]. In the tails through erfc, whose argument 2p (or 2(1 - p)) is exact. */
TIDE_HD double tide_ndtri_d(double p) {
  if (isnan(p) || p < 0 || p > 1) return NAN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  const double sqrt2 = 1.41421356237309504880;
  if (p < 0.25) return -sqrt2 * tide_erfcinv_tail(2 * p);
  if (p > 0.75) return sqrt2 * tide_erfcinv_tail(2 * (1 - p));
  return sqrt2 * tide_erfinv_d(2 * p - 1);
}

#endif
