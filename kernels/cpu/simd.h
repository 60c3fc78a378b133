/* cpu/simd.h — instruction sets chosen at run time for the hot loops, as
 * OpenBLAS and oneDNN do, so one libtide runs on any x86-64-v2 CPU.
 *
 * How it works.
 * - The library is built for the baseline (the Makefile's OPT, x86-64-v2 by
 *   default). The files of the Makefile's SIMD_SRC are compiled once more
 *   per level: with -march=x86-64-v3 (AVX2, FMA) and -march=x86-64-v4
 *   (AVX-512), each time with -DTIDE_SIMD_LEVEL=baseline|avx2|avx512; the
 *   baseline copy also gets -DTIDE_SIMD_ONCE for what must exist once.
 * - Inside such a file the loops are static; its entry points are named
 *   with TIDE_SIMD(name), which appends the level: binary_loop_avx2 and so on.
 * - simd.def lists those entry points. simd.c declares every variant from
 *   it, detects the CPU once at start-up (__builtin_cpu_supports, capped by
 *   the TIDE_MAX_CPU_ISA environment variable or tide_set_max_cpu_isa) and
 *   fills the table `tide_simd` with the best variant of each.
 * - Callers go through the table: tide_simd.binary_loop(op, dt).
 * To add a loop family: give its file TIDE_SIMD() entry points (and its
 * once-only code under TIDE_SIMD_ONCE), add it to SIMD_SRC and a line to
 * simd.def, and call through tide_simd. */
#ifndef TIDE_CPU_SIMD_H
#define TIDE_CPU_SIMD_H

#include "iter.h"
#include "../core/parallel.h"
#include "reduce.h"

/* The levels, lowest first; each needs the ones below it. */
typedef enum tide_isa {
  TIDE_ISA_BASELINE, /* x86-64-v2 (SSE4.2); on other architectures, the build's target */
  TIDE_ISA_AVX2,     /* x86-64-v3: AVX2, FMA, F16C, BMI2 */
  TIDE_ISA_AVX512,   /* x86-64-v4: AVX-512 F/BW/CD/DQ/VL */
  TIDE_NUM_ISAS
} tide_isa;

#define TIDE_SIMD_CAT2(a, b) a##_##b
#define TIDE_SIMD_CAT(a, b) TIDE_SIMD_CAT2(a, b)
#ifdef TIDE_SIMD_LEVEL
/* In a *_simd.c file: the name of this compilation's variant of an entry point. */
#define TIDE_SIMD(name) TIDE_SIMD_CAT(name, TIDE_SIMD_LEVEL)
#endif

/* The reduce family's kernel set for an input dtype and a reduction kind
 * (cpu/reduce_simd.c); the types are reduce_kernels.h's. */
struct tide_reduce_kernels;
/* The float32 fused engine's kernels (cpu/fused_f32.h). */
struct tide_fused_f32_kernel;

/* One pointer per entry point of simd.def, set to the chosen level's variant. */
typedef struct tide_simd_table {
#define TIDE_SIMD_FN(ret, name, params) ret(*name) params;
#include "simd.def"
#undef TIDE_SIMD_FN
} tide_simd_table;

/* The chosen variants; filled when the library loads (before any op runs). */
extern tide_simd_table tide_simd;

/* The level in use. */
tide_isa tide_simd_level(void);

#endif
