/* graph/build.c — making graphs: nodes, the per-thread stack of graphs being
 * built, and the registry hook that turns ops on symbolic tensors into nodes
 * (capturing eager tensors as constants and enclosing graphs' values). */
#include "graph_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local tide_graph *tide_graph_current;
static uint64_t next_graph_id = 1;

tide_graph *tide_graph_new(const char *name) {
  tide_graph *g = calloc(1, sizeof *g);
  if (!g) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    return NULL;
  }
  g->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
  g->name = strdup(name ? name : "graph");
  return g;
}

static void free_node(gnode *n) {
  free(n->in);
  free(n->out);
  if (n->kind == TIDE_NODE_CONST) tide_tensor_release(&n->value);
  free(n->text);
  free(n->origin);
  for (int k = 0; k < 2; k++) tide_graph_free(n->sub[k]);
  free(n->fused);
}

void tide_graph_free(tide_graph *g) {
  if (!g) return;
  if (g->building && tide_graph_current == g) tide_graph_current = g->parent;
  tide_graph_drop_plans(g);
  for (int i = 0; i < g->nnodes; i++) free_node(&g->nodes[i]);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->captures);
  free(g->name);
  free(g->text_cache);
  free(g);
}

uint64_t tide_graph_id(const tide_graph *g) { return g ? g->id : 0; }

tide_graph *tide_graph_building(void) { return tide_graph_current; }

tide_status tide_graph_begin(tide_graph *g) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph: NULL graph");
  if (g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' is finalized; it cannot grow", g->name);
  if (g->building) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' is already being built", g->name);
  g->parent = tide_graph_current;
  g->building = true;
  tide_graph_current = g;
  return TIDE_OK;
}

tide_status tide_graph_end(tide_graph *g) {
  if (!g || tide_graph_current != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph: only the innermost graph being built can end");
  tide_graph_current = g->parent;
  g->building = false;
  return TIDE_OK;
}

int tide_graph_add_node(tide_graph *g, int kind, int n_in, int n_out) {
  if (g->nnodes == g->cap) {
    int cap = g->cap ? 2 * g->cap : 64;
    gnode *grown = realloc(g->nodes, (size_t)cap * sizeof *grown);
    if (!grown) {
      TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
      return -1;
    }
    /* A small constant keeps its data inside its node: re-point it after the move. */
    for (int i = 0; i < g->nnodes; i++)
      if (grown[i].kind == TIDE_NODE_CONST && (grown[i].value.flags & TIDE_TENSOR_INLINE))
        grown[i].value.data = grown[i].value.inline_data.bytes;
    g->nodes = grown;
    g->cap = cap;
  }
  gnode *n = &g->nodes[g->nnodes];
  memset(n, 0, sizeof *n);
  n->kind = kind;
  n->n_in = n_in;
  n->n_out = n_out;
  n->in = n_in ? calloc((size_t)n_in, sizeof *n->in) : NULL;
  n->out = n_out ? calloc((size_t)n_out, sizeof *n->out) : NULL;
  if ((n_in && !n->in) || (n_out && !n->out)) {
    free(n->in);
    free(n->out);
    TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    return -1;
  }
  free(g->text_cache);
  g->text_cache = NULL;
  return g->nnodes++;
}

void tide_graph_symbolic(tide_graph *g, int node, int index, tide_tensor *t) {
  const tide_tensor *d = &g->nodes[node].out[index];
  memset(t, 0, sizeof *t);
  t->ndim = d->ndim;
  t->dt = d->dt;
  for (int i = 0; i < d->ndim; i++) t->dims[i] = d->dims[i], t->strides[i] = d->strides[i];
  t->nelem = d->nelem;
  t->dev = TIDE_CPU;
  t->flags = TIDE_TENSOR_SYMBOLIC;
  t->inline_data.sym.graph_id = g->id;
  t->inline_data.sym.node = node;
  t->inline_data.sym.index = index;
}

/* Set a descriptor from dtype and dims that may hold -1 (unknown). */
static void set_desc(tide_tensor *d, int dtype, int ndim, const int64_t *dims) {
  memset(d, 0, sizeof *d);
  d->dt = dtype;
  d->ndim = ndim;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    d->dims[i] = dims[i];
    n = (n < 0 || dims[i] < 0) ? -1 : n * dims[i];
  }
  d->nelem = n;
  d->flags = TIDE_TENSOR_SYMBOLIC;
}

