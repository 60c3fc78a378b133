/* cpu/fused.c — the CPU backend of fused nodes (tide/fused.h): prepares a
 * description as a float32 register program or, for other dtypes, as the
 * registry's typed loops over L1 blocks, and runs it (cpu/fused_run.c). */
#include "fused_cpu.h"
#include "../core/backend.h"

#include <stdlib.h>
#include <string.h>

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
    return fused_cpu_compile_generic(f, cp);
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
  return fused_cpu_compile_f32(f, cp, (f32_prog *)f32_of(cp));
}

/* ---- running ---------------------------------------------------------------------------- */

/* Lay the inputs over the outputs' shape (broadcasting), then merge dims
 * every operand walks evenly, as the strided engine does. */
tide_status fused_cpu_lay_out(layout *r, const tide_tensor *o, int n_in, const tide_tensor *const *in) {
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

/* Contract in fused_cpu.h. */
void fused_cpu_gather(const layout *r, const fop *o, int64_t e0, int64_t m, char *dst, int64_t es, load_fn load) {
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


/* ---- the runner ---------------------------------------------------------------------------- */

static tide_status run(const tide_fused *f, const void *prog, const tide_tensor *const *in, tide_tensor *const *out,
                       unsigned hints, int *failed) {
  const cpu_prog *cp = prog;
  *failed = -1;
  tide_status st = check_outputs(f, out);
  if (st) return st;
  if (out[0]->nelem == 0) return TIDE_OK;
  layout lay;
  st = fused_cpu_lay_out(&lay, out[0], f->n_inputs, in);
  if (st) return st;
  for (int k = 0; k < f->n_inputs; k++)
    if (in[k]->dt != f->input_dt[k])
      return TIDE_FAIL(TIDE_ERR_DTYPE, "fused: input %d is %s, the description says %s", k + 1,
                       tide_dtype_name(in[k]->dt), tide_dtype_name(f->input_dt[k]));
  st = cp->engine == ENGINE_F32 ? fused_cpu_run_f32(f, cp, &lay, out, hints)
                                 : fused_cpu_run_generic(f, cp, &lay, out, hints, failed);
  if (!st && tide_interrupt_pending()) {
    tide_interrupt_clear();
    st = TIDE_FAIL(TIDE_ERR_INTERRUPTED, "interrupted");
  }
  return st;
}

const tide_fused_runner tide_cpu_fused_runner = {"cpu", program_bytes, prepare, run};
