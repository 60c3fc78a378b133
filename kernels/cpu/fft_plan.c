/* cpu/fft_plan.c — the FFT engine: complex DFTs of any length (mixed radix 4, 2, 3, 5 and small odd
 * radices, Bluestein's chirp-z for a prime factor over 61), real ones through a complex one of half
 * the length, in double precision, and a cache of plans that kernels share across threads.
 *
 * Why our own: Debian 12's kissfft (libkissfft-dev) ships only its float build, and tf.signal
 * needs float64 (and float64 finite-difference gradient checks); FFTW is GPL. The recursion is
 * kissfft's decimation in time (kf_work): out-of-place, each level a butterfly over its factor.
 * float32 transforms run in double too (more accurate than TF's float math, never less). */
#include "fft_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { MAXFAC = 64, BLUE_MIN = 61, CACHE = 32 };

struct fftp_plan {
  int64_t n;
  int real;                /* a real plan: `half` (even n) or `full` (odd n) does the work */
  int refs, cached;
  int nfac;
  int64_t fac[2 * MAXFAC]; /* (p, m) pairs: radix p, then m = what is left */
  fftp_cpx *tw;            /* exp(-2 pi i k / n), k < n (complex plans not using Bluestein) */
  fftp_cpx *ltw[MAXFAC];   /* per level of radix p <= 5: its twiddles in the order its butterflies read
                            * them, [k (p - 1) + q - 1] = tw[q k fs]: sequential loads, not strided */
  /* Bluestein: x_k w_k convolved with conj(w) in length bm, w_k = exp(-i pi k^2 / n) */
  int64_t bm;
  fftp_cpx *chirp, *bfft;  /* w (n), DFT of conj(w) wrapped / bm (bm) */
  fftp_plan *sub;          /* the complex plan of length bm (Bluestein) or of n / 2 or n (real) */
  fftp_cpx *super;         /* real, even n: exp(-2 pi i k / n), k <= n / 2 */
};

static fftp_cpx cmul(fftp_cpx a, fftp_cpx b) { return (fftp_cpx){a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r}; }
/* a * w for a twiddle w that is 1 when k is 0: no multiply there (exact, and a NaN in one part of a
 * stays out of the other, as TF's DUCC keeps it) */
static fftp_cpx twm(fftp_cpx a, const fftp_cpx *w, int64_t k) { return k ? cmul(a, *w) : a; }

/* exp(-2 pi i k / n), exact where it is 1, -i, -1 or i, and the same error for k and n - k (so a
 * real signal's spectrum keeps its 0s: the imaginary part at the 0th and n/2-th entries). */
static fftp_cpx unit(int64_t k, int64_t n) {
  k %= n;
  if (2 * k > n) {
    fftp_cpx c = unit(n - k, n);
    return (fftp_cpx){c.r, -c.i};
  }
  if (4 * k == n) return (fftp_cpx){0, -1};
  if (2 * k == n) return (fftp_cpx){-1, 0};
  if (k == 0) return (fftp_cpx){1, 0};
  double t = -2 * M_PI * (double)k / (double)n;
  return (fftp_cpx){cos(t), sin(t)};
}

/* ---- butterflies (kissfft's, forward sign; the inverse conjugates around them) ---- */

static void bfly2(fftp_cpx *f, const fftp_cpx *lt, int64_t m) {
  for (int64_t k = 0; k < m; k++) {
    fftp_cpx t = twm(f[m + k], &lt[k], k);
    f[m + k].r = f[k].r - t.r, f[m + k].i = f[k].i - t.i;
    f[k].r += t.r, f[k].i += t.i;
  }
}

static void bfly3(fftp_cpx *f, const fftp_cpx *lt, int64_t m) {
  const double s = -0.86602540378443864676; /* Im exp(-2 pi i / 3) */
  for (int64_t k = 0; k < m; k++) {
    fftp_cpx a = f[k], b = twm(f[m + k], &lt[2 * k], k), c = twm(f[2 * m + k], &lt[2 * k + 1], k);
    fftp_cpx sum = {b.r + c.r, b.i + c.i}, dif = {(b.r - c.r) * s, (b.i - c.i) * s};
    fftp_cpx mid = {a.r - 0.5 * sum.r, a.i - 0.5 * sum.i};
    f[k].r = a.r + sum.r, f[k].i = a.i + sum.i;
    f[m + k].r = mid.r - dif.i, f[m + k].i = mid.i + dif.r;
    f[2 * m + k].r = mid.r + dif.i, f[2 * m + k].i = mid.i - dif.r;
  }
}

