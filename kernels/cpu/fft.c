/* cpu/fft.c — the kernels of tf.signal's fft, ifft, rfft and irfft over the innermost k axes
 * (k = attrs->nints), batched over the rest; complex values as two tensors (real, imaginary).
 *
 * attrs->ints[j] is the length along transformed axis j: the input is cropped or padded with
 * zeros to it, as TF's fft_length; -1 takes TF's default from the input (its dim, or for irfft's
 * innermost 2 (m - 1)). The innermost spectrum axis of rfft and irfft has length / 2 + 1 entries. Work is done in
 * double (cpu/fft_plan.c); an nd transform keeps a complex double buffer of the spectrum's shape
 * W and transforms its lines one axis at a time, lines in parallel. The inverses scale by 1 / N. */
#include "fft_plan.h"
#include "../core/internal.h"
#include "../core/registry.h"
#include "../core/parallel.h"

#include <stdlib.h>
#include <string.h>

enum { K_FFT, K_IFFT, K_RFFT, K_IRFFT };

typedef struct fft_job {
  int kind, k, f64;
  int64_t batch;
  int64_t in_d[TIDE_MAX_DIMS]; /* the input's transformed dims */
  int64_t sp[TIDE_MAX_DIMS];   /* the complex spectrum's (W's) transformed dims */
  int64_t len[TIDE_MAX_DIMS];  /* the transform's lengths */
  int64_t in_prod, sp_prod;    /* products of in_d and sp */
  const char *re, *im;         /* input data (im NULL for rfft) */
  char *ore, *oim;             /* output data (oim NULL for irfft) */
  fftp_cpx *w;                 /* W, [batch, sp...] (NULL: the one pass writes the outputs) */
  double scale;
  int axis;                    /* the axis a pass transforms */
  fftp_plan *plan;
  tide_status st;
} fft_job;

