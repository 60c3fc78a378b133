/* tests/c/test_backend.c — the CPU backend's table covers every registry op,
 * the primitive flag (TIDE_OPF_PRIMITIVE) marks a real subset of them, and
 * the queries refuse unknown ops and devices. CUDA's table: tests/spec/device/backend_spec.lua. */
#include "util.h"

int main(void) {
  int primitives = 0, host_only = 0;
  for (int op = 0; op < TIDE_NUM_OPS; op++) {
    CHECK(tide_op_has_kernel(TIDE_CPU, op)); /* ops.def's CPU column fills every slot */
    if (!(tide_op_flags(op) & TIDE_OPF_PRIMITIVE)) continue;
    primitives++;
    /* A primitive is what a device backend computes: never a string-only or effect op. */
    if (tide_op_dtypes(op) == TIDE_DTS_STRING || (tide_op_flags(op) & TIDE_OPF_EFFECT)) host_only++;
  }
  CHECK(primitives > 0 && primitives < TIDE_NUM_OPS);
  CHECK(host_only == 0);
  /* The rule's examples: composable ops are fast paths. */
  CHECK(tide_op_flags(TIDE_OP_ADD) & TIDE_OPF_PRIMITIVE);
  CHECK(tide_op_flags(TIDE_OP_EXP) & TIDE_OPF_PRIMITIVE);
  CHECK(tide_op_flags(TIDE_OP_RESHAPE) & TIDE_OPF_PRIMITIVE);
  CHECK(!(tide_op_flags(TIDE_OP_RELU) & TIDE_OPF_PRIMITIVE));
  CHECK(!(tide_op_flags(TIDE_OP_MATMUL) & TIDE_OPF_PRIMITIVE));
  CHECK(!(tide_op_flags(TIDE_OP_SOFTMAX) & TIDE_OPF_PRIMITIVE));

  /* The CPU lacks none; the count ignores `max`. */
  int ops[4] = {-1, -1, -1, -1};
  CHECK(tide_backend_missing_primitives(TIDE_CPU, ops, 4) == 0 && ops[0] == -1);
  CHECK(tide_backend_missing_primitives(TIDE_CPU, NULL, 0) == 0);

  /* Unknown ops and devices. */
  CHECK(!tide_op_has_kernel(TIDE_CPU, -1) && !tide_op_has_kernel(TIDE_CPU, TIDE_NUM_OPS));
  CHECK(!tide_op_has_kernel(-1, TIDE_OP_ADD));
  CHECK(tide_backend_missing_primitives(-1, ops, 4) == -1);
  CHECK(contains(tide_last_error(), "device -1") && contains(tide_last_error(), "no such device"));
  return CHECK_SUMMARY("backend");
}
