/* cpu/fused_compile.c — compiling a fused description for the CPU: the
 * float32 engine's register program (which step runs how, what the
 * accumulator carries, what is saved) and the generic engine's loops and blocks. */
#include "fused_cpu.h"
#include "../core/backend.h"

#include <string.h>

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
  tide_kernel_fn kernel = tide_cpu_backend.kernels[s->op];
  if (kernel == tide_cpu_unary && tide_unary_loop(s->op, TIDE_FLOAT32)) return K_CALL;
  if (kernel == tide_cpu_binary && tide_binary_loop(s->op, TIDE_FLOAT32)) return K_CALL;
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

tide_status fused_cpu_compile_f32(const tide_fused *f, cpu_prog *cp, f32_prog *p) {
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
      bool unary = tide_cpu_backend.kernels[s->op] == tide_cpu_unary;
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

/* ---- the generic engine's loops and scratch blocks -------------------------------------- */

/* A generic step's typed loop and how it reads its ctx, or NULL. */
static tide_loop_fn gen_loop(const tide_fused_step *s, int *ctx) {
  tide_kernel_fn kernel = tide_cpu_backend.kernels[s->op]; /* the op's family, by its kernel */
  int dt = compute_dt(s->arg_dt);
  *ctx = CTX_NONE;
  if (kernel == tide_cpu_unary) {
    *ctx = CTX_ATTRS;
    return tide_unary_loop(s->op, dt);
  }
  if (kernel == tide_cpu_binary) {
    *ctx = CTX_BINARY;
    return tide_binary_loop(s->op, dt);
  }
  if (kernel == tide_cpu_cast) return tide_cast_loop(s->arg_dt, s->dt);
  if (kernel == tide_cpu_copy) return tide_copy_loop((size_t)compute_size(s->arg_dt));
  if (kernel == tide_cpu_where) return tide_where_loop((size_t)compute_size(s->dt));
  if (kernel == tide_cpu_clip) return tide_clip_loop(dt);
  return NULL;
}

/* The generic engine's registers and scratch blocks. */
tide_status fused_cpu_compile_generic(const tide_fused *f, cpu_prog *cp) {
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

