/* tests/c/test_graph_passes.c — the graph passes through the public C API:
 * each pass on hand-built graphs (node counts before and after, results equal
 * to the unoptimized graph's), fused nodes, the memory plan and the executor. */
#include "graph_util.h"

/* ---- constant folding ------------------------------------------------------------------ */

static tide_tensor *K1, *K2, *K3; /* constants the bodies capture */

static int body_fold(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, k1 = konst(K1), k2 = konst(K2);
  bin(TIDE_OP_MUL, &a, &k1, &k2); /* constants only: folds */
  un(TIDE_OP_NEG, &b, &a);      /* folds in turn */
  bin(TIDE_OP_ADD, &c, &in[0], &b);
  out[0] = c;
  return 1;
}

static void test_fold(void) {
  int64_t d3 = 3;
  K1 = filled(TIDE_FLOAT32, 1, &d3, 1, 1), K2 = scalar(TIDE_FLOAT32, 2);
  tide_tensor *x = filled(TIDE_FLOAT32, 1, &d3, 0.5, 0.25);
  tide_graph *none = build(body_fold, 1, &x, false, 0);
  tide_graph *g = check_equal(body_fold, 1, &x, TIDE_PASS_FOLD | TIDE_PASS_DCE, 0);
  CHECK(tide_graph_num_nodes(none) == 6); /* input, 2 constants, mul, neg, add */
  CHECK(tide_graph_num_nodes(g) == 3);    /* input, the folded constant, add */
  const char *text = tide_graph_text(g);
  CHECK(!contains(text, "mul(") && !contains(text, "neg(") && contains(text, "add("));
  tide_tensor r;
  CHECK(run(g, 1, &x, &r) == TIDE_OK);
  CHECK(at(&r, 0) == 0.5 - 2 * 1 && at(&r, 2) == -1.0 - 2 * 1); /* x - 2 * k1 */
  tide_tensor_release(&r);
  tide_graph_free(none);
  tide_graph_free(g);
  free_all(3, (tide_tensor *[]){K1, K2, x});
}

/* A broadcast too large to fold (4 MiB) stays an op; a view of a constant folds. */
static int body_fold_big(tide_tensor *in, tide_tensor *out) {
  tide_tensor big, plus, sum, k1 = konst(K1), k2 = konst(K2);
  tide_attrs a = {0};
  a.nints = 2, a.ints[0] = 1024, a.ints[1] = 1024;
  const tide_tensor *k[1] = {&k1};
  op_attrs(TIDE_OP_BROADCAST_TO, &a, 1, k, &big); /* a view: folds, costs nothing */
  bin(TIDE_OP_ADD, &plus, &big, &k2);             /* 4 MiB of new data: stays */
  tide_attrs r = {0};
  const tide_tensor *p[1] = {&plus};
  op_attrs(TIDE_OP_SUM, &r, 1, p, &sum);
  bin(TIDE_OP_ADD, &out[0], &sum, &in[0]);
  return 1;
}

static void test_fold_cap(void) {
  K1 = scalar(TIDE_FLOAT32, 1), K2 = scalar(TIDE_FLOAT32, 0.5);
  tide_tensor *x = scalar(TIDE_FLOAT32, 3);
  tide_graph *g = check_equal(body_fold_big, 1, &x, TIDE_PASS_FOLD | TIDE_PASS_DCE, 0);
  const char *text = tide_graph_text(g);
  CHECK(!contains(text, "broadcast_to(")); /* the view folded */
  CHECK(contains(text, "add(%"));          /* the big add did not */
  CHECK(tide_graph_num_nodes(g) == 6);     /* input, view constant, 0.5, add, sum, add */
  tide_tensor r;
  CHECK(run(g, 1, &x, &r) == TIDE_OK);
  CHECK(at(&r, 0) == 1.5 * 1024 * 1024 + 3);
  tide_tensor_release(&r);
  tide_graph_free(g);
  free_all(3, (tide_tensor *[]){K1, K2, x});
}

/* An op that fails on its constants stays, and fails at run time naming itself. */
static int body_fold_error(tide_tensor *in, tide_tensor *out) {
  tide_tensor q, k1 = konst(K1), k2 = konst(K2);
  bin(TIDE_OP_FLOORDIV, &q, &k1, &k2);
  bin(TIDE_OP_ADD, &out[0], &q, &in[0]);
  return 1;
}

