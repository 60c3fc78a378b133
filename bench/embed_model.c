/* bench/embed_model.c DIR — per-call latency of tide_model_run, as a game
 * loop sees it, on the models bench/embed_model.lua wrote into DIR: the
 * 784-256-128-10 MLP at batch 1 (at 1 kernel thread and at the default), the
 * LSTM cell of bench/trace.lua (1 step and 50 steps), and the system
 * allocations a steady-state run makes. Prints `name: value unit` lines;
 * bench/embed_peers.py prints onnxruntime's under the same names. Each
 * result is first checked against Lua's (DIR/<model>_io.safetensors). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide/model.h"
#include "tide/runtime.h"
#include "tide/safetensors.h"

#include "machine_line.h" /* the # machine: line */
#include "malloc_count.h" /* the allocator calls a steady-state run makes */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what, const char *msg) {
  fprintf(stderr, "embed_model: %s: %s\n", what, msg);
  exit(1);
}

/* A tensor of file f by name (the caller frees it). */
static tide_tensor *read_tensor(tide_safetensors *f, const char *name) {
  int64_t i = tide_safetensors_find(f, name);
  if (i < 0) die(name, "missing from the io file");
  tide_tensor *t = calloc(1, sizeof *t);
  if (tide_safetensors_read(f, i, t)) die(name, tide_last_error());
  return t;
}

typedef struct bench_model {
  tide_model *m;
  tide_run *run;
  int n_in, n_out;
  tide_tensor *in[4], *want[4];
  tide_array arr[4];
} bench_model;

/* Load DIR/name, bind the inputs from DIR/name_io.safetensors (in_names) and
 * check one run's outputs against Lua's (out_names). */
static void setup(bench_model *b, const char *dir, const char *name, int n_in, const char *const *in_names, int n_out,
                  const char *const *out_names) {
  char path[4096];
  tide_model_error err;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!(b->m = tide_model_load(path, &err))) die(path, err.message);
  if (!(b->run = tide_run_new(tide_model_signature(b->m, NULL), &err))) die(path, err.message);
  snprintf(path, sizeof path, "%s/%s_io.safetensors", dir, name);
  tide_safetensors *f = tide_safetensors_open(path);
  if (!f) die(path, tide_last_error());
  b->n_in = n_in;
  b->n_out = n_out;
  for (int i = 0; i < n_in; i++) {
    b->in[i] = read_tensor(f, in_names[i]);
    b->arr[i] = tide_array_make(b->in[i]->data, b->in[i]->dt, b->in[i]->ndim, b->in[i]->dims);
    if (tide_run_set_input(b->run, i, &b->arr[i], &err)) die(name, err.message);
  }
  for (int i = 0; i < n_out; i++) b->want[i] = read_tensor(f, out_names[i]);
  tide_safetensors_close(f);
  if (tide_model_run(b->run, &err)) die(name, err.message);
  for (int i = 0; i < n_out; i++) {
    tide_array y;
    if (tide_run_output(b->run, i, &y)) die(name, tide_last_error());
    const float *got = y.data, *want = b->want[i]->data;
    double worst = 0;
    for (int64_t k = 0; k < b->want[i]->nelem; k++) worst = fmax(worst, fabs((double)got[k] - want[k]));
    if (worst > 1e-5) {
      fprintf(stderr, "embed_model: %s output %d differs from Lua's by %g\n", name, i, worst);
      exit(1);
    }
  }
}

static void teardown(bench_model *b) {
  tide_run_free(b->run);
  tide_model_free(b->m);
  for (int i = 0; i < b->n_in; i++) tide_tensor_free(b->in[i]);
  for (int i = 0; i < b->n_out; i++) tide_tensor_free(b->want[i]);
}

/* One frame as a game runs it: bind the inputs (the same buffers), run, read output 0. */
static void frame(bench_model *b) {
  tide_model_error err;
  for (int i = 0; i < b->n_in; i++)
    if (tide_run_set_input(b->run, i, &b->arr[i], &err)) die("set_input", err.message);
  if (tide_model_run(b->run, &err)) die("run", err.message);
  tide_array y;
  if (tide_run_output(b->run, 0, &y)) die("output", tide_last_error());
}

/* Time `iters` frames one by one (after `warm` unmeasured ones); print the median and p99. */
static void time_frames(bench_model *b, const char *name, int warm, int iters) {
  for (int i = 0; i < warm; i++) frame(b);
  double *t = malloc((size_t)iters * sizeof *t);
  for (int i = 0; i < iters; i++) {
    double t0 = now_us();
    frame(b);
    t[i] = now_us() - t0;
  }
  qsort(t, (size_t)iters, sizeof *t, cmp_double);
  printf("%s_median: %.2f us\n", name, t[iters / 2]);
  printf("%s_p99: %.2f us\n", name, t[(int)(iters * 0.99)]);
  fflush(stdout);
  free(t);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: embed_model DIR (made by bench/embed_model.lua)\n");
    return 2;
  }
  const char *dir = argv[1];
  print_machine();
  int threads = tide_get_num_threads();
  int iters = getenv("EMBED_ITERS") ? atoi(getenv("EMBED_ITERS")) : 20000;

  bench_model mlp;
  const char *x[1] = {"x"}, *y[1] = {"y"};
  setup(&mlp, dir, "mlp", 1, x, 1, y);
  tide_set_num_threads(1);
  time_frames(&mlp, "mlp_b1_1thread", 2000, iters);
  malloc_count_start();
  for (int i = 0; i < 1000; i++) frame(&mlp);
  long mallocs = malloc_count_stop();
  printf("mlp_b1_mallocs_per_run: %.3f count\n", (double)mallocs / 1000);
  tide_set_num_threads(threads);
  time_frames(&mlp, "mlp_b1_default_threads", 2000, iters);
  teardown(&mlp);

  const char *lin[3] = {"xs", "h0", "c0"}, *lout[2] = {"h", "c"};
  bench_model lstm1, lstm50;
  setup(&lstm1, dir, "lstm1", 3, lin, 2, lout);
  time_frames(&lstm1, "lstm1_step", 2000, iters);
  teardown(&lstm1);
  setup(&lstm50, dir, "lstm50", 3, lin, 2, lout);
  time_frames(&lstm50, "lstm50", 200, iters / 10);
  teardown(&lstm50);
  printf("embed_threads_default: %d threads\n", threads);
  return 0;
}
