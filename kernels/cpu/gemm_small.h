/* cpu/gemm_small.h — the library that runs small float32 products on this
 * machine (cpu/gemm_small.c measures it at first use). */
#ifndef TIDE_CPU_GEMM_SMALL_H
#define TIDE_CPU_GEMM_SMALL_H

#include <stdbool.h>

/* True when a float32 product of `mnk` multiply-adds, run on one thread,
 * goes to oneDNN's sgemm rather than OpenBLAS's. */
bool tide_gemm_small_onednn(double mnk);
/* One line saying what was chosen and how (measured or pinned). */
const char *tide_gemm_small_plan(void);

#endif
