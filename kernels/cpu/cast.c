/* cpu/cast.c — dtype conversion between every pair of dtypes (float to int
 * truncates toward zero and saturates, NaN becomes 0; anything to bool is
 * x != 0; a bool's nonzero byte is 1), the copy op, and tide_tensor_copy_into
 * (how `x[i] = v` writes). The loops are built once per instruction set; the
 * rest once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "../core/registry.h"

#include <math.h>
#include <string.h>

#define CAST_LOOP(NAME, TI, TO, CONV)                                                     \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {                    \
    (void)ctx;                                                                            \
    if (s[0] == sizeof(TO) && s[1] == sizeof(TI)) {                                       \
      TO *restrict o = (TO *)p[0];                                                        \
      const TI *restrict a = (const TI *)p[1];                                            \
      for (int64_t i = 0; i < n; i++) { TI x = a[i]; o[i] = CONV; }                       \
    } else {                                                                              \
      for (int64_t i = 0; i < n; i++) {                                                   \
        TI x = *(const TI *)(p[1] + i * s[1]);                                            \
        *(TO *)(p[0] + i * s[0]) = CONV;                                                  \
      }                                                                                   \
    }                                                                                     \
  }

/* From each source type (halves arrive as float32) to each target type. V is
 * the value read: x, or for bool (x != 0), since any nonzero byte is true
 * (wrapped memory may hold other bytes than 1: tide_tensor_wrap). */
