/* cpu/matmul.c — matmul on the CPU: float32/float64 through tide_cpu_gemm
 * (cpu/gemm.c: OpenBLAS for small products, tiles over the pool for large
 * ones), halves through float32, an i-k-j loop for integers; numpy batch
 * broadcasting. */
#include "iter.h"
#include "../core/linalg.h"
#include "../core/parallel.h"

#include <limits.h>
#include <string.h>

/* Products of at most this many multiply-adds (M*N*K) run on one thread
 * (cpu/gemm.c); a batch of them goes faster spread over the pool, one
 * product per task. */
enum { SMALL_GEMM_MNK = 65536 * 4, BATCH_GRAIN_MNK = 65536 };

/* One operand seen as batches of logical matrices (rows x cols):
 * element (i, j) of batch coordinates c sits at data + sum(c * bst) + i*rs + j*cs. */
typedef struct mm_operand {
  const char *data;
  int64_t rows, cols, rs, cs;
  int64_t bst[TIDE_MAX_DIMS];   /* per output batch dim; 0 where broadcast */
  bool trans;                   /* BLAS layout: stored transposed */
  int64_t ld;                   /* BLAS leading dimension */
} mm_operand;

typedef struct mm_plan {
  tide_mm_dims d;
  int64_t nbatch, m, n, k;
  int dt;                       /* compute dtype (halves arrive as float32) */
  mm_operand a, b;
  char *c;                      /* contiguous output: nbatch x m x n */
} mm_plan;

/* Describe t (operand a when is_a) as logical matrices for plan p. */
static void set_operand(mm_operand *o, const tide_tensor *t, const tide_mm_dims *d, bool is_a) {
  bool vec = is_a ? d->a_vec : d->b_vec, tr = is_a ? d->ta : d->tb;
  int nd = t->ndim;
  o->data = t->data;
  o->rows = is_a ? d->m : d->k;
  o->cols = is_a ? d->k : d->n;
  if (vec) { /* a: 1 x K row; b: K x 1 column */
    o->rs = is_a ? 0 : t->strides[0];
    o->cs = is_a ? t->strides[0] : 0;
  } else {
    int64_t s0 = t->strides[nd - 2], s1 = t->strides[nd - 1];
    o->rs = tr ? s1 : s0;
    o->cs = tr ? s0 : s1;
  }
  int bn = vec ? 0 : nd - 2;
  for (int j = 0; j < d->nb; j++) {
    int id = j - (d->nb - bn);
    o->bst[j] = id < 0 || t->dims[id] == 1 ? 0 : t->strides[id];
  }
}

/* Choose BLAS's transpose flag and leading dimension for a rows x cols matrix
 * with strides (rs, cs); false when neither layout fits (copy it first). */
static bool blas_layout(mm_operand *o) {
  int64_t rows = o->rows, cols = o->cols, rs = o->rs, cs = o->cs;
  int64_t mr = rows > 1 ? rows : 1, mc = cols > 1 ? cols : 1;
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= mc)) {
    o->trans = false;
    o->ld = rows == 1 ? mc : rs;
  } else if ((rows == 1 || rs == 1) && (cols == 1 || cs >= mr)) {
    o->trans = true;
    o->ld = cols == 1 ? mr : cs;
  } else {
    return false;
  }
  return o->ld <= INT_MAX;
}

/* Offset in elements of batch `bi` of operand o. */
static int64_t batch_offset(const mm_plan *p, const mm_operand *o, int64_t bi) {
  int64_t off = 0;
  for (int j = p->d.nb - 1; j >= 0 && bi > 0; j--) {
    int64_t dim = p->d.batch[j];
    off += (bi % dim) * o->bst[j];
    bi /= dim;
  }
  return off;
}

/* When b is the same matrix for every batch and a's batches stack evenly
 * (a [B..., M, K] @ b [K, N], the Dense-layer case), run one tall product. */
