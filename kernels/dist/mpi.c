/* dist/mpi.c — libtide_mpi.so: tide.distribute's collectives over Open MPI,
 * loaded by kernels/core/dist.c only in processes mpirun started. */
#include "../core/dist_backend.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

/* MPI's counts are int: big buffers go in pieces of at most this many elements. */
#define CHUNK ((int64_t)1 << 30)

static int fail(int code, const char *what, char *why, size_t why_size) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
  snprintf(why, why_size, "%s failed: %s", what, text);
  return 1;
}

static int mpi_init(int *rank, int *world, char *why, size_t why_size) {
  int provided = 0;
  /* Only the Lua thread calls MPI; tide's own worker threads never do. */
  int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
  if (rc != MPI_SUCCESS) return fail(rc, "MPI_Init_thread", why, why_size);
  /* Errors come back as statuses (tide errors) rather than aborting the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) return fail(rc, "MPI_Comm_rank", why, why_size);
  if ((rc = MPI_Comm_size(MPI_COMM_WORLD, world)) != MPI_SUCCESS) return fail(rc, "MPI_Comm_size", why, why_size);
  return 0;
}

static int mpi_finalize(char *why, size_t why_size) {
  int done = 0;
  MPI_Finalized(&done);
  if (done) return 0;
  int rc = MPI_Finalize();
  return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Finalize", why, why_size);
}

static int mpi_all_reduce_sum(void *data, int64_t count, int kind, char *why, size_t why_size) {
  MPI_Datatype type = kind == TIDE_DIST_F64 ? MPI_DOUBLE : MPI_FLOAT;
  size_t elem = kind == TIDE_DIST_F64 ? sizeof(double) : sizeof(float);
  for (int64_t at = 0; at < count; at += CHUNK) {
    int n = (int)(count - at < CHUNK ? count - at : CHUNK);
    int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)data + (size_t)at * elem, n, type, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return fail(rc, "MPI_Allreduce", why, why_size);
  }
  return 0;
}

static int mpi_broadcast(void *data, int64_t bytes, int root, char *why, size_t why_size) {
  for (int64_t at = 0; at < bytes; at += CHUNK) {
    int n = (int)(bytes - at < CHUNK ? bytes - at : CHUNK);
    int rc = MPI_Bcast((char *)data + at, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return fail(rc, "MPI_Bcast", why, why_size);
  }
  return 0;
}

static int mpi_barrier(char *why, size_t why_size) {
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Barrier", why, why_size);
}

/* Fill libtide's table (kernels/core/dist.c checks abi and size). */
EXPORT int tide_mpi_backend_init(tide_dist_backend *out) {
  out->abi = TIDE_DIST_BACKEND_ABI;
  out->size = sizeof *out;
  out->init = mpi_init;
  out->finalize = mpi_finalize;
  out->all_reduce_sum = mpi_all_reduce_sum;
  out->broadcast = mpi_broadcast;
  out->barrier = mpi_barrier;
  return 0;
}
