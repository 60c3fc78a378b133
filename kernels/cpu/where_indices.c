/* cpu/where_indices.c — tf.where(cond): the coordinates of cond's nonzero
 * elements, row-major, as int64 [N, rank]; N is counted here (TIDE_OPF_DATA_SHAPE). */
#include "iter.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <stdlib.h>
#include <string.h>

/* Elements per block: each block is counted, then filled, by one thread,
 * with its nonzero flags in a buffer of this many bytes on the stack. */
enum { BLOCK = 16384 };

/* f[i] = 1 where element begin + i of the contiguous x is nonzero: true bools
 * (any nonzero byte), any nonzero number, NaN too (NaN != 0, as TF); -0.0 is
 * zero. One typed loop per dtype, so each vectorizes. */
static void nonzero_flags(const tide_tensor *x, int64_t begin, int64_t n, uint8_t *f) {
  switch (x->dt) {
  case TIDE_FLOAT32: {
    const float *p = (const float *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = p[i] != 0;
    break;
  }
  case TIDE_FLOAT64: {
    const double *p = (const double *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = p[i] != 0;
    break;
  }
  case TIDE_FLOAT16:
  case TIDE_BFLOAT16: { /* all but the sign bit */
    const uint16_t *p = (const uint16_t *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = (p[i] & 0x7fff) != 0;
    break;
  }
  case TIDE_INT32: {
    const int32_t *p = (const int32_t *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = p[i] != 0;
    break;
  }
  case TIDE_INT64: {
    const int64_t *p = (const int64_t *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = p[i] != 0;
    break;
  }
  default: { /* bool, int8, uint8 */
    const uint8_t *p = (const uint8_t *)x->data + begin;
    for (int64_t i = 0; i < n; i++) f[i] = p[i] != 0;
    break;
  }
  }
}

typedef struct where_ctx {
  const tide_tensor *x; /* contiguous */
  int64_t *count;       /* per block; then the first output row of each block */
  int64_t *out;         /* [N, nd] */
  int64_t nblocks;
} where_ctx;

/* Pass 1: the nonzero count of each block. */
static void count_blocks(void *arg, int64_t begin, int64_t end) {
  const where_ctx *g = arg;
  uint8_t f[BLOCK];
  for (int64_t b = begin; b < end; b++) {
    int64_t lo = b * BLOCK, n = g->x->nelem - lo < BLOCK ? g->x->nelem - lo : BLOCK, c = 0;
    nonzero_flags(g->x, lo, n, f);
    for (int64_t i = 0; i < n; i++) c += f[i];
    g->count[b] = c;
  }
}

/* Pass 2: each block writes its rows from its first one. Every element's
 * coordinates are written and the cursor advances only past nonzero ones
 * (no branch to mispredict on random data); once a block's rows are full the
 * writes go to a scratch row. */
static void fill_blocks(void *arg, int64_t begin, int64_t end) {
  const where_ctx *g = arg;
  const tide_tensor *x = g->x;
  int nd = x->ndim;
  uint8_t f[BLOCK];
  int64_t scratch[TIDE_MAX_DIMS];
  for (int64_t b = begin; b < end; b++) {
    int64_t lo = b * BLOCK, n = x->nelem - lo < BLOCK ? x->nelem - lo : BLOCK;
    int64_t *dst = g->out + g->count[b] * nd;
    int64_t *stop = g->out + (b + 1 < g->nblocks ? g->count[b + 1] : g->count[g->nblocks]) * nd;
    if (dst == stop) continue;
    nonzero_flags(x, lo, n, f);
    if (nd == 1) { /* the position is the coordinate */
      for (int64_t i = 0; i < n; i++) {
        int64_t *w = dst < stop ? dst : scratch;
        *w = lo + i;
        dst += f[i]; /* f is 0 or 1: no branch */
      }
      continue;
    }
    int64_t c[TIDE_MAX_DIMS], k = lo; /* the coordinates of element lo */
    for (int d = nd - 1; d >= 0; d--) c[d] = k % x->dims[d], k /= x->dims[d];
    for (int64_t i = 0; i < n; i++) {
      int64_t *w = dst < stop ? dst : scratch;
      switch (nd) { /* not a loop, which the compiler would make a memcpy call per element */
      case 8: w[7] = c[7]; /* fall through */
      case 7: w[6] = c[6]; /* fall through */
      case 6: w[5] = c[5]; /* fall through */
      case 5: w[4] = c[4]; /* fall through */
      case 4: w[3] = c[3]; /* fall through */
      case 3: w[2] = c[2]; /* fall through */
      case 2: w[1] = c[1]; /* fall through */
      default: w[0] = c[0];
      }
      dst += f[i] * nd;
      for (int d = nd - 1; d >= 0 && ++c[d] == x->dims[d]; d--) c[d] = 0; /* the next coordinates */
    }
  }
}

tide_status tide_cpu_where_indices(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp;
  const tide_tensor *x;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) return st;
  where_ctx g = {x, NULL, NULL, (x->nelem + BLOCK - 1) / BLOCK};
  if (!(g.count = malloc((size_t)(g.nblocks + 1) * sizeof *g.count))) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    goto done;
  }
  int64_t grain = TIDE_GRAIN_CHEAP / BLOCK; /* blocks per thread at least */
  tide_parallel_for(g.nblocks, grain, count_blocks, &g);
  int64_t total = 0;
  for (int64_t b = 0; b < g.nblocks; b++) { /* counts -> first rows */
    int64_t c = g.count[b];
    g.count[b] = total;
    total += c;
  }
  g.count[g.nblocks] = total;
  int64_t dims[2] = {total, x->ndim};
  if ((st = tide_tensor_init(out[0], TIDE_INT64, 2, dims)) != TIDE_OK) goto done;
  g.out = out[0]->data;
  if (total > 0) tide_parallel_for(g.nblocks, grain, fill_blocks, &g);
done:
  free(g.count);
  tide_tensor_release(&tmp);
  return st;
}
