/* tide/tensor.h — the tensor header: dtype, shape, strides and a pointer into a
 * refcounted storage (or into the header itself for small data), plus views. */
#ifndef TIDE_TENSOR_H
#define TIDE_TENSOR_H
#include "tide/export.h"
#include "tide/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TIDE_MAX_DIMS = 8,
  /* ndim of a symbolic tensor (or a graph's descriptor) whose rank is unknown
   * until the graph runs: TF's TensorShape(None), as TF's C API reports it
   * (TF_GraphGetTensorNumDims gives -1). Its dims, strides and nelem mean
   * nothing (dims 0, nelem -1). Only tracing makes such headers: eager
   * tensors, and every tensor a graph's run sees, have a known rank. */
  TIDE_UNKNOWN_RANK = -1,
  /* Tensors of at most this many bytes keep their data inside the header, so
   * a tiny eager op allocates nothing in C and needs no finalizer in Lua. */
  TIDE_INLINE_BYTES = 32
};

typedef enum tide_device { TIDE_CPU = 0, TIDE_CUDA = 1 } tide_device;

/* Header flags. */
enum {
  TIDE_TENSOR_INLINE = 1,  /* data lives in inline_data (storage is NULL) */
  TIDE_TENSOR_SYMBOLIC = 2 /* a value of a graph being traced: no data; inline_data.sym names it,
                              dims may be -1 and ndim TIDE_UNKNOWN_RANK (unknown until the graph runs) */
};

/* A refcounted buffer; opaque. Views of one buffer share it. */
typedef struct tide_storage tide_storage;

/* Called once when the last reference to wrapped memory goes away. */
typedef void (*tide_free_fn)(void *ctx, void *data);

#ifdef TIDE_FFI
/* Lua's view of the header (bindings/gen_cdef.sh makes the FFI declarations
 * from these headers with TIDE_FFI set). Kernels trust the header, so Lua may
 * read it but never write it: every field is const (LuaJIT refuses
 * `x.nelem = 0` with "attempt to write to constant location"), data is an
 * untyped const pointer, and the arrays are opaque blocks of the same size:
 * bindings/tide/binding.lua gives tide_ffi_dims a metatype whose reads are
 * bounds-checked, so a tensor is no way to reach memory outside its header.
 * The layout must match the C view below (tests check both against fixed
 * offsets: tests/c/test_tensor.c, tests/spec/binding/header_spec.lua). */
#  define TIDE_LUA_RO const
#  define TIDE_PAD4 int32_t : 32;
#  define TIDE_PAD32 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4 TIDE_PAD4
typedef struct tide_ffi_dims { TIDE_PAD32 TIDE_PAD32 } tide_ffi_dims; /* int64_t[TIDE_MAX_DIMS] */
#  define TIDE_DIMS_FIELD(name) const tide_ffi_dims name
#else
#  define TIDE_LUA_RO
#  define TIDE_DIMS_FIELD(name) int64_t name[TIDE_MAX_DIMS]
#endif

/* A tensor header. Field names avoid `shape`/`dtype`/`size` so that the Lua
 * face can offer those names as properties and methods.
 *   data     address of element 0 (already offset into the storage)
 *   strides  in elements; 0 on broadcast dims; may be negative (reversed views)
 * A header with TIDE_TENSOR_INLINE points into itself: never copy one by value;
 * use tide_tensor_share() to make another reference. */
typedef struct tide_tensor {
  TIDE_LUA_RO void *TIDE_LUA_RO data;
  tide_storage *TIDE_LUA_RO storage;
  TIDE_DIMS_FIELD(dims);
  TIDE_DIMS_FIELD(strides);
  TIDE_LUA_RO int64_t nelem;
  TIDE_LUA_RO int32_t ndim;
  TIDE_LUA_RO int32_t dt;           /* tide_dtype */
  TIDE_LUA_RO int32_t dev;          /* TIDE_CPU, or TIDE_CUDA + k for GPU k (tide/device.h) */
  TIDE_LUA_RO uint32_t flags;
  union {
#ifdef TIDE_FFI
    struct { TIDE_PAD32 }; /* the inline bytes, opaque to Lua */
#else
    unsigned char bytes[TIDE_INLINE_BYTES];
    int64_t i64_;
    double f64_;
#endif
    struct { TIDE_LUA_RO uint64_t graph_id; TIDE_LUA_RO int32_t node; TIDE_LUA_RO int32_t index; } sym; /* TIDE_TENSOR_SYMBOLIC */
  } inline_data;
} tide_tensor;

