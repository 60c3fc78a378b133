/* model/load.c — tide_model_load: a SavedModel read and every signature built
 * into a finalized graph once, with its input and output specs; lookups by name. */
#include "model_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../graph/graph_internal.h"
#include "tide/file_kind.h"

tide_status tide_model_fail(tide_model_error *err, tide_status st, bool with_last, const char *fmt, ...) {
  if (!err) return st;
  err->code = st;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  if (with_last && n >= 0 && (size_t)n < sizeof err->message) {
    const char *last = tide_last_error();
    snprintf(err->message + n, sizeof err->message - (size_t)n, ": %s", last && *last ? last : "unknown error");
  }
  return st;
}

/* Signature k's specs: inputs as the file declares them, outputs as the
 * built graph infers them (-1 where a dim depends on a free input dim). */
static tide_status make_specs(tide_model *m, int k, tide_model_error *err) {
  tide_signature *s = &m->sigs[k];
  const tide_graph_def *d = m->saved ? tide_saved_model_function_def(m->saved, k) : NULL;
  s->n_in = tide_graph_num_inputs(s->graph);
  s->n_out = tide_graph_num_outputs(s->graph);
  s->in = calloc((size_t)s->n_in + 1, sizeof *s->in);
  s->out = calloc((size_t)s->n_out + 1, sizeof *s->out);
  if (!s->in || !s->out) return tide_model_fail(err, TIDE_ERR_MEMORY, false, "model %s: out of memory", m->dir);
  for (int i = 0; i < s->n_in; i++) {
    tide_tensor_spec *sp = &s->in[i];
    int ndim = 0;
    if (m->onnx) {
      sp->name = tide_onnx_model_input_name(m->onnx, i);
      sp->dtype = tide_onnx_model_input_spec(m->onnx, i, &ndim, sp->dims);
    } else if (m->tf) {
      sp->name = tide_tf_saved_model_input_name(m->tf, k, i);
      sp->dtype = tide_tf_saved_model_input_spec(m->tf, k, i, &ndim, sp->dims);
    } else {
      sp->name = tide_saved_model_input_name(m->saved, k, i);
      sp->dtype = tide_graph_def_input(d, i, &ndim, sp->dims);
    }
    sp->ndim = ndim;
  }
  tide_graph *g = s->graph;
  for (int i = 0; i < s->n_out; i++) {
    tide_tensor_spec *sp = &s->out[i];
    const tide_tensor *desc = gval_desc(g, g->outputs[i]);
    sp->name = m->onnx ? tide_onnx_model_output_name(m->onnx, i)
               : m->tf ? tide_tf_saved_model_output_name(m->tf, k, i) : tide_saved_model_output_name(m->saved, k, i);
    sp->dtype = desc->dt;
    sp->ndim = desc->ndim;
    for (int d2 = 0; d2 < desc->ndim && d2 < TIDE_MAX_DIMS; d2++) sp->dims[d2] = desc->dims[d2];
  }
  return TIDE_OK;
}

void tide_model_free(tide_model *m) {
  if (!m) return;
  for (int k = 0; k < m->n_sigs; k++) {
    tide_signature *s = &m->sigs[k];
    tide_graph_free(s->graph);
    free(s->in);
    free(s->out);
    pthread_mutex_destroy(&s->lock);
  }
  free(m->sigs);
  tide_saved_model_free(m->saved); /* after the graphs: they read its variables */
  tide_tf_saved_model_free(m->tf);
  tide_onnx_model_free(m->onnx);
  free(m->dir);
  free(m);
}

