/* tests/c/test_graph_build.c — graph building through the public C API:
 * constants found by identity (small inline ones by value), one read node per
 * variable until an assign, one capture per outer value, and the chain of
 * graphs being built kept sound when one is abandoned or freed mid-build. */
#include <stdlib.h>

#include "check.h"
#include "util.h"

/* The node a symbolic tensor names. */
static int node_of(const tide_tensor *t) { return t->inline_data.sym.node; }

/* The CONST node of g holding t (tide_graph_constant), or -1. */
static int const_node(tide_graph *g, const tide_tensor *t) {
  tide_tensor k = blank();
  if (tide_graph_constant(g, t, &k) != TIDE_OK) return -1;
  return node_of(&k);
}

/* A float32 scalar holding v, in the caller's header (inline). */
static void scalar_f32(tide_tensor *t, float v) {
  *t = blank();
  CHECK(tide_tensor_init(t, TIDE_FLOAT32, 0, NULL) == TIDE_OK);
  *(float *)t->data = v;
}

static void test_constants(void) {
  tide_graph *g = tide_graph_new("consts");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int64_t three = 3;
  tide_tensor x = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, &three, &x) == TIDE_OK);

  /* A Lua number in a traced loop: a new inline scalar per op, one node. */
  tide_tensor h = x;
  for (int i = 0; i < 1000; i++) {
    tide_tensor k, y = blank();
    scalar_f32(&k, 2.0f);
    CHECK(tide_op_binary(TIDE_OP_MUL, &y, &h, &k) == TIDE_OK);
    h = y;
  }
  CHECK(tide_graph_num_nodes(g) == 1 + 1 + 1000);

  /* Inline constants differ by any byte, dtype or shape. */
  tide_tensor a, b, pz, nz, one_f, one_i = blank();
  scalar_f32(&a, 2.0f);
  scalar_f32(&b, 3.0f);
  scalar_f32(&pz, 0.0f);
  scalar_f32(&nz, -0.0f);
  scalar_f32(&one_f, 1.0f);
  CHECK(tide_tensor_init(&one_i, TIDE_INT32, 0, NULL) == TIDE_OK);
  *(int32_t *)one_i.data = 0x3f800000; /* the bytes of 1.0f */
  int ka = const_node(g, &a), kb = const_node(g, &b);
  CHECK(ka >= 0 && kb >= 0 && ka != kb);
  CHECK(const_node(g, &a) == ka);
  CHECK(const_node(g, &pz) != const_node(g, &nz));
  CHECK(const_node(g, &one_f) != const_node(g, &one_i));
  tide_tensor v2 = blank();
  int64_t one = 1;
  CHECK(tide_tensor_init(&v2, TIDE_FLOAT32, 1, &one) == TIDE_OK);
  *(float *)v2.data = 2.0f;
  CHECK(const_node(g, &v2) != ka); /* shape (1,) is not shape () */

  /* Heap constants: the same tensor is one node; equal values in another
   * tensor, or another view of the same storage, are nodes of their own
   * (CSE merges equal small ones later, by value). */
  int64_t dims[2] = {4, 8};
  tide_tensor *big1 = tide_tensor_new(TIDE_FLOAT32, 2, dims), *big2 = tide_tensor_new(TIDE_FLOAT32, 2, dims);
  for (int i = 0; i < 32; i++) ((float *)big1->data)[i] = ((float *)big2->data)[i] = (float)i;
  int k1 = const_node(g, big1);
  CHECK(k1 >= 0 && const_node(g, big1) == k1);
  CHECK(const_node(g, big2) != k1);
  tide_tensor view = blank();
  int64_t perm[2] = {1, 0};
  tide_attrs pa = {0};
  pa.nints = 2, pa.ints[0] = perm[0], pa.ints[1] = perm[1];
  tide_tensor *vout[1] = {&view};
  const tide_tensor *vin[1] = {big1};
  CHECK(tide_op_run(TIDE_OP_TRANSPOSE, &pa, 1, vin, 1, vout) == TIDE_OK);
  CHECK(view.storage == big1->storage);
  CHECK(const_node(g, &view) != k1);
  CHECK(const_node(g, &view) == const_node(g, &view));
  tide_tensor_release(&view);

  /* Past the node array's growth, inline constants still read their own bytes. */
  tide_tensor c7;
  scalar_f32(&c7, 7.0f);
  int k7 = const_node(g, &c7);
  for (int i = 0; i < 300; i++) {
    tide_tensor k;
    scalar_f32(&k, 100.0f + (float)i);
    CHECK(const_node(g, &k) >= 0);
  }
  CHECK(const_node(g, &c7) == k7);
  CHECK(tide_graph_end(g) == TIDE_OK);
  const tide_tensor *outs[1] = {&h};
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);

  /* The chain computes x * 2^1000 in float32: inf for x > 0 (a wrong
   * constant would show), 0 for x = 0. */
  tide_tensor in = blank(), res = blank();
  float xs[3] = {0.0f, 1e-30f, 1.0f};
  CHECK(tide_tensor_init(&in, TIDE_FLOAT32, 1, &three) == TIDE_OK);
  memcpy(in.data, xs, sizeof xs);
  const tide_tensor *ins[1] = {&in};
  tide_tensor *rs[1] = {&res};
  CHECK(tide_graph_run(g, 1, ins, 1, rs) == TIDE_OK);
  CHECK(((float *)res.data)[0] == 0.0f && ((float *)res.data)[2] > 1e38f);
  tide_tensor_release(&res);
  tide_tensor_release(&in);
  tide_graph_free(g);
  tide_tensor_free(big1);
  tide_tensor_free(big2);
}

