/* cpu/linalg_band.c — band parts, diagonals and transposes of batches of matrices,
 * any dtype (TF's MatrixBandPart, MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3). */
#include "fill_value.h"
#include "../core/matrix.h"
#include "../core/parallel.h"

#include <string.h>

/* Element (r, c) of matrix b of a strided tensor's last two dims. */
typedef struct band_src {
  const char *data;
  size_t es;
  int nb;
  const int64_t *dims, *strides;
  int64_t rs, cs;
} band_src;

static void src_of(band_src *s, const tide_tensor *t) {
  s->data = t->data;
  s->es = tide_dtype_size_unchecked(t->dt);
  s->nb = t->ndim - 2;
  s->dims = t->dims;
  s->strides = t->strides;
  s->rs = t->strides[t->ndim - 2];
  s->cs = t->strides[t->ndim - 1];
}

/* The first element of matrix b (a flat index over the batch dims). */
static const char *src_matrix(const band_src *s, int64_t b) {
  int64_t off = 0;
  for (int j = s->nb - 1; j >= 0 && b > 0; j--) {
    off += (b % s->dims[j]) * s->strides[j];
    b /= s->dims[j];
  }
  return s->data + off * (int64_t)s->es;
}

static inline void put(char *dst, const char *src, size_t es) { memcpy(dst, src, es); }

/* ---- matrix transpose: a strided copy through a borrowed header with the last two dims swapped ---- */

tide_status tide_cpu_matrix_transpose(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor swapped = *x; /* borrowed: never released; inline data is re-pointed below */
  int r = x->ndim - 2;
  swapped.dims[r] = x->dims[r + 1], swapped.dims[r + 1] = x->dims[r];
  swapped.strides[r] = x->strides[r + 1], swapped.strides[r + 1] = x->strides[r];
  swapped.data = x->data;
  swapped.flags &= ~(uint32_t)TIDE_TENSOR_INLINE;
  swapped.storage = NULL;
  return tide_copy_strided(def->name, out[0], &swapped);
}

/* ---- band part -------------------------------------------------------------------- */

typedef struct band_job {
  band_src in;
  char *out;
  int64_t rows, cols, lower, upper; /* lower/upper < 0: all */
} band_job;

static void band_rows(void *arg, int64_t begin, int64_t end) {
  const band_job *j = arg;
  size_t es = j->in.es;
  for (int64_t g = begin; g < end; g++) { /* g: a row of the whole batch */
    int64_t b = g / j->rows, r = g % j->rows;
    const char *src = src_matrix(&j->in, b) + r * j->in.rs * (int64_t)es;
    char *dst = j->out + (size_t)(g * j->cols) * es;
    int64_t c0 = j->lower < 0 ? 0 : r - j->lower, c1 = j->upper < 0 ? j->cols : r + j->upper + 1;
    if (c0 < 0) c0 = 0;
    if (c1 > j->cols) c1 = j->cols;
    if (c1 < c0) c1 = c0;
    memset(dst, 0, (size_t)c0 * es); /* zero is all-zero bytes in every dtype */
    if (j->in.cs == 1) memcpy(dst + c0 * es, src + c0 * (int64_t)es, (size_t)(c1 - c0) * es);
    else
      for (int64_t c = c0; c < c1; c++) put(dst + c * es, src + c * j->in.cs * (int64_t)es, es);
    memset(dst + c1 * es, 0, (size_t)(j->cols - c1) * es);
  }
}

tide_status tide_cpu_band_part(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                               const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  band_job j;
  src_of(&j.in, x);
  j.out = out[0]->data;
  j.rows = x->dims[x->ndim - 2], j.cols = x->dims[x->ndim - 1];
  j.lower = attrs->ints[0], j.upper = attrs->ints[1];
  if (out[0]->nelem == 0) return TIDE_OK;
  int64_t nrows = out[0]->nelem / j.cols;
  tide_parallel_for(nrows, TIDE_GRAIN_CHEAP / (j.cols + 1) + 1, band_rows, &j);
  return TIDE_OK;
}

/* ---- diagonals --------------------------------------------------------------------- */

typedef struct diag_job {
  int op;
  band_src x;                   /* the matrix input (diag_part, set_diag) */
  band_src d;                   /* the diagonal input (diag, set_diag) */
  char *out;
  size_t es;
  int64_t rows, cols;           /* the matrices' */
  int64_t lo, hi, len, align;   /* k's range, max_diag_len, align bits */
  unsigned char pad[8];         /* the padding value's bytes */
} diag_job;

