/* core/dist_backend.h — the table libtide_mpi.so (kernels/dist/mpi.c) fills
 * for kernels/core/dist.c: plain C types only, so it needs neither side's headers. */
#ifndef TIDE_DIST_BACKEND_H
#define TIDE_DIST_BACKEND_H
#include <stddef.h>
#include <stdint.h>

#define TIDE_DIST_BACKEND_ABI 2
#define TIDE_DIST_BACKEND_INIT "tide_mpi_backend_init"

enum { TIDE_DIST_F32 = 0, TIDE_DIST_F64 = 1 };

/* What a call returns: 0, or one of these with a message in why[0..why_size). */
enum {
  TIDE_DIST_EFAIL = 1,    /* MPI returned an error */
  TIDE_DIST_ETIMEOUT = 2, /* the collective did not complete within the timeout */
  TIDE_DIST_EBROKEN = 3   /* an earlier collective failed: MPI's state is unknown, no more are made */
};

typedef struct tide_dist_backend {
  int abi;
  size_t size; /* sizeof(tide_dist_backend) */
  int (*init)(int *rank, int *world, char *why, size_t why_size);
  /* At exit: every worker meets (within the timeout) and MPI is finalized;
   * after a failed collective, or when the others do not come, the job is
   * ended with MPI_Abort (this call then does not return). */
  int (*finalize)(char *why, size_t why_size);
  int (*all_reduce_sum)(void *data, int64_t count, int kind, char *why, size_t why_size);
  int (*broadcast)(void *data, int64_t bytes, int root, char *why, size_t why_size);
  int (*barrier)(char *why, size_t why_size);
  /* Seconds a collective may wait for the others before it fails (> 0; HUGE_VAL: no limit). */
  void (*set_timeout)(double seconds);
  /* End every process of the job with exit status `code` (MPI_Abort); does not return. */
  void (*abort_job)(int code);
} tide_dist_backend;

typedef int (*tide_dist_backend_init_fn)(tide_dist_backend *out);

#endif
