/* io/onnx_write.c — tide_onnx_export: a finalized graph walked node by node (fused nodes
 * as the registry ops they hold) into an ONNX ModelProto, packed by protobuf-c, written atomically. */
#include "onnx_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/graph_internal.h"
#include "../graph/passes.h"
#include "tide/fused.h"
#include "atomic_file.h"

/* The IR version each opset came with (onnx/helper.py's VERSION_TABLE). */
static int64_t ir_version(int opset) {
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

/* ---- ops with no mapping, all listed at once ------------------------------------------ */

enum { MAX_MISSING = 64 };

typedef struct missing {
  int n;
  const char *name[MAX_MISSING];
  const char *origin[MAX_MISSING];
} missing;

static void note_missing(missing *m, const char *name, const char *origin) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->name[i], name) == 0) return;
  if (m->n < MAX_MISSING) m->name[m->n] = name, m->origin[m->n++] = origin;
}

static const char *kind_name(int kind) {
  switch (kind) {
  case TIDE_NODE_ASSIGN: return "a variable assignment";
  case TIDE_NODE_PRINT: return "tide.print";
  case TIDE_NODE_COND: return "tide.cond";
  case TIDE_NODE_WHILE: return "tide.while_loop";
  case TIDE_NODE_EFFECT: return "a summary write";
  default: return "a node of unknown kind";
  }
}

static void find_missing(const onnx_export *x, const tide_graph *g, missing *m) {
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    switch (n->kind) {
    case TIDE_NODE_INPUT: case TIDE_NODE_CONST: case TIDE_NODE_VARIABLE: break;
    case TIDE_NODE_OP:
      if (!ox_mapping(x, n->op)) note_missing(m, tide_op_name(n->op), n->origin);
      break;
    case TIDE_NODE_FUSED: {
      const tide_fused *f = tide_graph_fused_desc(n);
      for (int s = 0; f && s < f->n_steps; s++) {
        int tag = f->steps[s].tag;
        if (!ox_mapping(x, f->steps[s].op))
          note_missing(m, tide_op_name(f->steps[s].op), tag >= 0 && tag < g->nnodes ? g->nodes[tag].origin : NULL);
      }
      break;
    }
    default: note_missing(m, kind_name(n->kind), n->origin); break;
    }
  }
}

static tide_status missing_error(const missing *m, int opset) {
  char buf[1600];
  size_t k = 0;
  for (int i = 0; i < m->n && k < sizeof buf - 1; i++) {
    int w = snprintf(buf + k, sizeof buf - k, "%s%s (first at %s)", i ? ", " : "", m->name[i],
                     m->origin[i] ? m->origin[i] : "?");
    if (w < 0) break;
    k += (size_t)w;
  }
  return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "onnx.export: %d op(s) have no ONNX mapping at opset %d: %s", m->n, opset,
                   buf);
}

/* ---- the walk ------------------------------------------------------------------------- */

typedef struct walk {
  onnx_export *x;
  const tide_graph *g;
  const char ***names;         /* per node: its outputs' value names */
  int n_vars;
  tide_tensor *const *handles;
  const char *const *var_names;
  const char **var_init;       /* per variable: its initializer, once written */
} walk;

static const char *value_name(const walk *w, gvalue v) {
  const char **n = w->names[v.node];
  return n && n[v.index] ? n[v.index] : "";
}

/* A fresh name per output of a node recorded as `op`. */
static const char **out_names(walk *w, int n_out, const char *op) {
  const char **names = ox_alloc(w->x, (size_t)(n_out > 0 ? n_out : 1) * sizeof *names);
  for (int k = 0; names && k < n_out; k++) names[k] = ox_fresh(w->x, op);
  return names;
}

static tide_status map_op(walk *w, int op, const tide_attrs *a, int n_in, const char *const *in,
                          const tide_tensor *const *din, int n_out, const char *const *out, const tide_tensor *const *dout,
                          const char *origin) {
  onnx_export *x = w->x;
  x->op = tide_op_name(op), x->origin = origin;
  ox_map_fn fn = ox_mapping(x, op);
  if (!fn) return ox_fail(x, "no ONNX mapping"); /* find_missing saw them all first */
  ox_call c = {op, a, n_in, n_out, in, din, out, dout};
  tide_status st = fn(x, &c);
  return st ? st : ox_status(x);
}

