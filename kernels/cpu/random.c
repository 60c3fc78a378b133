/* cpu/random.c — the random kernels (uniform, normal, truncated normal, shuffle)
 * on counter-based Philox blocks: output element i reads block counter + i / per. */
#include "iter.h"
#include "../core/parallel.h"
#include "../core/philox.h"
#include "../core/registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Store double v in element i of float buffer p (dtype dt); with `below`,
 * values that round to `hi` or above step down one unit, keeping [lo, hi). */
static inline void store_float(void *p, int64_t i, int dt, double v, bool below, double hi) {
  switch (dt) {
  case TIDE_FLOAT64:
    if (below && v >= hi) v = nextafter(hi, -INFINITY);
    ((double *)p)[i] = v;
    break;
  case TIDE_FLOAT32: {
    float f = (float)v;
    if (below && f >= hi) f = nextafterf((float)hi, -INFINITY);
    ((float *)p)[i] = f;
    break;
  }
  case TIDE_FLOAT16: {
    uint16_t h = tide_float_to_half((float)v);
    if (below && tide_half_to_float(h) >= hi) h = tide_half_below(tide_float_to_half((float)hi));
    ((uint16_t *)p)[i] = h;
    break;
  }
  default: {
    uint16_t h = tide_float_to_bfloat16((float)v);
    if (below && tide_bfloat16_to_float(h) >= hi) h = tide_half_below(tide_float_to_bfloat16((float)hi));
    ((uint16_t *)p)[i] = h;
    break;
  }
  }
}

typedef struct rng_ctx {
  int op, dt, per;
  void *data;
  int64_t n;
  uint64_t key, counter;
  double a, b;          /* min, max or mean, stddev */
  bool below;           /* uniform floats: keep values under max */
  float top;            /* uniform float32: the largest float below max */
  int64_t imin;         /* uniform ints: min and max - min */
  uint64_t irange;
} rng_ctx;

/* Store v as element i of integer buffer p of dtype dt. */
static inline void store_int(void *p, int64_t i, int dt, int64_t v) {
  switch (dt) {
  case TIDE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
  case TIDE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TIDE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int64_t *)p)[i] = v; break;
  }
}

/* Philox blocks [b0, b1) of a random creation op, each filling `per` elements
 * (the mapping of bits to values is philox.h's, as CUDA's kernel does it). */
static void rng_blocks(void *arg, int64_t b0, int64_t b1) {
  const rng_ctx *c = arg;
  for (int64_t b = b0; b < b1; b++) {
    uint32_t w[4];
    tide_philox(c->key, c->counter + (uint64_t)b, 0, w);
    int64_t i0 = b * c->per;
    int m = c->n - i0 < c->per ? (int)(c->n - i0) : c->per;
    if (c->op == TIDE_OP_RANDOM_UNIFORM) {
      if (tide_dtype_is_int(c->dt)) {
        for (int j = 0; j < m; j++) {
          uint64_t x = tide_join64(w[2 * j], w[2 * j + 1]);
          store_int(c->data, i0 + j, c->dt, (int64_t)((uint64_t)c->imin + x % c->irange));
        }
      } else if (c->dt == TIDE_FLOAT64) {
        for (int j = 0; j < m; j++) {
          double u = tide_u53(tide_join64(w[2 * j], w[2 * j + 1]));
          store_float(c->data, i0 + j, c->dt, tide_affine_f64(c->a, c->b - c->a, u), c->below, c->b);
        }
      } else if (c->dt == TIDE_FLOAT32) { /* the common case, in float as TF computes it */
        float lo = (float)c->a, range = (float)(c->b - c->a), hi = (float)c->b, top = c->top;
        float *o = (float *)c->data + i0;
        for (int j = 0; j < m; j++) {
          float v = tide_affine_f32(lo, range, tide_u24(w[j]));
          o[j] = c->below && v >= hi ? top : v;
        }
      } else {
        for (int j = 0; j < m; j++)
          store_float(c->data, i0 + j, c->dt, tide_affine_f64(c->a, c->b - c->a, (double)tide_u24(w[j])), c->below,
                      c->b);
      }
      continue;
    }
    /* normal and truncated normal */
    double z[4];
    if (c->dt == TIDE_FLOAT64) {
      tide_normals_f64(w, z);
    } else {
      float zf[4];
      tide_normals_f32(w, zf);
      for (int j = 0; j < 4; j++) z[j] = zf[j];
    }
    for (int j = 0; j < m; j++) {
      double v = c->op == TIDE_OP_TRUNCATED_NORMAL
                   ? tide_truncated_normal(c->key, c->counter + (uint64_t)b, j, c->dt == TIDE_FLOAT64, z[j])
                   : z[j];
      store_float(c->data, i0 + j, c->dt, tide_affine_f64(c->a, c->b, v), false, 0);
    }
  }
}

