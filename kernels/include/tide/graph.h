/* tide/graph.h — traced graphs: while a graph is being built on a thread,
 * registry ops on its symbolic tensors add nodes instead of computing; a
 * finished graph is optimized once and runs in one call, without Lua. */
#ifndef TIDE_GRAPH_H
#define TIDE_GRAPH_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"
#include "tide/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_graph tide_graph;

/* What a node is. */
typedef enum tide_node_kind {
  TIDE_NODE_INPUT = 0,   /* the k-th argument of the graph */
  TIDE_NODE_CONST,       /* a tensor captured at trace time */
  TIDE_NODE_CAPTURE,     /* a value of an enclosing graph (in a branch or loop body) */
  TIDE_NODE_VARIABLE,    /* a read of a variable's tensor, at each run */
  TIDE_NODE_OP,          /* a registry op */
  TIDE_NODE_ASSIGN,      /* a variable update (set, add or sub), in program order */
  TIDE_NODE_PRINT,       /* tide.print: formats its inputs to stdout at each run */
  TIDE_NODE_COND,        /* runs one of two subgraphs */
  TIDE_NODE_WHILE,       /* runs a body subgraph while a condition subgraph holds */
  TIDE_NODE_FUSED,       /* elementwise ops merged into one loop by the fusion pass */
  TIDE_NODE_EFFECT       /* a host side effect (a summary write): a C function called at each run */
} tide_node_kind;

/* A side effect a graph runs at each run, in program order with the other
 * side effects (tide_graph_effect): how a layer above the engine (the
 * summary writer) acts at run time without the graph knowing it. */
typedef struct tide_effect {
  const char *name;                                                    /* "summary.scalar": in text and errors */
  tide_status (*run)(void *ctx, int n, const tide_tensor *const *inputs); /* the inputs' values at this run */
  void (*release)(void *ctx);                                          /* when the graph goes (NULL: nothing) */
} tide_effect;

/* Variable update modes (TIDE_NODE_ASSIGN). */
enum { TIDE_ASSIGN_SET = 0, TIDE_ASSIGN_ADD = 1, TIDE_ASSIGN_SUB = 2 };

/* Optimization passes for tide_graph_finalize (bits). */
enum {
  TIDE_PASS_FOLD = 1,    /* evaluate nodes whose inputs are all constants */
  TIDE_PASS_CSE = 2,     /* merge identical nodes */
  TIDE_PASS_DCE = 4,     /* drop nodes no output or side effect needs */
  TIDE_PASS_FUSE = 8,    /* merge elementwise chains into one blocked loop */
  TIDE_PASS_PLAN = 16,   /* share intermediate buffers by liveness */
  TIDE_PASS_ALL = 31
};

/* ---- making, building, finishing ---------------------------------------- */

/* A new, empty graph (name is for printing; may be NULL). */
TIDE_API tide_graph *tide_graph_new(const char *name);
/* Free a graph (drop a reference: one taken by tide_graph_retain, else the
 * owner's). NULL is allowed. */
TIDE_API void tide_graph_free(tide_graph *g);
/* Take another reference: the graph lives until tide_graph_free has been
 * called once more than this (an input pipeline holds the graphs it runs). */
TIDE_API void tide_graph_retain(tide_graph *g);
/* Make g the graph being built on this thread, on top of the current one
 * (whose values g may then capture: branch and loop bodies). */
TIDE_API tide_status tide_graph_begin(tide_graph *g);
/* Stop building g (it must be the innermost graph being built). */
TIDE_API tide_status tide_graph_end(tide_graph *g);
/* Stop building g and every graph begun on top of it on this thread,
 * restoring the recorder that was current before g began: the way out
 * after an error or an abandoned builder. Nothing when g is not being built
 * on this thread. */
TIDE_API void tide_graph_abandon(tide_graph *g);
/* The graph being built on this thread, or NULL. */
TIDE_API tide_graph *tide_graph_building(void);
/* A unique id of g: symbolic tensors carry it in inline_data.sym.graph_id. */
TIDE_API uint64_t tide_graph_id(const tide_graph *g);

/* Add an argument: out becomes its symbolic tensor (dims -1 = unknown; ndim
 * TIDE_UNKNOWN_RANK = any rank, dims unread and may be NULL). */
TIDE_API tide_status tide_graph_input(tide_graph *g, int dtype, int ndim, const int64_t *dims, tide_tensor *out);
/* Add a constant holding (a share of) the eager tensor value: out becomes
 * its symbolic tensor, so ops on it record into g (for graphs built by hand
 * or loaded; a trace captures eager tensors as constants by itself). */
TIDE_API tide_status tide_graph_constant(tide_graph *g, const tide_tensor *value, tide_tensor *out);
/* Add a read of the variable whose tensor is `handle` (it must outlive g):
 * out becomes a symbolic tensor holding the value at each run. */
