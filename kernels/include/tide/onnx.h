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

#ifdef __cplusplus
}
#endif
#endif