/* One read node per variable until something assigns it: an ASSIGN, or a
 * cond whose branch does. */
static void test_variable_reads(void) {
  int64_t two = 2;
  tide_tensor *handle = tide_tensor_new(TIDE_FLOAT32, 1, &two), *other = tide_tensor_new(TIDE_FLOAT32, 1, &two);
  tide_graph *g = tide_graph_new("vars");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor p = blank(), r1 = blank(), r2 = blank(), r3 = blank(), r4 = blank(), r5 = blank(), o1 = blank(),
              o2 = blank();
  int64_t one = 1;
  CHECK(tide_graph_input(g, TIDE_BOOL, 1, &one, &p) == TIDE_OK);
  CHECK(tide_graph_variable(g, handle, &r1) == TIDE_OK);
  CHECK(tide_graph_variable(g, handle, &r2) == TIDE_OK);
  CHECK(tide_graph_variable(g, other, &o1) == TIDE_OK);
  CHECK(node_of(&r1) == node_of(&r2) && node_of(&o1) != node_of(&r1));
  CHECK(tide_graph_assign(g, handle, TIDE_ASSIGN_ADD, &r1) == TIDE_OK);
  CHECK(tide_graph_variable(g, handle, &r3) == TIDE_OK);
  CHECK(tide_graph_variable(g, other, &o2) == TIDE_OK);
  CHECK(node_of(&r3) != node_of(&r1)); /* after the assign: read again */
  CHECK(node_of(&o2) == node_of(&o1)); /* another variable: unchanged */
  CHECK(tide_graph_variable(g, handle, &r4) == TIDE_OK);
  CHECK(node_of(&r4) == node_of(&r3));

  /* A cond whose true branch assigns `handle`. */
  tide_graph *tg = tide_graph_new("then"), *fg = tide_graph_new("else");
  CHECK(tide_graph_begin(tg) == TIDE_OK);
  tide_tensor tv = blank();
  CHECK(tide_graph_variable(tg, handle, &tv) == TIDE_OK);
  CHECK(tide_graph_assign(tg, handle, TIDE_ASSIGN_SUB, &tv) == TIDE_OK);
  CHECK(tide_graph_set_outputs(tg, 0, NULL) == TIDE_OK);
  CHECK(tide_graph_end(tg) == TIDE_OK);
  CHECK(tide_graph_begin(fg) == TIDE_OK);
  CHECK(tide_graph_set_outputs(fg, 0, NULL) == TIDE_OK);
  CHECK(tide_graph_end(fg) == TIDE_OK);
  CHECK(tide_graph_cond(g, &p, tg, fg, 0, NULL) == TIDE_OK);
  CHECK(tide_graph_variable(g, handle, &r5) == TIDE_OK);
  CHECK(node_of(&r5) != node_of(&r4));
  tide_tensor o3 = blank();
  CHECK(tide_graph_variable(g, other, &o3) == TIDE_OK);
  CHECK(node_of(&o3) == node_of(&o1));
  CHECK(tide_graph_end(g) == TIDE_OK);
  tide_graph_free(g);
  tide_tensor_free(handle);
  tide_tensor_free(other);
}

/* A value of the enclosing graph used several times in a branch is one capture. */
static void test_captures(void) {
  tide_graph *g = tide_graph_new("outer");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int64_t three = 3;
  tide_tensor x = blank(), y = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, &three, &x) == TIDE_OK);
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, &three, &y) == TIDE_OK);
  tide_graph *sub = tide_graph_new("branch");
  CHECK(tide_graph_begin(sub) == TIDE_OK);
  tide_tensor a = blank(), b = blank(), c = blank(), d = blank();
  CHECK(tide_op_unary(TIDE_OP_NEG, &a, &x) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_EXP, &b, &x) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_ADD, &c, &x, &y) == TIDE_OK);
  CHECK(tide_op_binary(TIDE_OP_ADD, &d, &y, &a) == TIDE_OK);
  CHECK(tide_graph_num_nodes(sub) == 2 + 4); /* captures of x and y, four ops */
  CHECK(tide_graph_end(sub) == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  tide_graph_free(sub);
  tide_graph_free(g);
}

