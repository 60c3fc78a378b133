/* cpu/gather.c — the ops driven by index values: gather (blocks of params
 * picked by indices, as tf.gather with batch_dims) and one_hot. */
#include "fill_value.h"
#include "indices.h"
#include "../core/parallel.h"
#include "../core/registry.h"

/* ---- gather ------------------------------------------------------------------------- */

typedef struct gather_ctx {
  const char *params;                 /* params->data */
  char *out;
  const tide_tensor *idx;             /* contiguous */
  int64_t I, O, inner;                /* indices per batch, outer blocks per batch, elements per block */
  size_t es;
  int npre;                           /* params.shape[:axis], strides in bytes */
  int64_t pre_dims[TIDE_MAX_DIMS], pre_strides[TIDE_MAX_DIMS];
  int64_t axis_stride;                /* bytes */
  int nin;                            /* params.shape[axis+1:], strides in bytes */
  int64_t in_dims[TIDE_MAX_DIMS], in_strides[TIDE_MAX_DIMS];
  bool inner_contiguous;
} gather_ctx;

/* Copy one block of `inner` elements from a strided params block to contiguous dst. */
static void copy_block(const gather_ctx *g, char *dst, const char *src) {
  if (g->inner_contiguous) {
    memcpy(dst, src, (size_t)g->inner * g->es);
    return;
  }
  int64_t c[TIDE_MAX_DIMS] = {0};
  int last = g->nin - 1;
  int64_t n = g->in_dims[last], s = g->in_strides[last];
  for (int64_t done = 0; done < g->inner; done += n) {
    switch (g->es) {
    case 1: for (int64_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = *(const uint8_t *)(src + i * s); break;
    case 2: for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = *(const uint16_t *)(src + i * s); break;
    case 4: for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = *(const uint32_t *)(src + i * s); break;
    default: for (int64_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = *(const uint64_t *)(src + i * s); break;
    }
    dst += n * (int64_t)g->es;
    for (int d = last - 1; d >= 0; d--) { /* carry into the outer coordinates */
      src += g->in_strides[d];
      if (++c[d] < g->in_dims[d]) break;
      src -= c[d] * g->in_strides[d];
      c[d] = 0;
    }
  }
}

/* Byte offset in params of outer block `bo` (row-major over params.shape[:axis]). */
static int64_t prefix_offset(const gather_ctx *g, int64_t bo) {
  int64_t off = 0;
  for (int d = g->npre - 1; d >= 0; d--) {
    off += (bo % g->pre_dims[d]) * g->pre_strides[d];
    bo /= g->pre_dims[d];
  }
  return off;
}

/* Output rows [begin, end): row r is block (bo = r / I, i = r % I). */
static void gather_range(void *arg, int64_t begin, int64_t end) {
  const gather_ctx *g = arg;
  int64_t row_bytes = g->inner * (int64_t)g->es;
  int64_t bo = -1, pre = 0, base = 0;
  for (int64_t r = begin; r < end; r++) {
    int64_t b = r / g->I;
    if (b != bo) {
      bo = b;
      pre = prefix_offset(g, bo);
      base = (bo / g->O) * g->I;
    }
    int64_t k = tide_index_at(g->idx, base + r % g->I);
    copy_block(g, g->out + r * row_bytes, g->params + pre + k * g->axis_stride);
  }
}

/* Gather from params p by the contiguous indices idx into o (axis and
 * batch_dims normalized). */
static tide_status gather_run(const char *op, const tide_tensor *p, const tide_tensor *idx, tide_tensor *o, int ax,
                              int bd) {
  int64_t B = 1, O = 1, I = 1, N = p->dims[ax];
  for (int d = 0; d < bd; d++) B *= p->dims[d];
  for (int d = bd; d < ax; d++) O *= p->dims[d];
  for (int d = bd; d < idx->ndim; d++) I *= idx->dims[d];
  tide_status st = tide_check_indices(op, idx, B * I, N, ax, "params", p);
  if (st || o->nelem == 0) return st;
  gather_ctx g;
  memset(&g, 0, sizeof g);
  g.es = tide_dtype_size_unchecked(p->dt);
  g.params = p->data;
  g.out = o->data;
  g.idx = idx;
  g.I = I;
  g.O = O;
  g.npre = ax;
  for (int d = 0; d < ax; d++) g.pre_dims[d] = p->dims[d], g.pre_strides[d] = p->strides[d] * (int64_t)g.es;
  g.axis_stride = p->strides[ax] * (int64_t)g.es;
  g.inner = 1;
  g.inner_contiguous = true;
  int64_t expect = 1;
  for (int d = p->ndim - 1; d > ax; d--) {
    if (p->dims[d] != 1 && p->strides[d] != expect) g.inner_contiguous = false;
    expect *= p->dims[d];
  }
  for (int d = ax + 1; d < p->ndim; d++) {
    g.in_dims[g.nin] = p->dims[d];
    g.in_strides[g.nin] = p->strides[d] * (int64_t)g.es;
    g.nin++;
    g.inner *= p->dims[d];
  }
  int64_t grain = TIDE_GRAIN_CHEAP / (g.inner > 0 ? g.inner : 1);
  tide_parallel_for(B * O * I, grain > 0 ? grain : 1, gather_range, &g);
  return TIDE_OK;
}

tide_status tide_cpu_gather(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *p = in[0];
  /* tide_infer_gather checked these. */
  int ax = a->axis < 0 ? a->axis + p->ndim : a->axis;
  int bd = (int)(a->n < 0 ? a->n + in[1]->ndim : a->n);
  tide_tensor tmp;
  const tide_tensor *idx;
  tide_status st = tide_contiguous_or_copy(def->name, in[1], &tmp, &idx);
  if (!st) st = gather_run(def->name, p, idx, out[0], ax, bd);
  tide_tensor_release(&tmp);
  return st;
}

/* ---- one_hot ------------------------------------------------------------------------ */

/* Fill with off_value, then write on_value at each valid index; an index
 * outside [0, depth) leaves its row all off_value (as TF). */
tide_status tide_cpu_one_hot(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  if (o->nelem == 0) return TIDE_OK;
  tide_status st = tide_fill_value(def->name, o, a->scalars[1]);
  if (st) return st;
  tide_tensor tmp;
  const tide_tensor *x;
  st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) goto done;
  int ax = a->axis == -1 ? x->ndim : a->axis;
  int64_t depth = a->n, inner = 1;
  for (int d = ax; d < x->ndim; d++) inner *= x->dims[d];
  size_t es = tide_dtype_size_unchecked(o->dt);
  unsigned char on[8];
  tide_fill_value_bytes(o->dt, a->scalars[0], on);
  /* out[o, v, i] = on where x[o, i] == v: out flat = (o * depth + v) * inner + i */
  for (int64_t k = 0; k < x->nelem; k++) {
    int64_t v;
    switch (x->dt) {
    case TIDE_INT8: v = ((const int8_t *)x->data)[k]; break;
    case TIDE_UINT8: v = ((const uint8_t *)x->data)[k]; break;
    case TIDE_INT32: v = ((const int32_t *)x->data)[k]; break;
    default: v = ((const int64_t *)x->data)[k]; break;
    }
    if (v < 0 || v >= depth) continue;
    int64_t outer = k / inner, i = k % inner;
    memcpy((char *)o->data + (size_t)((outer * depth + v) * inner + i) * es, on, es);
  }
done:
  tide_tensor_release(&tmp);
  return st;
}
