/* bench/sgemm_ref.c — float32 matmul through tide_op_run(TIDE_OP_MATMUL) against
 * cblas_sgemm called directly, on square sizes; prints `name: value unit` lines.
 *
 * Build (from the repository root, after `make`):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Ikernels/include $(pkg-config --cflags openblas) \
 *      bench/sgemm_ref.c -o build/sgemm_ref -Lbuild -ltide $(pkg-config --libs openblas) \
 *      -Wl,-rpath,'$ORIGIN' -lm
 * Run: build/sgemm_ref [threads] [sizes...]   (default: all cores; 256 1024 2048)
 * Each figure is the median of 7 runs; a run repeats the product until it
 * lasts at least 0.2 s. tide runs every size first, then OpenBLAS (at the
 * same thread count): OpenBLAS's threads spin for a while after each call
 * and would slow tide's pool if the two alternated. tide's time includes
 * allocating its output. */
#include "tide/tide.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { RUNS = 7 };
#define MIN_RUN_S 0.2

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct ctx {
  int n;
  float *a, *b, *c;
  tide_tensor ta, tb;
} ctx;

static int run_blas(ctx *x) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x->n, x->n, x->n, 1.0f, x->a, x->n, x->b, x->n, 0.0f, x->c,
              x->n);
  return 0;
}

static int run_tide(ctx *x) {
  tide_tensor out;
  memset(&out, 0, sizeof out);
  const tide_tensor *in[2] = {&x->ta, &x->tb};
  tide_tensor *outs[1] = {&out};
  if (tide_op_run(TIDE_OP_MATMUL, NULL, 2, in, 1, outs) != TIDE_OK) {
    fprintf(stderr, "matmul failed: %s\n", tide_last_error());
    return 1;
  }
  tide_tensor_release(&out);
  return 0;
}

/* Seconds per product: one timed run of `reps` repetitions. */
static double time_run(int (*fn)(ctx *), ctx *x, int reps) {
  double t0 = now();
  for (int r = 0; r < reps; r++)
    if (fn(x)) exit(1);
  return (now() - t0) / reps;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  int sizes[16] = {256, 1024, 2048}, nsizes = 3;
  if (argc > 2) {
    nsizes = 0;
    for (int i = 2; i < argc && nsizes < 16; i++) sizes[nsizes++] = atoi(argv[i]);
  }
  if (tide_set_num_threads(threads) != TIDE_OK) {
    fprintf(stderr, "%s\n", tide_last_error());
    return 1;
  }
  printf("sgemm_threads: %d threads\n", threads);
  static ctx xs[16];
  double gt[16];
  for (int pass = 0; pass < 2; pass++) { /* 0: tide, 1: OpenBLAS */
    if (pass == 1) openblas_set_num_threads(threads);
    for (int s = 0; s < nsizes; s++) {
      ctx *x = &xs[s];
      int n = sizes[s];
      size_t count = (size_t)n * (size_t)n;
      if (pass == 0) {
        memset(x, 0, sizeof *x);
        x->n = n;
        x->a = aligned_alloc(64, count * sizeof(float));
        x->b = aligned_alloc(64, count * sizeof(float));
        x->c = aligned_alloc(64, count * sizeof(float));
        if (!x->a || !x->b || !x->c) return 1;
        srand(1);
        for (size_t i = 0; i < count; i++) {
          x->a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
          x->b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        }
        int64_t dims[2] = {n, n};
        if (tide_tensor_wrap(&x->ta, x->a, TIDE_FLOAT32, 2, dims, NULL, NULL, NULL) ||
            tide_tensor_wrap(&x->tb, x->b, TIDE_FLOAT32, 2, dims, NULL, NULL, NULL))
          return 1;
      }
      int (*fn)(ctx *) = pass == 0 ? run_tide : run_blas;
      /* Warm up (threads, buffers, page faults), then size the runs. */
      double once = time_run(fn, x, 2);
      int reps = (int)(MIN_RUN_S / (once > 1e-9 ? once : 1e-9)) + 1;
      double t[RUNS];
      for (int r = 0; r < RUNS; r++) t[r] = time_run(fn, x, reps);
      qsort(t, RUNS, sizeof *t, cmp_double);
      double g = 2.0 * (double)n * (double)n * (double)n / t[RUNS / 2] * 1e-9;
      if (pass == 0) {
        gt[s] = g;
        printf("sgemm_tide_%d: %.1f GFLOP/s\n", n, g);
      } else {
        printf("sgemm_blas_%d: %.1f GFLOP/s\n", n, g);
        printf("sgemm_tide_vs_blas_%d: %.1f %%\n", n, 100.0 * gt[s] / g);
        tide_tensor_release(&x->ta);
        tide_tensor_release(&x->tb);
        free(x->a), free(x->b), free(x->c);
      }
    }
  }
  return 0;
}
