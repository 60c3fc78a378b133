/* cpu/fused.c — the CPU backend of fused nodes: prepares a description
 * (core/fused.h) as a float32 register program (cpu/fused_f32.c) or, for
 * other dtypes, as the registry's typed loops over L1 blocks, and runs it. */
#include "fused_f32.h"
#include "elementwise.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

enum {
  ENGINE_GENERIC = 0,
  ENGINE_F32 = 1,
  N_REGS = TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_CONSTS + TIDE_FUSED_MAX_STEPS,
  TILE_BYTES = 4 * F32_STRIP_MAX, /* a constant's tile (its first 8 bytes: the generic engine's value) */
  /* Elements per block of the generic engine: its blocks stay in L1
   * (float32: 4 KiB each). Measured on a 10-op chain over 10M float32:
   * 1024 beat 512, 2048 and 4096 by 15-50%. */
  GEN_BLOCK = 1024,
  /* Elements per block of the float32 engine (gathered inputs and bool
   * outputs take a buffer of this many floats; the rest streams). */
  F32_BLOCK = 2048,
  STACK_BYTES = 16384   /* scratch a run takes from the stack before the heap */
};

/* Outputs this large are written with streaming stores (past the caches,
 * without reading the lines first): they would not stay cached anyway, and
 * the saved read is a third of a one-input chain's memory traffic (the
 * chain bench ran 10-30% faster). Results that leave the graph stream from
 * a smaller size: the caller reads them later if at all, and from Lua they
 * land in blocks the collector has not handed back yet, cold ones (a 1M
 * float32 chain whose results rotate through 16 blocks: 572 us regular,
 * 355 us streamed; warm, one block: within 10% either way). */
#define STREAM_BYTES ((int64_t)16 << 20)
#define STREAM_BYTES_LEAVING ((int64_t)4 << 20)

/* Whether outputs of `bytes` (together) are written past the caches. */
static bool streams(int64_t bytes, unsigned hints) {
  return bytes >= ((hints & TIDE_FUSED_RESULTS_LEAVE) ? STREAM_BYTES_LEAVING : STREAM_BYTES);
}

/* How a generic step's loop reads its ctx. */
enum { CTX_NONE = 0, CTX_ATTRS, CTX_BINARY };

typedef struct gen_step {
  tide_loop_fn fn;
  int32_t ctx;              /* CTX_* */
} gen_step;

/* A prepared description. Offsets are from the program's start. */
typedef struct cpu_prog {
  int32_t engine;           /* ENGINE_* */
  int32_t costly;           /* transcendental or integer-division work: threads pay sooner */
  int32_t attrs_off;        /* tide_attrs of each step */
  int32_t consts_off;       /* each constant's tile */
  int32_t f32_off;          /* the float32 program (ENGINE_F32) */
  /* ENGINE_GENERIC: registers are inputs, constants, then steps' results */
  int32_t n_slots;          /* scratch blocks */
  int32_t slot[N_REGS];     /* scratch block of each register (inputs: when gathered) */
  int32_t dt[N_REGS];       /* dtype of each register (halves are held as float32) */
  int32_t out_of[TIDE_FUSED_MAX_STEPS]; /* the output a step is, or -1 */
  gen_step step[TIDE_FUSED_MAX_STEPS];
} cpu_prog;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The dtype a value of dt computes in (halves: float32), and its size. */
static int compute_dt(int dt) { return tide_is_half(dt) ? TIDE_FLOAT32 : dt; }
static int64_t compute_size(int dt) { return (int64_t)tide_dtype_size(compute_dt(dt)); }

static const tide_attrs *step_attrs(const cpu_prog *cp, int t) {
  return (const tide_attrs *)((const char *)cp + cp->attrs_off) + t;
}
static const char *const_tile(const cpu_prog *cp, int c) { return (const char *)cp + cp->consts_off + c * TILE_BYTES; }
static const f32_prog *f32_of(const cpu_prog *cp) { return (const f32_prog *)((const char *)cp + cp->f32_off); }

/* Ops a few cycles an element (not transcendental, no integer division). */
static bool cheap_op(int op) {
  switch (op) {
  case TIDE_OP_NEG: case TIDE_OP_ABS: case TIDE_OP_SIGN: case TIDE_OP_SQUARE: case TIDE_OP_RELU:
  case TIDE_OP_ADD: case TIDE_OP_SUB: case TIDE_OP_MUL: case TIDE_OP_DIV: case TIDE_OP_MAXIMUM:
  case TIDE_OP_MINIMUM: case TIDE_OP_CAST: case TIDE_OP_COPY: case TIDE_OP_WHERE: case TIDE_OP_CLIP:
    return true;
  default:
    return tide_op_defs[op].out_rule == TIDE_OUT_BOOL; /* comparisons and logic */
  }
}

/* ---- the float32 engine's compiler --------------------------------------------------- */

/* How a step runs in the float32 engine. */
enum { K_NONE, K_NOP, K_UNARY, K_BINARY, K_WHERE, K_CLIP, K_CALL };