/* A fused node's steps as ops; a step's descriptor broadcasts its operands'. */
static tide_status write_fused(walk *w, int node) {
  const gnode *n = &w->g->nodes[node];
  const tide_fused *f = tide_graph_fused_desc(n);
  if (!f) return TIDE_FAIL(TIDE_ERR_INTERNAL, "onnx.export: fused node %d has no description", node);
  const char *step_name[TIDE_FUSED_MAX_STEPS], *const_name[TIDE_FUSED_MAX_CONSTS];
  tide_tensor step_desc[TIDE_FUSED_MAX_STEPS], const_desc[TIDE_FUSED_MAX_CONSTS];
  for (int c = 0; c < f->n_consts; c++) {
    const tide_fused_const *fc = &f->consts[c];
    memset(&const_desc[c], 0, sizeof const_desc[c]);
    const_desc[c].dt = fc->dt, const_desc[c].ndim = fc->ndim;
    for (int d = 0; d < fc->ndim && d < TIDE_MAX_DIMS; d++) const_desc[c].dims[d] = 1;
    double v = tide_dtype_is_float(fc->dt) ? fc->f : (double)fc->i;
    const_name[c] = ox_init_number(w->x, fc->dt, fc->ndim, v);
  }
  tide_status st = ox_status(w->x);
  for (int s = 0; !st && s < f->n_steps; s++) {
    const tide_fused_step *fs = &f->steps[s];
    const char *in[TIDE_FUSED_MAX_ARGS];
    const tide_tensor *din[TIDE_FUSED_MAX_ARGS];
    int nd = 0;
    int64_t dims[TIDE_MAX_DIMS];
    for (int k = 0; k < TIDE_MAX_DIMS; k++) dims[k] = 1;
    for (int a = 0; a < fs->n_args; a++) {
      const tide_fused_arg *arg = &fs->args[a];
      if (arg->src == TIDE_FUSED_INPUT && arg->index < n->n_in) {
        in[a] = value_name(w, n->in[arg->index]);
        din[a] = gval_desc((tide_graph *)w->g, n->in[arg->index]);
      } else if (arg->src == TIDE_FUSED_CONST && arg->index < f->n_consts) {
        in[a] = const_name[arg->index], din[a] = &const_desc[arg->index];
      } else if (arg->src == TIDE_FUSED_STEP && arg->index < s) {
        in[a] = step_name[arg->index], din[a] = &step_desc[arg->index];
      } else {
        return TIDE_FAIL(TIDE_ERR_INTERNAL, "onnx.export: fused node %d step %d has a bad operand", node, s);
      }
      /* numpy broadcasting, right-aligned in dims (all 1 at first); -1 stays unknown */
      const tide_tensor *d = din[a];
      int r = d->ndim < 0 ? 0 : d->ndim;
      if (r > nd) nd = r;
      for (int k = 0; k < r; k++) {
        int64_t *o = &dims[TIDE_MAX_DIMS - r + k], v = d->dims[k];
        if (*o == 1) *o = v;
        else if (v != 1 && v != *o) *o = -1;
      }
    }
    tide_tensor *sd = &step_desc[s];
    memset(sd, 0, sizeof *sd);
    sd->dt = fs->dt, sd->ndim = nd;
    for (int k = 0; k < nd; k++) sd->dims[k] = dims[TIDE_MAX_DIMS - nd + k];
    int out_k = -1; /* a step that is a node output takes that output's descriptor (exact dims) */
    for (int k = 0; k < f->n_outputs && k < n->n_out; k++)
      if (f->outputs[k] == s) out_k = k;
    if (out_k >= 0) *sd = n->out[out_k], sd->storage = NULL, sd->data = NULL;
    step_name[s] = ox_fresh(w->x, tide_op_name(fs->op));
    tide_attrs a;
    tide_fused_step_attrs(fs, &a);
    if (fs->op != TIDE_OP_CAST) a.dtype = 0;
    else a.dtype = fs->dt;
    const tide_tensor *dout[1] = {sd};
    int tag = fs->tag;
    st = map_op(w, fs->op, &a, fs->n_args, in, din, 1, &step_name[s], dout,
                tag >= 0 && tag < w->g->nnodes ? w->g->nodes[tag].origin : NULL);
  }
  if (st) return st;
  const char **names = ox_alloc(w->x, (size_t)(n->n_out > 0 ? n->n_out : 1) * sizeof *names);
  for (int k = 0; names && k < n->n_out; k++) {
    int s = k < f->n_outputs ? f->outputs[k] : -1;
    if (s < 0 || s >= f->n_steps)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "onnx.export: fused node %d output %d has no step", node, k);
    names[k] = step_name[s];
  }
  w->names[node] = names;
  return ox_status(w->x);
}

