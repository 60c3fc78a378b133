/* examples/embed/cartpole_play.h — what the two CartPole hosts share: their
 * DIR [FRAMES] [SEED] arguments, and the game loop that asks a policy for each
 * frame's action, times that call and prints the returns and the latencies.
 * cartpole_game.c's policy runs the saved model (tide/model.h); cartpole_script.c's
 * asks a sandboxed script (tide/vm.h). Both print the same lines, so
 * tests/sh/test_dqn.sh can compare them. A header of static functions. */
#ifndef TIDE_EXAMPLE_CARTPOLE_PLAY_H
#define TIDE_EXAMPLE_CARTPOLE_PLAY_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cartpole.h"

/* What a policy says for one frame. */
enum { POLICY_ACTED, POLICY_UNDECIDED /* no decision in time: the game pushes left */, POLICY_FAILED };

/* Sets *action (0: push left, 1: right) for the state obs (float32 [1, 4],
 * what Gym's observation holds); on POLICY_FAILED it has printed why. */
typedef int (*cartpole_policy)(void *ctx, long frame, const float obs[4], int *action);

/* Parses DIR [FRAMES] [SEED] (argv[1..3]) for `prog`; 0, or 2 after printing why. */
static int cartpole_args(const char *prog, int argc, char **argv, long *frames, long long *seed) {
  char *end;
  *frames = argc >= 3 ? strtol(argv[2], &end, 10) : 2000;
  if (argc >= 3 && (*end || *frames < 1)) {
    fprintf(stderr, "%s: FRAMES must be a whole number >= 1, got '%s'\n", prog, argv[2]);
    return 2;
  }
  *seed = argc >= 4 ? strtoll(argv[3], &end, 10) : 12345;
  if (argc >= 4 && *end) {
    fprintf(stderr, "%s: SEED must be an integer, got '%s'\n", prog, argv[3]);
    return 2;
  }
  return 0;
}

static double cartpole_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cartpole_by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Plays `frames` frames from `seed`, asking `policy` each frame: prints each
 * finished episode's return, then the mean return and the policy call's
 * latency (median and p99, the first call apart: it plans the graph). The
 * count of undecided frames goes to *undecided. Returns 0, or 1 when the
 * policy failed or memory ran out. */
static int cartpole_play(const char *prog, long frames, long long seed, cartpole_policy policy, void *ctx,
                         long *undecided) {
  double *latency = malloc((size_t)frames * sizeof *latency);
  if (!latency) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  cartpole game;
  cartpole_seed(&game, seed);
  cartpole_reset(&game);
  long episodes = 0;
  double sum = 0;
  int status = 0;
  *undecided = 0;
  printf("returns (seed %lld):", seed);
  for (long f = 0; f < frames; f++) {
    float obs[4];
    for (int k = 0; k < 4; k++) obs[k] = (float)game.s[k];
    int action = 0;
    double t0 = cartpole_now_us();
    int said = policy(ctx, f, obs, &action);
    latency[f] = cartpole_now_us() - t0;
    if (said == POLICY_FAILED) {
      status = 1;
      break;
    }
    if (said == POLICY_UNDECIDED) {
      action = 0;
      (*undecided)++;
    }
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
    qsort(steady, (size_t)n, sizeof *steady, cartpole_by_value);
    printf("frames: %ld, episodes finished: %ld, mean return: %.1f, unfinished episode at step %d\n", frames, episodes,
           episodes ? sum / (double)episodes : 0.0, game.steps);
    printf("first call: %.1f us\n", first);
    printf("per-frame latency: median %.2f us, p99 %.2f us\n", steady[n / 2],
           steady[(size_t)((double)(n - 1) * 0.99)]);
  }
  free(latency);
  return status;
}

#endif