static void test_fold_error(void) {
  K1 = scalar(TIDE_INT32, 7), K2 = scalar(TIDE_INT32, 0);
  tide_tensor *x = scalar(TIDE_INT32, 1);
  tide_graph *g = build(body_fold_error, 1, &x, false, TIDE_PASS_ALL);
  CHECK(contains(tide_graph_text(g), "floordiv"));
  tide_tensor r;
  CHECK(run(g, 1, &x, &r) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "floordiv: integer division by zero"));
  tide_graph_free(g);
  free_all(3, (tide_tensor *[]){K1, K2, x});
}

/* Random ops are never folded or merged: two draws differ, and each run draws anew. */
static int body_random(tide_tensor *in, tide_tensor *out) {
  tide_attrs a = {0};
  a.nints = 1, a.ints[0] = 4, a.dtype = TIDE_FLOAT32, a.scalars[1] = 1;
  tide_tensor r1, r2;
  op_attrs(TIDE_OP_RANDOM_UNIFORM, &a, 0, NULL, &r1);
  op_attrs(TIDE_OP_RANDOM_UNIFORM, &a, 0, NULL, &r2);
  bin(TIDE_OP_ADD, &out[0], &r1, &in[0]);
  bin(TIDE_OP_ADD, &out[1], &r2, &in[0]);
  return 2;
}

static void test_random_kept(void) {
  tide_tensor *x = scalar(TIDE_FLOAT32, 0);
  tide_graph *g = build(body_random, 1, &x, false, TIDE_PASS_ALL);
  tide_tensor a[2], b[2];
  CHECK(run(g, 1, &x, a) == TIDE_OK);
  CHECK(run(g, 1, &x, b) == TIDE_OK);
  quiet = true;
  CHECK(!same(&a[0], &a[1], 0)); /* two ops, two draws */
  CHECK(!same(&a[0], &b[0], 0)); /* a new draw at each run */
  quiet = false;
  CHECK(contains(tide_graph_text(g), "random_uniform"));
  for (int k = 0; k < 2; k++) tide_tensor_release(&a[k]), tide_tensor_release(&b[k]);
  tide_graph_free(g);
  tide_tensor_free(x);
}

/* ---- CSE ----------------------------------------------------------------------------- */

static int body_cse(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, d, s0, s1, e;
  bin(TIDE_OP_MUL, &a, &in[0], K1); /* K1 and K2 hold the same values: one constant */
  bin(TIDE_OP_MUL, &b, &in[0], K2); /* then the same op on the same inputs */
  un(TIDE_OP_EXP, &c, &a);
  un(TIDE_OP_EXP, &d, &b);
  tide_attrs ax0 = {0}, ax1 = {0};
  ax0.nints = 1, ax0.ints[0] = 0, ax1.nints = 1, ax1.ints[0] = 1;
  const tide_tensor *cc[1] = {&c}, *dd[1] = {&d};
  op_attrs(TIDE_OP_SUM, &ax0, 1, cc, &s0); /* different attributes: two sums */
  op_attrs(TIDE_OP_SUM, &ax1, 1, dd, &s1);
  bin(TIDE_OP_ADD, &e, &c, &d);
  out[0] = e, out[1] = s0, out[2] = s1;
  return 3;
}

static void test_cse(void) {
  /* Not inline (48 bytes): building keeps two tensors of the same values
   * apart (it merges only the same tensor, or small inline ones by value). */
  int64_t dims[2] = {3, 4};
  K1 = filled(TIDE_FLOAT32, 2, dims, 0.5, 0), K2 = filled(TIDE_FLOAT32, 2, dims, 0.5, 0);
  tide_tensor *x = filled(TIDE_FLOAT32, 2, dims, 0.1, 0.05);
  tide_graph *none = build(body_cse, 1, &x, false, 0);
  tide_graph *g = check_equal(body_cse, 1, &x, TIDE_PASS_CSE | TIDE_PASS_DCE, 0);
  CHECK(tide_graph_num_nodes(none) == 10);
  CHECK(tide_graph_num_nodes(g) == 7); /* input, 0.5, mul, exp, sum, sum, add */
  const char *text = tide_graph_text(g);
  CHECK(contains(text, "%5 = exp(%2)") && contains(text, "add(%5, %5)")); /* one exp, read twice */
  CHECK(contains(text, "sum(%5) : float32[4]") && contains(text, "sum(%5) : float32[3]"));
  tide_graph_free(none);
  tide_graph_free(g);
  free_all(3, (tide_tensor *[]){K1, K2, x});
}

