/* cpu/cast.c — dtype conversion between every pair of dtypes (float to int
 * truncates toward zero and saturates, NaN becomes 0; anything to bool is
 * x != 0; a bool's nonzero byte is 1) and the copy op (which core's
 * tide_tensor_copy_into runs). The loops are built once per instruction set;
 * the rest once (see simd.h). */
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

#endif /* TIDE_SIMD_ONCE */
