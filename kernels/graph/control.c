/* graph/control.c — COND and WHILE nodes: their result layouts from their
 * subgraphs' plans, and running them in C (each subgraph through tide_graph_run). */
#include "graph_internal.h"

#include <stdint.h>
#include <string.h>

/* graph/exec.c: the output layouts of g for inputs of these layouts. */
tide_status tide_graph_plan_outputs(tide_graph *g, int n_in, const tide_tensor *const *in, tide_tensor *const *out);

/* The traced descriptors as layouts: dims the trace could not know stay -1,
 * which tells the executor to infer what depends on them at run time. */
static void traced_layouts(const gnode *n, tide_tensor *const *out) {
  for (int k = 0; k < n->n_out; k++) {
    const tide_tensor *d = &n->out[k];
    memset(out[k], 0, sizeof *out[k]);
    tide_tensor_set_contiguous_layout(out[k], d->dt, d->ndim, d->dims);
  }
}

/* A COND's results: each branch planned for these inputs; dims the branches
 * disagree on (or that a branch cannot plan) are known only when it runs. */
static tide_status plan_cond(gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  int nk = n->n_out;
  __attribute__((cleanup(graph_free_at))) tide_tensor *a = calloc(2 * (size_t)nk + 1, sizeof *a);
  __attribute__((cleanup(graph_free_at))) tide_tensor **pa = malloc((2 * (size_t)nk + 1) * sizeof *pa);
  if (!a || !pa) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  tide_tensor *b = a + nk, **pb = pa + nk;
  for (int k = 0; k < nk; k++) pa[k] = &a[k], pb[k] = &b[k];
  tide_graph *t = n->sub[0], *f = n->sub[1];
  if (tide_graph_plan_outputs(t, t->n_inputs, in + 1, pa) || tide_graph_plan_outputs(f, f->n_inputs, in + 1 + t->n_inputs, pb)) {
    /* e.g. a branch that only fits other shapes: it fails if it ever runs */
    tide_clear_error();
    traced_layouts(n, out);
    return TIDE_OK;
  }
  for (int k = 0; k < nk; k++) {
    int64_t dims[TIDE_MAX_DIMS];
    for (int d = 0; d < a[k].ndim; d++) dims[d] = a[k].dims[d] == b[k].dims[d] ? a[k].dims[d] : -1;
    memset(out[k], 0, sizeof *out[k]);
    /* branches of different ranks: known when one runs */
    tide_tensor_set_contiguous_layout(out[k], a[k].dt, a[k].ndim == b[k].ndim ? a[k].ndim : TIDE_UNKNOWN_RANK, dims);
  }
  return TIDE_OK;
}

/* A WHILE's results: the loop variables' entry layouts when the body keeps
 * them (then every iteration does), else the traced (relaxed) descriptors. */
static tide_status plan_while(gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  tide_graph *body = n->sub[1];
  int nv = tide_graph_while_nvars(n);
  __attribute__((cleanup(graph_free_at))) tide_tensor *bo = calloc((size_t)nv + 1, sizeof *bo);
  __attribute__((cleanup(graph_free_at))) tide_tensor **pbo = malloc(((size_t)nv + 1) * sizeof *pbo);
  __attribute__((cleanup(graph_free_at))) const tide_tensor **bin = malloc(((size_t)body->n_inputs + 1) * sizeof *bin);
  if (!bo || !pbo || !bin) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  for (int k = 0; k < nv; k++) pbo[k] = &bo[k];
  int nc = n->sub[0]->n_inputs - nv;
  for (int k = 0; k < nv; k++) bin[k] = in[k];
  for (int k = nv; k < body->n_inputs; k++) bin[k] = in[nc + k];
  if (tide_graph_plan_outputs(body, body->n_inputs, bin, pbo)) {
    tide_clear_error();
    traced_layouts(n, out);
    return TIDE_OK;
  }
  bool fixed = true;
  for (int k = 0; k < nv && fixed; k++) {
    fixed = bo[k].ndim == in[k]->ndim;
    for (int d = 0; fixed && d < bo[k].ndim; d++) fixed = bo[k].dims[d] == in[k]->dims[d];
  }
  if (!fixed) {
    traced_layouts(n, out);
    return TIDE_OK;
  }
  for (int k = 0; k < nv; k++) {
    memset(out[k], 0, sizeof *out[k]);
    tide_tensor_set_contiguous_layout(out[k], in[k]->dt, in[k]->ndim, in[k]->dims);
  }
  if (n->attrs.flags & WHILE_STACKED) { /* the count, and stacks of rows like the loop variables, rows unknown */
    memset(out[nv], 0, sizeof *out[nv]);
    tide_tensor_set_contiguous_layout(out[nv], TIDE_INT32, 0, NULL);
    for (int k = 0; k < nv; k++) {
      int64_t dims[TIDE_MAX_DIMS];
      dims[0] = -1;
      for (int d = 0; d < in[k]->ndim; d++) dims[d + 1] = in[k]->dims[d];
      memset(out[nv + 1 + k], 0, sizeof *out[nv + 1 + k]);
      tide_tensor_set_contiguous_layout(out[nv + 1 + k], in[k]->dt, in[k]->ndim + 1, dims);
    }
  }
  return TIDE_OK;
}

tide_status tide_graph_control_plan(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  if (n->kind != TIDE_NODE_COND && n->kind != TIDE_NODE_WHILE)
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s': node kind %d is not control flow", g->name, n->kind);
  for (int k = 0; k < n->n_in; k++)
    if (tide_dims_any_unknown(in[k]->ndim, in[k]->dims)) { /* shapes known only at run time: plan the subgraphs then */
      traced_layouts(n, out);
      return TIDE_OK;
    }
  return n->kind == TIDE_NODE_COND ? plan_cond(n, in, out) : plan_while(n, in, out);
}

