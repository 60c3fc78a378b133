/* tests/c/graph_util.h — helpers the graph C tests share: graphs built from a
 * body function, run, and compared value by value with any dtype and strides. */
#ifndef TIDE_TESTS_GRAPH_UTIL_H
#define TIDE_TESTS_GRAPH_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* A graph's body: records ops on the symbolic inputs `in`, sets `out`, returns how many. */
typedef int (*body_fn)(tide_tensor *in, tide_tensor *out);

static inline tide_tensor *filled(int dt, int ndim, const int64_t *dims, double start, double step) {
  tide_tensor *f = tide_tensor_new(TIDE_FLOAT64, ndim, dims);
  for (int64_t i = 0; i < f->nelem; i++) ((double *)f->data)[i] = start + step * (double)(i % 97) - (double)(i % 13);
  if (dt == TIDE_FLOAT64) return f;
  tide_tensor *t = calloc(1, sizeof *t);
  tide_attrs a = {0};
  a.dtype = dt;
  const tide_tensor *in[1] = {f};
  tide_op_run(TIDE_OP_CAST, &a, 1, in, 1, &t);
  tide_tensor_free(f);
  return t;
}

static inline tide_tensor *scalar(int dt, double v) { return filled(dt, 0, NULL, v, 0); }

static inline void bin(int op, tide_tensor *o, const tide_tensor *a, const tide_tensor *b) {
  *o = blank();
  if (tide_op_binary(op, o, a, b)) fprintf(stderr, "bin: %s\n", tide_last_error());
}

static inline void un(int op, tide_tensor *o, const tide_tensor *a) {
  *o = blank();
  if (tide_op_unary(op, o, a)) fprintf(stderr, "un: %s\n", tide_last_error());
}

static inline void op_attrs(int op, const tide_attrs *at, int n_in, const tide_tensor *const *in, tide_tensor *o) {
  *o = blank();
  if (tide_op_run(op, at, n_in, in, 1, &o)) fprintf(stderr, "op: %s\n", tide_last_error());
}

static tide_graph *G; /* the graph being built (bodies add constants to it) */

/* A symbolic constant of G holding t. */
static inline tide_tensor konst(const tide_tensor *t) {
  tide_tensor k = blank();
  CHECK(tide_graph_constant(G, t, &k) == TIDE_OK);
  return k;
}

/* Build body over inputs shaped like ex[] (input 0's dim 0 unknown when `none0`), finalize with `passes`. */
static inline tide_graph *build(body_fn body, int n_in, tide_tensor *const *ex, bool none0, unsigned passes) {
  tide_graph *g = tide_graph_new("test");
  CHECK(tide_graph_begin(g) == TIDE_OK);
  G = g;
  tide_tensor in[8], out[8];
  for (int k = 0; k < n_in; k++) {
    int64_t dims[TIDE_MAX_DIMS];
    for (int d = 0; d < ex[k]->ndim; d++) dims[d] = none0 && k == 0 && d == 0 ? -1 : ex[k]->dims[d];
    CHECK(tide_graph_input(g, ex[k]->dt, ex[k]->ndim, dims, &in[k]) == TIDE_OK);
  }
  int n_out = body(in, out);
  const tide_tensor *outs[8];
  for (int k = 0; k < n_out; k++) outs[k] = &out[k];
  CHECK(tide_graph_end(g) == TIDE_OK);
  CHECK(tide_graph_set_outputs(g, n_out, outs) == TIDE_OK);
  CHECK(tide_graph_finalize(g, passes) == TIDE_OK);
  return g;
}

/* Run g on ins; the results go into res[] (blank on entry). */
static inline tide_status run(tide_graph *g, int n_in, tide_tensor *const *ins, tide_tensor *res) {
  const tide_tensor *in[8];
  tide_tensor *out[8];
  for (int k = 0; k < n_in; k++) in[k] = ins[k];
  int n_out = tide_graph_num_outputs(g);
  for (int k = 0; k < n_out; k++) res[k] = blank(), out[k] = &res[k];
  return tide_graph_run(g, n_in, in, n_out, out);
}

/* Make the blank header d hold t's values as contiguous float64: the
 * engine's cast reads every dtype and any strides (d has no data when the
 * cast fails: callers treat that as a mismatch). The caller releases d. */
static inline void to_f64(const tide_tensor *t, tide_tensor *d) {
  tide_attrs a;
  memset(&a, 0, sizeof a);
  a.dtype = TIDE_FLOAT64;
  *d = blank();
  if (tide_op_run(TIDE_OP_CAST, &a, 1, &t, 1, &d) != TIDE_OK) fprintf(stderr, "to_f64: %s\n", tide_last_error());
}

/* Element i (row-major) of t as a double; NaN when t has no element i. The
 * engine's cast reads it from a 0-d view of that element (one element cast,
 * so a loop over a large tensor stays linear); inline tensors are cast whole. */
static inline double at(const tide_tensor *t, int64_t i) {
  if (i < 0 || i >= t->nelem) return NAN;
  tide_tensor one = blank(), d;
  const tide_tensor *src = t;
  if (!(t->flags & TIDE_TENSOR_INLINE)) {
    int64_t off = 0, rest = i;
    for (int k = t->ndim - 1; k >= 0; k--) {
      off += (rest % t->dims[k]) * t->strides[k];
      rest /= t->dims[k];
    }
    if (tide_tensor_view(&one, t, 0, NULL, NULL, off) == TIDE_OK) src = &one, i = 0;
  }
  to_f64(src, &d);
  double v = d.data && i < d.nelem ? ((const double *)d.data)[i] : NAN;
  tide_tensor_release(&d);
  tide_tensor_release(&one);
  return v;
}

static bool quiet; /* same() does not print the first difference */

/* Same dtype, shape and values (within tol; 0 means exactly). */
static inline bool same(const tide_tensor *a, const tide_tensor *b, double tol) {
  if (a->dt != b->dt || a->ndim != b->ndim || a->nelem != b->nelem) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d]) return false;
  tide_tensor da, db;
  to_f64(a, &da);
  to_f64(b, &db);
  bool ok = a->nelem == 0 || (da.data && db.data);
  for (int64_t i = 0; ok && i < a->nelem; i++) {
    double x = ((const double *)da.data)[i], y = ((const double *)db.data)[i];
    if ((isnan(x) && isnan(y)) || x == y) continue;
    if (!(fabs(x - y) <= tol)) {
      if (!quiet) fprintf(stderr, "  element %lld: %.9g vs %.9g\n", (long long)i, x, y);
      ok = false;
    }
  }
  tide_tensor_release(&da);
  tide_tensor_release(&db);
  return ok;
}

/* The optimized graph gives what the unoptimized one gives; returns the optimized graph. */
static inline tide_graph *check_equal(body_fn body, int n_in, tide_tensor *const *ins, unsigned passes, double tol) {
  tide_graph *plain = build(body, n_in, ins, false, 0), *opt = build(body, n_in, ins, false, passes);
  tide_tensor r0[8], r1[8];
  CHECK(run(plain, n_in, ins, r0) == TIDE_OK);
  CHECK(run(opt, n_in, ins, r1) == TIDE_OK);
  for (int k = 0; k < tide_graph_num_outputs(opt); k++) {
    CHECK(same(&r0[k], &r1[k], tol));
    tide_tensor_release(&r0[k]);
    tide_tensor_release(&r1[k]);
  }
  tide_graph_free(plain);
  return opt;
}

static inline void free_all(int n, tide_tensor **ts) {
  for (int i = 0; i < n; i++) tide_tensor_free(ts[i]);
}

#endif
