/* graph/build.c — making graphs: nodes, the per-thread stack of graphs being
 * built (held in core's recorder slot), and the recorder that turns ops on
 * symbolic tensors into nodes (capturing eager tensors as constants and
 * enclosing graphs' values). */
#include "graph_internal.h"
#include "tide/profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next_graph_id = 1;

/* Live graphs by id, so an error about a leaked symbolic tensor can say
 * where it was made (the graph may be gone: then it says so). */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static tide_graph **live;
static int nlive, caplive;

static void live_add(tide_graph *g) {
  pthread_mutex_lock(&live_lock);
  if (nlive == caplive) {
    int cap = caplive ? 2 * caplive : 64;
    tide_graph **grown = realloc(live, (size_t)cap * sizeof *grown);
    if (grown) live = grown, caplive = cap;
  }
  if (nlive < caplive) live[nlive++] = g;
  pthread_mutex_unlock(&live_lock);
}

static void live_remove(tide_graph *g) {
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < nlive; i++)
    if (live[i] == g) {
      live[i] = live[--nlive];
      break;
    }
  pthread_mutex_unlock(&live_lock);
}

/* "made at f.lua:12 in graph 'f'" for symbolic tensor t, into buf. */
static const char *origin_of(const tide_tensor *t, char *buf, size_t size) {
  snprintf(buf, size, "made in a trace that no longer exists");
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < nlive; i++) {
    tide_graph *g = live[i];
    if (g->id != t->inline_data.sym.graph_id) continue;
    int node = t->inline_data.sym.node;
    if (node >= 0 && node < g->nnodes && g->nodes[node].origin)
      snprintf(buf, size, "made at %s while tracing '%s'", g->nodes[node].origin, g->name);
    else
      snprintf(buf, size, "made while tracing '%s'", g->name);
    break;
  }
  pthread_mutex_unlock(&live_lock);
  return buf;
}

static tide_status record_op(void *ctx, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                             const tide_tensor *const *in, int n_out, tide_tensor *const *out);

/* Symbolic tensors exist once a graph does: from then on, one used on a
 * thread that is not tracing comes to record_op, which says where it was made. */
static void set_default_recorder(void) { tide_set_default_recorder((tide_recorder){record_op, NULL}); }

tide_graph *tide_graph_new(const char *name) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, set_default_recorder);
  tide_graph *g = calloc(1, sizeof *g);
  if (!g) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    return NULL;
  }
  g->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
  g->name = strdup(name ? name : "graph");
  live_add(g);
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
  if (n->kind == TIDE_NODE_EFFECT && n->effect && n->effect->release) n->effect->release(n->effect_ctx);
}

/* The graph begun on this thread right after g (g is its outer recorder's
 * context), or NULL when g is innermost or not being built on this thread. */
static tide_graph *built_on_top_of(const tide_graph *g) {
  tide_recorder r = tide_get_recorder();
  tide_graph *above = NULL;
  while (r.record == record_op && r.ctx) {
    tide_graph *cur = r.ctx;
    if (cur == g) return above;
    above = cur;
    r = cur->outer_recorder;
  }
  return NULL;
}

void tide_graph_retain(tide_graph *g) { __atomic_add_fetch(&g->holds, 1, __ATOMIC_RELAXED); }

void tide_graph_free(tide_graph *g) {
  if (!g) return;
  /* Another holder (an input pipeline's map) keeps it: the last one frees it. */
  if (__atomic_load_n(&g->holds, __ATOMIC_ACQUIRE) > 0 && __atomic_fetch_sub(&g->holds, 1, __ATOMIC_ACQ_REL) > 0) return;
  live_remove(g);
  if (g->building) {
    /* Freed while being built (its builder was abandoned): take it out of
     * this thread's chain of recorders, so none is restored to a freed graph. */
    tide_graph *above = built_on_top_of(g);
    if (tide_graph_building() == g) tide_set_recorder(g->outer_recorder);
    else if (above) {
      above->outer_recorder = g->outer_recorder;
      if (above->parent == g) above->parent = NULL; /* its captures of g can no longer be taken */
    }
  }
  tide_graph_index_free(g);
  tide_graph_drop_plans(g);
  for (int i = 0; i < g->nnodes; i++) free_node(&g->nodes[i]);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->captures);
  free(g->aliases);
  free(g->pins);
  free(g->name);
  free(g->text_cache);
  free(g);
}

