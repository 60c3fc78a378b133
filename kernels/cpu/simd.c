/* cpu/simd.c — the run-time choice of instruction set (see simd.h): detects
 * the CPU once when the library loads and fills tide_simd with the variants. */
#include "simd.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Every variant of every entry point. Builds for one level only (not x86-64,
 * or SIMD_LEVELS=baseline) define TIDE_SIMD_BASELINE_ONLY and have just the first. */
#define TIDE_SIMD_FN(ret, name, params) ret name##_baseline params;
#include "simd.def"
#undef TIDE_SIMD_FN
#ifndef TIDE_SIMD_BASELINE_ONLY
#define TIDE_SIMD_FN(ret, name, params) ret name##_avx2 params; ret name##_avx512 params;
#include "simd.def"
#undef TIDE_SIMD_FN
#endif

static const tide_simd_table tables[TIDE_NUM_ISAS] = {
#define TIDE_SIMD_FN(ret, name, params) .name = name##_baseline,
  [TIDE_ISA_BASELINE] = {
#include "simd.def"
  },
#undef TIDE_SIMD_FN
#ifndef TIDE_SIMD_BASELINE_ONLY
#define TIDE_SIMD_FN(ret, name, params) .name = name##_avx2,
  [TIDE_ISA_AVX2] = {
#include "simd.def"
  },
#undef TIDE_SIMD_FN
#define TIDE_SIMD_FN(ret, name, params) .name = name##_avx512,
  [TIDE_ISA_AVX512] = {
#include "simd.def"
  },
#undef TIDE_SIMD_FN
#endif
};

static const char *const isa_names[TIDE_NUM_ISAS] = {"baseline", "avx2", "avx512"};

tide_simd_table tide_simd;
static tide_isa level;

/* The highest level this CPU (and its OS, which must save the wider
 * registers: libgcc's check includes that) runs. */
static tide_isa detect(void) {
#if defined(__x86_64__) && !defined(TIDE_SIMD_BASELINE_ONLY)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return TIDE_ISA_AVX512;
  if (__builtin_cpu_supports("x86-64-v3")) return TIDE_ISA_AVX2;
#endif
  return TIDE_ISA_BASELINE;
}

/* The level named `name`, or -1. */
static int isa_of(const char *name) {
  for (int i = 0; i < TIDE_NUM_ISAS; i++)
    if (strcasecmp(name, isa_names[i]) == 0) return i;
  return -1;
}

static void use_level(tide_isa l) {
  level = l;
  tide_simd = tables[l];
}

/* Before any op can run: the best level, capped by TIDE_MAX_CPU_ISA when set
 * to a known name (an unknown one is ignored: the library must still load). */
__attribute__((constructor)) static void choose_at_load(void) {
  tide_isa l = detect();
  const char *cap = getenv("TIDE_MAX_CPU_ISA");
  int c = cap ? isa_of(cap) : -1;
  if (c >= 0 && (tide_isa)c < l) l = (tide_isa)c;
  use_level(l);
}

tide_isa tide_simd_level(void) { return level; }

const char *tide_cpu_isa(void) { return isa_names[level]; }

tide_status tide_set_max_cpu_isa(const char *name) {
  int c = name ? isa_of(name) : -1;
  if (c < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "set_max_cpu_isa: unknown instruction set '%s' (valid: baseline, avx2, avx512)",
                     name ? name : "(null)");
  tide_isa best = detect();
  use_level((tide_isa)c < best ? (tide_isa)c : best);
  return TIDE_OK;
}
