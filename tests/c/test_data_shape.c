/* tests/c/test_data_shape.c — ops flagged TIDE_OPF_DATA_SHAPE, whose kernels
 * size their outputs from the data (where, unique, sorted segments): eagerly,
 * on failure, and in graphs (late nodes, plans reused across sizes, folding). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* Make the blank header `t` a tensor of dtype dt and the given dims holding vals (as doubles). */
static void make(tide_tensor *t, int dt, int ndim, const int64_t *dims, const double *vals) {
  tide_tensor f = blank();
  CHECK(tide_tensor_init(&f, TIDE_FLOAT64, ndim, dims) == TIDE_OK);
  memcpy(f.data, vals, (size_t)f.nelem * sizeof(double));
  tide_attrs a = {.dtype = dt};
  const tide_tensor *in[1] = {&f};
  *t = blank();
  CHECK(tide_op_run(TIDE_OP_CAST, &a, 1, in, 1, &t) == TIDE_OK);
  tide_tensor_release(&f);
}

static int64_t i64_at(const tide_tensor *t, int64_t k) { return ((const int64_t *)t->data)[k]; }

static void test_flags(void) {
  CHECK(tide_op_flags(TIDE_OP_WHERE_INDICES) & TIDE_OPF_DATA_SHAPE);
  CHECK(tide_op_flags(TIDE_OP_UNIQUE) & TIDE_OPF_DATA_SHAPE);
  CHECK(tide_op_flags(TIDE_OP_SEGMENT_SUM) & TIDE_OPF_DATA_SHAPE);
  CHECK(!(tide_op_flags(TIDE_OP_UNSORTED_SEGMENT_SUM) & TIDE_OPF_DATA_SHAPE)); /* its size is an input's value */
  CHECK(!(tide_op_flags(TIDE_OP_GATHER_ND) & TIDE_OPF_DATA_SHAPE));
}

/* Eagerly: inference leaves the counted dim unknown; a run allocates the exact size. */
static void test_eager(void) {
  tide_tensor c, o = blank(), *po = &o;
  int64_t dims[2] = {2, 3};
  make(&c, TIDE_BOOL, 2, dims, (const double[]){1, 0, 1, 0, 0, 1});
  const tide_tensor *in[1] = {&c};
  CHECK(tide_op_infer(TIDE_OP_WHERE_INDICES, NULL, 1, in, 1, &po) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[0] == -1 && o.dims[1] == 2 && o.dt == TIDE_INT64 && o.data == NULL);
  o = blank();
  CHECK(tide_op_run(TIDE_OP_WHERE_INDICES, NULL, 1, in, 1, &po) == TIDE_OK);
  CHECK(o.ndim == 2 && o.dims[0] == 3 && o.dims[1] == 2 && o.nelem == 6 && o.data != NULL);
  CHECK(i64_at(&o, 0) == 0 && i64_at(&o, 1) == 0 && i64_at(&o, 2) == 0 && i64_at(&o, 3) == 2);
  CHECK(i64_at(&o, 4) == 1 && i64_at(&o, 5) == 2);
  tide_tensor_release(&o);
  tide_tensor_release(&c);

  /* unique: two outputs, both allocated by the kernel; a large x lives in a storage */
  enum { N = 1000 };
  double *vals = malloc(N * sizeof *vals);
  for (int i = 0; i < N; i++) vals[i] = (double)((i * 7) % 10);
  int64_t n = N;
  tide_tensor x, y = blank(), idx = blank();
  make(&x, TIDE_INT32, 1, &n, vals);
  free(vals);
  tide_tensor *outs[2] = {&y, &idx};
  const tide_tensor *xin[1] = {&x};
  tide_attrs a = {.dtype = TIDE_INT64};
  CHECK(tide_op_run(TIDE_OP_UNIQUE, &a, 1, xin, 2, outs) == TIDE_OK);
  CHECK(y.ndim == 1 && y.dims[0] == 10 && y.dt == TIDE_INT32 && idx.dims[0] == N && idx.dt == TIDE_INT64);
  CHECK(((int32_t *)y.data)[0] == 0 && ((int32_t *)y.data)[1] == 7 && i64_at(&idx, 11) == 1); /* x[11] = 77 % 10 = 7, the second value */
  CHECK(tide_tensor_storage_refs(&idx) == 1);
  tide_tensor_release(&y);
  tide_tensor_release(&idx);
  tide_tensor_release(&x);
}

