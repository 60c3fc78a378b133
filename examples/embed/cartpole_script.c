/* examples/embed/cartpole_script.c — CartPole played by a policy *script*: the
 * game's physics in C, a Lua script in a sandboxed VM (tide/vm.h) asked for each frame's action under a time budget.
 *
 *   build/tide examples/dqn/train.lua --out out
 *   build/examples/cartpole_script out [FRAMES] [SEED] [BUDGET_MS]
 *
 * Where cartpole_game.c runs the saved model itself (tide/model.h, no Lua),
 * this host hands the decision to a script, as a game hands it to a mod: the
 * script loads out/policy with tide.saved_model.load and defines act(state).
 * The VM is sandboxed (no io, os, ffi; tide's file functions reach `out`
 * only) and capped at 256 MB. Loading the policy gets LOAD_BUDGET_MS; then
 * tide_vm_set_budget gives each frame's call BUDGET_MS (default 20 ms): a
 * script that runs past it loses that frame's decision (the host pushes left)
 * instead of freezing the game. Prints the same lines as cartpole_game, so the two can
 * be compared (tests/sh/test_dqn.sh: same seed, same returns). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cartpole_play.h"
#include "tide/tide.h"
#include "tide/vm.h"

/* The policy script; %s is the model's folder, inside a long string. */
enum { LOAD_BUDGET_MS = 5000 };

static const char *policy_code =
    "local tide = require 'tide'\n"
    "local q_values = tide.saved_model.load([==[%s/policy]==]).functions.serving_default\n"
    "function act(state)  -- state: float32 [1, 4]; the action as an int32 tensor [1]\n"
    "  return tide.argmax(q_values(state), { axis = 1, output_type = 'int32' })\n"
    "end\n";

typedef struct {
  tide_vm *vm;
} script_policy;

static int ask_script(void *ctx, long frame, const float obs[4], int *action) {
  script_policy *p = ctx;
  int64_t dims[2] = {1, 4};
  tide_tensor in, out;
  tide_tensor_wrap(&in, (void *)obs, TIDE_FLOAT32, 2, dims, NULL, NULL, NULL); /* shared with the script, not copied */
  const tide_tensor *args[1] = {&in};
  int n = 0, said = POLICY_ACTED;
  tide_vm_status st = tide_vm_call_tensors(p->vm, "act", 1, args, 1, &out, &n);
  if (st == TIDE_VM_OK && n == 1 && out.dt == TIDE_INT32 && out.nelem == 1) {
    *action = *(const int32_t *)out.data == 1;
  } else if (st == TIDE_VM_ERR_BUDGET) {
    said = POLICY_UNDECIDED; /* no decision in time: the game goes on, pushing left */
  } else {
    fprintf(stderr, "\ncartpole_script: frame %ld: %s\n", frame,
            st == TIDE_VM_OK ? "act must return one int32 action" : tide_vm_last_error(p->vm));
    said = POLICY_FAILED;
  }
  for (int i = 0; i < n; i++) tide_tensor_release(&out);
  tide_tensor_release(&in);
  return said;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: cartpole_script DIR [FRAMES] [SEED] [BUDGET_MS]  (DIR as written by "
                    "`tide examples/dqn/train.lua --out DIR`)\n");
    return 2;
  }
  const char *dir = argv[1];
  long frames;
  long long seed;
  if (cartpole_args("cartpole_script", argc, argv, &frames, &seed)) return 2;
  char *end;
  long budget_ms = argc >= 5 ? strtol(argv[4], &end, 10) : 20;
  if (argc >= 5 && (*end || budget_ms < 1 || budget_ms > 60000)) {
    fprintf(stderr, "cartpole_script: BUDGET_MS must be a whole number from 1 to 60000, got '%s'\n", argv[4]);
    return 2;
  }
  if (strstr(dir, "]==]") || strlen(dir) > 3000) {
    fprintf(stderr, "cartpole_script: cannot pass the folder name '%s' to the script\n", dir);
    return 2;
  }

  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sandbox = true;
  opts.files_root = dir; /* the script may read the policy, nothing else */
  opts.memory_limit = (size_t)256 << 20;
  opts.time_limit_ms = LOAD_BUDGET_MS; /* for the load; each frame's is set below */
  tide_vm *vm = tide_vm_open(&opts);
  if (!vm) {
    fprintf(stderr, "cartpole_script: %s\n", tide_last_error());
    return 1;
  }
  char code[4096];
  snprintf(code, sizeof code, policy_code, dir);
  if (tide_vm_dostring(vm, code, "=policy") != TIDE_VM_OK ||
      tide_vm_set_budget(vm, 0, (uint32_t)budget_ms) != TIDE_VM_OK) {
    fprintf(stderr, "cartpole_script: %s\n", tide_vm_last_error(vm));
    tide_vm_close(vm);
    return 1;
  }

  script_policy policy = {vm};
  long over_budget;
  int status = cartpole_play("cartpole_script", frames, seed, ask_script, &policy, &over_budget);
  if (!status) printf("frames over the %ld ms budget: %ld\n", budget_ms, over_budget);
  tide_vm_close(vm);
  return status;
}
