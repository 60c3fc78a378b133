/* examples/embed/sandboxed_script.c — tide inside a C program (a game, a tool), with Lua: open
 * a sandboxed VM with a memory cap and a time budget, load a script, call its
 * function with tensors every frame, give it a host function, handle errors.
 *
 * `make` builds it as build/examples/sandboxed_script. By hand, from the source tree:
 *   cc examples/embed/sandboxed_script.c -Ikernels/include -Lbuild -ltidevm -ltide \
 *      -Wl,-rpath,$PWD/build -o embed
 * Installed (make install), use -I$PREFIX/include -L$PREFIX/lib instead.
 * No Lua header is needed: tensors go in and come out as tide_tensor.
 * libtidevm finds tide's Lua library next to itself.
 */
#include <stdio.h>
#include <string.h>

#include "tide/tide.h"
#include "tide/vm.h"

/* Lua code a game might ship: a tiny "policy" that scores a state vector. */
static const char *policy_code =
    "local tide = require 'tide'\n"
    "local weights = tide.tensor({0.5, -1.0, 2.0}, 'float32')\n"
    "\n"
    "-- Called from C every frame: a state tensor in, a score and the\n"
    "-- weighted state out.\n"
    "function score(state)\n"
    "  local weighted = state * weights\n"
    "  local total = weighted:sum() + bonus(state)  -- bonus is the host's\n"
    "  return total, weighted\n"
    "end\n";

/* A host function the script calls: the state's largest element, from C. */
static int bonus(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)userdata;
  (void)max_out;
  if (n_in != 1 || in[0]->dt != TIDE_FLOAT32 || in[0]->nelem < 1 || !tide_tensor_is_contiguous(in[0])) {
    tide_set_error(TIDE_ERR_VALUE, "bonus: expected one non-empty contiguous float32 tensor");
    return -1;
  }
  const float *x = in[0]->data;
  float best = x[0];
  for (int64_t i = 1; i < in[0]->nelem; i++) best = x[i] > best ? x[i] : best;
  if (tide_tensor_init(&out[0], TIDE_FLOAT32, 0, NULL) != TIDE_OK) return -1;
  *(float *)out[0].data = best;
  return 1;
}

int main(void) {
  /* 1. Open a VM for a script we do not fully trust: no io, os, ffi or
   * debug; 64 MB for its Lua heap and tensors; 50 ms per call. */
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sandbox = true;
  opts.memory_limit = 64 << 20;
  opts.time_limit_ms = 50;
  tide_vm *vm = tide_vm_open(&opts);
  if (!vm) {
    fprintf(stderr, "embed: cannot open a tide VM: %s\n", tide_last_error());
    return 1;
  }

  /* 2. Give the script a host function, then run the script. */
  if (tide_vm_register(vm, "bonus", bonus, NULL) != TIDE_VM_OK ||
      tide_vm_dostring(vm, policy_code, "=policy") != TIDE_VM_OK) {
    fprintf(stderr, "embed: setup failed:\n%s\n", tide_vm_last_error(vm));
    tide_vm_close(vm);
    return 1;
  }

  /* 3. Each frame: the game's state, wrapped without a copy, goes in;
   * tensors come out. */
  float state[3];
  for (int frame = 0; frame < 3; frame++) {
    state[0] = (float)frame, state[1] = 2.0f * frame, state[2] = 1.0f;
    int64_t dims[1] = {3};
    tide_tensor in;
    if (tide_tensor_wrap(&in, state, TIDE_FLOAT32, 1, dims, NULL, NULL, NULL) != TIDE_OK) return 1;
    const tide_tensor *args[1] = {&in};
    tide_tensor out[2];
    int n_out = 0;
    tide_vm_status st = tide_vm_call_tensors(vm, "score", 1, args, 2, out, &n_out);
    if (st == TIDE_VM_OK && n_out == 2) {
      const float *w = out[1].data;
      printf("frame %d: score = %g (weighted %g %g %g)\n", frame, *(const float *)out[0].data, w[0], w[1], w[2]);
    } else {
      fprintf(stderr, "embed: score failed:\n%s\n", tide_vm_last_error(vm));
    }
    for (int i = 0; i < n_out; i++) tide_tensor_release(&out[i]);
    tide_tensor_release(&in); /* a share the script kept still points at `state`, which outlives the VM */
  }

  /* 4. Errors and limits do not end the VM: report them and go on. */
  if (tide_vm_dostring(vm, "while true do end", "=runaway") == TIDE_VM_ERR_BUDGET)
    printf("stopped: %.40s...\n", tide_vm_last_error(vm));
  if (tide_vm_dostring(vm, "io.open('/etc/passwd')", "=escape") != TIDE_VM_OK)
    printf("refused: %.60s...\n", tide_vm_last_error(vm));

  /* 5. Close: every tensor the VM held is released. */
  tide_vm_close(vm);
  return 0;
}