/* A kernel that fails after counting leaves its outputs blank: nothing to release twice. */
static void test_failure(void) {
  tide_tensor d, s, o = blank(), *po = &o;
  int64_t n = 3;
  make(&d, TIDE_FLOAT32, 1, &n, (const double[]){1, 2, 3});
  make(&s, TIDE_INT32, 1, &n, (const double[]){0, 2, 1});
  const tide_tensor *in[2] = {&d, &s};
  CHECK(tide_op_run(TIDE_OP_SEGMENT_SUM, NULL, 2, in, 1, &po) == TIDE_ERR_INDEX);
  CHECK(contains(tide_last_error(), "segment_sum: segment_ids must be sorted, but segment_ids[2] = 1 follows 2"));
  CHECK(o.data == NULL && o.storage == NULL && o.ndim == 0);
  tide_tensor_release(&o);
  /* a hand-made header with an unknown dim is not data: refused before the kernel */
  s.dims[0] = -1;
  CHECK(tide_op_run(TIDE_OP_SEGMENT_SUM, NULL, 2, in, 1, &po) == TIDE_ERR_SHAPE);
  CHECK(contains(tide_last_error(), "segment_sum: input 2 has unknown (-1) dimensions"));
  s.dims[0] = 3;
  tide_tensor_release(&s);
  tide_tensor_release(&d);
}

/* In a graph: where_indices on an input, then ops on its result (a late
 * chain), run with different true counts; the plan for the input shape is
 * reused, each run sized anew. The intermediates are released mid-run. */
