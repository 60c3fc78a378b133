/* tests/c/test_data_stage_copy.c — every transformation of the public data
 * headers above an interleave's template leaf: copied for each element, it
 * gives what the same stage built on that element's source gives. Run under
 * SANITIZE=1 (leaks detected) this is where a copy that shares a pointer
 * with its template, or leaks one, shows: the double free of a sparse
 * batch's roles came from such a copy. A constructor of tide/data.h,
 * tide/data_cache.h or tide/records.h without a case here fails. */
#include "tide/data.h"
#include "tide/data_cache.h"
#include "graph_util.h"

#include <stdio.h>

/* ---- graphs the cases use ------------------------------------------------------ */

/* x -> (x * 10, x * 10 + x + 2, 1): range(10x, 11x + 2), 3 to 5 elements for x = 1..3. */
static int args_body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *ten = scalar(TIDE_INT64, 10), *two = scalar(TIDE_INT64, 2), *one = scalar(TIDE_INT64, 1);
  tide_tensor k10 = konst(ten), k2 = konst(two), stop0;
  bin(TIDE_OP_MUL, &out[0], &in[0], &k10);
  bin(TIDE_OP_ADD, &stop0, &out[0], &in[0]);
  bin(TIDE_OP_ADD, &out[1], &stop0, &k2);
  out[2] = konst(one);
  tide_tensor_free(ten), tide_tensor_free(two), tide_tensor_free(one);
  return 3;
}

/* y -> (y, y + 2, 1): a nested interleave's range(y, y + 2). */
static int inner_args_body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *two = scalar(TIDE_INT64, 2), *one = scalar(TIDE_INT64, 1);
  tide_tensor k2 = konst(two), neg;
  bin(TIDE_OP_ADD, &out[1], &in[0], &k2);
  un(TIDE_OP_NEG, &neg, &in[0]); /* -(-y): an op's result, not the input itself */
  un(TIDE_OP_NEG, &out[0], &neg);
  out[2] = konst(one);
  tide_tensor_free(two), tide_tensor_free(one);
  return 3;
}

/* y -> y * 2 + 1 */
static int twice_body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *two = scalar(TIDE_INT64, 2), *one = scalar(TIDE_INT64, 1);
  tide_tensor k2 = konst(two), k1 = konst(one), t;
  bin(TIDE_OP_MUL, &t, &in[0], &k2);
  bin(TIDE_OP_ADD, &out[0], &t, &k1);
  tide_tensor_free(two), tide_tensor_free(one);
  return 1;
}

/* y -> y % 2 == 0 */
static int even_body(tide_tensor *in, tide_tensor *out) {
  tide_tensor *two = scalar(TIDE_INT64, 2), *zero = scalar(TIDE_INT64, 0);
  tide_tensor k2 = konst(two), k0 = konst(zero), rem;
  bin(TIDE_OP_MOD, &rem, &in[0], &k2);
  bin(TIDE_OP_EQUAL, &out[0], &rem, &k0);
  tide_tensor_free(two), tide_tensor_free(zero);
  return 1;
}

/* y -> y + [0, -1, -2]: a vector of 3 for padded_batch. */
static int vector_body(tide_tensor *in, tide_tensor *out) {
  int64_t dims[1] = {3};
  tide_tensor *v = filled(TIDE_INT64, 1, dims, 0, 0);
  tide_tensor kv = konst(v);
  bin(TIDE_OP_ADD, &out[0], &in[0], &kv);
  tide_tensor_free(v);
  return 1;
}

static tide_graph *g_args, *g_inner_args, *g_twice, *g_even, *g_vector;
static tide_dataset *sparse_rows; /* 8 rows of (indices [1, 1], values [1], dense_shape [1]): shared by copies */

