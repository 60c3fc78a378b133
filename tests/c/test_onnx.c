/* tests/c/test_onnx.c — ONNX models (tests/fixtures/onnx, exported by PyTorch) through tide/onnx.h
 * and tide_model_load: onnxruntime's values, ONNX's names, and every truncation of a model file
 * refused cleanly. Run from the repository root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "tide/model.h"

#define FIX "tests/fixtures/onnx/"

/* onnxruntime 1.32 on mlp.onnx (tests/fixtures/onnx/gen.py's model) */
static const float X[2][6] = {{0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f}, {0, 0, 0, 0, 0, 0}};
static const float Y[2][4] = {{0.10692030191421509f, 0.19183824956417084f, 0.3243321478366852f, 0.3769093453884125f},
                              {0.18648794293403625f, 0.22237379848957062f, 0.34190064668655396f, 0.24923759698867798f}};

static void test_model_load(void) {
  tide_model_error err;
  tide_model *m = tide_model_load(FIX "mlp.onnx", &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  CHECK(tide_model_num_signatures(m) == 1);
  const tide_signature *s = tide_model_signature(m, NULL);
  CHECK(s && !strcmp(tide_signature_name(s), "serving_default"));
  const tide_tensor_spec *in = tide_signature_input(s, 0), *out = tide_signature_output(s, 0);
  CHECK(!strcmp(in->name, "x") && in->dtype == TIDE_FLOAT32 && in->ndim == 2 && in->dims[0] == -1 && in->dims[1] == 6);
  CHECK(!strcmp(out->name, "probs") && out->dtype == TIDE_FLOAT32 && out->ndim == 2 && out->dims[1] == 4);
  tide_run *r = tide_run_new(s, &err);
  int64_t dims[2] = {2, 6};
  tide_array x = tide_array_make((void *)X, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 0, &x, &err) == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  tide_array y;
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK);
  CHECK(y.ndim == 2 && y.dims[0] == 2 && y.dims[1] == 4);
  for (int i = 0; i < 8; i++) CHECK_NEAR(((float *)y.data)[i], (&Y[0][0])[i], 1e-6f);
  int64_t bad[2] = {2, 5};
  tide_array xb = tide_array_make((void *)X, TIDE_FLOAT32, 2, bad);
  CHECK(tide_run_set_input(r, 0, &xb, &err) != TIDE_OK && contains(err.message, "x"));
  tide_run_free(r);
  tide_model_free(m);
}

static void test_direct(void) {
  tide_onnx_model *m = NULL;
  CHECK(tide_onnx_model_open(FIX "transformer.onnx", &m) == TIDE_OK);
  if (!m) return;
  CHECK(tide_onnx_model_opset(m) == 17);
  CHECK(tide_onnx_model_num_inputs(m) == 1 && !strcmp(tide_onnx_model_input_name(m, 0), "tokens"));
  int ndim = 0;
  int64_t d[8];
  CHECK(tide_onnx_model_input_spec(m, 0, &ndim, d) == TIDE_FLOAT32 && ndim == 3 && d[2] == 8);
  CHECK(tide_onnx_model_input_name(m, 1) == NULL && tide_onnx_model_input_spec(m, 5, NULL, NULL) == -1);
  CHECK(tide_onnx_model_graph(m) != NULL);
  tide_onnx_model_free(m);
  tide_model_error err;
  CHECK(tide_model_load(FIX "unmapped.onnx", &err) == NULL && contains(err.message, "Det (node 'det1')"));
  CHECK(tide_onnx_model_open(NULL, &m) != TIDE_OK && m == NULL);
}

/* Every prefix of a model file: an error (or, for a prefix that happens to parse, a model), never a crash. */
static void test_truncations(void) {
  FILE *f = fopen(FIX "mlp.onnx", "rb");
  CHECK(f != NULL);
  if (!f) return;
  static unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  char path[64];
  snprintf(path, sizeof path, "/tmp/tide_onnx_cut_%d.onnx", (int)getpid());
  int refused = 0;
  for (size_t k = 0; k < n; k++) {
    FILE *o = fopen(path, "wb");
    if (!o) break;
    fwrite(buf, 1, k, o);
    fclose(o);
    tide_onnx_model *m = NULL;
    if (tide_onnx_model_open(path, &m) != TIDE_OK) {
      CHECK(m == NULL && tide_last_error()[0]);
      refused++;
    } else tide_onnx_model_free(m);
  }
  CHECK(refused > (int)n / 2);
  unlink(path);
}

int main(void) {
  test_model_load();
  test_direct();
  test_truncations();
  return CHECK_SUMMARY("onnx");
}
