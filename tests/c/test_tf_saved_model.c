/* tests/c/test_tf_saved_model.c — TensorFlow SavedModels (tests/fixtures/tf_saved_model, written by
 * TF 2.21 and Keras 3) through tide/tf_saved_model.h and tide_model_load: TF's values (control flow too),
 * names, errors, and every truncation of a saved_model.pb refused cleanly. Run from the repository root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "tide/model.h"
#include "tide/tf_saved_model.h"

#define FIX "tests/fixtures/tf_saved_model/"

/* TF's outputs (tests/fixtures/tf_saved_model/expected.lua) */
static const float MODULE_X[3][2] = {{1, 2}, {-1, 0.5f}, {0, 0}};
static const float MODULE_Y[3][3] = {{7.5f, 5.5f, 0}, {1, 3.5f, 0}, {0.5f, 0, 0.25f}};
static const float MLP_Y0[3] = {0.3220484256744385f, 0.5571626424789429f, 0.12078891694545746f};
static const float MLP_X0[5] = {1.7886284589767456f, 0.4365098476409912f, 0.09649746865034103f, -1.863492727279663f,
                                -0.27738821506500244f};

/* TF's outputs (tests/fixtures/tf_saved_model/ctl_expected.lua, ctl_gen.py): a While loop over n = 3 and a Keras
 * LSTM + GRU (While + TensorList), run without Lua */
static const float CTL_X[6] = {-0.801931441f, -1.32435894f, -0.248361617f, 0.420445234f, 1.13604653f, 0.109706402f};
static const float CTL_LOOP_ACC[6] = {-1.83795011f, 2.67212439f, -0.143041909f, 1.38282561f, -1.16128969f, 0.30603689f};
static const float CTL_XR[30] = {
    -0.629288077f, -0.488005817f, -0.713313401f, 0.553378463f,  -0.0630859733f, -0.589431286f, 0.409637839f,
    0.829855323f,  -1.64302337f,  -0.256730139f, -0.980747342f, -0.173155218f,  -1.2894187f,   0.0206903946f,
    -0.0378857404f, -0.30433774f, -1.04792655f,  -0.396190345f, -1.09132886f,   -1.35520875f,  0.22478573f,
    -1.10934997f,  1.17029607f,   0.716587663f,  -1.99781668f,  0.27212888f,    -1.10171664f,  0.0330572203f,
    0.0436319932f, -1.98842978f};
static const float CTL_RNN[4] = {-0.03396504f, -0.0370437987f, -0.0456282571f, -0.107335731f};

static void test_module(void) {
  tide_model_error err;
  tide_model *m = tide_model_load(FIX "module", &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  CHECK(tide_model_num_signatures(m) == 2);
  const tide_signature *s = tide_model_signature(m, NULL);
  CHECK(s && !strcmp(tide_signature_name(s), "serving_default"));
  CHECK(tide_signature_num_inputs(s) == 1 && tide_signature_num_outputs(s) == 1);
  const tide_tensor_spec *in = tide_signature_input(s, 0), *out = tide_signature_output(s, 0);
  CHECK(!strcmp(in->name, "x") && in->dtype == TIDE_FLOAT32 && in->ndim == 2 && in->dims[0] == -1 && in->dims[1] == 2);
  CHECK(!strcmp(out->name, "y") && out->dtype == TIDE_FLOAT32 && out->ndim == 2 && out->dims[1] == 3);
  CHECK(tide_signature_input_index(s, "x") == 0 && tide_signature_output_index(s, "y") == 0);
  tide_run *r = tide_run_new(s, &err);
  int64_t dims[2] = {3, 2};
  tide_array x = tide_array_make((void *)MODULE_X, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 0, &x, &err) == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  tide_array y;
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK);
  CHECK(y.ndim == 2 && y.dims[0] == 3 && y.dims[1] == 3);
  for (int i = 0; i < 9; i++) CHECK_NEAR(((float *)y.data)[i], (&MODULE_Y[0][0])[i], 1e-6f);
  /* a wrong input shape names the input */
  int64_t bad[2] = {3, 3};
  tide_array xb = tide_array_make((void *)MODULE_X, TIDE_FLOAT32, 2, bad);
  CHECK(tide_run_set_input(r, 0, &xb, &err) != TIDE_OK && contains(err.message, "x"));
  tide_run_free(r);
  /* the second signature: inputs k (a scalar) and x, by their sorted TF names */
  const tide_signature *sc = tide_model_signature(m, "scaled");
  CHECK(sc && tide_signature_num_inputs(sc) == 2 && !strcmp(tide_signature_input(sc, 0)->name, "k") &&
        tide_signature_input(sc, 0)->ndim == 0 && !strcmp(tide_signature_output(sc, 0)->name, "out"));
  tide_model_free(m);
}

