/* graph/while_stack.c — what a WHILE node keeps for its gradient: its
 * iteration count and each loop variable's value per iteration, stacked
 * into growing buffers as the loop runs (O(N) copies in all, as TF's
 * accumulators), and the finalize step that skips stacks nothing reads. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Rows a stack starts with. */
enum { FIRST_ROWS = 16 };

tide_status tide_graph_while_stack(tide_graph *g, const tide_tensor *result, tide_tensor *count, int n,
                                   tide_tensor *const *stacks) {
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: NULL graph");
  if (!g->building || tide_graph_building() != g)
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: graph '%s' is not the graph being built", g->name);
  if (!result || !(result->flags & TIDE_TENSOR_SYMBOLIC) || result->inline_data.sym.graph_id != g->id)
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: the result must be a symbolic tensor of graph '%s'", g->name);
  int node = result->inline_data.sym.node;
  if (node < 0 || node >= g->nnodes || g->nodes[node].kind != TIDE_NODE_WHILE)
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: the tensor is not a result of a while_loop");
  gnode *nd = &g->nodes[node];
  int nv = tide_graph_while_nvars(nd);
  if (nd->attrs.flags & WHILE_STACKED)
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: this while_loop is stacked already");
  if (n != nv)
    return TIDE_FAIL(TIDE_ERR_VALUE, "while_loop stacks: the loop has %d loop variable(s), got %d header(s)", nv, n);
  for (int k = 0; k < nv; k++)
    if (nd->out[k].ndim >= TIDE_MAX_DIMS)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED,
                       "while_loop stacks: loop variable %d has rank %d; its stack would need rank %d (at most %d)",
                       k + 1, nd->out[k].ndim, nd->out[k].ndim + 1, TIDE_MAX_DIMS);
  tide_tensor *grown = realloc(nd->out, (size_t)(2 * nv + 1) * sizeof *grown);
  if (!grown) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  nd->out = grown;
  /* Output nv: the count; nv + 1 + k: loop variable k's stack, rows unknown. */
  tide_tensor *c = &nd->out[nv];
  memset(c, 0, sizeof *c);
  c->dt = TIDE_INT32;
  c->nelem = 1;
  c->flags = TIDE_TENSOR_SYMBOLIC;
  for (int k = 0; k < nv; k++) {
    tide_tensor *s = &nd->out[nv + 1 + k];
    const tide_tensor *v = &nd->out[k];
    memset(s, 0, sizeof *s);
    s->dt = v->dt;
    s->ndim = v->ndim + 1;
    s->dims[0] = -1;
    for (int d = 0; d < v->ndim; d++) s->dims[d + 1] = v->dims[d];
    s->nelem = -1;
    s->flags = TIDE_TENSOR_SYMBOLIC;
  }
  nd->n_out = 2 * nv + 1;
  nd->attrs.flags |= WHILE_STACKED | WHILE_STACKS_WANTED;
  free(g->text_cache);
  g->text_cache = NULL;
  tide_graph_symbolic(g, node, nv, count);
  for (int k = 0; k < nv; k++) tide_graph_symbolic(g, node, nv + 1 + k, stacks[k]);
  return TIDE_OK;
}

tide_status tide_graph_trim_stacks(tide_graph *g) {
  bool any = false;
  for (int i = 0; i < g->nnodes && !any; i++)
    any = !(g->nodes[i].flags & NODE_DEAD) && (g->nodes[i].attrs.flags & WHILE_STACKS_WANTED) &&
          g->nodes[i].kind == TIDE_NODE_WHILE;
  if (!any) return TIDE_OK;
  /* Which stacked nodes have a stack read: by a live node, an output, or a
   * subgraph still capturing (adopted subgraphs read through their node's inputs). */
  char *read = calloc((size_t)g->nnodes + 1, 1);
  if (!read) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
#define NOTE(v)                                                                                                   \
  do {                                                                                                            \
    const gnode *src_ = &g->nodes[(v).node];                                                                      \
    if (src_->kind == TIDE_NODE_WHILE && (src_->attrs.flags & WHILE_STACKED) &&                                   \
        (v).index > tide_graph_while_nvars(src_))                                                                 \
      read[(v).node] = 1;                                                                                         \
  } while (0)
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_in; k++) NOTE(n->in[k]);
    for (int s = 0; s < 2; s++)
      for (int j = 0; n->sub[s] && j < n->sub[s]->nnodes; j++)
        if (n->sub[s]->nodes[j].kind == TIDE_NODE_CAPTURE) NOTE(n->sub[s]->nodes[j].capture);
  }
  for (int k = 0; k < g->n_outputs; k++) NOTE(g->outputs[k]);