/* The value of a one-element bool tensor (a cond's pred, a loop's condition). */
static tide_status flag_value(const tide_tensor *t, const char *op, const char *what, bool *v) {
  char s[128];
  if (t->dt != TIDE_BOOL || t->nelem != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s must be a one-element bool tensor, got %s %s", op, what,
                     tide_dtype_name(t->dt), TIDE_SHAPE_STR(s, t));
  *v = *(const unsigned char *)t->data != 0;
  return TIDE_OK;
}

/* Run the branch pred chooses; its results become the node's. */
static tide_status run_cond(gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  bool v = false;
  tide_status st = flag_value(in[0], "cond", "pred", &v);
  if (st) return st;
  tide_graph *t = n->sub[0], *f = n->sub[1];
  if (v) return tide_graph_run(t, t->n_inputs, in + 1, n->n_out, out);
  return tide_graph_run(f, f->n_inputs, in + 1 + t->n_inputs, n->n_out, out);
}

/* The count and stacks of a stacked WHILE node (graph/while_stack.c): the
 * stacks filled while it ran, or empty ones when nothing reads them. */
static tide_status finish_stacks(gnode *n, int64_t iters, wstack *stacks, bool filled, const tide_tensor *const *in,
                                 tide_tensor *const *out) {
  int nv = tide_graph_while_nvars(n);
  memset(out[nv], 0, sizeof *out[nv]);
  tide_status st = tide_tensor_init(out[nv], TIDE_INT32, 0, NULL);
  if (!st) *(int32_t *)out[nv]->data = (int32_t)iters;
  for (int k = 0; k < nv; k++) {
    wstack none = {0};
    tide_status sk = tide_wstack_finish(filled ? &stacks[k] : &none, in[k], out[nv + 1 + k]);
    if (!st) st = sk;
  }
  return st;
}

/* Iterate: the loop variables live in `vars`; each body run gives `next`,
 * which then replaces them (shares, so no data is copied). A stacked node
 * whose stacks are read also copies each iteration's loop variables into them. */
static tide_status run_while(gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  tide_graph *cg = n->sub[0], *bg = n->sub[1];
  int nv = tide_graph_while_nvars(n), nc = cg->n_inputs - nv;
  int64_t max_iters = n->attrs.n;
  bool stacked = n->attrs.flags & WHILE_STACKED, fill = stacked && (n->attrs.flags & WHILE_STACKS_WANTED);
  int64_t iters = 0;
  /* vars and next: 2 nv headers; cin and bin: the subgraphs' inputs; stacks: one per loop variable */
  __attribute__((cleanup(graph_free_at))) tide_tensor *vars = calloc(2 * (size_t)nv + 1, sizeof *vars);
  __attribute__((cleanup(graph_free_at))) const tide_tensor **cin =
    malloc(((size_t)cg->n_inputs + (size_t)bg->n_inputs + 1) * sizeof *cin);
  __attribute__((cleanup(graph_free_at))) tide_tensor **nout = malloc(((size_t)nv + 1) * sizeof *nout);
  __attribute__((cleanup(graph_free_at))) wstack *stacks = calloc((size_t)nv + 1, sizeof *stacks);
  if (!vars || !cin || !nout || !stacks) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  tide_tensor *next = vars + nv, flag, *fout = &flag;
  const tide_tensor **bin = cin + cg->n_inputs;
  memset(&flag, 0, sizeof flag);
  for (int k = 0; k < nv; k++) {
    tide_tensor_share(&vars[k], in[k]);
    cin[k] = bin[k] = &vars[k];
    nout[k] = &next[k];
  }
  for (int k = nv; k < cg->n_inputs; k++) cin[k] = in[k];
  for (int k = nv; k < bg->n_inputs; k++) bin[k] = in[nc + k];
  tide_status st = TIDE_OK;
  for (int64_t it = 0; max_iters < 0 || it < max_iters; it++) {
    bool go = false;
    st = tide_graph_run(cg, cg->n_inputs, cin, 1, &fout);
    if (!st) st = flag_value(&flag, "while_loop", "the condition", &go);
    tide_tensor_release(&flag);
    if (st || !go) break;
    for (int k = 0; fill && k < nv && !st; k++) st = tide_wstack_push(&stacks[k], &vars[k], k + 1);
    if (st) break;
    st = tide_graph_run(bg, bg->n_inputs, bin, nv, nout);
    if (st) break;
    iters++;
    if (stacked && iters > INT32_MAX) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "while_loop gradient: more than %d iterations", INT32_MAX);
      break;
    }
    for (int k = 0; k < nv; k++) {
      tide_tensor_release(&vars[k]);
      tide_tensor_share(&vars[k], &next[k]);
      tide_tensor_release(&next[k]);
    }
  }
  if (!st && stacked) st = finish_stacks(n, iters, stacks, fill, in, out);
  for (int k = 0; k < nv; k++) {
    if (!st) tide_tensor_share(out[k], &vars[k]);
    tide_tensor_release(&vars[k]);
    tide_tensor_release(&next[k]);
    tide_wstack_free(&stacks[k]);
  }
  return st;
}

tide_status tide_graph_control_run(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out) {
  if (n->kind == TIDE_NODE_COND) return run_cond(n, in, out);
  if (n->kind == TIDE_NODE_WHILE) return run_while(n, in, out);
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph '%s': node kind %d is not control flow", g->name, n->kind);
}
