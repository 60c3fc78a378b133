/* graph/split.c — a forward graph and its backward: a graph traced on top of
 * another made a graph of its own over the values it captured (the forward's
 * saved values), aliases that let a graph being built take another graph's
 * values as its own (tracing a backward pass again over them), and pinned
 * variable reads (a gradient that runs a loop body again reads what the
 * forward read, not the variable's value when the gradient runs). */
#include "graph_internal.h"

#include <stdlib.h>

int tide_graph_num_captures(const tide_graph *g) { return g ? g->n_captures : 0; }

tide_status tide_graph_detach(tide_graph *g, int n, tide_tensor *const *outer) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph detach: NULL graph");
  tide_graph *parent = g->parent;
  if (!parent) return TIDE_FAIL(TIDE_ERR_VALUE, "graph detach: graph '%s' was not built on top of another", g->name);
  if (g->building || g->finalized)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph detach: graph '%s' must be finished (ended) and not yet finalized", g->name);
  if (n < g->n_captures || (g->n_captures > 0 && !outer))
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph detach: graph '%s' captures %d value(s) but %d header(s) were given",
                     g->name, g->n_captures, n);
  /* The parent may have grown since the capture: its values are still where they were. */
  for (int k = 0; k < g->n_captures; k++) {
    gvalue v = g->nodes[g->captures[k]].capture;
    if (v.node < 0 || v.node >= parent->nnodes || v.index < 0 || v.index >= parent->nodes[v.node].n_out)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph detach: a capture of '%s' names no value of '%s'", g->name,
                       parent->name);
  }
  int total = g->n_inputs + g->n_captures;
  int *grown = realloc(g->inputs, (size_t)(total ? total : 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->inputs = grown;
  for (int k = 0; k < g->n_captures; k++) {
    gnode *c = &g->nodes[g->captures[k]];
    tide_graph_symbolic(parent, c->capture.node, c->capture.index, outer[k]);
    c->kind = TIDE_NODE_INPUT; /* c->capture still names the outer value, for text dumps */
    c->input_index = g->n_inputs;
    g->inputs[g->n_inputs++] = g->captures[k];
  }
  g->n_captures = 0;
  g->parent = NULL;
  free(g->text_cache);
  g->text_cache = NULL;
  return TIDE_OK;
}

tide_status tide_graph_capture_values(const tide_graph *g, int n, tide_tensor *const *outer) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph capture values: NULL graph");
  tide_graph *parent = g->parent;
  if (g->n_captures == 0) return TIDE_OK;
  if (!parent || parent != tide_graph_building())
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph capture values: graph '%s' was not built on top of the graph being built",
                     g->name);
  if (n < g->n_captures || !outer)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph capture values: graph '%s' captures %d value(s) but %d header(s) were given",
                     g->name, g->n_captures, n);
  for (int k = 0; k < g->n_captures; k++) {
    gvalue v = g->nodes[g->captures[k]].capture;
    if (v.node < 0 || v.node >= parent->nnodes || v.index < 0 || v.index >= parent->nodes[v.node].n_out)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph capture values: a capture of '%s' names no value of '%s'", g->name,
                       parent->name);
  }
  for (int k = 0; k < g->n_captures; k++) {
    gvalue v = g->nodes[g->captures[k]].capture;
    tide_graph_symbolic(parent, v.node, v.index, outer[k]);
  }
  return TIDE_OK;
}

