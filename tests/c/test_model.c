/* tests/c/test_model.c — tide/model.h: SavedModels made here by hand, loaded
 * with tide_model_load and run from C (specs, zero-copy binding, 8 threads, every error).
 * `test_model --predict DIR FILE` is the C half of tests/sh/test_embed_model.sh. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "tide/model.h"

enum { IN = 4, OUT = 3 };

/* The model's variables: w [4, 3], b [3], a counter []. */
static tide_tensor *W, *B, *COUNT;

/* serving_default(x [None, 4]) -> y = relu(x @ w + b) [None, 3], t = x^T [4, None] (a strided view). */
static tide_graph *build_main(void) {
  tide_graph *g = tide_graph_new("main");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int64_t xd[2] = {-1, IN};
  tide_tensor x = blank(), w = blank(), b = blank(), mm = blank(), sum = blank(), y = blank(), t = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 2, xd, &x) == TIDE_OK);
  CHECK(tide_graph_variable(g, W, &w) == TIDE_OK);
  CHECK(tide_graph_variable(g, B, &b) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MATMUL, &mm, &x, &w) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_ADD, &sum, &mm, &b) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_RELU, &y, &sum) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_TRANSPOSE, &t, &x) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  const tide_tensor *outs[2] = {&y, &t};
  CHECK(tide_graph_set_outputs(g, 2, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  return g;
}

/* count(step []) -> the counter after counter += step (a side effect: runs one at a time). */
static tide_graph *build_count(void) {
  tide_graph *g = tide_graph_new("count");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor step = blank(), after = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT64, 0, NULL, &step) == TIDE_OK);
  CHECK(tide_graph_assign(g, COUNT, TIDE_ASSIGN_ADD, &step) == TIDE_OK);
  CHECK(tide_graph_variable(g, COUNT, &after) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  const tide_tensor *outs[1] = {&after};
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  return g;
}

/* any_rank(v: float32 of any rank) -> relu(v), of the same (unknown) rank. */
static tide_graph *build_any_rank(void) {
  tide_graph *g = tide_graph_new("any_rank");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor v = blank(), r = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT32, TIDE_UNKNOWN_RANK, NULL, &v) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_RELU, &r, &v) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  const tide_tensor *outs[1] = {&r};
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  return g;
}

/* square(v: float32 [None]) -> v reshaped to [2, 2]: fails at run time unless v has 4 elements. */
static tide_graph *build_square(void) {
  tide_graph *g = tide_graph_new("square");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor v = blank(), r = blank(), *rp = &r;
  int64_t vd[1] = {-1};
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, vd, &v) == TIDE_OK);
  tide_attrs at;
  memset(&at, 0, sizeof at);
  at.ints[0] = at.ints[1] = 2;
  at.nints = 2;
  const tide_tensor *in[1] = {&v};
  CHECK(tide_op_run(TIDE_OP_RESHAPE, &at, 1, in, 1, &rp) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  const tide_tensor *outs[1] = {&r};
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  return g;
}

/* Write a SavedModel into dir: the main graph as signature `main_name`, and count, any_rank and square
 * unless only_one. */
static void save_model(const char *dir, const char *main_name, bool only_one) {
  tide_saved_model_writer *w = tide_saved_model_writer_new();
  CHECK(tide_saved_model_add_variable(w, "w", W, 1) == TIDE_OK);
  CHECK(tide_saved_model_add_variable(w, "b", B, 1) == TIDE_OK);
  CHECK(tide_saved_model_add_variable(w, "count", COUNT, 0) == TIDE_OK);
  tide_graph *main_g = build_main(), *count_g = NULL, *any_g = NULL, *square_g = NULL;
  const char *in_names[1] = {"x"}, *out_names[2] = {"y", "t"};
  CHECK(tide_saved_model_add_function(w, main_name, main_g, 1, in_names, 2, out_names) ==
        TIDE_OK);
  if (!only_one) {
    count_g = build_count();
    const char *cin[1] = {"step"}, *cout[1] = {"total"};
    CHECK(tide_saved_model_add_function(w, "count", count_g, 1, cin, 1, cout) == TIDE_OK);
    any_g = build_any_rank();
    const char *ain[1] = {"v"}, *aout[1] = {"r"};
    CHECK(tide_saved_model_add_function(w, "any_rank", any_g, 1, ain, 1, aout) == TIDE_OK);
    square_g = build_square();
    CHECK(tide_saved_model_add_function(w, "square", square_g, 1, ain, 1, aout) == TIDE_OK);
  }
  tide_status st = tide_saved_model_save(w, dir);
  if (st) fprintf(stderr, "save: %s\n", tide_last_error());
  CHECK(st == TIDE_OK);
  tide_saved_model_writer_free(w);
  tide_graph_free(main_g);
  tide_graph_free(count_g);
  tide_graph_free(any_g);
  tide_graph_free(square_g);
}

