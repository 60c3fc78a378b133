/* tests/c/test_dist.c — tide_dist_*: a process mpirun did not start is a world
 * of one without MPI; a "launched" one whose backend is missing fails clearly;
 * the collectives' checks on their tensors; the timeout (TIDE_DIST_TIMEOUT,
 * tide_dist_set_timeout). (2 workers: tests/sh/test_distribute.sh; failing
 * workers: tests/sh/test_distribute_faults.sh.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tide/tide.h"

int main(void) {
  /* Before init: a world of one, and the collectives ask for init. */
  CHECK(tide_dist_rank() == 0 && tide_dist_size() == 1 && !tide_dist_uses_mpi());
  CHECK(tide_dist_barrier() == TIDE_ERR_VALUE && strstr(tide_last_error(), "tide_dist_init"));
  float data[4] = {1, 2, 3, 4};
  tide_tensor t;
  int64_t dims[1] = {4};
  CHECK(tide_tensor_wrap(&t, data, TIDE_FLOAT32, 1, dims, NULL, NULL, NULL) == TIDE_OK);
  CHECK(tide_dist_all_reduce_sum(&t) == TIDE_ERR_VALUE);

  /* Started "by mpirun" with no backend: a clear error naming the fix; nothing joined. */
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("TIDE_MPI_LIBRARY", "/nonexistent/libtide_mpi.so", 1);
  CHECK(tide_dist_init() == TIDE_ERR_UNSUPPORTED);
  CHECK(strstr(tide_last_error(), "MPI backend did not load") && strstr(tide_last_error(), "libopenmpi-dev"));
  CHECK(tide_dist_size() == 1 && !tide_dist_uses_mpi());
  /* A library that is not a backend (libc has no tide_mpi_backend_init). */
  setenv("TIDE_MPI_LIBRARY", "libc.so.6", 1);
  CHECK(tide_dist_init() == TIDE_ERR_UNSUPPORTED && strstr(tide_last_error(), "not an MPI backend"));
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("TIDE_MPI_LIBRARY");

  /* The timeout: 300 s unless TIDE_DIST_TIMEOUT (read at init) says otherwise; a bad one fails init. */
  CHECK(tide_dist_timeout() == 300.0);
  const char *bad[] = {"soon", "0", "-5", "nan", "10s"};
  for (int i = 0; i < 5; i++) {
    setenv("TIDE_DIST_TIMEOUT", bad[i], 1);
    CHECK(tide_dist_init() == TIDE_ERR_VALUE && strstr(tide_last_error(), "TIDE_DIST_TIMEOUT") &&
          strstr(tide_last_error(), bad[i]));
  }
  setenv("TIDE_DIST_TIMEOUT", "7.5", 1);

  /* Alone: a world of one; init is idempotent. */
  CHECK(tide_dist_init() == TIDE_OK && tide_dist_init() == TIDE_OK);
  unsetenv("TIDE_DIST_TIMEOUT");
  CHECK(tide_dist_timeout() == 7.5);
  CHECK(tide_dist_set_timeout(0) == TIDE_ERR_VALUE && strstr(tide_last_error(), "positive"));
  CHECK(tide_dist_set_timeout(-1) == TIDE_ERR_VALUE);
  CHECK(tide_dist_set_timeout(NAN) == TIDE_ERR_VALUE);
  CHECK(tide_dist_timeout() == 7.5); /* unchanged by the refused ones */
  CHECK(tide_dist_set_timeout(HUGE_VAL) == TIDE_OK && isinf(tide_dist_timeout()));
  CHECK(tide_dist_set_timeout(0.25) == TIDE_OK && tide_dist_timeout() == 0.25);
  tide_dist_abort(1); /* without MPI: nothing (the process goes on) */
  CHECK(tide_dist_rank() == 0 && tide_dist_size() == 1 && !tide_dist_uses_mpi());
  CHECK(tide_dist_barrier() == TIDE_OK);
  CHECK(tide_dist_all_reduce_sum(&t) == TIDE_OK && data[0] == 1 && data[3] == 4); /* the sum of one */
  CHECK(tide_dist_broadcast(&t, 0) == TIDE_OK && data[2] == 3);

  /* Bad tensors and arguments. */
  CHECK(tide_dist_all_reduce_sum(NULL) == TIDE_ERR_VALUE);
  CHECK(tide_dist_broadcast(NULL, 0) == TIDE_ERR_VALUE);
  CHECK(tide_dist_broadcast(&t, 1) == TIDE_ERR_VALUE && strstr(tide_last_error(), "root 1"));
  CHECK(tide_dist_broadcast(&t, -1) == TIDE_ERR_VALUE);
  int32_t ints[2] = {5, 6};
  tide_tensor ti;
  int64_t d2[1] = {2};
  CHECK(tide_tensor_wrap(&ti, ints, TIDE_INT32, 1, d2, NULL, NULL, NULL) == TIDE_OK);
  CHECK(tide_dist_all_reduce_sum(&ti) == TIDE_ERR_DTYPE && strstr(tide_last_error(), "int32"));
  CHECK(tide_dist_broadcast(&ti, 0) == TIDE_OK && ints[1] == 6); /* any fixed-size dtype */
  tide_tensor every_other;
  int64_t vd[1] = {2}, vs[1] = {2};
  CHECK(tide_tensor_view(&every_other, &t, 1, vd, vs, 0) == TIDE_OK);
  CHECK(tide_dist_all_reduce_sum(&every_other) == TIDE_ERR_VALUE && strstr(tide_last_error(), "contiguous"));
  CHECK(tide_dist_broadcast(&every_other, 0) == TIDE_ERR_VALUE);
  tide_tensor_release(&every_other);
  tide_tensor_release(&ti);
  tide_tensor_release(&t);
  return CHECK_SUMMARY("dist");
}
