/* cuda/launch.h — the launchers the .cu files export to the backend's C side
 * (plain C types: op and dtype codes, element strides), and the iteration they share. */
#ifndef TIDE_CUDA_LAUNCH_H
#define TIDE_CUDA_LAUNCH_H

#include "tide/ops.h"
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { TCU_MAX_DIMS = TIDE_MAX_DIMS, TCU_MAX_INPUTS = 3 };

/* How an input is walked: element i of a LINEAR input is element i of the
 * output (same shape, contiguous); a SCALAR input is one element; a STRIDED
 * one is read at sum(index[d] * strides[d]) (stride 0 on broadcast dims). */
enum { TCU_LINEAR = 0, TCU_SCALAR = 1, TCU_STRIDED = 2 };

/* An elementwise iteration: a contiguous output of `dims` (n elements) and
 * its inputs. Passed to kernels by value (under CUDA's 4 KB parameter limit). */
typedef struct tcu_iter {
  int ndim, n_in;
  int64_t n;
  int64_t dims[TCU_MAX_DIMS];
  void *out;
  const void *in[TCU_MAX_INPUTS];
  int mode[TCU_MAX_INPUTS];
  int64_t strides[TCU_MAX_INPUTS][TCU_MAX_DIMS]; /* elements; used when mode is TCU_STRIDED */
} tcu_iter;

/* Every launcher returns a cudaError_t (0: queued), or TCU_UNSUPPORTED when
 * it has no kernel for the op and dtypes asked. */
enum { TCU_UNSUPPORTED = -1 };

/* y = op(x): in dtype dt, out dtype dt_out (bool ops) ; alpha, approx as the CPU's attrs. */
int tcu_unary(cudaStream_t s, int op, int dt, int dt_out, const tcu_iter *it, double alpha, int approx);
/* out = op(a, b); integer division by zero and negative integer powers set
 * bits of *bad_dev (device memory, core/formulas.h's TIDE_BAD_*) for the caller to read. */
int tcu_binary(cudaStream_t s, int op, int dt, int dt_out, const tcu_iter *it, int *bad_dev);
/* out = cond ? x : y (inputs cond, x, y; cond is bool). */
int tcu_where(cudaStream_t s, int dt, const tcu_iter *it);
/* out = min(max(x, lo), hi) (inputs x, lo, hi), NaN as the CPU's clip. */
int tcu_clip(cudaStream_t s, int dt, const tcu_iter *it);
/* out = x converted from dt_in to dt_out (a copy when they agree): CPU cast rules. */
int tcu_cast(cudaStream_t s, int dt_in, int dt_out, const tcu_iter *it);

/* Reduce x viewed as [outer, r, inner] (contiguous) over r into out [outer, inner]. */
int tcu_reduce(cudaStream_t s, int op, int dt, const void *x, void *out, int64_t outer, int64_t r, int64_t inner);

/* Fill out (n elements of dt) as the CPU's random op `op` does from Philox
 * (key, counter): the same counter layout, so uniforms agree bit for bit. */
typedef struct tcu_random {
  int op, dt;
  int64_t n;
  uint64_t key, counter;
  double a, b;       /* min, max or mean, stddev */
  int below;         /* uniform floats: keep values under max */
  float top;         /* uniform float32: the largest float below max */
  int64_t imin;      /* uniform ints */
  uint64_t irange;
} tcu_random;
int tcu_random_fill(cudaStream_t s, const tcu_random *r, void *out);

#ifdef __cplusplus
}
#endif
#endif
