/* cpu/create.c — the creation kernels: fill, range, linspace and eye, each
 * writing a fresh contiguous output; values convert to the dtype as cast does. */
#include "fill_value.h"
#include "../core/parallel.h"
#include "../core/registry.h"

#include <string.h>

/* Store double v as element i of contiguous buffer p of dtype dt (as cast converts). */
static inline void store_value(void *p, int64_t i, int dt, double v) {
  tide_fill_value_bytes(dt, v, (char *)p + i * (int64_t)tide_dtype_size_unchecked(dt));
}

/* ---- fill ------------------------------------------------------------------------ */

typedef struct fill_ctx {
  char *data;
  size_t es;
  uint64_t bits; /* one element's bytes */
} fill_ctx;

/* Elements [begin, end) of a fill: the element bytes repeated. */
static void fill_range(void *arg, int64_t begin, int64_t end) {
  const fill_ctx *c = arg;
  switch (c->es) {
  case 1: memset(c->data + begin, (int)c->bits, (size_t)(end - begin)); break;
  case 2: for (int64_t i = begin; i < end; i++) ((uint16_t *)c->data)[i] = (uint16_t)c->bits; break;
  case 4: for (int64_t i = begin; i < end; i++) ((uint32_t *)c->data)[i] = (uint32_t)c->bits; break;
  default: for (int64_t i = begin; i < end; i++) ((uint64_t *)c->data)[i] = c->bits; break;
  }
}

tide_status tide_cpu_fill(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                          int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  fill_ctx c = {o->data, tide_dtype_size_unchecked(o->dt), 0};
  store_value(&c.bits, 0, o->dt, attrs->scalars[0]); /* little-endian: the low bytes */
  tide_parallel_for(o->nelem, TIDE_GRAIN_CHEAP, fill_range, &c);
  return TIDE_OK;
}

/* ---- range ------------------------------------------------------------------------- */

typedef struct range_ctx {
  void *data;
  int dt;
  double fstart, fdelta;
  int64_t istart, idelta;
} range_ctx;

/* TF's RangeFunctor: element i is start + i * delta, computed in the dtype. */
static void range_part(void *arg, int64_t begin, int64_t end) {
  const range_ctx *c = arg;
  switch (c->dt) {
  case TIDE_FLOAT64:
    for (int64_t i = begin; i < end; i++) ((double *)c->data)[i] = c->fstart + (double)i * c->fdelta;
    break;
  case TIDE_FLOAT32: {
    float s = (float)c->fstart, d = (float)c->fdelta;
    for (int64_t i = begin; i < end; i++) ((float *)c->data)[i] = s + (float)i * d;
    break;
  }
  case TIDE_FLOAT16: case TIDE_BFLOAT16: {
    float s = (float)c->fstart, d = (float)c->fdelta;
    for (int64_t i = begin; i < end; i++) store_value(c->data, i, c->dt, s + (float)i * d);
    break;
  }
  default: /* exact: the values lie between start and limit, so they fit the dtype */
    for (int64_t i = begin; i < end; i++) {
      int64_t v = (int64_t)((uint64_t)c->istart + (uint64_t)i * (uint64_t)c->idelta);
      switch (c->dt) {
      case TIDE_INT8: ((int8_t *)c->data)[i] = (int8_t)v; break;
      case TIDE_UINT8: ((uint8_t *)c->data)[i] = (uint8_t)v; break;
      case TIDE_INT32: ((int32_t *)c->data)[i] = (int32_t)v; break;
      default: ((int64_t *)c->data)[i] = v; break;
      }
    }
  }
}

/* range (bounds in attrs) and range_dynamic (bounds in its three 0-d inputs,
 * checked by the inference that sized the output). */
tide_status tide_cpu_range(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  double start = attrs->scalars[0], delta = attrs->scalars[2];
  if (def->id == TIDE_OP_RANGE_DYNAMIC && n_in == 3) {
    start = tide_read_number(in[0]->data, in[0]->dt, 0);
    delta = tide_read_number(in[2]->data, in[2]->dt, 0);
  }
  range_ctx c = {o->data, o->dt, start, delta, 0, 0};
  if (tide_dtype_is_int(o->dt)) {
    c.istart = tide_sat_int(start, o->dt);
    c.idelta = tide_sat_int(delta, o->dt);
  }
  tide_parallel_for(o->nelem, TIDE_GRAIN_CHEAP, range_part, &c);
  return TIDE_OK;
}

/* ---- linspace ------------------------------------------------------------------------ */

/* TF's LinSpace: start + i * step with step = (stop - start) / (num - 1) in the
 * dtype, and the last value exactly stop. */
tide_status tide_cpu_linspace(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                              const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int64_t num = o->nelem;
  double start = attrs->scalars[0], stop = attrs->scalars[1];
  if (o->dt == TIDE_FLOAT64) {
    double *p = o->data, step = num > 1 ? (stop - start) / (double)(num - 1) : 0;
    for (int64_t i = 0; i < num - 1; i++) p[i] = start + step * (double)i;
  } else {
    float s = (float)start, step = num > 1 ? ((float)stop - s) / (float)(num - 1) : 0;
    for (int64_t i = 0; i < num - 1; i++) store_value(o->data, i, o->dt, s + step * (float)i);
  }
  store_value(o->data, num - 1, o->dt, num == 1 ? start : stop);
  return TIDE_OK;
}

/* ---- eye -------------------------------------------------------------------------------- */

tide_status tide_cpu_eye(const tide_op_def *def, const tide_attrs *attrs, int n_in, const tide_tensor *const *in,
                         int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  memset(o->data, 0, (size_t)o->nelem * tide_dtype_size_unchecked(o->dt));
  int64_t rows = o->dims[0], cols = o->dims[1], n = rows < cols ? rows : cols;
  for (int64_t i = 0; i < n; i++) store_value(o->data, i * cols + i, o->dt, 1.0);
  return TIDE_OK;
}