/* y = relu(x @ w + b) for `rows` rows, in double, from the variables' values. */
static void reference(const float *x, int rows, float *y) {
  const float *w = W->data, *b = B->data;
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < OUT; j++) {
      double s = b[j];
      for (int k = 0; k < IN; k++) s += (double)x[r * IN + k] * w[k * OUT + j];
      y[r * OUT + j] = s > 0 ? (float)s : 0.0f;
    }
}

static bool close_to(const float *a, const float *b, int n) {
  for (int i = 0; i < n; i++)
    if (fabsf(a[i] - b[i]) > 1e-5f * (1 + fabsf(b[i]))) return false;
  return true;
}

static void fill(float *x, int n, int seed) {
  for (int i = 0; i < n; i++) x[i] = (float)(((seed * 7919 + i * 104729) % 2001) - 1000) / 250.0f;
}

static void test_specs(tide_model *m) {
  CHECK(tide_model_num_signatures(m) == 4);
  const tide_signature *s = tide_model_signature(m, NULL);
  CHECK(s != NULL && !strcmp(tide_signature_name(s), "serving_default"));
  CHECK(tide_model_signature(m, "serving_default") == s);
  const tide_signature *c = tide_model_signature(m, "count");
  CHECK(c != NULL && c != s && !strcmp(tide_signature_name(c), "count"));
  CHECK(tide_model_signature(m, "nope") == NULL);
  CHECK(tide_model_signature_at(m, 0) == s || tide_model_signature_at(m, 1) == s);
  CHECK(tide_model_signature_at(m, 4) == NULL && tide_model_signature_at(m, -1) == NULL);
  CHECK(tide_signature_num_inputs(s) == 1 && tide_signature_num_outputs(s) == 2);
  const tide_tensor_spec *x = tide_signature_input(s, 0);
  CHECK(x && !strcmp(x->name, "x") && x->dtype == TIDE_FLOAT32 && x->ndim == 2 && x->dims[0] == -1 && x->dims[1] == IN);
  const tide_tensor_spec *y = tide_signature_output(s, 0), *t = tide_signature_output(s, 1);
  CHECK(y && !strcmp(y->name, "y") && y->dtype == TIDE_FLOAT32 && y->ndim == 2 && y->dims[0] == -1 && y->dims[1] == OUT);
  CHECK(t && !strcmp(t->name, "t") && t->ndim == 2 && t->dims[0] == IN && t->dims[1] == -1);
  CHECK(tide_signature_input(s, 1) == NULL && tide_signature_input(s, -1) == NULL);
  CHECK(tide_signature_output(s, 2) == NULL);
  CHECK(tide_signature_input_index(s, "x") == 0 && tide_signature_input_index(s, "y") == -1);
  CHECK(tide_signature_output_index(s, "t") == 1 && tide_signature_output_index(s, "x") == -1);
  CHECK(tide_signature_input_index(s, NULL) == -1);
  const tide_tensor_spec *step = tide_signature_input(c, 0), *total = tide_signature_output(c, 0);
  CHECK(step && !strcmp(step->name, "step") && step->dtype == TIDE_FLOAT64 && step->ndim == 0);
  CHECK(total && !strcmp(total->name, "total") && total->dtype == TIDE_FLOAT64 && total->ndim == 0);
  const tide_signature *any = tide_model_signature(m, "any_rank");
  const tide_tensor_spec *v = tide_signature_input(any, 0), *r = tide_signature_output(any, 0);
  CHECK(v && !strcmp(v->name, "v") && v->dtype == TIDE_FLOAT32 && v->ndim == TIDE_UNKNOWN_RANK);
  CHECK(r && !strcmp(r->name, "r") && r->dtype == TIDE_FLOAT32 && r->ndim == TIDE_UNKNOWN_RANK);
}

