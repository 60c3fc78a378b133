/* tests/c/test_split.c — from C with no Lua: a backward graph traced on top of
 * its forward and detached over the values it captured (graph/split.c),
 * aliases and pinned variable reads, and the stacks a WHILE node keeps for
 * its gradient (graph/while_stack.c): contents, bounds, unread stacks, errors. */
#include "check.h"

#include "tide/tide.h"

#include <math.h>

static tide_tensor blank(void) {
  tide_tensor t;
  memset(&t, 0, sizeof t);
  return t;
}

static void scalar_i32(tide_tensor *t, int32_t v) {
  *t = blank();
  tide_tensor_init(t, TIDE_INT32, 0, NULL);
  *(int32_t *)t->data = v;
}

static void scalar_f32(tide_tensor *t, float v) {
  *t = blank();
  tide_tensor_init(t, TIDE_FLOAT32, 0, NULL);
  *(float *)t->data = v;
}

static void vec_f32(tide_tensor *t, int n, const float *v) {
  *t = blank();
  int64_t d = n;
  tide_tensor_init(t, TIDE_FLOAT32, 1, &d);
  memcpy(t->data, v, sizeof(float) * (size_t)n);
}

/* Forward: y = sin(x) * w (x an input, w a constant). Backward, on top of it:
 * dx = dy * w * cos(x), with dy an input of its own. Detached, the backward
 * takes (dy, then what it captured: x and w); the forward gives them too. */
static void test_detach(void) {
  tide_graph *f = tide_graph_new("forward"), *b = tide_graph_new("backward");
  CHECK(tide_graph_begin(f) == TIDE_OK);
  tide_tensor x = blank(), s = blank(), y = blank(), w;
  int64_t two = 2;
  CHECK(tide_graph_input(f, TIDE_FLOAT32, 1, &two, &x) == TIDE_OK);
  scalar_f32(&w, 3);
  CHECK(tide_op_unary(TIDE_OP_SIN, &s, &x) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MUL, &y, &s, &w) == TIDE_OK);
  CHECK(tide_graph_num_captures(f) == 0);

  CHECK(tide_graph_begin(b) == TIDE_OK);
  tide_tensor dy = blank(), c = blank(), t1 = blank(), dx = blank();
  CHECK(tide_graph_input(b, TIDE_FLOAT32, 1, &two, &dy) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_COS, &c, &x) == TIDE_OK); /* x: captured from f */
  CHECK(tide_op_binary(TIDE_OP_MUL, &t1, &dy, &w) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_MUL, &dx, &t1, &c) == TIDE_OK);
  const tide_tensor *bout[1] = {&dx};
  CHECK(tide_graph_set_outputs(b, 1, bout) == TIDE_OK);
  tide_tensor none[1] = {blank()};
  tide_tensor *pnone[1] = {&none[0]};
  CHECK(tide_graph_detach(b, 1, pnone) != TIDE_OK); /* still being built */
  CHECK(tide_graph_end(b) == TIDE_OK);
  int n = tide_graph_num_captures(b);
  CHECK(n == 1); /* x (the constant w is b's own) */
  CHECK(tide_graph_detach(b, 0, NULL) != TIDE_OK); /* too few headers */
  tide_tensor saved = blank();
  tide_tensor *psaved[1] = {&saved};
  CHECK(tide_graph_detach(b, 1, psaved) == TIDE_OK);
  CHECK(tide_graph_num_captures(b) == 0);
  CHECK(tide_graph_num_inputs(b) == 2);
  CHECK((saved.flags & TIDE_TENSOR_SYMBOLIC) && saved.inline_data.sym.graph_id == tide_graph_id(f));
  CHECK(tide_graph_detach(b, 1, psaved) != TIDE_OK); /* detached already */
  const tide_tensor *fout[2] = {&y, &saved};
  CHECK(tide_graph_set_outputs(f, 2, fout) == TIDE_OK);
  CHECK(tide_graph_end(f) == TIDE_OK);
  CHECK(tide_graph_finalize(f, TIDE_PASS_ALL) == TIDE_OK);
  CHECK(tide_graph_finalize(b, TIDE_PASS_ALL) == TIDE_OK);

  float xv[2] = {0.5f, -1.0f};
  tide_tensor xin, yv = blank(), sv = blank();
  vec_f32(&xin, 2, xv);
  const tide_tensor *fin[1] = {&xin};
  tide_tensor *fo[2] = {&yv, &sv};
  CHECK(tide_graph_run(f, 1, fin, 2, fo) == TIDE_OK);
  CHECK_NEAR(((float *)yv.data)[1], 3 * sinf(-1.0f), 1e-6f);
  CHECK(((float *)sv.data)[0] == 0.5f);
  float dyv[2] = {1, 2};
  tide_tensor dyin, dxv = blank();
  vec_f32(&dyin, 2, dyv);
  const tide_tensor *bin[2] = {&dyin, &sv};
  tide_tensor *bo[1] = {&dxv};
  CHECK(tide_graph_run(b, 2, bin, 1, bo) == TIDE_OK);
  CHECK_NEAR(((float *)dxv.data)[0], 3 * cosf(0.5f), 1e-6f);
  CHECK_NEAR(((float *)dxv.data)[1], 6 * cosf(-1.0f), 1e-6f);
  tide_tensor *release[] = {&w, &xin, &yv, &sv, &dyin, &dxv};
  for (size_t i = 0; i < sizeof release / sizeof *release; i++) tide_tensor_release(release[i]);
  tide_graph_free(f);
  tide_graph_free(b);
}