uint64_t tide_graph_id(const tide_graph *g) { return g ? g->id : 0; }

/* The graph being built on this thread is the context of its recorder. */
tide_graph *tide_graph_building(void) {
  tide_recorder r = tide_get_recorder();
  return r.record == record_op ? r.ctx : NULL;
}

tide_status tide_graph_begin(tide_graph *g) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph: NULL graph");
  if (g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' is finalized; it cannot grow", g->name);
  if (g->building) return TIDE_FAIL(TIDE_ERR_VALUE, "graph '%s' is already being built", g->name);
  g->parent = tide_graph_building();
  g->building = true;
  g->outer_recorder = tide_set_recorder((tide_recorder){record_op, g});
  return TIDE_OK;
}

tide_status tide_graph_end(tide_graph *g) {
  if (!g || tide_graph_building() != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph: only the innermost graph being built can end");
  tide_set_recorder(g->outer_recorder);
  g->building = false;
  return TIDE_OK;
}

void tide_graph_abandon(tide_graph *g) {
  if (!g || !g->building) return;
  tide_graph *cur = tide_graph_building();
  if (cur != g && !built_on_top_of(g)) return; /* not being built on this thread */
  while (cur && cur != g) {
    cur->building = false;
    tide_recorder outer = cur->outer_recorder;
    cur = outer.record == record_op ? outer.ctx : NULL;
  }
  tide_set_recorder(g->outer_recorder);
  g->building = false;
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

/* Set a descriptor from dtype and dims that may hold -1 (unknown); ndim
 * TIDE_UNKNOWN_RANK gives a descriptor of unknown rank (dims unread). */
static void set_desc(tide_tensor *d, int dtype, int ndim, const int64_t *dims) {
  memset(d, 0, sizeof *d);
  d->dt = dtype;
  d->flags = TIDE_TENSOR_SYMBOLIC;
  if (ndim < 0) {
    d->ndim = TIDE_UNKNOWN_RANK;
    d->nelem = -1;
    return;
  }
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
  if (!g->building || tide_graph_building() != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: graph '%s' is not the graph being built", what, g->name);
  return TIDE_OK;
}

tide_status tide_graph_input(tide_graph *g, int dtype, int ndim, const int64_t *dims, tide_tensor *out) {
  tide_status st = require_building(g, "graph input");
  if (st) return st;
  if (dtype < 0 || dtype >= TIDE_NUM_DTYPES) return TIDE_FAIL(TIDE_ERR_DTYPE, "graph input: bad dtype %d", dtype);
  if (ndim < TIDE_UNKNOWN_RANK || ndim > TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_SHAPE, "graph input: bad rank %d", ndim);
  if (ndim > 0 && !dims) return TIDE_FAIL(TIDE_ERR_SHAPE, "graph input: dims is NULL for rank %d", ndim);
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

/* A CONST node holding (a share of) the eager tensor t; the same tensor (or
 * a small inline one of the same values) twice is one node. */
static int const_node(tide_graph *g, const tide_tensor *t) {
  if (t->dev != TIDE_CPU) { /* the executor runs CPU kernels on host memory */
    TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "graph '%s': a captured tensor is on a GPU; traced graphs run on the CPU only "
              "for now (capture t:cpu())", g->name);
    return -1;
  }
  int found = tide_graph_find_const(g, t);
  if (found >= 0) return found;
  int node = tide_graph_add_node(g, TIDE_NODE_CONST, 0, 1);
  if (node < 0) return -1;
  gnode *n = &g->nodes[node];
  tide_tensor_share(&n->value, t);
  set_desc(&n->out[0], t->dt, t->ndim, t->dims);
  if (tide_graph_note_const(g, node)) return -1; /* the node stays, unindexed: a later twin makes another */
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
  /* A value of another graph that a value of g stands for (graph/split.c:
   * a backward pass traced again over its forward's saved values). */
  if (g->n_aliases > 0 && tide_graph_find_alias(g, t, v)) return TIDE_OK;
  if (!g->parent) {
    char where[512];
    return TIDE_FAIL(TIDE_ERR_VALUE,
                     "%s: a symbolic tensor of another trace is used here (it was %s); return tensors from "
                     "traced functions instead of keeping them",
                     op, origin_of(t, where, sizeof where));
  }
  gvalue outer;
  tide_status st = value_of(g->parent, t, &outer, op);
  if (st) return st;
  int found = tide_graph_find_capture(g, outer);
  if (found >= 0) {
    *v = (gvalue){found, 0};
    return TIDE_OK;
  }
  int *grown = realloc(g->captures, (size_t)(g->n_captures + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->captures = grown;
  int node = tide_graph_add_node(g, TIDE_NODE_CAPTURE, 0, 1);
  if (node < 0) return tide_last_status();
  g->nodes[node].capture = outer;
  g->nodes[node].out[0] = *gval_desc(g->parent, outer);
  g->captures[g->n_captures++] = node;
  st = tide_graph_note_capture(g, node);
  if (st) return st;
  *v = (gvalue){node, 0};
  return TIDE_OK;
}

/* The recorder (core's hook, registry.h): record an op on symbolic inputs,
 * or a stateful op, as a node of g (NULL: called as the default recorder, on
 * a thread building no graph). */
static tide_status record_op(void *ctx, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                             const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  tide_graph *g = ctx;
  if (!g) {
    for (int i = 0; i < n_in; i++)
      if (in[i]->flags & TIDE_TENSOR_SYMBOLIC) {
        char where[512];
        return TIDE_FAIL(TIDE_ERR_VALUE,
                         "%s: input %d is a symbolic tensor of a traced function (%s), used outside its trace; "
                         "return it from the function instead of keeping it",
                         def->name, i + 1, origin_of(in[i], where, sizeof where));
      }
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: no graph is being built", def->name);
  }
  /* Shapes and dtypes of the outputs, from the inputs' descriptors (on the
   * heap for ops of many inputs: concat takes any number). */
  const tide_tensor *desc_stack[GRAPH_STACK_VALUES], **descs = desc_stack;
  gvalue val_stack[GRAPH_STACK_VALUES], *vals = val_stack;
  __attribute__((cleanup(graph_free_at))) void *heap = NULL;
  if (n_in > GRAPH_STACK_VALUES) {
    if (!(heap = malloc((size_t)n_in * (sizeof *descs + sizeof *vals)))) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    descs = heap;
    vals = (gvalue *)(descs + n_in);
  }
  for (int i = 0; i < n_in; i++) {
    tide_status st = value_of(g, in[i], &vals[i], def->name);
    if (st) return st;
  }
  /* The descriptors point into g->nodes, so they are taken only once every
   * input has its node: value_of may add a constant's node, and adding one
   * can move the array. A constant's value, so that ops reading an input's
   * values to infer (a shape input, TIDE_OPF_SHAPE_INPUT) know them while tracing. */
  for (int i = 0; i < n_in; i++) {
    gnode *src = &g->nodes[vals[i].node];
    descs[i] = src->kind == TIDE_NODE_CONST ? &src->value : gval_desc(g, vals[i]);
  }
  /* The outputs' descriptors: on the heap for an op of many outputs
   * (all_reduce_sum gives one per input). */
  tide_tensor tmp_stack[4], *tmp = tmp_stack;
  tide_tensor *tmp_out_stack[4], **tmp_out = tmp_out_stack;
  __attribute__((cleanup(graph_free_at))) void *heap_out = NULL;
  if (n_out > 4) {
    if (!(heap_out = malloc((size_t)n_out * (sizeof *tmp + sizeof *tmp_out))))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    tmp = heap_out;
    tmp_out = (tide_tensor **)(tmp + n_out);
  }
  memset(tmp, 0, (size_t)(n_out > 4 ? n_out : 4) * sizeof *tmp);
  for (int k = 0; k < n_out; k++) tmp_out[k] = &tmp[k];
  tide_status st = tide_infer(def, attrs, n_in, descs, n_out, tmp_out);
  if (st) return st;
  int node = tide_graph_add_node(g, TIDE_NODE_OP, n_in, n_out);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  n->op = def->id;
  n->attrs = *attrs;
  for (int i = 0; i < n_in; i++) n->in[i] = vals[i];
  if (def->flags & (TIDE_OPF_STATEFUL | TIDE_OPF_EFFECT)) n->flags |= NODE_STATEFUL;
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
  /* A read pinned to a value read earlier (graph/split.c: a gradient running
   * a loop body or branch again reads what the forward read). */
  const tide_tensor *pinned = g->n_pins || g->parent ? tide_graph_find_pin(g, handle) : NULL;
  if (pinned) {
    gvalue v;
    st = value_of(g, pinned, &v, "graph variable");
    if (st) return st;
    tide_graph_symbolic(g, v.node, v.index, out);
    return TIDE_OK;
  }
  /* One read node per variable, unless an assign to it came after the read
   * (a later read must see the new value). */
  int found = tide_graph_find_read(g, handle);
  if (found >= 0) {
    tide_graph_symbolic(g, found, 0, out);
    return TIDE_OK;
  }
  int node = tide_graph_add_node(g, TIDE_NODE_VARIABLE, 0, 1);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  n->handle = handle;
  n->flags |= NODE_STATEFUL;
  set_desc(&n->out[0], handle->dt, handle->ndim, handle->dims);
  st = tide_graph_note_read(g, node);
  if (st) return st;
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
  bool same = d->ndim == handle->ndim || d->ndim < 0; /* unknown dims or rank: checked when it runs */
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
  return tide_graph_note_assigns(g, node);
}

/* The values of n tensors, into vals (n of them): made before the node that
 * reads them, so an eager tensor's constant node comes first (a node reads
 * only earlier nodes, which a SavedModel requires). */
static tide_status values_of(tide_graph *g, int n, const tide_tensor *const *tensors, gvalue *vals, const char *what) {
  for (int i = 0; i < n; i++) {
    tide_status st = value_of(g, tensors[i], &vals[i], what);
    if (st) return st;
  }
  return TIDE_OK;
}

tide_status tide_graph_print(tide_graph *g, const char *text, int n, const tide_tensor *const *tensors) {
  tide_status st = require_building(g, "tide.print");
  if (st) return st;
  gvalue stack[GRAPH_STACK_VALUES];
  gvalue *vals = graph_scratch(stack, GRAPH_STACK_VALUES, n, sizeof *vals);
  if (!vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "tide.print: out of memory");
  st = values_of(g, n, tensors, vals, "tide.print");
  int node = st ? -1 : tide_graph_add_node(g, TIDE_NODE_PRINT, n, 0);
  if (node >= 0) {
    memcpy(g->nodes[node].in, vals, sizeof *vals * (size_t)n);
    g->nodes[node].text = strdup(text ? text : "");
    g->nodes[node].flags |= NODE_STATEFUL;
  } else if (!st) {
    st = tide_last_status();
  }
  graph_scratch_free(vals, stack);
  return st;
}

tide_status tide_graph_effect(tide_graph *g, const tide_effect *fx, void *ctx, int n, const tide_tensor *const *inputs) {
  const char *what = fx && fx->name ? fx->name : "graph effect";
  tide_status st = !fx || !fx->run ? TIDE_FAIL(TIDE_ERR_VALUE, "%s: no function to run", what)
                 : n < 0 || (n > 0 && !inputs) ? TIDE_FAIL(TIDE_ERR_VALUE, "%s: bad inputs", what)
                 : require_building(g, what);
  gvalue stack[GRAPH_STACK_VALUES];
  gvalue *vals = st ? NULL : graph_scratch(stack, GRAPH_STACK_VALUES, n, sizeof *vals);
  if (!st && !vals) st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", what);
  if (!st) st = values_of(g, n, inputs, vals, what);
  int node = st ? -1 : tide_graph_add_node(g, TIDE_NODE_EFFECT, n, 0);
  if (node < 0) {
    if (vals) graph_scratch_free(vals, stack);
    if (fx && fx->release) fx->release(ctx);
    return st ? st : tide_last_status();
  }
  gnode *nd = &g->nodes[node];
  memcpy(nd->in, vals, sizeof *vals * (size_t)n);
  graph_scratch_free(vals, stack);
  nd->effect = fx;
  nd->effect_ctx = ctx; /* owned from here: free_node releases it */
  nd->flags |= NODE_STATEFUL;
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
  int64_t t0 = tide_hooks_now() & TIDE_HOOK_PROFILE ? tide_prof_now() : 0;
  tide_status st = tide_graph_run_passes(g, passes);
  if (t0) tide_profiler_add_compile("graph_passes", g->name, t0, tide_prof_now());
  if (st) return st;
  g->finalized = true;
  tide_graph_index_free(g); /* building is over */
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

int tide_graph_has_effects(const tide_graph *g) {
  for (int i = 0; g && i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    if (n->kind == TIDE_NODE_ASSIGN || n->kind == TIDE_NODE_PRINT || n->kind == TIDE_NODE_EFFECT) return 1;
    if (n->kind == TIDE_NODE_OP && (tide_op_defs[n->op].flags & (TIDE_OPF_STATEFUL | TIDE_OPF_EFFECT))) return 1;
    if (tide_graph_has_effects(n->sub[0]) || tide_graph_has_effects(n->sub[1])) return 1;
  }
  return 0;
}

int64_t tide_graph_planned_bytes(const tide_graph *g) { return g ? g->planned_bytes : 0; }

/* ---- control flow: cond and while nodes ----------------------------------- */

/* Check that sub was built on top of g and is finished, with n_own inputs
 * and n_out outputs (n_out < 0: any). */
static tide_status check_sub(tide_graph *g, tide_graph *sub, const char *op, const char *what, int n_own,
                             int n_out) {
  if (!sub) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s is NULL", op, what);
  if (sub == g || sub->parent != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s was not built on top of graph '%s'", op, what, g->name);
  if (sub->building || sub->finalized)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s must be finished (ended) and not yet finalized", op, what);
  if (sub->n_inputs != n_own)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s takes %d input(s), expected %d", op, what, sub->n_inputs, n_own);
  if (n_out >= 0 && sub->n_outputs != n_out)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s gives %d output(s), expected %d", op, what, sub->n_outputs, n_out);
  return TIDE_OK;
}

/* Make sub a graph of its own: its captures become inputs after its own
 * ones (the node passes their outer values, in this order), then optimize
 * and freeze it. Returns whether it has side effects, or -1 on failure. */
static int adopt_sub(tide_graph *sub) {
  int n = sub->n_inputs + sub->n_captures;
  int *grown = realloc(sub->inputs, (size_t)(n ? n : 1) * sizeof *grown);
  if (!grown) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    return -1;
  }
  sub->inputs = grown;
  for (int k = 0; k < sub->n_captures; k++) {
    gnode *c = &sub->nodes[sub->captures[k]];
    c->kind = TIDE_NODE_INPUT; /* c->capture still names the outer value, for text dumps */
    c->input_index = sub->n_inputs;
    sub->inputs[sub->n_inputs++] = sub->captures[k];
  }
  sub->n_captures = 0;
  if (tide_graph_finalize(sub, TIDE_PASS_ALL)) return -1;
  for (int i = 0; i < sub->nnodes; i++)
    if (!(sub->nodes[i].flags & NODE_DEAD) && (sub->nodes[i].flags & NODE_STATEFUL)) return 1;
  return 0;
}

/* The outer values a finished sub captures, appended to vals at *k. */
static void capture_values(const tide_graph *sub, gvalue *vals, int *k) {
  for (int c = 0; c < sub->n_captures; c++) vals[(*k)++] = sub->nodes[sub->captures[c]].capture;
}

/* A one-element bool output (some dims may be unknown)? */
static bool is_flag(const tide_tensor *d) {
  if (d->dt != TIDE_BOOL) return false;
  for (int i = 0; i < d->ndim; i++)
    if (d->dims[i] != 1 && d->dims[i] != -1) return false;
  return true;
}

tide_status tide_graph_cond(tide_graph *g, const tide_tensor *pred, tide_graph *then_g, tide_graph *else_g,
                            int n_out, tide_tensor *const *out) {
  tide_status st = require_building(g, "cond");
  if (!st) st = check_sub(g, then_g, "cond", "the true branch", 0, n_out);
  if (!st) st = check_sub(g, else_g, "cond", "the false branch", 0, n_out);
  if (st) return st;
  if (then_g == else_g) return TIDE_FAIL(TIDE_ERR_VALUE, "cond: both branches are the same graph");
  int n_in = 1 + then_g->n_captures + else_g->n_captures;
  __attribute__((cleanup(graph_free_at))) void *heap = malloc((size_t)n_out * sizeof(tide_tensor) + (size_t)n_in * sizeof(gvalue) + 1);
  if (!heap) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  gvalue pv;
  st = value_of(g, pred, &pv, "cond");
  if (st) return st;
  const tide_tensor *pd = gval_desc(g, pv);
  char s0[128];
  if (!is_flag(pd))
    return TIDE_FAIL(TIDE_ERR_VALUE, "cond: pred must be a one-element bool tensor, got %s %s",
                     tide_dtype_name(pd->dt), TIDE_SHAPE_STR(s0, pd));
  tide_tensor *desc = heap;
  for (int k = 0; k < n_out; k++) {
    const tide_tensor *a = gval_desc(then_g, then_g->outputs[k]), *b = gval_desc(else_g, else_g->outputs[k]);
    if (a->dt != b->dt)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "cond: result %d is %s in the true branch but %s in the false branch", k + 1,
                       tide_dtype_name(a->dt), tide_dtype_name(b->dt));
    /* Ranks that differ (or one unknown) give an unknown rank, as TF's cond. */
    int64_t dims[TIDE_MAX_DIMS];
    for (int i = 0; i < a->ndim; i++) dims[i] = a->dims[i] == b->dims[i] ? a->dims[i] : -1;
    set_desc(&desc[k], a->dt, a->ndim == b->ndim ? a->ndim : TIDE_UNKNOWN_RANK, dims);
  }
  gvalue *vals = (gvalue *)(desc + n_out);
  int k = 0;
  vals[k++] = pv;
  capture_values(then_g, vals, &k);
  capture_values(else_g, vals, &k);
  int s_then = adopt_sub(then_g);
  int s_else = s_then < 0 ? -1 : adopt_sub(else_g);
  if (s_then < 0 || s_else < 0) return tide_last_status();
  int node = tide_graph_add_node(g, TIDE_NODE_COND, n_in, n_out);
  if (node < 0) return tide_last_status();
  gnode *n = &g->nodes[node];
  for (int i = 0; i < n_in; i++) n->in[i] = vals[i];
  n->sub[0] = then_g;
  n->sub[1] = else_g;
  then_g->parent = else_g->parent = NULL;
  if (s_then || s_else) n->flags |= NODE_STATEFUL;
  if (s_then || s_else) {
    st = tide_graph_note_assigns(g, node);
    if (st) return st;
  }
  for (int i = 0; i < n_out; i++) {
    n->out[i] = desc[i];
    tide_graph_symbolic(g, node, i, out[i]);
  }
  return TIDE_OK;
}

/* True when the known dims of `d` fit `want` (same rank; want's -1 fits any,
 * and an unknown rank in want any rank). */
static bool fits_desc(const tide_tensor *d, const tide_tensor *want) {
  if (d->dt != want->dt) return false;
  if (want->ndim < 0) return true;
  if (d->ndim != want->ndim) return false;
  for (int i = 0; i < d->ndim; i++)
    if (want->dims[i] >= 0 && d->dims[i] != want->dims[i]) return false;
  return true;
}

tide_status tide_graph_while(tide_graph *g, int n, const tide_tensor *const *init, tide_graph *cond_g,
                             tide_graph *body_g, int64_t max_iters, tide_tensor *const *out) {
  tide_status st = require_building(g, "while_loop");
  if (!st && n < 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "while_loop: %d loop variables", n);
  if (!st) st = check_sub(g, cond_g, "while_loop", "the condition", n, 1);
  if (!st) st = check_sub(g, body_g, "while_loop", "the body", n, n);
  if (st) return st;
  if (cond_g == body_g) return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop: the condition and the body are the same graph");
  int n_in = n + cond_g->n_captures + body_g->n_captures;
  __attribute__((cleanup(graph_free_at))) gvalue *vals = malloc(((size_t)n_in + 1) * sizeof *vals);
  if (!vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  char s0[128], s1[128];
  const tide_tensor *cd = gval_desc(cond_g, cond_g->outputs[0]);
  if (!is_flag(cd))
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop: the condition must give a one-element bool tensor, got %s %s",
                     tide_dtype_name(cd->dt), TIDE_SHAPE_STR(s0, cd));
  for (int k = 0; k < n; k++) {
    st = value_of(g, init[k], &vals[k], "while_loop");
    if (st) return st;
    const tide_tensor *iv = gval_desc(g, vals[k]);
    const tide_tensor *bi = &body_g->nodes[body_g->inputs[k]].out[0];
    const tide_tensor *ci = &cond_g->nodes[cond_g->inputs[k]].out[0];
    const tide_tensor *bo = gval_desc(body_g, body_g->outputs[k]);
    bool same = ci->dt == bi->dt && ci->ndim == bi->ndim;
    for (int i = 0; same && i < bi->ndim; i++) same = ci->dims[i] == bi->dims[i];
    if (!same)
      return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop: loop variable %d is %s %s in the condition but %s %s in the body",
                       k + 1, tide_dtype_name(ci->dt), TIDE_SHAPE_STR(s0, ci), tide_dtype_name(bi->dt),
                       TIDE_SHAPE_STR(s1, bi));
    if (!fits_desc(iv, bi))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "while_loop: loop variable %d enters the loop as %s %s but the loop takes %s %s",
                       k + 1, tide_dtype_name(iv->dt), TIDE_SHAPE_STR(s0, iv), tide_dtype_name(bi->dt),
                       TIDE_SHAPE_STR(s1, bi));
    if (!fits_desc(bo, bi))
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "while_loop: loop variable %d enters the body as %s %s but the body returns %s %s", k + 1,
                       tide_dtype_name(bi->dt), TIDE_SHAPE_STR(s0, bi), tide_dtype_name(bo->dt),
                       TIDE_SHAPE_STR(s1, bo));
  }
  int k = n;
  capture_values(cond_g, vals, &k);
  capture_values(body_g, vals, &k);
  int s_cond = adopt_sub(cond_g);
  int s_body = s_cond < 0 ? -1 : adopt_sub(body_g);
  if (s_cond < 0 || s_body < 0) return tide_last_status();
  int node = tide_graph_add_node(g, TIDE_NODE_WHILE, n_in, n);
  if (node < 0) return tide_last_status();
  gnode *nd = &g->nodes[node];
  for (int i = 0; i < n_in; i++) nd->in[i] = vals[i];
  nd->sub[0] = cond_g;
  nd->sub[1] = body_g;
  cond_g->parent = body_g->parent = NULL;
  nd->attrs.n = max_iters < 0 ? -1 : max_iters;
  if (s_cond || s_body) nd->flags |= NODE_STATEFUL;
  if (s_cond || s_body) {
    st = tide_graph_note_assigns(g, node);
    if (st) return st;
  }
  for (int i = 0; i < n; i++) {
    const tide_tensor *bi = &body_g->nodes[body_g->inputs[i]].out[0];
    set_desc(&nd->out[i], bi->dt, bi->ndim, bi->dims);
    tide_graph_symbolic(g, node, i, out[i]);
  }
  return TIDE_OK;
}