static void bfly4(fftp_cpx *f, const fftp_cpx *lt, int64_t m) {
  for (int64_t k = 0; k < m; k++) {
    fftp_cpx a = f[k], b = twm(f[m + k], &lt[3 * k], k), c = twm(f[2 * m + k], &lt[3 * k + 1], k),
             d = twm(f[3 * m + k], &lt[3 * k + 2], k);
    fftp_cpx s0 = {a.r + c.r, a.i + c.i}, s1 = {a.r - c.r, a.i - c.i};
    fftp_cpx s2 = {b.r + d.r, b.i + d.i}, s3 = {b.r - d.r, b.i - d.i};
    f[k].r = s0.r + s2.r, f[k].i = s0.i + s2.i;
    f[2 * m + k].r = s0.r - s2.r, f[2 * m + k].i = s0.i - s2.i;
    f[m + k].r = s1.r + s3.i, f[m + k].i = s1.i - s3.r; /* s1 - i s3 */
    f[3 * m + k].r = s1.r - s3.i, f[3 * m + k].i = s1.i + s3.r;
  }
}

static void bfly5(fftp_cpx *f, const fftp_cpx *lt, int64_t m) {
  const double c1 = 0.30901699437494742410, c2 = -0.80901699437494742410; /* cos(2 pi / 5), cos(4 pi / 5) */
  const double s1 = 0.95105651629515357212, s2 = 0.58778525229247312917; /* sin(2 pi / 5), sin(4 pi / 5) */
  for (int64_t k = 0; k < m; k++) {
    fftp_cpx a0 = f[k], a1 = twm(f[m + k], &lt[4 * k], k), a2 = twm(f[2 * m + k], &lt[4 * k + 1], k),
             a3 = twm(f[3 * m + k], &lt[4 * k + 2], k), a4 = twm(f[4 * m + k], &lt[4 * k + 3], k);
    fftp_cpx b1 = {a1.r + a4.r, a1.i + a4.i}, b2 = {a2.r + a3.r, a2.i + a3.i};
    fftp_cpx d1 = {a1.r - a4.r, a1.i - a4.i}, d2 = {a2.r - a3.r, a2.i - a3.i};
    fftp_cpx e1 = {a0.r + c1 * b1.r + c2 * b2.r, a0.i + c1 * b1.i + c2 * b2.i};
    fftp_cpx e2 = {a0.r + c2 * b1.r + c1 * b2.r, a0.i + c2 * b1.i + c1 * b2.i};
    fftp_cpx g1 = {s1 * d1.r + s2 * d2.r, s1 * d1.i + s2 * d2.i}; /* X1 = e1 - i g1, X4 = e1 + i g1 */
    fftp_cpx g2 = {s2 * d1.r - s1 * d2.r, s2 * d1.i - s1 * d2.i}; /* X2 = e2 - i g2, X3 = e2 + i g2 */
    f[k].r = a0.r + b1.r + b2.r, f[k].i = a0.i + b1.i + b2.i;
    f[m + k].r = e1.r + g1.i, f[m + k].i = e1.i - g1.r;
    f[4 * m + k].r = e1.r - g1.i, f[4 * m + k].i = e1.i + g1.r;
    f[2 * m + k].r = e2.r + g2.i, f[2 * m + k].i = e2.i - g2.r;
    f[3 * m + k].r = e2.r - g2.i, f[3 * m + k].i = e2.i + g2.r;
  }
}

