/* cpu/gemm_small.c — which library runs a small float32 product on this
 * machine: measured once, at the first one, not taken from one machine.
 *
 * Why measure: the two libraries' small-product speeds swap between
 * machines. Debian's OpenBLAS 0.3.21 has small-matrix kernels only for
 * AVX-512 cores (SkylakeX): there it beats oneDNN's sgemm up to 64^3; on an
 * AVX2 EPYC (core "Zen") oneDNN wins from about 16x32x32 up (32^3: 1.08 us
 * against 1.39; 10x128x64: 2.07 against 3.91) while OpenBLAS keeps the
 * tiniest (4^3: 0.08 against 0.32 us: oneDNN's set-up). So the first small
 * product times both on a ladder of cubes and takes the size from which
 * oneDNN stays ahead; smaller products go to OpenBLAS.
 *
 * The choice holds for the process (a product of a given shape always goes
 * to the same library, so results repeat within a run). TIDE_GEMM_SMALL
 * pins it: "openblas", "onednn", or a number of multiply-adds from which
 * oneDNN runs them (to repeat results bit for bit across runs);
 * TIDE_GEMM_DEBUG=1 prints the timings the choice was made on. */
#include "gemm_small.h"

#include "onednn_load.h"
#include "signals.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_once_t measured = PTHREAD_ONCE_INIT;
static double crossover = INFINITY; /* multiply-adds from which oneDNN runs a small product */
static char how[160] = "not measured yet";

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The best of a few timed rounds of one n^3 product: the minimum, since
 * another program on the core only ever adds time. */
static double best_time(bool onednn, int n, const float *a, const float *b, float *c) {
  double best = INFINITY;
  int reps = n <= 16 ? 64 : 8;
  for (int round = 0; round < 5; round++) {
    double t0 = seconds();
    for (int r = 0; r < reps; r++) {
      if (onednn) {
        sigset_t held;
        tide_hold_signals(&held); /* cpu/signals.h */
        dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        tide_release_signals(&held);
      } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
      }
    }
    double t = (seconds() - t0) / reps;
    if (t < best) best = t;
  }
  return best;
}

/* oneDNN must win by this much to be chosen: on a tie the cheaper set-up wins,
 * and noise does not flip the choice between runs. */
#define ONEDNN_MARGIN 0.9

static void measure(void) {
  static const int ladder[] = {8, 12, 16, 24, 32, 48, 64};
  enum { STEPS = sizeof ladder / sizeof ladder[0], MAXN = 64 };
  float *a = malloc(sizeof(float) * MAXN * MAXN * 3);
  if (!a) { /* no memory for the test: keep the library that needs no set-up */
    snprintf(how, sizeof how, "OpenBLAS (not measured: out of memory)");
    return;
  }
  float *b = a + MAXN * MAXN, *c = b + MAXN * MAXN;
  for (int i = 0; i < MAXN * MAXN; i++) a[i] = (float)(i % 7) * 0.25f, b[i] = (float)(i % 5) * 0.5f;
  omp_set_num_threads(1);
  bool wins[STEPS];
  for (int s = 0; s < STEPS; s++) {
    double blas = best_time(false, ladder[s], a, b, c), dnn = best_time(true, ladder[s], a, b, c);
    wins[s] = dnn < ONEDNN_MARGIN * blas;
    if (getenv("TIDE_GEMM_DEBUG")) fprintf(stderr, "%d: blas %.3f dnnl %.3f us\n", ladder[s], blas * 1e6, dnn * 1e6);
  }
  free(a);
  int from = STEPS; /* the first rung from which oneDNN wins every larger one */
  while (from > 0 && wins[from - 1]) from--;
  if (from == STEPS) {
    snprintf(how, sizeof how, "OpenBLAS (measured)");
  } else {
    int n = ladder[from];
    crossover = (double)n * n * n;
    snprintf(how, sizeof how, "OpenBLAS below %d^3 multiply-adds, oneDNN from there (measured)", n);
  }
}

/* TIDE_GEMM_SMALL, when set: true if it decided. */
static bool pinned(void) {
  const char *env = getenv("TIDE_GEMM_SMALL");
  if (!env || !*env) return false;
  char *end;
  double from = strtod(env, &end);
  if (!strcmp(env, "openblas")) {
    crossover = INFINITY;
  } else if (!strcmp(env, "onednn")) {
    crossover = 0;
  } else if (*end == '\0' && from >= 0) {
    crossover = from;
  } else {
    return false; /* not understood: measure, and say so in the plan */
  }
  snprintf(how, sizeof how, "%s (TIDE_GEMM_SMALL=%.40s)",
           crossover == INFINITY ? "OpenBLAS" : crossover == 0 ? "oneDNN" : "OpenBLAS below the pinned size, oneDNN from it",
           env);
  return true;
}

static void decide(void) {
  if (!tide_onednn_available()) { /* (it loads oneDNN, to time it) */
    snprintf(how, sizeof how, "OpenBLAS (%.120s)", tide_onednn_error());
    return;
  }
  if (!pinned()) measure();
}

bool tide_gemm_small_onednn(double mnk) {
  pthread_once(&measured, decide);
  return mnk >= crossover;
}

const char *tide_gemm_small_plan(void) {
  pthread_once(&measured, decide);
  return how;
}