static void fold_batches(mm_plan *p) {
  if (p->nbatch <= 1) return;
  for (int j = 0; j < p->d.nb; j++)
    if (p->b.bst[j] != 0 && p->d.batch[j] != 1) return;
  int64_t row = 0, span = 0; /* stride of one row, and of the block walked so far */
  bool any = false;
  for (int j = p->d.nb; j >= 0; j--) {
    int64_t dim = j == p->d.nb ? p->m : p->d.batch[j], st = j == p->d.nb ? p->a.rs : p->a.bst[j];
    if (dim == 1) continue;
    if (!any) row = st, any = true;
    else if (st != span) return;
    span = st * dim;
  }
  mm_operand tall = p->a;
  tall.rows = p->nbatch * p->m;
  tall.rs = any ? row : tall.cols;
  if (!blas_layout(&tall) || tall.trans) return;
  p->a = tall;
  p->m = tall.rows;
  p->nbatch = 1;
}

/* ---- float32 / float64 through tide_cpu_gemm ---------------------------------------- */

/* Batch bi's operands and output. */
static void batch_args(const mm_plan *p, int64_t bi, const char **A, const char **B, char **C) {
  int64_t es = (int64_t)tide_dtype_size_unchecked(p->dt);
  *A = p->a.data + batch_offset(p, &p->a, bi) * es;
  *B = p->b.data + batch_offset(p, &p->b, bi) * es;
  *C = p->c + bi * p->m * p->n * es;
}

/* Batches [begin, end) of a small-product plan, each on this thread alone. */
static void gemm_small_batches(void *arg, int64_t begin, int64_t end) {
  const mm_plan *p = arg;
  for (int64_t bi = begin; bi < end; bi++) {
    const char *A, *B;
    char *C;
    batch_args(p, bi, &A, &B, &C);
    tide_cpu_gemm_serial(p->dt, p->a.trans, p->b.trans, p->m, p->n, p->k, A, p->a.ld, B, p->b.ld, 0.0, C, p->n);
  }
}

/* Run a float32/float64 plan: one tall product when batches fold; many small
 * products spread over the pool; else one (tiled) product per batch. */
static tide_status run_blas(const char *op, mm_plan *p) {
  if (p->m > INT_MAX || p->n > INT_MAX || p->k > INT_MAX)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: a dimension exceeds BLAS's limit of %d (M=%lld, N=%lld, K=%lld)",
                     op, INT_MAX, (long long)p->m, (long long)p->n, (long long)p->k);
  fold_batches(p);
  double mnk = (double)p->m * (double)p->n * (double)p->k;
  if (p->nbatch > 1 && mnk <= SMALL_GEMM_MNK && tide_parallel_threads() > 1) {
    int64_t grain = (int64_t)(BATCH_GRAIN_MNK / (mnk > 1 ? mnk : 1)) + 1;
    tide_parallel_for(p->nbatch, grain, gemm_small_batches, p);
    return TIDE_OK;
  }
  for (int64_t bi = 0; bi < p->nbatch; bi++) {
    const char *A, *B;
    char *C;
    batch_args(p, bi, &A, &B, &C);
    tide_cpu_gemm(p->dt, p->a.trans, p->b.trans, p->m, p->n, p->k, A, p->a.ld, B, p->b.ld, 0.0, C, p->n);
  }
  return TIDE_OK;
}

/* ---- integers: i-k-j loops, wrapping like TF's integer matmul ------------------------- */

/* Rows [r0, r1) of all batches stacked; unsigned arithmetic wraps without UB. */
#define INT_MM(NAME, T, U)                                                                  \
  static void NAME(void *arg, int64_t r0, int64_t r1) {                                     \
    const mm_plan *p = arg;                                                                 \
    for (int64_t r = r0; r < r1; r++) {                                                     \
      int64_t bi = r / p->m, i = r % p->m;                                                  \
      const T *A = (const T *)p->a.data + batch_offset(p, &p->a, bi) + i * p->a.rs;         \
      const T *B = (const T *)p->b.data + batch_offset(p, &p->b, bi);                       \
      U *restrict c = (U *)p->c + r * p->n;                                                 \
      int64_t n = p->n, bcs = p->b.cs;                                                      \
      for (int64_t j = 0; j < n; j++) c[j] = 0;                                             \
      for (int64_t k = 0; k < p->k; k++) {                                                  \
        U av = (U)A[k * p->a.cs];                                                           \
        const T *brow = B + k * p->b.rs;                                                    \
        if (bcs == 1)                                                                       \
          for (int64_t j = 0; j < n; j++) c[j] = (U)(c[j] + av * (U)brow[j]);               \
        else                                                                                \
          for (int64_t j = 0; j < n; j++) c[j] = (U)(c[j] + av * (U)brow[j * bcs]);         \
      }                                                                                     \
    }                                                                                       \
  }