/* Any odd radix p <= BLUE_MIN: each output a sum over the p inputs (O(p) per output). */
static void bfly_any(fftp_cpx *f, int64_t fs, const fftp_cpx *tw, int64_t m, int64_t p, int64_t n) {
  fftp_cpx s[BLUE_MIN + 1];
  for (int64_t u = 0; u < m; u++) {
    for (int64_t q = 0; q < p; q++) s[q] = f[u + q * m];
    for (int64_t q1 = 0, k = u; q1 < p; q1++, k += m) {
      fftp_cpx acc = s[0];
      int64_t idx = 0, step = fs * k % n;
      for (int64_t q = 1; q < p; q++) {
        idx += step;
        if (idx >= n) idx -= n;
        fftp_cpx t = twm(s[q], &tw[idx], idx);
        acc.r += t.r, acc.i += t.i;
      }
      f[k] = acc;
    }
  }
}

/* out[0 .. p m) = the DFT of in[0], in[fs], ... (kissfft's kf_work); lev: the level's index. */
static void work(const fftp_plan *pl, fftp_cpx *out, const fftp_cpx *in, int64_t fs, int lev) {
  int64_t p = pl->fac[2 * lev], m = pl->fac[2 * lev + 1];
  fftp_cpx *o = out, *end = out + p * m;
  if (m == 1) {
    for (; o != end; o++, in += fs) *o = *in;
  } else {
    for (; o != end; o += m, in += fs) work(pl, o, in, fs * p, lev + 1);
  }
  const fftp_cpx *lt = pl->ltw[lev];
  switch (p) {
  case 2: bfly2(out, lt, m); break;
  case 3: bfly3(out, lt, m); break;
  case 4: bfly4(out, lt, m); break;
  case 5: bfly5(out, lt, m); break;
  default: bfly_any(out, fs, pl->tw, m, p, pl->n); break;
  }
}

/* The factors of n, 4s first (kissfft's order); the largest prime factor is returned. */
static int64_t factor(fftp_plan *pl) {
  int64_t n = pl->n, p = 4, big = 1, root = (int64_t)floor(sqrt((double)n));
  pl->nfac = 0;
  do {
    while (n % p) {
      p = p == 4 ? 2 : p == 2 ? 3 : p + 2;
      if (p > root) p = n;
    }
    n /= p;
    pl->fac[2 * pl->nfac] = p, pl->fac[2 * pl->nfac + 1] = n;
    pl->nfac++;
    if (p > big) big = p;
  } while (n > 1);
  return big;
}

/* The smallest 2^a 3^b 5^c >= n. */
static int64_t smooth(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f5 = 1; f5 < best; f5 *= 5)
    for (int64_t f35 = f5; f35 < best; f35 *= 3) {
      int64_t v = f35;
      while (v < n) v *= 2;
      if (v < best) best = v;
    }
  return best;
}

static void plan_free(fftp_plan *p) {
  if (!p) return;
  free(p->tw), free(p->chirp), free(p->bfft), free(p->super);
  for (int l = 0; l < MAXFAC; l++) free(p->ltw[l]);
  plan_free(p->sub);
  free(p);
}

static fftp_plan *plan_new(int64_t n, int real);

static fftp_plan *complex_new(fftp_plan *p) {
  int64_t n = p->n;
  if (n == 1) return p;
  if (factor(p) <= BLUE_MIN) {
    if (!(p->tw = malloc((size_t)n * sizeof *p->tw))) return NULL;
    for (int64_t k = 0; k < n; k++) p->tw[k] = unit(k, n);
    for (int64_t l = 0, fs = 1; l < p->nfac; fs *= p->fac[2 * l], l++) {
      int64_t r = p->fac[2 * l], m = p->fac[2 * l + 1];
      if (r > 5) continue; /* the generic butterfly reads tw itself */
      fftp_cpx *t = p->ltw[l] = malloc((size_t)((r - 1) * m + 1) * sizeof *t);
      if (!t) return NULL;
      for (int64_t k = 0; k < m; k++)
        for (int64_t q = 1; q < r; q++) t[k * (r - 1) + q - 1] = p->tw[q * k * fs % n];
    }
    return p;
  }
  p->bm = smooth(2 * n - 1);
  p->chirp = malloc((size_t)n * sizeof *p->chirp);
  p->bfft = malloc((size_t)p->bm * sizeof *p->bfft);
  fftp_cpx *b = calloc((size_t)p->bm, sizeof *b), *scr = NULL;
  p->sub = plan_new(p->bm, 0);
  if (p->sub) scr = malloc((size_t)(fftp_scratch(p->sub) + 1) * sizeof *scr);
  if (!p->chirp || !p->bfft || !b || !p->sub || !scr) {
    free(b), free(scr);
    return NULL;
  }
  for (int64_t k = 0; k < n; k++) { /* the angle from k^2 mod 2n, exact in integers */
    int64_t r = (int64_t)((unsigned __int128)k * (unsigned __int128)k % (unsigned __int128)(2 * n));
    p->chirp[k] = unit(r, 2 * n); /* exp(-i pi r / n) */
    b[k] = (fftp_cpx){p->chirp[k].r, -p->chirp[k].i};
    if (k) b[p->bm - k] = b[k];
  }
  fftp_c2c(p->sub, b, p->bfft, 0, scr);
  for (int64_t k = 0; k < p->bm; k++) p->bfft[k].r /= (double)p->bm, p->bfft[k].i /= (double)p->bm;
  free(b), free(scr);
  return p;
}