/* The step's kind there and its opcode (K_NONE: the engine cannot run it). */
static int f32_form(const tide_fused_step *s, int *opcode) {
  const bool f = s->arg_dt == TIDE_FLOAT32, b = s->arg_dt == TIDE_BOOL;
  const bool to_f = s->dt == TIDE_FLOAT32, to_b = s->dt == TIDE_BOOL;
  *opcode = 0;
#define UN(OP, CODE) case TIDE_OP_##OP: *opcode = F32_##CODE; return f && to_f ? K_UNARY : K_NONE;
#define BIN(OP, CODE) case TIDE_OP_##OP: *opcode = F32_##CODE; return f && to_f ? K_BINARY : K_NONE;
#define CMP(OP, CODE) case TIDE_OP_##OP: *opcode = F32_##CODE; return f && to_b ? K_BINARY : K_NONE;
  switch (s->op) {
  UN(NEG, NEG) UN(ABS, ABS) UN(SIGN, SIGN) UN(SQUARE, SQUARE) UN(RELU, RELU) UN(ROUND, RINT)
  UN(FLOOR, FLOOR) UN(CEIL, CEIL) UN(SQRT, SQRT) UN(RSQRT, RSQRT) UN(RECIPROCAL, RECIP) UN(EXP, EXP)
  UN(TANH, TANH) UN(SIGMOID, SIGMOID) UN(LEAKY_RELU, LEAKY)
  BIN(ADD, ADD) BIN(SUB, SUB) BIN(MUL, MUL) BIN(DIV, DIV) BIN(MAXIMUM, MAX) BIN(MINIMUM, MIN)
  BIN(FLOORDIV, FLOORDIV)
  CMP(LESS, LT) CMP(LESS_EQUAL, LE) CMP(GREATER, GT) CMP(GREATER_EQUAL, GE)
  case TIDE_OP_ISNAN: *opcode = F32_ISNAN; return f && to_b ? K_UNARY : K_NONE;
  case TIDE_OP_ISFINITE: *opcode = F32_ISFINITE; return f && to_b ? K_UNARY : K_NONE;
  case TIDE_OP_LOGICAL_NOT: *opcode = F32_NOT; return b && to_b ? K_UNARY : K_NONE;
  case TIDE_OP_EQUAL: *opcode = f ? F32_EQ : F32_EQ_MASK; return (f || b) && to_b ? K_BINARY : K_NONE;
  case TIDE_OP_NOT_EQUAL: *opcode = f ? F32_NE : F32_NE_MASK; return (f || b) && to_b ? K_BINARY : K_NONE;
  case TIDE_OP_LOGICAL_AND: *opcode = F32_AND; return b && to_b ? K_BINARY : K_NONE;
  case TIDE_OP_LOGICAL_OR: *opcode = F32_OR; return b && to_b ? K_BINARY : K_NONE;
  case TIDE_OP_LOGICAL_XOR: *opcode = F32_XOR; return b && to_b ? K_BINARY : K_NONE;
  case TIDE_OP_COPY: return (f && to_f) || (b && to_b) ? K_NOP : K_NONE;
  case TIDE_OP_CAST:
    if ((f && to_f) || (b && to_b)) return K_NOP;
    *opcode = f && to_b ? F32_TO_MASK : F32_FROM_MASK;
    return (f && to_b) || (b && to_f) ? K_UNARY : K_NONE;
  case TIDE_OP_WHERE: return (f && to_f) || (b && to_b) ? K_WHERE : K_NONE;
  case TIDE_OP_CLIP: *opcode = F32_CLIP; return f && to_f ? K_CLIP : K_NONE;
  default: break;
  }
#undef UN
#undef BIN
#undef CMP
  /* Other float32 ops run the registry's own loop on tiles. */
  if (!f || !to_f) return K_NONE;
  const tide_op_def *def = &tide_op_defs[s->op];
  if (def->cpu == tide_cpu_unary && tide_unary_loop(s->op, TIDE_FLOAT32)) return K_CALL;
  if (def->cpu == tide_cpu_binary && tide_binary_loop(s->op, TIDE_FLOAT32)) return K_CALL;
  return K_NONE;
}

/* The opcode with its two operands swapped (P[a] op acc), or -1. */
static int reversed(int opcode) {
  switch (opcode) {
  case F32_ADD: case F32_MUL: case F32_EQ: case F32_NE: case F32_AND: case F32_OR: case F32_XOR:
  case F32_EQ_MASK: case F32_NE_MASK: return opcode;
  case F32_SUB: return F32_RSUB;
  case F32_DIV: return F32_RDIV;
  case F32_MAX: return F32_RMAX;
  case F32_MIN: return F32_RMIN;
  case F32_FLOORDIV: return F32_RFLOORDIV;
  case F32_LT: return F32_GT;
  case F32_LE: return F32_GE;
  case F32_GT: return F32_LT;
  case F32_GE: return F32_LE;
  default: return -1;
  }
}

/* Whether operand j of a step of kind k can be the accumulator. */
static bool acc_ok(int k, int opcode, int j) {
  switch (k) {
  case K_BINARY: return j == 0 || reversed(opcode) >= 0;
  case K_WHERE: case K_CALL: return true;
  default: return j == 0;
  }
}

/* The operand of step u that the accumulator (holding step u - 1) serves, or -1. */
static int acc_pos(const tide_fused *f, int u) {
  if (u == 0) return -1;
  const tide_fused_step *s = &f->steps[u];
  int op, k = f32_form(s, &op);
  for (int j = 0; j < s->n_args; j++)
    if (s->args[j].src == TIDE_FUSED_STEP && s->args[j].index == u - 1 && acc_ok(k, op, j)) return j;
  return -1;
}

bool tide_fused_f32_runs(const tide_fused *f); /* for tests: whether the float32 engine takes f */
bool tide_fused_f32_runs(const tide_fused *f) {
  for (int k = 0; k < f->n_inputs; k++)
    if (f->input_dt[k] != TIDE_FLOAT32 && f->input_dt[k] != TIDE_BOOL) return false;
  for (int c = 0; c < f->n_consts; c++)
    if (f->consts[c].dt != TIDE_FLOAT32 && f->consts[c].dt != TIDE_BOOL) return false;
  for (int t = 0; t < f->n_steps; t++) {
    int op;
    if (f32_form(&f->steps[t], &op) == K_NONE) return false;
  }
  return true;
}

typedef struct f32_compiler {
  const tide_fused *f;
  f32_prog *p;
  int loc[TIDE_FUSED_MAX_STEPS];       /* operand where a step's value can be read, or -1 */
  int slot_of[TIDE_FUSED_MAX_STEPS];   /* its saved tile, or -1 */
  bool busy[TIDE_FUSED_MAX_STEPS];     /* tiles in use */
} f32_compiler;

static f32_ins *emit(f32_compiler *c, int op) {
  f32_ins *in = &c->p->ins[c->p->n_ins++];
  memset(in, 0, sizeof *in);
  in->op = (uint8_t)op;
  return in;
}

/* The operand index of a step's argument (never the accumulator). */
static int operand(const f32_compiler *c, tide_fused_arg a) {
  switch (a.src) {
  case TIDE_FUSED_INPUT: return a.index;
  case TIDE_FUSED_CONST: return c->p->first_const + a.index;
  default: return c->loc[a.index];
  }
}