/* An input of unknown rank takes any rank; the output's rank follows. */
static void test_any_rank(tide_model *m) {
  tide_model_error err;
  tide_run *r = tide_run_new(tide_model_signature(m, "any_rank"), &err);
  float x[24];
  fill(x, 24, 5);
  const int64_t shapes[3][3] = {{24, 0, 0}, {2, 3, 4}, {4, 6, 0}};
  const int ranks[3] = {1, 3, 2};
  for (int k = 0; k < 3; k++) {
    tide_array a = tide_array_make(x, TIDE_FLOAT32, ranks[k], shapes[k]), y;
    CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
    CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == ranks[k]);
    bool same = true;
    for (int d = 0; d < ranks[k]; d++) same = same && y.dims[d] == shapes[k][d];
    for (int i = 0; i < 24; i++) same = same && ((float *)y.data)[i] == (x[i] > 0 ? x[i] : 0);
    CHECK(same);
  }
  double wrong = 1;
  tide_array a = tide_array_make(&wrong, TIDE_FLOAT64, 0, NULL);
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_ERR_DTYPE && contains(err.message, "(any rank)"));
  tide_run_free(r);
}

/* Values, zero-copy binding, and outputs that stay valid until the next run. */
static void test_run(tide_model *m) {
  tide_model_error err;
  const tide_signature *s = tide_model_signature(m, NULL);
  tide_run *r = tide_run_new(s, &err);
  CHECK(r != NULL && err.code == TIDE_OK);
  float x[3 * IN], want[3 * OUT];
  fill(x, 3 * IN, 1);
  int64_t dims[2] = {3, IN};
  tide_array a = tide_array_make(x, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK && err.code == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK && err.code == TIDE_OK);
  tide_array y, t;
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && tide_run_output(r, 1, &t) == TIDE_OK);
  CHECK(y.dtype == TIDE_FLOAT32 && y.ndim == 2 && y.dims[0] == 3 && y.dims[1] == OUT);
  reference(x, 3, want);
  CHECK(close_to(y.data, want, 3 * OUT));
  /* t = x^T, read row-major although the graph gives a strided view */
  CHECK(t.ndim == 2 && t.dims[0] == IN && t.dims[1] == 3);
  bool transposed = true;
  for (int i = 0; i < IN; i++)
    for (int j = 0; j < 3; j++) transposed = transposed && ((float *)t.data)[i * 3 + j] == x[j * IN + i];
  CHECK(transposed);

  /* Zero copy: the run reads the caller's buffer as it is at each run. */
  float first[3 * OUT];
  memcpy(first, y.data, sizeof first);
  const void *first_ptr = y.data;
  fill(x, 3 * IN, 2);
  /* ... and the last results stay as they were until the next run */
  CHECK(memcmp(first_ptr, first, sizeof first) == 0);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK);
  reference(x, 3, want);
  CHECK(close_to(y.data, want, 3 * OUT));
  CHECK(!close_to(first, want, 3 * OUT));

  /* Rebinding to another buffer and another batch size; the old results
   * are still readable until the run runs again. */
  memcpy(first, y.data, sizeof first);
  first_ptr = y.data;
  float x5[5 * IN], want5[5 * OUT];
  fill(x5, 5 * IN, 3);
  int64_t d5[2] = {5, IN};
  tide_array a5 = tide_array_make(x5, TIDE_FLOAT32, 2, d5);
  CHECK(tide_run_set_input(r, 0, &a5, &err) == TIDE_OK);
  CHECK(memcmp(first_ptr, first, sizeof first) == 0);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.dims[0] == 5);
  reference(x5, 5, want5);
  CHECK(close_to(y.data, want5, 5 * OUT));
  CHECK(tide_run_output(r, 1, &t) == TIDE_OK && t.dims[0] == IN && t.dims[1] == 5);

  /* Batch 0 runs too. */
  int64_t d0[2] = {0, IN};
  tide_array a0 = tide_array_make(NULL, TIDE_FLOAT32, 2, d0);
  CHECK(tide_run_set_input(r, 0, &a0, &err) == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == 2 && y.dims[0] == 0 && y.dims[1] == OUT);

  /* NULL err is allowed everywhere. */
  CHECK(tide_run_set_input(r, 0, &a, NULL) == TIDE_OK);
  CHECK(tide_model_run(r, NULL) == TIDE_OK);
  tide_run_free(r);
}

