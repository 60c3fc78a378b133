/* cpu/ternary.c — elementwise ops of three broadcast inputs: where (a byte
 * select, any dtype) and clip_by_value (numeric). The loops are built once
 * per instruction set; the kernels once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "../core/registry.h"

/* Contiguous rows get a plain select the compiler vectorizes. */
#define WHERE_LOOP(NAME, T)                                                               \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {                    \
    (void)ctx;                                                                            \
    if (s[0] == sizeof(T) && s[1] == 1 && s[2] == sizeof(T) && s[3] == sizeof(T)) {       \
      T *restrict o = (T *)p[0];                                                          \
      const uint8_t *restrict c = (const uint8_t *)p[1];                                  \
      const T *restrict x = (const T *)p[2], *restrict y = (const T *)p[3];               \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                          \
      return;                                                                             \
    }                                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                     \
      const T *src = *(const uint8_t *)(p[1] + i * s[1]) ? (const T *)(p[2] + i * s[2])   \
                                                         : (const T *)(p[3] + i * s[3]);  \
      *(T *)(p[0] + i * s[0]) = *src;                                                     \
    }                                                                                     \
  }
WHERE_LOOP(where1, uint8_t)
WHERE_LOOP(where2, uint16_t)
WHERE_LOOP(where4, uint32_t)
WHERE_LOOP(where8, uint64_t)

tide_loop_fn TIDE_SIMD(where_loop)(size_t size) {
  switch (size) {
  case 1: return where1;
  case 2: return where2;
  case 4: return where4;
  default: return where8;
  }
}

/* x below lo gives lo, above hi gives hi (TF leaves lo > hi undefined); NaN in x stays NaN. */
#define CLIP_LOOP(NAME, T)                                                                \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {                    \
    (void)ctx;                                                                            \
    if (s[0] == sizeof(T) && s[1] == sizeof(T) && s[2] == 0 && s[3] == 0) {               \
      /* scalar bounds on a contiguous row, the usual call: vectorizes */                 \
      T *restrict o = (T *)p[0];                                                          \
      const T *restrict a = (const T *)p[1];                                              \
      const T lo = *(const T *)p[2], hi = *(const T *)p[3];                               \
      for (int64_t i = 0; i < n; i++) {                                                   \
        T x = a[i];                                                                       \
        o[i] = x < lo ? lo : (x > hi ? hi : x);                                           \
      }                                                                                   \
      return;                                                                             \
    }                                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                     \
      T x = *(const T *)(p[1] + i * s[1]);                                                \
      T lo = *(const T *)(p[2] + i * s[2]), hi = *(const T *)(p[3] + i * s[3]);           \
      *(T *)(p[0] + i * s[0]) = x < lo ? lo : (x > hi ? hi : x);                          \
    }                                                                                     \
  }
CLIP_LOOP(clip_f32, float)
CLIP_LOOP(clip_f64, double)
CLIP_LOOP(clip_i8, int8_t)
CLIP_LOOP(clip_u8, uint8_t)
CLIP_LOOP(clip_i32, int32_t)
CLIP_LOOP(clip_i64, int64_t)

tide_loop_fn TIDE_SIMD(clip_loop)(int dt) {
  switch (dt) {
  case TIDE_FLOAT64: return clip_f64;
  case TIDE_INT8: return clip_i8;
  case TIDE_UINT8: return clip_u8;
  case TIDE_INT32: return clip_i32;
  case TIDE_INT64: return clip_i64;
  default: return clip_f32; /* float32 and halves */
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernels, in the baseline build only --------------------------------- */

tide_loop_fn tide_where_loop(size_t size) { return tide_simd.where_loop(size); }
tide_loop_fn tide_clip_loop(int dt) { return tide_simd.clip_loop(dt); }

tide_status tide_cpu_where(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_iter it;
  tide_status st = tide_iter_build(&it, def->name, out[0], 3, in);
  if (st) return st;
  it.convert_halves = false; /* a select moves bytes */
  return tide_iter_run(&it, tide_simd.where_loop(tide_dtype_size_unchecked(out[0]->dt)), NULL);
}

tide_status tide_cpu_clip(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_iter it;
  tide_status st = tide_iter_build(&it, def->name, out[0], 3, in);
  if (st) return st;
  return tide_iter_run(&it, tide_simd.clip_loop(in[0]->dt), NULL);
}

#endif /* TIDE_SIMD_ONCE */