static tide_status f32_compile(const tide_fused *f, cpu_prog *cp, f32_prog *p) {
  f32_compiler c = {.f = f, .p = p};
  p->n_ins = 0;
  p->first_const = f->n_inputs + f->n_outputs;
  p->call_in = p->first_const + f->n_consts;
  p->call_out = p->call_in + 1;
  p->first_slot = p->call_out + 1;
  p->n_slots = 0;
  p->n_adv = f->n_inputs + f->n_outputs;
  int last_use[TIDE_FUSED_MAX_STEPS], out_of[TIDE_FUSED_MAX_STEPS];
  bool need[TIDE_FUSED_MAX_STEPS];
  for (int t = 0; t < f->n_steps; t++) last_use[t] = -1, out_of[t] = -1, need[t] = false, c.loc[t] = -1, c.slot_of[t] = -1;
  for (int o = f->n_outputs - 1; o >= 0; o--) out_of[f->outputs[o]] = o;
  /* A value is read from memory unless the next step takes it in the
   * accumulator at the one operand that allows it. */
  for (int u = 0; u < f->n_steps; u++) {
    const tide_fused_step *s = &f->steps[u];
    int op, k = f32_form(s, &op), pos = acc_pos(f, u);
    for (int j = 0; j < s->n_args; j++) {
      if (s->args[j].src != TIDE_FUSED_STEP) continue;
      int v = s->args[j].index;
      last_use[v] = u;
      bool by_acc = v == u - 1 && (j == pos || (k == K_CALL && pos >= 0));
      if (!by_acc) need[v] = true;
    }
  }
  for (int u = 0; u < f->n_steps; u++) {
    const tide_fused_step *s = &f->steps[u];
    int op, k = f32_form(s, &op), pos = acc_pos(f, u);
    if (k == K_NONE) return TIDE_FAIL(TIDE_ERR_INTERNAL, "fused: %s has no float32 form", tide_op_name(s->op));
    if (k == K_CALL) {
      f32_ins *in = emit(&c, F32_CALL);
      const tide_op_def *def = &tide_op_defs[s->op];
      bool unary = def->cpu == tide_cpu_unary;
      in->fn = unary ? tide_unary_loop(s->op, TIDE_FLOAT32) : tide_binary_loop(s->op, TIDE_FLOAT32);
      in->ctx = unary ? (uint32_t)(cp->attrs_off + u * (int)sizeof(tide_attrs)) : 0;
      in->nargs = (uint8_t)s->n_args;
      for (int j = 0; j < s->n_args; j++) {
        bool by_acc = pos >= 0 && s->args[j].src == TIDE_FUSED_STEP && s->args[j].index == u - 1;
        in->args[j] = (int16_t)(by_acc ? F32_ACC : operand(&c, s->args[j]));
      }
    } else {
      if (pos < 0) {
        emit(&c, F32_LOAD)->a = (int16_t)operand(&c, s->args[0]);
        pos = 0;
      }
      f32_ins *in;
      switch (k) {
      case K_NOP: break;
      case K_UNARY:
        in = emit(&c, op);
        in->k = (float)s->alpha;
        break;
      case K_BINARY:
        in = emit(&c, pos == 0 ? op : reversed(op));
        in->a = (int16_t)operand(&c, s->args[1 - pos]);
        break;
      case K_WHERE:
        in = emit(&c, pos == 0 ? F32_WHERE_C : pos == 1 ? F32_WHERE_X : F32_WHERE_Y);
        in->a = (int16_t)operand(&c, s->args[pos == 0 ? 1 : 0]);
        in->b = (int16_t)operand(&c, s->args[pos == 2 ? 1 : 2]);
        break;
      case K_CLIP:
        in = emit(&c, F32_CLIP);
        in->a = (int16_t)operand(&c, s->args[1]);
        in->b = (int16_t)operand(&c, s->args[2]);
        break;
      }
    }
    /* Tiles whose value was read for the last time are free again. */
    for (int j = 0; j < s->n_args; j++) {
      int v = s->args[j].index;
      if (s->args[j].src == TIDE_FUSED_STEP && last_use[v] == u && c.slot_of[v] >= 0) c.busy[c.slot_of[v]] = false;
    }
    for (int o = 0; o < f->n_outputs; o++)
      if (f->outputs[o] == u) emit(&c, F32_OUT)->a = (int16_t)(f->n_inputs + o);
    if (out_of[u] >= 0) c.loc[u] = f->n_inputs + out_of[u];
    if (need[u] && last_use[u] > u) { /* read later: a tile (an output may stream past the caches) */
      int t = 0;
      while (t < p->n_slots && c.busy[t]) t++;
      if (t == p->n_slots) p->n_slots++;
      c.busy[t] = true;
      c.slot_of[u] = t;
      c.loc[u] = p->first_slot + t;
      emit(&c, F32_SAVE)->a = (int16_t)c.loc[u];
    }
  }
  emit(&c, F32_END);
  p->n_ops = p->first_slot + p->n_slots;
  for (int t = 0; t < f->n_steps; t++) {
    const tide_fused_step *s = &f->steps[t];
    for (int j = 0; j < s->n_args; j++)
      if (s->args[j].src == TIDE_FUSED_STEP && s->args[j].index >= t)
        return TIDE_FAIL(TIDE_ERR_VALUE, "fused: step %d reads step %d, which is not earlier", t, s->args[j].index);
  }
  return TIDE_OK;
}

/* ---- preparing ---------------------------------------------------------------------------- */

static size_t program_bytes(const tide_fused *f) {
  return align64(sizeof(cpu_prog)) + align64((size_t)f->n_steps * sizeof(tide_attrs)) +
         (size_t)f->n_consts * TILE_BYTES + align64(f32_prog_bytes(f->n_steps, f->n_outputs));
}

