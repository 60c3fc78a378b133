/* tests/c/test_control.c — cond and while nodes built and run from C with no
 * Lua: captures, a result shape known only at run time, loop bounds, errors. */
#include "check.h"

#include "tide/tide.h"

static tide_tensor blank(void) {
  tide_tensor t;
  memset(&t, 0, sizeof t);
  return t;
}

/* Small tensors keep their data inside the header: fill the caller's, never return one by value. */
static void scalar_i32(tide_tensor *t, int32_t v) {
  *t = blank();
  tide_tensor_init(t, TIDE_INT32, 0, NULL);
  *(int32_t *)t->data = v;
}

static void vec_f32(tide_tensor *t, int n, const float *v) {
  *t = blank();
  int64_t d = n;
  tide_tensor_init(t, TIDE_FLOAT32, 1, &d);
  memcpy(t->data, v, sizeof(float) * (size_t)n);
}

/* Symbolic results (no data) may be returned by value. */
static tide_tensor reduce_sum(const tide_tensor *x) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  tide_tensor out = blank();
  tide_tensor *outs[1] = {&out};
  const tide_tensor *ins[1] = {x};
  CHECK(tide_op_run(TIDE_OP_SUM, &a, 1, ins, 1, outs) == TIDE_OK);
  return out;
}

static tide_tensor concat2(const tide_tensor *x, const tide_tensor *y) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  tide_tensor out = blank();
  tide_tensor *outs[1] = {&out};
  const tide_tensor *ins[2] = {x, y};
  CHECK(tide_op_run(TIDE_OP_CONCAT, &a, 2, ins, 1, outs) == TIDE_OK);
  return out;
}

/* f(n, x): i, acc = 0, x; while i < n: i, acc = i + 1, acc * 2 + x (x captured);
 * s = sum(acc); y = s > 100 ? acc : concat(acc, acc); return i, y, sum(y). */
static tide_graph *build(void) {
  tide_graph *g = tide_graph_new("f");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor n = blank(), x = blank();
  int64_t unknown = -1;
  CHECK(tide_graph_input(g, TIDE_INT32, 0, NULL, &n) == TIDE_OK);
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, &unknown, &x) == TIDE_OK);

  tide_graph *cg = tide_graph_new("cond"), *bg = tide_graph_new("body");
  tide_tensor ci = blank(), cacc = blank(), bi = blank(), bacc = blank();
  CHECK(tide_graph_begin(cg) == TIDE_OK);
  tide_graph_input(cg, TIDE_INT32, 0, NULL, &ci);
  tide_graph_input(cg, TIDE_FLOAT32, 1, &unknown, &cacc);
  tide_tensor flag = blank();
  CHECK(tide_op_binary(TIDE_OP_LESS, &flag, &ci, &n) == TIDE_OK); /* n is captured */
  const tide_tensor *cout[1] = {&flag};
  CHECK(tide_graph_set_outputs(cg, 1, cout) == TIDE_OK);
  CHECK(tide_graph_end(cg) == TIDE_OK);

  CHECK(tide_graph_begin(bg) == TIDE_OK);
  tide_graph_input(bg, TIDE_INT32, 0, NULL, &bi);
  tide_graph_input(bg, TIDE_FLOAT32, 1, &unknown, &bacc);
  tide_tensor one, two = blank(), i1 = blank(), twice = blank(), acc1 = blank();
  scalar_i32(&one, 1);
  float twof = 2;
  tide_tensor_init(&two, TIDE_FLOAT32, 0, NULL);
  *(float *)two.data = twof;
  CHECK(tide_op_binary(TIDE_OP_ADD, &i1, &bi, &one) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MUL, &twice, &bacc, &two) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_ADD, &acc1, &twice, &x) == TIDE_OK); /* x is captured */
  const tide_tensor *bout[2] = {&i1, &acc1};
  CHECK(tide_graph_set_outputs(bg, 2, bout) == TIDE_OK);
  CHECK(tide_graph_end(bg) == TIDE_OK);

  tide_tensor zero, li = blank(), lacc = blank();
  scalar_i32(&zero, 0);
  const tide_tensor *init[2] = {&zero, &x};
  tide_tensor *lout[2] = {&li, &lacc};
  CHECK(tide_graph_while(g, 2, init, cg, bg, -1, lout) == TIDE_OK);

  tide_tensor s = reduce_sum(&lacc), hundred = blank(), pred = blank();
  tide_tensor_init(&hundred, TIDE_FLOAT32, 0, NULL);
  *(float *)hundred.data = 100;
  CHECK(tide_op_binary(TIDE_OP_GREATER, &pred, &s, &hundred) == TIDE_OK);
  tide_graph *tg = tide_graph_new("then"), *fg = tide_graph_new("else");
  CHECK(tide_graph_begin(tg) == TIDE_OK);
  const tide_tensor *tout[1] = {&lacc};
  CHECK(tide_graph_set_outputs(tg, 1, tout) == TIDE_OK);
  CHECK(tide_graph_end(tg) == TIDE_OK);
  CHECK(tide_graph_begin(fg) == TIDE_OK);
  tide_tensor both = concat2(&lacc, &lacc);
  const tide_tensor *fout[1] = {&both};
  CHECK(tide_graph_set_outputs(fg, 1, fout) == TIDE_OK);
  CHECK(tide_graph_end(fg) == TIDE_OK);
  tide_tensor y = blank();
  tide_tensor *yout[1] = {&y};
  CHECK(tide_graph_cond(g, &pred, tg, fg, 1, yout) == TIDE_OK);
  CHECK(y.ndim == 1 && y.dims[0] == -1);
  tide_tensor sy = reduce_sum(&y);
  const tide_tensor *gout[3] = {&li, &y, &sy};
  CHECK(tide_graph_set_outputs(g, 3, gout) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  tide_tensor_release(&one);
  tide_tensor_release(&two);
  tide_tensor_release(&zero);
  tide_tensor_release(&hundred);
  return g;
}

