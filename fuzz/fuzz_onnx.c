/* fuzz/fuzz_onnx.c — libFuzzer target for the ONNX reader: the input is a model file in a
 * folder beside the fixtures' external data (weights.bin), read, mapped and built (or refused
 * with an error); never a crash, an overread or a leak. Seeds: the fixtures' models.
 * fuzz-sources: kernels/io/onnx_model.c kernels/io/onnx_layout.c kernels/io/load_cap.c kernels/io/onnx_tensor.c kernels/io/onnx_ops.c kernels/io/onnx_ops_shape.c kernels/io/onnx_ops_nn.c kernels/io/onnx_ops_more.c kernels/io/onnx_ops_resample.c kernels/io/onnx_ops_rnn.c kernels/io/file_bytes.c build/gen/tide_proto/onnx.pb-c.c */
#include "tide/tide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64], path[128];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/tide_fuzz_onnx_%d", (int)getpid());
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && cp tests/fixtures/onnx/ext/weights.bin %s/", dir, dir, dir);
  if (system(cmd) != 0) abort();
  snprintf(path, sizeof path, "%s/model.onnx", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) setup();
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  if (size) fwrite(data, 1, size, f);
  fclose(f);
  tide_onnx_model *m = NULL;
  if (tide_onnx_model_open(path, &m) == TIDE_OK) {
    /* a model that loads runs nothing here: its graph is finalized, names readable */
    if (!tide_onnx_model_graph(m)) abort();
    for (int i = 0; i < tide_onnx_model_num_inputs(m); i++)
      if (!tide_onnx_model_input_name(m, i)) abort();
    for (int i = 0; i < tide_onnx_model_num_outputs(m); i++)
      if (!tide_onnx_model_output_name(m, i)) abort();
    tide_onnx_model_free(m);
  } else if (m != NULL || !tide_last_error()[0]) {
    abort();
  }
  return 0;
}