/* ---- DCE ----------------------------------------------------------------------------- */

static int body_dce(tide_tensor *in, tide_tensor *out) {
  tide_tensor unused, y;
  un(TIDE_OP_EXP, &unused, &in[0]);
  un(TIDE_OP_NEG, &y, &in[0]);
  out[0] = y;
  return 1;
}

static void test_dce(void) {
  tide_tensor *x = scalar(TIDE_FLOAT32, 2);
  tide_graph *none = build(body_dce, 1, &x, false, 0), *g = check_equal(body_dce, 1, &x, TIDE_PASS_DCE, 0);
  CHECK(tide_graph_num_nodes(none) == 3);
  CHECK(tide_graph_num_nodes(g) == 2);
  CHECK(!contains(tide_graph_text(g), "exp("));
  tide_graph_free(none);
  tide_graph_free(g);
  tide_tensor_free(x);
}

/* ---- fusion -------------------------------------------------------------------------- */

/* Fused float32 exp, sigmoid and tanh are vector approximations within a few
 * ulp of the eager ops' libm; every other op gives the eager bits. */
#define TRANSCENDENTAL_TOL 1e-6

/* ((x * w + b) -> tanh) * x - sigmoid(x): rows of w and b broadcast, one scalar. */
static int body_fuse(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, d, e, f;
  bin(TIDE_OP_MUL, &a, &in[0], &in[1]);
  bin(TIDE_OP_ADD, &b, &a, &in[2]);
  un(TIDE_OP_TANH, &c, &b);
  bin(TIDE_OP_MUL, &d, &c, &in[0]);
  un(TIDE_OP_SIGMOID, &e, &in[0]);
  bin(TIDE_OP_SUB, &f, &d, &e);
  out[0] = f;
  return 1;
}

static void test_fuse_basic(void) {
  int64_t dx[2] = {700, 9}, dw[1] = {9}, db[2] = {700, 1};
  tide_tensor *ins[3] = {filled(TIDE_FLOAT32, 2, dx, -1, 0.02), filled(TIDE_FLOAT32, 1, dw, 0.5, 0.1),
                         filled(TIDE_FLOAT32, 2, db, 0.1, 0.01)};
  tide_graph *none = build(body_fuse, 3, ins, false, 0);
  tide_graph *g = check_equal(body_fuse, 3, ins, TIDE_PASS_ALL, TRANSCENDENTAL_TOL);
  CHECK(tide_graph_num_nodes(none) == 9);
  CHECK(tide_graph_num_nodes(g) == 4); /* three inputs and one fused node */
  CHECK(contains(tide_graph_text(g), "fused[mul, add, tanh, mul, sigmoid, sub](%0, %1, %2)"));
  CHECK(tide_graph_planned_bytes(g) == 0); /* the one result is an output */
  /* A transposed (strided) input, and a second run on the same plan. */
  int64_t dt[2] = {9, 700};
  tide_tensor *xt = filled(TIDE_FLOAT32, 2, dt, -1, 0.03), tr = blank();
  tide_attrs perm = {0};
  const tide_tensor *xtin[1] = {xt};
  op_attrs(TIDE_OP_TRANSPOSE, &perm, 1, xtin, &tr);
  tide_tensor *strided[3] = {&tr, ins[1], ins[2]};
  tide_tensor r0, r1;
  CHECK(run(none, 3, strided, &r0) == TIDE_OK);
  CHECK(run(g, 3, strided, &r1) == TIDE_OK);
  CHECK(same(&r0, &r1, TRANSCENDENTAL_TOL));
  tide_tensor_release(&r1);
  CHECK(run(g, 3, strided, &r1) == TIDE_OK);
  CHECK(same(&r0, &r1, TRANSCENDENTAL_TOL));
  tide_tensor_release(&r0), tide_tensor_release(&r1), tide_tensor_release(&tr);
  tide_graph_free(none);
  tide_graph_free(g);
  free_all(3, ins);
  tide_tensor_free(xt);
}