/* A symbolic tensor of a finished graph used in another graph: an error,
 * unless an alias says which value stands for it there. */
static void test_alias(void) {
  tide_graph *f = tide_graph_new("f"), *g = tide_graph_new("g");
  tide_tensor fx = blank(), gx = blank(), r = blank();
  CHECK(tide_graph_begin(f) == TIDE_OK);
  CHECK(tide_graph_input(f, TIDE_FLOAT32, 0, NULL, &fx) == TIDE_OK);
  CHECK(tide_graph_end(f) == TIDE_OK);
  CHECK(tide_graph_begin(g) == TIDE_OK);
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 0, NULL, &gx) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_EXP, &r, &fx) != TIDE_OK);
  CHECK(strstr(tide_last_error(), "another trace") != NULL);
  tide_tensor i32 = blank();
  CHECK(tide_graph_input(g, TIDE_INT32, 0, NULL, &i32) == TIDE_OK);
  CHECK(tide_graph_alias(g, &fx, &i32) != TIDE_OK); /* dtypes differ */
  CHECK(tide_graph_alias(g, &gx, &gx) != TIDE_OK);  /* not of another graph */
  CHECK(tide_graph_alias(g, &fx, &gx) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_EXP, &r, &fx) == TIDE_OK);
  const tide_tensor *out[1] = {&r};
  CHECK(tide_graph_set_outputs(g, 1, out) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_alias(g, &fx, &gx) != TIDE_OK); /* no longer being built */
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  tide_tensor a, b, res = blank();
  scalar_f32(&a, 0);
  scalar_i32(&b, 0);
  const tide_tensor *in[2] = {&a, &b};
  tide_tensor *o[1] = {&res};
  CHECK(tide_graph_run(g, 2, in, 1, o) == TIDE_OK);
  CHECK(*(float *)res.data == 1);
  tide_tensor_release(&res);
  tide_graph_free(f);
  tide_graph_free(g);
}

/* A variable read pinned to a read made earlier: a graph built on top reads
 * that value, not the variable when it runs. */
