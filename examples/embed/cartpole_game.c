/* examples/embed/cartpole_game.c — CartPole played by a trained DQN policy: the
 * game's physics in C, the policy called every frame through tide/model.h, no Lua.
 *
 *   build/tide examples/dqn/train.lua --out out     # out/policy, out/greedy_returns.txt
 *   build/examples/cartpole_game out [FRAMES] [SEED]
 *
 * The physics and the start-state generator (cartpole.h) repeat
 * examples/dqn/cartpole.lua, so one seed plays the episodes the Lua side plays: train.lua writes the returns its greedy episodes from seed
 * 12345 get through the same saved graph, and tests/sh/test_dqn.sh checks
 * that this program gets them too. Each frame writes the state into the
 * bound input (float32 [1, 4]), runs the Q-network and pushes towards the
 * larger Q-value; the time of that call (run and read) is recorded, and the
 * median and p99 printed, the first call apart (it plans the graph). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cartpole.h"
#include "tide/model.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: cartpole_game DIR [FRAMES] [SEED]  (DIR as written by "
                    "`tide examples/dqn/train.lua --out DIR`)\n");
    return 2;
  }
  char *end;
  long frames = argc >= 3 ? strtol(argv[2], &end, 10) : 2000;
  if (argc >= 3 && (*end || frames < 1)) {
    fprintf(stderr, "cartpole_game: FRAMES must be a whole number >= 1, got '%s'\n", argv[2]);
    return 2;
  }
  long long seed = argc >= 4 ? strtoll(argv[3], &end, 10) : 12345;
  if (argc >= 4 && *end) {
    fprintf(stderr, "cartpole_game: SEED must be an integer, got '%s'\n", argv[3]);
    return 2;
  }

  char model_dir[4096];
  snprintf(model_dir, sizeof model_dir, "%s/policy", argv[1]);
  tide_model_error err;
  tide_model *model = tide_model_load(model_dir, &err);
  if (!model) {
    fprintf(stderr, "cartpole_game: %s\n", err.message);
    return 1;
  }
  const tide_signature *sig = tide_model_signature(model, NULL); /* serving_default */
  const tide_tensor_spec *in = tide_signature_input(sig, 0), *out = tide_signature_output(sig, 0);
  if (!in || !out || in->dtype != TIDE_FLOAT32 || in->ndim != 2 || in->dims[1] != 4 || out->dtype != TIDE_FLOAT32 ||
      out->ndim != 2 || out->dims[1] != 2) {
    fprintf(stderr, "cartpole_game: %s does not map float32 [None, 4] states to float32 [None, 2] Q-values\n",
            model_dir);
    tide_model_free(model);
    return 1;
  }

  /* The input is bound once: each run reads `obs` as the frame left it. */
  float obs[4];
  int64_t dims[2] = {1, 4};
  tide_array x = tide_array_make(obs, TIDE_FLOAT32, 2, dims);
  tide_run *run = tide_run_new(sig, &err);
  double *latency = malloc((size_t)frames * sizeof *latency);
  int status = 0;
  if (!run || !latency || tide_run_set_input(run, 0, &x, &err) != TIDE_OK) {
    fprintf(stderr, "cartpole_game: %s\n", !latency ? "out of memory" : err.message);
    status = 1;
  }

  cartpole game;
  cartpole_seed(&game, seed);
  cartpole_reset(&game);
  long episodes = 0;
  double sum = 0;
  printf("returns (seed %lld):", seed);
  for (long f = 0; !status && f < frames; f++) {
    for (int k = 0; k < 4; k++) obs[k] = (float)game.s[k]; /* what Gym's observation holds */
    tide_array q;
    double t0 = now_us();
    if (tide_model_run(run, &err) != TIDE_OK || tide_run_output(run, 0, &q) != TIDE_OK) {
      fprintf(stderr, "\ncartpole_game: frame %ld: %s\n", f, err.message);
      status = 1;
      break;
    }
    const float *v = q.data; /* the run's memory until its next run */
    int action = v[1] > v[0] ? 1 : 0; /* argmax; a tie goes to the first, as tide.argmax */
    latency[f] = now_us() - t0;
    if (cartpole_step(&game, action)) {
      printf(" %d", game.steps); /* one reward per step, the last one included */
      episodes++;
      sum += game.steps;
      cartpole_reset(&game);
    }
  }
  printf("\n");

  if (!status) {
    long n = frames > 1 ? frames - 1 : 1;
    double first = latency[0], *steady = frames > 1 ? latency + 1 : latency;
    qsort(steady, (size_t)n, sizeof *steady, by_value);
    printf("frames: %ld, episodes finished: %ld, mean return: %.1f, unfinished episode at step %d\n", frames, episodes,
           episodes ? sum / (double)episodes : 0.0, game.steps);
    printf("first call: %.1f us\n", first);
    printf("per-frame latency: median %.2f us, p99 %.2f us\n", steady[n / 2],
           steady[(size_t)((double)(n - 1) * 0.99)]);
  }
  free(latency);
  tide_run_free(run);
  tide_model_free(model);
  return status;
}
