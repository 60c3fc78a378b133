/* cuda/allocator.c — the caching, stream-ordered GPU allocator: CUDA's memory
 * pool per GPU, kept warm (freed blocks stay cached), with tide's counts, cap and reservation. */
#include "cuda_internal.h"

#include <stdio.h>

tcu_device tcu_devices[TIDE_MAX_CUDA_DEVICES];
static pthread_once_t locks_once = PTHREAD_ONCE_INIT;

static void init_locks(void) {
  for (int k = 0; k < TIDE_MAX_CUDA_DEVICES; k++) {
    pthread_mutex_init(&tcu_devices[k].lock, NULL);
    tcu_devices[k].grow = true;
  }
}

tide_status tcu_fail(cudaError_t e, const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */
  return TIDE_FAIL(e == cudaErrorMemoryAllocation ? TIDE_ERR_MEMORY : TIDE_ERR_INTERNAL, "%s: CUDA error %s (%s)",
                   what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Make GPU k's stream and pool; without growth, reserve the cap (or 90% of
 * the free memory) in the pool now, as TF takes its memory up front. */
static tide_status start(int k, tcu_device *d) {
  cudaError_t e = cudaSetDevice(k);
  if (!e) e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
  if (!e) e = cudaDeviceGetDefaultMemPool(&d->pool, k);
  uint64_t keep = UINT64_MAX; /* freed blocks stay in the pool: the caching part */
  if (!e) e = cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &keep);
  if (!e) e = cudaMallocAsync((void **)&d->bad, sizeof(int), d->stream);
  if (e) return tcu_fail(e, "starting the GPU");
  if (!d->grow) {
    size_t free_bytes = 0, total = 0;
    e = cudaMemGetInfo(&free_bytes, &total);
    size_t want = d->limit ? (size_t)d->limit : free_bytes / 10 * 9;
    void *p = NULL;
    if (!e) e = cudaMallocFromPoolAsync(&p, want, d->pool, d->stream);
    if (!e) e = cudaFreeAsync(p, d->stream);
    if (!e) e = cudaStreamSynchronize(d->stream);
    if (e) return tcu_fail(e, "reserving GPU memory (set_memory_growth false)");
  }
  __atomic_store_n(&d->started, true, __ATOMIC_RELEASE);
  return TIDE_OK;
}

tcu_device *tcu_device_get(int k) {
  pthread_once(&locks_once, init_locks);
  if (k < 0 || k >= TIDE_MAX_CUDA_DEVICES) {
    TIDE_FAIL(TIDE_ERR_VALUE, "GPU %d does not exist", k);
    return NULL;
  }
  tcu_device *d = &tcu_devices[k];
  if (!__atomic_load_n(&d->started, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&d->lock);
    tide_status st = d->started ? TIDE_OK : start(k, d);
    pthread_mutex_unlock(&d->lock);
    if (st) return NULL;
  }
  cudaSetDevice(k); /* per thread: finalizers and ops may run on any thread */
  return d;
}

tide_status tcu_alloc(int k, size_t nbytes, void **ptr) {
  tcu_device *d = tcu_device_get(k);
  if (!d) return tide_last_status();
  int64_t now = __atomic_add_fetch(&d->current, (int64_t)nbytes, __ATOMIC_RELAXED);
  if (d->limit && now > d->limit) {
    __atomic_sub_fetch(&d->current, (int64_t)nbytes, __ATOMIC_RELAXED);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "out of GPU memory on cuda:%d: %zu bytes requested, %lld bytes in use, "
                     "limit %lld bytes (set_logical_device_configuration)", k, nbytes,
                     (long long)(now - (int64_t)nbytes), (long long)d->limit);
  }
  cudaError_t e = cudaMallocFromPoolAsync(ptr, nbytes, d->pool, d->stream);
  if (e == cudaErrorMemoryAllocation) { /* give cached blocks back and try once more */
    (void)cudaGetLastError();
    cudaStreamSynchronize(d->stream);
    cudaMemPoolTrimTo(d->pool, 0);
    e = cudaMallocFromPoolAsync(ptr, nbytes, d->pool, d->stream);
  }
  if (e) {
    __atomic_sub_fetch(&d->current, (int64_t)nbytes, __ATOMIC_RELAXED);
    (void)cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
      return TIDE_FAIL(TIDE_ERR_MEMORY, "out of GPU memory on cuda:%d: %zu bytes requested, %lld bytes in use", k,
                       nbytes, (long long)(now - (int64_t)nbytes));
    return tcu_fail(e, "GPU allocation");
  }
  int64_t peak = __atomic_load_n(&d->peak, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&d->peak, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return TIDE_OK;
}

/* Stream-ordered: work already queued that reads the block runs first. */
void tcu_free(int k, void *ptr, size_t nbytes) {
  tcu_device *d = &tcu_devices[k];
  cudaSetDevice(k);
  if (cudaFreeAsync(ptr, d->stream)) (void)cudaGetLastError(); /* at exit CUDA may be gone already */
  __atomic_sub_fetch(&d->current, (int64_t)nbytes, __ATOMIC_RELAXED);
}

/* TF's words for a setting made too late. */
static tide_status frozen(int k, const char *what) {
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: cuda:%d is already initialized (it has allocated memory); physical devices "
                   "cannot be modified after being initialized: call it before the GPU is first used", what, k);
}

tide_status tcu_set_memory_growth(int k, bool grow) {
  pthread_once(&locks_once, init_locks);
  tcu_device *d = &tcu_devices[k];
  pthread_mutex_lock(&d->lock);
  bool late = d->started;
  if (!late) d->grow = grow;
  pthread_mutex_unlock(&d->lock);
  return late ? frozen(k, "set_memory_growth") : TIDE_OK;
}

tide_status tcu_set_memory_limit(int k, int64_t bytes) {
  pthread_once(&locks_once, init_locks);
  tcu_device *d = &tcu_devices[k];
  pthread_mutex_lock(&d->lock);
  bool late = d->started;
  if (!late) d->limit = bytes;
  pthread_mutex_unlock(&d->lock);
  return late ? frozen(k, "set_logical_device_configuration") : TIDE_OK;
}

tide_status tcu_memory_info(int k, int64_t *current, int64_t *peak) {
  pthread_once(&locks_once, init_locks);
  *current = __atomic_load_n(&tcu_devices[k].current, __ATOMIC_RELAXED);
  *peak = __atomic_load_n(&tcu_devices[k].peak, __ATOMIC_RELAXED);
  return TIDE_OK;
}

bool tcu_device_used(int k) {
  pthread_once(&locks_once, init_locks);
  return __atomic_load_n(&tcu_devices[k].started, __ATOMIC_ACQUIRE);
}
