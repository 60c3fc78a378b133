/* bench/model_files.c DIR [MODEL ...] — issue 28's speed figures for tide:
 * the models bench/model_files_gen.py wrote into DIR, each loaded from the
 * TF SavedModel (DIR/<model>_tf) and from the ONNX file (DIR/<model>.onnx)
 * and run through tide_model_run, as a host program links it (no Lua).
 *
 * Per model and format:
 *   <model>_<fmt>_load: time to the first prediction (tide_model_load,
 *     tide_run_new, bind, the first run), median of LOADS fresh loads, ms;
 *   <model>_<fmt>_b<batch>: one run at batch 1 and 8, median wall time of
 *     a call, us; and `_cpu`: the process's CPU time per call (all threads),
 *     which another program on the machine does not inflate.
 * Every output is first checked against Keras's (DIR/<model>_b<batch>_io).
 * Threads: MODEL_FILES_THREADS (default 1: what the peers are held to); MODEL_FILES_FORMAT=tf or
 * onnx runs that format alone.
 * bench/model_files_peers.py prints onnxruntime's and TF's figures under the
 * same names; bench/compare.lua sets them side by side. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide/model.h"
#include "tide/runtime.h"
#include "tide/safetensors.h"

#include "machine_line.h" /* the # machine: line */

enum { LOADS = 3, RUNS = 7 };

static double clock_us(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static void die(const char *what, const char *msg) {
  fprintf(stderr, "model_files: %s: %s\n", what, msg);
  exit(1);
}

/* A tensor of DIR/<model>_b<batch>_io.safetensors by name (the caller frees it). */
static tide_tensor *read_io(const char *dir, const char *model, int batch, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_b%d_io.safetensors", dir, model, batch);
  tide_safetensors *f = tide_safetensors_open(path);
  if (!f) die(path, tide_last_error());
  int64_t i = tide_safetensors_find(f, name);
  if (i < 0) die(path, "has no tensor named x or y");
  tide_tensor *t = calloc(1, sizeof *t);
  if (!t || tide_safetensors_read(f, i, t)) die(path, tide_last_error());
  tide_safetensors_close(f);
  return t;
}

/* Bind x and run once; returns the output's largest difference from want. */
static double run_once(tide_run *run, const tide_tensor *x, const tide_tensor *want, const char *what) {
  tide_model_error err;
  tide_array in = tide_array_make(x->data, x->dt, x->ndim, x->dims), y;
  if (tide_run_set_input(run, 0, &in, &err) || tide_model_run(run, &err)) die(what, err.message);
  if (tide_run_output(run, 0, &y)) die(what, tide_last_error());
  int64_t n = 1;
  for (int d = 0; d < y.ndim; d++) n *= y.dims[d];
  if (y.dtype != TIDE_FLOAT32 || n != want->nelem) die(what, "the output's dtype or size is not Keras's");
  double worst = 0;
  for (int64_t k = 0; k < n; k++) worst = fmax(worst, fabs((double)((const float *)y.data)[k] - ((const float *)want->data)[k]));
  return worst;
}

/* Time to the first prediction from a fresh load of path, LOADS times. */
static void time_load(const char *label, const char *path, const tide_tensor *x, const tide_tensor *want) {
  double wall[LOADS], cpu[LOADS];
  for (int r = 0; r < LOADS; r++) {
    tide_model_error err;
    double w0 = clock_us(CLOCK_MONOTONIC), c0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
    tide_model *m = tide_model_load(path, &err);
    if (!m) die(path, err.message);
    tide_run *run = tide_run_new(tide_model_signature(m, NULL), &err);
    if (!run) die(path, err.message);
    double worst = run_once(run, x, want, path);
    wall[r] = clock_us(CLOCK_MONOTONIC) - w0, cpu[r] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (worst > 1e-4) {
      fprintf(stderr, "model_files: %s: output differs from Keras's by %g\n", path, worst);
      exit(1);
    }
    tide_run_free(run);
    tide_model_free(m);
  }
  printf("%s_load: %.2f ms\n", label, median(wall, LOADS) / 1e3);
  printf("%s_load_cpu: %.2f ms\n", label, median(cpu, LOADS) / 1e3);
}

/* Median wall and CPU time per call of RUNS rounds of calls (about 0.3 s each). */
static void time_runs(const char *label, tide_run *run, const tide_tensor *x, const tide_tensor *want) {
  double worst = run_once(run, x, want, label);
  if (worst > 1e-4) {
    fprintf(stderr, "model_files: %s: output differs from Keras's by %g\n", label, worst);
    exit(1);
  }
  double t0 = clock_us(CLOCK_MONOTONIC);
  run_once(run, x, want, label);
  double one = clock_us(CLOCK_MONOTONIC) - t0;
  int calls = (int)(3e5 / (one > 1 ? one : 1)) + 1;
  double wall[RUNS], cpu[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double w0 = clock_us(CLOCK_MONOTONIC), c0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < calls; i++) run_once(run, x, want, label);
    wall[r] = (clock_us(CLOCK_MONOTONIC) - w0) / calls, cpu[r] = (clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0) / calls;
  }
  printf("%s: %.2f us\n", label, median(wall, RUNS));
  printf("%s_cpu: %.2f us\n", label, median(cpu, RUNS));
  fflush(stdout);
}

static void bench_model(const char *dir, const char *model) {
  static const char *const fmts[2] = {"tf", "onnx"};
  tide_tensor *x1 = read_io(dir, model, 1, "x"), *y1 = read_io(dir, model, 1, "y");
  tide_tensor *x8 = read_io(dir, model, 8, "x"), *y8 = read_io(dir, model, 8, "y");
  const char *only = getenv("MODEL_FILES_FORMAT"); /* "tf" or "onnx": that one alone (for perf) */
  for (int f = 0; f < 2; f++) {
    if (only && *only && strcmp(only, fmts[f])) continue;
    char path[4096], label[256];
    snprintf(path, sizeof path, f ? "%s/%s.onnx" : "%s/%s_tf", dir, model);
    snprintf(label, sizeof label, "%s_%s", model, fmts[f]);
    time_load(label, path, x1, y1);
    tide_model_error err;
    tide_model *m = tide_model_load(path, &err);
    if (!m) die(path, err.message);
    tide_run *run = tide_run_new(tide_model_signature(m, NULL), &err);
    if (!run) die(path, err.message);
    snprintf(label, sizeof label, "%s_%s_b1", model, fmts[f]);
    time_runs(label, run, x1, y1);
    snprintf(label, sizeof label, "%s_%s_b8", model, fmts[f]);
    time_runs(label, run, x8, y8);
    tide_run_free(run);
    tide_model_free(m);
  }
  tide_tensor *all[4] = {x1, y1, x8, y8};
  for (int i = 0; i < 4; i++) tide_tensor_free(all[i]);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: model_files DIR [MODEL ...] (DIR made by bench/model_files_gen.py)\n");
    return 2;
  }
  const char *env = getenv("MODEL_FILES_THREADS");
  tide_set_num_threads(env && atoi(env) > 0 ? atoi(env) : 1);
  print_machine();
  static const char *const all[] = {"mlp", "cnn", "mobilenet_v2"};
  if (argc == 2)
    for (int i = 0; i < 3; i++) bench_model(argv[1], all[i]);
  for (int i = 2; i < argc; i++) bench_model(argv[1], argv[i]);
  return 0;
}
