/* cpu/binary.c — the CPU loops of the two-input ops of core/elementwise.def
 * (arithmetic, comparisons, logic and tf.bitwise) over broadcast inputs.
 * Integer division by zero and negative integer powers are reported as
 * errors, as TensorFlow does on CPU. The loops are built once per
 * instruction set; the kernel once (see simd.h). */
#include "simd.h"
#include "elementwise.h"
#include "../core/formulas.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <stddef.h>

/* Loops are stamped out for unsigned types too, where `x < 0` is always false. */
#pragma GCC diagnostic ignored "-Wtype-limits"

/* Integer formulas set bits of the ctx's `bad`, its first member. */
_Static_assert(offsetof(tide_binary_ctx, bad) == 0, "tide_binary_ctx: bad comes first");

/* One loop: TI inputs, computed as TC (T in the formula), TO output; EXPR
 * reads x, y and may set bits of *bad. Contiguous and scalar-broadcast rows
 * get plain loops the compiler vectorizes. */
#define BIN_LOOP(NAME, TI, TC, TO, EXPR)                                                \
  static void NAME(int64_t n, char **p, const int64_t *s, void *ctx) {                  \
    typedef TC T;                                                                       \
    int *bad = ctx;                                                                     \
    (void)bad;                                                                          \
    TO *restrict o = (TO *)p[0];                                                        \
    const TI *restrict a = (const TI *)p[1], *restrict b = (const TI *)p[2];            \
    if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == sizeof(TI)) {               \
      for (int64_t i = 0; i < n; i++) { T x = (T)a[i], y = (T)b[i]; o[i] = (TO)(EXPR); } \
    } else if (s[0] == sizeof(TO) && s[1] == sizeof(TI) && s[2] == 0) {                 \
      const T y = (T)b[0];                                                              \
      for (int64_t i = 0; i < n; i++) { T x = (T)a[i]; o[i] = (TO)(EXPR); }             \
    } else if (s[0] == sizeof(TO) && s[1] == 0 && s[2] == sizeof(TI)) {                 \
      const T x = (T)a[0];                                                              \
      for (int64_t i = 0; i < n; i++) { T y = (T)b[i]; o[i] = (TO)(EXPR); }             \
    } else {                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                 \
        T x = (T)(*(const TI *)(p[1] + i * s[1])), y = (T)(*(const TI *)(p[2] + i * s[2])); \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR);                                          \
      }                                                                                 \
    }                                                                                   \
  }

