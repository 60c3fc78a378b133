/* cpu/gather_nd.c — TF's n-d gathers and scatters: gather_nd and
 * tensor_scatter_nd_add/update, where each index tuple names a slice. */
#include "indices.h"
#include "iter.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tensor t of shape [batch..., D0..DK-1, slice...] seen as [B, R, inner]
 * (R = D0 * ... * DK-1 slices per batch), indexed by tuples of K indices, M per batch. */
typedef struct nd_layout {
  int bd, k;
  int64_t B, M, R, inner;
} nd_layout;

/* The layout for t and indices idx with batch_dims bd (inference checked them). */
static nd_layout nd_layout_of(const tide_tensor *t, const tide_tensor *idx, int bd) {
  nd_layout l = {bd, (int)idx->dims[idx->ndim - 1], 1, 1, 1, 1};
  for (int d = 0; d < bd; d++) l.B *= t->dims[d];
  for (int d = bd; d < idx->ndim - 1; d++) l.M *= idx->dims[d];
  for (int d = bd; d < bd + l.k; d++) l.R *= t->dims[d];
  for (int d = bd + l.k; d < t->ndim; d++) l.inner *= t->dims[d];
  return l;
}

/* "[1, 0]": the coordinates of tuple number q among indices.shape[:-1]. */
static const char *tuple_position(char *buf, size_t size, const tide_tensor *idx, int64_t q) {
  int64_t c[TIDE_MAX_DIMS];
  int nd = idx->ndim - 1;
  for (int d = nd - 1; d >= 0; d--) {
    c[d] = idx->dims[d] ? q % idx->dims[d] : 0;
    q = idx->dims[d] ? q / idx->dims[d] : 0;
  }
  return tide_fmt_dims(buf, size, nd, c);
}