/* A big chain (many blocks, several threads), rank 3 with a middle-dim broadcast. */
static int body_chain(tide_tensor *in, tide_tensor *out) {
  tide_tensor y[12];
  bin(TIDE_OP_MUL, &y[0], &in[0], K1);
  bin(TIDE_OP_ADD, &y[1], &y[0], &in[1]);
  un(TIDE_OP_RELU, &y[2], &y[1]);
  bin(TIDE_OP_SUB, &y[3], &y[2], K2);
  bin(TIDE_OP_MUL, &y[4], &y[3], &in[0]);
  un(TIDE_OP_ABS, &y[5], &y[4]);
  bin(TIDE_OP_MINIMUM, &y[6], &y[5], K1);
  bin(TIDE_OP_ADD, &y[7], &y[6], &in[0]);
  bin(TIDE_OP_MAXIMUM, &y[8], &y[7], K2);
  un(TIDE_OP_SQUARE, &out[0], &y[8]);
  return 1;
}

static void test_fuse_chain(void) {
  K1 = scalar(TIDE_FLOAT32, 1.5), K2 = scalar(TIDE_FLOAT32, 0.25);
  int64_t dx[3] = {37, 11, 513}, db[3] = {37, 1, 513};
  tide_tensor *ins[2] = {filled(TIDE_FLOAT32, 3, dx, -2, 0.04), filled(TIDE_FLOAT32, 3, db, 0.3, 0.01)};
  tide_graph *g = check_equal(body_chain, 2, ins, TIDE_PASS_ALL, 0);
  CHECK(tide_graph_num_nodes(g) == 3); /* 2 inputs and one fused node holding the 2 constants */
  CHECK(contains(tide_graph_text(g), "fused[mul, add, relu, sub, mul, abs, minimum, add, maximum, square]"));
  /* Large: several blocks per thread and the streaming-store path (16 MiB and up). */
  int64_t big[1] = {5 * 1000 * 1000 + 7}, one[1] = {1};
  tide_tensor *bins[2] = {filled(TIDE_FLOAT32, 1, big, -3, 0.07), filled(TIDE_FLOAT32, 1, one, 0.1, 0)};
  tide_graph *g2 = check_equal(body_chain, 2, bins, TIDE_PASS_ALL, 0);
  tide_graph_free(g);
  tide_graph_free(g2);
  free_all(2, ins);
  free_all(2, bins);
  free_all(2, (tide_tensor *[]){K1, K2});
}

/* Halves compute in float32 but round where an unfused op stores: results match exactly. */
static void test_fuse_halves(void) {
  for (int dt = TIDE_FLOAT16; dt <= TIDE_BFLOAT16; dt++) {
    K1 = scalar(dt, 1.5), K2 = scalar(dt, 0.25);
    int64_t dx[2] = {300, 7}, db[1] = {7};
    tide_tensor *ins[2] = {filled(dt, 2, dx, -2, 0.04), filled(dt, 1, db, 0.3, 0.01)};
    tide_graph *g = check_equal(body_chain, 2, ins, TIDE_PASS_ALL, 0);
    CHECK(contains(tide_graph_text(g), "fused["));
    tide_graph_free(g);
    free_all(2, ins);
    free_all(2, (tide_tensor *[]){K1, K2});
  }
}

/* Integer chains: division by zero and negative powers still fail, naming the op. */
static int body_int(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c;
  bin(TIDE_OP_MUL, &a, &in[0], K1);
  bin(TIDE_OP_FLOORDIV, &b, &a, &in[1]);
  bin(TIDE_OP_POW, &c, &b, &in[2]);
  bin(TIDE_OP_ADD, &out[0], &c, K1);
  return 1;
}

static void test_fuse_int_errors(void) {
  K1 = scalar(TIDE_INT32, 3);
  int64_t d4 = 4;
  tide_tensor *x = tide_tensor_new(TIDE_INT32, 1, &d4), *y = tide_tensor_new(TIDE_INT32, 1, &d4),
              *p = tide_tensor_new(TIDE_INT32, 1, &d4);
  int32_t xv[4] = {7, -8, 9, 10}, yv[4] = {2, 3, -4, 1}, pv[4] = {2, 1, 0, 3};
  memcpy(x->data, xv, 16), memcpy(y->data, yv, 16), memcpy(p->data, pv, 16);
  tide_tensor *ins[3] = {x, y, p};
  tide_graph *g = check_equal(body_int, 3, ins, TIDE_PASS_ALL, 0);
  CHECK(contains(tide_graph_text(g), "fused[mul, floordiv, pow, add]"));
  tide_tensor r;
  CHECK(run(g, 3, ins, &r) == TIDE_OK);
  CHECK(at(&r, 0) == 10 * 10 + 3 && at(&r, 1) == -8 + 3 && at(&r, 2) == 1 + 3 && at(&r, 3) == 27000 + 3);
  tide_tensor_release(&r);
  ((int32_t *)y->data)[2] = 0;
  CHECK(run(g, 3, ins, &r) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "floordiv: integer division by zero"));
  ((int32_t *)y->data)[2] = 1;
  ((int32_t *)p->data)[1] = -1;
  CHECK(run(g, 3, ins, &r) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "pow: integers to negative integer powers are not allowed"));
  tide_graph_free(g);
  free_all(4, (tide_tensor *[]){x, y, p, K1});
}

