/* tests/c/test_onnx_write.c — tide_onnx_export from C, no Lua: a graph with a variable, a
 * constant, a fused group and a free batch dim written and read back (tide/onnx.h and
 * tide_model_load) with the same values; every argument error; a failed export leaves the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_util.h"
#include "tide/model.h"

static tide_tensor *W; /* the variable's tensor: [3, 2] */

/* y = sin(x @ W + 1) * 2 (the elementwise tail fuses), and x's row sums. */
static int body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *c1 = scalar(TIDE_FLOAT32, 1), *c2 = scalar(TIDE_FLOAT32, 2);
  tide_tensor w = blank(), mm = blank(), one = konst(c1), two = konst(c2), t1, t2;
  tide_tensor_free(c1), tide_tensor_free(c2);
  CHECK(tide_graph_variable(G, W, &w) == TIDE_OK);
  const tide_tensor *args[2] = {&in[0], &w};
  op_attrs(TIDE_OP_MATMUL, &(tide_attrs){0}, 2, args, &mm);
  bin(TIDE_OP_ADD, &t1, &mm, &one);
  un(TIDE_OP_SIN, &t2, &t1);
  bin(TIDE_OP_MUL, &out[0], &t2, &two);
  tide_attrs a = {0};
  a.ints[0] = 1, a.nints = 1;
  const tide_tensor *x[1] = {&in[0]};
  op_attrs(TIDE_OP_SUM, &a, 1, x, &out[1]);
  return 2;
}

static const char *IN[1] = {"x"}, *OUT[2] = {"y", "row_sum"}, *VARS[1] = {"kernel"};

