/* cpu/ctc.c — the CTC loss (Graves et al. 2006) and its gradient with respect to the logits: the
 * forward-backward recursion over the blank-extended label sequence, in log space, one sequence a task.
 *
 * Per sequence b with T = logit_length[b] steps and L = label_length[b] labels, l' is the labels with a
 * blank before, between and after them (S = 2L + 1 states); log_softmax of the logits at each step gives
 * the emissions. alpha (and beta) hold the log probability of the prefixes (suffixes) through each state;
 * loss = -log p(labels), grad = softmax - exp(log sum over the states of each class of alpha + beta - emission
 * - log p), zero past T. A label sequence that no alignment of T steps gives (too long for T) has p = 0:
 * loss +inf and grad = softmax, as TF's CTCLoss kernel. Sums run in double whatever the logits' dtype. */
#include "../core/internal.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  const tide_tensor *logits, *labels, *label_len, *logit_len;
  tide_tensor *loss, *grad;
  int64_t blank;
  int failed; /* out of memory in a task (set atomically) */
} ctc_ctx;

/* log(exp(a) + exp(b)), exact at -inf. */
static inline double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

static inline int64_t int_at(const tide_tensor *t, int64_t off) {
  return t->dt == TIDE_INT32 ? ((const int32_t *)t->data)[off] : ((const int64_t *)t->data)[off];
}

static inline double logit_at(const tide_tensor *x, int64_t t, int64_t b, int64_t k) {
  int64_t off = t * x->strides[0] + b * x->strides[1] + k * x->strides[2];
  return x->dt == TIDE_FLOAT64 ? ((const double *)x->data)[off] : (double)((const float *)x->data)[off];
}

static inline void put(tide_tensor *y, int64_t off, double v) {
  if (y->dt == TIDE_FLOAT64) ((double *)y->data)[off] = v;
  else ((float *)y->data)[off] = (float)v;
}

/* One sequence: lp [T, K] emissions, alpha and beta [T, S], acc [K]: work space of the caller's. */
static void ctc_one(const ctc_ctx *c, int64_t b, double *lp, double *alpha, double *beta, double *acc, int64_t *ext) {
  const tide_tensor *x = c->logits;
  int64_t tmax = x->dims[0], nb = x->dims[1], k = x->dims[2];
  int64_t t_len = int_at(c->logit_len, b * c->logit_len->strides[0]);
  int64_t l_len = int_at(c->label_len, b * c->label_len->strides[0]);
  int64_t s_len = 2 * l_len + 1, blank = c->blank;
  for (int64_t s = 0; s < s_len; s++)
    ext[s] = s % 2 == 0 ? blank : int_at(c->labels, b * c->labels->strides[0] + (s / 2) * c->labels->strides[1]);
  /* The emissions: log_softmax of each step. */
  for (int64_t t = 0; t < t_len; t++) {
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < k; j++) {
      double v = logit_at(x, t, b, j);
      lp[t * k + j] = v;
      if (v > m) m = v;
    }
    for (int64_t j = 0; j < k; j++) sum += exp(lp[t * k + j] - m);
    double norm = m + log(sum);
    for (int64_t j = 0; j < k; j++) lp[t * k + j] -= norm;
  }
  double ll;
  if (t_len == 0) {
    ll = l_len == 0 ? 0 : -INFINITY;
  } else {
    for (int64_t s = 0; s < s_len; s++) alpha[s] = s < 2 ? lp[ext[s]] : -INFINITY;
    for (int64_t t = 1; t < t_len; t++) {
      const double *pa = alpha + (t - 1) * s_len;
      double *a = alpha + t * s_len;
      for (int64_t s = 0; s < s_len; s++) {
        double v = pa[s];
        if (s >= 1) v = lse2(v, pa[s - 1]);
        if (s >= 2 && s % 2 == 1 && ext[s] != ext[s - 2]) v = lse2(v, pa[s - 2]);
        a[s] = v == -INFINITY ? v : v + lp[t * k + ext[s]];
      }
    }
    const double *last = alpha + (t_len - 1) * s_len;
    ll = s_len >= 2 ? lse2(last[s_len - 1], last[s_len - 2]) : last[0];
    double *bl = beta + (t_len - 1) * s_len;
    for (int64_t s = 0; s < s_len; s++) bl[s] = s >= s_len - 2 ? lp[(t_len - 1) * k + ext[s]] : -INFINITY;
    for (int64_t t = t_len - 2; t >= 0; t--) {
      const double *nbt = beta + (t + 1) * s_len;
      double *bt = beta + t * s_len;
      for (int64_t s = 0; s < s_len; s++) {
        double v = nbt[s];
        if (s + 1 < s_len) v = lse2(v, nbt[s + 1]);
        if (s + 2 < s_len && s % 2 == 1 && ext[s] != ext[s + 2]) v = lse2(v, nbt[s + 2]);
        bt[s] = v == -INFINITY ? v : v + lp[t * k + ext[s]];
      }
    }
  }
  put(c->loss, b * c->loss->strides[0], -ll);
  tide_tensor *g = c->grad;
  for (int64_t t = 0; t < tmax; t++) {
    int64_t row = t * g->strides[0] + b * g->strides[1];
    if (t >= t_len) {
      for (int64_t j = 0; j < k; j++) put(g, row + j * g->strides[2], 0);
      continue;
    }
    for (int64_t j = 0; j < k; j++) acc[j] = -INFINITY;
    if (ll != -INFINITY)
      for (int64_t s = 0; s < s_len; s++) {
        double a = alpha[t * s_len + s], be = beta[t * s_len + s];
        if (a == -INFINITY || be == -INFINITY) continue;
        acc[ext[s]] = lse2(acc[ext[s]], a + be - lp[t * k + ext[s]]);
      }
    for (int64_t j = 0; j < k; j++) {
      double occ = acc[j] == -INFINITY ? 0 : exp(acc[j] - ll);
      put(g, row + j * g->strides[2], exp(lp[t * k + j]) - occ);
    }
  }
  (void)nb;
}