static double rd(const fft_job *j, const char *p, int64_t i) {
  return j->f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void wr(const fft_job *j, char *p, int64_t i, double v) {
  if (j->f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* Line t of the spectrum's innermost axis: the input's offset of its first element, or -1 when
 * the line lies in the zero padding of an outer axis. */
static int64_t in_line(const fft_job *j, int64_t t) {
  int64_t off = 0, mul = j->in_d[j->k - 1];
  for (int a = j->k - 2; a >= 0; a--) {
    int64_t i = t % j->sp[a];
    t /= j->sp[a];
    if (i >= j->in_d[a]) return -1;
    off += i * mul;
    mul *= j->in_d[a];
  }
  return t * j->in_prod + off;
}

/* ---- passes: each a tide_range_fn over lines, with scratch of its own ---- */

typedef struct pass_buf {
  fftp_cpx *a, *b, *scr;
  double *r;
} pass_buf;

/* Each pool thread keeps its line buffers between calls (grown, never shrunk): a transform's
 * buffers of a few hundred KB, allocated per range, cost page faults that outweighed the FFT. */
static __thread void *tl_buf;
static __thread size_t tl_cap;

static bool buf_get(fft_job *j, pass_buf *pb, int64_t n) {
  int64_t s = fftp_scratch(j->plan);
  size_t need = (size_t)(2 * n + 2 + s) * sizeof(fftp_cpx) + (size_t)(n + 1) * sizeof(double);
  if (need > tl_cap) {
    void *p = realloc(tl_buf, need);
    if (!p) {
      j->st = TIDE_ERR_MEMORY;
      return false;
    }
    tl_buf = p, tl_cap = need;
  }
  pb->a = tl_buf;
  pb->b = pb->a + n + 1, pb->scr = pb->b + n + 1, pb->r = (double *)(pb->scr + s);
  return true;
}

/* The innermost axis of rfft: input lines (cropped or padded) to half spectra in W or the outputs. */
static void pass_r2c(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  int64_t n = j->len[j->k - 1], h = j->sp[j->k - 1], have = j->in_d[j->k - 1];
  pass_buf pb;
  if (!buf_get(j, &pb, n)) return;
  int64_t keep = have < n ? have : n;
  for (int64_t t = b0; t < b1; t++) {
    int64_t off = in_line(j, t);
    fftp_cpx *dst = j->w ? j->w + t * h : pb.b;
    if (off < 0 || n == 0) {
      memset(dst, 0, (size_t)h * sizeof *dst);
    } else {
      for (int64_t i = 0; i < keep; i++) pb.r[i] = rd(j, j->re, off + i);
      for (int64_t i = keep; i < n; i++) pb.r[i] = 0;
      fftp_r2c(j->plan, pb.r, dst, pb.scr);
    }
    if (!j->w)
      for (int64_t i = 0; i < h; i++) wr(j, j->ore, t * h + i, dst[i].r), wr(j, j->oim, t * h + i, dst[i].i);
  }
}

/* fft and ifft in 1-D: input lines (cropped or padded) straight to the outputs. */
static void pass_c2c_1d(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  int64_t n = j->len[0], have = j->in_d[0], keep = have < n ? have : n;
  pass_buf pb;
  if (!buf_get(j, &pb, n)) return;
  for (int64_t t = b0; t < b1; t++) {
    for (int64_t i = 0; i < keep; i++) pb.a[i] = (fftp_cpx){rd(j, j->re, t * have + i), rd(j, j->im, t * have + i)};
    for (int64_t i = keep; i < n; i++) pb.a[i] = (fftp_cpx){0, 0};
    fftp_c2c(j->plan, pb.a, pb.b, j->kind == K_IFFT, pb.scr);
    for (int64_t i = 0; i < n; i++)
      wr(j, j->ore, t * n + i, pb.b[i].r * j->scale), wr(j, j->oim, t * n + i, pb.b[i].i * j->scale);
  }
}

/* One axis of W (j->axis), every line transformed in place (inverse for ifft and irfft). */
static void pass_axis(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  int a = j->axis;
  int64_t n = j->sp[a], stride = 1;
  for (int x = a + 1; x < j->k; x++) stride *= j->sp[x];
  pass_buf pb;
  if (!buf_get(j, &pb, n)) return;
  int inverse = j->kind == K_IFFT || j->kind == K_IRFFT;
  for (int64_t t = b0; t < b1; t++) {
    fftp_cpx *base = j->w + (t / stride) * n * stride + t % stride;
    for (int64_t i = 0; i < n; i++) pb.a[i] = base[i * stride];
    fftp_c2c(j->plan, pb.a, pb.b, inverse, pb.scr);
    for (int64_t i = 0; i < n; i++) base[i * stride] = pb.b[i];
  }
}

/* The innermost axis of irfft: half spectra in W to real lines of the output, scaled. */
static void pass_c2r(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  int64_t n = j->len[j->k - 1], h = j->sp[j->k - 1];
  pass_buf pb;
  if (!buf_get(j, &pb, n)) return;
  for (int64_t t = b0; t < b1; t++) {
    if (n > 0) fftp_c2r(j->plan, j->w + t * h, pb.r, pb.scr);
    for (int64_t i = 0; i < n; i++) wr(j, j->ore, t * n + i, pb.r[i] * j->scale);
  }
}

/* W from the complex input (cropped or padded to sp), one row of its innermost axis a step. */
static void pass_load(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  int64_t h = j->sp[j->k - 1], have = j->in_d[j->k - 1], keep = have < h ? have : h;
  for (int64_t t = b0; t < b1; t++) {
    fftp_cpx *dst = j->w + t * h;
    int64_t off = in_line(j, t);
    int64_t m = off < 0 ? 0 : keep;
    for (int64_t i = 0; i < m; i++) dst[i] = (fftp_cpx){rd(j, j->re, off + i), rd(j, j->im, off + i)};
    memset(dst + m, 0, (size_t)(h - m) * sizeof *dst);
  }
}

/* The outputs from W, scaled. */
static void pass_store(void *ctx, int64_t b0, int64_t b1) {
  fft_job *j = ctx;
  for (int64_t i = b0; i < b1; i++) wr(j, j->ore, i, j->w[i].r * j->scale), wr(j, j->oim, i, j->w[i].i * j->scale);
}

/* Run fn over `lines` lines of length n (0: lines of zeros) with the plan of (n, real). */
static tide_status run_pass(const tide_op_def *def, fft_job *j, int64_t lines, int64_t n, int real,
                            tide_range_fn fn) {
  if (lines == 0) return TIDE_OK;
  j->plan = fftp_get(n > 0 ? n : 1, real);
  if (!j->plan)
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for the plan of a length-%lld transform", def->name,
                     (long long)n);
  j->st = TIDE_OK;
  int64_t grain = 32768 / (n + 1);
  tide_parallel_for(lines, grain > 0 ? grain : 1, fn, j);
  fftp_put(j->plan);
  j->plan = NULL;
  if (j->st) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for the transform's line buffers", def->name);
  return TIDE_OK;
}

/* The kernel of fft, ifft, rfft and irfft (float32, float64). */
tide_status tide_cpu_fft(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                         int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  fft_job j;
  memset(&j, 0, sizeof j);
  j.kind = def->id == TIDE_OP_FFT ? K_FFT : def->id == TIDE_OP_IFFT ? K_IFFT : def->id == TIDE_OP_RFFT ? K_RFFT : K_IRFFT;
  j.k = attrs->nints;
  const tide_tensor *x = in[0];
  j.f64 = x->dt == TIDE_FLOAT64;
  int nb = x->ndim - j.k;
  j.batch = tide_dims_product(nb, x->dims);
  j.in_prod = j.sp_prod = 1;
  int64_t n_total = 1;
  for (int a = 0; a < j.k; a++) {
    j.in_d[a] = x->dims[nb + a];
    int64_t own = j.kind == K_IRFFT && a == j.k - 1 ? (j.in_d[a] > 1 ? 2 * (j.in_d[a] - 1) : 0) : j.in_d[a];
    j.len[a] = attrs->ints[a] >= 0 ? attrs->ints[a] : own; /* -1: from the input, as TF's default */
    j.sp[a] = (a == j.k - 1 && (j.kind == K_RFFT || j.kind == K_IRFFT)) ? j.len[a] / 2 + 1 : j.len[a];
    j.in_prod *= j.in_d[a], j.sp_prod *= j.sp[a], n_total *= j.len[a];
  }
  const tide_tensor *src[2] = {in[0], n_in > 1 ? in[1] : NULL};
  tide_tensor tmp[2];
  memset(tmp, 0, sizeof tmp);
  tide_status st = TIDE_OK;
  for (int i = 0; i < 2 && !st; i++)
    if (src[i]) st = tide_contiguous_or_copy(def->name, src[i], &tmp[i], &src[i]);
  if (st) goto done;
  j.re = src[0]->data, j.im = src[1] ? src[1]->data : NULL;
  j.ore = out[0]->data, j.oim = n_out > 1 ? out[1]->data : NULL;
  j.scale = (j.kind == K_IFFT || j.kind == K_IRFFT) && n_total > 0 ? 1.0 / (double)n_total : 1.0;
  if (out[0]->nelem == 0) goto done;
  int64_t inner = j.sp[j.k - 1], lines = j.batch * (j.sp_prod / (inner ? inner : 1));
  if (j.kind == K_FFT || j.kind == K_IFFT) {
    if (j.k == 1) {
      st = run_pass(def, &j, j.batch, j.len[0], 0, pass_c2c_1d);
      goto done;
    }
  } else if (j.kind == K_RFFT && j.k == 1) {
    st = run_pass(def, &j, j.batch, j.len[0], 1, pass_r2c);
    goto done;
  }
  int64_t wn = j.batch * j.sp_prod;
  j.w = malloc((size_t)wn * sizeof *j.w);
  if (!j.w) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a work buffer of %lld complex values", def->name,
                   (long long)wn);
    goto done;
  }
  if (j.kind == K_RFFT) st = run_pass(def, &j, lines, j.len[j.k - 1], 1, pass_r2c);
  else tide_parallel_for(lines, 1 + 32768 / (inner + 1), pass_load, &j);
  /* the complex axes: all of fft's and ifft's, the outer ones of rfft (after its r2c pass) and irfft */
  int last = j.kind == K_FFT || j.kind == K_IFFT ? j.k : j.k - 1;
  for (int a = 0; a < last && !st; a++) {
    j.axis = a;
    st = run_pass(def, &j, wn / j.sp[a], j.sp[a], 0, pass_axis);
  }
  if (st) goto done;
  if (j.kind == K_IRFFT) st = run_pass(def, &j, lines, j.len[j.k - 1], 1, pass_c2r);
  else tide_parallel_for(wn, TIDE_GRAIN_CHEAP, pass_store, &j);
done:
  free(j.w);
  tide_tensor_release(&tmp[0]);
  tide_tensor_release(&tmp[1]);
  return st;
}
