/* core/runtime.c — process-wide settings: the version string, the pool's
 * thread count, and the interrupt flag. */
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

static volatile sig_atomic_t interrupt_requested;

void tide_request_interrupt(void) { interrupt_requested = 1; }

void tide_clear_interrupt(void) { interrupt_requested = 0; }

bool tide_interrupt_pending(void) { return interrupt_requested != 0; }

void tide_interrupt_clear(void) { interrupt_requested = 0; }

double tide_monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tide_is_terminal(int fd) { return isatty(fd) == 1; }