static void ctc_range(void *ctx, int64_t begin, int64_t end) {
  ctc_ctx *c = ctx;
  const tide_tensor *x = c->logits;
  int64_t tmax = x->dims[0], k = x->dims[2], lmax = c->labels->dims[1], s_max = 2 * lmax + 1;
  double *lp = malloc(sizeof(double) * (size_t)(tmax * k + 2 * tmax * s_max + k) + 1);
  int64_t *ext = malloc(sizeof(int64_t) * (size_t)s_max);
  if (!lp || !ext) {
    __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
    free(lp);
    free(ext);
    return;
  }
  double *alpha = lp + tmax * k, *beta = alpha + tmax * s_max, *acc = beta + tmax * s_max;
  for (int64_t b = begin; b < end; b++) ctc_one(c, b, lp, alpha, beta, acc, ext);
  free(lp);
  free(ext);
}

/* Every length and label checked before any work, each error naming the argument and the sequence. */
static tide_status ctc_check(const tide_op_def *def, const ctc_ctx *c) {
  int64_t tmax = c->logits->dims[0], nb = c->logits->dims[1], k = c->logits->dims[2], lmax = c->labels->dims[1];
  for (int64_t b = 0; b < nb; b++) {
    int64_t tl = int_at(c->logit_len, b * c->logit_len->strides[0]);
    int64_t ll = int_at(c->label_len, b * c->label_len->strides[0]);
    if (tl < 0 || tl > tmax)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: logit_length[%lld] = %lld is not in [0, %lld] (the logits' time steps)",
                       def->name, (long long)b, (long long)tl, (long long)tmax);
    if (ll < 0 || ll > lmax)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: label_length[%lld] = %lld is not in [0, %lld] (the labels' columns)",
                       def->name, (long long)b, (long long)ll, (long long)lmax);
    for (int64_t i = 0; i < ll; i++) {
      int64_t v = int_at(c->labels, b * c->labels->strides[0] + i * c->labels->strides[1]);
      if (v < 0 || v >= k)
        return TIDE_FAIL(TIDE_ERR_INDEX, "%s: labels[%lld, %lld] = %lld is outside the classes [0, %lld)", def->name,
                         (long long)b, (long long)i, (long long)v, (long long)k);
      if (v == c->blank)
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: labels[%lld, %lld] = %lld is the blank_index", def->name, (long long)b,
                         (long long)i, (long long)v);
    }
  }
  return TIDE_OK;
}

/* (logits [T, B, K], labels [B, L], label_length [B], logit_length [B]); n = blank -> loss [B], grad [T, B, K]. */
tide_status tide_cpu_ctc_loss(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  ctc_ctx c = {in[0], in[1], in[2], in[3], out[0], out[1], attrs->n, 0};
  tide_status st = ctc_check(def, &c);
  if (st) return st;
  int64_t nb = in[0]->dims[1];
  if (nb == 0) return TIDE_OK;
  int64_t work = in[0]->dims[0] * (in[0]->dims[2] + in[1]->dims[1] + 1);
  int64_t grain = work > 0 ? TIDE_GRAIN_COSTLY / work : nb;
  tide_parallel_for(nb, grain > 0 ? grain : 1, ctc_range, &c);
  if (c.failed) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  return TIDE_OK;
}
