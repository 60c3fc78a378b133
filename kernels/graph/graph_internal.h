/* graph/graph_internal.h — the graph IR shared by the builder, the passes,
 * the planner and the executor: nodes, values, subgraphs and run plans. */
#ifndef TIDE_GRAPH_INTERNAL_H
#define TIDE_GRAPH_INTERNAL_H

#include <stdlib.h>

#include "../core/registry.h"
#include "../core/unknown_dims.h"
#include "tide/graph.h"

/* A node may have any number of inputs and outputs (a concat of a hundred
 * tensors, a loop of many variables). Code that gathers a node's operands
 * keeps them on the stack when they are at most this many (most nodes have
 * one to three) and on the heap past that. */
enum { GRAPH_STACK_VALUES = 16 };

/* Room for n items of `size` bytes: `stack` (of stack_n items) when they
 * fit, else new heap memory (NULL when there is none: set an error). Give it
 * back with graph_scratch_free. */
static inline void *graph_scratch(void *stack, int stack_n, int n, size_t size) {
  return n <= stack_n ? stack : malloc((size_t)(unsigned)n * size);
}
static inline void graph_scratch_free(void *p, void *stack) {
  if (p != stack) free(p);
}
/* For __attribute__((cleanup)): free the heap pointer *p points to (NULL is fine). */
static inline void graph_free_at(void *p) { free(*(void **)p); }

/* Node flags. */
enum {
  NODE_DEAD = 1,        /* removed by a pass (kept in the array so ids stay stable) */
  NODE_STATEFUL = 2     /* side effects or per-run state: never folded, merged or dropped */
};

/* A value: output `index` of node `node`. */
typedef struct gvalue {
  int32_t node;
  int32_t index;
} gvalue;

/* WHILE node attrs.flags (graph/while_stack.c): the node also gives its
 * iteration count and each loop variable's values stacked by iteration
 * (for its gradient), and whether anything reads those stacks. */
enum { WHILE_STACKED = 1, WHILE_STACKS_WANTED = 2 };

/* While a graph is built: a value of another graph (graph_id, node, index)
 * and the value of this graph that stands for it (graph/split.c). */
typedef struct galias {
  uint64_t graph_id;
  int32_t node, index;
  gvalue local;
} galias;

/* While a graph is built: reads of the variable whose tensor is `handle`
 * give `value` (a symbolic tensor of this graph, an enclosing one, or one an
 * alias stands for) instead of reading it (graph/split.c). */
typedef struct gpin {
  const tide_tensor *handle;
  tide_tensor value;
} gpin;

typedef struct gnode {
  int kind;                   /* tide_node_kind */
  int op;                     /* registry op (TIDE_NODE_OP) */
  uint32_t flags;             /* NODE_* */
  tide_attrs attrs;           /* the op's attributes (OP) */
  int n_in, n_out;
  gvalue *in;                 /* inputs */
  tide_tensor *out;           /* output descriptors: dtype and dims (-1 unknown); no data */
  tide_tensor value;          /* CONST: the captured tensor (shared) */
  tide_tensor *handle;        /* VARIABLE, ASSIGN: the variable's tensor (not owned) */
  int assign_mode;            /* ASSIGN */
  int input_index;            /* INPUT: which argument */
  gvalue capture;             /* CAPTURE: the value in the enclosing graph */
  char *text;                 /* PRINT: the template */
  char *origin;               /* where it was recorded ("file.lua:12"), or NULL */
  tide_graph *sub[2];         /* COND: then/else; WHILE: cond/body (owned) */
  void *fused;                /* FUSED: the fused program (graph/fuse.c) */
  const tide_effect *effect;  /* EFFECT: what to call, and its context (owned: effect->release) */
  void *effect_ctx;
} gnode;

/* An open-addressing multimap from 64-bit keys to node indices
 * (graph/build_index.c); vals[s] < 0 marks an empty slot. */
typedef struct gmap {
  uint64_t *keys;
  int *vals;
  uint32_t cap, used;
} gmap;

/* What graph building looks up per op, hashed so building stays linear
 * (graph/build_index.c); freed when the graph is finalized. */
typedef struct gindex {
  gmap consts;                /* CONST nodes: by identity, small inline ones by value */
  gmap reads;                 /* variable handle -> its latest VARIABLE node */
  gmap assigns;               /* variable handle -> the last node assigning it (ASSIGN, COND, WHILE) */
  gmap captures;              /* outer value -> its CAPTURE node */
} gindex;