static void test_run(void) {
  tide_graph *g = build();
  const char *text = tide_graph_text(g);
  CHECK(strstr(text, "while_loop(") != NULL);
  CHECK(strstr(text, "body: graph body(") != NULL);
  CHECK(strstr(text, "cond(") != NULL);
  for (int round = 0; round < 2; round++) { /* the second round reuses the plans */
    /* n = 3, x = [1, 2]: acc = x*(2^3 + 2^2 + 2 + 1) = [15, 30]; sum 45 <= 100: y = concat */
    float xv[2] = {1, 2};
    tide_tensor n, x, i = blank(), y = blank(), sy = blank();
    scalar_i32(&n, 3);
    vec_f32(&x, 2, xv);
    const tide_tensor *in[2] = {&n, &x};
    tide_tensor *out[3] = {&i, &y, &sy};
    CHECK(tide_graph_run(g, 2, in, 3, out) == TIDE_OK);
    CHECK(*(int32_t *)i.data == 3);
    CHECK(y.ndim == 1 && y.dims[0] == 4);
    if (y.dims[0] == 4) {
      const float *p = y.data;
      CHECK(p[0] == 15 && p[1] == 30 && p[2] == 15 && p[3] == 30);
    }
    CHECK(*(float *)sy.data == 90);
    tide_tensor_release(&i);
    tide_tensor_release(&y);
    tide_tensor_release(&sy);
    tide_tensor_release(&n);
    tide_tensor_release(&x);
    /* n = 5, x = [1, 2, 3]: acc = x * 63, sum 378 > 100: y = acc */
    float xv3[3] = {1, 2, 3};
    scalar_i32(&n, 5);
    vec_f32(&x, 3, xv3);
    CHECK(tide_graph_run(g, 2, in, 3, out) == TIDE_OK);
    CHECK(*(int32_t *)i.data == 5);
    CHECK(y.ndim == 1 && y.dims[0] == 3);
    if (y.dims[0] == 3) CHECK(((float *)y.data)[2] == 189);
    CHECK(*(float *)sy.data == 378);
    tide_tensor_release(&i);
    tide_tensor_release(&y);
    tide_tensor_release(&sy);
    tide_tensor_release(&n);
    tide_tensor_release(&x);
  }
  tide_graph_free(g);
}

/* A loop whose condition never ends, bounded by maximum iterations. */
static void test_max_iters(void) {
  tide_graph *g = tide_graph_new("g");
  tide_graph_begin(g);
  tide_tensor x = blank();
  tide_graph_input(g, TIDE_INT32, 0, NULL, &x);
  tide_graph *cg = tide_graph_new("c"), *bg = tide_graph_new("b");
  tide_tensor ci = blank(), bi = blank(), yes = blank(), next = blank(), one;
  scalar_i32(&one, 1);
  tide_graph_begin(cg);
  tide_graph_input(cg, TIDE_INT32, 0, NULL, &ci);
  tide_tensor_init(&yes, TIDE_BOOL, 0, NULL);
  *(unsigned char *)yes.data = 1;
  const tide_tensor *co[1] = {&yes};
  tide_graph_set_outputs(cg, 1, co);
  tide_graph_end(cg);
  tide_graph_begin(bg);
  tide_graph_input(bg, TIDE_INT32, 0, NULL, &bi);
  tide_op_binary(TIDE_OP_ADD, &next, &bi, &one);
  const tide_tensor *bo[1] = {&next};
  tide_graph_set_outputs(bg, 1, bo);
  tide_graph_end(bg);
  tide_tensor r = blank();
  tide_tensor *ro[1] = {&r};
  const tide_tensor *init[1] = {&x};
  CHECK(tide_graph_while(g, 1, init, cg, bg, 7, ro) == TIDE_OK);
  const tide_tensor *go[1] = {&r};
  tide_graph_set_outputs(g, 1, go);
  tide_graph_end(g);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  tide_tensor start, res = blank();
  scalar_i32(&start, 10);
  const tide_tensor *in[1] = {&start};
  tide_tensor *out[1] = {&res};
  CHECK(tide_graph_run(g, 1, in, 1, out) == TIDE_OK);
  CHECK(*(int32_t *)res.data == 17);
  tide_tensor_release(&res);
  tide_tensor_release(&yes);
  tide_tensor_release(&one);
  tide_graph_free(g);
}

