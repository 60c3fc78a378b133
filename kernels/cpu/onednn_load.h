/* cpu/onednn_load.h — oneDNN (libdnnl.so.2, with the libgomp it runs on) loaded on first use with dlopen,
 * so a program that never runs a float32 product or convolution big enough for it never maps it: libtide's
 * start-up loads no oneDNN, OpenCL, libstdc++ or OpenMP. The files that call oneDNN (gemm.c, gemm_small.c,
 * dnnl_conv.c) keep its names: below, each names the pointer the loader filled. */
#ifndef TIDE_CPU_ONEDNN_LOAD_H
#define TIDE_CPU_ONEDNN_LOAD_H
#include <stdbool.h>

#include <dnnl.h>

/* The oneDNN functions tide calls (add one here to call it). */
#define TIDE_ONEDNN_FUNCTIONS(X)                                                                                   \
  X(dnnl_sgemm) X(dnnl_engine_create) X(dnnl_stream_create) X(dnnl_stream_wait) X(dnnl_primitive_attr_create)        \
  X(dnnl_primitive_attr_destroy) X(dnnl_primitive_attr_set_scratchpad_mode) X(dnnl_memory_desc_init_by_strides)     \
  X(dnnl_memory_desc_init_by_tag) X(dnnl_memory_desc_get_size) X(dnnl_memory_desc_equal) X(dnnl_memory_create)      \
  X(dnnl_memory_destroy) X(dnnl_dilated_convolution_forward_desc_init)                                             \
  X(dnnl_dilated_convolution_backward_data_desc_init) X(dnnl_dilated_convolution_backward_weights_desc_init)        \
  X(dnnl_primitive_desc_create) X(dnnl_primitive_desc_query_md) X(dnnl_primitive_desc_destroy)                     \
  X(dnnl_reorder_primitive_desc_create) X(dnnl_primitive_create) X(dnnl_primitive_execute) X(dnnl_primitive_destroy)

typedef struct tide_onednn {
#define TIDE_ONEDNN_FIELD(name) __typeof__(name) *name;
  TIDE_ONEDNN_FUNCTIONS(TIDE_ONEDNN_FIELD)
#undef TIDE_ONEDNN_FIELD
  /* libgomp's, found through libdnnl's own dependency: oneDNN is only used when each call can be held to
   * one OpenMP thread (tide's pool owns the cores). */
  void (*omp_set_num_threads)(int n);
} tide_onednn;

/* Filled once by tide_onednn_available (pthread_once orders it before any caller's reads). */
extern tide_onednn tide_onednn_fns;

/* True when oneDNN and libgomp loaded and have every function above; false (once, for the process) when not:
 * float32 products then go to OpenBLAS and convolutions to im2col. The first call loads the library. */
bool tide_onednn_available(void);
/* Why tide_onednn_available is false ("" while it is true or not yet asked). */
const char *tide_onednn_error(void);

#ifndef TIDE_ONEDNN_LOADER /* callers: dnnl_x(...) calls the loaded dnnl_x; call tide_onednn_available first */
#define dnnl_sgemm (tide_onednn_fns.dnnl_sgemm)
#define dnnl_engine_create (tide_onednn_fns.dnnl_engine_create)
#define dnnl_stream_create (tide_onednn_fns.dnnl_stream_create)
#define dnnl_stream_wait (tide_onednn_fns.dnnl_stream_wait)
#define dnnl_primitive_attr_create (tide_onednn_fns.dnnl_primitive_attr_create)
#define dnnl_primitive_attr_destroy (tide_onednn_fns.dnnl_primitive_attr_destroy)
#define dnnl_primitive_attr_set_scratchpad_mode (tide_onednn_fns.dnnl_primitive_attr_set_scratchpad_mode)
#define dnnl_memory_desc_init_by_strides (tide_onednn_fns.dnnl_memory_desc_init_by_strides)
#define dnnl_memory_desc_init_by_tag (tide_onednn_fns.dnnl_memory_desc_init_by_tag)
#define dnnl_memory_desc_get_size (tide_onednn_fns.dnnl_memory_desc_get_size)
#define dnnl_memory_desc_equal (tide_onednn_fns.dnnl_memory_desc_equal)
#define dnnl_memory_create (tide_onednn_fns.dnnl_memory_create)
#define dnnl_memory_destroy (tide_onednn_fns.dnnl_memory_destroy)
#define dnnl_dilated_convolution_forward_desc_init (tide_onednn_fns.dnnl_dilated_convolution_forward_desc_init)
#define dnnl_dilated_convolution_backward_data_desc_init \
  (tide_onednn_fns.dnnl_dilated_convolution_backward_data_desc_init)
#define dnnl_dilated_convolution_backward_weights_desc_init \
  (tide_onednn_fns.dnnl_dilated_convolution_backward_weights_desc_init)
#define dnnl_primitive_desc_create (tide_onednn_fns.dnnl_primitive_desc_create)
#define dnnl_primitive_desc_query_md (tide_onednn_fns.dnnl_primitive_desc_query_md)
#define dnnl_primitive_desc_destroy (tide_onednn_fns.dnnl_primitive_desc_destroy)
#define dnnl_reorder_primitive_desc_create (tide_onednn_fns.dnnl_reorder_primitive_desc_create)
#define dnnl_primitive_create (tide_onednn_fns.dnnl_primitive_create)
#define dnnl_primitive_execute (tide_onednn_fns.dnnl_primitive_execute)
#define dnnl_primitive_destroy (tide_onednn_fns.dnnl_primitive_destroy)
#define omp_set_num_threads (tide_onednn_fns.omp_set_num_threads)
#endif
#endif
