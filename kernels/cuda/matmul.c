/* cuda/matmul.c — matmul on the GPU through cuBLASLt: float32 (TF32 only when
 * enabled), float64, float16 and bfloat16 (float accumulation); batch dims broadcast. */
#include "cuda_internal.h"

#include <cublasLt.h>
#include <stdio.h>
#include <string.h>

enum { WORKSPACE_BYTES = 32 << 20 };

static tide_status lt_fail(cublasStatus_t s, const char *what) {
  return TIDE_FAIL(s == CUBLAS_STATUS_ALLOC_FAILED ? TIDE_ERR_MEMORY : TIDE_ERR_INTERNAL, "matmul: cuBLASLt %s: %s",
                   what, cublasLtGetStatusString(s));
}

/* GPU k's cuBLASLt handle and workspace, made at its first matmul. */
static tide_status lt_of(int k, tcu_device *d) {
  if (d->lt) return TIDE_OK;
  pthread_mutex_lock(&d->lock);
  tide_status st = TIDE_OK;
  if (!d->lt) {
    cublasLtHandle_t h;
    cublasStatus_t s = cublasLtCreate(&h);
    if (s) st = lt_fail(s, "create");
    if (!st) st = tcu_alloc(k, WORKSPACE_BYTES, &d->workspace);
    if (!st) {
      d->workspace_bytes = WORKSPACE_BYTES;
      __atomic_store_n(&d->lt, (void *)h, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&d->lock);
  return st;
}

/* A contiguous version of t on its GPU (t itself when it is). */
static tide_status contiguous(const tide_tensor *t, tide_tensor *tmp, const tide_tensor **use) {
  memset(tmp, 0, sizeof *tmp);
  *use = t;
  if (tide_tensor_is_contiguous(t)) return TIDE_OK;
  tide_status st = tide_op_unary(TIDE_OP_COPY, tmp, t); /* the registry runs COPY on t's GPU */
  if (!st) *use = tmp;
  return st;
}

typedef struct lt_call {
  cudaDataType_t type;
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  size_t esize;
} lt_call;

static bool lt_types(int dt, lt_call *c) {
  bool tf32 = __atomic_load_n(&tcu_tf32, __ATOMIC_RELAXED);
  switch (dt) {
  case TIDE_FLOAT32: *c = (lt_call){CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F, 4}; return true;
  case TIDE_FLOAT64: *c = (lt_call){CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 8}; return true;
  case TIDE_FLOAT16: *c = (lt_call){CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2}; return true;
  case TIDE_BFLOAT16: *c = (lt_call){CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2}; return true;
  default: return false;
  }
}

/* A strided-batch layout of rows x cols (column-major, leading dim ld). */
static cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld,
                             int32_t batch, int64_t stride) {
  cublasStatus_t s = cublasLtMatrixLayoutCreate(l, t, rows, cols, ld);
  if (!s && batch > 1) s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  if (!s && batch > 1)
    s = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  return s;
}

/* Row-major C[m,n] = op(A) op(B) is column-major C^T[n,m] = op(B)^T op(A)^T:
 * cuBLASLt's "A" is our B and its "B" our A (see the layouts below). One call
 * covers `batch` products whose operands step by sa, sb (0: shared) and C by m*n. */
static tide_status gemm(int k, tcu_device *d, const lt_call *c, bool ta, bool tb, int64_t m, int64_t n, int64_t kk,
                        const void *a, int64_t sa, const void *b, int64_t sb, void *o, int32_t batch) {
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
  cublasOperation_t opa = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasStatus_t s = cublasLtMatmulDescCreate(&desc, c->compute, c->scale_type);
  if (!s) s = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa);
  if (!s) s = cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb);
  /* Our B, stored row-major [k, n] (or [n, k] transposed), is column-major [n, k] (or [k, n]). */
  if (!s) s = layout(&la, c->type, tb ? (uint64_t)kk : (uint64_t)n, tb ? (uint64_t)n : (uint64_t)kk, tb ? kk : n, batch, sb);
  /* Our A, row-major [m, k] (or [k, m]), is column-major [k, m] (or [m, k]). */
  if (!s) s = layout(&lb, c->type, ta ? (uint64_t)m : (uint64_t)kk, ta ? (uint64_t)kk : (uint64_t)m, ta ? m : kk, batch, sa);
  if (!s) s = layout(&lc, c->type, (uint64_t)n, (uint64_t)m, n, batch, m * n);
  double one64 = 1, zero64 = 0;
  float one32 = 1, zero32 = 0;
  const void *alpha = c->scale_type == CUDA_R_64F ? (const void *)&one64 : (const void *)&one32;
  const void *beta = c->scale_type == CUDA_R_64F ? (const void *)&zero64 : (const void *)&zero32;
  if (!s)
    s = cublasLtMatmul((cublasLtHandle_t)d->lt, desc, alpha, b, la, a, lb, beta, o, lc, o, lc, NULL, d->workspace,
                       d->workspace_bytes, d->stream);
  if (lc) cublasLtMatrixLayoutDestroy(lc);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (desc) cublasLtMatmulDescDestroy(desc);
  (void)k;
  return s ? lt_fail(s, "matmul") : TIDE_OK;
}