#define CASTS_FROM(SUF, TI, TO_FLOATS, V)                                                 \
  CAST_LOOP(cast_##SUF##_f32, TI, float, (float)(V))                                      \
  CAST_LOOP(cast_##SUF##_f64, TI, double, (double)(V))                                    \
  CAST_LOOP(cast_##SUF##_i8, TI, int8_t, TO_FLOATS ? tide_sat_i8(V) : (int8_t)(V))        \
  CAST_LOOP(cast_##SUF##_u8, TI, uint8_t, TO_FLOATS ? tide_sat_u8(V) : (uint8_t)(V))      \
  CAST_LOOP(cast_##SUF##_i32, TI, int32_t, TO_FLOATS ? tide_sat_i32(V) : (int32_t)(V))    \
  CAST_LOOP(cast_##SUF##_i64, TI, int64_t, TO_FLOATS ? tide_sat_i64(V) : (int64_t)(V))    \
  CAST_LOOP(cast_##SUF##_b, TI, uint8_t, (uint8_t)(x != 0))

CASTS_FROM(f32, float, 1, x)
CASTS_FROM(f64, double, 1, x)
CASTS_FROM(i8, int8_t, 0, x)
CASTS_FROM(u8, uint8_t, 0, x)
CASTS_FROM(i32, int32_t, 0, x)
CASTS_FROM(i64, int64_t, 0, x)
CASTS_FROM(b, uint8_t, 0, x != 0)

#define ROW(SUF)                                                                          \
  { [TIDE_FLOAT32] = cast_##SUF##_f32, [TIDE_FLOAT64] = cast_##SUF##_f64,                 \
    [TIDE_INT8] = cast_##SUF##_i8, [TIDE_UINT8] = cast_##SUF##_u8,                        \
    [TIDE_INT32] = cast_##SUF##_i32, [TIDE_INT64] = cast_##SUF##_i64,                     \
    [TIDE_BOOL] = cast_##SUF##_b }

static const tide_loop_fn cast_table[TIDE_NUM_DTYPES][TIDE_NUM_DTYPES] = {
  [TIDE_FLOAT32] = ROW(f32), [TIDE_FLOAT64] = ROW(f64), [TIDE_INT8] = ROW(i8),
  [TIDE_UINT8] = ROW(u8),    [TIDE_INT32] = ROW(i32),   [TIDE_INT64] = ROW(i64),
  [TIDE_BOOL] = ROW(b),
};

tide_loop_fn TIDE_SIMD(cast_loop)(int from, int to) { return cast_table[from][to]; }

#ifdef TIDE_SIMD_ONCE /* ---- the kernels, in the baseline build only --------------------------------- */

/* Halves travel as float32 through the engine's conversion blocks. */
static int compute_type(int dt) { return tide_is_half(dt) ? TIDE_FLOAT32 : dt; }

tide_loop_fn tide_cast_loop(int from, int to) {
  from = compute_type(from), to = compute_type(to);
  if (from == to) return tide_copy_loop(tide_dtype_size_unchecked(from));
  return tide_simd.cast_loop(from, to);
}

tide_status tide_cpu_cast(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  if (in[0]->dt == out[0]->dt) return tide_copy_strided(def->name, out[0], in[0]);
  tide_loop_fn loop = tide_simd.cast_loop(compute_type(in[0]->dt), compute_type(out[0]->dt));
  if (!loop) return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no loop from %s to %s", def->name,
                              tide_dtype_name(in[0]->dt), tide_dtype_name(out[0]->dt));
  tide_iter it;
  tide_status st = tide_iter_build(&it, def->name, out[0], 1, in);
  if (st) return st;
  return tide_iter_run(&it, loop, NULL);
}

tide_status tide_cpu_copy(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return tide_copy_strided(def->name, out[0], in[0]);
}

/* True when the byte ranges two tensors can touch overlap. */
static bool may_overlap(const tide_tensor *a, const tide_tensor *b) {
  if (a->storage && a->storage == b->storage) return true;
  return a->data == b->data && a->nelem > 0;
}

tide_status tide_tensor_copy_into(tide_tensor *dst, const tide_tensor *src) {
  if (!dst || !src) return TIDE_FAIL(TIDE_ERR_VALUE, "copy_into: NULL tensor");
  if (TIDE_UNLIKELY((dst->dev | src->dev) != TIDE_CPU)) /* the strided loops below read host memory */
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "copy_into: in-place writes into or from a GPU tensor are not supported "
                     "yet (move it with :cpu())");
  if ((dst->flags | src->flags) & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_VALUE, "copy_into: cannot write into or from a symbolic tensor of a traced function "
                                     "(in a trace, build new values: tide.slice_update, tide.where)");
  if (dst->dt != src->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "copy_into: dtype mismatch: destination is %s but value is %s (use :cast)",
                     tide_dtype_name(dst->dt), tide_dtype_name(src->dt));
  /* A broadcast destination would take several values in one element, from
   * several threads at once for a large copy. */
  for (int d = 0; d < dst->ndim; d++)
    if (dst->strides[d] == 0 && dst->dims[d] > 1) {
      char sd[128];
      return TIDE_FAIL(TIDE_ERR_VALUE,
                       "copy_into: the destination has shape %s but dimension %d repeats its elements (stride 0, a "
                       "broadcast view); write into a tensor of its own", TIDE_SHAPE_STR(sd, dst), d);
    }
  if (dst->dt == TIDE_STRING) return tide_strings_copy_into(dst, src); /* counts references */
  if (!may_overlap(dst, src)) return tide_copy_strided("copy_into", dst, src);
  /* Source and destination share memory: go through a temporary. */
  tide_tensor tmp;
  memset(&tmp, 0, sizeof tmp);
  tide_status st = tide_tensor_init(&tmp, src->dt, src->ndim, src->dims);
  if (!st) st = tide_copy_strided("copy_into", &tmp, src);
  if (!st) st = tide_copy_strided("copy_into", dst, &tmp);
  tide_tensor_release(&tmp);
  return st;
}

tide_status tide_tensor_assign(tide_tensor *var, const tide_tensor *value) {
  if (!var || !value) return TIDE_FAIL(TIDE_ERR_VALUE, "assign: NULL tensor");
  if (TIDE_UNLIKELY((var->dev | value->dev) != TIDE_CPU))
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "assign: variables on a GPU are not supported yet (move the value with :cpu())");
  if ((var->flags | value->flags) & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_VALUE, "assign: a symbolic tensor cannot be assigned eagerly");
  char sv[128], sx[128];
  if (var->dt != value->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "assign: the variable is %s but the value is %s (use :cast)",
                     tide_dtype_name(var->dt), tide_dtype_name(value->dt));
  bool same = var->ndim == value->ndim;
  for (int i = 0; same && i < var->ndim; i++) same = var->dims[i] == value->dims[i];
  if (!same)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "assign: the variable has shape %s but the value has shape %s",
                     TIDE_SHAPE_STR(sv, var), TIDE_SHAPE_STR(sx, value));
  if (var->storage && tide_tensor_storage_refs(var) > 1) {
    /* Someone still reads the old values: move to a storage of our own. */
    tide_tensor fresh;
    memset(&fresh, 0, sizeof fresh);
    tide_status st = tide_tensor_init_heap(&fresh, var->dt, var->ndim, var->dims);
    if (!st) st = var->dt == TIDE_STRING ? tide_strings_copy_into(&fresh, value) : tide_copy_strided("assign", &fresh, value);
    if (st) {
      tide_tensor_release(&fresh);
      return st;
    }
    if (tide_tensor_is_variable_data(var)) fresh.storage->flags |= TIDE_STORAGE_VARIABLE;
    tide_tensor_release(var);
    memcpy(var, &fresh, sizeof fresh); /* heap data: the header moves freely */
    return TIDE_OK;
  }
  return tide_tensor_copy_into(var, value);
}

#endif /* TIDE_SIMD_ONCE */