static void make_graphs(void) {
  tide_tensor *ex = scalar(TIDE_INT64, 0);
  g_args = build(args_body, 1, &ex, false, TIDE_PASS_ALL);
  g_inner_args = build(inner_args_body, 1, &ex, false, TIDE_PASS_ALL);
  g_twice = build(twice_body, 1, &ex, false, TIDE_PASS_ALL);
  g_even = build(even_body, 1, &ex, false, TIDE_PASS_ALL);
  g_vector = build(vector_body, 1, &ex, false, TIDE_PASS_ALL);
  tide_tensor_free(ex);
  int64_t ix_dims[3] = {8, 1, 1}, val_dims[2] = {8, 1};
  tide_tensor *ix = tide_tensor_new(TIDE_INT64, 3, ix_dims), *vals = tide_tensor_new(TIDE_FLOAT32, 2, val_dims),
              *shape = tide_tensor_new(TIDE_INT64, 2, val_dims);
  for (int i = 0; i < 8; i++) {
    ((int64_t *)ix->data)[i] = i % 4;
    ((float *)vals->data)[i] = 0.5f * (float)i;
    ((int64_t *)shape->data)[i] = 4;
  }
  const tide_tensor *parts[3] = {ix, vals, shape};
  sparse_rows = tide_dataset_slices(3, parts);
  CHECK(sparse_rows != NULL);
  tide_tensor_free(ix), tide_tensor_free(vals), tide_tensor_free(shape);
}

static void free_graphs(void) {
  tide_graph_free(g_args), tide_graph_free(g_inner_args), tide_graph_free(g_twice), tide_graph_free(g_even);
  tide_graph_free(g_vector);
  tide_dataset_free(sparse_rows);
}

/* ---- the cases: each builds its stage over src (int64 scalars) ------------------------ */

static tide_dataset *take_own(tide_dataset *made, tide_dataset *held) { /* drop the case's own reference */
  tide_dataset_free(held);
  return made;
}

static tide_dataset *c_map(tide_dataset *s) { return tide_dataset_map(s, g_twice, 0, 1); }
static tide_dataset *c_map_threads(tide_dataset *s) { return tide_dataset_map(s, g_twice, 2, 1); }
static tide_dataset *c_map_autotune(tide_dataset *s) { return tide_dataset_map(s, g_twice, TIDE_DATA_AUTOTUNE, 1); }
static tide_dataset *c_filter(tide_dataset *s) { return tide_dataset_filter(s, g_even); }
static tide_dataset *c_zip(tide_dataset *s) {
  tide_dataset *r = tide_dataset_range(100, 200, 7, TIDE_INT32), *in[2] = {s, r};
  return take_own(tide_dataset_zip(2, in), r);
}
static tide_dataset *c_concatenate(tide_dataset *s) {
  tide_dataset *r = tide_dataset_range(0, 2, 1, TIDE_INT64), *in[3] = {r, s, s};
  return take_own(tide_dataset_concatenate(3, in), r);
}
static tide_dataset *c_batch(tide_dataset *s) { return tide_dataset_batch(s, 2, 0); }
static tide_dataset *c_batch_drop(tide_dataset *s) { return tide_dataset_batch(s, 2, 1); }
static tide_dataset *c_sparse_batch(tide_dataset *s) {
  tide_dataset *in[2] = {sparse_rows, s};
  tide_dataset *z = tide_dataset_zip(2, in);
  static const unsigned char roles[4] = {1, 0, 0, 0};
  return take_own(tide_dataset_sparse_batch(z, 2, 0, roles), z);
}
static tide_dataset *c_padded_batch(tide_dataset *s) {
  int64_t shapes[TIDE_MAX_DIMS];
  for (int d = 0; d < TIDE_MAX_DIMS; d++) shapes[d] = -1;
  shapes[0] = 5;
  uint64_t values[1];
  int64_t seven = 7;
  memcpy(values, &seven, sizeof seven);
  tide_dataset *v = tide_dataset_map(s, g_vector, 0, 1);
  return take_own(tide_dataset_padded_batch(v, 2, 0, shapes, values), v);
}
static tide_dataset *c_shuffle(tide_dataset *s) { return tide_dataset_shuffle(s, 3, 42, 1); }
static tide_dataset *c_take(tide_dataset *s) { return tide_dataset_take(s, 2); }
static tide_dataset *c_skip(tide_dataset *s) { return tide_dataset_skip(s, 1); }
static tide_dataset *c_repeat(tide_dataset *s) { return tide_dataset_repeat(s, 2); }
static tide_dataset *c_shard(tide_dataset *s) { return tide_dataset_shard(s, 2, 1); }
static tide_dataset *c_unbatch(tide_dataset *s) {
  tide_dataset *b = tide_dataset_batch(s, 2, 0);
  return take_own(tide_dataset_unbatch(b), b);
}
static tide_dataset *c_prefetch(tide_dataset *s) { return tide_dataset_prefetch(s, 2); }
static tide_dataset *c_prefetch_autotune(tide_dataset *s) { return tide_dataset_prefetch(s, TIDE_DATA_AUTOTUNE); }
static tide_dataset *c_interleave(tide_dataset *s) {
  tide_dataset *leaf = tide_dataset_param(TIDE_DATA_PARAM_RANGE, 0, 3, NULL);
  return take_own(tide_dataset_interleave(s, g_inner_args, leaf, 2, 1, 0, 1), leaf);
}
static tide_dataset *c_cache(tide_dataset *s) {
  int32_t dt = TIDE_INT64;
  return tide_dataset_cache(s, "", 1, &dt);
}