tide_status tide_cpu_random(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  rng_ctx c = {def->id, o->dt, tide_random_per_block(def->id, o->dt), o->data, o->nelem, attrs->rng_key,
               attrs->rng_counter, attrs->scalars[0], attrs->scalars[1], false, 0, 0, 0};
  if (def->id == TIDE_OP_RANDOM_UNIFORM) {
    if (tide_dtype_is_int(o->dt)) { /* bounds checked by inference */
      c.imin = (int64_t)attrs->scalars[0];
      c.irange = (uint64_t)(int64_t)attrs->scalars[1] - (uint64_t)c.imin;
    } else {
      c.below = c.b > c.a; /* TF does not check float bounds; [min, max) holds when max > min */
      c.top = nextafterf((float)c.b, -INFINITY);
    }
  }
  int64_t blocks = (int64_t)tide_random_counters(def->id, o->dt, o->nelem);
  tide_parallel_for(blocks, TIDE_GRAIN_COSTLY / 4, rng_blocks, &c);
  return TIDE_OK;
}

/* ---- shuffle ------------------------------------------------------------------------ */

typedef struct shuffle_ctx {
  const int64_t *perm;
  const char *src;
  char *dst;
  size_t row_bytes;
} shuffle_ctx;

#define COPY_ROWS(T)                                                                 \
  for (int64_t r = begin; r < end; r++) ((T *)c->dst)[r] = ((const T *)c->src)[c->perm[r]]

/* Output rows [begin, end) of a shuffle: row r is input row perm[r]. */
static void shuffle_rows(void *arg, int64_t begin, int64_t end) {
  const shuffle_ctx *c = arg;
  switch (c->row_bytes) { /* one-element rows (the common 1-D case) without memcpy calls */
  case 1: COPY_ROWS(uint8_t); break;
  case 2: COPY_ROWS(uint16_t); break;
  case 4: COPY_ROWS(uint32_t); break;
  case 8: COPY_ROWS(uint64_t); break;
  default:
    for (int64_t r = begin; r < end; r++)
      memcpy(c->dst + (size_t)r * c->row_bytes, c->src + (size_t)c->perm[r] * c->row_bytes, c->row_bytes);
  }
}

/* Output row r is input row perm[r]: a Fisher-Yates shuffle whose i-th swap
 * draws 64 bits from block counter + i / 2, so the permutation depends only
 * on (key, counter), never on the thread count. */
tide_status tide_cpu_shuffle(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                             const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  if (x->ndim == 0 || x->dims[0] <= 1 || o->nelem == 0) return tide_copy_strided(def->name, o, x);
  int64_t rows = x->dims[0];
  tide_tensor tmp;
  const tide_tensor *xc;
  tide_status st = tide_contiguous_or_copy(def->name, x, &tmp, &xc);
  if (st) {
    tide_tensor_release(&tmp);
    return st;
  }
  const char *src = xc->data;
  int64_t *perm = malloc((size_t)rows * sizeof *perm);
  if (!perm) {
    tide_tensor_release(&tmp);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a permutation of %lld rows", def->name,
                     (long long)rows);
  }
  for (int64_t r = 0; r < rows; r++) perm[r] = r;
  uint32_t w[4];
  for (int64_t i = rows - 1; i > 0; i--) {
    if (i == rows - 1 || i % 2 == 1) tide_philox(attrs->rng_key, attrs->rng_counter + (uint64_t)(i / 2), 0, w);
    int h = (int)(i % 2);
    int64_t j = (int64_t)(tide_join64(w[2 * h], w[2 * h + 1]) % (uint64_t)(i + 1));
    int64_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  shuffle_ctx c = {perm, src, o->data, (size_t)(o->nelem / rows) * tide_dtype_size_unchecked(o->dt)};
  int64_t grain = (int64_t)(TIDE_GRAIN_CHEAP * 4 / (c.row_bytes ? c.row_bytes : 1)) + 1;
  tide_parallel_for(rows, grain, shuffle_rows, &c);
  free(perm);
  tide_tensor_release(&tmp);
  return TIDE_OK;
}

