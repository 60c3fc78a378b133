/* io/tf_saved_model_def.c — a TF SavedModel's signature as a graph definition (tide/saved_model.h's
 * tide_graph_def): its mapped graph written as data and read back, for tide.saved_model's replay. */
#include "tf_internal.h"
#include "../graph/graph_def.h"

#include <stdio.h>
#include <stdlib.h>

static const tide_tensor *def_const(void *ctx, const char *name) {
  const gdef_tensors *c = ctx;
  char *end = NULL;
  if (name[0] != 'c') return NULL;
  long k = strtol(name + 1, &end, 10);
  return end && !*end && k >= 0 && k < c->n ? &c->items[k] : NULL;
}

tide_status tide_tf_saved_model_def(tide_tf_saved_model *m, int k, const tide_graph_def **out) {
  *out = NULL;
  void (**free_def)(tide_graph_def *) = NULL;
  tide_graph_def **slot = tf_saved_model_def_slot(m, k, &free_def);
  if (!slot) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: no signature %d", k);
  if (!*slot) {
    /* The finalized graph written as data and read back (graph/def_write.c, def_read.c): constants are shared,
     * variable nodes name the model's variables by index. */
    int n = tide_tf_saved_model_num_variables(m);
    tide_tensor **vars = calloc((size_t)n + 1, sizeof *vars);
    if (!vars) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
    for (int i = 0; i < n; i++) vars[i] = tide_tf_saved_model_variable(m, i);
    gdef_tensors consts = {0};
    cJSON *j = tide_graph_def_write(tide_tf_saved_model_graph(m, k), n, vars, &consts);
    tide_status st = j ? TIDE_OK : tide_last_status();
    if (!st) st = tide_graph_def_read(j, tf_saved_model_dir(m), n, def_const, &consts, slot);
    if (!st) *free_def = tide_graph_def_free;
    if (st) { /* the message is formatted into the buffer that holds the last one: copied first */
      char last[800];
      snprintf(last, sizeof last, "%s", tide_last_error());
      st = TIDE_FAIL(st, "TF SavedModel %s: signature '%s' as a graph definition: %s", tf_saved_model_dir(m),
                     tide_tf_saved_model_signature_name(m, k), last);
    }
    cJSON_Delete(j);
    gdef_tensors_free(&consts);
    free(vars);
    if (st) return st;
  }
  *out = *slot;
  return TIDE_OK;
}