static void test_errors(void) {
  tide_graph *g = tide_graph_new("g");
  tide_graph_begin(g);
  tide_tensor x = blank();
  tide_graph_input(g, TIDE_FLOAT32, 0, NULL, &x);
  /* a branch not built on top of g */
  tide_graph *stray = tide_graph_new("stray"), *other = tide_graph_new("other");
  tide_tensor out = blank();
  tide_tensor *outs[1] = {&out};
  CHECK(tide_graph_cond(g, &x, stray, other, 0, outs) != TIDE_OK);
  CHECK(strstr(tide_last_error(), "was not built on top of graph 'g'") != NULL);
  tide_graph_free(stray);
  tide_graph_free(other);
  /* a float pred */
  tide_graph *t = tide_graph_new("t"), *f = tide_graph_new("f");
  tide_graph_begin(t);
  tide_graph_end(t);
  tide_graph_begin(f);
  tide_graph_end(f);
  CHECK(tide_graph_cond(g, &x, t, f, 0, outs) != TIDE_OK);
  CHECK(strstr(tide_last_error(), "cond: pred must be a one-element bool tensor, got float32 []") != NULL);
  tide_graph_free(t);
  tide_graph_free(f);
  /* a body that changes a loop variable's dtype */
  tide_graph *cg = tide_graph_new("c"), *bg = tide_graph_new("b");
  tide_tensor ci = blank(), bi = blank(), no = blank(), cast = blank();
  tide_graph_begin(cg);
  tide_graph_input(cg, TIDE_FLOAT32, 0, NULL, &ci);
  tide_tensor_init(&no, TIDE_BOOL, 0, NULL);
  *(unsigned char *)no.data = 0;
  const tide_tensor *co[1] = {&no};
  tide_graph_set_outputs(cg, 1, co);
  tide_graph_end(cg);
  tide_graph_begin(bg);
  tide_graph_input(bg, TIDE_FLOAT32, 0, NULL, &bi);
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.dtype = TIDE_INT32;
  const tide_tensor *cin[1] = {&bi};
  tide_tensor *cout[1] = {&cast};
  tide_op_run(TIDE_OP_CAST, &a, 1, cin, 1, cout);
  const tide_tensor *bo[1] = {&cast};
  tide_graph_set_outputs(bg, 1, bo);
  tide_graph_end(bg);
  const tide_tensor *init[1] = {&x};
  CHECK(tide_graph_while(g, 1, init, cg, bg, -1, outs) != TIDE_OK);
  CHECK(strstr(tide_last_error(), "loop variable 1 enters the body as float32 [] but the body returns int32 []") != NULL);
  tide_graph_free(cg);
  tide_graph_free(bg);
  tide_tensor_release(&no);
  tide_graph_end(g);
  tide_graph_free(g);
}

/* tide_graph_has_effects: a pure graph has none; a print inside a cond's
 * branch gives the branch and the graph holding the cond one. */
static void test_effects(void) {
  tide_graph *pure = build();
  CHECK(tide_graph_has_effects(pure) == 0);
  tide_graph_free(pure);

  tide_graph *g = tide_graph_new("g");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor x = blank(), zero = blank(), pred = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 0, NULL, &x) == TIDE_OK);
  tide_tensor_init(&zero, TIDE_FLOAT32, 0, NULL);
  *(float *)zero.data = 0;
  CHECK(tide_op_binary(TIDE_OP_GREATER, &pred, &x, &zero) == TIDE_OK);
  tide_graph *tg = tide_graph_new("then"), *fg = tide_graph_new("else");
  const tide_tensor *xs[1] = {&x};
  CHECK(tide_graph_begin(tg) == TIDE_OK);
  CHECK(tide_graph_print(tg, "x = {}", 1, xs) == TIDE_OK);
  CHECK(tide_graph_set_outputs(tg, 1, xs) == TIDE_OK);
  CHECK(tide_graph_end(tg) == TIDE_OK);
  CHECK(tide_graph_begin(fg) == TIDE_OK);
  CHECK(tide_graph_set_outputs(fg, 1, xs) == TIDE_OK);
  CHECK(tide_graph_end(fg) == TIDE_OK);
  CHECK(tide_graph_has_effects(tg) == 1);
  CHECK(tide_graph_has_effects(fg) == 0);
  tide_tensor y = blank();
  tide_tensor *ys[1] = {&y};
  CHECK(tide_graph_cond(g, &pred, tg, fg, 1, ys) == TIDE_OK);
  const tide_tensor *outs[1] = {&y};
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  CHECK(tide_graph_has_effects(g) == 1);
  CHECK(tide_graph_has_effects(NULL) == 0);
  tide_tensor_release(&zero);
  tide_graph_free(g);
}

int main(void) {
  test_run();
  test_effects();
  test_max_iters();
  test_errors();
  return CHECK_SUMMARY("control");
}