/* Check the description's shape: counts in range, operands that exist. */
static tide_status check_desc(const tide_fused *f) {
  if (f->n_inputs < 0 || f->n_inputs > TIDE_FUSED_MAX_INPUTS || f->n_consts < 0 ||
      f->n_consts > TIDE_FUSED_MAX_CONSTS || f->n_steps < 1 || f->n_steps > TIDE_FUSED_MAX_STEPS ||
      f->n_outputs < 1 || f->n_outputs > TIDE_FUSED_MAX_OUTPUTS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "fused: a description with %d inputs, %d constants, %d steps, %d outputs",
                     f->n_inputs, f->n_consts, f->n_steps, f->n_outputs);
  for (int t = 0; t < f->n_steps; t++) {
    const tide_fused_step *s = &f->steps[t];
    if (s->op < 0 || s->op >= TIDE_NUM_OPS || !(tide_op_defs[s->op].flags & TIDE_OPF_ELEMENTWISE) ||
        s->n_args < 1 || s->n_args > TIDE_FUSED_MAX_ARGS)
      return TIDE_FAIL(TIDE_ERR_VALUE, "fused: step %d is not an elementwise op", t);
    for (int j = 0; j < s->n_args; j++) {
      tide_fused_arg a = s->args[j];
      int limit = a.src == TIDE_FUSED_INPUT ? f->n_inputs : a.src == TIDE_FUSED_CONST ? f->n_consts : t;
      if (a.src < TIDE_FUSED_INPUT || a.src > TIDE_FUSED_STEP || a.index < 0 || a.index >= limit)
        return TIDE_FAIL(TIDE_ERR_VALUE, "fused: operand %d of step %d (%s) names no earlier value", j, t,
                         tide_op_name(s->op));
    }
  }
  for (int o = 0; o < f->n_outputs; o++)
    if (f->outputs[o] < 0 || f->outputs[o] >= f->n_steps)
      return TIDE_FAIL(TIDE_ERR_VALUE, "fused: output %d names no step", o);
  return TIDE_OK;
}

/* A generic step's typed loop and how it reads its ctx, or NULL. */
static tide_loop_fn gen_loop(const tide_fused_step *s, int *ctx) {
  const tide_op_def *def = &tide_op_defs[s->op];
  int dt = compute_dt(s->arg_dt);
  *ctx = CTX_NONE;
  if (def->cpu == tide_cpu_unary) {
    *ctx = CTX_ATTRS;
    return tide_unary_loop(s->op, dt);
  }
  if (def->cpu == tide_cpu_binary) {
    *ctx = CTX_BINARY;
    return tide_binary_loop(s->op, dt);
  }
  if (def->cpu == tide_cpu_cast) return tide_cast_loop(s->arg_dt, s->dt);
  if (def->cpu == tide_cpu_copy) return tide_copy_loop((size_t)compute_size(s->arg_dt));
  if (def->cpu == tide_cpu_where) return tide_where_loop((size_t)compute_size(s->dt));
  if (def->cpu == tide_cpu_clip) return tide_clip_loop(dt);
  return NULL;
}

/* The generic engine's registers and scratch blocks. */
static tide_status gen_compile(const tide_fused *f, cpu_prog *cp) {
  int n_in = f->n_inputs, first = n_in + f->n_consts;
  int last_use[N_REGS];
  for (int r = 0; r < N_REGS; r++) last_use[r] = -1;
  for (int k = 0; k < n_in; k++) cp->dt[k] = f->input_dt[k], cp->slot[k] = k;
  for (int c = 0; c < f->n_consts; c++) cp->dt[n_in + c] = f->consts[c].dt, cp->slot[n_in + c] = -1;
  for (int t = 0; t < f->n_steps; t++) {
    const tide_fused_step *s = &f->steps[t];
    int ctx;
    cp->step[t].fn = gen_loop(s, &ctx);
    cp->step[t].ctx = ctx;
    if (!cp->step[t].fn)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "fused: no CPU loop for %s on %s", tide_op_name(s->op),
                       tide_dtype_name(s->arg_dt));
    cp->dt[first + t] = s->dt;
    cp->out_of[t] = -1;
    for (int j = 0; j < s->n_args; j++) {
      tide_fused_arg a = s->args[j];
      int reg = a.src == TIDE_FUSED_INPUT ? a.index : a.src == TIDE_FUSED_CONST ? n_in + a.index : first + a.index;
      last_use[reg] = t;
    }
  }
  for (int o = f->n_outputs - 1; o >= 0; o--) cp->out_of[f->outputs[o]] = o;
  /* Scratch blocks by liveness: a result takes a free block before its
   * inputs' blocks are freed, so no loop writes over what it reads. */
  bool busy[N_REGS] = {false};
  int n_slots = n_in;
  for (int t = 0; t < f->n_steps; t++) {
    int reg = first + t, b = n_in;
    while (b < n_slots && busy[b]) b++;
    if (b == n_slots) n_slots++;
    busy[b] = true;
    cp->slot[reg] = b;
    const tide_fused_step *s = &f->steps[t];
    for (int j = 0; j < s->n_args; j++)
      if (s->args[j].src == TIDE_FUSED_STEP && last_use[first + s->args[j].index] == t)
        busy[cp->slot[first + s->args[j].index]] = false;
    if (last_use[reg] < 0) busy[b] = false; /* an output, or a result no one reads */
  }
  cp->n_slots = n_slots;
  return TIDE_OK;
}

