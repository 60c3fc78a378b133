/* graph/passes.h — the optimization passes run at finalize (fold.c, cse.c,
 * passes.c, fuse.c) and the bookkeeping of value uses they share. */
#ifndef TIDE_GRAPH_PASSES_H
#define TIDE_GRAPH_PASSES_H

#include "graph_internal.h"

/* Constant folding: ops on constants become constants (graph/fold.c). */
tide_status tide_graph_fold(tide_graph *g);
/* Common-subexpression elimination: identical nodes merge (graph/cse.c). */
tide_status tide_graph_cse(tide_graph *g);
/* Dead-code elimination: drop what no output or side effect needs (graph/passes.c). */
tide_status tide_graph_dce(tide_graph *g);
/* Elementwise fusion: groups of elementwise ops become FUSED nodes (graph/fuse.c). */
tide_status tide_graph_fuse(tide_graph *g);

/* Uses of each node's outputs by live nodes, graph outputs and the CAPTURE
 * nodes of live nodes' subgraphs: a new array of g->nnodes counts (caller
 * frees), or NULL with an error set. */
int *tide_graph_use_counts(const tide_graph *g);
/* Mark every node whose outputs a capture of a live node's subgraph reads. */
void tide_graph_mark_captured(const tide_graph *g, char *mark);
/* Point graph outputs and subgraph captures at remap[node] instead of node. */
void tide_graph_remap_uses(tide_graph *g, const int *remap);

/* Plan g for its argument shapes when they are all known, so its planned
 * bytes can be read before it runs (graph/exec.c). */
tide_status tide_graph_preplan(tide_graph *g);

/* A FUSED node's text name ("fused[mul, add, tanh]"), its description, and
 * step t of it as text into buf ("s1 = add(s0, %2) : float32 -> %7");
 * returns the number of steps (0 for a t out of range). From graph/fuse.c. */
const char *tide_graph_fused_name(const gnode *n);
const struct tide_fused *tide_graph_fused_desc(const gnode *n);
int tide_graph_fused_step_text(const tide_graph *g, const gnode *n, int t, char *buf, size_t size);

#endif