/* ---- 8 threads against one model ----------------------------------------- */

enum { THREADS = 8, VARIANTS = 6, ITERS = 300, MAXB = 4 };

typedef struct worker {
  const tide_signature *sig;
  int id;
  float x[VARIANTS][MAXB * IN];
  int rows[VARIANTS];
  float want[VARIANTS][MAXB * OUT]; /* from a single-threaded run of the same model */
  int bad, runs;
  char first_error[1100];
} worker;

static void *work(void *arg) {
  worker *w = arg;
  tide_model_error err;
  tide_run *r = tide_run_new(w->sig, &err);
  if (!r) {
    snprintf(w->first_error, sizeof w->first_error, "%s", err.message);
    w->bad++;
    return NULL;
  }
  float x[MAXB * IN]; /* the thread's own input buffer, refilled each iteration */
  for (int it = 0; it < ITERS; it++) {
    int v = (it * 5 + w->id) % VARIANTS;
    memcpy(x, w->x[v], sizeof x);
    int64_t dims[2] = {w->rows[v], IN};
    tide_array a = tide_array_make(x, TIDE_FLOAT32, 2, dims);
    tide_array y;
    if (tide_run_set_input(r, 0, &a, &err) || tide_model_run(r, &err) || tide_run_output(r, 0, &y) ||
        y.dims[0] != w->rows[v] || memcmp(y.data, w->want[v], (size_t)w->rows[v] * OUT * sizeof(float))) {
      if (!w->bad) snprintf(w->first_error, sizeof w->first_error, "iteration %d: %s", it, err.message);
      w->bad++;
    }
    w->runs++;
  }
  tide_run_free(r);
  return NULL;
}

static void *count_work(void *arg) {
  worker *w = arg;
  tide_model_error err;
  tide_run *r = tide_run_new(w->sig, &err);
  double one = 1;
  tide_array a = tide_array_make(&one, TIDE_FLOAT64, 0, NULL);
  for (int it = 0; r && it < ITERS; it++)
    if (tide_run_set_input(r, 0, &a, &err) || tide_model_run(r, &err)) w->bad++;
  if (!r) w->bad++;
  tide_run_free(r);
  return NULL;
}

static void test_threads(tide_model *m) {
  static worker ws[THREADS];
  const tide_signature *s = tide_model_signature(m, NULL);
  tide_model_error err;
  tide_run *ref = tide_run_new(s, &err);
  for (int k = 0; k < THREADS; k++) {
    worker *w = &ws[k];
    memset(w, 0, sizeof *w);
    w->sig = s;
    w->id = k;
    for (int v = 0; v < VARIANTS; v++) {
      w->rows[v] = 1 + (k + v) % MAXB;
      fill(w->x[v], MAXB * IN, 100 * k + v);
      int64_t dims[2] = {w->rows[v], IN};
      tide_array a = tide_array_make(w->x[v], TIDE_FLOAT32, 2, dims), y;
      CHECK(tide_run_set_input(ref, 0, &a, &err) == TIDE_OK && tide_model_run(ref, &err) == TIDE_OK &&
            tide_run_output(ref, 0, &y) == TIDE_OK);
      memcpy(w->want[v], y.data, (size_t)w->rows[v] * OUT * sizeof(float));
      float naive[MAXB * OUT];
      reference(w->x[v], w->rows[v], naive);
      CHECK(close_to(w->want[v], naive, w->rows[v] * OUT));
    }
  }
  tide_run_free(ref);
  pthread_t th[THREADS];
  for (int k = 0; k < THREADS; k++) CHECK(pthread_create(&th[k], NULL, work, &ws[k]) == 0);
  for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
  int bad = 0, runs = 0;
  for (int k = 0; k < THREADS; k++) {
    if (ws[k].bad) fprintf(stderr, "thread %d: %d bad results; first: %s\n", k, ws[k].bad, ws[k].first_error);
    bad += ws[k].bad;
    runs += ws[k].runs;
  }
  CHECK(bad == 0);
  CHECK(runs == THREADS * ITERS);

  /* A signature with a side effect (counter += 1) runs one call at a time: no update is lost. */
  const tide_signature *c = tide_model_signature(m, "count");
  for (int k = 0; k < THREADS; k++) {
    memset(&ws[k], 0, sizeof ws[k]);
    ws[k].sig = c;
    CHECK(pthread_create(&th[k], NULL, count_work, &ws[k]) == 0);
  }
  for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < THREADS; k++) CHECK(ws[k].bad == 0);
  tide_run *r = tide_run_new(c, &err);
  double zero = 0;
  tide_array a = tide_array_make(&zero, TIDE_FLOAT64, 0, NULL), total;
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &total) == TIDE_OK && total.ndim == 0);
  CHECK(*(double *)total.data == (double)(THREADS * ITERS));
  tide_run_free(r);
}