struct tide_graph {
  uint64_t id;
  int holds;                  /* atomic: references beyond the owner's (tide_graph_retain) */
  char *name;
  tide_graph *parent;         /* the enclosing graph while building */
  tide_recorder outer_recorder; /* while building: the recorder to restore when g ends */
  gnode *nodes;
  int nnodes, cap;
  int n_inputs;
  int *inputs;                /* node of each argument */
  int n_outputs;
  gvalue *outputs;
  int n_captures;             /* CAPTURE nodes, in the order they were added */
  int *captures;
  bool building, finalized;
  struct gplan *plans;        /* run plans, one per set of input shapes (newest used first) */
  int64_t planned_bytes;
  unsigned passes;            /* TIDE_PASS_* given to finalize (the memory plan reads PLAN) */
  char *text_cache;
  gindex index;               /* while building: lookups by key (graph/build_index.c) */
  galias *aliases;            /* while building: other graphs' values and what stands for them here */
  int n_aliases;
  gpin *pins;                 /* while building: variables whose reads give a value read earlier */
  int n_pins;
};

/* Add a node (zeroed) and return its index, or -1 with an error set. */
int tide_graph_add_node(tide_graph *g, int kind, int n_in, int n_out);
/* The descriptor of a value. */
static inline tide_tensor *gval_desc(tide_graph *g, gvalue v) { return &g->nodes[v.node].out[v.index]; }
/* Make `t` the symbolic tensor naming output (node, index) of g. */
void tide_graph_symbolic(tide_graph *g, int node, int index, tide_tensor *t);
/* Free the plans (shapes or nodes changed). */
void tide_graph_drop_plans(tide_graph *g);

/* The builder's indexes (graph/build_index.c). find_* return a node index
 * or -1; note_* add a node just made (a status: out of memory). */
int tide_graph_find_const(const tide_graph *g, const tide_tensor *t);
tide_status tide_graph_note_const(tide_graph *g, int node);
/* The VARIABLE node reading handle that no later node assigns to, or -1. */
int tide_graph_find_read(const tide_graph *g, const tide_tensor *handle);
tide_status tide_graph_note_read(tide_graph *g, int node);
/* Note that node (ASSIGN, or COND/WHILE whose subgraphs assign) updates variables. */
tide_status tide_graph_note_assigns(tide_graph *g, int node);
int tide_graph_find_capture(const tide_graph *g, gvalue outer);
tide_status tide_graph_note_capture(tide_graph *g, int node);
void tide_graph_index_free(tide_graph *g);

/* Node kinds with their own planning and running (graph/control.c for
 * COND and WHILE, graph/fuse.c for FUSED): resolve the output layouts from
 * the input layouts, and run on input tensors into allocated outputs. */
tide_status tide_graph_control_plan(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out);
tide_status tide_graph_control_run(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out);
tide_status tide_graph_fused_plan(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out);
tide_status tide_graph_fused_run(tide_graph *g, gnode *n, const tide_tensor *const *in, tide_tensor *const *out,
                                 unsigned hints);

/* The loop variables of a WHILE node (its first outputs; a stacked node
 * gives the iteration count and one stack per loop variable after them). */
static inline int tide_graph_while_nvars(const gnode *n) { return n->sub[1]->n_outputs; }

/* graph/split.c: true, with *v set, when g has an alias for the symbolic
 * tensor t of another graph (tide_graph_alias). */
bool tide_graph_find_alias(const tide_graph *g, const tide_tensor *t, gvalue *v);
/* graph/split.c: the value pinned for reads of variable `handle` in g or a
 * graph g is built on top of (tide_graph_pin_variable), or NULL. */
const tide_tensor *tide_graph_find_pin(const tide_graph *g, const tide_tensor *handle);

/* graph/while_stack.c: a growing [rows, ...] buffer a WHILE node fills with
 * one loop variable's value per iteration. */
typedef struct wstack {
  tide_tensor buf;            /* [cap, row dims...], contiguous; empty until the first row */
  tide_tensor row0;           /* layout of the first row (later rows must match it) */
  int64_t rows, cap;
} wstack;
/* Append a copy of `row` (the loop variable `var` (1-based, for messages) at
 * an iteration's start); rows after the first must have its dtype and dims. */
tide_status tide_wstack_push(wstack *s, const tide_tensor *row, int var);
/* The stack as a tensor [rows, row dims...] (row_like gives the dtype and
 * row dims when no row was pushed) in the blank header out; frees s. */
tide_status tide_wstack_finish(wstack *s, const tide_tensor *row_like, tide_tensor *out);
/* Let go of s's buffer (after a failure; safe after finish). */
void tide_wstack_free(wstack *s);
/* Clear WHILE_STACKS_WANTED on the stacked WHILE nodes of g whose stacks no
 * node, output or subgraph reads, so they run without filling them. */
tide_status tide_graph_trim_stacks(tide_graph *g);

/* Passes (graph/passes.c). */
tide_status tide_graph_run_passes(tide_graph *g, unsigned passes);

/* Run finalized g (graph/exec.c) with the values of its CAPTURE nodes given
 * too: caps[k] is the value of capture g->captures[k] (a branch or loop body
 * run by its enclosing graph's COND/WHILE node). tide_graph_run is this with
 * no captures. */
tide_status tide_graph_exec(tide_graph *g, int n_in, const tide_tensor *const *in, int n_caps,
                            const tide_tensor *const *caps, int n_out, tide_tensor *const *out);

#endif