/* "[1, -1]": n index values as numbers (tide_fmt_dims would print -1 as None). */
static const char *values_str(char *buf, size_t size, int n, const int64_t *v) {
  int len = snprintf(buf, size, "[");
  for (int i = 0; i < n && len > 0 && (size_t)len < size; i++)
    len += snprintf(buf + len, size - (size_t)len, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (len > 0 && (size_t)len < size) snprintf(buf + len, size - (size_t)len, "]");
  return buf;
}

/* The error for tuple q of the contiguous indices, whose index j (value v) is
 * outside its dim: TF's CPU message, with the tuple's position and values,
 * t's shape and the valid range. */
static tide_status bad_tuple(const char *op, const char *what, const tide_tensor *t, const tide_tensor *idx,
                             const nd_layout *l, int64_t q, int j) {
  char sp[128], sv[128], st[128];
  int64_t vals[TIDE_MAX_DIMS];
  for (int i = 0; i < l->k; i++) vals[i] = tide_index_at(idx, q * l->k + i);
  return TIDE_FAIL(TIDE_ERR_INDEX, "%s: indices%s = %s does not index into %s of shape %s%s: %lld at position %d is "
                   "not in [0, %lld)", op, tuple_position(sp, sizeof sp, idx, q), values_str(sv, sizeof sv, l->k, vals),
                   what, TIDE_SHAPE_STR(st, t), l->bd ? " after its batch dims" : "", (long long)vals[j], j,
                   (long long)t->dims[l->bd + j]);
}

typedef struct rows_ctx {
  const tide_tensor *idx;            /* contiguous */
  int64_t dims[TIDE_MAX_DIMS];       /* the K indexed dims */
  int k;
  int64_t *rows;
  int bad;                           /* set (relaxed) when a tuple is out of range */
} rows_ctx;

/* rows[q] for tuples [begin, end); a bad tuple sets g->bad (found again serially). */
static void rows_range(void *arg, int64_t begin, int64_t end) {
  rows_ctx *g = arg;
  int k = g->k;
  bool bad = false;
#define ROWS_LOOP(T)                                                          \
  {                                                                           \
    const T *p = (const T *)g->idx->data;                                     \
    for (int64_t q = begin; q < end; q++) {                                   \
      int64_t row = 0;                                                        \
      for (int j = 0; j < k; j++) {                                           \
        int64_t v = p[q * k + j], dim = g->dims[j];                           \
        bad |= (uint64_t)v >= (uint64_t)dim; /* negative too */               \
        row = row * dim + v;                                                  \
      }                                                                       \
      g->rows[q] = row;                                                       \
    }                                                                         \
  }
  if (g->idx->dt == TIDE_INT32) ROWS_LOOP(int32_t) else ROWS_LOOP(int64_t)
#undef ROWS_LOOP
  if (bad) __atomic_store_n(&g->bad, 1, __ATOMIC_RELAXED);
}

/* rows[q] = the slice (in [0, R)) that tuple q of the contiguous indices names
 * in t, for every tuple; an index outside its dim fails as TF on CPU does,
 * naming the first such tuple. */
static tide_status nd_rows(const char *op, const char *what, const tide_tensor *t, const tide_tensor *idx,
                           const nd_layout *l, int64_t *rows) {
  int64_t n = l->B * l->M;
  rows_ctx g = {.idx = idx, .k = l->k, .rows = rows};
  for (int j = 0; j < l->k; j++) g.dims[j] = t->dims[l->bd + j];
  int64_t grain = TIDE_GRAIN_CHEAP / (l->k > 0 ? l->k : 1);
  tide_parallel_for(n, grain > 0 ? grain : 1, rows_range, &g);
  if (!g.bad) return TIDE_OK;
  for (int64_t q = 0; q < n; q++)
    for (int j = 0; j < l->k; j++) {
      int64_t v = tide_index_at(idx, q * l->k + j);
      if (v < 0 || v >= g.dims[j]) return bad_tuple(op, what, t, idx, l, q, j);
    }
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: an index out of range was reported but not found", op);
}

/* ---- gather_nd -------------------------------------------------------------------------- */

typedef struct gather_nd_ctx {
  const char *params;   /* contiguous [B, R, inner] */
  char *out;            /* contiguous [B, M, inner] */
  const int64_t *rows;
  int64_t M, R, slice_bytes;
} gather_nd_ctx;

static void gather_nd_range(void *arg, int64_t begin, int64_t end) {
  const gather_nd_ctx *g = arg;
  int64_t sb = g->slice_bytes;
  /* single elements copied as one typed load and store (a memcpy call each would dominate) */
#define ONE_ELEMENT(T)                                                                      \
  for (int64_t q = begin; q < end; q++)                                                     \
    ((T *)g->out)[q] = ((const T *)g->params)[(q / g->M) * g->R + g->rows[q]];
  switch (sb) {
  case 1: ONE_ELEMENT(uint8_t) break;
  case 2: ONE_ELEMENT(uint16_t) break;
  case 4: ONE_ELEMENT(uint32_t) break;
  case 8: ONE_ELEMENT(uint64_t) break;
  default:
    for (int64_t q = begin; q < end; q++)
      memcpy(g->out + q * sb, g->params + ((q / g->M) * g->R + g->rows[q]) * sb, (size_t)sb);
  }
#undef ONE_ELEMENT
}

tide_status tide_cpu_gather_nd(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                               int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor itmp, ptmp;
  memset(&ptmp, 0, sizeof ptmp);
  const tide_tensor *idx, *p;
  int64_t *rows = NULL;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &itmp, &idx);
  if (st) goto done;
  nd_layout l = nd_layout_of(in[0], idx, (int)a->n);
  if (!(rows = malloc((size_t)(l.B * l.M + 1) * sizeof *rows))) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld index tuples", def->name, (long long)(l.B * l.M));
    goto done;
  }
  if ((st = nd_rows(def->name, "params", in[0], idx, &l, rows)) != TIDE_OK || out[0]->nelem == 0) goto done;
  if ((st = tide_contiguous_or_copy(def->name, in[0], &ptmp, &p)) != TIDE_OK) goto done;
  gather_nd_ctx g = {p->data, out[0]->data, rows, l.M, l.R, l.inner * (int64_t)tide_dtype_size_unchecked(p->dt)};
  int64_t grain = TIDE_GRAIN_CHEAP / (l.inner > 0 ? l.inner : 1);
  tide_parallel_for(l.B * l.M, grain > 0 ? grain : 1, gather_nd_range, &g);
done:
  free(rows);
  tide_tensor_release(&ptmp);
  tide_tensor_release(&itmp);
  return st;
}

/* ---- tensor_scatter_nd_add / tensor_scatter_nd_update ---------------------------------- */

