/* cpu/elementwise.h — the typed inner loops of the elementwise families
 * (unary.c, binary.c, ternary.c, cast.c), for callers that run them on their
 * own blocks (graph/fuse.c). Halves use the float32 loops on float32 data. */
#ifndef TIDE_CPU_ELEMENTWISE_H
#define TIDE_CPU_ELEMENTWISE_H

#include "iter.h"

/* `return NAME##_i8` ... `NAME##_i64`: the typed loop of an integer-only op
 * (tf.bitwise) for dtype dt, or NULL for any other dtype. */
#define TIDE_RETURN_INT_LOOP(NAME, dt) \
  switch (dt) {                         \
  case TIDE_INT8: return NAME##_i8;     \
  case TIDE_UINT8: return NAME##_u8;    \
  case TIDE_INT32: return NAME##_i32;   \
  case TIDE_INT64: return NAME##_i64;   \
  default: return NULL;                 \
  }

/* 1 when an ops.def row's CPU kernel column `cpu` is tide_cpu_unary (or
 * tide_cpu_binary), else 0, as a constant expression: how unary.c and
 * binary.c check at build time that core/elementwise.def has their ops' rows. */
#define TIDE_IS_UNARY_KERNEL(cpu) TIDE_EW_IS(TIDE_EW_PROBE_##cpu##_unary)
#define TIDE_IS_BINARY_KERNEL(cpu) TIDE_EW_IS(TIDE_EW_PROBE_##cpu##_binary)
#define TIDE_EW_PROBE_tide_cpu_unary_unary ~, 1
#define TIDE_EW_PROBE_tide_cpu_binary_binary ~, 1
#define TIDE_EW_IS(...) TIDE_EW_SECOND(__VA_ARGS__, 0, ~)
#define TIDE_EW_SECOND(a, b, ...) b

/* The loop of unary op `op` on compute dtype dt, or NULL; ctx is the op's tide_attrs. */
tide_loop_fn tide_unary_loop(int op, int dt);

/* Integer errors a binary loop reports through its ctx: core/formulas.h's
 * TIDE_BAD_* bits, set atomically by any thread. `bad` comes first: the
 * loops hand the ctx to the formulas as an int *. */
typedef struct tide_binary_ctx {
  int bad;
} tide_binary_ctx;
/* The loop of binary op `op` on input compute dtype dt, or NULL; ctx is a tide_binary_ctx. */
tide_loop_fn tide_binary_loop(int op, int dt);
/* The byte-wise equal / not_equal loop of string operands (cpu/string_compare.c); NULL for other ops. */
tide_loop_fn tide_string_compare_loop(int op);
/* The error for the bits a binary loop set (TIDE_OK when none), naming op. */
tide_status tide_binary_check(const char *op, int bad);

/* where's select of elements of `size` bytes (operands: out, cond, x, y); ctx unused. */
tide_loop_fn tide_where_loop(size_t size);
/* clip_by_value's loop on compute dtype dt (operands: out, x, lo, hi); ctx unused. */
tide_loop_fn tide_clip_loop(int dt);
/* The cast loop between compute dtypes of from and to (a copy when they
 * agree), or NULL; ctx unused. */
tide_loop_fn tide_cast_loop(int from, int to);

#endif
