/* cpu/iter.h — the strided elementwise engine: broadcasts operands to the
 * output's shape, merges dims, splits rows across the pool, and runs a typed
 * inner loop per row; float16/bfloat16 operands go through float32 blocks. */
#ifndef TIDE_CPU_ITER_H
#define TIDE_CPU_ITER_H

#include "../core/internal.h"

enum { TIDE_ITER_MAX_DIMS = 2 * TIDE_MAX_DIMS, TIDE_ITER_MAX_OPS = 4 };

/* An inner loop over n elements: p[k] is operand k's first element and s[k]
 * its stride in bytes (0 = broadcast). Operand 0 is the output. */
typedef void (*tide_loop_fn)(int64_t n, char **p, const int64_t *s, void *ctx);

typedef struct tide_iter {
  int ndim, nops;
  int64_t dims[TIDE_ITER_MAX_DIMS];
  int64_t strides[TIDE_ITER_MAX_OPS][TIDE_ITER_MAX_DIMS]; /* bytes */
  char *data[TIDE_ITER_MAX_OPS];
  int dtypes[TIDE_ITER_MAX_OPS];
  bool convert_halves;   /* run half operands through float32 (default true) */
  int64_t grain;         /* elements per thread at least (default cheap) */
} tide_iter;

/* Operand 0 is `out`, whose shape is the iteration space; inputs broadcast to
 * it (error names `op` if one cannot). */
tide_status tide_iter_build(tide_iter *it, const char *op, tide_tensor *out, int n_in,
                            const tide_tensor *const *in);
/* Start an iterator over a raw shape; add operands with tide_iter_add_raw. */
void tide_iter_init_raw(tide_iter *it, int ndim, const int64_t *dims);
/* Add an operand: base pointer, dtype and per-dim strides in elements. */
void tide_iter_add_raw(tide_iter *it, void *data, int dtype, const int64_t *elem_strides);
/* Run `loop` over every element, in parallel when large. */
tide_status tide_iter_run(tide_iter *it, tide_loop_fn loop, void *ctx);
/* Run `loop` over n elements of one flat row (nops operands at p with byte
 * strides s, as an inner loop gets them), split across the pool when n
 * reaches `grain`: the path for contiguous operands, with no iterator. */
tide_status tide_run_flat(tide_loop_fn loop, int nops, char **p, const int64_t *s, int64_t n, int64_t grain,
                          void *ctx);

/* `return NAME##_f32` ... `NAME##_i64`: the typed loop of a numeric op for
 * compute dtype dt (halves run the float32 loop through conversion blocks). */
#define TIDE_RETURN_NUM_LOOP(NAME, dt)   \
  switch (dt) {                           \
  case TIDE_FLOAT64: return NAME##_f64;   \
  case TIDE_INT8: return NAME##_i8;       \
  case TIDE_UINT8: return NAME##_u8;      \
  case TIDE_INT32: return NAME##_i32;     \
  case TIDE_INT64: return NAME##_i64;     \
  default: return NAME##_f32;             \
  }

/* Convert n elements between a half type and float32 (strides in bytes). */
void tide_halves_to_float(int dtype, int64_t n, const char *src, int64_t stride, float *dst);
void tide_float_to_halves(int dtype, int64_t n, const float *src, char *dst, int64_t stride);
static inline bool tide_is_half(int dt) { return dt == TIDE_FLOAT16 || dt == TIDE_BFLOAT16; }

/* The inner loop that copies elements of `size` bytes (operand 1 into 0). */
tide_loop_fn tide_copy_loop(size_t size);
/* Copy src into dst elementwise (same dtype, src broadcast to dst's shape). */
tide_status tide_copy_strided(const char *op, tide_tensor *dst, const tide_tensor *src);

#endif
