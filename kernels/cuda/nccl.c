/* cuda/nccl.c — all-reduce across this process's GPUs with NCCL (MirroredStrategy):
 * one communicator per GPU made together (ncclCommInitAll), every buffer in one grouped call. */
#include "cuda_internal.h"

#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The communicators of the last device list (MirroredStrategy keeps one list
 * for a run, so one set is made and kept); remade when another list comes. */
static pthread_mutex_t comms_mu = PTHREAD_MUTEX_INITIALIZER;
static ncclComm_t comms[TIDE_MAX_CUDA_DEVICES];
static int comm_devs[TIDE_MAX_CUDA_DEVICES];
static int n_comms;

static tide_status nccl_fail(ncclResult_t r, const char *what) {
  const char *last = ncclGetLastError(NULL);
  return TIDE_FAIL(r == ncclInvalidArgument || r == ncclInvalidUsage ? TIDE_ERR_VALUE : TIDE_ERR_INTERNAL,
                   "%s: NCCL error %d (%s)%s%s", what, (int)r, ncclGetErrorString(r), last && *last ? ": " : "",
                   last ? last : "");
}

static void destroy_comms(void) {
  for (int i = 0; i < n_comms; i++) ncclCommDestroy(comms[i]);
  n_comms = 0;
}

/* Communicators for exactly these GPUs, in this order (comms[i] serves devs[i]). */
static tide_status comms_for(int n, const int *devs) {
  if (n == n_comms && !memcmp(devs, comm_devs, (size_t)n * sizeof *devs)) return TIDE_OK;
  destroy_comms();
  ncclResult_t r = ncclCommInitAll(comms, n, devs);
  if (r != ncclSuccess) return nccl_fail(r, "all-reduce across GPUs: ncclCommInitAll");
  memcpy(comm_devs, devs, (size_t)n * sizeof *devs);
  n_comms = n;
  return TIDE_OK;
}

static int nccl_type(int dt, ncclDataType_t *out) {
  switch (dt) {
  case TIDE_FLOAT32: *out = ncclFloat32; return 1;
  case TIDE_FLOAT64: *out = ncclFloat64; return 1;
  case TIDE_FLOAT16: *out = ncclFloat16; return 1;
  case TIDE_BFLOAT16: *out = ncclBfloat16; return 1;
  case TIDE_INT32: *out = ncclInt32; return 1;
  case TIDE_INT64: *out = ncclInt64; return 1;
  default: return 0;
  }
}

/* Sum buffer b over the GPUs: send[b * n_dev + i] on GPU devs[i] into
 * recv[b * n_dev + i] (same device, may equal send), for every b < n_buf, in
 * one NCCL group, each on its GPU's stream: later kernels there see the sums
 * without a host wait. */
tide_status tcu_all_reduce_sum(int n_dev, const int *devs, int n_buf, const void *const *send, void *const *recv,
                               const int64_t *counts, const int *dtypes) {
  if (n_dev < 1 || n_dev > TIDE_MAX_CUDA_DEVICES)
    return TIDE_FAIL(TIDE_ERR_VALUE, "all-reduce across GPUs: %d devices (1 to %d)", n_dev, TIDE_MAX_CUDA_DEVICES);
  cudaStream_t streams[TIDE_MAX_CUDA_DEVICES];
  for (int i = 0; i < n_dev; i++) {
    tcu_device *d = tcu_device_get(devs[i]);
    if (!d) return tide_last_status();
    streams[i] = d->stream;
  }
  for (int b = 0; b < n_buf; b++) {
    ncclDataType_t t;
    if (!nccl_type(dtypes[b], &t))
      return TIDE_FAIL(TIDE_ERR_DTYPE, "all-reduce across GPUs: NCCL cannot sum %s", tide_dtype_name(dtypes[b]));
  }
  pthread_mutex_lock(&comms_mu); /* one grouped call at a time on the shared communicators */
  tide_status st = comms_for(n_dev, devs);
  ncclResult_t r = ncclSuccess;
  if (!st) r = ncclGroupStart();
  for (int b = 0; !st && r == ncclSuccess && b < n_buf; b++) {
    ncclDataType_t t = ncclFloat32;
    nccl_type(dtypes[b], &t); /* checked above */
    for (int i = 0; i < n_dev && r == ncclSuccess; i++)
      r = ncclAllReduce(send[b * n_dev + i], recv[b * n_dev + i], (size_t)counts[b], t, ncclSum, comms[i], streams[i]);
  }
  if (!st) {
    ncclResult_t end = ncclGroupEnd(); /* always closes the group, even after a failed call in it */
    if (r == ncclSuccess) r = end;
    if (r != ncclSuccess) st = nccl_fail(r, "all-reduce across GPUs");
  }
  pthread_mutex_unlock(&comms_mu);
  return st;
}

/* NCCL's version code (major * 10000 + minor * 100 + patch), answered without a GPU. */
int tcu_nccl_version(void) {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}