/* Element offset of batch element i (over the broadcast batch dims) in an
 * operand with batch dims bd[nb_t] (aligned right) and per-matrix size `per`. */
static int64_t batch_offset(int64_t i, int nb, const int64_t *batch, int nb_t, const int64_t *bd, int64_t per) {
  int64_t off = 0, step = per;
  for (int d = nb - 1; d >= 0; d--) {
    int64_t q = i % batch[d];
    i /= batch[d];
    int td = d - (nb - nb_t);
    if (td >= 0) {
      if (bd[td] != 1) off += q * step;
      step *= bd[td];
    }
  }
  return off;
}

TCU_KERNEL(tcu_k_matmul) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  lt_call c;
  if (!lt_types(o->dt, &c))
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: %s matmul on a GPU is not supported (cuBLASLt takes floats: cast to "
                     "float32)", def->name, tide_dtype_name(o->dt));
  tide_mm_dims md;
  tide_status st = tcu_host->matmul_dims(def->name, attrs, in[0], in[1], &md);
  if (st) return st;
  int k = tcu_ordinal(o);
  tcu_device *d = tcu_device_get(k);
  if (!d) return tide_last_status();
  if ((st = lt_of(k, d))) return st;
  if (o->nelem == 0) return TIDE_OK;
  if (md.k == 0) { /* an empty sum: zeros */
    cudaError_t e = cudaMemsetAsync(o->data, 0, (size_t)o->nelem * c.esize, d->stream);
    return e ? TIDE_FAIL(TIDE_ERR_INTERNAL, "matmul: %s", cudaGetErrorString(e)) : TIDE_OK;
  }
  tide_tensor ta_, tb_;
  const tide_tensor *a, *b;
  if ((st = contiguous(in[0], &ta_, &a))) return st;
  if ((st = contiguous(in[1], &tb_, &b))) {
    tide_tensor_release(&ta_);
    return st;
  }
  bool ta = md.ta && !md.a_vec, tb = md.tb && !md.b_vec;
  int64_t batch = 1, per_a = md.m * md.k, per_b = md.k * md.n;
  for (int i = 0; i < md.nb; i++) batch *= md.batch[i];
  /* Each operand's own batch dims: all but its last two (none for a vector). */
  int nba = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
  int64_t pa = 1, pb = 1;
  for (int i = 0; i < nba; i++) pa *= a->dims[i];
  for (int i = 0; i < nbb; i++) pb *= b->dims[i];
  /* One strided-batch call when each operand's batch is the full batch or one matrix. */
  if ((pa == batch || pa == 1) && (pb == batch || pb == 1) && batch <= INT32_MAX) {
    st = gemm(k, d, &c, ta, tb, md.m, md.n, md.k, a->data, pa == 1 ? 0 : per_a, b->data, pb == 1 ? 0 : per_b,
              o->data, (int32_t)batch);
  } else { /* general broadcasting: one call per product */
    for (int64_t i = 0; i < batch && !st; i++) {
      int64_t oa = batch_offset(i, md.nb, md.batch, nba, a->dims, per_a);
      int64_t ob = batch_offset(i, md.nb, md.batch, nbb, b->dims, per_b);
      st = gemm(k, d, &c, ta, tb, md.m, md.n, md.k, (const char *)a->data + oa * (int64_t)c.esize, 0,
                (const char *)b->data + ob * (int64_t)c.esize, 0, (char *)o->data + i * md.m * md.n * (int64_t)c.esize, 1);
    }
  }
  tide_tensor_release(&ta_); /* stream-ordered frees: after the products read them */
  tide_tensor_release(&tb_);
  return st;
}
