/* core/backend_cpu.c — the CPU's backend table: its kernels are ops.def's CPU
 * column, its fused runner cpu/fused.c's, its memory the host allocator's. */
#include "backend.h"

#include <string.h>

/* Host memory through core's allocator (core/alloc.c: aligned, counted, cached). */
static tide_status host_alloc(int k, size_t nbytes, void **ptr) {
  TIDE_UNUSED(k);
  *ptr = tide_alloc(nbytes);
  return *ptr ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory (%zu bytes)", nbytes);
}

static void host_free(int k, void *ptr, size_t nbytes) {
  TIDE_UNUSED(k);
  tide_free(ptr, nbytes);
}

/* Every kind is host to host on the CPU. */
static tide_status host_copy(int k, tide_copy_kind kind, void *dst, const void *src, size_t nbytes) {
  TIDE_UNUSED(k), TIDE_UNUSED(kind);
  if (nbytes) memcpy(dst, src, nbytes);
  return TIDE_OK;
}

/* The one place core names kernel code, by design: the rest of core, and
 * graph above it, reach kernels only through this table (and CUDA's), never
 * by including cpu/ (tests/sh/test_layers.sh checks both, at the call level). */
const tide_backend tide_cpu_backend = {
  .name = "cpu",
  .kernels = {
#define TIDE_OP(id, name, nin, nout, dts, out, infer, cpu, flags) [TIDE_OP_##id] = cpu,
#include "tide/ops.def"
#undef TIDE_OP
  },
  .fused = &tide_cpu_fused_runner,
  .alloc = host_alloc,
  .free = host_free,
  .memcpy = host_copy,
};
