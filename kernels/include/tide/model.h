/* tide/model.h — running a SavedModel's signatures from C, with no Lua state
 * (kernels/model/; docs/embedding.md). What a game or a tool links to run a model.
 *
 *   tide_model_error err;
 *   tide_model *m = tide_model_load("classifier", &err);
 *   if (!m) { fprintf(stderr, "%s\n", err.message); return 1; }
 *   const tide_signature *sig = tide_model_signature(m, NULL);   // serving_default
 *   tide_run *run = tide_run_new(sig, &err);                     // one per thread
 *   int64_t dims[2] = {1, 784};
 *   tide_array x = tide_array_make(pixels, TIDE_FLOAT32, 2, dims);
 *   tide_run_set_input(run, 0, &x, &err);                        // zero copy
 *   if (tide_model_run(run, &err) == TIDE_OK) {
 *     tide_array y;
 *     tide_run_output(run, 0, &y);                               // no copy either
 *     const float *probs = (const float *)y.data;
 *   }
 *   tide_run_free(run);
 *   tide_model_free(m);
 *
 * Threads: a loaded model is read-only and may be shared by any number of
 * threads; each thread runs through a tide_run of its own (a run holds its
 * inputs, outputs and intermediates, and is used by one thread at a time).
 * Errors: every fallible call returns a tide_status (or NULL) and, when `err`
 * is not NULL, fills it with the code and a message naming the file, the
 * signature, the input and the shapes involved. Nothing here exits or aborts. */
#ifndef TIDE_MODEL_H
#define TIDE_MODEL_H
#include <stddef.h>
#include <stdint.h>

#include "tide/dtype.h"
#include "tide/error.h"
#include "tide/export.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_model tide_model;         /* a loaded SavedModel: variables and signatures */
typedef struct tide_signature tide_signature; /* one named function of a model, owned by it */
typedef struct tide_run tide_run;             /* one caller's bound inputs, outputs and scratch */

/* What went wrong: the status code and a message for people. */
typedef struct tide_model_error {
  tide_status code; /* TIDE_OK after a call that succeeded */
  char message[1024];
} tide_model_error;

/* A dense row-major array. Inputs: memory the caller owns. Outputs: memory the
 * run owns, valid until the run's next tide_model_run or tide_run_free. */
typedef struct tide_array {
  void *data;
  int32_t dtype;               /* tide_dtype */
  int32_t ndim;
  int64_t dims[TIDE_MAX_DIMS];
} tide_array;

/* What a signature's input or output is: its name, dtype and dims (-1 where a
 * dim is free, e.g. the batch; ndim TIDE_UNKNOWN_RANK when any rank goes). */
typedef struct tide_tensor_spec {
  const char *name;
  int32_t dtype;
  int32_t ndim;
  int64_t dims[TIDE_MAX_DIMS];
} tide_tensor_spec;

/* ---- loading ---------------------------------------------------------------- */

/* Load the SavedModel in directory `dir` (written by tide.saved_model.save or
 * model:save, or by TensorFlow: a saved_model.pb, read by tide/tf_saved_model.h),
 * or the ONNX model file `dir` (tide/onnx.h: one signature, serving_default,
 * inputs and outputs by ONNX's names), and prepare every signature to run.
 * NULL on failure. */
TIDE_API tide_model *tide_model_load(const char *dir, tide_model_error *err);
/* Free a model. Every tide_run made from it must be freed first. NULL is allowed. */
TIDE_API void tide_model_free(tide_model *m);

/* ---- signatures ------------------------------------------------------------- */

TIDE_API int tide_model_num_signatures(const tide_model *m);
/* Signature k (0 <= k < tide_model_num_signatures), or NULL. */
TIDE_API const tide_signature *tide_model_signature_at(const tide_model *m, int k);
/* The signature called `name`, or NULL when there is none. NULL name: the
 * model's "serving_default", else its only signature. */
TIDE_API const tide_signature *tide_model_signature(const tide_model *m, const char *name);
TIDE_API const char *tide_signature_name(const tide_signature *s);

TIDE_API int tide_signature_num_inputs(const tide_signature *s);
TIDE_API int tide_signature_num_outputs(const tide_signature *s);
/* Input or output i's spec (owned by the model), or NULL when i is out of range. */
TIDE_API const tide_tensor_spec *tide_signature_input(const tide_signature *s, int i);
TIDE_API const tide_tensor_spec *tide_signature_output(const tide_signature *s, int i);
/* The index of the input or output called `name`, or -1. */
TIDE_API int tide_signature_input_index(const tide_signature *s, const char *name);
TIDE_API int tide_signature_output_index(const tide_signature *s, const char *name);

/* ---- running ------------------------------------------------------------------ */

/* A row-major tide_array over `data` (dims copied; ndim <= TIDE_MAX_DIMS). */
TIDE_API tide_array tide_array_make(void *data, int dtype, int ndim, const int64_t *dims);

/* A new run of signature s, for one thread at a time. NULL on failure. */
TIDE_API tide_run *tide_run_new(const tide_signature *s, tide_model_error *err);
TIDE_API void tide_run_free(tide_run *r);
/* Bind input i to the caller's array, checked against the input's spec
 * (dtype, rank, known dims). The run reads a.data in place, without a copy;
 * it must stay valid and unchanged until tide_model_run returns. */
TIDE_API tide_status tide_run_set_input(tide_run *r, int i, const tide_array *a, tide_model_error *err);
/* Run the signature on the bound inputs (every input must be bound). */
TIDE_API tide_status tide_model_run(tide_run *r, tide_model_error *err);
/* Output i of the last successful run, without a copy: `out` views memory the
 * run owns until its next tide_model_run or tide_run_free. TIDE_ERR_INDEX when
 * i is out of range, TIDE_ERR_VALUE when the run has not run yet. */
TIDE_API tide_status tide_run_output(const tide_run *r, int i, tide_array *out);

#ifdef __cplusplus
}
#endif
#endif
