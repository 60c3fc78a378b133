/* graph/passes.c — the optimization pipeline run once when a graph is
 * finalized (fold, CSE, DCE, fusion; the memory plan runs per input shapes
 * in graph/plan.c), dead-code elimination, and the use bookkeeping shared by
 * the passes (graph outputs and subgraph captures count as uses). */
#include "passes.h"

#include <stdlib.h>

/* Call fn on each CAPTURE node of the subgraphs of g's live nodes (their
 * `capture` names a value of g). */
static void each_sub_capture(const tide_graph *g, void (*fn)(gnode *cap, void *ctx), void *ctx) {
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int s = 0; s < 2; s++) {
      tide_graph *sub = n->sub[s];
      if (!sub) continue;
      for (int k = 0; k < sub->nnodes; k++)
        if (sub->nodes[k].kind == TIDE_NODE_CAPTURE && !(sub->nodes[k].flags & NODE_DEAD)) fn(&sub->nodes[k], ctx);
    }
  }
}

/* each_sub_capture callbacks: count, mark, remap the captured node. */
static void count_capture(gnode *cap, void *ctx) { ((int *)ctx)[cap->capture.node]++; }
static void mark_capture(gnode *cap, void *ctx) { ((char *)ctx)[cap->capture.node] = 1; }
static void remap_capture(gnode *cap, void *ctx) { cap->capture.node = ((const int *)ctx)[cap->capture.node]; }

int *tide_graph_use_counts(const tide_graph *g) {
  int *uses = calloc((size_t)g->nnodes + 1, sizeof *uses);
  if (!uses) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
    return NULL;
  }
  for (int i = 0; i < g->nnodes; i++) {
    const gnode *n = &g->nodes[i];
    if (n->flags & NODE_DEAD) continue;
    for (int k = 0; k < n->n_in; k++) uses[n->in[k].node]++;
  }
  for (int k = 0; k < g->n_outputs; k++) uses[g->outputs[k].node]++;
  each_sub_capture(g, count_capture, uses);
  return uses;
}

void tide_graph_mark_captured(const tide_graph *g, char *mark) { each_sub_capture(g, mark_capture, mark); }

void tide_graph_remap_uses(tide_graph *g, const int *remap) {
  for (int k = 0; k < g->n_outputs; k++) g->outputs[k].node = remap[g->outputs[k].node];
  each_sub_capture(g, remap_capture, (void *)remap);
}

tide_status tide_graph_dce(tide_graph *g) {
  char *live = calloc((size_t)g->nnodes + 1, 1);
  if (!live) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph: out of memory");
  for (int k = 0; k < g->n_outputs; k++) live[g->outputs[k].node] = 1;
  for (int i = 0; i < g->nnodes; i++)
    if ((g->nodes[i].flags & NODE_STATEFUL) || g->nodes[i].kind == TIDE_NODE_INPUT ||
        g->nodes[i].kind == TIDE_NODE_CAPTURE)
      live[i] = 1;
  /* Inputs come before their users, so one backward sweep marks everything
   * needed; a subgraph's captures are uses of its node's values. */
  for (int i = g->nnodes - 1; i >= 0; i--) {
    gnode *n = &g->nodes[i];
    if (!live[i] || (n->flags & NODE_DEAD)) continue;
    for (int k = 0; k < n->n_in; k++) live[n->in[k].node] = 1;
    for (int s = 0; s < 2; s++)
      for (int k = 0; n->sub[s] && k < n->sub[s]->nnodes; k++)
        if (n->sub[s]->nodes[k].kind == TIDE_NODE_CAPTURE) live[n->sub[s]->nodes[k].capture.node] = 1;
  }
  for (int i = 0; i < g->nnodes; i++) {
    if (live[i]) continue;
    gnode *n = &g->nodes[i];
    n->flags |= NODE_DEAD;
    if (n->kind == TIDE_NODE_CONST) tide_tensor_release(&n->value); /* folded-away data goes now */
  }
  free(live);
  return TIDE_OK;
}

tide_status tide_graph_run_passes(tide_graph *g, unsigned passes) {
  g->passes = passes;
  tide_status st = TIDE_OK;
  /* Folding makes constants CSE can merge; both leave nodes DCE drops; fusion
   * then counts only the uses that remain, and writes one-element constants
   * into its descriptions, so DCE runs again to drop those it emptied. */
  if (!st && (passes & TIDE_PASS_FOLD)) st = tide_graph_fold(g);
  if (!st && (passes & TIDE_PASS_CSE)) st = tide_graph_cse(g);
  if (!st && (passes & TIDE_PASS_DCE)) st = tide_graph_dce(g);
  if (!st) st = tide_graph_trim_stacks(g); /* stacks a while_loop keeps for a gradient nothing takes: not filled */
  if (!st && (passes & TIDE_PASS_FUSE)) st = tide_graph_fuse(g);
  if (!st && (passes & TIDE_PASS_FUSE) && (passes & TIDE_PASS_DCE)) st = tide_graph_dce(g);
  if (!st) st = tide_graph_preplan(g);
  return st;
}