static tide_status prepare(const tide_fused *f, void *mem) {
  tide_status st = check_desc(f);
  if (st) return st;
  cpu_prog *cp = mem;
  memset(cp, 0, sizeof *cp);
  cp->attrs_off = (int32_t)align64(sizeof(cpu_prog));
  cp->consts_off = cp->attrs_off + (int32_t)align64((size_t)f->n_steps * sizeof(tide_attrs));
  cp->f32_off = cp->consts_off + f->n_consts * TILE_BYTES;
  for (int t = 0; t < f->n_steps; t++) {
    tide_fused_step_attrs(&f->steps[t], (tide_attrs *)step_attrs(cp, t));
    if (!cheap_op(f->steps[t].op)) cp->costly = 1;
  }
  /* Each constant's tile: the value in its compute dtype; the float32
   * engine reads a strip of copies (bools as masks). */
  for (int c = 0; c < f->n_consts; c++) {
    const tide_fused_const *k = &f->consts[c];
    char *tile = (char *)const_tile(cp, c);
    memset(tile, 0, TILE_BYTES);
    int dt = compute_dt(k->dt);
    union { float f32; double f64; int8_t i8; uint8_t u8; int32_t i32; int64_t i64; } v;
    memset(&v, 0, sizeof v);
    switch (dt) {
    case TIDE_FLOAT32: v.f32 = (float)k->f; break;
    case TIDE_FLOAT64: v.f64 = k->f; break;
    case TIDE_INT8: v.i8 = (int8_t)k->i; break;
    case TIDE_UINT8: v.u8 = (uint8_t)k->i; break;
    case TIDE_BOOL: v.u8 = k->i != 0; break;
    case TIDE_INT32: v.i32 = (int32_t)k->i; break;
    default: v.i64 = k->i; break;
    }
    memcpy(tile, &v, 8);
  }
  if (!tide_fused_f32_runs(f)) {
    cp->engine = ENGINE_GENERIC;
    return gen_compile(f, cp);
  }
  cp->engine = ENGINE_F32;
  for (int c = 0; c < f->n_consts; c++) {
    float *tile = (float *)const_tile(cp, c), v = (float)f->consts[c].f;
    if (f->consts[c].dt == TIDE_BOOL) {
      uint32_t m = f->consts[c].i ? 0xFFFFFFFFu : 0;
      memcpy(&v, &m, 4);
    }
    for (int i = 0; i < F32_STRIP_MAX; i++) tile[i] = v;
  }
  return f32_compile(f, cp, (f32_prog *)f32_of(cp));
}

/* ---- running: layout -------------------------------------------------------------------- */

/* One input seen over the (coalesced) output space. */
typedef struct fop {
  const char *data;
  int64_t st[TIDE_MAX_DIMS];   /* bytes per step of each dim (0 where broadcast) */
  int dt;
  bool flat;                   /* element e lies at data + e * st[nd - 1] */
  bool splat;                  /* one element for all */
} fop;

typedef struct layout {
  int nd;
  int64_t dims[TIDE_MAX_DIMS];
  int64_t total;
  fop in[TIDE_FUSED_MAX_INPUTS];
} layout;

/* Lay the inputs over the outputs' shape (broadcasting), then merge dims
 * every operand walks evenly, as the strided engine does. */
static tide_status lay_out(layout *r, const tide_tensor *o, int n_in, const tide_tensor *const *in) {
  int nd = o->ndim;
  int64_t ost[TIDE_MAX_DIMS], st[TIDE_FUSED_MAX_INPUTS][TIDE_MAX_DIMS], dims[TIDE_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = o->dims[d], ost[d] = o->strides[d];
  for (int k = 0; k < n_in; k++) {
    const tide_tensor *t = in[k];
    int off = nd - t->ndim;
    int64_t es = (int64_t)tide_dtype_size(t->dt);
    for (int d = 0; d < nd; d++) {
      int id = d - off;
      if (off < 0 || (id >= 0 && t->dims[id] != dims[d] && t->dims[id] != 1)) {
        char so[128], si[128];
        return TIDE_FAIL(TIDE_ERR_SHAPE, "fused: cannot broadcast input %d of shape %s to %s", k + 1,
                         TIDE_SHAPE_STR(si, t), TIDE_SHAPE_STR(so, o));
      }
      st[k][d] = id < 0 || t->dims[id] == 1 ? 0 : t->strides[id] * es;
    }
    r->in[k].data = t->data;
    r->in[k].dt = t->dt;
  }
  int n = 0;
  for (int d = 0; d < nd; d++) {
    if (dims[d] == 1) continue;
    bool merge = n > 0 && ost[n - 1] == ost[d] * dims[d];
    for (int k = 0; k < n_in && merge; k++) merge = st[k][n - 1] == st[k][d] * dims[d];
    if (merge) {
      dims[n - 1] *= dims[d];
      ost[n - 1] = ost[d];
      for (int k = 0; k < n_in; k++) st[k][n - 1] = st[k][d];
      continue;
    }
    dims[n] = dims[d], ost[n] = ost[d];
    for (int k = 0; k < n_in; k++) st[k][n] = st[k][d];
    n++;
  }
  if (n == 0) { /* one element */
    dims[0] = 1;
    for (int k = 0; k < n_in; k++) st[k][0] = 0;
    n = 1;
  }
  r->nd = n;
  r->total = o->nelem;
  for (int d = 0; d < n; d++) r->dims[d] = dims[d];
  for (int k = 0; k < n_in; k++) {
    fop *f = &r->in[k];
    f->flat = true;
    f->splat = true;
    for (int d = 0; d < n; d++) {
      f->st[d] = st[k][d];
      if (st[k][d] != 0) f->splat = false;
      if (d < n - 1 && st[k][d] != st[k][d + 1] * dims[d + 1]) f->flat = false;
    }
  }
  return TIDE_OK;
}

/* Elements [e0, e0 + m) of input o (row-major over the output), through
 * load(dt, n, src, stride, dst) into dst of element size es. */
typedef void (*load_fn)(int dt, int64_t n, const char *src, int64_t stride, char *dst);
static void gather(const layout *r, const fop *o, int64_t e0, int64_t m, char *dst, int64_t es, load_fn load) {
  int nd = r->nd;
  int64_t inner = r->dims[nd - 1], step = o->st[nd - 1];
  if (o->flat) {
    load(o->dt, m, o->data + e0 * step, step, dst);
    return;
  }
  int64_t coord[TIDE_MAX_DIMS], rem = e0;
  const char *at = o->data;
  for (int d = nd - 1; d >= 0; d--) {
    coord[d] = rem % r->dims[d];
    rem /= r->dims[d];
    at += coord[d] * o->st[d];
  }
  int64_t done = 0;
  while (done < m) {
    int64_t n = inner - coord[nd - 1];
    if (n > m - done) n = m - done;
    load(o->dt, n, at, step, dst + done * es);
    done += n;
    at += n * step;
    coord[nd - 1] += n;
    for (int d = nd - 1; d > 0 && coord[d] == r->dims[d]; d--) { /* carry */
      at -= coord[d] * o->st[d];
      coord[d] = 0;
      coord[d - 1]++;
      at += o->st[d - 1];
    }
  }
}

/* The run's output elements: all outputs are contiguous, of one shape. */
static tide_status check_outputs(const tide_fused *f, tide_tensor *const *out) {
  for (int o = 0; o < f->n_outputs; o++) {
    const tide_tensor *t = out[o];
    bool ok = tide_tensor_is_contiguous(t) && t->dt == f->steps[f->outputs[o]].dt && t->ndim == out[0]->ndim;
    for (int d = 0; ok && d < t->ndim; d++) ok = t->dims[d] == out[0]->dims[d];
    if (!ok)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "fused: output %d must be a contiguous %s tensor shaped like output 1", o + 1,
                       tide_dtype_name(f->steps[f->outputs[o]].dt));
  }
  return TIDE_OK;
}

