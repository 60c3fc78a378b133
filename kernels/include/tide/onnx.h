/* tide/onnx.h — ONNX models (a ModelProto file, its external data beside it) read
 * in C: the graph mapped onto registry ops and finalized, run by ONNX's names. */
#ifndef TIDE_ONNX_H
#define TIDE_ONNX_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/graph.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_onnx_model tide_onnx_model;

/* Read the ONNX model at `path`: its opset imports (the default domain, opsets
 * TIDE_ONNX_MIN_OPSET to TIDE_ONNX_MAX_OPSET), initializers (with external data
 * in files beside the model, never outside its folder), the graph's inputs and
 * outputs, and its nodes mapped onto registry ops (NCHW kept at the edges: the
 * image ops transpose to tide's NHWC inside). An op tide does not map is an
 * error naming every such op and a node that uses it, all at once; a corrupt
 * or truncated file, or one past its sizes, is an error naming the file. */
TIDE_API tide_status tide_onnx_model_open(const char *path, tide_onnx_model **out);
TIDE_API void tide_onnx_model_free(tide_onnx_model *m);

enum { TIDE_ONNX_MIN_OPSET = 13, TIDE_ONNX_MAX_OPSET = 21 };

/* The finalized graph (owned by m): inputs and outputs in the model's order. */
TIDE_API tide_graph *tide_onnx_model_graph(tide_onnx_model *m);
/* The model's opset of the default domain. */
TIDE_API int tide_onnx_model_opset(const tide_onnx_model *m);
TIDE_API int tide_onnx_model_num_inputs(const tide_onnx_model *m);
TIDE_API int tide_onnx_model_num_outputs(const tide_onnx_model *m);
/* ONNX's name of input or output i, or NULL. */
TIDE_API const char *tide_onnx_model_input_name(const tide_onnx_model *m, int i);
TIDE_API const char *tide_onnx_model_output_name(const tide_onnx_model *m, int i);
/* Input (output) i as the model declares it: its tide dtype (return value; -1
 * out of range), rank in *ndim (TIDE_UNKNOWN_RANK: any) and dims (-1 where
 * free: a symbolic dim_param or none). */
TIDE_API int tide_onnx_model_input_spec(const tide_onnx_model *m, int i, int *ndim, int64_t *dims);
TIDE_API int tide_onnx_model_output_spec(const tide_onnx_model *m, int i, int *ndim, int64_t *dims);

/* ---- writing (io/onnx_write.c) ---------------------------------------------- */

enum { TIDE_ONNX_EXPORT_OPSET = 17 }; /* the opset written when none is asked for */

/* Write finalized graph g as an ONNX model file at `path`, all at once (a
 * temporary file beside it, fsynced and renamed: on failure an existing file
 * is left as it was). Its n_in arguments become graph inputs named in_names
 * (a dim left free is a symbolic dim: "batch" for the first, "<input>_dim<k>"
 * after it), its n_out results outputs named out_names; the variables it
 * reads (handles[k], named var_names[k]) and its constants become
 * initializers. Each registry op becomes ONNX nodes of the default domain at
 * `opset` (TIDE_ONNX_MIN_OPSET to TIDE_ONNX_MAX_OPSET; 0: TIDE_ONNX_EXPORT_OPSET);
 * images stay NHWC at the edges, with Transposes around Conv and the pools.
 * An op, control-flow node or effect with no mapping is an error naming every
 * such op once, and where the first of each was recorded. */
TIDE_API tide_status tide_onnx_export(const tide_graph *g, const char *path, int opset, int n_in,
                                      const char *const *in_names, int n_out, const char *const *out_names, int n_vars,
                                      tide_tensor *const *handles, const char *const *var_names);

#ifdef __cplusplus
}
#endif
#endif
