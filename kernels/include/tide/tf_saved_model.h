/* tide/tf_saved_model.h — TensorFlow SavedModels (saved_model.pb + variables/) read
 * in C: each signature rebuilt as a finalized tide graph of registry ops. */
#ifndef TIDE_TF_SAVED_MODEL_H
#define TIDE_TF_SAVED_MODEL_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/graph.h"
#include "tide/saved_model.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_tf_saved_model tide_tf_saved_model;

/* Read the TF SavedModel in directory `dir`: its saved_model.pb (the
 * MetaGraphDef tagged "serve", else the only one), the function library, the
 * signatures, and the variables from variables/variables (TF's tensor
 * bundle, through the restore function the SavedModel names). Each signature
 * is mapped onto registry ops and finalized; a TF op tide does not map is an
 * error naming every such op and a node that uses it, all at once. Errors
 * name the folder and what is wrong; nothing in the files is executed. */
TIDE_API tide_status tide_tf_saved_model_open(const char *dir, tide_tf_saved_model **out);
TIDE_API void tide_tf_saved_model_free(tide_tf_saved_model *m);

/* Signatures, sorted by name (init ops left out). */
TIDE_API int tide_tf_saved_model_num_signatures(const tide_tf_saved_model *m);
TIDE_API const char *tide_tf_saved_model_signature_name(const tide_tf_saved_model *m, int k);
/* Signature k's finalized graph (owned by m): inputs and outputs in the
 * order of their TF names, sorted. */
TIDE_API tide_graph *tide_tf_saved_model_graph(tide_tf_saved_model *m, int k);
/* TF's name of input or output i of signature k ("x", "output_0"), or NULL. */
TIDE_API const char *tide_tf_saved_model_input_name(const tide_tf_saved_model *m, int k, int i);
TIDE_API const char *tide_tf_saved_model_output_name(const tide_tf_saved_model *m, int k, int i);
/* Input i of signature k as the SavedModel declares it: its tide dtype
 * (return value; -1 out of range), rank in *ndim (TIDE_UNKNOWN_RANK: any)
 * and dims (-1 where free). */
TIDE_API int tide_tf_saved_model_input_spec(const tide_tf_saved_model *m, int k, int i, int *ndim, int64_t *dims);
/* Output i of signature k as the SavedModel declares it (as input_spec). */
TIDE_API int tide_tf_saved_model_output_spec(const tide_tf_saved_model *m, int k, int i, int *ndim, int64_t *dims);

/* Variables: their checkpoint keys ("layer/kernel/.ATTRIBUTES/VARIABLE_VALUE")
 * and tensors (owned by m; the graphs read them at each run). */
TIDE_API int tide_tf_saved_model_num_variables(const tide_tf_saved_model *m);
TIDE_API const char *tide_tf_saved_model_variable_name(const tide_tf_saved_model *m, int k);
TIDE_API tide_tensor *tide_tf_saved_model_variable(tide_tf_saved_model *m, int k);

/* Signature k as a graph definition (tide/saved_model.h; made on first call, owned by m): the same graph, its
 * variable nodes naming this model's variables by index, its constants shared. tide.saved_model's replay runs
 * it through the ops, with Variables in place of the model's variables, so a tape differentiates them. */
TIDE_API tide_status tide_tf_saved_model_def(tide_tf_saved_model *m, int k, const tide_graph_def **out);

#ifdef __cplusplus
}
#endif
#endif