tide_model *tide_model_load(const char *dir, tide_model_error *err) {
  if (!dir) {
    tide_model_fail(err, TIDE_ERR_VALUE, false, "tide_model_load: the directory is NULL");
    return NULL;
  }
  tide_model *m = calloc(1, sizeof *m);
  char *name = m ? malloc(strlen(dir) + 1) : NULL;
  if (!m || !name) {
    free(m);
    tide_model_fail(err, TIDE_ERR_MEMORY, false, "tide_model_load %s: out of memory", dir);
    return NULL;
  }
  strcpy(name, dir);
  m->dir = name;
  /* decided by content: TensorFlow's saved_model.pb, an ONNX file, else tide's own */
  int kind = tide_file_kind(dir, NULL);
  bool tf = kind == TIDE_FILE_TF_SAVED_MODEL, onnx = kind == TIDE_FILE_ONNX;
  tide_status st = onnx ? tide_onnx_model_open(dir, &m->onnx)
                   : tf ? tide_tf_saved_model_open(dir, &m->tf) : tide_saved_model_open(dir, &m->saved);
  if (st) {
    tide_model_fail(err, st, true, "tide_model_load %s", dir);
    tide_model_free(m);
    return NULL;
  }
  int n = onnx ? 1 : tf ? tide_tf_saved_model_num_signatures(m->tf) : tide_saved_model_num_functions(m->saved);
  m->sigs = calloc((size_t)n + 1, sizeof *m->sigs);
  if (!m->sigs) {
    tide_model_fail(err, TIDE_ERR_MEMORY, false, "tide_model_load %s: out of memory", dir);
    tide_model_free(m);
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    tide_signature *s = &m->sigs[k];
    s->model = m;
    s->name = onnx ? "serving_default"
              : tf ? tide_tf_saved_model_signature_name(m->tf, k) : tide_saved_model_function_name(m->saved, k);
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
      tide_model_fail(err, TIDE_ERR_MEMORY, false, "tide_model_load %s: cannot make a lock", dir);
      tide_model_free(m);
      return NULL;
    }
    m->n_sigs++; /* from here on tide_model_free undoes this signature */
    if (tf || onnx) { /* built when the model was read; the signature holds a reference of its own */
      s->graph = onnx ? tide_onnx_model_graph(m->onnx) : tide_tf_saved_model_graph(m->tf, k);
      tide_graph_retain(s->graph);
      st = TIDE_OK;
    } else {
      st = tide_saved_model_build(m->saved, k, NULL, &s->graph);
    }
    if (st) {
      tide_model_fail(err, st, true, "tide_model_load %s: signature '%s'", dir, s->name);
      tide_model_free(m);
      return NULL;
    }
    s->serialize = tide_graph_has_effects(s->graph) != 0;
    if (make_specs(m, k, err)) {
      tide_model_free(m);
      return NULL;
    }
  }
  tide_model_ok(err);
  return m;
}

int tide_model_num_signatures(const tide_model *m) { return m ? m->n_sigs : 0; }

const tide_signature *tide_model_signature_at(const tide_model *m, int k) {
  return m && k >= 0 && k < m->n_sigs ? &m->sigs[k] : NULL;
}

const tide_signature *tide_model_signature(const tide_model *m, const char *name) {
  if (!m) return NULL;
  const char *want = name ? name : "serving_default";
  for (int k = 0; k < m->n_sigs; k++)
    if (!strcmp(m->sigs[k].name, want)) return &m->sigs[k];
  if (!name && m->n_sigs == 1) return &m->sigs[0];
  return NULL;
}

const char *tide_signature_name(const tide_signature *s) { return s ? s->name : NULL; }
int tide_signature_num_inputs(const tide_signature *s) { return s ? s->n_in : 0; }
int tide_signature_num_outputs(const tide_signature *s) { return s ? s->n_out : 0; }

const tide_tensor_spec *tide_signature_input(const tide_signature *s, int i) {
  return s && i >= 0 && i < s->n_in ? &s->in[i] : NULL;
}

const tide_tensor_spec *tide_signature_output(const tide_signature *s, int i) {
  return s && i >= 0 && i < s->n_out ? &s->out[i] : NULL;
}

int tide_signature_input_index(const tide_signature *s, const char *name) {
  for (int i = 0; s && name && i < s->n_in; i++)
    if (s->in[i].name && !strcmp(s->in[i].name, name)) return i;
  return -1;
}

int tide_signature_output_index(const tide_signature *s, const char *name) {
  for (int i = 0; s && name && i < s->n_out; i++)
    if (s->out[i].name && !strcmp(s->out[i].name, name)) return i;
  return -1;
}