static tide_status write_node(walk *w, int i) {
  const gnode *n = &w->g->nodes[i];
  onnx_export *x = w->x;
  switch (n->kind) {
  case TIDE_NODE_INPUT: return TIDE_OK; /* named before the walk */
  case TIDE_NODE_CONST: {
    const char **names = ox_alloc(x, sizeof *names);
    if (names) names[0] = ox_init_tensor(x, &n->value, NULL);
    w->names[i] = names;
    return ox_status(x);
  }
  case TIDE_NODE_VARIABLE: {
    int k = 0;
    while (k < w->n_vars && w->handles[k] != n->handle) k++;
    if (k == w->n_vars)
      return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: the graph reads a variable (at %s) that is not among the "
                       "variables given", n->origin ? n->origin : "?");
    if (!w->var_init[k]) {
      tide_tensor snap; /* the variable's value now */
      memset(&snap, 0, sizeof snap);
      tide_status st = tide_tensor_share(&snap, n->handle);
      if (st) return st;
      x->op = "variable", x->origin = n->origin;
      w->var_init[k] = ox_init_tensor(x, &snap, w->var_names[k]);
      tide_tensor_release(&snap);
    }
    const char **names = ox_alloc(x, sizeof *names);
    if (names) names[0] = w->var_init[k];
    w->names[i] = names;
    return ox_status(x);
  }
  case TIDE_NODE_OP: {
    const char *in[GRAPH_STACK_VALUES];
    const tide_tensor *din[GRAPH_STACK_VALUES], *dout[GRAPH_STACK_VALUES];
    const char **ins = n->n_in <= GRAPH_STACK_VALUES ? in : ox_alloc(x, (size_t)n->n_in * sizeof *ins);
    const tide_tensor **dins = n->n_in <= GRAPH_STACK_VALUES ? din : ox_alloc(x, (size_t)n->n_in * sizeof *dins);
    const tide_tensor **douts = n->n_out <= GRAPH_STACK_VALUES ? dout : ox_alloc(x, (size_t)n->n_out * sizeof *douts);
    const char **outs = out_names(w, n->n_out, tide_op_name(n->op));
    if (!ins || !dins || !douts || !outs) return ox_status(x);
    for (int k = 0; k < n->n_in; k++) ins[k] = value_name(w, n->in[k]), dins[k] = gval_desc((tide_graph *)w->g, n->in[k]);
    for (int k = 0; k < n->n_out; k++) douts[k] = &n->out[k];
    w->names[i] = outs;
    return map_op(w, n->op, &n->attrs, n->n_in, ins, dins, n->n_out, outs, douts, n->origin);
  }
  case TIDE_NODE_FUSED: return write_fused(w, i);
  default:
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "onnx.export: %s (at %s) has no ONNX mapping", kind_name(n->kind),
                     n->origin ? n->origin : "?");
  }
}

/* A ValueInfo for a graph input or output: dtype and dims, free dims symbolic when
 * `params` (an input: "batch" for the first, "<name>_dim<k>" after), else left unnamed. */
