/* tests/c/test_data_interleave.c — the interleave node from C: templates with
 * a range leaf fed through an argument graph, TF's order with and without
 * threads, a template without leaves, and the errors of its constructors. */
#include "tide/data.h"
#include "graph_util.h"

/* x -> (x * 10, x * 10 + x % 3, 1): range(x * 10, x * 10 + x % 3). */
static int args_body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *ten = scalar(TIDE_INT64, 10), *three = scalar(TIDE_INT64, 3), *one = scalar(TIDE_INT64, 1);
  tide_tensor k10 = konst(ten), k3 = konst(three), rem;
  bin(TIDE_OP_MUL, &out[0], &in[0], &k10);
  bin(TIDE_OP_MOD, &rem, &in[0], &k3);
  bin(TIDE_OP_ADD, &out[1], &out[0], &rem);
  out[2] = konst(one);
  tide_tensor_free(ten), tide_tensor_free(three), tide_tensor_free(one);
  return 3;
}

/* Every element of ds (int64 scalars) into got; their count. */
static int drain(tide_dataset *ds, int64_t *got, int max) {
  tide_data_iterator *it = tide_dataset_iterate(ds);
  CHECK(it != NULL);
  if (!it) return -1;
  int n = 0;
  for (;;) {
    tide_tensor t = blank();
    tide_tensor *out[1] = {&t};
    int end = 0;
    if (tide_data_iterator_next(it, 1, out, &end) != TIDE_OK) {
      fprintf(stderr, "drain: %s\n", tide_last_error());
      n = -1;
      break;
    }
    if (end) break;
    if (n < max) got[n] = *(const int64_t *)t.data;
    n++;
    tide_tensor_release(&t);
  }
  tide_data_iterator_free(it);
  return n;
}

static void test_order(void) {
  tide_tensor *ex = scalar(TIDE_INT64, 0);
  tide_graph *g = build(args_body, 1, &ex, false, TIDE_PASS_ALL);
  tide_dataset *leaf = tide_dataset_param(TIDE_DATA_PARAM_RANGE, 0, 3, NULL);
  tide_dataset *in = tide_dataset_range(1, 6, 1, TIDE_INT64);
  CHECK(leaf && in);
  /* x = 1..5: [10], [20 21], [], [40], [50 51]; cycle 2, block 1 (TF's order) */
  const int64_t want[] = {10, 20, 21, 40, 50, 51};
  for (int p = 0; p <= 3; p++) {
    tide_dataset *ds = tide_dataset_interleave(in, g, leaf, 2, 1, p, 1);
    CHECK(ds != NULL);
    int64_t got[16];
    for (int pass = 0; pass < 2; pass++) {
      CHECK(drain(ds, got, 16) == 6);
      for (int i = 0; i < 6; i++) CHECK(got[i] == want[i]);
    }
    tide_dataset_free(ds);
  }
  /* a template leaf alone cannot be read */
  CHECK(tide_dataset_iterate(leaf) == NULL);
  CHECK(strstr(tide_last_error(), "only that interleave can read it") != NULL);
  tide_dataset_free(leaf);
  tide_dataset_free(in);
  tide_graph_free(g);
  tide_tensor_free(ex);
}

static void test_no_leaf(void) {
  /* fn ignores the element: every input element gives range(2) */
  tide_dataset *in = tide_dataset_range(0, 3, 1, TIDE_INT64), *inner = tide_dataset_range(0, 2, 1, TIDE_INT64);
  tide_dataset *ds = tide_dataset_interleave(in, NULL, inner, 3, 2, 2, 1);
  CHECK(ds != NULL);
  int64_t got[8];
  CHECK(drain(ds, got, 8) == 6);
  for (int i = 0; i < 6; i++) CHECK(got[i] == i % 2);
  CHECK(tide_dataset_cardinality(ds) == TIDE_DATA_UNKNOWN);
  tide_dataset_free(ds);
  tide_dataset_free(in);
  tide_dataset_free(inner);
}

static void test_errors(void) {
  tide_dataset *in = tide_dataset_range(0, 3, 1, TIDE_INT64), *inner = tide_dataset_range(0, 2, 1, TIDE_INT64);
  CHECK(tide_dataset_param(TIDE_DATA_PARAM_RANGE, 0, 2, NULL) == NULL);
  CHECK(strstr(tide_last_error(), "bad template leaf") != NULL);
  CHECK(tide_dataset_param(TIDE_DATA_PARAM_FILES, 0, 1, inner) == NULL); /* not a file source */
  CHECK(tide_dataset_param(7, 0, 1, NULL) == NULL);
  CHECK(tide_dataset_param(TIDE_DATA_PARAM_SLICES, -1, 1, NULL) == NULL);
  CHECK(tide_dataset_interleave(NULL, NULL, inner, 1, 1, 0, 1) == NULL);
  CHECK(tide_dataset_interleave(in, NULL, inner, 0, 1, 0, 1) == NULL);
  CHECK(strstr(tide_last_error(), "cycle_length (0)") != NULL);
  CHECK(tide_dataset_interleave(in, NULL, inner, 1, 0, 0, 1) == NULL);
  CHECK(tide_dataset_interleave(in, NULL, inner, 1, 1, -1, 1) == NULL);
  tide_dataset_free(in);
  tide_dataset_free(inner);
}

int main(void) {
  test_order();
  test_no_leaf();
  test_errors();
  CHECK(tide_data_live_threads() == 0);
  return CHECK_SUMMARY("data_interleave");
}
