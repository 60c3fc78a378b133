/* graph/text.c — graphs as text for people (one node a line: value, op,
 * inputs, dtype and shape, where it was recorded) and as Graphviz dot. */
#include "passes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
  char *s;
  size_t len, cap;
} buf;

static void put(buf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    size_t room = b->cap - b->len;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->s && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *grown = realloc(b->s, cap);
    if (!grown) return;
    b->s = grown;
    b->cap = cap;
  }
}

static const char *kind_name(const gnode *n) {
  switch (n->kind) {
  case TIDE_NODE_INPUT: return "input";
  case TIDE_NODE_CONST: return "const";
  case TIDE_NODE_CAPTURE: return "capture";
  case TIDE_NODE_VARIABLE: return "read_variable";
  case TIDE_NODE_OP: return tide_op_name(n->op);
  case TIDE_NODE_ASSIGN: return n->assign_mode == TIDE_ASSIGN_SET ? "assign"
                                : n->assign_mode == TIDE_ASSIGN_ADD ? "assign_add" : "assign_sub";
  case TIDE_NODE_PRINT: return "print";
  case TIDE_NODE_COND: return "cond";
  case TIDE_NODE_WHILE: return "while_loop";
  case TIDE_NODE_FUSED: return tide_graph_fused_name(n); /* "fused[mul, add]" */
  case TIDE_NODE_EFFECT: return n->effect && n->effect->name ? n->effect->name : "effect";
  default: return "?";
  }
}

/* "float32[None, 3]"; "float32<unknown>" for an unknown rank (TF's word) */
static void put_type(buf *b, const tide_tensor *d) {
  if (d->ndim < 0) {
    put(b, "%s<unknown>", tide_dtype_name(d->dt));
    return;
  }
  put(b, "%s[", tide_dtype_name(d->dt));
  for (int i = 0; i < d->ndim; i++) {
    if (d->dims[i] < 0) put(b, i ? ", None" : "None");
    else put(b, i ? ", %lld" : "%lld", (long long)d->dims[i]);
  }
  put(b, "]");
}

static void put_value(buf *b, const tide_graph *g, gvalue v) {
  put(b, g->nodes[v.node].n_out > 1 ? "%%%d:%d" : "%%%d", v.node, v.index);
}

/* g's lines at this indent; a cond or while node is followed by its
 * subgraphs, one level deeper (their inputs after the n_own loop variables
 * are the outer values they capture). */
static void put_graph(buf *b, const tide_graph *g, int indent, int n_own) {
  put(b, "graph %s(", g->name);
  for (int k = 0; k < g->n_inputs; k++) {
    const gnode *in = &g->nodes[g->inputs[k]];
    put(b, k ? ", %%%d: " : "%%%d: ", g->inputs[k]);
    put_type(b, &in->out[0]);
    if (indent && k >= n_own) put(b, " = outer %%%d", in->capture.node);
  }
  put(b, ")\n");
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if ((n->flags & NODE_DEAD) || n->kind == TIDE_NODE_INPUT) continue;
    put(b, "%*s  ", indent, "");
    if (n->n_out) {
      put(b, "%%%d = ", i);
    }
    put(b, "%s(", kind_name(n));
    for (int k = 0; k < n->n_in; k++) {
      if (k) put(b, ", ");
      put_value(b, g, n->in[k]);
    }
    if (n->kind == TIDE_NODE_CAPTURE) put(b, "outer %%%d", n->capture.node);
    put(b, ")");
    for (int k = 0; k < n->n_out; k++) {
      put(b, k ? ", " : " : ");
      put_type(b, &n->out[k]);
    }
    if (n->origin) put(b, "   -- %s", n->origin);
    put(b, "\n");
    if (n->kind == TIDE_NODE_FUSED) { /* its description, one step a line */
      char step[512];
      for (int t = 0; t < tide_graph_fused_step_text(g, n, t, step, sizeof step); t++) put(b, "%*s      %s\n", indent, "", step);
    }
    if (n->kind == TIDE_NODE_COND || n->kind == TIDE_NODE_WHILE) {
      static const char *const what[2][2] = {{"true:", "false:"}, {"cond:", "body:"}};
      if (n->kind == TIDE_NODE_WHILE && n->attrs.n >= 0)
        put(b, "%*s    maximum_iterations: %lld\n", indent, "", (long long)n->attrs.n);
      if (n->kind == TIDE_NODE_WHILE && (n->attrs.flags & WHILE_STACKED)) /* graph/while_stack.c */
        put(b, "%*s    keeps: the iteration count and each iteration's loop variables%s\n", indent, "",
            (n->attrs.flags & WHILE_STACKS_WANTED) ? "" : " (unread: not kept)");
      for (int s = 0; s < 2; s++) {
        if (!n->sub[s]) continue;
        put(b, "%*s    %s ", indent, "", what[n->kind == TIDE_NODE_WHILE][s]);
        put_graph(b, n->sub[s], indent + 4, n->kind == TIDE_NODE_WHILE ? tide_graph_while_nvars(n) : 0);
      }
    }
  }
  put(b, "%*s  return ", indent, "");
  for (int k = 0; k < g->n_outputs; k++) {
    if (k) put(b, ", ");
    put_value(b, g, g->outputs[k]);
  }
  put(b, "\n");
}

const char *tide_graph_text(tide_graph *g) {
  if (!g) return "";
  free(g->text_cache);
  buf b = {0};
  put_graph(&b, g, 0, 0);
  g->text_cache = b.s;
  return b.s ? b.s : "";
}

const char *tide_graph_dot(tide_graph *g) {
  if (!g) return "";
  free(g->text_cache);
  buf b = {0};
  put(&b, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n", g->name);
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    put(&b, "  n%d [label=\"%%%d %s", i, i, kind_name(n));
    if (n->n_out) {
      put(&b, "\\n");
      put_type(&b, &n->out[0]);
    }
    put(&b, "\"%s];\n", n->kind == TIDE_NODE_INPUT ? ", shape=ellipse" : "");
    for (int k = 0; k < n->n_in; k++) put(&b, "  n%d -> n%d;\n", n->in[k].node, i);
  }
  for (int k = 0; k < g->n_outputs; k++)
    put(&b, "  out%d [shape=ellipse, label=\"output %d\"];\n  n%d -> out%d;\n", k, k, g->outputs[k].node, k);
  put(&b, "}\n");
  g->text_cache = b.s;
  return b.s ? b.s : "";
}