/* where, clip and cast fuse; comparisons give bool registers. */
static int body_select(tide_tensor *in, tide_tensor *out) {
  tide_tensor m, c, w, s, k, h;
  bin(TIDE_OP_GREATER, &m, &in[0], K1);
  const tide_tensor *clip_in[3] = {&in[0], K2, K1};
  tide_attrs none = {0};
  op_attrs(TIDE_OP_CLIP, &none, 3, clip_in, &c);
  un(TIDE_OP_SQUARE, &s, &in[0]);
  const tide_tensor *where_in[3] = {&m, &s, &c};
  op_attrs(TIDE_OP_WHERE, &none, 3, where_in, &w);
  tide_attrs to_int = {0};
  to_int.dtype = TIDE_INT32;
  const tide_tensor *wi[1] = {&w};
  op_attrs(TIDE_OP_CAST, &to_int, 1, wi, &k);
  bin(TIDE_OP_MUL, &h, &k, K3);
  out[0] = h;
  return 1;
}

static void test_fuse_select(void) {
  K1 = scalar(TIDE_FLOAT64, 1.5), K2 = scalar(TIDE_FLOAT64, -0.5), K3 = scalar(TIDE_INT32, 3);
  int64_t d[1] = {100};
  tide_tensor *x = filled(TIDE_FLOAT64, 1, d, -3, 0.1);
  tide_graph *g = check_equal(body_select, 1, &x, TIDE_PASS_ALL, 0);
  CHECK(contains(tide_graph_text(g), "fused[greater, clip_by_value, square, where, cast, mul]"));
  CHECK(tide_graph_num_nodes(g) == 2); /* the input and one fused node holding the 3 constants */
  tide_graph_free(g);
  free_all(4, (tide_tensor *[]){x, K1, K2, K3});
}

/* A value read outside its group (an output, or read by a later
 * non-elementwise op) becomes a second output of the fused node; one read
 * by an op recorded before the group's last op ends the group there. */
static int body_shared(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, d, s;
  bin(TIDE_OP_MUL, &a, &in[0], &in[0]);
  un(TIDE_OP_EXP, &b, &a);
  tide_attrs all = {0};
  const tide_tensor *bb[1] = {&b};
  op_attrs(TIDE_OP_SUM, &all, 1, bb, &s);
  bin(TIDE_OP_SUB, &c, &b, &s);
  un(TIDE_OP_NEG, &d, &c);
  out[0] = d, out[1] = a;
  return 2;
}

static void test_fuse_boundaries(void) {
  int64_t d[2] = {5, 6};
  tide_tensor *x = filled(TIDE_FLOAT32, 2, d, 0.1, 0.01);
  tide_graph *g = check_equal(body_shared, 1, &x, TIDE_PASS_ALL, TRANSCENDENTAL_TOL);
  const char *text = tide_graph_text(g);
  /* mul is an output and exp is read by sum (after exp): one node gives both */
  CHECK(contains(text, "%2 = fused[mul, exp](%0) : float32[5, 6], float32[5, 6]"));
  CHECK(contains(text, "s0 = mul(%0, %0) : float32 -> %2:1"));
  CHECK(contains(text, "%3 = sum(%2:0)"));
  /* exp is read by sum, recorded before sub: sub and neg make a group of their own */
  CHECK(contains(text, "fused[sub, neg](%2:0, %3)"));
  CHECK(contains(text, "return %5, %2:1"));
  CHECK(tide_graph_num_nodes(g) == 4);
  tide_graph_free(g);
  tide_tensor_free(x);
}