/* Each family's loops, named ID_f32 ... ID_i64 (ID_b for bools). */
#define BIN_FLOAT(ID, F) BIN_LOOP(ID##_f32, float, float, float, F) BIN_LOOP(ID##_f64, double, double, double, F)
#define BIN_INT(ID, I)                                                                    \
  BIN_LOOP(ID##_i8, int8_t, int8_t, int8_t, I) BIN_LOOP(ID##_u8, uint8_t, uint8_t, uint8_t, I) \
  BIN_LOOP(ID##_i32, int32_t, int32_t, int32_t, I) BIN_LOOP(ID##_i64, int64_t, int64_t, int64_t, I)
#define BIN_NUM(ID, F, I) BIN_FLOAT(ID, F) BIN_INT(ID, I)
/* True division: ints compute in the float type they give (TF's truediv). */
#define BIN_TRUEDIV(ID, F)                                                                \
  BIN_FLOAT(ID, F)                                                                        \
  BIN_LOOP(ID##_i8, int8_t, float, float, F) BIN_LOOP(ID##_u8, uint8_t, float, float, F)   \
  BIN_LOOP(ID##_i32, int32_t, double, double, F) BIN_LOOP(ID##_i64, int64_t, double, double, F)
#define BIN_COMPARE(ID, F)                                                                \
  BIN_LOOP(ID##_f32, float, float, uint8_t, F) BIN_LOOP(ID##_f64, double, double, uint8_t, F) \
  BIN_LOOP(ID##_i8, int8_t, int8_t, uint8_t, F) BIN_LOOP(ID##_u8, uint8_t, uint8_t, uint8_t, F) \
  BIN_LOOP(ID##_i32, int32_t, int32_t, uint8_t, F) BIN_LOOP(ID##_i64, int64_t, int64_t, uint8_t, F)
/* Bools: any nonzero byte is true (C's bool conversion). */
#define BIN_LOGIC(ID, F) BIN_LOOP(ID##_b, uint8_t, bool, uint8_t, F)
#define BIN_EQUALITY(ID, F) BIN_COMPARE(ID, F) BIN_LOGIC(ID, F)
#define TIDE_BINARY(ID, FAMILY, ...) BIN_##FAMILY(ID, __VA_ARGS__)
#include "../core/elementwise.def"

/* Each family's pick for input dtype dt (halves and any other dtype get the float32 loop). */
#define PICK_NUM(ID) TIDE_RETURN_NUM_LOOP(ID, dt)
#define PICK_FLOAT(ID) return dt == TIDE_FLOAT64 ? ID##_f64 : ID##_f32;
#define PICK_INT(ID) TIDE_RETURN_INT_LOOP(ID, dt)
#define PICK_TRUEDIV PICK_NUM
#define PICK_COMPARE PICK_NUM
#define PICK_LOGIC(ID) return ID##_b;
#define PICK_EQUALITY(ID) \
  if (dt == TIDE_BOOL) return ID##_b; \
  PICK_NUM(ID)

tide_loop_fn TIDE_SIMD(binary_loop)(int op, int dt) {
  switch (op) {
#define TIDE_BINARY(ID, FAMILY, ...) case TIDE_OP_##ID: PICK_##FAMILY(ID)
#include "../core/elementwise.def"
  default: return NULL;
  }
}

#ifdef TIDE_SIMD_ONCE /* ---- the kernel, in the baseline build only ---------------------------------- */

tide_loop_fn tide_binary_loop(int op, int dt) { return tide_simd.binary_loop(op, dt); }

/* elementwise.def and ops.def agree, or this file does not compile (as in unary.c). */
enum {
#define TIDE_BINARY(ID, ...) binary_formula_of_##ID,
#include "../core/elementwise.def"
  n_binary_formulas
};
enum {
#define TIDE_OP(ID, name, n_in, n_out, dts, out, infer, cpu, ...) \
  kernel_of_##ID##_is_binary = TIDE_IS_BINARY_KERNEL(cpu),
#include "tide/ops.def"
#undef TIDE_OP
  n_binary_kernel_ops = 0
#define TIDE_OP(ID, name, n_in, n_out, dts, out, infer, cpu, ...) +TIDE_IS_BINARY_KERNEL(cpu)
#include "tide/ops.def"
#undef TIDE_OP
};
#define TIDE_BINARY(ID, ...) \
  _Static_assert(kernel_of_##ID##_is_binary, "elementwise.def: " #ID "'s CPU kernel in ops.def is not tide_cpu_binary");
#include "../core/elementwise.def"
_Static_assert((int)n_binary_formulas == (int)n_binary_kernel_ops,
               "core/elementwise.def needs one TIDE_BINARY row per tide_cpu_binary op of ops.def");

/* Whether the flat loop can walk t as an operand of an n-element contiguous
 * output, and its byte stride *s: one element broadcasts (stride 0); n
 * contiguous elements (then t has the output's shape) walk along. */
static inline bool flat_operand(const tide_tensor *t, int64_t n, int64_t *s) {
  if (t->nelem == 1) {
    *s = 0;
    return true;
  }
  *s = (int64_t)tide_dtype_size_unchecked(t->dt);
  return t->nelem == n && tide_tensor_is_contiguous(t);
}

tide_status tide_cpu_binary(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_loop_fn loop = in[0]->dt == TIDE_STRING ? tide_string_compare_loop(def->id) : tide_binary_loop(def->id, in[0]->dt);
  if (!loop) return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no CPU loop", def->name);
  tide_binary_ctx ctx = {0};
  tide_tensor *o = out[0];
  const tide_tensor *a = in[0], *b = in[1];
  int64_t s[3] = {(int64_t)tide_dtype_size_unchecked(o->dt), 0, 0};
  tide_status st;
  if (!tide_is_half(a->dt) && flat_operand(a, o->nelem, &s[1]) && flat_operand(b, o->nelem, &s[2])) {
    /* Same-shape contiguous inputs, or scalars: one flat row, no iterator set-up. */
    char *p[3] = {o->data, a->data, b->data};
    st = tide_run_flat(loop, 3, p, s, o->nelem, TIDE_GRAIN_CHEAP, &ctx);
  } else {
    tide_iter it;
    st = tide_iter_build(&it, def->name, o, 2, in);
    if (st) return st;
    if (def->id == TIDE_OP_ATAN2 || def->id == TIDE_OP_XLOGY || def->id == TIDE_OP_XLOG1PY)
      it.grain = TIDE_GRAIN_COSTLY; /* transcendental work pays for threads sooner */
    st = tide_iter_run(&it, loop, &ctx);
  }
  return st ? st : tide_binary_check(def->name, ctx.bad);
}

tide_status tide_binary_check(const char *op, int bad) {
  if (bad & TIDE_BAD_DIV_ZERO) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integer division by zero", op);
  if (bad & TIDE_BAD_NEG_POW)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integers to negative integer powers are not allowed (cast to float)", op);
  return TIDE_OK;
}

#endif /* TIDE_SIMD_ONCE */