static void test_graph(void) {
  tide_graph *g = tide_graph_new("where_then_ops");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int64_t dims[2] = {2, 2};
  tide_tensor c = blank(), w = blank(), f = blank(), s = blank(), *pw = &w, *pf = &f, *ps = &s;
  CHECK(tide_graph_input(g, TIDE_INT32, 2, dims, &c) == TIDE_OK);
  const tide_tensor *cin[1] = {&c};
  CHECK(tide_op_run(TIDE_OP_WHERE_INDICES, NULL, 1, cin, 1, &pw) == TIDE_OK);
  CHECK(w.ndim == 2 && w.dims[0] == -1 && w.dims[1] == 2); /* unknown while tracing */
  tide_attrs cast = {.dtype = TIDE_FLOAT32};
  const tide_tensor *win[1] = {&w};
  CHECK(tide_op_run(TIDE_OP_CAST, &cast, 1, win, 1, &pf) == TIDE_OK);
  tide_attrs rows = {.nints = 1, .ints = {1}};
  const tide_tensor *fin[1] = {&f};
  CHECK(tide_op_run(TIDE_OP_SUM, &rows, 1, fin, 1, &ps) == TIDE_OK); /* [N]: each row's i + j */
  const tide_tensor *outs[2] = {&s, &w};
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_set_outputs(g, 2, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  CHECK(contains(tide_graph_text(g), "where_indices("));

  const double cases[3][4] = {{1, 0, 0, 1}, {0, 0, 0, 0}, {1, 1, 1, 0}};
  const int64_t counts[3] = {2, 0, 3};
  for (int r = 0; r < 4; r++) { /* the first case again last: the cached plan, a new size */
    int k = r % 3;
    tide_tensor x, sum = blank(), idx = blank();
    make(&x, TIDE_INT32, 2, dims, cases[k]);
    const tide_tensor *in[1] = {&x};
    tide_tensor *res[2] = {&sum, &idx};
    CHECK(tide_graph_run(g, 1, in, 2, res) == TIDE_OK);
    CHECK(sum.ndim == 1 && sum.dims[0] == counts[k] && idx.dims[0] == counts[k] && idx.dims[1] == 2);
    if (k == 0) CHECK(((float *)sum.data)[0] == 0 && ((float *)sum.data)[1] == 2);
    if (k == 2) CHECK(i64_at(&idx, 4) == 1 && i64_at(&idx, 5) == 0 && ((float *)sum.data)[2] == 1);
    tide_tensor_release(&sum);
    tide_tensor_release(&idx);
    tide_tensor_release(&x);
  }
  tide_graph_free(g);
}

/* A sorted segment op and unique in one graph, unknown input length. */
static void test_graph_segments(void) {
  tide_graph *g = tide_graph_new("segments");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  int64_t unknown = -1;
  tide_tensor d = blank(), ids = blank(), seg = blank(), y = blank(), yi = blank();
  CHECK(tide_graph_input(g, TIDE_FLOAT64, 1, &unknown, &d) == TIDE_OK);
  CHECK(tide_graph_input(g, TIDE_INT64, 1, &unknown, &ids) == TIDE_OK);
  const tide_tensor *sin[2] = {&d, &ids};
  tide_tensor *ps = &seg;
  CHECK(tide_op_run(TIDE_OP_SEGMENT_MAX, NULL, 2, sin, 1, &ps) == TIDE_OK);
  tide_attrs a = {.dtype = TIDE_INT32};
  const tide_tensor *uin[1] = {&ids};
  tide_tensor *uouts[2] = {&y, &yi};
  CHECK(tide_op_run(TIDE_OP_UNIQUE, &a, 1, uin, 2, uouts) == TIDE_OK);
  CHECK(y.dims[0] == -1 && yi.dims[0] == -1 && yi.dt == TIDE_INT32);
  const tide_tensor *outs[3] = {&seg, &y, &yi};
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_set_outputs(g, 3, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  int64_t n = 5;
  tide_tensor x, s, r0 = blank(), r1 = blank(), r2 = blank();
  make(&x, TIDE_FLOAT64, 1, &n, (const double[]){1, 7, 3, -2, 4});
  make(&s, TIDE_INT64, 1, &n, (const double[]){0, 0, 2, 2, 4});
  const tide_tensor *in[2] = {&x, &s};
  tide_tensor *res[3] = {&r0, &r1, &r2};
  CHECK(tide_graph_run(g, 2, in, 3, res) == TIDE_OK);
  CHECK(r0.dims[0] == 5 && ((double *)r0.data)[0] == 7 && ((double *)r0.data)[1] == 0 && ((double *)r0.data)[4] == 4);
  CHECK(r1.dims[0] == 3 && i64_at(&r1, 2) == 4 && ((int32_t *)r2.data)[4] == 2);
  for (int k = 0; k < 3; k++) tide_tensor_release(res[k]);
  /* a failing run (ids not sorted) names the op and leaves nothing behind */
  ((int64_t *)s.data)[1] = 3;
  CHECK(tide_graph_run(g, 2, in, 3, res) == TIDE_ERR_INDEX);
  CHECK(contains(tide_last_error(), "segment_max: segment_ids must be sorted"));
  tide_tensor_release(&x);
  tide_tensor_release(&s);
  tide_graph_free(g);
}

/* Folding: where_indices of a graph constant becomes a constant at finalize. */
static void test_fold(void) {
  tide_tensor c;
  int64_t n = 4;
  make(&c, TIDE_FLOAT32, 1, &n, (const double[]){0, 2, 0, -1});
  tide_graph *g = tide_graph_new("fold");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  tide_tensor k = blank(), w = blank(), *pw = &w;
  CHECK(tide_graph_constant(g, &c, &k) == TIDE_OK);
  const tide_tensor *in[1] = {&k};
  CHECK(tide_op_run(TIDE_OP_WHERE_INDICES, NULL, 1, in, 1, &pw) == TIDE_OK);
  const tide_tensor *outs[1] = {&w};
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_set_outputs(g, 1, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, TIDE_PASS_ALL) == TIDE_OK);
  CHECK(!contains(tide_graph_text(g), "where_indices("));
  tide_tensor r = blank(), *pr = &r;
  CHECK(tide_graph_run(g, 0, NULL, 1, &pr) == TIDE_OK);
  CHECK(r.ndim == 2 && r.dims[0] == 2 && r.dims[1] == 1 && i64_at(&r, 0) == 1 && i64_at(&r, 1) == 3);
  tide_tensor_release(&r);
  tide_graph_free(g);
  tide_tensor_release(&c);
}

int main(void) {
  test_flags();
  test_eager();
  test_failure();
  test_graph();
  test_graph_segments();
  test_fold();
  return CHECK_SUMMARY("data_shape");
}