tide_status tide_graph_alias(tide_graph *g, const tide_tensor *foreign, const tide_tensor *local) {
  if (!g || !foreign || !local) return TIDE_FAIL(TIDE_ERR_VALUE, "graph alias: NULL argument");
  if (!g->building || tide_graph_building() != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph alias: graph '%s' is not the graph being built", g->name);
  if (!(foreign->flags & TIDE_TENSOR_SYMBOLIC) || foreign->inline_data.sym.graph_id == g->id)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph alias: the tensor to stand in for must be a symbolic tensor of another graph");
  if (foreign->dt != local->dt || foreign->ndim != local->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph alias: %s rank %d cannot stand for %s rank %d", tide_dtype_name(local->dt),
                     local->ndim, tide_dtype_name(foreign->dt), foreign->ndim);
  /* The local value: an op on it names it (or makes the constant). */
  gvalue v;
  if (local->flags & TIDE_TENSOR_SYMBOLIC) {
    if (local->inline_data.sym.graph_id != g->id)
      return TIDE_FAIL(TIDE_ERR_VALUE, "graph alias: the standing-in tensor must be a value of graph '%s'", g->name);
    v = (gvalue){local->inline_data.sym.node, local->inline_data.sym.index};
    if (v.node < 0 || v.node >= g->nnodes || v.index < 0 || v.index >= g->nodes[v.node].n_out)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph alias: symbolic tensor names no value of graph '%s'", g->name);
  } else {
    tide_tensor sym;
    tide_status st = tide_graph_constant(g, local, &sym);
    if (st) return st;
    v = (gvalue){sym.inline_data.sym.node, sym.inline_data.sym.index};
  }
  for (int k = 0; k < g->n_aliases; k++) { /* again: the newer one wins */
    galias *a = &g->aliases[k];
    if (a->graph_id == foreign->inline_data.sym.graph_id && a->node == foreign->inline_data.sym.node &&
        a->index == foreign->inline_data.sym.index) {
      a->local = v;
      return TIDE_OK;
    }
  }
  galias *grown = realloc(g->aliases, (size_t)(g->n_aliases + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->aliases = grown;
  g->aliases[g->n_aliases++] =
      (galias){foreign->inline_data.sym.graph_id, foreign->inline_data.sym.node, foreign->inline_data.sym.index, v};
  return TIDE_OK;
}

bool tide_graph_find_alias(const tide_graph *g, const tide_tensor *t, gvalue *v) {
  for (int k = 0; k < g->n_aliases; k++) {
    const galias *a = &g->aliases[k];
    if (a->graph_id == t->inline_data.sym.graph_id && a->node == t->inline_data.sym.node &&
        a->index == t->inline_data.sym.index) {
      *v = a->local;
      return true;
    }
  }
  return false;
}

tide_status tide_graph_pin_variable(tide_graph *g, tide_tensor *handle, const tide_tensor *value) {
  if (!g || !handle || !value) return TIDE_FAIL(TIDE_ERR_VALUE, "graph pin: NULL argument");
  if (!g->building || tide_graph_building() != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph pin: graph '%s' is not the graph being built", g->name);
  if (!(value->flags & TIDE_TENSOR_SYMBOLIC))
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph pin: the value must be a symbolic tensor (a read traced earlier)");
  if (value->dt != handle->dt || value->ndim != handle->ndim)
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph pin: a %s value of rank %d cannot stand for a %s variable of rank %d",
                     tide_dtype_name(value->dt), value->ndim, tide_dtype_name(handle->dt), handle->ndim);
  for (int k = 0; k < g->n_pins; k++)
    if (g->pins[k].handle == handle) {
      g->pins[k].value = *value; /* a symbolic header holds no pointer into itself */
      return TIDE_OK;
    }
  gpin *grown = realloc(g->pins, (size_t)(g->n_pins + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  g->pins = grown;
  g->pins[g->n_pins].handle = handle;
  g->pins[g->n_pins].value = *value;
  g->n_pins++;
  return TIDE_OK;
}

void tide_graph_unpin_variable(tide_graph *g, const tide_tensor *handle) {
  if (!g) return;
  for (int k = 0; k < g->n_pins; k++)
    if (g->pins[k].handle == handle) {
      g->pins[k] = g->pins[--g->n_pins];
      return;
    }
}

const tide_tensor *tide_graph_find_pin(const tide_graph *g, const tide_tensor *handle) {
  for (; g; g = g->parent)
    for (int k = 0; k < g->n_pins; k++)
      if (g->pins[k].handle == handle) return &g->pins[k].value;
  return NULL;
}
