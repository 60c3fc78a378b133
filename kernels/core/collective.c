/* core/collective.c — collectives across the GPUs of this one process (the
 * replicas of tide.distribute.MirroredStrategy): checks, then NCCL in the CUDA backend. */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tide_nccl_version(void) {
  const tide_cuda_backend *be = tide_cuda_backend_get();
  return be && be->nccl_version ? be->nccl_version() : 0;
}

static void dims_text(const tide_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->ndim && n < size; d++) n += (size_t)snprintf(buf + n, size - n, d ? ", %lld" : "%lld", (long long)t->dims[d]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

/* The checks on in[t * n_dev + i], before anything is allocated. */
static tide_status check_inputs(const char *what, int n_dev, int n_tensors, const tide_tensor *const *in,
                                tide_tensor *const *out) {
  if (n_dev < 1 || n_dev > TIDE_MAX_CUDA_DEVICES)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %d replicas (1 to %d)", what, n_dev, TIDE_MAX_CUDA_DEVICES);
  if (n_tensors < 0 || (n_tensors > 0 && (!in || !out))) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: no tensors given", what);
  for (int t = 0; t < n_tensors; t++) {
    const tide_tensor *first = in[t * n_dev];
    for (int i = 0; i < n_dev; i++) {
      const tide_tensor *x = in[t * n_dev + i];
      if (!x || !out[t * n_dev + i]) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: tensor %d of replica %d is NULL", what, t, i);
      if (x->flags & TIDE_TENSOR_SYMBOLIC)
        return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: tensor %d of replica %d belongs to a graph being traced; the "
                         "all-reduce runs eagerly", what, t, i);
      if (x->dt != first->dt)
        return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: tensor %d is %s on replica 0 but %s on replica %d", what, t,
                         tide_dtype_name(first->dt), tide_dtype_name(x->dt), i);
      if (x->ndim != first->ndim || memcmp(x->dims, first->dims, (size_t)x->ndim * sizeof *x->dims)) {
        char a[160], b[160];
        dims_text(first, a, sizeof a);
        dims_text(x, b, sizeof b);
        return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: tensor %d has shape %s on replica 0 but %s on replica %d", what, t, a, b, i);
      }
    }
  }
  for (int t = 0; t < n_tensors; t++)
    for (int i = 0; i < n_dev; i++) {
      const tide_tensor *x = in[t * n_dev + i];
      char name[32];
      if (x->dev == TIDE_CPU)
        return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: tensor %d of replica %d is on the CPU; NCCL sums tensors on "
                         "GPUs (use ReductionToOneDevice for CPU replicas)", what, t, i);
      if (x->dev != in[i]->dev)
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: tensor %d of replica %d is on %s, but that replica's tensor 0 is on %s",
                         what, t, i, tide_device_name(x->dev, name, sizeof name),
                         tide_device_name(in[i]->dev, (char[32]){0}, 32));
      for (int j = 0; j < i && t == 0; j++)
        if (in[j]->dev == x->dev)
          return TIDE_FAIL(TIDE_ERR_VALUE, "%s: replicas %d and %d are both on %s; each replica needs a GPU of its own",
                           what, j, i, tide_device_name(x->dev, name, sizeof name));
    }
  return TIDE_OK;
}

tide_status tide_device_all_reduce_sum(int n_dev, int n_tensors, const tide_tensor *const *in, tide_tensor *const *out) {
  const char *what = "all-reduce across GPUs";
  tide_status st = check_inputs(what, n_dev, n_tensors, in, out);
  if (st || n_tensors == 0) return st;
  const tide_cuda_backend *be = tide_cuda_backend_get();
  if (!be || !be->all_reduce_sum)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: %s", what, tide_cuda_unavailable_reason());
  size_t n = (size_t)n_dev * (size_t)n_tensors;
  tide_tensor *src = calloc(n, sizeof *src); /* contiguous versions of the inputs */
  const void **send = calloc(n, sizeof *send);
  void **recv = calloc(n, sizeof *recv);
  int64_t *counts = calloc((size_t)n_tensors, sizeof *counts);
  int *dtypes = calloc((size_t)n_tensors, sizeof *dtypes);
  int devs[TIDE_MAX_CUDA_DEVICES];
  if (!src || !send || !recv || !counts || !dtypes) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", what);
  size_t made = 0; /* inputs made contiguous, and outputs allocated, so far */
  for (; !st && made < n; made++) {
    const tide_tensor *x = in[made];
    tide_tensor *o = out[made];
    st = tide_device_contiguous(&src[made], x);
    if (st) break;
    memset(o, 0, sizeof *o);
    tide_tensor_set_contiguous_layout(o, x->dt, x->ndim, x->dims);
    if ((st = tide_device_alloc_data(o, x->dev))) {
      tide_tensor_release(&src[made]);
      break;
    }
    send[made] = src[made].data;
    recv[made] = o->data;
  }
  if (!st) {
    for (int i = 0; i < n_dev; i++) devs[i] = tide_cuda_ordinal(in[i]->dev);
    for (int t = 0; t < n_tensors; t++) {
      counts[t] = in[t * n_dev]->nelem;
      dtypes[t] = in[t * n_dev]->dt;
    }
    st = be->all_reduce_sum(n_dev, devs, n_tensors, send, (void *const *)recv, counts, dtypes);
  }
  /* The sources may go: NCCL read them in stream order, and a freed block is
   * reused in that same order by the stream-ordered allocator. */
  for (size_t k = 0; k < made; k++) tide_tensor_release(&src[k]);
  if (st)
    for (size_t k = 0; k < made; k++) tide_tensor_release(out[k]);
  free(src), free(send), free(recv), free(counts), free(dtypes);
  return st;
}
