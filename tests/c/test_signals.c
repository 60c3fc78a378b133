/* tests/c/test_signals.c — signal handlers running while kernels run: a
 * profiler's SIGPROF every millisecond during float32 products large
 * enough for oneDNN's sgemm (whose heap a handler corrupted before
 * cpu/signals.h held the signals around it) and during oneDNN convolutions.
 * A regression aborts this program ("corrupted size vs. prev_size"). */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

#include "util.h"

static volatile sig_atomic_t hits;
static void on_prof(int sig) {
  (void)sig;
  hits = hits + 1;
}

static void fill(tide_tensor *t, int nd, const int64_t *dims, float v) {
  *t = blank();
  CHECK(tide_tensor_init_heap(t, TIDE_FLOAT32, nd, dims) == TIDE_OK);
  for (int64_t i = 0; i < t->nelem; i++) ((float *)t->data)[i] = v;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  CHECK(sigaction(SIGPROF, &sa, NULL) == 0);
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  CHECK(setitimer(ITIMER_PROF, &every_ms, NULL) == 0);

  int64_t d[2] = {384, 384};
  tide_tensor a, b;
  fill(&a, 2, d, 0.5f), fill(&b, 2, d, 0.25f);
  bool right = true;
  for (int r = 0; r < 60; r++) {
    tide_tensor c = blank();
    CHECK(tide_op_binary(TIDE_OP_MATMUL, &c, &a, &b) == TIDE_OK);
    right = right && ((float *)c.data)[0] == 384 * 0.125f && ((float *)c.data)[c.nelem - 1] == 384 * 0.125f;
    tide_tensor_release(&c);
  }
  CHECK(right);

  int64_t dx[4] = {16, 28, 28, 8}, dw[4] = {3, 3, 8, 16};
  tide_tensor x, w;
  fill(&x, 4, dx, 1.0f), fill(&w, 4, dw, 0.5f);
  tide_attrs conv;
  memset(&conv, 0, sizeof conv);
  int32_t geometry[8] = {1, 1, 1, 1, 0, 0, 0, 0}; /* strides 1, dilations 1, VALID */
  for (int i = 0; i < 8; i++) conv.ints[i] = geometry[i];
  conv.nints = 8;
  const tide_tensor *in[2] = {&x, &w};
  for (int r = 0; r < 20; r++) {
    tide_tensor y = blank();
    tide_tensor *out[1] = {&y};
    CHECK(tide_op_run(TIDE_OP_CONV2D, &conv, 2, in, 1, out) == TIDE_OK);
    CHECK(y.ndim == 4 && ((float *)y.data)[0] == 3 * 3 * 8 * 0.5f);
    tide_tensor_release(&y);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  CHECK(hits > 0); /* the handler did run while they ran */
  tide_tensor_release(&a), tide_tensor_release(&b), tide_tensor_release(&x), tide_tensor_release(&w);
  return CHECK_SUMMARY("signals");
}
