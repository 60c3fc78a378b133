/* fuzz/fuzz_tf_saved_model.c — libFuzzer target for the TF SavedModel reader: the input is
 * saved_model.pb in a folder beside the module fixture's variables, read, mapped and built
 * (or refused with an error); never a crash, an overread or a leak. Seeds: the fixtures' pbs.
 * fuzz-sources: kernels/io/tf_saved_model.c kernels/io/load_cap.c kernels/io/tf_import.c kernels/io/tf_ops.c kernels/io/tf_ops_nn.c kernels/io/tf_ops_more.c kernels/io/tf_ops_control.c kernels/io/tf_ops_list.c kernels/io/tf_ops_fill.c kernels/io/tf_tensor.c kernels/io/sstable.c kernels/io/tensor_bundle.c kernels/io/tensor_bundle_slices.c kernels/io/file_bytes.c build/gen/tide_proto/saved_model.pb-c.c build/gen/tide_proto/function.pb-c.c build/gen/tide_proto/tensor_bundle.pb-c.c build/gen/tide_proto/tensor_slice.pb-c.c build/gen/tide_proto/tensor_shape.pb-c.c build/gen/tide_proto/types.pb-c.c build/gen/tide_proto/graph.pb-c.c build/gen/tide_proto/node_def.pb-c.c build/gen/tide_proto/attr_value.pb-c.c build/gen/tide_proto/tensor.pb-c.c */
#include "tide/tide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], pb[128];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/tide_fuzz_tf_sm_%d", (int)getpid());
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp -r tests/fixtures/tf_saved_model/module/variables %s/",
           dir, dir, dir);
  if (system(cmd) != 0) abort();
  snprintf(pb, sizeof pb, "%s/saved_model.pb", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) setup();
  FILE *f = fopen(pb, "wb");
  if (!f) return 0;
  if (size) fwrite(data, 1, size, f);
  fclose(f);
  tide_tf_saved_model *m = NULL;
  if (tide_tf_saved_model_open(dir, &m) == TIDE_OK) {
    /* a model that loads runs nothing here: its graphs are finalized, names readable */
    for (int k = 0; k < tide_tf_saved_model_num_signatures(m); k++)
      if (!tide_tf_saved_model_signature_name(m, k) || !tide_tf_saved_model_graph(m, k)) abort();
    tide_tf_saved_model_free(m);
  } else if (m != NULL || !tide_last_error()[0]) {
    abort();
  }
  return 0;
}