static tide_status require_building(tide_graph *g, const char *what) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: NULL graph", what);
  if (!g->building || tide_graph_current != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: graph '%s' is not the graph being built", what, g->name);
  return TIDE_OK;
}

tide_status tide_graph_input(tide_graph *g, int dtype, int ndim, const int64_t *dims, tide_tensor *out) {
  tide_status st = require_building(g, "graph input");
  if (st) return st;
  if (dtype < 0 || dtype >= TIDE_NUM_DTYPES) return TIDE_FAIL(TIDE_ERR_DTYPE, "graph input: bad dtype %d", dtype);
  if (ndim < 0 || ndim > TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_SHAPE, "graph input: bad rank %d", ndim);
  for (int i = 0; i < ndim; i++)
    if (dims[i] < -1) return TIDE_FAIL(TIDE_ERR_SHAPE, "graph input: bad dimension %lld", (long long)dims[i]);
  int *grown = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->inputs = grown;
  int node = tide_graph_add_node(g, TIDE_NODE_INPUT, 0, 1);
  if (node < 0) return tide_last_status();
  g->nodes[node].input_index = g->n_inputs;
  g->inputs[g->n_inputs++] = node;
  set_desc(&g->nodes[node].out[0], dtype, ndim, dims);
  tide_graph_symbolic(g, node, 0, out);
  return TIDE_OK;
}

/* A CONST node holding (a share of) the eager tensor t; the same tensor twice is one node. */
static int const_node(tide_graph *g, const tide_tensor *t) {
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if (n->kind != TIDE_NODE_CONST || n->value.dt != t->dt || n->value.ndim != t->ndim) continue;
    if (t->flags & TIDE_TENSOR_INLINE) continue; /* inline data: compare by value is not worth it */
    if (n->value.data != t->data || n->value.storage != t->storage) continue;
    bool same = true;
    for (int d = 0; d < t->ndim && same; d++)
      same = n->value.dims[d] == t->dims[d] && n->value.strides[d] == t->strides[d];
    if (same) return i;
  }
  int node = tide_graph_add_node(g, TIDE_NODE_CONST, 0, 1);
  if (node < 0) return -1;
  gnode *n = &g->nodes[node];
  tide_tensor_share(&n->value, t);
  set_desc(&n->out[0], t->dt, t->ndim, t->dims);
  return node;
}

/* The value naming symbolic tensor t inside g, capturing it from an
 * enclosing graph when needed; -1 (error set) when t is from no enclosing graph. */