static Onnx__ValueInfoProto *value_info(onnx_export *x, const char *name, const tide_tensor *d, bool params) {
  Onnx__ValueInfoProto *v = ox_alloc(x, sizeof *v);
  Onnx__TypeProto *t = ox_alloc(x, sizeof *t);
  Onnx__TypeProto__Tensor *tt = ox_alloc(x, sizeof *tt);
  if (!v || !t || !tt) return NULL;
  onnx__value_info_proto__init(v);
  onnx__type_proto__init(t);
  onnx__type_proto__tensor__init(tt);
  v->name = ox_strdup(x, name);
  v->type = t;
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tensor_type = tt;
  tt->has_elem_type = 1, tt->elem_type = ox_dtype(d->dt);
  if (d->ndim >= 0) {
    Onnx__TensorShapeProto *s = ox_alloc(x, sizeof *s);
    Onnx__TensorShapeProto__Dimension **dims = ox_alloc(x, (size_t)(d->ndim + 1) * sizeof *dims);
    if (!s || !dims) return NULL;
    onnx__tensor_shape_proto__init(s);
    for (int k = 0; k < d->ndim; k++) {
      Onnx__TensorShapeProto__Dimension *dim = ox_alloc(x, sizeof *dim);
      if (!dim) return NULL;
      onnx__tensor_shape_proto__dimension__init(dim);
      if (d->dims[k] >= 0) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = d->dims[k];
      } else if (params) {
        char buf[300];
        if (k == 0) snprintf(buf, sizeof buf, "batch");
        else snprintf(buf, sizeof buf, "%s_dim%d", name, k);
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        if (!(dim->dim_param = ox_strdup(x, buf))) return NULL;
      }
      dims[k] = dim;
    }
    s->dim = dims, s->n_dim = (size_t)d->ndim;
    tt->shape = s;
  }
  return v->name ? v : NULL;
}

static tide_status check_names(const char *what, int n, const char *const *names) {
  for (int i = 0; i < n; i++) {
    if (!names || !names[i] || !*names[i])
      return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: %s name %d is empty", what, i);
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: two %ss are named '%s'", what, names[i]);
  }
  return TIDE_OK;
}

/* Pack the model and write it at path in one go. */
static tide_status write_model(onnx_export *x, Onnx__ModelProto *mp, const char *path) {
  size_t len = onnx__model_proto__get_packed_size(mp);
  if (len > (size_t)INT32_MAX)
    return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: the model would take %zu bytes, past protobuf's 2 GB limit "
                     "(tide does not write external data yet)", len);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return TIDE_FAIL(TIDE_ERR_MEMORY, "onnx.export: out of memory for %zu bytes", len);
  onnx__model_proto__pack(mp, buf);
  (void)x;
  atomic_file f;
  tide_status st = atomic_file_begin(&f, path, "onnx.export");
  if (!st && (st = atomic_file_write(&f, buf, len)) != TIDE_OK) atomic_file_abort(&f);
  else if (!st) st = atomic_file_commit(&f);
  free(buf);
  return st;
}