static void test_round_trip(const char *path) {
  int64_t wd[2] = {3, 2}, xd[2] = {4, 3};
  W = filled(TIDE_FLOAT32, 2, wd, 0.1, 0.05);
  tide_tensor *x = filled(TIDE_FLOAT32, 2, xd, -0.5, 0.1);
  tide_graph *g = build(body, 1, &x, true, TIDE_PASS_ALL);
  CHECK(tide_onnx_export(g, path, 0, 1, IN, 2, OUT, 1, &W, VARS) == TIDE_OK);
  tide_tensor want[2], got[2];
  CHECK(run(g, 1, &x, want) == TIDE_OK);
  tide_onnx_model *m = NULL;
  CHECK(tide_onnx_model_open(path, &m) == TIDE_OK);
  if (m) {
    CHECK(tide_onnx_model_opset(m) == TIDE_ONNX_EXPORT_OPSET);
    CHECK(!strcmp(tide_onnx_model_input_name(m, 0), "x") && !strcmp(tide_onnx_model_output_name(m, 1), "row_sum"));
    int ndim = 0;
    int64_t d[8];
    CHECK(tide_onnx_model_input_spec(m, 0, &ndim, d) == TIDE_FLOAT32 && ndim == 2 && d[0] == -1 && d[1] == 3);
    CHECK(run(tide_onnx_model_graph(m), 1, &x, got) == TIDE_OK);
    CHECK(same(&got[0], &want[0], 1e-6) && same(&got[1], &want[1], 1e-6));
    for (int k = 0; k < 2; k++) tide_tensor_release(&got[k]);
    tide_onnx_model_free(m);
  }
  /* and through the embedding API, which reads the file by its content */
  tide_model_error err;
  tide_model *mm = tide_model_load(path, &err);
  CHECK(mm != NULL);
  if (mm) {
    const tide_signature *s = tide_model_signature(mm, NULL);
    tide_run *r = tide_run_new(s, &err);
    tide_array xa = tide_array_make(x->data, TIDE_FLOAT32, 2, xd);
    CHECK(tide_run_set_input(r, 0, &xa, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
    tide_array y;
    CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == 2 && y.dims[0] == 4 && y.dims[1] == 2);
    for (int i = 0; i < 8; i++) CHECK_NEAR(((float *)y.data)[i], ((float *)want[0].data)[i], 1e-6f);
    tide_run_free(r);
    tide_model_free(mm);
  }
  for (int k = 0; k < 2; k++) tide_tensor_release(&want[k]);
  tide_graph_free(g);
  tide_tensor_free(x);
}

static bool fails(tide_status st, const char *needle) {
  bool ok = st != TIDE_OK && contains(tide_last_error(), needle);
  if (!ok) fprintf(stderr, "  wanted an error with '%s', got %d: %s\n", needle, st, tide_last_error());
  return ok;
}

static void test_errors(const char *path) {
  int64_t xd[2] = {4, 3};
  tide_tensor *x = filled(TIDE_FLOAT32, 2, xd, -0.5, 0.1);
  tide_graph *g = build(body, 1, &x, true, TIDE_PASS_ALL);
  CHECK(fails(tide_onnx_export(NULL, path, 0, 1, IN, 2, OUT, 1, &W, VARS), "no graph"));
  CHECK(fails(tide_onnx_export(g, "", 0, 1, IN, 2, OUT, 1, &W, VARS), "path must be a file name"));
  CHECK(fails(tide_onnx_export(g, path, 12, 1, IN, 2, OUT, 1, &W, VARS), "opset 12 is not written"));
  CHECK(fails(tide_onnx_export(g, path, 22, 1, IN, 2, OUT, 1, &W, VARS), "(opsets 13 to 21 are)"));
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 1, OUT, 1, &W, VARS), "has 1 inputs and 2 outputs, but 1 and 1"));
  const char *dup[2] = {"y", "y"}, *empty[2] = {"y", ""}, *like_in[2] = {"y", "x"};
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 2, dup, 1, &W, VARS), "two outputs are named 'y'"));
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 2, empty, 1, &W, VARS), "output name 1 is empty"));
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 2, like_in, 1, &W, VARS), "output name 'x' is also an input's"));
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 2, OUT, 0, NULL, NULL), "reads a variable"));
  CHECK(fails(tide_onnx_export(g, "/nonexistent_dir_tide/m.onnx", 0, 1, IN, 2, OUT, 1, &W, VARS), "onnx.export"));
  tide_graph *open = tide_graph_new("open");
  CHECK(fails(tide_onnx_export(open, path, 0, 0, NULL, 0, NULL, 0, NULL, NULL), "is not finalized"));
  tide_graph_free(open);
  tide_graph_free(g);
  tide_tensor_free(x);
}

/* cholesky has no mapping: an error before the file is touched. */
static int bad_body(tide_tensor *in, tide_tensor *out) {
  const tide_tensor *x[1] = {&in[0]};
  op_attrs(TIDE_OP_CHOLESKY, &(tide_attrs){0}, 1, x, &out[0]);
  return 1;
}

static void test_unmapped_keeps_file(const char *path) {
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  char before[64] = {0}, after[64] = {0};
  size_t n = f ? fread(before, 1, sizeof before, f) : 0;
  if (f) fclose(f);
  int64_t d[2] = {2, 2};
  tide_tensor *x = filled(TIDE_FLOAT32, 2, d, 1, 0);
  tide_graph *g = build(bad_body, 1, &x, false, TIDE_PASS_ALL);
  const char *out[1] = {"l"};
  CHECK(fails(tide_onnx_export(g, path, 0, 1, IN, 1, out, 0, NULL, NULL),
              "1 op(s) have no ONNX mapping at opset 17: cholesky"));
  f = fopen(path, "rb");
  CHECK(f != NULL && fread(after, 1, sizeof after, f) == n && !memcmp(before, after, sizeof before));
  if (f) fclose(f);
  tide_graph_free(g);
  tide_tensor_free(x);
}

int main(void) {
  char path[] = "/tmp/tide_onnx_write_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
  test_round_trip(path);
  test_errors(path);
  test_unmapped_keeps_file(path);
  unlink(path);
  if (W) tide_tensor_free(W);
  return CHECK_SUMMARY("onnx_write");
}
