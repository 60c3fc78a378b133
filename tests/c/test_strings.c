/* tests/c/test_strings.c — string tensors in C: elements made, read and
 * written; ops that copy them (eager and in a graph, with the memory plan and
 * constants) count references, so nothing leaks (LeakSanitizer under
 * SANITIZE=1, and the live count here) and nothing is freed twice (ASan). */
#include "graph_util.h"

/* A 1-D string tensor of the given C strings (lengths from strlen, or `lens`). */
static tide_tensor *strings_of(int n, const char *const *s, const int64_t *lens) {
  int64_t d = n;
  tide_tensor *t = tide_tensor_new(TIDE_STRING, 1, &d);
  for (int i = 0; i < n; i++) CHECK(tide_string_set(t, i, s[i], lens ? lens[i] : (int64_t)strlen(s[i])) == TIDE_OK);
  return t;
}

/* True when element i (row-major through strides) of t holds these bytes. */
static bool holds(const tide_tensor *t, int64_t i, const char *want, int64_t wlen) {
  int64_t off = 0, rest = i;
  for (int k = t->ndim - 1; k >= 0; k--) {
    off += (rest % t->dims[k]) * t->strides[k];
    rest /= t->dims[k];
  }
  int64_t len;
  const char *b = tide_string_at(t->data, off, &len);
  return len == wlen && memcmp(b, want, (size_t)len) == 0;
}

static void test_elements(void) {
  const char *s[] = {"a", "b\0c", ""};
  int64_t lens[] = {1, 3, 0};
  tide_tensor *t = strings_of(3, s, lens);
  CHECK(!(t->flags & TIDE_TENSOR_INLINE) && t->storage);
  CHECK(holds(t, 0, "a", 1) && holds(t, 1, "b\0c", 3) && holds(t, 2, "", 0));
  CHECK(tide_string_live_count() == 2); /* "" is NULL: no string */
  CHECK(tide_string_set(t, 0, "zz", 2) == TIDE_OK && holds(t, 0, "zz", 2));
  CHECK(tide_string_set(t, 5, "x", 1) != TIDE_OK && contains(tide_last_error(), "outside"));
  tide_tensor w = blank();
  char mem[16];
  CHECK(tide_tensor_wrap(&w, mem, TIDE_STRING, 1, (int64_t[]){2}, NULL, NULL, NULL) != TIDE_OK);
  tide_tensor_free(t);
  CHECK(tide_string_live_count() == 0);
}