static tide_status export_graph(onnx_export *x, const tide_graph *g, const char *path, int n_in,
                                const char *const *in_names, int n_out, const char *const *out_names, int n_vars,
                                tide_tensor *const *handles, const char *const *var_names) {
  missing m = {0};
  find_missing(x, g, &m);
  if (m.n) return missing_error(&m, x->opset);
  /* User names first, so fresh names avoid them. */
  for (int k = 0; k < n_in; k++) ox_take_name(x, in_names[k]);
  for (int k = 0; k < n_out; k++)
    if (!ox_take_name(x, out_names[k]))
      return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: output name '%s' is also an input's name", out_names[k]);
  walk w = {x, g, NULL, n_vars, handles, var_names, NULL};
  w.names = ox_alloc(x, ((size_t)g->nnodes + 1) * sizeof *w.names);
  w.var_init = ox_alloc(x, ((size_t)n_vars + 1) * sizeof *w.var_init);
  if (!w.names || !w.var_init) return ox_status(x);
  /* Variable names: unique, and apart from the inputs and outputs. */
  const char **vnames = ox_alloc(x, ((size_t)n_vars + 1) * sizeof *vnames);
  for (int k = 0; vnames && k < n_vars; k++) {
    const char *base = var_names && var_names[k] && *var_names[k] ? var_names[k] : "variable";
    vnames[k] = ox_take_name(x, base) ? ox_strdup(x, base) : ox_fresh(x, base);
  }
  w.var_names = vnames;
  tide_status st = ox_status(x);
  for (int k = 0; !st && k < g->n_inputs; k++) {
    const char **names = ox_alloc(x, sizeof *names);
    if (names) names[0] = in_names[k];
    w.names[g->inputs[k]] = names;
    st = ox_status(x);
  }
  for (int i = 0; !st && i < g->nnodes; i++)
    if (!(g->nodes[i].flags & NODE_DEAD)) st = write_node(&w, i);
  if (st) return st;
  /* Each output through an Identity that gives it its name. */
  Onnx__ValueInfoProto **ins = ox_alloc(x, ((size_t)n_in + 1) * sizeof *ins);
  Onnx__ValueInfoProto **outs = ox_alloc(x, ((size_t)n_out + 1) * sizeof *outs);
  if (!ins || !outs) return ox_status(x);
  for (int k = 0; k < n_out; k++) {
    x->op = "output", x->origin = NULL;
    ox_op1(x, "Identity", value_name(&w, g->outputs[k]), out_names[k]);
    outs[k] = value_info(x, out_names[k], gval_desc((tide_graph *)g, g->outputs[k]), false);
  }
  for (int k = 0; k < n_in; k++) ins[k] = value_info(x, in_names[k], &g->nodes[g->inputs[k]].out[0], true);
  if ((st = ox_status(x)) != TIDE_OK) return st;

  Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
  gp.name = g->name ? g->name : "tide";
  gp.node = x->nodes, gp.n_node = x->n_nodes;
  gp.initializer = x->inits, gp.n_initializer = x->n_inits;
  gp.input = ins, gp.n_input = (size_t)n_in;
  gp.output = outs, gp.n_output = (size_t)n_out;
  Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT, *osp = &os;
  os.domain = "", os.has_version = 1, os.version = x->opset;
  Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
  mp.has_ir_version = 1, mp.ir_version = ir_version(x->opset);
  mp.opset_import = &osp, mp.n_opset_import = 1;
  mp.producer_name = "tide";
  mp.graph = &gp;
  return write_model(x, &mp, path);
}

tide_status tide_onnx_export(const tide_graph *g, const char *path, int opset, int n_in, const char *const *in_names,
                             int n_out, const char *const *out_names, int n_vars, tide_tensor *const *handles,
                             const char *const *var_names) {
  tide_clear_error();
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: no graph");
  if (!g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: graph '%s' is not finalized", g->name ? g->name : "?");
  if (!path || !*path) return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: path must be a file name");
  if (opset == 0) opset = TIDE_ONNX_EXPORT_OPSET;
  if (opset < TIDE_ONNX_MIN_OPSET || opset > TIDE_ONNX_MAX_OPSET)
    return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: opset %d is not written (opsets %d to %d are)", opset,
                     TIDE_ONNX_MIN_OPSET, TIDE_ONNX_MAX_OPSET);
  if (n_in != g->n_inputs || n_out != g->n_outputs)
    return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: the graph has %d inputs and %d outputs, but %d and %d names were "
                     "given", g->n_inputs, g->n_outputs, n_in, n_out);
  if (n_vars < 0 || (n_vars > 0 && !handles)) return TIDE_FAIL(TIDE_ERR_VALUE, "onnx.export: bad variable list");
  tide_status st = check_names("input", n_in, in_names);
  if (!st) st = check_names("output", n_out, out_names);
  if (st) return st;
  onnx_export x;
  memset(&x, 0, sizeof x);
  x.opset = opset;
  st = export_graph(&x, g, path, n_in, in_names, n_out, out_names, n_vars, handles, var_names);
  ox_arena_free(&x);
  return st;
}
