/* model/model_internal.h — what a loaded model and its signatures hold, shared
 * by loading (model/load.c) and running (model/run.c). */
#ifndef TIDE_MODEL_INTERNAL_H
#define TIDE_MODEL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "tide/graph.h"
#include "tide/model.h"
#include "tide/saved_model.h"
#include "tide/tf_saved_model.h"
#include "tide/onnx.h"

struct tide_signature {
  tide_model *model;
  const char *name;          /* owned by the saved model */
  tide_graph *graph;         /* finalized; shared by every run (each run gets its own plan) */
  int n_in, n_out;
  tide_tensor_spec *in, *out;
  /* A graph with side effects (variable updates, random draws, prints) runs
   * one call at a time: two runs assigning one variable at once would race. */
  bool serialize;
  pthread_mutex_t lock;
};

struct tide_model {
  tide_saved_model *saved;   /* the variables the graphs read, and the names */
  tide_tf_saved_model *tf;   /* or a TensorFlow SavedModel's (then saved is NULL) */
  tide_onnx_model *onnx;     /* or an ONNX model's: one signature, serving_default */
  char *dir;
  int n_sigs;
  tide_signature *sigs;
};

/* Fill err (may be NULL) with status st and a message: the printf-style
 * prefix, then the engine's last error on this thread when `with_last`.
 * Returns st. */
tide_status tide_model_fail(tide_model_error *err, tide_status st, bool with_last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Mark err as a success. */
static inline void tide_model_ok(tide_model_error *err) {
  if (err) {
    err->code = TIDE_OK;
    err->message[0] = 0;
  }
}

#endif