typedef struct scatter_nd_ctx {
  char *out;             /* contiguous [B, R, inner]: tensor's values, updated */
  const char *upd;       /* contiguous [B, M, inner] */
  const int64_t *rows;
  int64_t M, R, inner;
  size_t es;
  tide_add_row_fn add;   /* NULL: update (write over) */
} scatter_nd_ctx;

/* Output slices [begin, end) of the B * R: this range alone writes them, so
 * threads never touch one element. Every tuple is scanned and those landing in
 * the range applied in index order, so duplicates add up in a fixed order and
 * for an update the last one wins (as TF on CPU). */
static void scatter_nd_range(void *arg, int64_t begin, int64_t end) {
  const scatter_nd_ctx *g = arg;
  int64_t slice = g->inner * (int64_t)g->es;
  for (int64_t b = begin / g->R; b * g->R < end; b++) {
    int64_t lo = begin - b * g->R, hi = end - b * g->R;
    const int64_t *rows = g->rows + b * g->M;
    char *obase = g->out + b * g->R * slice;
    const char *ubase = g->upd + b * g->M * slice;
    for (int64_t m = 0; m < g->M; m++) {
      int64_t r = rows[m];
      if (r < lo || r >= hi) continue;
      if (g->add) g->add(obase + r * slice, ubase + m * slice, g->inner);
      else memcpy(obase + r * slice, ubase + m * slice, (size_t)slice);
    }
  }
}

/* Apply the contiguous updates u to o (dtype dt) at the checked rows. */
static void scatter_nd_run(char *o, const char *u, int dt, const nd_layout *l, const int64_t *rows, bool add) {
  scatter_nd_ctx g = {o, u, rows, l->M, l->R, l->inner, tide_dtype_size_unchecked(dt), add ? tide_add_row_for(dt) : NULL};
  int64_t slices = l->B * l->R;
  double work = (double)l->B * (double)l->M * (double)l->inner;
  if (slices == 0 || work == 0) return;
  if (work < TIDE_GRAIN_CHEAP) {
    scatter_nd_range(&g, 0, slices);
    return;
  }
  double grain = (double)slices * TIDE_GRAIN_CHEAP / work; /* slices carrying about a cheap grain of writes */
  tide_parallel_for(slices, grain < 1 ? 1 : (int64_t)grain, scatter_nd_range, &g);
}

tide_status tide_cpu_scatter_nd(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *t = in[0];
  tide_tensor *o = out[0];
  bool add = def->id == TIDE_OP_TENSOR_SCATTER_ND_ADD;
  tide_tensor itmp, utmp, of, uf;
  memset(&utmp, 0, sizeof utmp);
  memset(&of, 0, sizeof of);
  memset(&uf, 0, sizeof uf);
  const tide_tensor *idx, *upd;
  int64_t *rows = NULL;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &itmp, &idx);
  if (st) goto done;
  nd_layout l = nd_layout_of(t, idx, (int)a->n);
  if (!(rows = malloc((size_t)(l.B * l.M + 1) * sizeof *rows))) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld index tuples", def->name, (long long)(l.B * l.M));
    goto done;
  }
  if ((st = nd_rows(def->name, "tensor", t, idx, &l, rows)) != TIDE_OK || o->nelem == 0) goto done;
  if ((st = tide_copy_strided(def->name, o, t)) != TIDE_OK) goto done;
  if ((st = tide_contiguous_or_copy(def->name, in[2], &utmp, &upd)) != TIDE_OK) goto done;
  if (add && tide_is_half(o->dt)) { /* accumulate in float32, round once at the end */
    st = tide_halves_to_f32_tensor(o, &of);
    if (!st) st = tide_halves_to_f32_tensor(upd, &uf);
    if (st) goto done;
    scatter_nd_run(of.data, uf.data, TIDE_FLOAT32, &l, rows, true);
    tide_float_to_halves(o->dt, o->nelem, of.data, o->data, 2);
  } else {
    scatter_nd_run(o->data, upd->data, o->dt, &l, rows, add);
  }
done:
  free(rows);
  tide_tensor_release(&of);
  tide_tensor_release(&uf);
  tide_tensor_release(&utmp);
  tide_tensor_release(&itmp);
  return st;
}
