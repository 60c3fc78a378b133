/* cpu/linalg_lapack.h — what tf.linalg's LAPACK kernels share: a batch of
 * matrices run over the pool (a scratch buffer per task, the first failure
 * reported in order), column-major copies in and out of strided tensors,
 * typed LAPACK calls for float32 and float64, and LAPACK's 32-bit limits. */
#ifndef TIDE_CPU_LINALG_LAPACK_H
#define TIDE_CPU_LINALG_LAPACK_H

#include "../core/matrix.h"

#include <lapack.h>
#include <pthread.h>
#include <string.h>

/* One float32 or float64 LAPACK routine on column-major data, called through
 * LAPACK's Fortran entry points (lapack.h's LAPACK_dgetrf, ... add the hidden
 * string lengths), which OpenBLAS exports itself: linking liblapacke instead
 * would load a second LAPACK (liblapack.so.3, libtmglib) at every start-up for
 * wrappers that only copy their arguments. LK_F(dt, getrf, &m, ...) calls
 * LAPACK_dgetrf or LAPACK_sgetrf with `info` last; the typed wrappers below
 * take scalars by value and buffers as void *, and return info as LAPACKE's
 * _work functions did (0, or the -i / +i LAPACK reports). */
#define LK_F(dt, name, ...) \
  ((dt) == TIDE_FLOAT64 ? LAPACK_d##name(__VA_ARGS__, &info) : LAPACK_s##name(__VA_ARGS__, &info))
typedef lapack_int lki;
static inline lki lk_getrf(int dt, lki m, lki n, void *a, lki lda, lki *ipiv) {
  lki info = 0;
  LK_F(dt, getrf, &m, &n, a, &lda, ipiv);
  return info;
}
static inline lki lk_getri(int dt, lki n, void *a, lki lda, const lki *ipiv, void *work, lki lwork) {
  lki info = 0;
  LK_F(dt, getri, &n, a, &lda, ipiv, work, &lwork);
  return info;
}
static inline lki lk_getrs(int dt, char trans, lki n, lki nrhs, const void *a, lki lda, const lki *ipiv, void *b,
                           lki ldb) {
  lki info = 0;
  LK_F(dt, getrs, &trans, &n, &nrhs, a, &lda, ipiv, b, &ldb);
  return info;
}
static inline lki lk_potrf(int dt, char uplo, lki n, void *a, lki lda) {
  lki info = 0;
  LK_F(dt, potrf, &uplo, &n, a, &lda);
  return info;
}
static inline lki lk_potrs(int dt, char uplo, lki n, lki nrhs, const void *a, lki lda, void *b, lki ldb) {
  lki info = 0;
  LK_F(dt, potrs, &uplo, &n, &nrhs, a, &lda, b, &ldb);
  return info;
}
static inline lki lk_geqrf(int dt, lki m, lki n, void *a, lki lda, void *tau, void *work, lki lwork) {
  lki info = 0;
  LK_F(dt, geqrf, &m, &n, a, &lda, tau, work, &lwork);
  return info;
}
static inline lki lk_orgqr(int dt, lki m, lki n, lki k, void *a, lki lda, const void *tau, void *work, lki lwork) {
  lki info = 0;
  LK_F(dt, orgqr, &m, &n, &k, a, &lda, tau, work, &lwork);
  return info;
}
static inline lki lk_gelsy(int dt, lki m, lki n, lki nrhs, void *a, lki lda, void *b, lki ldb, lki *jpvt, double rcond,
                           lki *rank, void *work, lki lwork) {
  lki info = 0;
  float rcond_f = (float)rcond;
  if (dt == TIDE_FLOAT64)
    LAPACK_dgelsy(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond, rank, work, &lwork, &info);
  else
    LAPACK_sgelsy(&m, &n, &nrhs, a, &lda, b, &ldb, jpvt, &rcond_f, rank, work, &lwork, &info);
  return info;
}
static inline lki lk_gesdd(int dt, char jobz, lki m, lki n, void *a, lki lda, void *s, void *u, lki ldu, void *vt,
                           lki ldvt, void *work, lki lwork, lki *iwork) {
  lki info = 0;
  LK_F(dt, gesdd, &jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork);
  return info;
}
static inline lki lk_syevd(int dt, char jobz, char uplo, lki n, void *a, lki lda, void *w, void *work, lki lwork,
                           lki *iwork, lki liwork) {
  lki info = 0;
  LK_F(dt, syevd, &jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork);
  return info;
}
static inline lki lk_geev(int dt, char jobvl, char jobvr, lki n, void *a, lki lda, void *wr, void *wi, void *vl,
                          lki ldvl, void *vr, lki ldvr, void *work, lki lwork) {
  lki info = 0;
  LK_F(dt, geev, &jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork);
  return info;
}
static inline lki lk_gees(int dt, lki n, void *a, lki lda, lki *sdim, void *wr, void *wi, void *vs, lki ldvs,
                          void *work, lki lwork) { /* the real Schur form, unsorted (select and bwork unused) */
  lki info = 0;
  char jobvs = 'V', sort = 'N';
  LK_F(dt, gees, &jobvs, &sort, NULL, &n, a, &lda, sdim, wr, wi, vs, &ldvs, work, &lwork, NULL);
  return info;
}
static inline lki lk_gtsv(int dt, lki n, lki nrhs, void *dl, void *d, void *du, void *b, lki ldb) {
  lki info = 0;
  LK_F(dt, gtsv, &n, &nrhs, dl, d, du, b, &ldb);
  return info;
}

/* A tensor seen as a batch of matrices: matrix i's element (r, c) sits at
 * data + (offset of i) + r * rs + c * cs, in elements; batch dims of size 1
 * (or missing) broadcast against the batch they are read for. */
typedef struct lk_mat {
  const char *data;
  size_t es;
  int64_t rows, cols, rs, cs;
  int nb;                         /* batch rank read for */
  int64_t bdims[TIDE_MAX_DIMS];   /* that batch's dims */
  int64_t bst[TIDE_MAX_DIMS];     /* per batch dim; 0 where broadcast */
} lk_mat;

/* View t's last two dims as matrices, for a batch of dims bdims[0..nb) (t's own when NULL). */
void lk_mat_of(lk_mat *m, const tide_tensor *t, int nb, const int64_t *bdims);
/* The first element of matrix i. */
const char *lk_mat_at(const lk_mat *m, int64_t i);

/* Copy matrix i of m (or its transpose when trans) into the column-major buffer dst, leading dim ld. */
void lk_load(const lk_mat *m, int64_t i, bool trans, void *dst, int64_t ld);
/* Copy the column-major rows x cols block of src (leading dim ld) into the row-major contiguous matrix dst
 * (its transpose, cols x rows, when trans). */
void lk_store(size_t es, int64_t rows, int64_t cols, const void *src, int64_t ld, bool trans, void *dst);

/* Matrix i of a contiguous output of rows x cols matrices. */
static inline char *lk_out_at(const tide_tensor *t, int64_t i, int64_t rows, int64_t cols) {
  return (char *)t->data + (size_t)(i * rows * cols) * tide_dtype_size_unchecked(t->dt);
}

/* A batch of independent problems over the pool. */
typedef struct lk_batch lk_batch;
/* Solve problem i with `scratch` (the task's own, b->scratch bytes); a failure returns lk_fail's status. */
typedef tide_status (*lk_one_fn)(lk_batch *b, int64_t i, char *scratch);
struct lk_batch {
  const tide_op_def *def;
  int dt;
  size_t es;
  int64_t count;                  /* problems */
  size_t scratch;                 /* bytes of scratch per task */
  double cost;                    /* flops per problem, for the split */
  lk_one_fn one;
  void *ctx;                      /* the kernel's */
  /* the failure of the lowest problem index, set by lk_fail */
  pthread_mutex_t lock;
  int64_t fail_at;
  tide_status fail_st;
  char fail_msg[512];
};

/* Start b for op def in dtype dt: count problems of `cost` flops each, each given one scratch of `scratch` bytes. */
void lk_batch_init(lk_batch *b, const tide_op_def *def, int dt, int64_t count, size_t scratch, double cost,
                   lk_one_fn one, void *ctx);
/* Run every problem (in parallel when worth it); the error of the first that failed, naming the op. */
tide_status lk_batch_run(lk_batch *b);
/* Record problem i's failure (kept when it is the lowest index so far); returns st. */
tide_status lk_fail(lk_batch *b, int64_t i, tide_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Refuse matrices LAPACK's 32-bit ints cannot index: dims holds n (rows, cols) pairs, the matrices a
 * kernel hands LAPACK; each dim and each matrix's element count must fit an int. */
tide_status lk_check_dims(const tide_op_def *def, int n, const int64_t *dims);
/* A workspace size from a LAPACK query (a float holding an int), refused when it does not fit an int. */
tide_status lk_work_size(const tide_op_def *def, double query, lapack_int *lwork);

/* The workspace size a LAPACK query (lwork = -1) wrote into w[0], an element of dtype dt. */
static inline double lk_queried(int dt, const void *w) {
  if (dt == TIDE_FLOAT64) {
    double d;
    memcpy(&d, w, sizeof d);
    return d;
  }
  float f;
  memcpy(&f, w, sizeof f);
  return f;
}

/* True when every element of the rows x cols column-major block is finite. */
bool lk_all_finite(int dt, int64_t rows, int64_t cols, const void *a, int64_t ld);
/* Fill n contiguous elements with NaN (TF's result where a decomposition fails). */
void lk_fill_nan(int dt, int64_t n, void *dst);

/* The batch's elements and "matrix i of the batch [shape]" for messages. */
const char *lk_where(char *buf, size_t cap, const tide_tensor *x, int64_t i);

#endif
