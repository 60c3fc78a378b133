/* cpu/scatter.c — scatter_add: base with blocks of updates added at index
 * positions along an axis (gather's inverse: gather's gradient, top_k's, sort's). */
#include "indices.h"
#include "iter.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <string.h>

typedef struct scatter_ctx {
  char *out;                  /* contiguous [B*O, N, inner] */
  const char *upd;            /* contiguous [B*O, I, inner] */
  const tide_tensor *idx;     /* contiguous [B, I] */
  int64_t O, N, I, inner;
  size_t es;
  tide_add_row_fn add;
} scatter_ctx;

/* Output rows [begin, end) of the [B*O*N] rows: this range alone writes them,
 * so threads never add into one element. Row r is block (bo = r / N, n = r % N);
 * every index of bo's batch is scanned and those landing in the range applied,
 * in index order (so duplicates accumulate in a fixed order). */
static void scatter_range(void *arg, int64_t begin, int64_t end) {
  const scatter_ctx *g = arg;
  int64_t row_bytes = g->inner * (int64_t)g->es;
  for (int64_t bo = begin / g->N; bo * g->N < end; bo++) {
    int64_t lo = begin - bo * g->N, hi = end - bo * g->N;
    if (lo < 0) lo = 0;
    if (hi > g->N) hi = g->N;
    int64_t base = (bo / g->O) * g->I;
    char *orow = g->out + bo * g->N * row_bytes;
    const char *urow = g->upd + bo * g->I * row_bytes;
    for (int64_t i = 0; i < g->I; i++) {
      int64_t k = tide_index_at(g->idx, base + i);
      if (k >= lo && k < hi) g->add(orow + k * row_bytes, urow + i * row_bytes, g->inner);
    }
  }
}

/* Add the contiguous updates u into the contiguous out o (which holds base) at
 * the contiguous indices idx: all checked, axis and batch_dims normalized. */
static tide_status scatter_run(char *o, const char *u, int dt, const tide_tensor *out, const tide_tensor *idx,
                               int ax, int bd) {
  int64_t B = 1, O = 1, I = 1, N = out->dims[ax], inner = 1;
  for (int d = 0; d < bd; d++) B *= out->dims[d];
  for (int d = bd; d < ax; d++) O *= out->dims[d];
  for (int d = bd; d < idx->ndim; d++) I *= idx->dims[d];
  for (int d = ax + 1; d < out->ndim; d++) inner *= out->dims[d];
  scatter_ctx g = {o, u, idx, O, N, I, inner, tide_dtype_size_unchecked(dt), tide_add_row_for(dt)};
  int64_t rows = B * O * N;
  double adds = (double)B * (double)O * (double)I * (double)inner;
  if (rows == 0 || adds == 0) return TIDE_OK;
  if (adds < TIDE_GRAIN_CHEAP) {
    scatter_range(&g, 0, rows);
    return TIDE_OK;
  }
  /* A grain of rows that carries about TIDE_GRAIN_CHEAP adds on average. */
  double grain = (double)rows * TIDE_GRAIN_CHEAP / adds;
  tide_parallel_for(rows, grain < 1 ? 1 : (int64_t)grain, scatter_range, &g);
  return TIDE_OK;
}

tide_status tide_cpu_scatter_add(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *base = in[0];
  tide_tensor *o = out[0];
  /* tide_infer_scatter_add checked these. */
  int ax = a->axis < 0 ? a->axis + base->ndim : a->axis;
  int bd = (int)(a->n < 0 ? a->n + in[1]->ndim : a->n);
  tide_tensor itmp, utmp, of, uf;
  memset(&utmp, 0, sizeof utmp);
  memset(&of, 0, sizeof of);
  memset(&uf, 0, sizeof uf);
  const tide_tensor *idx, *upd;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &itmp, &idx);
  if (!st) st = tide_check_indices(def->name, idx, idx->nelem, base->dims[ax], ax, "base", base);
  if (st || o->nelem == 0) goto done;
  st = tide_copy_strided(def->name, o, base);
  if (!st) st = tide_contiguous_or_copy(def->name, in[2], &utmp, &upd);
  if (st) goto done;
  if (tide_is_half(o->dt)) { /* accumulate in float32, round once at the end */
    st = tide_halves_to_f32_tensor(o, &of);
    if (!st) st = tide_halves_to_f32_tensor(upd, &uf);
    if (!st) st = scatter_run(of.data, uf.data, TIDE_FLOAT32, o, idx, ax, bd);
    if (!st) tide_float_to_halves(o->dt, o->nelem, of.data, o->data, 2);
  } else {
    st = scatter_run(o->data, upd->data, o->dt, o, idx, ax, bd);
  }
done:
  tide_tensor_release(&of);
  tide_tensor_release(&uf);
  tide_tensor_release(&utmp);
  tide_tensor_release(&itmp);
  return st;
}