/* Diagonal k's element t of matrix batch b, in the diagonal input d (num_diags > 1: a row per diagonal). */
static const char *diag_elem(const diag_job *j, int64_t b, int64_t k, int64_t t) {
  const band_src *d = &j->d;
  int64_t off = 0, rest = b;
  int nbd = d->nb + (j->hi > j->lo ? 0 : 1); /* the diagonal's batch rank (its last one or two dims are the diagonals) */
  for (int q = nbd - 1; q >= 0 && rest > 0; q--) {
    off += (rest % d->dims[q]) * d->strides[q];
    rest /= d->dims[q];
  }
  int nd = nbd + (j->hi > j->lo ? 2 : 1);
  if (j->hi > j->lo) off += (j->hi - k) * d->strides[nd - 2];
  off += t * d->strides[nd - 1];
  return d->data + off * (int64_t)j->es;
}

/* matrix_diag and matrix_set_diag: every element of matrices [begin, end). */
static void diag_fill(void *arg, int64_t begin, int64_t end) {
  const diag_job *j = arg;
  size_t es = j->es;
  for (int64_t b = begin; b < end; b++) {
    char *o = j->out + (size_t)(b * j->rows * j->cols) * es;
    const char *xm = j->op == TIDE_OP_MATRIX_SET_DIAG ? src_matrix(&j->x, b) : NULL;
    for (int64_t r = 0; r < j->rows; r++)
      for (int64_t c = 0; c < j->cols; c++) {
        int64_t k = c - r;
        char *dst = o + (size_t)(r * j->cols + c) * es;
        if (k >= j->lo && k <= j->hi) {
          int64_t len, offset;
          tide_diag_slot(k, j->len, j->rows, j->cols, j->align, &len, &offset);
          put(dst, diag_elem(j, b, k, c - (k > 0 ? k : 0) + offset), es);
        } else if (xm) {
          put(dst, xm + (r * j->x.rs + c * j->x.cs) * (int64_t)es, es);
        } else {
          put(dst, (const char *)j->pad, es);
        }
      }
  }
}

/* matrix_diag_part: the diagonals of matrices [begin, end). */
static void diag_part(void *arg, int64_t begin, int64_t end) {
  const diag_job *j = arg;
  size_t es = j->es;
  int64_t nd = j->hi - j->lo + 1;
  for (int64_t b = begin; b < end; b++) {
    const char *xm = src_matrix(&j->x, b);
    for (int64_t q = 0; q < nd; q++) {
      int64_t k = j->hi - q, len, offset;
      tide_diag_slot(k, j->len, j->rows, j->cols, j->align, &len, &offset);
      char *o = j->out + (size_t)((b * nd + q) * j->len) * es;
      int64_t r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;
      for (int64_t t = 0; t < j->len; t++) {
        int64_t at = t - offset;
        if (at >= 0 && at < len) put(o + t * es, xm + ((r0 + at) * j->x.rs + (c0 + at) * j->x.cs) * (int64_t)es, es);
        else put(o + t * es, (const char *)j->pad, es);
      }
    }
  }
}

tide_status tide_cpu_matrix_diag(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *y = out[0];
  if (y->nelem == 0) return TIDE_OK;
  diag_job j;
  memset(&j, 0, sizeof j);
  j.op = def->id;
  j.es = tide_dtype_size_unchecked(y->dt);
  j.out = y->data;
  j.lo = attrs->ints[0], j.hi = attrs->ints[1], j.align = attrs->m;
  tide_fill_value_bytes(y->dt, attrs->scalars[0], j.pad);
  const tide_tensor *m = def->id == TIDE_OP_MATRIX_DIAG ? y : in[0]; /* the matrices' shape */
  j.rows = m->dims[m->ndim - 2], j.cols = m->dims[m->ndim - 1];
  j.len = tide_max_diag_len(j.rows, j.cols, j.lo, j.hi);
  int64_t nmat = j.rows * j.cols > 0 ? m->nelem / (j.rows * j.cols) : 0;
  if (def->id == TIDE_OP_MATRIX_DIAG_PART) {
    src_of(&j.x, in[0]);
    int64_t nmat_part = j.len > 0 ? y->nelem / ((j.hi - j.lo + 1) * j.len) : 0;
    tide_parallel_for(nmat_part, TIDE_GRAIN_CHEAP / (j.len * (j.hi - j.lo + 1) + 1) + 1, diag_part, &j);
    return TIDE_OK;
  }
  if (def->id == TIDE_OP_MATRIX_SET_DIAG) src_of(&j.x, in[0]);
  const tide_tensor *d = in[def->id == TIDE_OP_MATRIX_SET_DIAG ? 1 : 0]; /* may be 1-D: no src_of */
  j.d.data = d->data;
  j.d.es = j.es;
  j.d.dims = d->dims;
  j.d.strides = d->strides;
  j.d.nb = d->ndim - 2; /* diag_elem adds one back for a single diagonal */
  if (nmat > 0) tide_parallel_for(nmat, TIDE_GRAIN_CHEAP / (j.rows * j.cols + 1) + 1, diag_fill, &j);
  return TIDE_OK;
}
