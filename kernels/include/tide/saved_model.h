/* tide/saved_model.h — SavedModels: finalized graphs, their signatures and
 * variables written to a directory (docs/saved_model.md), read back, checked, and rebuilt as runnable graphs. */
#ifndef TIDE_SAVED_MODEL_H
#define TIDE_SAVED_MODEL_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"
#include "tide/ops.h"
#include "tide/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this build writes, and the newest it reads. */
enum { TIDE_SAVED_MODEL_VERSION = 1 };

/* ---- writing -------------------------------------------------------------- */

typedef struct tide_saved_model_writer tide_saved_model_writer;

/* A new, empty writer (NULL with an error set when out of memory). */
TIDE_API tide_saved_model_writer *tide_saved_model_writer_new(void);
TIDE_API void tide_saved_model_writer_free(tide_saved_model_writer *w);
/* Add a variable: its name (unique in the model), its tensor (read at save
 * time; graphs name it by this handle) and whether it is trainable. */
TIDE_API tide_status tide_saved_model_add_variable(tide_saved_model_writer *w, const char *name, tide_tensor *handle,
                                                   int trainable);
/* Add a function (a signature): a finalized graph whose inputs are named
 * in_names (with their specs: dtype, rank and dims, -1 = None, of each
 * graph input as the graph holds them) and whose outputs are named out_names.
 * The graph may read and assign only variables added before save. */
TIDE_API tide_status tide_saved_model_add_function(tide_saved_model_writer *w, const char *name, const tide_graph *g,
                                                   int n_in, const char *const *in_names, int n_out,
                                                   const char *const *out_names);
/* Attach a JSON text the loader gives back unchanged (a Keras model's config);
 * it must parse as JSON. */
TIDE_API tide_status tide_saved_model_set_extra(tide_saved_model_writer *w, const char *json);
/* Write everything into directory `dir` atomically: into a fresh sibling
 * directory, fsynced, then renamed over dir (an existing SavedModel there is
 * replaced only once the new one is complete; on failure it is left as it was). */
TIDE_API tide_status tide_saved_model_save(tide_saved_model_writer *w, const char *dir);

/* ---- reading ---------------------------------------------------------------- */

typedef struct tide_saved_model tide_saved_model;
typedef struct tide_graph_def tide_graph_def;

/* One node of a function as the file describes it, checked: inputs name
 * earlier nodes of the same graph, captures earlier nodes of the enclosing
 * one, variables exist, ops exist with their arity. */
typedef struct tide_def_node {
  int32_t kind;                  /* tide_node_kind (never FUSED: files hold plain ops) */
  int32_t op;                    /* OP: the registry op */
  tide_attrs attrs;              /* OP: its attributes */
  int32_t n_in, n_out;
  const int32_t *in;             /* n_in pairs (node, output) */
  int32_t input_index;           /* INPUT: which argument */
  int32_t var;                   /* VARIABLE, ASSIGN: the model's variable index */
  int32_t assign_mode;           /* ASSIGN: TIDE_ASSIGN_* */
  int32_t capture[2];            /* CAPTURE: (node, output) of the enclosing graph */
  const tide_tensor *value;      /* CONST */
  const char *text;              /* PRINT: the template ("%t" per tensor) */
  const char *origin;            /* where it was recorded ("model.lua:12"), or NULL */
  const tide_graph_def *sub[2];  /* COND: then, else; WHILE: cond, body */
  int64_t max_iters;             /* WHILE: < 0 = no bound */
  int32_t stacked;               /* WHILE: also gives its count and per-iteration stacks */
} tide_def_node;

/* Read and check the SavedModel in dir: its graph file and tensors. Errors
 * name the file and what is wrong; nothing in the files is ever executed. */
TIDE_API tide_status tide_saved_model_open(const char *dir, tide_saved_model **out);
TIDE_API void tide_saved_model_free(tide_saved_model *m);

TIDE_API int tide_saved_model_num_variables(const tide_saved_model *m);
TIDE_API const char *tide_saved_model_variable_name(const tide_saved_model *m, int k);
TIDE_API int tide_saved_model_variable_trainable(const tide_saved_model *m, int k);
/* The variable's tensor, owned by m (its value as saved, until changed). */
TIDE_API tide_tensor *tide_saved_model_variable(tide_saved_model *m, int k);
TIDE_API int tide_saved_model_num_functions(const tide_saved_model *m);
TIDE_API const char *tide_saved_model_function_name(const tide_saved_model *m, int k);
/* The function's index by name, or -1. */
TIDE_API int tide_saved_model_find_function(const tide_saved_model *m, const char *name);
TIDE_API const tide_graph_def *tide_saved_model_function_def(const tide_saved_model *m, int k);
TIDE_API const char *tide_saved_model_input_name(const tide_saved_model *m, int k, int i);
TIDE_API const char *tide_saved_model_output_name(const tide_saved_model *m, int k, int i);
/* The extra JSON text given at save, or NULL. */
TIDE_API const char *tide_saved_model_extra(const tide_saved_model *m);
/* Build function k as a new finalized graph (the caller frees it) whose
 * variable nodes read handles[v] (NULL: m's own tensors). */
TIDE_API tide_status tide_saved_model_build(tide_saved_model *m, int k, tide_tensor *const *handles,
                                            tide_graph **out);

/* A graph definition: its arguments' specs, nodes and outputs. */
TIDE_API int tide_graph_def_num_inputs(const tide_graph_def *d);
/* Argument i's dtype and rank (TIDE_UNKNOWN_RANK: any); dims (TIDE_MAX_DIMS room) gets its dims, -1 = None. */
TIDE_API int tide_graph_def_input(const tide_graph_def *d, int i, int *ndim, int64_t *dims);
TIDE_API int tide_graph_def_num_nodes(const tide_graph_def *d);
TIDE_API const tide_def_node *tide_graph_def_node(const tide_graph_def *d, int i);
TIDE_API int tide_graph_def_num_outputs(const tide_graph_def *d);
/* Output i as (node, index) pairs: out[0] = node, out[1] = index. */
TIDE_API void tide_graph_def_output(const tide_graph_def *d, int i, int32_t *out);

#ifdef __cplusplus
}
#endif
#endif