static void test_keras(void) {
  tide_model_error err;
  tide_model *m = tide_model_load(FIX "keras_mlp", &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  const tide_signature *s = tide_model_signature(m, NULL);
  CHECK(s && !strcmp(tide_signature_input(s, 0)->name, "keras_tensor") &&
        !strcmp(tide_signature_output(s, 0)->name, "output_0"));
  tide_run *r = tide_run_new(s, &err);
  int64_t dims[2] = {1, 5};
  tide_array x = tide_array_make((void *)MLP_X0, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 0, &x, &err) == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  tide_array y;
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.dims[1] == 3);
  for (int i = 0; i < 3; i++) CHECK_NEAR(((float *)y.data)[i], MLP_Y0[i], 1e-5f);
  tide_run_free(r);
  tide_model_free(m);
  /* the reader's own face: the variables the signatures read, once each */
  tide_tf_saved_model *t = NULL;
  CHECK(tide_tf_saved_model_open(FIX "keras_mlp", &t) == TIDE_OK);
  CHECK(tide_tf_saved_model_num_variables(t) == 4);
  CHECK(tide_tf_saved_model_num_signatures(t) == 2);
  CHECK(tide_tf_saved_model_input_name(t, 0, 1) == NULL && tide_tf_saved_model_variable(t, 4) == NULL);
  int nd = 0;
  int64_t d[TIDE_MAX_DIMS];
  CHECK(tide_tf_saved_model_output_spec(t, 0, 0, &nd, d) == TIDE_FLOAT32 && nd == 2 && d[1] == 3);
  /* a signature as a graph definition (what tide.layers.TFSMLayer replays): its variable nodes name the
   * model's variables, made once and kept by the model */
  const tide_graph_def *def = NULL, *again = NULL;
  CHECK(tide_tf_saved_model_def(t, 0, &def) == TIDE_OK && def != NULL);
  CHECK(tide_tf_saved_model_def(t, 0, &again) == TIDE_OK && again == def);
  int n_var_nodes = 0;
  for (int i = 0; def && i < tide_graph_def_num_nodes(def); i++) {
    const tide_def_node *n = tide_graph_def_node(def, i);
    if (n->kind == TIDE_NODE_VARIABLE) {
      n_var_nodes++;
      CHECK(n->var >= 0 && n->var < 4);
    }
  }
  CHECK(n_var_nodes == 4);
  CHECK(def && tide_graph_def_num_inputs(def) == 1 && tide_graph_def_num_outputs(def) == 1);
  CHECK(tide_tf_saved_model_def(t, 2, &def) != TIDE_OK && def == NULL && contains(tide_last_error(), "no signature 2"));
  tide_tf_saved_model_free(t);
}

