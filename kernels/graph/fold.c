/* graph/fold.c — constant folding: an op whose inputs are all constants and
 * that draws no random numbers runs once, at finalize, and becomes a constant. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* A folded result may hold at most this many new bytes: folding a broadcast
 * of a scalar into a large constant would trade a cheap op for memory held
 * as long as the graph lives. Views (which allocate nothing) have no cap. */
enum { FOLD_MAX_BYTES = 1 << 20 };

/* True when every input of n is a constant. */
static bool inputs_constant(const tide_graph *g, const gnode *n) {
  for (int k = 0; k < n->n_in; k++)
    if (g->nodes[n->in[k].node].kind != TIDE_NODE_CONST) return false;
  return true;
}

/* Turn node n into a constant holding (a share of) value. */
static void become_constant(gnode *n, tide_tensor *value) {
  n->kind = TIDE_NODE_CONST;
  free(n->in);
  n->in = NULL;
  n->n_in = 0;
  memset(&n->value, 0, sizeof n->value);
  tide_tensor_share(&n->value, value); /* share, not a copy: inline data must point into the node */
  tide_tensor *d = &n->out[0];
  int dt = d->dt;
  memset(d, 0, sizeof *d);
  tide_tensor_set_contiguous_layout(d, dt, value->ndim, value->dims);
  d->flags = TIDE_TENSOR_SYMBOLIC;
}

tide_status tide_graph_fold(tide_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    gnode *n = &g->nodes[i];
    if ((n->flags & (NODE_DEAD | NODE_STATEFUL)) || n->kind != TIDE_NODE_OP || n->n_out != 1) continue;
    if (!inputs_constant(g, n)) continue;
    const tide_op_def *def = &tide_op_defs[n->op];
    const tide_tensor *stack[GRAPH_STACK_VALUES];
    __attribute__((cleanup(graph_free_at))) void *heap = NULL;
    const tide_tensor **ins = stack;
    if (n->n_in > GRAPH_STACK_VALUES && !(ins = heap = malloc((size_t)n->n_in * sizeof *ins)))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    for (int k = 0; k < n->n_in; k++) ins[k] = &g->nodes[n->in[k].node].value;
    tide_tensor desc, result;
    tide_tensor *pd = &desc, *pr = &result;
    memset(&desc, 0, sizeof desc);
    memset(&result, 0, sizeof result);
    /* An op that fails on these constants stays, so the error comes at run
     * time with the line that recorded it. */
    if (tide_op_infer(n->op, &n->attrs, n->n_in, ins, 1, &pd) != TIDE_OK) {
      tide_clear_error();
      continue;
    }
    if (!(def->flags & TIDE_OPF_VIEW) && desc.nelem * (int64_t)tide_dtype_size_unchecked(desc.dt) > FOLD_MAX_BYTES) continue;
    if (tide_op_run(n->op, &n->attrs, n->n_in, ins, 1, &pr) != TIDE_OK) {
      tide_clear_error();
      continue;
    }
    /* A TIDE_OPF_DATA_SHAPE op's size (nelem -1 above) is known only now. */
    if ((def->flags & TIDE_OPF_DATA_SHAPE) && result.nelem * (int64_t)tide_dtype_size_unchecked(result.dt) > FOLD_MAX_BYTES) {
      tide_tensor_release(&result);
      continue;
    }
    become_constant(n, &result);
    tide_tensor_release(&result);
  }
  return TIDE_OK;
}
