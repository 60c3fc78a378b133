/* graph/def_build.c — a checked graph definition rebuilt into a runnable
 * graph through the public building API, so every node meets the same
 * inference and checks as a traced one (a file cannot make a graph that tracing could not). */
#include "graph_def.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* The symbolic tensors of one graph's nodes: node i's output k is vals[off[i] + k]. */
typedef struct vtable {
  tide_tensor *vals;
  int *off;
  int n;
} vtable;

static void vtable_free(vtable *t) {
  for (int i = 0; t->vals && i < t->n; i++) tide_tensor_release(&t->vals[i]);
  free(t->vals);
  free(t->off);
}

static tide_status vtable_make(const tide_graph_def *d, vtable *t) {
  memset(t, 0, sizeof *t);
  t->off = malloc(((size_t)d->n_nodes + 1) * sizeof *t->off);
  if (!t->off) return TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
  int total = 0;
  for (int i = 0; i < d->n_nodes; i++) {
    t->off[i] = total;
    total += d->nodes[i].n_out;
  }
  t->off[d->n_nodes] = total;
  t->vals = calloc((size_t)total + 1, sizeof *t->vals);
  if (!t->vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
  t->n = total;
  return TIDE_OK;
}

static tide_tensor *val(const vtable *t, const int32_t *pair) { return &t->vals[t->off[pair[0]] + pair[1]]; }

static tide_status build_body(const tide_graph_def *d, tide_graph *g, const vtable *outer, tide_tensor *const *handles);

/* Build subgraph d on top of the graph being built (whose values are
 * `outer`): a new graph, ended, or NULL with an error set. */
static tide_graph *build_sub(const tide_graph_def *d, const vtable *outer, tide_tensor *const *handles) {
  tide_graph *s = tide_graph_new(d->name);
  if (!s) return NULL;
  if (tide_graph_begin(s)) {
    tide_graph_free(s);
    return NULL;
  }
  if (build_body(d, s, outer, handles)) {
    tide_graph_abandon(s);
    tide_graph_free(s);
    return NULL;
  }
  if (tide_graph_end(s)) {
    tide_graph_abandon(s);
    tide_graph_free(s);
    return NULL;
  }
  return s;
}

/* Gather n pairs of t into a pointer array (stack when small). */
static const tide_tensor **gather(const vtable *t, const int32_t *pairs, int n, const tide_tensor **stack) {
  const tide_tensor **arr = graph_scratch(stack, GRAPH_STACK_VALUES, n, sizeof *arr);
  for (int i = 0; arr && i < n; i++) arr[i] = val(t, &pairs[2 * i]);
  return arr;
}

static tide_status node_error(const tide_graph_def *d, int i, const tide_def_node *n) {
  /* The registry's message says what failed; add where it is in the file. */
  char msg[600];
  snprintf(msg, sizeof msg, "%s", tide_last_error());
  tide_status st = tide_last_status() ? tide_last_status() : TIDE_ERR_VALUE;
  return TIDE_FAIL(st, "%s (graph '%s', node %d%s%s)", msg, d->name, i, n->origin ? ", recorded at " : "",
                   n->origin ? n->origin : "");
}

static tide_status build_node(const tide_graph_def *d, int i, tide_graph *g, vtable *t, const vtable *outer,
                              tide_tensor *const *handles, const tide_tensor *inputs) {
  const tide_def_node *n = &d->nodes[i];
  tide_tensor *out = &t->vals[t->off[i]];
  const tide_tensor *stack[GRAPH_STACK_VALUES];
  tide_tensor *outs_stack[GRAPH_STACK_VALUES];
  tide_status st = TIDE_OK;
  switch (n->kind) {
  case TIDE_NODE_INPUT: return tide_tensor_share(out, &inputs[n->input_index]);
  case TIDE_NODE_CONST: return tide_graph_constant(g, n->value, out);
  case TIDE_NODE_CAPTURE:
    if (!outer) return TIDE_FAIL(TIDE_ERR_VALUE, "saved model: a capture outside a subgraph");
    return tide_tensor_share(out, val(outer, n->capture));
  case TIDE_NODE_VARIABLE: return tide_graph_variable(g, handles[n->var], out);
  case TIDE_NODE_ASSIGN: return tide_graph_assign(g, handles[n->var], n->assign_mode, val(t, n->in));
  case TIDE_NODE_OP:
  case TIDE_NODE_PRINT: {
    const tide_tensor **ins = gather(t, n->in, n->n_in, stack);
    tide_tensor **outs = graph_scratch(outs_stack, GRAPH_STACK_VALUES, n->n_out, sizeof *outs);
    if (!ins || !outs) st = TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
    for (int k = 0; !st && k < n->n_out; k++) outs[k] = &out[k];
    if (!st && n->kind == TIDE_NODE_OP) {
      st = tide_op_run(n->op, &n->attrs, n->n_in, ins, n->n_out, outs);
      if (!st && n->origin && n->n_out > 0) tide_graph_set_origin(g, out, n->origin);
    } else if (!st) {
      st = tide_graph_print(g, n->text, n->n_in, ins);
    }
    if (ins) graph_scratch_free((void *)ins, stack);
    if (outs) graph_scratch_free(outs, outs_stack);
    return st;
  }
  case TIDE_NODE_COND: {
    tide_graph *a = build_sub(n->sub[0], t, handles);
    tide_graph *b = a ? build_sub(n->sub[1], t, handles) : NULL;
    tide_tensor **outs = graph_scratch(outs_stack, GRAPH_STACK_VALUES, n->n_out, sizeof *outs);
    if (!a || !b || !outs) {
      st = (!a || !b) ? tide_last_status() : TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
      tide_graph_free(a), tide_graph_free(b);
    } else {
      for (int k = 0; k < n->n_out; k++) outs[k] = &out[k];
      st = tide_graph_cond(g, val(t, n->in), a, b, n->n_out, outs);
      if (st) tide_graph_free(a), tide_graph_free(b);
    }
    if (outs) graph_scratch_free(outs, outs_stack);
    return st;
  }
  case TIDE_NODE_WHILE: {
    int nv = n->n_in;
    tide_graph *a = build_sub(n->sub[0], t, handles);
    tide_graph *b = a ? build_sub(n->sub[1], t, handles) : NULL;
    const tide_tensor **ins = gather(t, n->in, nv, stack);
    tide_tensor **outs = graph_scratch(outs_stack, GRAPH_STACK_VALUES, n->n_out, sizeof *outs);
    if (!a || !b || !ins || !outs) {
      st = (!a || !b) ? tide_last_status() : TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
      tide_graph_free(a), tide_graph_free(b);
    } else {
      for (int k = 0; k < n->n_out; k++) outs[k] = &out[k];
      st = tide_graph_while(g, nv, ins, a, b, n->max_iters, outs);
      if (st) tide_graph_free(a), tide_graph_free(b);
      else if (n->stacked && nv > 0) st = tide_graph_while_stack(g, outs[0], outs[nv], nv, outs + nv + 1);
      else if (n->stacked) st = TIDE_FAIL(TIDE_ERR_VALUE, "saved model: a stacked while_loop without variables");
    }
    if (ins) graph_scratch_free((void *)ins, stack);
    if (outs) graph_scratch_free(outs, outs_stack);
    return st;
  }
  default: return TIDE_FAIL(TIDE_ERR_VALUE, "saved model: node %d of unknown kind %d", i, n->kind);
  }
}

/* Build d's inputs, nodes and outputs into g (being built). */
static tide_status build_body(const tide_graph_def *d, tide_graph *g, const vtable *outer, tide_tensor *const *handles) {
  vtable t;
  tide_status st = vtable_make(d, &t);
  tide_tensor *inputs = calloc((size_t)d->n_inputs + 1, sizeof *inputs);
  if (!st && !inputs) st = TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
  for (int k = 0; !st && k < d->n_inputs; k++)
    st = tide_graph_input(g, d->inputs[k].dt, d->inputs[k].ndim, d->inputs[k].dims, &inputs[k]);
  for (int i = 0; !st && i < d->n_nodes; i++) {
    st = build_node(d, i, g, &t, outer, handles, inputs);
    if (st) st = node_error(d, i, &d->nodes[i]);
  }
  if (!st) {
    const tide_tensor *stack[GRAPH_STACK_VALUES];
    const tide_tensor **outs = gather(&t, d->outputs, d->n_outputs, stack);
    st = outs ? tide_graph_set_outputs(g, d->n_outputs, outs) : TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory");
    if (outs) graph_scratch_free((void *)outs, stack);
  }
  for (int k = 0; inputs && k < d->n_inputs; k++) tide_tensor_release(&inputs[k]);
  free(inputs);
  vtable_free(&t);
  return st;
}

tide_status tide_graph_def_build(const tide_graph_def *d, tide_tensor *const *handles, tide_graph **out) {
  *out = NULL;
  tide_graph *g = tide_graph_new(d->name);
  if (!g) return tide_last_status();
  tide_status st = tide_graph_begin(g);
  if (st) {
    tide_graph_free(g);
    return st;
  }
  st = build_body(d, g, NULL, handles);
  if (!st) st = tide_graph_end(g);
  else tide_graph_abandon(g);
  if (!st) st = tide_graph_finalize(g, TIDE_PASS_ALL);
  if (st) {
    tide_graph_free(g);
    return st;
  }
  *out = g;
  return TIDE_OK;
}