static void test_pin(void) {
  tide_tensor v = blank();
  tide_tensor_init_heap(&v, TIDE_FLOAT32, 0, NULL);
  *(float *)v.data = 2;
  tide_graph *g = tide_graph_new("g"), *sub = tide_graph_new("sub");
  tide_tensor early = blank(), late = blank(), other = blank();
  CHECK(tide_graph_begin(g) == TIDE_OK);
  CHECK(tide_graph_variable(g, &v, &early) == TIDE_OK);
  CHECK(tide_graph_begin(sub) == TIDE_OK);
  CHECK(tide_graph_pin_variable(sub, &v, &early) == TIDE_OK);
  CHECK(tide_graph_variable(sub, &v, &late) == TIDE_OK);
  /* the pinned read is the earlier one, captured: no read node of sub's own */
  CHECK(late.inline_data.sym.graph_id == tide_graph_id(sub));
  CHECK(tide_graph_num_captures(sub) == 1);
  tide_tensor i32 = blank();
  CHECK(tide_graph_input(sub, TIDE_INT32, 0, NULL, &i32) == TIDE_OK);
  CHECK(tide_graph_pin_variable(sub, &v, &i32) != TIDE_OK); /* dtypes differ */
  CHECK(tide_graph_end(sub) == TIDE_OK);
  CHECK(tide_graph_variable(g, &v, &other) == TIDE_OK); /* g itself is not pinned */
  CHECK(tide_graph_num_captures(g) == 0);
  CHECK(tide_graph_end(g) == TIDE_OK);
  tide_graph_free(sub);
  tide_graph_free(g);
  tide_tensor_release(&v);
}

/* while i < n: i, x = i + 1, x * 2 (x: float32[2]), stacked. */
static tide_graph *doubling(int64_t max_iters, bool read_stacks) {
  tide_graph *g = tide_graph_new("g");
  tide_graph_begin(g);
  tide_tensor n = blank(), x = blank();
  int64_t two = 2;
  tide_graph_input(g, TIDE_INT32, 0, NULL, &n);
  tide_graph_input(g, TIDE_FLOAT32, 1, &two, &x);
  tide_graph *cg = tide_graph_new("c"), *bg = tide_graph_new("b");
  tide_tensor ci = blank(), cx = blank(), bi = blank(), bx = blank(), flag = blank(), i1 = blank(), x2 = blank();
  tide_tensor one, twof;
  scalar_i32(&one, 1);
  scalar_f32(&twof, 2);
  tide_graph_begin(cg);
  tide_graph_input(cg, TIDE_INT32, 0, NULL, &ci);
  tide_graph_input(cg, TIDE_FLOAT32, 1, &two, &cx);
  tide_op_binary(TIDE_OP_LESS, &flag, &ci, &n);
  const tide_tensor *co[1] = {&flag};
  tide_graph_set_outputs(cg, 1, co);
  tide_graph_end(cg);
  tide_graph_begin(bg);
  tide_graph_input(bg, TIDE_INT32, 0, NULL, &bi);
  tide_graph_input(bg, TIDE_FLOAT32, 1, &two, &bx);
  tide_op_binary(TIDE_OP_ADD, &i1, &bi, &one);
  tide_op_binary(TIDE_OP_MUL, &x2, &bx, &twof);
  const tide_tensor *bo[2] = {&i1, &x2};
  tide_graph_set_outputs(bg, 2, bo);
  tide_graph_end(bg);
  tide_tensor zero, ri = blank(), rx = blank();
  scalar_i32(&zero, 0);
  const tide_tensor *init[2] = {&zero, &x};
  tide_tensor *ro[2] = {&ri, &rx};
  CHECK(tide_graph_while(g, 2, init, cg, bg, max_iters, ro) == TIDE_OK);
  tide_tensor count = blank(), s0 = blank(), s1 = blank();
  tide_tensor *stacks[2] = {&s0, &s1};
  CHECK(tide_graph_while_stack(g, &rx, &count, 1, stacks) != TIDE_OK); /* one header per loop variable */
  CHECK(tide_graph_while_stack(g, &x, &count, 2, stacks) != TIDE_OK);  /* not a loop result */
  CHECK(tide_graph_while_stack(g, &rx, &count, 2, stacks) == TIDE_OK);
  CHECK(tide_graph_while_stack(g, &rx, &count, 2, stacks) != TIDE_OK); /* stacked already */
  CHECK(count.dt == TIDE_INT32 && count.ndim == 0);
  CHECK(s1.ndim == 2 && s1.dims[0] == -1 && s1.dims[1] == 2 && s1.dt == TIDE_FLOAT32);
  const tide_tensor *go[4] = {&rx, &count, &s0, &s1};
  tide_graph_set_outputs(g, read_stacks ? 4 : 2, go);
  tide_graph_end(g);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  tide_tensor_release(&one);
  tide_tensor_release(&twof);
  tide_tensor_release(&zero);
  return g;
}