/* A scratch area: from the stack buffer when it fits, else the heap. */
static char *scratch_get(char *local, size_t have, size_t need) {
  return need <= have ? local : aligned_alloc(64, align64(need));
}

/* ---- running: the generic engine -------------------------------------------------------- */

typedef struct gen_run {
  const tide_fused *f;
  const cpu_prog *cp;
  layout lay;
  int64_t block;
  size_t slot_bytes;
  char *out[TIDE_FUSED_MAX_OUTPUTS];
  bool stream;                 /* the outputs are written past the caches */
  int failed;                  /* scratch memory could not be had */
  tide_binary_ctx bad[TIDE_FUSED_MAX_STEPS];
} gen_run;

/* n elements of dtype dt from src (stride in bytes) into the compute-type block dst. */
static void gen_load(int dt, int64_t n, const char *src, int64_t stride, char *dst) {
  if (tide_is_half(dt)) {
    tide_halves_to_float(dt, n, src, stride, (float *)dst);
    return;
  }
  int64_t es = (int64_t)tide_dtype_size(dt), s[2] = {es, stride};
  char *p[2] = {dst, (char *)src};
  tide_copy_loop((size_t)es)(n, p, s, NULL);
}

/* Round float32 values to a half type and back, as a half-typed op's result is stored. */
static void round_halves(int dt, int64_t n, float *x) {
  if (dt == TIDE_FLOAT16)
    for (int64_t i = 0; i < n; i++) x[i] = tide_half_to_float(tide_float_to_half(x[i]));
  else
    for (int64_t i = 0; i < n; i++) x[i] = tide_bfloat16_to_float(tide_float_to_bfloat16(x[i]));
}

/* Copy n bytes past the caches (dst is 64-byte aligned at block starts). */
static void stream_copy(char *dst, const char *src, size_t n) {
  size_t i = 0;
#if defined(__AVX__)
  if (((uintptr_t)dst & 31) == 0)
    for (; i + 32 <= n; i += 32) _mm256_stream_ps((float *)(dst + i), _mm256_loadu_ps((const float *)(src + i)));
#elif defined(__SSE2__)
  if (((uintptr_t)dst & 15) == 0)
    for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
#endif
  memcpy(dst + i, src + i, n - i);
}

/* Run the steps on output elements [e0, e0 + m). */
static void gen_block(gen_run *r, int64_t e0, int64_t m, char *scratch) {
  const tide_fused *f = r->f;
  const cpu_prog *cp = r->cp;
  int n_in = f->n_inputs, first = n_in + f->n_consts;
  char *ptr[N_REGS];
  int64_t str[N_REGS];
  for (int k = 0; k < n_in; k++) {
    const fop *o = &r->lay.in[k];
    if (o->flat && !tide_is_half(o->dt)) {
      str[k] = o->st[r->lay.nd - 1];
      ptr[k] = (char *)o->data + e0 * str[k];
    } else {
      ptr[k] = scratch + (size_t)cp->slot[k] * r->slot_bytes;
      str[k] = compute_size(o->dt);
      gather(&r->lay, o, e0, m, ptr[k], str[k], gen_load);
    }
  }
  for (int c = 0; c < f->n_consts; c++) ptr[n_in + c] = (char *)const_tile(cp, c), str[n_in + c] = 0;
  for (int t = 0; t < f->n_steps; t++) {
    const tide_fused_step *s = &f->steps[t];
    int reg = first + t, dt = s->dt, o = cp->out_of[t];
    bool direct = o >= 0 && !tide_is_half(dt) && !r->stream; /* the op writes its output itself */
    char *p[1 + TIDE_FUSED_MAX_ARGS];
    int64_t st[1 + TIDE_FUSED_MAX_ARGS];
    p[0] = direct ? r->out[o] + e0 * (int64_t)tide_dtype_size(dt) : scratch + (size_t)cp->slot[reg] * r->slot_bytes;
    st[0] = compute_size(dt);
    for (int j = 0; j < s->n_args; j++) {
      tide_fused_arg a = s->args[j];
      int src = a.src == TIDE_FUSED_INPUT ? a.index : a.src == TIDE_FUSED_CONST ? n_in + a.index : first + a.index;
      p[j + 1] = ptr[src];
      st[j + 1] = str[src];
    }
    int ctx = cp->step[t].ctx;
    cp->step[t].fn(m, p, st, ctx == CTX_ATTRS ? (void *)step_attrs(cp, t) : ctx == CTX_BINARY ? (void *)&r->bad[t] : NULL);
    ptr[reg] = p[0];
    str[reg] = st[0];
    if (tide_is_half(dt)) {
      round_halves(dt, m, (float *)p[0]); /* later steps read what an unfused op would have stored */
      if (o >= 0) tide_float_to_halves(dt, m, (const float *)p[0], r->out[o] + e0 * 2, 2);
    } else if (o >= 0 && !direct) {
      stream_copy(r->out[o] + e0 * (int64_t)tide_dtype_size(dt), p[0], (size_t)m * tide_dtype_size(dt));
    }
  }
}