/* ---- errors --------------------------------------------------------------- */

static void write_file(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(text, 1, n, f) == n);
  fclose(f);
}

/* The whole file at path, NUL-terminated (its length in *n), or NULL. */
static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)len + 1);
  *n = fread(buf, 1, (size_t)len, f);
  buf[*n] = 0; /* the JSON is edited as a string */
  fclose(f);
  return buf;
}

static void copy_file(const char *from, const char *to) {
  size_t n = 0;
  char *text = read_file(from, &n);
  CHECK(text != NULL);
  if (text) write_file(to, text, n);
  free(text);
}

/* A copy of the model in `good` under base/name with one file replaced by
 * its first `keep` bytes (or by `text` when not NULL); then load it and expect failure. */
static void expect_broken(const char *good, const char *base, const char *name, const char *file, size_t keep,
                          const char *text, tide_status code, const char *needle) {
  char dir[512], from[600], to[600];
  snprintf(dir, sizeof dir, "%s/%s", base, name);
  CHECK(mkdir(dir, 0700) == 0);
  const char *files[3] = {"saved_model.json", "variables.safetensors", "constants.safetensors"};
  for (int i = 0; i < 3; i++) {
    snprintf(from, sizeof from, "%s/%s", good, files[i]);
    snprintf(to, sizeof to, "%s/%s", dir, files[i]);
    if (strcmp(files[i], file)) {
      copy_file(from, to);
      continue;
    }
    size_t n = 0;
    char *all = read_file(from, &n);
    CHECK(all != NULL && keep <= n);
    if (text) write_file(to, text, strlen(text));
    else if (all) write_file(to, all, keep < n ? keep : n);
    free(all);
  }
  tide_model_error err;
  memset(&err, 0, sizeof err);
  tide_model *m = tide_model_load(dir, &err);
  CHECK(m == NULL);
  CHECK(err.code == code);
  CHECK(contains(err.message, dir));
  if (!contains(err.message, needle)) fprintf(stderr, "expected '%s' in: %s\n", needle, err.message);
  CHECK(contains(err.message, needle));
  tide_model_free(m);
}