static void test_eager_copies(void) {
  const char *s[] = {"alpha", "beta", "gamma", "delta"};
  tide_tensor *x = strings_of(4, s, NULL);
  tide_tensor m = blank(), tr = blank(), flat = blank(), cat = blank(), til = blank(), g = blank(), eq = blank();
  tide_attrs a = {0};
  a.nints = 2, a.ints[0] = 2, a.ints[1] = 2;
  op_attrs(TIDE_OP_RESHAPE, &a, 1, (const tide_tensor *[]){x}, &m); /* a view */
  CHECK(m.storage == x->storage);
  memset(&a, 0, sizeof a);
  op_attrs(TIDE_OP_TRANSPOSE, &a, 1, (const tide_tensor *[]){&m}, &tr);
  a.nints = 1, a.ints[0] = 4;
  op_attrs(TIDE_OP_RESHAPE, &a, 1, (const tide_tensor *[]){&tr}, &flat); /* a copy of a strided view */
  CHECK(flat.storage != x->storage && holds(&flat, 1, "gamma", 5));
  memset(&a, 0, sizeof a);
  op_attrs(TIDE_OP_CONCAT, &a, 2, (const tide_tensor *[]){x, &flat}, &cat);
  a.nints = 1, a.ints[0] = 3;
  op_attrs(TIDE_OP_TILE, &a, 1, (const tide_tensor *[]){&flat}, &til);
  tide_tensor *idx = tide_tensor_new(TIDE_INT32, 1, (int64_t[]){3});
  ((int32_t *)idx->data)[0] = 3, ((int32_t *)idx->data)[1] = 3, ((int32_t *)idx->data)[2] = 0;
  memset(&a, 0, sizeof a);
  op_attrs(TIDE_OP_GATHER, &a, 2, (const tide_tensor *[]){x, idx}, &g);
  bin(TIDE_OP_EQUAL, &eq, x, &flat);
  CHECK(cat.nelem == 8 && holds(&cat, 5, "gamma", 5) && til.nelem == 12 && holds(&til, 11, "delta", 5));
  CHECK(holds(&g, 0, "delta", 5) && holds(&g, 2, "alpha", 5));
  CHECK(((uint8_t *)eq.data)[0] == 1 && ((uint8_t *)eq.data)[1] == 0 && ((uint8_t *)eq.data)[3] == 1);
  /* Writes count too: the source overlaps the destination. */
  tide_tensor half = blank();
  CHECK(tide_tensor_view(&half, x, 1, (int64_t[]){2}, (int64_t[]){1}, 0) == TIDE_OK);
  tide_tensor other = blank();
  CHECK(tide_tensor_view(&other, x, 1, (int64_t[]){2}, (int64_t[]){1}, 1) == TIDE_OK);
  CHECK(tide_tensor_copy_into(&half, &other) == TIDE_OK && holds(x, 0, "beta", 4) && holds(x, 1, "gamma", 5));
  /* A numeric op refuses strings, naming itself and the dtype. */
  tide_tensor bad = blank();
  tide_tensor *out[1] = {&bad};
  CHECK(tide_op_run(TIDE_OP_ADD, NULL, 2, (const tide_tensor *[]){x, x}, 1, out) != TIDE_OK);
  CHECK(contains(tide_last_error(), "add: input 1 is a string tensor"));
  a.dtype = TIDE_STRING;
  CHECK(tide_op_run(TIDE_OP_CAST, &a, 1, (const tide_tensor *[]){idx}, 1, out) != TIDE_OK);
  CHECK(contains(tide_last_error(), "cannot cast to string"));
  tide_tensor *rel[] = {&m, &tr, &flat, &cat, &til, &g, &eq, &half, &other};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) tide_tensor_release(rel[i]);
  tide_tensor_free(idx);
  tide_tensor_free(x);
  CHECK(tide_string_live_count() == 0);
}

static tide_tensor *K; /* a string constant the graph body captures */

/* Small string intermediates (would be inline or in the arena if numeric). */
static int body(tide_tensor *in, tide_tensor *out) {
  tide_tensor k = konst(K), c = blank(), r = blank(), t = blank(), idn = blank(), e = blank();
  tide_attrs a = {0};
  op_attrs(TIDE_OP_CONCAT, &a, 2, (const tide_tensor *[]){&in[0], &k}, &c);
  a.nints = 1, a.ints[0] = 0;
  op_attrs(TIDE_OP_REVERSE, &a, 1, (const tide_tensor *[]){&c}, &r);
  a.ints[0] = 2;
  op_attrs(TIDE_OP_TILE, &a, 1, (const tide_tensor *[]){&r}, &t);
  un(TIDE_OP_COPY, &idn, &t);
  bin(TIDE_OP_EQUAL, &e, &r, &c);
  out[0] = idn;
  out[1] = r;
  out[2] = e;
  return 3;
}

static void test_graph(void) {
  const char *ks[] = {"k"};
  K = strings_of(1, ks, NULL);
  const char *s[] = {"p"};
  tide_tensor *x = strings_of(1, s, NULL);
  for (unsigned passes = 0; passes <= 1; passes++) {
    tide_graph *g = build(body, 1, &x, true, passes ? TIDE_PASS_ALL : 0);
    for (int rep = 0; rep < 3; rep++) {
      tide_tensor res[3];
      CHECK(run(g, 1, &x, res) == TIDE_OK);
      CHECK(res[0].nelem == 4 && holds(&res[0], 0, "k", 1) && holds(&res[0], 3, "p", 1));
      CHECK(res[1].nelem == 2 && holds(&res[1], 1, "p", 1));
      CHECK(res[2].dt == TIDE_BOOL && ((uint8_t *)res[2].data)[0] == 0);
      for (int k = 0; k < 3; k++) tide_tensor_release(&res[k]);
    }
    tide_graph_free(g);
  }
  tide_tensor_free(x);
  tide_tensor_free(K);
  CHECK(tide_string_live_count() == 0);
}

int main(void) {
  test_elements();
  test_eager_copies();
  test_graph();
  CHECK(tide_string_live_count() == 0);
  CHECK(tide_memory_stats_get()->current == 0);
  return CHECK_SUMMARY("strings");
}