static void test_control(void) {
  tide_model_error err;
  tide_model *m = tide_model_load(FIX "ctl", &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  const tide_signature *s = tide_model_signature(m, "loop");
  CHECK(s && tide_signature_input_index(s, "n") == 0 && tide_signature_input_index(s, "x") == 1);
  tide_run *r = s ? tide_run_new(s, &err) : NULL;
  int64_t dims[2] = {2, 3};
  int32_t n = 3;
  tide_array x = tide_array_make((void *)CTL_X, TIDE_FLOAT32, 2, dims), na = tide_array_make(&n, TIDE_INT32, 0, NULL);
  CHECK(r && tide_run_set_input(r, 0, &na, &err) == TIDE_OK && tide_run_set_input(r, 1, &x, &err) == TIDE_OK);
  CHECK(r && tide_model_run(r, &err) == TIDE_OK);
  tide_array y;
  int acc = s ? tide_signature_output_index(s, "acc") : -1;
  CHECK(acc >= 0 && tide_run_output(r, acc, &y) == TIDE_OK && y.ndim == 2 && y.dims[1] == 3);
  for (int i = 0; acc >= 0 && i < 6; i++) CHECK_NEAR(((float *)y.data)[i], CTL_LOOP_ACC[i], 1e-5f);
  tide_run_free(r);
  tide_model_free(m);

  m = tide_model_load(FIX "ctl_rnn", &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return;
  }
  s = tide_model_signature(m, "serve");
  r = s ? tide_run_new(s, &err) : NULL;
  int64_t rd[3] = {2, 5, 3};
  tide_array xr = tide_array_make((void *)CTL_XR, TIDE_FLOAT32, 3, rd);
  CHECK(r && tide_run_set_input(r, 0, &xr, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
  CHECK(r && tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == 2 && y.dims[0] == 2 && y.dims[1] == 2);
  for (int i = 0; r && i < 4; i++) CHECK_NEAR(((float *)y.data)[i], CTL_RNN[i], 1e-5f);
  tide_run_free(r);
  tide_model_free(m);

  /* ops tide does not map inside a loop body and a branch: all named at once, with their functions */
  CHECK(tide_model_load(FIX "ctl_unmapped", &err) == NULL);
  CHECK(contains(err.message, "Lgamma (node 'while/Lgamma' in function 'while_body_") &&
        contains(err.message, "Digamma (node 'cond/Digamma' in function 'cond_true_"));
}

static void test_errors(void) {
  tide_model_error err;
  CHECK(tide_model_load(FIX "unmapped", &err) == NULL);
  CHECK(contains(err.message, "uses 2 TF ops that tide does not map") && contains(err.message, "Cumsum (node 'Cumsum'") &&
        contains(err.message, "Cumprod (node 'Cumprod'"));
  tide_tf_saved_model *t = (tide_tf_saved_model *)1;
  CHECK(tide_tf_saved_model_open(NULL, &t) != TIDE_OK && t == NULL);
  CHECK(tide_tf_saved_model_open(FIX "missing", &t) != TIDE_OK && contains(tide_last_error(), "saved_model.pb"));
  CHECK(tide_tf_saved_model_num_signatures(NULL) == 0 && tide_tf_saved_model_graph(NULL, 0) == NULL);
  tide_tf_saved_model_free(NULL);
}

/* Every truncation of module/saved_model.pb (every 7th length) fails with an error, never a crash. */
static void test_truncated(void) {
  FILE *f = fopen(FIX "module/saved_model.pb", "rb");
  CHECK(f != NULL);
  if (!f) return;
  static unsigned char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  char dir[] = "/tmp/tide_tf_sm_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char pb[200], vars[200], cmd[600];
  snprintf(pb, sizeof pb, "%s/saved_model.pb", dir);
  snprintf(vars, sizeof vars, "%s/variables", dir);
  snprintf(cmd, sizeof cmd, "cp -r " FIX "module/variables %s", dir);
  CHECK(system(cmd) == 0);
  int refused = 0, tries = 0;
  for (size_t len = 0; len < n; len += 7) {
    FILE *o = fopen(pb, "wb");
    fwrite(buf, 1, len, o);
    fclose(o);
    tide_tf_saved_model *t = NULL;
    tide_status st = tide_tf_saved_model_open(dir, &t);
    tries++;
    refused += st != TIDE_OK && t == NULL && tide_last_error()[0] != '\0';
    tide_tf_saved_model_free(t);
  }
  CHECK(refused == tries);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

int main(void) {
  test_module();
  test_keras();
  test_control();
  test_errors();
  test_truncated();
  return CHECK_SUMMARY("tf_saved_model");
}
