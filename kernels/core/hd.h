/* core/hd.h — TIDE_HD, the one way to write a small function that both the C
 * engine and the CUDA kernels compile (formulas.h, philox.h), as ggml-common.h does. */
#ifndef TIDE_CORE_HD_H
#define TIDE_CORE_HD_H

/* An inline function for the host (C or C++) and, under nvcc, for the GPU too.
 * static: each file that includes the header gets its own copy, no symbol. */
#if defined(__CUDACC__)
#define TIDE_HD static __host__ __device__ __forceinline__
#else
#define TIDE_HD static inline
#endif

#endif