/* Unknown dims: one graph, plans per shape. */
static void test_fuse_unknown_dims(void) {
  int64_t d1[2] = {3, 9}, d2[2] = {1000, 9}, dw[1] = {9}, db[2] = {1, 1};
  tide_tensor *w = filled(TIDE_FLOAT32, 1, dw, 0.5, 0.1), *b = filled(TIDE_FLOAT32, 2, db, 0.2, 0);
  tide_tensor *a1[3] = {filled(TIDE_FLOAT32, 2, d1, -1, 0.1), w, b}, *a2[3] = {filled(TIDE_FLOAT32, 2, d2, -1, 0.01), w, b};
  tide_graph *plain = build(body_fuse, 3, a1, true, 0), *g = build(body_fuse, 3, a1, true, TIDE_PASS_ALL);
  CHECK(contains(tide_graph_text(g), "fused["));
  CHECK(contains(tide_graph_text(g), "float32[None, 9]"));
  for (int round = 0; round < 2; round++)
    for (int s = 0; s < 2; s++) {
      tide_tensor r0, r1;
      tide_tensor *const *ins = s ? a2 : a1;
      CHECK(run(plain, 3, ins, &r0) == TIDE_OK);
      CHECK(run(g, 3, ins, &r1) == TIDE_OK);
      CHECK(same(&r0, &r1, TRANSCENDENTAL_TOL));
      CHECK(r1.dims[0] == ins[0]->dims[0]);
      tide_tensor_release(&r0), tide_tensor_release(&r1);
    }
  tide_graph_free(plain);
  tide_graph_free(g);
  free_all(4, (tide_tensor *[]){a1[0], a2[0], w, b});
}

/* ---- memory planning ----------------------------------------------------------------------- */

/* A chain of matmuls (not fused): intermediates of 64 KiB each. */
static int body_mm(tide_tensor *in, tide_tensor *out) {
  tide_tensor y[8];
  const tide_tensor *prev = &in[0];
  for (int i = 0; i < 6; i++) {
    bin(TIDE_OP_MATMUL, &y[i], prev, &in[1]);
    prev = &y[i];
  }
  un(TIDE_OP_TANH, &out[0], prev);
  return 1;
}

static void test_plan_reuse(void) {
  int64_t d[2] = {128, 128};
  tide_tensor *ins[2] = {filled(TIDE_FLOAT32, 2, d, 0.01, 0.001), filled(TIDE_FLOAT32, 2, d, -0.02, 0.0005)};
  tide_graph *g = check_equal(body_mm, 2, ins, TIDE_PASS_ALL, 0);
  int64_t one = 128 * 128 * 4, planned = tide_graph_planned_bytes(g);
  CHECK(planned > 0);
  CHECK(planned == 2 * one); /* six intermediates, two alive at a time */
  CHECK(planned < 6 * one);
  tide_graph *noplan = build(body_mm, 2, ins, false, TIDE_PASS_ALL & ~TIDE_PASS_PLAN);
  CHECK(tide_graph_planned_bytes(noplan) == 0);
  /* Runs reuse the arena; results stay what they were (outputs live outside it). */
  tide_tensor r0, r1;
  CHECK(run(g, 2, ins, &r0) == TIDE_OK);
  CHECK(run(noplan, 2, ins, &r1) == TIDE_OK);
  CHECK(same(&r0, &r1, 0));
  tide_tensor keep = blank();
  tide_tensor_share(&keep, &r0);
  tide_tensor_release(&r0);
  CHECK(run(g, 2, ins, &r0) == TIDE_OK);
  CHECK(same(&keep, &r1, 0));
  CHECK(tide_tensor_storage_refs(&r0) == 1); /* the result is the caller's alone */
  tide_tensor_release(&r0), tide_tensor_release(&r1), tide_tensor_release(&keep);
  tide_graph_free(g);
  tide_graph_free(noplan);
  free_all(2, ins);
}

/* A view of an intermediate keeps its buffer alive past the intermediate's
 * last direct use; an output that views an intermediate keeps it out of the arena. */