typedef struct copy_case {
  const char *api;   /* the constructor, tide_dataset_<api> */
  const char *label;
  tide_dataset *(*make)(tide_dataset *src);
  const char *refused; /* NULL: copied; else the error its copy gives */
} copy_case;

static const copy_case cases[] = {
    {"map", "map", c_map, NULL},
    {"map", "map on 2 threads", c_map_threads, NULL},
    {"map", "map, AUTOTUNE", c_map_autotune, NULL},
    {"filter", "filter", c_filter, NULL},
    {"zip", "zip", c_zip, NULL},
    {"concatenate", "concatenate", c_concatenate, NULL},
    {"batch", "batch", c_batch, NULL},
    {"batch", "batch, drop_remainder", c_batch_drop, NULL},
    {"sparse_batch", "sparse_batch", c_sparse_batch, NULL},
    {"padded_batch", "padded_batch", c_padded_batch, NULL},
    {"shuffle", "shuffle", c_shuffle, NULL},
    {"take", "take", c_take, NULL},
    {"skip", "skip", c_skip, NULL},
    {"repeat", "repeat", c_repeat, NULL},
    {"shard", "shard", c_shard, NULL},
    {"unbatch", "unbatch", c_unbatch, NULL},
    {"prefetch", "prefetch", c_prefetch, NULL},
    {"prefetch", "prefetch, AUTOTUNE", c_prefetch_autotune, NULL},
    {"interleave", "interleave", c_interleave, NULL},
    {"cache", "cache", c_cache, "interleave: a cache stage above a template leaf cannot be copied"},
};

/* Sources: made anew by param leaves (or shared as they are), never copied. */
static const char *const leaves[] = {"from_source", "slices",   "sparse_slices", "range", "param",
                                     "csv",         "tfrecord", "text_lines",    "load"};

/* ---- running them ------------------------------------------------------------------ */

typedef struct elems {
  int ncomp, n;
  tide_tensor t[512];
} elems;

/* Append every element of a pass over ds to e; the status of the pass. */
static tide_status collect(tide_dataset *ds, elems *e) {
  tide_data_iterator *it = tide_dataset_iterate(ds);
  if (!it) return tide_last_status();
  int nc = tide_dataset_num_components(ds);
  e->ncomp = nc;
  tide_status st = TIDE_OK;
  for (;;) {
    tide_tensor got[8];
    tide_tensor *out[8];
    for (int k = 0; k < nc; k++) got[k] = blank(), out[k] = &got[k];
    int end = 0;
    if ((st = tide_data_iterator_next(it, nc, out, &end)) || end) break;
    for (int k = 0; k < nc; k++) {
      if ((e->n + 1) * nc <= (int)(sizeof e->t / sizeof e->t[0])) tide_tensor_share(&e->t[e->n * nc + k], &got[k]);
      tide_tensor_release(&got[k]);
    }
    e->n++;
  }
  tide_data_iterator_free(it);
  return st;
}

