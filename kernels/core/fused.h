/* core/fused.h — the backends that run fused descriptions (tide/fused.h),
 * for the graph executor: the CPU one, and the choice by device. */
#ifndef TIDE_CORE_FUSED_H
#define TIDE_CORE_FUSED_H

#include "tide/fused.h"
#include "internal.h"

/* The CPU backend (cpu/fused.c). */
extern const tide_fused_backend tide_cpu_fused_backend;

/* The backend that runs fused nodes on device dev, or NULL (none yet). */
static inline const tide_fused_backend *tide_fused_backend_for(int dev) {
  return dev == TIDE_CPU ? &tide_cpu_fused_backend : NULL;
}

#endif
