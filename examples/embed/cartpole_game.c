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

#include "cartpole_play.h"
#include "tide/model.h"

typedef struct {
  float *bound; /* the input tide_run reads: each frame's state is copied here */
  tide_run *run;
} model_policy;

static int ask_model(void *ctx, long frame, const float obs[4], int *action) {
  model_policy *p = ctx;
  for (int k = 0; k < 4; k++) p->bound[k] = obs[k];
  tide_model_error err;
  tide_array q;
  if (tide_model_run(p->run, &err) != TIDE_OK || tide_run_output(p->run, 0, &q) != TIDE_OK) {
    fprintf(stderr, "\ncartpole_game: frame %ld: %s\n", frame, err.message);
    return POLICY_FAILED;
  }
  const float *v = q.data; /* the run's memory until its next run */
  *action = v[1] > v[0] ? 1 : 0; /* argmax; a tie goes to the first, as tide.argmax */
  return POLICY_ACTED;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: cartpole_game DIR [FRAMES] [SEED]  (DIR as written by "
                    "`tide examples/dqn/train.lua --out DIR`)\n");
    return 2;
  }
  long frames;
  long long seed;
  if (cartpole_args("cartpole_game", argc, argv, &frames, &seed)) return 2;

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
  model_policy policy = {obs, tide_run_new(sig, &err)};
  int status;
  long undecided;
  if (!policy.run || tide_run_set_input(policy.run, 0, &x, &err) != TIDE_OK) {
    fprintf(stderr, "cartpole_game: %s\n", err.message);
    status = 1;
  } else {
    status = cartpole_play("cartpole_game", frames, seed, ask_model, &policy, &undecided);
  }
  tide_run_free(policy.run);
  tide_model_free(model);
  return status;
}