static int body_views(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, v, b, c, d, e, f, t;
  bin(TIDE_OP_MATMUL, &a, &in[0], &in[1]); /* 64 KiB */
  tide_attrs sh = {0};
  sh.nints = 1, sh.ints[0] = -1;
  const tide_tensor *aa[1] = {&a};
  op_attrs(TIDE_OP_RESHAPE, &sh, 1, aa, &v); /* a view of a */
  bin(TIDE_OP_MATMUL, &b, &in[0], &in[0]);   /* allocated while v lives */
  bin(TIDE_OP_MATMUL, &c, &b, &in[1]);
  tide_attrs sh2 = sh;
  const tide_tensor *cc[1] = {&c};
  op_attrs(TIDE_OP_RESHAPE, &sh2, 1, cc, &d);
  bin(TIDE_OP_ADD, &e, &v, &d);             /* reads the view late */
  bin(TIDE_OP_MATMUL, &f, &b, &b);
  tide_attrs tp = {0};
  const tide_tensor *ff[1] = {&f};
  op_attrs(TIDE_OP_TRANSPOSE, &tp, 1, ff, &t); /* an output viewing f */
  out[0] = e, out[1] = t;
  return 2;
}

static void test_plan_views(void) {
  int64_t d[2] = {128, 128};
  tide_tensor *ins[2] = {filled(TIDE_FLOAT32, 2, d, 0.01, 0.001), filled(TIDE_FLOAT32, 2, d, -0.02, 0.0005)};
  tide_graph *g = check_equal(body_views, 2, ins, TIDE_PASS_ALL, 0);
  int64_t one = 128 * 128 * 4, planned = tide_graph_planned_bytes(g);
  CHECK(planned == 3 * one); /* a (kept by v), b and c; f leaves through its view */
  tide_tensor r[2], again[2];
  CHECK(run(g, 2, ins, r) == TIDE_OK);
  CHECK(run(g, 2, ins, again) == TIDE_OK); /* a second run must not write into the first's results */
  CHECK(same(&r[0], &again[0], 0) && same(&r[1], &again[1], 0));
  CHECK(r[1].storage != again[1].storage);
  for (int k = 0; k < 2; k++) tide_tensor_release(&r[k]), tide_tensor_release(&again[k]);
  tide_graph_free(g);
  free_all(2, ins);
}

/* ---- views resolved when planning ------------------------------------------------------ */

/* slice attrs: rows [r0, r1) of a rank-2 tensor, all columns */
static tide_attrs rows(int64_t r0, int64_t r1) {
  tide_attrs a = {0};
  a.nints = 6;
  a.ints[0] = r0, a.ints[1] = r1, a.ints[2] = 1;
  a.ints[3] = 0, a.ints[4] = 1 << 20, a.ints[5] = 1;
  return a;
}

/* Views of an argument (one of them a result) and of an arena value. */
static int body_view_steps(tide_tensor *in, tide_tensor *out) {
  tide_tensor a, b, c, d, e, f, g;
  tide_attrs r = rows(1, 5), flat = {0}, step = {0}, r2 = rows(2, 4);
  flat.nints = 1, flat.ints[0] = -1;
  step.nints = 3, step.ints[0] = 2, step.ints[1] = 14, step.ints[2] = 3;
  op_attrs(TIDE_OP_SLICE, &r, 1, (const tide_tensor *[]){&in[0]}, &a);  /* rows 1..4 of the argument */
  op_attrs(TIDE_OP_RESHAPE, &flat, 1, (const tide_tensor *[]){&a}, &b); /* a view of a view */
  op_attrs(TIDE_OP_SLICE, &step, 1, (const tide_tensor *[]){&b}, &c);   /* strided */
  bin(TIDE_OP_MUL, &d, &c, &c);
  bin(TIDE_OP_MATMUL, &e, &in[0], &in[1]);                              /* in the arena */
  op_attrs(TIDE_OP_SLICE, &r2, 1, (const tide_tensor *[]){&e}, &f);
  tide_attrs all = {0};
  op_attrs(TIDE_OP_SUM, &all, 1, (const tide_tensor *[]){&f}, &g);
  out[0] = b, out[1] = d, out[2] = g;
  /* Eagerly the 0-d sum keeps its data inline, pointing into g: re-point the copy. */
  for (int k = 0; k < 3; k++)
    if (out[k].flags & TIDE_TENSOR_INLINE) out[k].data = out[k].inline_data.bytes;
  /* Run eagerly, the intermediates hold data (traced, they hold none). */
  tide_tensor_release(&a), tide_tensor_release(&c), tide_tensor_release(&e), tide_tensor_release(&f);
  return 3;
}

/* The body run eagerly on in[0..1] (the reference: no plan involved). */
static void eager_view_steps(tide_tensor *const *x, tide_tensor *want) {
  tide_tensor in[2];
  for (int k = 0; k < 2; k++) in[k] = blank(), tide_tensor_share(&in[k], x[k]);
  body_view_steps(in, want);
  for (int k = 0; k < 2; k++) tide_tensor_release(&in[k]);
}