/* Blocks [b0, b1) of the output, on one thread's scratch blocks. */
static void gen_blocks(void *arg, int64_t b0, int64_t b1) {
  gen_run *r = arg;
  size_t need = (size_t)r->cp->n_slots * r->slot_bytes;
  _Alignas(64) char local[STACK_BYTES];
  char *scratch = scratch_get(local, sizeof local, need);
  if (!scratch) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t e0 = b * r->block, m = r->lay.total - e0 < r->block ? r->lay.total - e0 : r->block;
    gen_block(r, e0, m, scratch);
  }
  if (scratch != local) free(scratch);
#if defined(__SSE2__)
  if (r->stream) _mm_sfence();
#endif
}

static tide_status gen_run_all(const tide_fused *f, const cpu_prog *cp, const layout *lay, tide_tensor *const *out,
                               unsigned hints, int *failed) {
  gen_run *r = malloc(sizeof *r);
  if (!r) return TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory");
  r->f = f;
  r->cp = cp;
  r->lay = *lay;
  r->failed = 0;
  int64_t bytes = 0;
  for (int o = 0; o < f->n_outputs; o++) bytes += out[o]->nelem * (int64_t)tide_dtype_size(out[o]->dt);
  r->stream = streams(bytes, hints);
  for (int o = 0; o < f->n_outputs; o++) r->out[o] = out[o]->data;
  r->block = lay->total < GEN_BLOCK ? lay->total : GEN_BLOCK;
  r->slot_bytes = align64((size_t)r->block * 8);
  memset(r->bad, 0, sizeof r->bad);
  int64_t nblocks = (lay->total + r->block - 1) / r->block;
  int64_t grain = cp->costly ? TIDE_GRAIN_COSTLY : TIDE_GRAIN_CHEAP / f->n_steps;
  if (grain < TIDE_GRAIN_COSTLY) grain = TIDE_GRAIN_COSTLY;
  tide_parallel_for(nblocks, (grain + r->block - 1) / r->block, gen_blocks, r);
  tide_status st = TIDE_OK;
  if (r->failed) st = TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory for scratch blocks");
  for (int t = 0; t < f->n_steps && !st; t++) {
    if (!r->bad[t].bad) continue;
    st = tide_binary_check(tide_op_name(f->steps[t].op), r->bad[t].bad);
    *failed = t;
  }
  free(r);
  return st;
}

/* ---- running: the float32 engine -------------------------------------------------------- */

/* The float32 kernel for this machine: the one build today (the Makefile's
 * flags). A per-ISA build adds variants here, tried best first:
 *   if (__builtin_cpu_supports("avx512f")) return &tide_fused_f32_avx512; */
static const tide_fused_f32_kernel *f32_kernel(void) { return &tide_fused_f32_native; }

enum { IN_CONTIG, IN_SPLAT, IN_GATHER };

typedef struct f32_run {
  const tide_fused *f;
  const cpu_prog *cp;
  const f32_prog *fp;
  const tide_fused_f32_kernel *kern;
  layout lay;
  int64_t block;
  int mode[TIDE_FUSED_MAX_INPUTS];
  const float *splat[TIDE_FUSED_MAX_INPUTS]; /* IN_SPLAT: a strip of copies */
  char *out[TIDE_FUSED_MAX_OUTPUTS];
  bool bool_out[TIDE_FUSED_MAX_OUTPUTS];
  int n_gather, n_bool_out;
  bool stream;
  int failed;
} f32_run;

/* n elements of dtype dt (float32 or bool) into floats (bools as masks). */
static void f32_load(int dt, int64_t n, const char *src, int64_t stride, char *dst) {
  float *o = (float *)dst;
  if (dt == TIDE_FLOAT32) {
    if (stride == 4) memcpy(o, src, (size_t)n * 4);
    else for (int64_t i = 0; i < n; i++) o[i] = *(const float *)(src + i * stride);
    return;
  }
  uint32_t *u = (uint32_t *)dst;
  for (int64_t i = 0; i < n; i++) u[i] = src[i * stride] ? 0xFFFFFFFFu : 0;
}

/* Output elements [e0, e0 + m), on one thread's scratch. */
static void f32_block(f32_run *r, int64_t e0, int64_t m, float *scratch) {
  const tide_fused *f = r->f;
  const f32_prog *fp = r->fp;
  const int S = r->kern->strip, B = (int)r->block;
  float *ptr[F32_MAX_OPS];
  int64_t adv[TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_OUTPUTS];
  /* scratch: gathered inputs and bool outputs (B floats each), then tiles */
  float *buf = scratch, *tiles = scratch + (size_t)(r->n_gather + r->n_bool_out) * B;
  for (int k = 0; k < f->n_inputs; k++) {
    adv[k] = S;
    switch (r->mode[k]) {
    case IN_CONTIG: ptr[k] = (float *)r->lay.in[k].data + e0; break;
    case IN_SPLAT: ptr[k] = (float *)r->splat[k], adv[k] = 0; break;
    default:
      ptr[k] = buf;
      gather(&r->lay, &r->lay.in[k], e0, m, (char *)buf, 4, f32_load);
      buf += B;
    }
  }
  for (int o = 0; o < f->n_outputs; o++) {
    int i = f->n_inputs + o;
    adv[i] = S;
    if (r->bool_out[o]) ptr[i] = buf, buf += B;
    else ptr[i] = (float *)r->out[o] + e0;
  }
  for (int c = 0; c < f->n_consts; c++) ptr[fp->first_const + c] = (float *)const_tile(r->cp, c);
  ptr[fp->call_in] = tiles;
  ptr[fp->call_out] = tiles + F32_STRIP_MAX;
  for (int s = 0; s < fp->n_slots; s++) ptr[fp->first_slot + s] = tiles + (size_t)(2 + s) * F32_STRIP_MAX;
  float *tail = tiles + (size_t)(2 + fp->n_slots) * F32_STRIP_MAX;
  /* Long strips, then short ones, then the last partial short strip through tiles. */
  const int SS = r->kern->short_strip;
  int64_t full = m / S, shorts = (m - full * S) / SS, rest = m - full * S - shorts * SS;
  float *start[TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_OUTPUTS];
  memcpy(start, ptr, (size_t)fp->n_adv * sizeof *start);
  if (full > 0) r->kern->run(fp, r->cp, ptr, adv, full, r->stream); /* leaves ptr past the strips it ran */
  if (shorts == 0 && rest == 0) goto done;
  for (int i = 0; i < fp->n_adv; i++) adv[i] = adv[i] ? SS : 0;
  if (shorts > 0) r->kern->run_short(fp, r->cp, ptr, adv, shorts, false);
  if (rest > 0) {
    int64_t at_elem = m - rest;
    for (int k = 0; k < f->n_inputs; k++)
      if (r->mode[k] == IN_CONTIG) {
        float *t = tail + (size_t)k * F32_STRIP_MAX;
        memcpy(t, ptr[k], (size_t)rest * 4);
        memset(t + rest, 0, (size_t)(SS - rest) * 4);
        ptr[k] = t;
      }
    for (int o = 0; o < f->n_outputs; o++)
      if (!r->bool_out[o]) ptr[f->n_inputs + o] = tail + (size_t)(f->n_inputs + o) * F32_STRIP_MAX;
    r->kern->run_short(fp, r->cp, ptr, adv, 1, false);
    for (int o = 0; o < f->n_outputs; o++)
      if (!r->bool_out[o])
        memcpy(start[f->n_inputs + o] + at_elem, tail + (size_t)(f->n_inputs + o) * F32_STRIP_MAX, (size_t)rest * 4);
  }
done:
  for (int o = 0; o < f->n_outputs; o++) {
    if (!r->bool_out[o]) continue;
    const uint32_t *mask = (const uint32_t *)start[f->n_inputs + o];
    uint8_t *dst = (uint8_t *)r->out[o] + e0;
    for (int64_t i = 0; i < m; i++) dst[i] = mask[i] != 0;
  }
}