static void test_load_errors(const char *good, const char *base) {
  tide_model_error err;
  char missing[600];
  snprintf(missing, sizeof missing, "%s/no_such_model", base);
  CHECK(tide_model_load(missing, &err) == NULL);
  CHECK(err.code == TIDE_ERR_IO && contains(err.message, "no_such_model"));
  CHECK(tide_model_load(missing, NULL) == NULL); /* no err: still no crash */
  CHECK(tide_model_load(NULL, &err) == NULL && err.code == TIDE_ERR_VALUE && contains(err.message, "NULL"));
  size_t n = 0;
  char path[700];
  snprintf(path, sizeof path, "%s/saved_model.json", good);
  free(read_file(path, &n));
  expect_broken(good, base, "truncated_json", "saved_model.json", n / 2, NULL, TIDE_ERR_VALUE, "saved_model.json");
  expect_broken(good, base, "garbage_json", "saved_model.json", 0, "{\"format\": \"tide.saved_model\", \"version\": 1, "
                "\"variables\": 3}", TIDE_ERR_VALUE, "saved_model.json");
  expect_broken(good, base, "not_json", "saved_model.json", 0, "\x01\x02 not json", TIDE_ERR_VALUE,
                "saved_model.json");
  expect_broken(good, base, "empty_json", "saved_model.json", 0, NULL, TIDE_ERR_VALUE, "saved_model.json");
  snprintf(path, sizeof path, "%s/variables.safetensors", good);
  free(read_file(path, &n));
  expect_broken(good, base, "truncated_vars", "variables.safetensors", n - 5, NULL, TIDE_ERR_IO,
                "variables.safetensors");
  /* A graph that names an op this build does not know. */
  snprintf(path, sizeof path, "%s/saved_model.json", good);
  char *json = read_file(path, &n);
  char *at = json ? strstr(json, "\"relu\"") : NULL;
  CHECK(at != NULL);
  if (at) {
    memcpy(at, "\"rel?\"", 6);
    expect_broken(good, base, "unknown_op", "saved_model.json", 0, json, TIDE_ERR_VALUE, "rel?");
  }
  free(json);
}

static void test_run_errors(tide_model *m) {
  tide_model_error err;
  const tide_signature *s = tide_model_signature(m, NULL);
  tide_run *r = tide_run_new(s, &err);
  float x[2 * IN] = {0};
  double xd[2 * IN] = {0};
  int64_t dims[2] = {2, IN};
  tide_array y;

  /* outputs before any run, and runs before every input is bound */
  CHECK(tide_run_output(r, 0, &y) == TIDE_ERR_VALUE && contains(tide_last_error(), "before"));
  CHECK(tide_model_run(r, &err) == TIDE_ERR_VALUE && err.code == TIDE_ERR_VALUE && contains(err.message, "'x'") &&
        contains(err.message, "not bound"));

  tide_array bad = tide_array_make(xd, TIDE_FLOAT64, 2, dims);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_DTYPE && err.code == TIDE_ERR_DTYPE);
  CHECK(contains(err.message, "'x'") && contains(err.message, "float32") && contains(err.message, "float64"));
  bad = tide_array_make(x, TIDE_FLOAT32, 1, dims);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_SHAPE && contains(err.message, "[None, 4]") &&
        contains(err.message, "[2]"));
  int64_t wrong[2] = {2, IN + 1};
  bad = tide_array_make(x, TIDE_FLOAT32, 2, wrong);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_SHAPE && contains(err.message, "[2, 5]"));
  int64_t negative[2] = {-1, IN};
  bad = tide_array_make(x, TIDE_FLOAT32, 2, negative);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_SHAPE);
  bad = tide_array_make(x, TIDE_FLOAT32, 2, dims);
  bad.ndim = TIDE_MAX_DIMS + 1;
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_SHAPE);
  bad.ndim = -3;
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_SHAPE);
  bad = tide_array_make(x, 999, 2, dims);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_DTYPE && contains(err.message, "?"));
  bad = tide_array_make(NULL, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 0, &bad, &err) == TIDE_ERR_VALUE && contains(err.message, "NULL data"));
  tide_array a = tide_array_make(x, TIDE_FLOAT32, 2, dims);
  CHECK(tide_run_set_input(r, 1, &a, &err) == TIDE_ERR_INDEX && contains(err.message, "no input 1"));
  CHECK(tide_run_set_input(r, -1, &a, &err) == TIDE_ERR_INDEX);
  /* failed bindings bound nothing */
  CHECK(tide_model_run(r, &err) == TIDE_ERR_VALUE && contains(err.message, "not bound"));

  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 2, &y) == TIDE_ERR_INDEX && contains(tide_last_error(), "no output 2"));
  CHECK(tide_run_output(r, -1, &y) == TIDE_ERR_INDEX);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK);
  /* a failed binding keeps the last good one */
  CHECK(tide_run_set_input(r, 0, &bad, &err) != TIDE_OK);
  CHECK(tide_model_run(r, &err) == TIDE_OK);

  /* NULL arguments are errors, not crashes */
  CHECK(tide_run_new(NULL, &err) == NULL && err.code == TIDE_ERR_VALUE);
  CHECK(tide_run_set_input(NULL, 0, &a, &err) == TIDE_ERR_VALUE && contains(err.message, "NULL"));
  CHECK(tide_run_set_input(r, 0, NULL, &err) == TIDE_ERR_VALUE && contains(err.message, "NULL"));
  CHECK(tide_model_run(NULL, &err) == TIDE_ERR_VALUE && contains(err.message, "NULL"));
  CHECK(tide_run_output(NULL, 0, &y) == TIDE_ERR_VALUE);
  CHECK(tide_run_output(r, 0, NULL) == TIDE_ERR_VALUE);
  CHECK(tide_model_num_signatures(NULL) == 0);
  CHECK(tide_model_signature(NULL, NULL) == NULL && tide_model_signature_at(NULL, 0) == NULL);
  CHECK(tide_signature_name(NULL) == NULL && tide_signature_num_inputs(NULL) == 0);
  CHECK(tide_signature_num_outputs(NULL) == 0 && tide_signature_input(NULL, 0) == NULL);
  CHECK(tide_signature_output(NULL, 0) == NULL && tide_signature_output_index(NULL, "y") == -1);
  tide_run_free(NULL);
  tide_model_free(NULL);
  tide_run_free(r);
}