static fftp_plan *plan_new(int64_t n, int real) {
  fftp_plan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n, p->real = real;
  fftp_plan *ok;
  if (!real) {
    ok = complex_new(p);
  } else if (n % 2) {
    ok = (p->sub = plan_new(n, 0)) ? p : NULL;
  } else {
    int64_t h = n / 2;
    p->super = malloc((size_t)(h + 1) * sizeof *p->super);
    p->sub = plan_new(h, 0);
    ok = p->super && p->sub ? p : NULL;
    for (int64_t k = 0; ok && k <= h; k++) p->super[k] = unit(k, n);
  }
  if (!ok) plan_free(p);
  return ok;
}

/* ---- running ---- */

int64_t fftp_scratch(const fftp_plan *p) {
  if (p->real) return (p->n % 2 ? 2 * p->n : p->n) + fftp_scratch(p->sub);
  if (p->bm) return 2 * p->bm + fftp_scratch(p->sub);
  return 0;
}

static void conj_n(fftp_cpx *x, int64_t n) {
  for (int64_t k = 0; k < n; k++) x[k].i = -x[k].i;
}

static void forward(const fftp_plan *p, const fftp_cpx *in, fftp_cpx *out, fftp_cpx *scratch) {
  int64_t n = p->n;
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  if (!p->bm) {
    work(p, out, in, 1, 0);
    return;
  }
  int64_t m = p->bm;
  fftp_cpx *a = scratch, *b = scratch + m, *rest = scratch + 2 * m;
  for (int64_t k = 0; k < n; k++) a[k] = cmul(in[k], p->chirp[k]);
  memset(a + n, 0, (size_t)(m - n) * sizeof *a);
  fftp_c2c(p->sub, a, b, 0, rest);
  for (int64_t k = 0; k < m; k++) b[k] = cmul(b[k], p->bfft[k]);
  fftp_c2c(p->sub, b, a, 1, rest); /* the convolution, scaled by 1 / m through bfft */
  for (int64_t k = 0; k < n; k++) out[k] = cmul(a[k], p->chirp[k]);
}

void fftp_c2c(const fftp_plan *p, const fftp_cpx *in, fftp_cpx *out, int inverse, fftp_cpx *scratch) {
  if (!inverse) {
    forward(p, in, out, scratch);
    return;
  }
  /* the inverse is the conjugate of the forward transform of the conjugate: conjugate `in` in
   * place for the call and back after (callers pass buffers of their own) */
  conj_n((fftp_cpx *)in, p->n);
  forward(p, in, out, scratch);
  conj_n((fftp_cpx *)in, p->n);
  conj_n(out, p->n);
}