/* Scratch floats one thread needs. */
static size_t f32_scratch_floats(const f32_run *r) {
  return (size_t)(r->n_gather + r->n_bool_out) * (size_t)r->block +
         (size_t)(2 + r->fp->n_slots + r->f->n_inputs + r->f->n_outputs) * F32_STRIP_MAX;
}

static void f32_blocks(void *arg, int64_t b0, int64_t b1) {
  f32_run *r = arg;
  size_t need = f32_scratch_floats(r) * sizeof(float);
  _Alignas(64) char local[STACK_BYTES];
  float *scratch = (float *)scratch_get(local, sizeof local, need);
  if (!scratch) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t e0 = b * r->block, m = r->lay.total - e0 < r->block ? r->lay.total - e0 : r->block;
    f32_block(r, e0, m, scratch);
  }
  if ((char *)scratch != local) free(scratch);
#if defined(__SSE2__)
  if (r->stream) _mm_sfence();
#endif
}

static tide_status f32_run_all(const tide_fused *f, const cpu_prog *cp, const layout *lay, tide_tensor *const *out,
                               unsigned hints) {
  f32_run r;
  r.f = f;
  r.cp = cp;
  r.fp = f32_of(cp);
  r.kern = f32_kernel();
  r.lay = *lay;
  r.failed = 0;
  r.n_gather = r.n_bool_out = 0;
  /* Inputs of one element become a strip of copies, here, once. */
  _Alignas(64) float splats[TIDE_FUSED_MAX_INPUTS][F32_STRIP_MAX];
  for (int k = 0; k < f->n_inputs; k++) {
    const fop *o = &lay->in[k];
    if (o->splat) {
      r.mode[k] = IN_SPLAT;
      f32_load(o->dt, 1, o->data, 0, (char *)splats[k]);
      for (int i = 1; i < F32_STRIP_MAX; i++) splats[k][i] = splats[k][0];
      r.splat[k] = splats[k];
    } else if (o->flat && o->dt == TIDE_FLOAT32 && o->st[lay->nd - 1] == 4) {
      r.mode[k] = IN_CONTIG;
    } else {
      r.mode[k] = IN_GATHER;
      r.n_gather++;
    }
  }
  bool aligned = true;
  for (int o = 0; o < f->n_outputs; o++) {
    r.out[o] = out[o]->data;
    r.bool_out[o] = out[o]->dt == TIDE_BOOL;
    r.n_bool_out += r.bool_out[o];
    if (((uintptr_t)r.out[o] & 63) != 0) aligned = false;
  }
  r.stream = aligned && r.n_bool_out == 0 && streams(lay->total * 4 * f->n_outputs, hints);
  r.block = lay->total < F32_BLOCK ? lay->total : F32_BLOCK;
  int64_t nblocks = (lay->total + r.block - 1) / r.block;
  int64_t grain = cp->costly ? TIDE_GRAIN_COSTLY : TIDE_GRAIN_CHEAP / f->n_steps;
  if (grain < TIDE_GRAIN_COSTLY) grain = TIDE_GRAIN_COSTLY;
  tide_parallel_for(nblocks, (grain + r.block - 1) / r.block, f32_blocks, &r);
  if (r.failed) return TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory for scratch blocks");
  return TIDE_OK;
}

/* ---- the backend ---------------------------------------------------------------------------- */

static tide_status run(const tide_fused *f, const void *prog, const tide_tensor *const *in, tide_tensor *const *out,
                       unsigned hints, int *failed) {
  const cpu_prog *cp = prog;
  *failed = -1;
  tide_status st = check_outputs(f, out);
  if (st) return st;
  if (out[0]->nelem == 0) return TIDE_OK;
  layout lay;
  st = lay_out(&lay, out[0], f->n_inputs, in);
  if (st) return st;
  for (int k = 0; k < f->n_inputs; k++)
    if (in[k]->dt != f->input_dt[k])
      return TIDE_FAIL(TIDE_ERR_DTYPE, "fused: input %d is %s, the description says %s", k + 1,
                       tide_dtype_name(in[k]->dt), tide_dtype_name(f->input_dt[k]));
  st = cp->engine == ENGINE_F32 ? f32_run_all(f, cp, &lay, out, hints) : gen_run_all(f, cp, &lay, out, hints, failed);
  if (!st && tide_interrupt_pending()) {
    tide_interrupt_clear();
    st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
  }
  return st;
}

const tide_fused_backend tide_cpu_fused_backend = {"cpu", program_bytes, prepare, run};