/* A run that fails in a kernel: the error names the op and the shapes, there
 * are no outputs until a run succeeds, and the run works again after. */
static void test_failed_run(tide_model *m) {
  tide_model_error err;
  tide_run *r = tide_run_new(tide_model_signature(m, "square"), &err);
  float v[4] = {1, 2, 3, 4};
  int64_t four[1] = {4}, three[1] = {3};
  tide_array a = tide_array_make(v, TIDE_FLOAT32, 1, four), y;
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == 2 && ((float *)y.data)[3] == 4);
  a = tide_array_make(v, TIDE_FLOAT32, 1, three);
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK);
  tide_status st = tide_model_run(r, &err);
  CHECK(st != TIDE_OK && err.code == st);
  CHECK(contains(err.message, "signature 'square'") && contains(err.message, "reshape"));
  CHECK(tide_run_output(r, 0, &y) == TIDE_ERR_VALUE);
  a = tide_array_make(v, TIDE_FLOAT32, 1, four);
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK && tide_model_run(r, &err) == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && ((float *)y.data)[0] == 1);
  tide_run_free(r);
}

/* A model of one signature not called serving_default: NULL finds it, and
 * only NULL (a name must be its name: a misspelled one finds nothing); two
 * such signatures: NULL finds none. */
static void test_only_signature(const char *base) {
  char dir[600];
  snprintf(dir, sizeof dir, "%s/only_f", base);
  save_model(dir, "f", true);
  tide_model_error err;
  tide_model *m = tide_model_load(dir, &err);
  CHECK(m != NULL);
  const tide_signature *f = tide_model_signature(m, NULL);
  CHECK(f != NULL && !strcmp(tide_signature_name(f), "f"));
  CHECK(tide_model_signature(m, "f") == f);
  CHECK(tide_model_signature(m, "g") == NULL);
  CHECK(tide_model_signature(m, "F") == NULL);
  CHECK(tide_model_signature(m, "serving_default") == NULL);
  CHECK(tide_model_signature(m, "") == NULL);
  tide_model_free(m);
  snprintf(dir, sizeof dir, "%s/two", base);
  save_model(dir, "f", false);
  m = tide_model_load(dir, &err);
  CHECK(m != NULL && tide_model_num_signatures(m) == 4);
  CHECK(tide_model_signature(m, NULL) == NULL);
  CHECK(tide_model_signature(m, "f") != NULL && tide_model_signature(m, "count") != NULL);
  tide_model_free(m);
}

/* ---- the C half of tests/sh/test_embed_model.sh ---------------------------- */

/* FILE: "rows cols", rows*cols inputs, then "n_out", the expected outputs
 * (row-major). Load DIR, run serving_default on the inputs, compare. */