static tide_status value_of(tide_graph *g, const tide_tensor *t, gvalue *v, const char *op) {
  if (!(t->flags & TIDE_TENSOR_SYMBOLIC)) {
    int node = const_node(g, t);
    if (node < 0) return tide_last_status();
    *v = (gvalue){node, 0};
    return TIDE_OK;
  }
  if (t->inline_data.sym.graph_id == g->id) {
    int node = t->inline_data.sym.node, index = t->inline_data.sym.index;
    if (node < 0 || node >= g->nnodes || index < 0 || index >= g->nodes[node].n_out)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: symbolic tensor names no value of graph '%s'", op, g->name);
    *v = (gvalue){node, index};
    return TIDE_OK;
  }
  if (!g->parent)
    return TIDE_FAIL(TIDE_ERR_VALUE,
                     "%s: a symbolic tensor of another traced function (or of a finished trace) is used here; "
                     "return tensors from traced functions instead of keeping them",
                     op);
  gvalue outer;
  tide_status st = value_of(g->parent, t, &outer, op);
  if (st) return st;
  for (int k = 0; k < g->n_captures; k++) {
    gnode *n = &g->nodes[g->captures[k]];
    if (n->capture.node == outer.node && n->capture.index == outer.index) {
      *v = (gvalue){g->captures[k], 0};
      return TIDE_OK;
    }
  }
  int *grown = realloc(g->captures, (size_t)(g->n_captures + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->captures = grown;
  int node = tide_graph_add_node(g, TIDE_NODE_CAPTURE, 0, 1);
  if (node < 0) return tide_last_status();
  g->nodes[node].capture = outer;
  g->nodes[node].out[0] = *gval_desc(g->parent, outer);
  g->captures[g->n_captures++] = node;
  *v = (gvalue){node, 0};
  return TIDE_OK;
}

tide_status tide_graph_record_op(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                 const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  tide_graph *g = tide_graph_current;
  if (!g) {
    for (int i = 0; i < n_in; i++)
      if (in[i]->flags & TIDE_TENSOR_SYMBOLIC)
        return TIDE_FAIL(TIDE_ERR_VALUE,
                         "%s: input %d is a symbolic tensor of a traced function, used outside its trace; "
                         "return it from the function instead of keeping it",
                         def->name, i + 1);
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no graph is being built", def->name);
  }
  /* Shapes and dtypes of the outputs, from the inputs' descriptors. */
  const tide_tensor *descs[64];
  gvalue vals[64];
  if (n_in > 64) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: more than 64 inputs in a traced graph", def->name);
  for (int i = 0; i < n_in; i++) {
    tide_status st = value_of(g, in[i], &vals[i], def->name);
    if (st) return st;
    descs[i] = gval_desc(g, vals[i]);
  }
  tide_tensor tmp[4];
  tide_tensor *tmp_out[4] = {&tmp[0], &tmp[1], &tmp[2], &tmp[3]};
  if (n_out > 4) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: too many outputs", def->name);
  memset(tmp, 0, sizeof tmp);
  tide_status st = def->infer(def, attrs, n_in, descs, n_out, tmp_out);
  if (st) return st;
  int node = tide_graph_add_node(g, TIDE_NODE_OP, n_in, n_out);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  n->op = def->id;
  n->attrs = *attrs;
  for (int i = 0; i < n_in; i++) n->in[i] = vals[i];
  if (def->flags & TIDE_OPF_STATEFUL) {
    n->flags |= NODE_STATEFUL;
    if (attrs->flags & TIDE_ATTR_OP_SEED) {
      n->flags |= NODE_OP_SEED;
      n->rng_next = attrs->rng_counter;
    }
  }
  for (int k = 0; k < n_out; k++) {
    set_desc(&n->out[k], tmp[k].dt, tmp[k].ndim, tmp[k].dims);
    tide_graph_symbolic(g, node, k, out[k]);
  }
  return TIDE_OK;
}

tide_status tide_graph_constant(tide_graph *g, const tide_tensor *value, tide_tensor *out) {
  tide_status st = require_building(g, "graph constant");
  if (st) return st;
  if (!value || (value->flags & TIDE_TENSOR_SYMBOLIC))
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph constant: the value must be an eager tensor");
  int node = const_node(g, value);
  if (node < 0) return tide_last_status();
  tide_graph_symbolic(g, node, 0, out);
  return TIDE_OK;
}

tide_status tide_graph_variable(tide_graph *g, tide_tensor *handle, tide_tensor *out) {
  tide_status st = require_building(g, "graph variable");
  if (st) return st;
  if (!handle || (handle->flags & TIDE_TENSOR_SYMBOLIC))
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph variable: the handle must be an eager tensor");
  for (int i = 0; i < g->nnodes; i++) { /* one read node per variable... */
    gnode *n = &g->nodes[i];
    if (n->kind == TIDE_NODE_VARIABLE && n->handle == handle) {
      /* ...unless an assign to it came after: a later read must see the new value */
      bool assigned_after = false;
      for (int j = i + 1; j < g->nnodes; j++)
        if (g->nodes[j].kind == TIDE_NODE_ASSIGN && g->nodes[j].handle == handle) assigned_after = true;
      if (!assigned_after) {
        tide_graph_symbolic(g, i, 0, out);
        return TIDE_OK;
      }
    }
  }
  int node = tide_graph_add_node(g, TIDE_NODE_VARIABLE, 0, 1);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  n->handle = handle;
  n->flags |= NODE_STATEFUL;
  set_desc(&n->out[0], handle->dt, handle->ndim, handle->dims);
  tide_graph_symbolic(g, node, 0, out);
  return TIDE_OK;
}

tide_status tide_graph_assign(tide_graph *g, tide_tensor *handle, int mode, const tide_tensor *value) {
  tide_status st = require_building(g, "graph assign");
  if (st) return st;
  if (mode < TIDE_ASSIGN_SET || mode > TIDE_ASSIGN_SUB) return TIDE_FAIL(TIDE_ERR_VALUE, "assign: bad mode %d", mode);
  gvalue v;
  st = value_of(g, value, &v, "assign");
  if (st) return st;
  const tide_tensor *d = gval_desc(g, v);
  char sv[128], sx[128];
  if (d->dt != handle->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "assign: the variable is %s but the value is %s (use :cast)",
                     tide_dtype_name(handle->dt), tide_dtype_name(d->dt));
  bool same = d->ndim == handle->ndim;
  for (int i = 0; same && i < d->ndim; i++) same = d->dims[i] == handle->dims[i] || d->dims[i] < 0;
  if (!same)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "assign: the variable has shape %s but the value has shape %s",
                     TIDE_SHAPE_STR(sv, handle), TIDE_SHAPE_STR(sx, d));
  int node = tide_graph_add_node(g, TIDE_NODE_ASSIGN, 1, 0);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  n->handle = handle;
  n->assign_mode = mode;
  n->in[0] = v;
  n->flags |= NODE_STATEFUL;
  return TIDE_OK;
}

tide_status tide_graph_print(tide_graph *g, const char *text, int n, const tide_tensor *const *tensors) {
  tide_status st = require_building(g, "tide.print");
  if (st) return st;
  int node = tide_graph_add_node(g, TIDE_NODE_PRINT, n, 0);
  if (node < 0) return tide_last_status();
  for (int i = 0; i < n; i++) {
    st = value_of(g, tensors[i], &g->nodes[node].in[i], "tide.print");
    if (st) return st;
  }
  g->nodes[node].text = strdup(text ? text : "");
  g->nodes[node].flags |= NODE_STATEFUL;
  return TIDE_OK;
}

tide_status tide_graph_set_outputs(tide_graph *g, int n, const tide_tensor *const *outs) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph outputs: NULL graph");
  if (g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "graph outputs: graph '%s' is finalized", g->name);
  gvalue *vals = n ? calloc((size_t)n, sizeof *vals) : NULL;
  if (n && !vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  /* Values of enclosing graphs are captured, so outputs may be any of them. */
  for (int i = 0; i < n; i++) {
    tide_status st = value_of(g, outs[i], &vals[i], "graph outputs");
    if (st) {
      free(vals);
      return st;
    }
  }
  free(g->outputs);
  g->outputs = vals;
  g->n_outputs = n;
  return TIDE_OK;
}

tide_status tide_graph_set_origin(tide_graph *g, const tide_tensor *t, const char *where) {
  if (!g || !t || !(t->flags & TIDE_TENSOR_SYMBOLIC) || t->inline_data.sym.graph_id != g->id) return TIDE_OK;
  int node = t->inline_data.sym.node;
  if (node < 0 || node >= g->nnodes || g->nodes[node].origin) return TIDE_OK;
  g->nodes[node].origin = strdup(where ? where : "");
  return TIDE_OK;
}

tide_status tide_graph_finalize(tide_graph *g, unsigned passes) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph: NULL graph");
  if (g->building) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' is still being built", g->name);
  if (g->finalized) return TIDE_OK;
  tide_status st = tide_graph_run_passes(g, passes);
  if (st) return st;
  g->finalized = true;
  free(g->text_cache);
  g->text_cache = NULL;
  return TIDE_OK;
}

int tide_graph_num_inputs(const tide_graph *g) { return g ? g->n_inputs : 0; }
int tide_graph_num_outputs(const tide_graph *g) { return g ? g->n_outputs : 0; }

int tide_graph_num_nodes(const tide_graph *g) {
  int n = 0;
  for (int i = 0; g && i < g->nnodes; i++)
    if (!(g->nodes[i].flags & NODE_DEAD)) n++;
  return n;
}

int64_t tide_graph_planned_bytes(const tide_graph *g) { return g ? g->planned_bytes : 0; }