TIDE_API tide_status tide_graph_variable(tide_graph *g, tide_tensor *handle, tide_tensor *out);
/* Add a variable update: handle = value, += value or -= value (mode), run in
 * program order with the other side effects. */
TIDE_API tide_status tide_graph_assign(tide_graph *g, tide_tensor *handle, int mode, const tide_tensor *value);
/* Add a print of `text` (literal pieces) and tensors: each "%t" in text is
 * replaced by the next tensor, formatted as tide.print does. */
TIDE_API tide_status tide_graph_print(tide_graph *g, const char *text, int n, const tide_tensor *const *tensors);
/* Add a node that calls fx->run(ctx, n, values of inputs) at each run (fx
 * must outlive g). g owns ctx from now on, also when this fails: fx->release(ctx)
 * runs when g is freed (or at once on failure). A graph holding one cannot
 * be saved as a SavedModel. */
TIDE_API tide_status tide_graph_effect(tide_graph *g, const tide_effect *fx, void *ctx, int n,
                                       const tide_tensor *const *inputs);
/* Set the graph's results (symbolic tensors of g, or eager ones: constants). */
TIDE_API tide_status tide_graph_set_outputs(tide_graph *g, int n, const tide_tensor *const *outs);
/* Record where the node producing symbolic tensor t was made ("file.lua:12"). */
TIDE_API tide_status tide_graph_set_origin(tide_graph *g, const tide_tensor *t, const char *where);
/* Add a COND node to g: at each run it runs then_g when pred (a one-element
 * bool) is true, else else_g, giving their n_out results in out (blank
 * headers, made symbolic). Both branches were built on top of g
 * (tide_graph_begin while g was the graph being built, then
 * tide_graph_end), take no inputs and have n_out outputs of matching dtypes
 * and ranks; a dim the branches disagree on is unknown (-1) in out, and
 * ranks they disagree on make out's rank unknown (TIDE_UNKNOWN_RANK). Their
 * captures become the node's inputs. On success g owns both branches. */
TIDE_API tide_status tide_graph_cond(tide_graph *g, const tide_tensor *pred, tide_graph *then_g, tide_graph *else_g,
                                     int n_out, tide_tensor *const *out);
/* Add a WHILE node to g over n loop variables starting at init: while
 * cond_g(vars) (one one-element bool) is true and fewer than max_iters
 * iterations ran (max_iters < 0: no bound), vars = body_g(vars). Both were
 * built on top of g, each with n inputs (tide_graph_input: the loop
 * variables, with the dims the loop keeps; -1 where they change, and
 * TIDE_UNKNOWN_RANK for a variable of any shape); body_g gives n outputs of
 * the inputs' dtypes and ranks whose known dims fit the inputs' (any rank
 * for an input of unknown rank). out: n blank headers, made symbolic: the final values.
 * The subgraphs' captures become the node's inputs; on success g owns them. */
TIDE_API tide_status tide_graph_while(tide_graph *g, int n, const tide_tensor *const *init, tide_graph *cond_g,
                                      tide_graph *body_g, int64_t max_iters, tide_tensor *const *out);
/* Make the WHILE node of g that gave `result` (one of its loop results) also
 * give, at each run, its iteration count N (count: a blank header made an
 * int32 scalar) and, for each of its n loop variables, the values it had at
 * the start of every iteration, stacked: stacks[k] (blank headers, made
 * symbolic) is [N, dims of loop variable k]. What a gradient needs instead of
 * running the loop again; stacks nothing reads are not filled (finalize sees
 * to it). g must be the graph being built; a loop variable's dims must then
 * not change between iterations, and its rank must be below TIDE_MAX_DIMS. */
TIDE_API tide_status tide_graph_while_stack(tide_graph *g, const tide_tensor *result, tide_tensor *count, int n,
                                            tide_tensor *const *stacks);
/* Optimize with the given passes and freeze the graph for running. */
TIDE_API tide_status tide_graph_finalize(tide_graph *g, unsigned passes);

/* ---- a forward graph and its backward (graph/split.c) --------------------- */

/* The values of enclosing graphs that g, built on top of another, captures. */
TIDE_API int tide_graph_num_captures(const tide_graph *g);
/* Make g, finished (ended, not finalized) and built on top of the graph being
 * built, a graph of its own: its captures become inputs after its own ones
 * (in capture order), and outer[k] (n >= tide_graph_num_captures(g) blank
 * headers, made symbolic) names the enclosing graph's value that input
 * (own inputs + k) stands for, so the enclosing graph can give it as an
 * output. This is how a backward pass traced on top of its forward pass
 * becomes a graph of the forward's saved values. */