static int predict(const char *dir, const char *file) {
  FILE *f = fopen(file, "r");
  if (!f) return fprintf(stderr, "cannot open %s\n", file), 2;
  long rows, cols, n_out;
  if (fscanf(f, "%ld %ld", &rows, &cols) != 2 || rows <= 0 || cols <= 0 || rows * cols > 1 << 20) return 2;
  float *x = malloc((size_t)(rows * cols) * sizeof *x);
  for (long i = 0; i < rows * cols; i++)
    if (fscanf(f, "%f", &x[i]) != 1) return 2;
  if (fscanf(f, "%ld", &n_out) != 1 || n_out <= 0 || n_out > 1 << 20) return 2;
  float *want = malloc((size_t)n_out * sizeof *want);
  for (long i = 0; i < n_out; i++)
    if (fscanf(f, "%f", &want[i]) != 1) return 2;
  fclose(f);
  tide_model_error err;
  tide_model *m = tide_model_load(dir, &err);
  CHECK(m != NULL);
  if (!m) {
    fprintf(stderr, "%s\n", err.message);
    return CHECK_SUMMARY("test_model --predict");
  }
  const tide_signature *s = tide_model_signature(m, NULL);
  CHECK(s != NULL && tide_signature_num_inputs(s) == 1 && tide_signature_num_outputs(s) == 1);
  const tide_tensor_spec *in = tide_signature_input(s, 0), *out = tide_signature_output(s, 0);
  CHECK(in->dtype == TIDE_FLOAT32 && in->ndim == 2 && in->dims[0] == -1 && in->dims[1] == cols);
  CHECK(out->dtype == TIDE_FLOAT32 && out->ndim == 2 && out->dims[0] == -1 && out->dims[1] == n_out / rows);
  tide_run *r = tide_run_new(s, &err);
  int64_t dims[2] = {rows, cols};
  tide_array a = tide_array_make(x, TIDE_FLOAT32, 2, dims), y;
  CHECK(tide_run_set_input(r, 0, &a, &err) == TIDE_OK);
  tide_status st = tide_model_run(r, &err);
  if (st) fprintf(stderr, "%s\n", err.message);
  CHECK(st == TIDE_OK);
  CHECK(tide_run_output(r, 0, &y) == TIDE_OK && y.ndim == 2 && y.dims[0] * y.dims[1] == n_out);
  if (!st) {
    float worst = 0;
    for (long i = 0; i < n_out; i++) worst = fmaxf(worst, fabsf(((float *)y.data)[i] - want[i]));
    printf("largest difference from the Lua predictions: %g\n", worst);
    CHECK(worst < 1e-5f);
  }
  tide_run_free(r);
  tide_model_free(m);
  free(x);
  free(want);
  return CHECK_SUMMARY("test_model --predict");
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--predict")) return predict(argv[2], argv[3]);
  char base[] = "/tmp/tide_test_model_XXXXXX";
  if (!mkdtemp(base)) return fprintf(stderr, "mkdtemp: %s\n", strerror(errno)), 1;
  int64_t wd[2] = {IN, OUT}, bd[1] = {OUT};
  W = tide_tensor_new(TIDE_FLOAT32, 2, wd);
  B = tide_tensor_new(TIDE_FLOAT32, 1, bd);
  COUNT = tide_tensor_new(TIDE_FLOAT64, 0, NULL);
  /* a variable's tensor has storage of its own (small ones start inline) */
  CHECK(tide_tensor_promote(W) == TIDE_OK && tide_tensor_promote(B) == TIDE_OK && tide_tensor_promote(COUNT) == TIDE_OK);
  fill(W->data, IN * OUT, 11);
  fill(B->data, OUT, 12);
  *(double *)COUNT->data = 0;
  char good[600];
  snprintf(good, sizeof good, "%s/model", base);
  save_model(good, "serving_default", false);

  tide_model_error err;
  tide_model *m = tide_model_load(good, &err);
  if (!m) fprintf(stderr, "load: %s\n", err.message);
  CHECK(m != NULL && err.code == TIDE_OK && err.message[0] == 0);
  if (m) {
    test_specs(m);
    test_run(m);
    test_any_rank(m);
    test_failed_run(m);
    test_run_errors(m);
    test_threads(m);
  }
  tide_model_free(m);
  test_only_signature(base);
  test_load_errors(good, base);

  tide_tensor_free(W);
  tide_tensor_free(B);
  tide_tensor_free(COUNT);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
  CHECK(system(cmd) == 0);
  return CHECK_SUMMARY("test_model");
}