INT_MM(mm_i8, int8_t, uint8_t)
INT_MM(mm_u8, uint8_t, uint8_t)
INT_MM(mm_i32, int32_t, uint32_t)
INT_MM(mm_i64, int64_t, uint64_t)

/* Run an integer plan with the i-k-j loops, rows across the pool. */
static void run_int(mm_plan *p) {
  tide_range_fn fn = p->dt == TIDE_INT8 ? mm_i8 : p->dt == TIDE_UINT8 ? mm_u8 : p->dt == TIDE_INT32 ? mm_i32 : mm_i64;
  int64_t per_row = p->n * (p->k > 0 ? p->k : 1);
  int64_t grain = TIDE_GRAIN_COSTLY * 8 / (per_row > 0 ? per_row : 1) + 1;
  tide_parallel_for(p->nbatch * p->m, grain, fn, p);
}

/* ---- the kernel -------------------------------------------------------------------------- */

/* A contiguous copy of t in dtype dt (a cast for halves) into the blank tmp. */
static tide_status contiguous_copy(const char *op, const tide_tensor *t, int dt, tide_tensor *tmp) {
  if (dt == t->dt) {
    tide_status st = tide_tensor_init(tmp, dt, t->ndim, t->dims);
    return st ? st : tide_copy_strided(op, tmp, t);
  }
  tide_attrs cast = {0};
  cast.dtype = dt;
  return tide_op_run(TIDE_OP_CAST, &cast, 1, &t, 1, &tmp);
}

tide_status tide_cpu_matmul(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                            const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  mm_plan p;
  tide_status st = tide_matmul_dims(def->name, attrs, in[0], in[1], &p.d);
  if (st) return st;
  p.m = p.d.m, p.n = p.d.n, p.k = p.d.k;
  p.nbatch = tide_dims_product(p.d.nb, p.d.batch);
  if (o->nelem == 0) return TIDE_OK;
  if (p.k == 0) {
    memset(o->data, 0, (size_t)o->nelem * tide_dtype_size_unchecked(o->dt));
    return TIDE_OK;
  }
  bool half = tide_is_half(o->dt), blas = half || !tide_dtype_is_int(o->dt);
  p.dt = half ? TIDE_FLOAT32 : o->dt;
  p.c = o->data;

  /* BLAS reads each matrix through one transpose flag and leading dimension;
   * operands that fit neither layout (and halves) are copied first. */
  tide_tensor tmp[3];
  memset(tmp, 0, sizeof tmp);
  const tide_tensor *ops[2] = {in[0], in[1]};
  for (int i = 0; i < 2 && !st; i++) {
    set_operand(i ? &p.b : &p.a, ops[i], &p.d, i == 0);
    if (!blas || (!half && blas_layout(i ? &p.b : &p.a))) continue;
    st = contiguous_copy(def->name, ops[i], p.dt, &tmp[i]);
    if (!st) {
      set_operand(i ? &p.b : &p.a, &tmp[i], &p.d, i == 0);
      if (!blas_layout(i ? &p.b : &p.a))
        st = TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: a leading dimension exceeds BLAS's limit of %d", def->name,
                       INT_MAX);
    }
  }
  if (!st && half) {
    st = tide_tensor_init(&tmp[2], TIDE_FLOAT32, o->ndim, o->dims);
    p.c = tmp[2].data;
  }
  if (!st) {
    if (blas) st = run_blas(def->name, &p);
    else run_int(&p);
  }
  if (!st && half) tide_float_to_halves(o->dt, o->nelem, (const float *)p.c, o->data, 2);
  for (int i = 0; i < 3; i++) tide_tensor_release(&tmp[i]);
  return st;
}
