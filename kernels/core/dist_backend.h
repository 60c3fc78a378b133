/* core/dist_backend.h — the table libtide_mpi.so (kernels/dist/mpi.c) fills
 * for kernels/core/dist.c: plain C types only, so it needs neither side's headers. */
#ifndef TIDE_DIST_BACKEND_H
#define TIDE_DIST_BACKEND_H
#include <stddef.h>
#include <stdint.h>

#define TIDE_DIST_BACKEND_ABI 1
#define TIDE_DIST_BACKEND_INIT "tide_mpi_backend_init"

enum { TIDE_DIST_F32 = 0, TIDE_DIST_F64 = 1 };

/* Each call returns 0, or nonzero with a message in why[0..why_size). */
typedef struct tide_dist_backend {
  int abi;
  size_t size; /* sizeof(tide_dist_backend) */
  int (*init)(int *rank, int *world, char *why, size_t why_size);
  int (*finalize)(char *why, size_t why_size);
  int (*all_reduce_sum)(void *data, int64_t count, int kind, char *why, size_t why_size);
  int (*broadcast)(void *data, int64_t bytes, int root, char *why, size_t why_size);
  int (*barrier)(char *why, size_t why_size);
} tide_dist_backend;

typedef int (*tide_dist_backend_init_fn)(tide_dist_backend *out);

#endif