/* ---- stateless draws (TF's stateless_random_uniform) --------------------------------- */

/* TF's GenerateKey: one Philox block of the seed pair under a fixed key gives
 * the key and the high counter words; the low words count the blocks. */
#define TF_SEED_KEY ((uint64_t)0x02461e29u << 32 | 0x3ec8f720u)

typedef struct stateless_ctx {
  int dt;
  bool full; /* integers: every value (TF's full-range form) */
  void *data;
  int64_t n, per;
  uint64_t key, counter_hi;
  int64_t lo;
  uint64_t range;
} stateless_ctx;

/* Blocks [b0, b1): TF's conversions (random_distributions.h): a float's
 * mantissa bits from one word (two for float64), an integer lo + bits % range. */
static void stateless_blocks(void *arg, int64_t b0, int64_t b1) {
  const stateless_ctx *c = arg;
  for (int64_t b = b0; b < b1; b++) {
    uint32_t w[4];
    tide_philox4x32(c->key, (uint64_t)b, c->counter_hi, w);
    int64_t i0 = b * c->per;
    int m = c->n - i0 < c->per ? (int)(c->n - i0) : (int)c->per;
    for (int j = 0; j < m; j++) {
      int64_t i = i0 + j;
      switch (c->dt) {
      case TIDE_FLOAT32: ((float *)c->data)[i] = (float)(w[j] & 0x7fffffu) * 0x1p-23f; break;
      case TIDE_FLOAT16: ((uint16_t *)c->data)[i] = tide_float_to_half((float)(w[j] & 0x3ffu) * 0x1p-10f); break;
      case TIDE_BFLOAT16: ((uint16_t *)c->data)[i] = tide_float_to_bfloat16((float)(w[j] & 0x7fu) * 0x1p-7f); break;
      case TIDE_FLOAT64:
        ((double *)c->data)[i] = (double)(tide_join64(w[2 * j] & 0xfffffu, w[2 * j + 1])) * 0x1p-52;
        break;
      case TIDE_INT32:
        ((int32_t *)c->data)[i] = c->full ? (int32_t)w[j] : (int32_t)(c->lo + (int64_t)(w[j] % (uint32_t)c->range));
        break;
      default: { /* int64: two words, the first the low half */
        uint64_t bits = (uint64_t)w[2 * j] | (uint64_t)w[2 * j + 1] << 32;
        ((int64_t *)c->data)[i] = c->full ? (int64_t)bits : (int64_t)((uint64_t)c->lo + bits % c->range);
      }
      }
    }
  }
}

tide_status tide_cpu_stateless_random(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *seed = in[0];
  tide_tensor *o = out[0];
  uint64_t s[2];
  for (int k = 0; k < 2; k++) {
    const char *p = (const char *)seed->data + k * seed->strides[0] * (int64_t)tide_dtype_size_unchecked(seed->dt);
    s[k] = seed->dt == TIDE_INT32 ? (uint64_t)(int64_t)*(const int32_t *)p : (uint64_t)*(const int64_t *)p;
  }
  uint32_t mix[4];
  tide_philox4x32(TF_SEED_KEY, s[0], s[1], mix);
  int dt = o->dt;
  bool wide = dt == TIDE_FLOAT64 || dt == TIDE_INT64;
  stateless_ctx c = {dt, attrs->n == 1, o->data, o->nelem, wide ? 2 : 4, tide_join64(mix[1], mix[0]), tide_join64(mix[3], mix[2]),
                     0, 0};
  if (tide_dtype_is_int(dt) && !c.full) { /* bounds checked by inference */
    c.lo = (int64_t)attrs->scalars[0];
    c.range = (uint64_t)(int64_t)attrs->scalars[1] - (uint64_t)c.lo;
  }
  int64_t blocks = (c.n + c.per - 1) / c.per;
  tide_parallel_for(blocks, TIDE_GRAIN_COSTLY / 4, stateless_blocks, &c);
  return TIDE_OK;
}
