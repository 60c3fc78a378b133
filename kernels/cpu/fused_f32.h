/* cpu/fused_f32.h — the float32 fused engine's program (a short list of
 * instructions over an accumulator of a few SIMD vectors) and its hot loop,
 * which cpu/fused_f32.c defines once per ISA it is compiled for. */
#ifndef TIDE_CPU_FUSED_F32_H
#define TIDE_CPU_FUSED_F32_H

#include "iter.h"
#include "../core/backend.h"
#include "tide/fused.h"

/* The engine evaluates a whole fused group on one strip of elements at a
 * time: the strip (8 vectors: 128 floats with AVX-512, 64 with AVX, 32
 * with SSE; short ones of 2 vectors for small runs and tails) stays in
 * registers from one op to the next, and only values
 * read again later are saved to small tiles in L1. Bool values are masks
 * (all bits set or none) in float lanes. */
enum {
  F32_STRIP_MAX = 128, /* floats per strip on any ISA: tiles are this long */
  /* operand table: inputs, outputs, constants, saved values, two call tiles */
  F32_MAX_OPS = TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_OUTPUTS + TIDE_FUSED_MAX_CONSTS + TIDE_FUSED_MAX_STEPS + 2
};

/* Instructions. `acc` is the strip in registers; P[i] is entry i of the
 * operand table (inputs, outputs, constant tiles, saved values' tiles, the
 * call tiles), each a pointer to this strip's floats. */
enum {
  F32_END,      /* the strip is done */
  F32_LOAD,     /* acc = P[a] */
  F32_SAVE,     /* P[a] = acc (a tile) */
  F32_OUT,      /* P[a] = acc (an output: past the caches when the run streams) */
  F32_CALL,     /* acc = fn(args): the registry's own loop on tiles (ops without a vector form) */
  /* acc = f(acc) */
  F32_NEG, F32_ABS, F32_SIGN, F32_SQUARE, F32_RELU, F32_RINT, F32_FLOOR, F32_CEIL, F32_SQRT, F32_RSQRT,
  F32_RECIP, F32_EXP, F32_TANH, F32_SIGMOID, F32_LEAKY /* alpha in k */, F32_ISNAN, F32_ISFINITE,
  F32_NOT /* mask */, F32_TO_MASK /* x != 0 */, F32_FROM_MASK /* 1.0 or 0.0 */,
  /* acc = acc op P[a]; R forms: P[a] op acc */
  F32_ADD, F32_SUB, F32_RSUB, F32_MUL, F32_DIV, F32_RDIV, F32_MAX, F32_RMAX, F32_MIN, F32_RMIN,
  F32_FLOORDIV, F32_RFLOORDIV, F32_EQ, F32_NE, F32_LT, F32_LE, F32_GT, F32_GE,
  F32_AND, F32_OR, F32_XOR, F32_EQ_MASK, F32_NE_MASK,
  /* three operands */
  F32_WHERE_C,  /* acc is the condition: acc ? P[a] : P[b] */
  F32_WHERE_X,  /* acc is x: P[a] ? acc : P[b] */
  F32_WHERE_Y,  /* acc is y: P[a] ? P[b] : acc */
  F32_CLIP,     /* acc is x: clip to [P[a], P[b]] */
  F32_NUM_OPS
};

enum { F32_ACC = -1 }; /* a CALL argument that is the accumulator */

typedef struct f32_ins {
  uint8_t op;
  uint8_t nargs;              /* CALL */
  int16_t a, b;
  int16_t args[TIDE_FUSED_MAX_ARGS]; /* CALL: operand indices or F32_ACC */
  float k;                    /* LEAKY: alpha as float, as the scalar loop rounds it */
  uint32_t ctx;               /* CALL: its attrs' offset from the program's start (0: none) */
  tide_loop_fn fn;            /* CALL */
} f32_ins;

/* The compiled program, and where its operand table's parts start:
 * inputs, outputs, constant tiles, the two call tiles, saved values' tiles. */
typedef struct f32_prog {
  int32_t n_ins;
  int32_t n_ops;              /* operand table entries */
  int32_t first_const, call_in, call_out, first_slot, n_slots;
  int32_t n_adv;              /* entries [0, n_adv) advance a strip per strip (inputs and outputs) */
  f32_ins ins[];              /* at most 3 a step (load, op, save), an output each, the end */
} f32_prog;

/* Bytes of a program for a description of n_steps steps and n_outputs outputs. */
static inline size_t f32_prog_bytes(int n_steps, int n_outputs) {
  return sizeof(f32_prog) + (size_t)(3 * n_steps + n_outputs + 1) * sizeof(f32_ins);
}

/* The hot loop: `nstrips` strips of `strip` floats. ptr[i] is operand i's
 * first strip; entries below n_adv advance by adv[i] floats per strip (and
 * are left at the strip after the last).
 * `base` is the program block (CALL attrs live there); `stream` makes
 * F32_OUT store past the caches (its pointers 64-byte aligned). */
typedef void (*tide_fused_f32_fn)(const f32_prog *p, const void *base, float **ptr, const int64_t *adv,
                                  int64_t nstrips, bool stream);

typedef struct tide_fused_f32_kernel {
  const char *isa;            /* what it was compiled for */
  int strip;                  /* floats per strip (<= F32_STRIP_MAX) */
  tide_fused_f32_fn run;
  int short_strip;            /* floats per short strip (a divisor of strip) */
  tide_fused_f32_fn run_short;
} tide_fused_f32_kernel;

/* cpu/fused_f32.c is compiled once per instruction set (cpu/simd.h): the
 * kernel this CPU runs best is tide_simd.fused_f32_kernel(). */


#endif
