/* core/runtime.c — process-wide settings: the version string, the pool's
 * thread count, and the hooks word (interrupts: core/interrupt.c). */
#include "internal.h"
#include "parallel.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

void tide_parallel_set_threads(int n);

const char *tide_version(void) { return "0.1.0"; }

tide_status tide_set_num_threads(int n) {
  if (n < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "set_num_threads: n must be at least 1 (got %d)", n);
  tide_parallel_set_threads(n); /* OpenBLAS and oneDNN run inside the pool's tasks, on one thread each (cpu/gemm.c) */
  return TIDE_OK;
}

int tide_get_num_threads(void) { return tide_parallel_threads(); }

/* The hooks word (internal.h). The interrupt request is a bit of it: a
 * lock-free atomic is safe in a signal handler. */
uint32_t tide_hooks;

double tide_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tide_wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tide_is_terminal(int fd) { return isatty(fd) == 1; }