/* tide_graph_abandon ends a graph and everything begun on top of it. */
static void test_abandon(void) {
  tide_graph *g1 = tide_graph_new("g1"), *g2 = tide_graph_new("g2"), *g3 = tide_graph_new("g3");
  tide_graph *other = tide_graph_new("other");
  CHECK(tide_graph_building() == NULL);
  tide_graph_abandon(NULL);
  tide_graph_abandon(other); /* not being built: nothing */
  CHECK(tide_graph_building() == NULL);
  CHECK(tide_graph_begin(g1) == TIDE_OK);
  CHECK(tide_graph_begin(g2) == TIDE_OK);
  CHECK(tide_graph_begin(g3) == TIDE_OK);
  tide_graph_abandon(other);
  CHECK(tide_graph_building() == g3);
  tide_graph_abandon(g2);
  CHECK(tide_graph_building() == g1);
  CHECK(tide_graph_end(g3) != TIDE_OK); /* no longer being built */
  CHECK(tide_graph_begin(g3) == TIDE_OK); /* and can begin again */
  CHECK(tide_graph_building() == g3);
  tide_graph_abandon(g3);
  CHECK(tide_graph_building() == g1);
  tide_graph_abandon(g1);
  CHECK(tide_graph_building() == NULL);
  tide_graph_abandon(g1); /* twice: nothing */
  CHECK(tide_graph_building() == NULL);
  /* An eager op runs again once nothing is built. */
  tide_tensor s, t = blank();
  scalar_f32(&s, 2.0f);
  CHECK(tide_op_unary(TIDE_OP_NEG, &t, &s) == TIDE_OK);
  CHECK(!(t.flags & TIDE_TENSOR_SYMBOLIC) && *(float *)t.data == -2.0f);
  tide_graph_free(g1);
  tide_graph_free(g2);
  tide_graph_free(g3);
  tide_graph_free(other);
}

/* A graph freed while still being built (its builder abandoned) leaves the
 * chain of graphs being built sound: nothing is restored to freed memory
 * (AddressSanitizer would see it). */
static void test_free_while_building(void) {
  int64_t two = 2;
  /* Freed under the innermost one. */
  tide_graph *g1 = tide_graph_new("g1"), *g2 = tide_graph_new("g2");
  CHECK(tide_graph_begin(g1) == TIDE_OK);
  tide_tensor x1 = blank();
  CHECK(tide_graph_input(g1, TIDE_FLOAT32, 1, &two, &x1) == TIDE_OK);
  CHECK(tide_graph_begin(g2) == TIDE_OK);
  tide_graph_free(g1);
  CHECK(tide_graph_building() == g2);
  tide_tensor y = blank();
  tide_status st = tide_op_unary(TIDE_OP_NEG, &y, &x1); /* g1's value: no longer capturable */
  CHECK(st != TIDE_OK && contains(tide_last_error(), "another trace"));
  CHECK(tide_graph_end(g2) == TIDE_OK);
  CHECK(tide_graph_building() == NULL);
  tide_graph_free(g2);

  /* The innermost one freed: its outer graph is built again. */
  tide_graph *h1 = tide_graph_new("h1"), *h2 = tide_graph_new("h2");
  CHECK(tide_graph_begin(h1) == TIDE_OK);
  CHECK(tide_graph_begin(h2) == TIDE_OK);
  tide_graph_free(h2);
  CHECK(tide_graph_building() == h1);
  CHECK(tide_graph_end(h1) == TIDE_OK);
  tide_graph_free(h1);

  /* Both freed, outer first then inner: nothing is left being built. */
  tide_graph *k1 = tide_graph_new("k1"), *k2 = tide_graph_new("k2"), *k3 = tide_graph_new("k3");
  CHECK(tide_graph_begin(k1) == TIDE_OK);
  CHECK(tide_graph_begin(k2) == TIDE_OK);
  CHECK(tide_graph_begin(k3) == TIDE_OK);
  tide_graph_free(k1);
  tide_graph_free(k2);
  CHECK(tide_graph_building() == k3);
  tide_graph_free(k3);
  CHECK(tide_graph_building() == NULL);
  tide_tensor s, t = blank();
  scalar_f32(&s, 3.0f);
  CHECK(tide_op_unary(TIDE_OP_NEG, &t, &s) == TIDE_OK);
  CHECK(!(t.flags & TIDE_TENSOR_SYMBOLIC) && *(float *)t.data == -3.0f);
}

int main(void) {
  test_constants();
  test_variable_reads();
  test_captures();
  test_abandon();
  test_free_while_building();
  return CHECK_SUMMARY("graph_build");
}
