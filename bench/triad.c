/* bench/triad.c — the machine's memory bandwidth, STREAM-style: a[i] = b[i] +
 * s * c[i] with as many threads as tide uses, over arrays far larger than the
 * caches (triad.bandwidth) and over arrays of 1M floats, the in-cache size of
 * bench/trace.lua's 1M chain (triad_1m.bandwidth). Medians of 10 timings; 3
 * arrays counted, write-allocate traffic not counted, as STREAM does. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Median GB/s of the triad over n floats, each timing `reps` triads long. */
static double triad(long n, int reps) {
  float *a = aligned_alloc(64, n * sizeof(float)), *b = aligned_alloc(64, n * sizeof(float)),
        *c = aligned_alloc(64, n * sizeof(float));
  if (!a || !b || !c) exit(1);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2; /* first touch by the same threads */
  enum { RUNS = 10 };
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = now();
    for (int k = 0; k < reps; k++) {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
    }
    t[r] = (now() - t0) / reps;
  }
  qsort(t, RUNS, sizeof t[0], cmp);
  if (a[n / 2] != 7.0f) exit(2);
  free(a), free(b), free(c);
  return 3.0 * n * sizeof(float) / t[RUNS / 2] / 1e9;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20 * 1000 * 1000;
  printf("triad.bandwidth: %.2f GB/s\n", triad(n, 1));
  printf("triad_1m.bandwidth: %.2f GB/s\n", triad(1000 * 1000, 20));
  printf("triad.threads: %d threads\n", omp_get_max_threads());
  return 0;
}
