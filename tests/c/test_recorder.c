/* tests/c/test_recorder.c — the registry's recorder hook as tracing sets it,
 * through the public API: per thread, nested graphs unwind, errors after a trace. */
#include <pthread.h>

#include "check.h"
#include "util.h"

/* A random op (stateful): records while a graph is being built, else draws. */
static tide_status draw(tide_tensor *t) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.ints[0] = 3;
  a.nints = 1;
  a.dtype = TIDE_FLOAT32;
  a.scalars[1] = 1;
  *t = blank();
  return tide_op_run(TIDE_OP_RANDOM_UNIFORM, &a, 0, NULL, 1, &t);
}

static bool is_symbolic(const tide_tensor *t) { return (t->flags & TIDE_TENSOR_SYMBOLIC) != 0; }

/* What another thread saw while the main thread was building a graph. */
typedef struct seen {
  tide_graph *building;
  tide_status st;
  bool symbolic, has_data;
} seen;

static void *other_thread(void *arg) {
  seen *s = arg;
  s->building = tide_graph_building();
  tide_tensor t;
  s->st = draw(&t);
  s->symbolic = is_symbolic(&t);
  s->has_data = t.data != NULL;
  tide_tensor_release(&t);
  return NULL;
}

/* Outside any graph a random op draws; inside it records, on this thread only. */
static void test_stateful_records_only_while_building(void) {
  tide_tensor t;
  CHECK(tide_graph_building() == NULL);
  CHECK(draw(&t) == TIDE_OK && !is_symbolic(&t) && t.data != NULL);
  tide_tensor_release(&t);

  tide_graph *g = tide_graph_new("g");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int before = tide_graph_num_nodes(g);
  CHECK(draw(&t) == TIDE_OK && is_symbolic(&t));
  CHECK(tide_graph_num_nodes(g) == before + 1);

  seen s;
  memset(&s, 0, sizeof s);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, other_thread, &s) == 0);
  pthread_join(th, NULL);
  CHECK(s.building == NULL);
  CHECK(s.st == TIDE_OK && !s.symbolic && s.has_data);
  CHECK(tide_graph_num_nodes(g) == before + 1);

  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(draw(&t) == TIDE_OK && !is_symbolic(&t) && t.data != NULL);
  tide_tensor_release(&t);
  tide_graph_free(g);
}

/* Ending an inner graph gives the outer one its recording back; a graph
 * freed while being built does the same; ending out of order is refused. */
static void test_nested_graphs_unwind(void) {
  tide_graph *outer = tide_graph_new("outer"), *inner = tide_graph_new("inner");
  CHECK(tide_graph_begin(outer) == TIDE_OK);
  CHECK(tide_graph_begin(inner) == TIDE_OK);
  CHECK(tide_graph_building() == inner);
  CHECK(tide_graph_end(outer) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "only the innermost graph"));
  tide_tensor t;
  int n_outer = tide_graph_num_nodes(outer), n_inner = tide_graph_num_nodes(inner);
  CHECK(draw(&t) == TIDE_OK && is_symbolic(&t));
  CHECK(tide_graph_num_nodes(inner) == n_inner + 1 && tide_graph_num_nodes(outer) == n_outer);

  CHECK(tide_graph_end(inner) == TIDE_OK);
  CHECK(tide_graph_building() == outer);
  CHECK(draw(&t) == TIDE_OK && is_symbolic(&t));
  CHECK(tide_graph_num_nodes(outer) == n_outer + 1);

  tide_graph *dropped = tide_graph_new("dropped");
  CHECK(tide_graph_begin(dropped) == TIDE_OK);
  tide_graph_free(dropped);
  CHECK(tide_graph_building() == outer);

  CHECK(tide_graph_end(outer) == TIDE_OK);
  CHECK(tide_graph_building() == NULL);
  CHECK(draw(&t) == TIDE_OK && !is_symbolic(&t));
  tide_tensor_release(&t);
  tide_graph_free(inner);
  tide_graph_free(outer);
}

/* A symbolic tensor used after its trace ended is refused, naming where it was made. */
static void test_symbolic_after_trace(void) {
  tide_graph *g = tide_graph_new("kept");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor x = blank(), y = blank();
  int64_t d = 2;
  CHECK(tide_graph_input(g, TIDE_FLOAT32, 1, &d, &x) == TIDE_OK);
  CHECK(tide_graph_set_origin(g, &x, "f.lua:3") == TIDE_OK);
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_op_unary(TIDE_OP_NEG, &y, &x) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "neg: input 1 is a symbolic tensor of a traced function"));
  CHECK(contains(tide_last_error(), "made at f.lua:3 while tracing 'kept'"));
  tide_graph_free(g);
  CHECK(tide_op_unary(TIDE_OP_NEG, &y, &x) == TIDE_ERR_VALUE);
  CHECK(contains(tide_last_error(), "made in a trace that no longer exists"));
}

int main(void) {
  test_stateful_records_only_while_building();
  test_nested_graphs_unwind();
  test_symbolic_after_trace();
  return CHECK_SUMMARY("recorder");
}