static void test_view_steps(void) {
  int64_t dx[2] = {6, 4}, dw[2] = {4, 4}, dt[2] = {4, 6};
  tide_tensor *ins[2] = {filled(TIDE_FLOAT32, 2, dx, -1, 0.25), filled(TIDE_FLOAT32, 2, dw, 0.5, -0.1)};
  tide_graph *g = build(body_view_steps, 2, ins, false, TIDE_PASS_ALL);
  tide_tensor r[3], want[3];
  CHECK(run(g, 2, ins, r) == TIDE_OK);
  CHECK(r[0].storage == ins[0]->storage); /* the result views the argument's data */
  /* A transposed argument has other strides: the view kernels run instead, then the resolved path again. */
  tide_tensor *xt = filled(TIDE_FLOAT32, 2, dt, 2, -0.5), tr = blank();
  tide_attrs perm = {0};
  op_attrs(TIDE_OP_TRANSPOSE, &perm, 1, (const tide_tensor *[]){xt}, &tr);
  tide_tensor *strided[2] = {&tr, ins[1]};
  for (int round = 0; round < 2; round++)
    for (int which = 0; which < 2; which++) {
      tide_tensor *const *x = which ? ins : strided;
      tide_tensor s[3];
      CHECK(run(g, 2, x, s) == TIDE_OK);
      eager_view_steps(x, want);
      for (int k = 0; k < 3; k++) {
        CHECK(same(&s[k], &want[k], 0));
        tide_tensor_release(&s[k]), tide_tensor_release(&want[k]);
      }
    }
  /* The first run's results outlive the argument they view. */
  eager_view_steps(ins, want);
  tide_tensor_free(ins[0]);
  for (int k = 0; k < 3; k++) {
    CHECK(same(&r[k], &want[k], 0));
    tide_tensor_release(&r[k]), tide_tensor_release(&want[k]);
  }
  tide_tensor_release(&tr);
  tide_graph_free(g);
  free_all(2, (tide_tensor *[]){ins[1], xt});
}

/* ---- the executor ----------------------------------------------------------------------- */

/* Errors name the op and where it was recorded; a failed run leaves outputs blank. */
static int body_bad(tide_tensor *in, tide_tensor *out) {
  bin(TIDE_OP_MATMUL, &out[0], &in[0], &in[0]);
  return 1;
}

static void test_exec_errors(void) {
  int64_t d[2] = {2, 3};
  tide_tensor *x = filled(TIDE_FLOAT32, 2, d, 0, 1);
  tide_graph *g = tide_graph_new("bad");
  tide_graph_begin(g);
  tide_tensor in, out;
  int64_t unk[2] = {-1, -1};
  tide_graph_input(g, TIDE_FLOAT32, 2, unk, &in);
  body_bad(&in, &out);
  tide_graph_set_origin(g, &out, "model.lua:7");
  const tide_tensor *outs[1] = {&out};
  tide_graph_end(g);
  tide_graph_set_outputs(g, 1, outs);
  tide_graph_finalize(g, TIDE_PASS_ALL);
  tide_tensor r;
  CHECK(run(g, 1, &x, &r) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "matmul") && contains(tide_last_error(), "model.lua:7"));
  CHECK(r.data == NULL);
  int64_t sq[2] = {3, 3};
  tide_tensor *y = filled(TIDE_FLOAT32, 2, sq, 0, 1);
  tide_request_interrupt(); /* a request from before the run is stale: dropped, as eager ops do */
  CHECK(run(g, 1, &y, &r) == TIDE_OK); /* another shape, another plan */
  CHECK(r.dims[0] == 3 && r.dims[1] == 3);
  tide_tensor_release(&r);
  tide_graph_free(g);
  free_all(2, (tide_tensor *[]){x, y});
}

int main(void) {
  test_fold();
  test_fold_cap();
  test_fold_error();
  test_random_kept();
  test_cse();
  test_dce();
  test_fuse_basic();
  test_fuse_chain();
  test_fuse_halves();
  test_fuse_int_errors();
  test_fuse_select();
  test_fuse_boundaries();
  test_fuse_unknown_dims();
  test_plan_reuse();
  test_plan_views();
  test_view_steps();
  test_exec_errors();
  return CHECK_SUMMARY("graph_passes");
}