#undef NOTE
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].kind == TIDE_NODE_WHILE && !read[i]) g->nodes[i].attrs.flags &= ~(uint32_t)WHILE_STACKS_WANTED;
  free(read);
  return TIDE_OK;
}

/* ---- the buffers, filled while the loop runs ---------------------------------- */

/* Make s's buffer hold `cap` rows like s->row0, keeping the rows it has. */
static tide_status grow(wstack *s, int64_t cap) {
  const tide_tensor *r = &s->row0;
  int64_t dims[TIDE_MAX_DIMS];
  dims[0] = cap;
  for (int d = 0; d < r->ndim; d++) dims[d + 1] = r->dims[d];
  tide_tensor fresh;
  memset(&fresh, 0, sizeof fresh);
  tide_status st = tide_tensor_init_heap(&fresh, r->dt, r->ndim + 1, dims);
  if (st) return st;
  if (s->rows > 0) {
    /* The rows so far, as views of the same [rows, ...] block of both buffers. */
    tide_tensor from, to;
    memset(&from, 0, sizeof from);
    memset(&to, 0, sizeof to);
    dims[0] = s->rows;
    st = tide_tensor_view(&from, &s->buf, r->ndim + 1, dims, s->buf.strides, 0);
    if (!st) st = tide_tensor_view(&to, &fresh, r->ndim + 1, dims, fresh.strides, 0);
    if (!st) st = tide_tensor_copy_into(&to, &from);
    tide_tensor_release(&from);
    tide_tensor_release(&to);
    if (st) {
      tide_tensor_release(&fresh);
      return st;
    }
  }
  tide_tensor_release(&s->buf);
  s->buf = fresh; /* a heap tensor's header holds no pointer into itself: moving it is safe */
  s->cap = cap;
  return TIDE_OK;
}

tide_status tide_wstack_push(wstack *s, const tide_tensor *row, int var) {
  char s0[128], s1[128];
  if (s->rows == 0 && s->cap == 0) {
    memset(&s->row0, 0, sizeof s->row0);
    tide_tensor_set_contiguous_layout(&s->row0, row->dt, row->ndim, row->dims);
  } else {
    bool same = row->dt == s->row0.dt && row->ndim == s->row0.ndim;
    for (int d = 0; same && d < row->ndim; d++) same = row->dims[d] == s->row0.dims[d];
    if (!same)
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "while_loop gradient: loop variable %d is %s at one iteration and %s at another; a gradient "
                       "through the loop stacks its values, so their shape must not change (give it a fixed shape)",
                       var, TIDE_SHAPE_STR(s0, &s->row0), TIDE_SHAPE_STR(s1, row));
  }
  if (s->rows == s->cap) {
    tide_status st = grow(s, s->cap ? 2 * s->cap : FIRST_ROWS);
    if (st) return st;
  }
  /* Row `rows` of the buffer: a contiguous block at rows * row elements. */
  tide_tensor dst;
  memset(&dst, 0, sizeof dst);
  tide_status st = tide_tensor_view(&dst, &s->buf, s->row0.ndim, s->row0.dims, s->row0.strides,
                                    s->rows * s->row0.nelem);
  if (!st) st = tide_tensor_copy_into(&dst, row);
  tide_tensor_release(&dst);
  if (!st) s->rows++;
  return st;
}

tide_status tide_wstack_finish(wstack *s, const tide_tensor *row_like, tide_tensor *out) {
  int64_t dims[TIDE_MAX_DIMS];
  tide_status st;
  memset(out, 0, sizeof *out);
  if (s->rows == 0) { /* the loop never ran: an empty stack of rows like the loop variable */
    dims[0] = 0;
    for (int d = 0; d < row_like->ndim; d++) dims[d + 1] = row_like->dims[d];
    st = tide_tensor_init(out, row_like->dt, row_like->ndim + 1, dims);
  } else {
    dims[0] = s->rows;
    for (int d = 0; d < s->row0.ndim; d++) dims[d + 1] = s->row0.dims[d];
    st = tide_tensor_view(out, &s->buf, s->row0.ndim + 1, dims, s->buf.strides, 0);
  }
  tide_wstack_free(s);
  return st;
}

void tide_wstack_free(wstack *s) {
  tide_tensor_release(&s->buf);
  s->rows = s->cap = 0;
}