void fftp_r2c(const fftp_plan *p, const double *in, fftp_cpx *out, fftp_cpx *scratch) {
  int64_t n = p->n;
  if (n % 2) { /* odd: the complex transform of the whole signal, its first half kept */
    fftp_cpx *z = scratch, *y = scratch + n;
    for (int64_t k = 0; k < n; k++) z[k] = (fftp_cpx){in[k], 0};
    fftp_c2c(p->sub, z, y, 0, scratch + 2 * n);
    memcpy(out, y, (size_t)(n / 2 + 1) * sizeof *out);
    out[0].i = 0; /* a real signal's DC is real */
    return;
  }
  /* even: z_j = x_2j + i x_2j+1 through a complex DFT of h = n / 2, then split into the DFTs E
   * of the even and O of the odd samples: X_k = E_k + exp(-2 pi i k / n) O_k */
  int64_t h = n / 2;
  fftp_cpx *z = scratch;
  fftp_c2c(p->sub, (const fftp_cpx *)in, z, 0, scratch + n);
  for (int64_t k = 0; k <= h; k++) {
    fftp_cpx a = z[k < h ? k : 0], b = z[k > 0 ? h - k : 0]; /* Z_h = Z_0 (no divisions: this loop is hot) */
    double er = 0.5 * (a.r + b.r), ei = 0.5 * (a.i - b.i);   /* E = (Z_k + conj Z_h-k) / 2 */
    double or_ = 0.5 * (a.i + b.i), oi = -0.5 * (a.r - b.r); /* O = (Z_k - conj Z_h-k) / 2i */
    fftp_cpx o = cmul((fftp_cpx){or_, oi}, p->super[k]);
    out[k] = (fftp_cpx){er + o.r, ei + o.i};
  }
  out[0].i = out[h].i = 0; /* the DC and Nyquist entries of a real signal are real */
}

void fftp_c2r(const fftp_plan *p, const fftp_cpx *in, double *out, fftp_cpx *scratch) {
  int64_t n = p->n;
  if (n % 2) { /* odd: the whole Hermitian spectrum, then a complex inverse */
    fftp_cpx *y = scratch, *z = scratch + n;
    y[0] = (fftp_cpx){in[0].r, 0};
    for (int64_t k = 1; k <= n / 2; k++) y[k] = in[k], y[n - k] = (fftp_cpx){in[k].r, -in[k].i};
    fftp_c2c(p->sub, y, z, 1, scratch + 2 * n);
    for (int64_t k = 0; k < n; k++) out[k] = z[k].r;
    return;
  }
  /* even: Z_k = E_k + i O_k from X_k and conj X_h-k (unscaled), z = inverse DFT of h */
  int64_t h = n / 2;
  fftp_cpx *zz = scratch;
  for (int64_t k = 0; k < h; k++) {
    fftp_cpx a = in[k], b = in[h - k];
    if (k == 0) a.i = 0, b.i = 0; /* the 0th and n/2-th are real */
    fftp_cpx e = {a.r + b.r, a.i - b.i};
    fftp_cpx d = {a.r - b.r, a.i + b.i};
    fftp_cpx w = {p->super[k].r, -p->super[k].i};
    fftp_cpx o = cmul(d, w);
    zz[k] = (fftp_cpx){e.r - o.i, e.i + o.r};
  }
  fftp_c2c(p->sub, zz, (fftp_cpx *)out, 1, scratch + h);
}

/* ---- the cache: plans by (n, real), shared; a plan in use is never freed ---- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static fftp_plan *cache[CACHE];
static unsigned cache_next;

fftp_plan *fftp_get(int64_t n, int real) {
  pthread_mutex_lock(&cache_lock);
  for (int k = 0; k < CACHE; k++)
    if (cache[k] && cache[k]->n == n && cache[k]->real == real) {
      cache[k]->refs++;
      pthread_mutex_unlock(&cache_lock);
      return cache[k];
    }
  pthread_mutex_unlock(&cache_lock);
  fftp_plan *p = plan_new(n, real); /* made outside the lock: twiddles of a long one take a while */
  if (!p) return NULL;
  p->refs = 1;
  pthread_mutex_lock(&cache_lock);
  for (int tries = 0; tries < CACHE; tries++) { /* round robin over the slots whose plan is idle */
    unsigned k = cache_next++ % CACHE;
    if (cache[k] && cache[k]->refs) continue;
    plan_free(cache[k]);
    cache[k] = p, p->cached = 1;
    break;
  }
  pthread_mutex_unlock(&cache_lock);
  return p;
}

void fftp_put(fftp_plan *p) {
  if (!p) return;
  pthread_mutex_lock(&cache_lock);
  int drop = --p->refs == 0 && !p->cached;
  pthread_mutex_unlock(&cache_lock);
  if (drop) plan_free(p);
}