TIDE_API tide_status tide_graph_detach(tide_graph *g, int n, tide_tensor *const *outer);
/* The enclosing graph's values that g's captures name, g left as it is:
 * outer[k] (n >= tide_graph_num_captures(g) blank headers, made symbolic)
 * for capture k. g (finalized or not) was built on top of the graph being
 * built now, which can then compute them and hand them to each run of g
 * (tide_graph_run_captured): how interleave feeds an inner map the values it
 * captured of the interleave function's element. */
TIDE_API tide_status tide_graph_capture_values(const tide_graph *g, int n, tide_tensor *const *outer);
/* While g is being built, let `local` (a value of g, or an eager tensor: a
 * constant) stand for `foreign`, a symbolic tensor of another graph: ops on
 * `foreign` in g, and in graphs built on top of g, use `local` instead. How a
 * backward pass is traced again over the values its forward saved. */
TIDE_API tide_status tide_graph_alias(tide_graph *g, const tide_tensor *foreign, const tide_tensor *local);
/* While g is being built, reads of the variable whose tensor is `handle` (in
 * g and in graphs built on top of it) give `value`, a symbolic tensor read
 * earlier (of g, an enclosing graph, or one an alias stands for), instead of
 * reading the variable. How a gradient that runs a loop body or a branch
 * again sees the values its forward pass read. */
TIDE_API tide_status tide_graph_pin_variable(tide_graph *g, tide_tensor *handle, const tide_tensor *value);
/* Undo g's pin of the variable whose tensor is `handle` (none: nothing to do):
 * reads read the variable again. */
TIDE_API void tide_graph_unpin_variable(tide_graph *g, const tide_tensor *handle);

/* ---- running -------------------------------------------------------------- */

/* Run a finalized graph on n_in tensors (matching its inputs' dtypes and the
 * known dims), giving its n_out results in blank headers. Plans for each set
 * of input shapes are made once and cached. */
TIDE_API tide_status tide_graph_run(tide_graph *g, int n_in, const tide_tensor *const *in, int n_out,
                                    tide_tensor *const *out);
/* Run a finalized graph that captures values of an enclosing graph, given
 * those values (caps: n_caps = tide_graph_num_captures(g) eager tensors, in
 * capture order) as well as its n_in inputs; otherwise as tide_graph_run. */
TIDE_API tide_status tide_graph_run_captured(tide_graph *g, int n_in, const tide_tensor *const *in, int n_caps,
                                             const tide_tensor *const *caps, int n_out, tide_tensor *const *out);

/* Print now, as a PRINT node does when its graph runs (eager tide.print). */
TIDE_API tide_status tide_print(const char *text, int n, const tide_tensor *const *tensors);

/* ---- looking inside ----------------------------------------------------------- */

TIDE_API int tide_graph_num_inputs(const tide_graph *g);
TIDE_API int tide_graph_num_outputs(const tide_graph *g);
/* Nodes that remain (after passes, dropped nodes are not counted). */
TIDE_API int tide_graph_num_nodes(const tide_graph *g);
/* 1 when a second run of g would not repeat the first: it draws random
 * numbers, assigns variables or prints (in its cond and while subgraphs too). */
TIDE_API int tide_graph_has_effects(const tide_graph *g);
/* Bytes the memory plan reserves for intermediates at the last planned shapes. */
TIDE_API int64_t tide_graph_planned_bytes(const tide_graph *g);
/* The graph as text, one node a line (op, inputs, dtype, shape, origin), or
 * as Graphviz dot. The string lives until the graph changes or is freed. */
TIDE_API const char *tide_graph_text(tide_graph *g);
TIDE_API const char *tide_graph_dot(tide_graph *g);

/* ---- TensorBoard (graph/tf_graph_def.c) ------------------------------------- */

/* Finalized g as a serialized TensorFlow GraphDef for TensorBoard's graph
 * dashboard (docs/tensorboard.md): one NodeDef per live node named after its
 * op as TF names nodes ("matmul", "matmul_1"); fused nodes as the ops they
 * hold; cond and while subgraphs under the scopes "cond/then/", "cond/else/",
 * "while/cond/", "while/body/"; arguments as Placeholders named in_names[i]
 * (NULL or missing: "input_<i>"); results as Identity nodes named
 * out_names[i] (NULL or missing: "Identity"); reads and assigns of handles[k]
 * wired to a VarHandleOp named var_names[k] ("Variable" for any other);
 * every name under `scope` when given ("train_function/"; NULL: none).
 * *bytes (malloc'ed, *len bytes) is freed with tide_graph_tf_graph_def_free. */
TIDE_API tide_status tide_graph_tf_graph_def(const tide_graph *g, const char *scope, int n_in, const char *const *in_names, int n_out,
                                             const char *const *out_names, int n_vars, tide_tensor *const *handles,
                                             const char *const *var_names, uint8_t **bytes, size_t *len);
TIDE_API void tide_graph_tf_graph_def_free(uint8_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
