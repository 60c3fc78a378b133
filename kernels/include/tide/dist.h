/* tide/dist.h — processes training together (tide.distribute): the world's
 * rank and size, all-reduce, broadcast and barrier over Open MPI. */
#ifndef TIDE_DIST_H
#define TIDE_DIST_H
#include <stdint.h>
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Join the world, once (later calls do nothing). A process started by
 * mpirun (OMPI_COMM_WORLD_SIZE or PMIX_RANK set) loads libtide_mpi.so
 * (beside libtide.so, or TIDE_MPI_LIBRARY) and initializes MPI, finalized at
 * exit; any other process is a world of size 1 without MPI. Fails, saying
 * why, when a launched process cannot load or start MPI. */
TIDE_API tide_status tide_dist_init(void);
/* This process's rank (0 = the chief) and the world's size; 0 and 1 before init. */
TIDE_API int tide_dist_rank(void);
TIDE_API int tide_dist_size(void);
/* 1 when the world runs over MPI, else 0. */
TIDE_API int tide_dist_uses_mpi(void);
/* Sum `t` (contiguous, on the CPU, float32 or float64) over every process,
 * in place: each ends with the same sums. Every process must call it with
 * the same dtype and element count. */
TIDE_API tide_status tide_dist_all_reduce_sum(tide_tensor *t);
/* The bucket size all_reduce_sum packs gradients into when none is given:
 * PyTorch DDP's 25 MiB. One bucket of 25 MiB takes ~8 ms on 25 Gbit/s, so
 * the fixed cost of a collective (~2(N-1) x 5 us) stays under 1% at 8
 * workers, while the scratch buffer stays bounded for big models. */
#define TIDE_DIST_BUCKET_BYTES ((int64_t)25 << 20)
/* Sum each of the n tensors in[i] (float32 or float64, on the CPU, any
 * layout) over every process into out[i] (allocated, contiguous, of in[i]'s
 * dtype and element count): the tensors of one dtype are packed, in order,
 * into one buffer cut into buckets of at most bucket_bytes (<= 0: the
 * default), one collective per bucket. In a world of one, out[i] = in[i].
 * Every process must make the same call (dtypes and counts, in order), on
 * the thread that joined (MPI runs FUNNELED): another thread gets an error. */
TIDE_API tide_status tide_dist_all_reduce_sum_packed(int n, const tide_tensor *const *in, tide_tensor *const *out,
                                                     int64_t bucket_bytes);
/* The collectives this process has handed to MPI so far (all-reduces,
 * broadcasts, barriers): a bench divides by its steps. */
TIDE_API int64_t tide_dist_collective_calls(void);
/* Overwrite `t` (contiguous, on the CPU, any fixed-size dtype) on every
 * process with its value on rank `root`. */
TIDE_API tide_status tide_dist_broadcast(tide_tensor *t, int root);
/* Wait until every process reaches the barrier. */
TIDE_API tide_status tide_dist_barrier(void);
/* Seconds a collective (all-reduce, broadcast, barrier, and the meeting at
 * exit) waits for the other processes before it fails: positive, HUGE_VAL
 * for no limit. Default 300, or TIDE_DIST_TIMEOUT read at init. After a
 * failed or timed-out collective every later one fails at once, and exit
 * ends the whole job (MPI_Abort) rather than wait in MPI_Finalize. */
TIDE_API tide_status tide_dist_set_timeout(double seconds);
TIDE_API double tide_dist_timeout(void);
/* End every process of the job now with exit status `code` (MPI_Abort,
 * which does not return); without MPI it does nothing. The tide program
 * calls it when a script fails, so the other workers stop at once. */
TIDE_API void tide_dist_abort(int code);

#ifdef __cplusplus
}
#endif
#endif