static void elems_release(elems *e) {
  for (int i = 0; i < e->n * e->ncomp && i < (int)(sizeof e->t / sizeof e->t[0]); i++) tide_tensor_release(&e->t[i]);
  e->n = 0;
}

static void check_case(const copy_case *c) {
  static elems want, got;
  /* the reference: the stage built on each element's own range (cycle 1: one after another) */
  want.n = 0;
  bool ok = true;
  for (int64_t x = 1; x <= 3; x++) {
    tide_dataset *src = tide_dataset_range(10 * x, 11 * x + 2, 1, TIDE_INT64);
    tide_dataset *ds = c->make(src);
    tide_dataset_free(src);
    ok = ok && ds && collect(ds, &want) == TIDE_OK;
    tide_dataset_free(ds);
  }
  CHECK(ok);
  if (!ok) fprintf(stderr, "  %s: %s\n", c->label, tide_last_error());
  tide_dataset *leaf = tide_dataset_param(TIDE_DATA_PARAM_RANGE, 0, 3, NULL);
  tide_dataset *tmpl = c->make(leaf);
  tide_dataset_free(leaf);
  tide_dataset *in = tide_dataset_range(1, 4, 1, TIDE_INT64);
  CHECK(tmpl != NULL);
  for (int p = 0; tmpl && p <= 2; p += 2) {
    tide_dataset *ds = tide_dataset_interleave(in, g_args, tmpl, 1, 1, p, 1);
    for (int pass = 0; pass < 2; pass++) { /* a second pass copies the template again */
      got.n = 0;
      tide_status st = collect(ds, &got);
      if (c->refused) {
        CHECK(st != TIDE_OK && contains(tide_last_error(), c->refused));
        if (!contains(tide_last_error(), c->refused)) fprintf(stderr, "  %s: %s\n", c->label, tide_last_error());
      } else {
        CHECK(st == TIDE_OK);
        if (st) fprintf(stderr, "  %s: %s\n", c->label, tide_last_error());
        bool same_all = got.n == want.n && got.ncomp == want.ncomp && got.n > 0;
        for (int i = 0; same_all && i < got.n * got.ncomp; i++) same_all = same(&got.t[i], &want.t[i], 0);
        CHECK(same_all);
        if (!same_all) fprintf(stderr, "  %s (parallel %d): %d elements, want %d\n", c->label, p, got.n, want.n);
      }
      elems_release(&got);
    }
    tide_dataset_free(ds);
  }
  elems_release(&want);
  tide_dataset_free(tmpl);
  tide_dataset_free(in);
}

/* ---- every constructor has a case ------------------------------------------------------ */

static bool known(const char *name) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!strcmp(cases[i].api, name)) return true;
  for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++)
    if (!strcmp(leaves[i], name)) return true;
  return false;
}

/* The constructors (TIDE_API ... tide_dataset *tide_dataset_<name>(...)) a
 * header declares, checked against the cases; their count. */
static int check_header(const char *path) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  if (!f) return 0;
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    const char *p = strstr(line, "tide_dataset *tide_dataset_");
    if (!strstr(line, "TIDE_API") || !p) continue;
    p += strlen("tide_dataset *tide_dataset_");
    char name[64];
    size_t n = strcspn(p, "(");
    if (n >= sizeof name) continue;
    memcpy(name, p, n);
    name[n] = 0;
    found++;
    CHECK(known(name));
    if (!known(name)) fprintf(stderr, "  %s: tide_dataset_%s has no interleave copy case here\n", path, name);
  }
  fclose(f);
  return found;
}

int main(void) {
  make_graphs();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
  int n = check_header("kernels/include/tide/data.h") + check_header("kernels/include/tide/data_cache.h") +
          check_header("kernels/include/tide/records.h");
  CHECK(n >= 24); /* the scan reads the constructors (24 when this was written) */
  free_graphs();
  CHECK(tide_data_live_threads() == 0);
  return CHECK_SUMMARY("data_stage_copy");
}