/* ---- making and dropping tensors -------------------------------------- */

/* Give the blank header `t` a new contiguous, uninitialized buffer of the
 * given dtype and shape (inline when small). `dims` may be NULL when ndim = 0. */
TIDE_API tide_status tide_tensor_init(tide_tensor *t, int dtype, int ndim, const int64_t *dims);
/* Like tide_tensor_init, but never inline: the data gets a storage of its own. */
TIDE_API tide_status tide_tensor_init_heap(tide_tensor *t, int dtype, int ndim, const int64_t *dims);
/* Make the blank header `t` a zero-copy tensor over memory the caller owns.
 * `strides` NULL means contiguous. `free_fn(ctx, data)` runs when the last
 * reference goes (free_fn may be NULL). TIDE_BOOL memory is used as it is
 * (zero-copy cannot normalize it): every kernel and reader takes any nonzero
 * byte as true (casts give 1, reductions and logic ops see true, printing
 * shows true); tide itself only ever writes 0 and 1. */
TIDE_API tide_status tide_tensor_wrap(tide_tensor *t, void *data, int dtype, int ndim,
                                      const int64_t *dims, const int64_t *strides,
                                      tide_free_fn free_fn, void *ctx);
/* Make the blank header `dst` another reference to exactly what `src` views. */
TIDE_API tide_status tide_tensor_share(tide_tensor *dst, const tide_tensor *src);
/* Drop this header's reference to its data; the header becomes empty.
 * Safe to call twice. This is the Lua finalizer. */
TIDE_API void tide_tensor_release(tide_tensor *t);
/* Move inline data into a storage of its own, so views can share it. */
TIDE_API tide_status tide_tensor_promote(tide_tensor *t);

/* Heap headers for C users: new = malloc + init; free = release + free. */
TIDE_API tide_tensor *tide_tensor_new(int dtype, int ndim, const int64_t *dims);
TIDE_API void tide_tensor_free(tide_tensor *t);

/* ---- views -------------------------------------------------------------- */

/* Make the blank header `dst` a view of `src`'s storage with the given shape,
 * strides (elements) and offset (elements, from src->data). Bounds are checked
 * against the storage. `src` must not be inline (promote it first). */
TIDE_API tide_status tide_tensor_view(tide_tensor *dst, const tide_tensor *src, int ndim,
                                      const int64_t *dims, const int64_t *strides,
                                      int64_t offset);
/* True when elements are laid out row-major without gaps. */
TIDE_API bool tide_tensor_is_contiguous(const tide_tensor *t);
/* Copy `src` into `dst` elementwise, broadcasting src to dst's shape; both must
 * share a dtype. `dst` may be a strided view (this is how `x[i] = v` writes). */
TIDE_API tide_status tide_tensor_copy_into(tide_tensor *dst, const tide_tensor *src);
/* Give `var` the values of `value` (same dtype and shape): a variable's
 * update. Written in place when var's storage is its own; when other tensors
 * still share it (earlier reads), var gets a fresh storage first, so values
 * already read never change (copy-on-write). */
TIDE_API tide_status tide_tensor_assign(tide_tensor *var, const tide_tensor *value);
/* Mark t's storage (t must not be inline or empty) as a variable's values.
 * Reads of a variable share its storage; tide's Lua face refuses in-place
 * writes into marked storage except through the variable itself, so a value
 * read earlier never changes. tide_tensor_assign carries the mark over to
 * the fresh storage of a copy-on-write. C writes are not checked. */
TIDE_API tide_status tide_tensor_mark_variable(tide_tensor *t);
/* True when t views storage marked by tide_tensor_mark_variable (now or in
 * the past: an earlier read of a variable stays marked). */
TIDE_API bool tide_tensor_is_variable_data(const tide_tensor *t);
/* References held on t's storage (0 for inline or empty headers); for tests. */
TIDE_API int64_t tide_tensor_storage_refs(const tide_tensor *t);
/* Bytes of t's whole storage (0 for inline or empty headers). */
TIDE_API int64_t tide_tensor_storage_bytes(const tide_tensor *t);

/* ---- owners of wrapped memory, for hosts with a collector -------------- */

/* A tide_free_fn that queues `ctx` (a token) instead of freeing anything, so
 * a host language can drop its own reference to the owner later, by polling. */
TIDE_API void tide_release_token(void *ctx, void *data);
/* The next token queued by tide_release_token, or -1 when none. */
TIDE_API int64_t tide_released_token_pop(void);

#ifdef __cplusplus
}
#endif
#endif