static void test_stacks(void) {
  tide_graph *g = doubling(-1, true);
  CHECK(strstr(tide_graph_text(g), "keeps: the iteration count and each iteration's loop variables\n") != NULL);
  for (int round = 0; round < 2; round++) {
    int32_t iters = round ? 0 : 40; /* 40 rows: the buffers grow past their first 16 */
    float xv[2] = {1, -0.5f};
    tide_tensor n, x, rx = blank(), count = blank(), s0 = blank(), s1 = blank();
    scalar_i32(&n, iters);
    vec_f32(&x, 2, xv);
    const tide_tensor *in[2] = {&n, &x};
    tide_tensor *out[4] = {&rx, &count, &s0, &s1};
    CHECK(tide_graph_run(g, 2, in, 4, out) == TIDE_OK);
    CHECK(*(int32_t *)count.data == iters);
    CHECK(s0.ndim == 1 && s0.dims[0] == iters);
    CHECK(s1.ndim == 2 && s1.dims[0] == iters && s1.dims[1] == 2);
    bool rows_ok = true;
    float want = 1;
    for (int j = 0; j < iters; j++, want *= 2) /* row j: the values iteration j started with */
      rows_ok = rows_ok && ((int32_t *)s0.data)[j] == j && ((float *)s1.data)[2 * j] == want &&
                ((float *)s1.data)[2 * j + 1] == -want / 2;
    CHECK(rows_ok);
    CHECK(((float *)rx.data)[0] == want);
    tide_tensor *release[] = {&n, &x, &rx, &count, &s0, &s1};
    for (size_t i = 0; i < sizeof release / sizeof *release; i++) tide_tensor_release(release[i]);
  }
  tide_graph_free(g);

  /* maximum_iterations ends it: as many rows as iterations ran */
  g = doubling(3, true);
  tide_tensor n, x, rx = blank(), count = blank(), s0 = blank(), s1 = blank();
  float xv[2] = {1, 1};
  scalar_i32(&n, 100);
  vec_f32(&x, 2, xv);
  const tide_tensor *in[2] = {&n, &x};
  tide_tensor *out[4] = {&rx, &count, &s0, &s1};
  CHECK(tide_graph_run(g, 2, in, 4, out) == TIDE_OK);
  CHECK(*(int32_t *)count.data == 3 && s1.dims[0] == 3 && ((float *)s1.data)[4] == 4);
  tide_tensor *release[] = {&rx, &count, &s0, &s1};
  for (size_t i = 0; i < sizeof release / sizeof *release; i++) tide_tensor_release(release[i]);
  tide_graph_free(g);

  /* stacks nothing reads are not filled */
  g = doubling(-1, false);
  CHECK(strstr(tide_graph_text(g), "(unread: not kept)") != NULL);
  tide_tensor *out2[2] = {&rx, &count};
  CHECK(tide_graph_run(g, 2, in, 2, out2) == TIDE_OK);
  CHECK(*(int32_t *)count.data == 100 && ((float *)rx.data)[0] > 1e30f);
  tide_tensor_release(&rx);
  tide_tensor_release(&count);
  tide_tensor_release(&n);
  tide_tensor_release(&x);
  tide_graph_free(g);
}

int main(void) {
  test_detach();
  test_alias();
  test_pin();
  test_stacks();
  return CHECK_SUMMARY("split");
}
