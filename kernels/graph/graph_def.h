/* graph/graph_def.h — a graph as data (tide/saved_model.h's tide_graph_def):
 * a finalized graph written as JSON (def_write.c), JSON read and checked into
 * a definition (def_read.c), and a definition rebuilt into a graph (def_build.c). */
#ifndef TIDE_GRAPH_DEF_H
#define TIDE_GRAPH_DEF_H

#include <cjson/cJSON.h>

#include "tide/saved_model.h"

/* Deepest nesting of cond/while subgraphs a file may hold. */
enum { GDEF_MAX_DEPTH = 32 };

typedef struct gdef_input {
  int dt, ndim;
  int64_t dims[TIDE_MAX_DIMS];
} gdef_input;

struct tide_graph_def {
  char *name;
  int n_inputs;
  gdef_input *inputs;
  int n_nodes;
  tide_def_node *nodes;
  tide_tensor *values;         /* CONST nodes' tensors (shared), one per node (blank for others) */
  int n_outputs;
  int32_t *outputs;            /* pairs (node, output) */
};

/* Constants met while writing graphs: shared references, named "c<k>" by position. */
typedef struct gdef_tensors {
  int n, cap;
  tide_tensor *items;
} gdef_tensors;
void gdef_tensors_free(gdef_tensors *t);

/* Finalized g as a JSON object (NULL with an error set): variable nodes name
 * handles[k] by k (a handle not among them is an error); constants are
 * appended to consts and named by their position there. */
cJSON *tide_graph_def_write(const tide_graph *g, int n_vars, tide_tensor *const *handles, gdef_tensors *consts);

/* The tensor a constant's name stands for, or NULL when there is none. */
typedef const tide_tensor *(*gdef_lookup_fn)(void *ctx, const char *name);
/* Read and check the graph object j (from file `file`, for messages) of a
 * model with n_vars variables; errors name the file, the graph and the node. */
tide_status tide_graph_def_read(const cJSON *j, const char *file, int n_vars, gdef_lookup_fn lookup, void *ctx,
                                tide_graph_def **out);
void tide_graph_def_free(tide_graph_def *d);
/* Rebuild d as a new graph (finalized with every pass) whose variable nodes
 * read handles[v]. */
tide_status tide_graph_def_build(const tide_graph_def *d, tide_tensor *const *handles, tide_graph **out);

#endif
