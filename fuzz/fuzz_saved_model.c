/* fuzz/fuzz_saved_model.c — libFuzzer target for the SavedModel graph reader:
 * bytes as a graph object, read and checked (graph/def_read.c), then rebuilt (def_build.c).
 * fuzz-sources: kernels/graph/def_read.c kernels/graph/def_build.c */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/graph/graph_def.h"

static tide_tensor consts[2], vars[2];
static int ready;

/* Any constant name gives one of two small tensors. */
static const tide_tensor *lookup(void *ctx, const char *name) {
  (void)ctx;
  return name[0] == 'c' ? &consts[0] : name[0] == 'd' ? &consts[1] : NULL;
}

static void setup(void) {
  int64_t dims[1] = {2};
  tide_tensor_init_heap(&consts[0], TIDE_FLOAT32, 1, dims);
  memset((void *)consts[0].data, 0, 8);
  tide_tensor_init(&consts[1], TIDE_BOOL, 0, NULL);
  memset((void *)consts[1].data, 1, 1);
  for (int i = 0; i < 2; i++) {
    tide_tensor_init_heap(&vars[i], TIDE_FLOAT32, 1, dims);
    memset((void *)vars[i].data, 0, 8);
  }
  ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ready) setup();
  cJSON *j = cJSON_ParseWithLength((const char *)data, size);
  if (!j) return 0;
  tide_graph_def *d = NULL;
  if (tide_graph_def_read(j, "fuzz.json", 2, lookup, NULL, &d) == TIDE_OK) {
    tide_tensor *handles[2] = {&vars[0], &vars[1]};
    tide_graph *g = NULL;
    if (tide_graph_def_build(d, handles, &g) == TIDE_OK) tide_graph_free(g);
    tide_graph_def_free(d);
  }
  cJSON_Delete(j);
  return 0;
}
