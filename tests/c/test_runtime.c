/* tests/c/test_runtime.c — tide/runtime.h's process-wide helpers: the
 * version, the monotonic clock and the terminal test. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void test_clock(void) {
  double a = tide_monotonic_seconds();
  struct timespec pause = {0, 2000000}; /* 2 ms */
  nanosleep(&pause, NULL);
  double b = tide_monotonic_seconds();
  CHECK(a > 0);
  CHECK(b - a >= 0.0015 && b - a < 5.0); /* it moved by about the pause, never back */
}

static void test_terminal(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  CHECK(tide_is_terminal(fds[0]) == 0); /* a pipe is not a terminal */
  close(fds[0]), close(fds[1]);
  CHECK(tide_is_terminal(-1) == 0);     /* nor a closed or bad descriptor */
  int tty = open("/dev/tty", O_RDWR);   /* a terminal when the tests run in one */
  if (tty >= 0) {
    CHECK(tide_is_terminal(tty) == 1);
    close(tty);
  }
}

int main(void) {
  CHECK(strlen(tide_version()) > 0);
  test_clock();
  test_terminal();
  return CHECK_SUMMARY("runtime");
}
