/* examples/embed/game_loop.c — a game's frame loop that runs a trained
 * Fashion-MNIST classifier (saved by train.lua) every frame through tide's
 * C API without Lua (tide/model.h), and prints the per-call latency.
 *
 *   tide examples/embed/train.lua out          # out/classifier, out/frames.npy, out/labels.npy
 *   cc examples/embed/game_loop.c $(pkg-config --cflags --libs tide) -o game_loop
 *   ./game_loop out [frames]
 *
 * Each frame "sees" one item (a row of frames.npy, bound zero-copy), asks
 * the classifier what it is, and scores the answer against labels.npy. The
 * time of each call (bind the input, run, read the output) is recorded;
 * the first call is reported apart (it warms the caches). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide/model.h"
#include "tide/npy.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Read an .npy file of `dtype` and rank `ndim` into the blank tensor t; 0 on success. */
static int load_npy(const char *dir, const char *name, int dtype, int ndim, tide_tensor *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (tide_npy_read(path, t) != TIDE_OK) {
    fprintf(stderr, "game_loop: %s\n", tide_last_error());
    return 1;
  }
  if (t->dt != dtype || t->ndim != ndim) {
    fprintf(stderr, "game_loop: %s is %s of rank %d; expected %s of rank %d\n", path, tide_dtype_name(t->dt),
            (int)t->ndim, tide_dtype_name(dtype), ndim);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: game_loop DIR [FRAMES]  (DIR as written by `tide examples/embed/train.lua DIR`)\n");
    return 2;
  }
  const char *dir = argv[1];
  long frames = argc == 3 ? strtol(argv[2], NULL, 10) : 2000;
  if (frames < 1) {
    fprintf(stderr, "game_loop: FRAMES must be a whole number >= 1\n");
    return 2;
  }

  char model_dir[4096];
  snprintf(model_dir, sizeof model_dir, "%s/classifier", dir);
  tide_model_error err;
  tide_model *model = tide_model_load(model_dir, &err);
  if (!model) {
    fprintf(stderr, "game_loop: %s\n", err.message);
    return 1;
  }
  const tide_signature *sig = tide_model_signature(model, NULL); /* serving_default */
  const tide_tensor_spec *in = tide_signature_input(sig, 0);
  if (!in || in->dtype != TIDE_FLOAT32 || in->ndim != 2 || in->dims[1] != 784) {
    fprintf(stderr, "game_loop: %s does not take float32 [None, 784] images\n", model_dir);
    tide_model_free(model);
    return 1;
  }

  tide_tensor images = {0}, labels = {0};
  int status = load_npy(dir, "frames.npy", TIDE_FLOAT32, 2, &images) || load_npy(dir, "labels.npy", TIDE_INT32, 1, &labels);
  if (!status && (images.dims[1] != 784 || labels.dims[0] != images.dims[0] || images.dims[0] == 0)) {
    fprintf(stderr, "game_loop: frames.npy must be [n, 784] and labels.npy [n], n >= 1\n");
    status = 1;
  }
  tide_run *run = status ? NULL : tide_run_new(sig, &err);
  double *latency = malloc((size_t)frames * sizeof *latency);
  if (!status && (!run || !latency)) {
    fprintf(stderr, "game_loop: %s\n", run ? "out of memory" : err.message);
    status = 1;
  }

  long correct = 0;
  for (long f = 0; !status && f < frames; f++) {
    int64_t item = f % images.dims[0];
    int64_t dims[2] = {1, 784};
    tide_array x = tide_array_make((float *)images.data + item * 784, TIDE_FLOAT32, 2, dims);
    tide_array y;
    double t0 = now_us();
    if (tide_run_set_input(run, 0, &x, &err) != TIDE_OK || tide_model_run(run, &err) != TIDE_OK ||
        tide_run_output(run, 0, &y) != TIDE_OK) {
      fprintf(stderr, "game_loop: frame %ld: %s\n", f, err.message);
      status = 1;
      break;
    }
    const float *scores = y.data; /* the run's memory until its next run */
    int best = 0;
    for (int k = 1; k < (int)y.dims[y.ndim - 1]; k++)
      if (scores[k] > scores[best]) best = k;
    latency[f] = now_us() - t0;
    /* the rest of the frame: the game reacts to what it saw */
    if (best == ((const int32_t *)labels.data)[item]) correct++;
  }

  if (!status) {
    double first = latency[0];
    long n = frames > 1 ? frames - 1 : 1;
    double *steady = frames > 1 ? latency + 1 : latency;
    qsort(steady, (size_t)n, sizeof *steady, by_value);
    double median = steady[n / 2], p99 = steady[(size_t)((double)(n - 1) * 0.99)];
    printf("frames: %ld, classified right: %.1f%%\n", frames, 100.0 * (double)correct / (double)frames);
    printf("first call: %.1f us\n", first);
    printf("per-call latency: median %.1f us, p99 %.1f us\n", median, p99);
  }
  free(latency);
  tide_run_free(run);
  tide_tensor_release(&images);
  tide_tensor_release(&labels);
  tide_model_free(model);
  return status;
}
