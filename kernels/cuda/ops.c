/* cuda/ops.c — the op kernels' C side on the GPU: read the registry's headers
 * and attributes, build the iteration (broadcast strides), call the launchers. */
#include "cuda_internal.h"
#include "../core/formulas.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

tide_status tcu_launched(int r, const tide_op_def *def, int dt) {
  if (r == 0) return TIDE_OK;
  if (r == TCU_UNSUPPORTED)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: no CUDA kernel for %s yet (move the inputs with :cpu())", def->name,
                     tide_dtype_name(dt));
  char what[96];
  snprintf(what, sizeof what, "%s on the GPU", def->name);
  return tcu_fail((cudaError_t)r, what);
}

/* Input t of a contiguous output o, as the iteration walks it: numpy
 * broadcasting aligns trailing dims; a size-1 dim repeats (stride 0). */
static void add_input(tcu_iter *it, const tide_tensor *o, const tide_tensor *t) {
  int k = it->n_in++;
  it->in[k] = t->data;
  if (t->nelem == 1) {
    it->mode[k] = TCU_SCALAR;
    return;
  }
  if (t->nelem == o->nelem && tide_tensor_is_contiguous(t)) {
    it->mode[k] = TCU_LINEAR;
    return;
  }
  it->mode[k] = TCU_STRIDED;
  for (int d = 0; d < o->ndim; d++) {
    int td = d - (o->ndim - t->ndim);
    it->strides[k][d] = td < 0 || t->dims[td] == 1 ? 0 : t->strides[td];
  }
}

static void begin_iter(tcu_iter *it, tide_tensor *o) {
  memset(it, 0, sizeof *it);
  it->ndim = o->ndim;
  it->n = o->nelem;
  for (int d = 0; d < o->ndim; d++) it->dims[d] = o->dims[d];
  it->out = o->data;
}

/* The GPU of an op's output (the registry allocated it there). */
static tcu_device *device_of(const tide_tensor *o) { return tcu_device_get(tcu_ordinal(o)); }

TCU_KERNEL(tcu_k_unary) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tcu_device *d = device_of(out[0]);
  if (!d) return tide_last_status();
  tcu_iter it;
  begin_iter(&it, out[0]);
  add_input(&it, out[0], in[0]);
  int r = tcu_unary(d->stream, def->id, in[0]->dt, out[0]->dt, &it, attrs->scalars[0],
                    (attrs->flags & TIDE_ATTR_APPROXIMATE) != 0);
  return tcu_launched(r, def, in[0]->dt);
}

/* Ops whose integer forms can divide by zero or raise to a negative power. */
static bool may_flag(int op, int dt) {
  if (!tide_dtype_is_int(dt)) return false;
  return op == TIDE_OP_FLOORDIV || op == TIDE_OP_MOD || op == TIDE_OP_POW || op == TIDE_OP_TRUNCATEDIV ||
         op == TIDE_OP_TRUNCATEMOD;
}

TCU_KERNEL(tcu_k_binary) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tcu_device *d = device_of(out[0]);
  if (!d) return tide_last_status();
  if (in[0]->dt == TIDE_STRING) return tcu_launched(TCU_UNSUPPORTED, def, TIDE_STRING);
  tcu_iter it;
  begin_iter(&it, out[0]);
  add_input(&it, out[0], in[0]);
  add_input(&it, out[0], in[1]);
  bool flags = may_flag(def->id, in[0]->dt);
  cudaError_t e = flags ? cudaMemsetAsync(d->bad, 0, sizeof(int), d->stream) : cudaSuccess;
  if (e) return tcu_fail(e, def->name);
  tide_status st = tcu_launched(tcu_binary(d->stream, def->id, in[0]->dt, out[0]->dt, &it, d->bad), def, in[0]->dt);
  if (st || !flags) return st;
  /* The CPU's errors need the flag now: this waits for the kernel (integer division only). */
  int bad = 0;
  e = cudaMemcpyAsync(&bad, d->bad, sizeof bad, cudaMemcpyDeviceToHost, d->stream);
  if (!e) e = cudaStreamSynchronize(d->stream);
  if (e) return tcu_fail(e, def->name);
  if (bad & TIDE_BAD_DIV_ZERO) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integer division by zero", def->name);
  if (bad & TIDE_BAD_NEG_POW)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: integers to negative integer powers are not allowed (cast to float)",
                     def->name);
  return TIDE_OK;
}

/* where (cond, x, y) and clip (x, lo, hi): three broadcast inputs. */
static tide_status ternary(const tide_op_def *def, const tide_tensor *const *in, tide_tensor *o, bool is_where) {
  tcu_device *d = device_of(o);
  if (!d) return tide_last_status();
  tcu_iter it;
  begin_iter(&it, o);
  for (int i = 0; i < 3; i++) add_input(&it, o, in[i]);
  int r = is_where ? tcu_where(d->stream, o->dt, &it) : tcu_clip(d->stream, o->dt, &it);
  return tcu_launched(r, def, o->dt);
}

TCU_KERNEL(tcu_k_where) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return ternary(def, in, out[0], true);
}

TCU_KERNEL(tcu_k_clip) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  return ternary(def, in, out[0], false);
}

/* cast and copy (a cast to the same dtype); the output is contiguous. */
TCU_KERNEL(tcu_k_cast) {
  TIDE_UNUSED(attrs), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  if (!tide_tensor_is_contiguous(o))
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "%s: a GPU copy writes contiguous outputs only", def->name);
  tcu_device *d = device_of(o);
  if (!d) return tide_last_status();
  if (in[0]->dt == TIDE_STRING || o->dt == TIDE_STRING) return tcu_launched(TCU_UNSUPPORTED, def, TIDE_STRING);
  tcu_iter it;
  begin_iter(&it, o);
  add_input(&it, o, in[0]);
  if (in[0]->dt == o->dt && it.mode[0] == TCU_LINEAR) { /* a plain copy */
    cudaError_t e = cudaMemcpyAsync(o->data, in[0]->data, (size_t)o->nelem * tide_dtype_size(o->dt),
                                    cudaMemcpyDeviceToDevice, d->stream);
    return e ? tcu_fail(e, def->name) : TIDE_OK;
  }
  return tcu_launched(tcu_cast(d->stream, in[0]->dt, o->dt, &it), def, in[0]->dt);
}

/* ---- reductions ---- */

TCU_KERNEL(tcu_k_reduce) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  tcu_device *d = device_of(o);
  if (!d) return tide_last_status();
  int k = tcu_ordinal(o), nd = x->ndim;
  bool mask[TIDE_MAX_DIMS] = {0};
  tide_status st = tcu_host->reduce_axes(def, attrs, nd, mask);
  if (st) return st;
  /* A contiguous x whose reduced axes are one run [a, b) is [outer, r, inner] as it is. */
  int a = 0, b = 0, runs = 0;
  for (int i = 0; i < nd; i++)
    if (mask[i] && (i == 0 || !mask[i - 1])) runs++, a = i;
  for (int i = 0; i < nd; i++)
    if (mask[i]) b = i + 1;
  int64_t outer = 1, r = 1, inner = 1;
  if (runs <= 1 && tide_tensor_is_contiguous(x)) {
    for (int i = 0; i < nd; i++) *(i < a ? &outer : i < b ? &r : &inner) *= x->dims[i];
    return tcu_launched(tcu_reduce(d->stream, def->id, x->dt, x->data, o->data, outer, r, inner), def, x->dt);
  }
  /* Otherwise copy x with the kept axes first and the reduced ones last: [outer, r, 1]. */
  tcu_iter it;
  memset(&it, 0, sizeof it);
  it.n = x->nelem;
  it.n_in = 1;
  it.in[0] = x->data;
  it.mode[0] = TCU_STRIDED;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < nd; i++)
      if (mask[i] == (pass == 1)) {
        it.dims[it.ndim] = x->dims[i];
        it.strides[0][it.ndim++] = x->strides[i];
        *(pass ? &r : &outer) *= x->dims[i];
      }
  size_t nbytes = (size_t)x->nelem * tide_dtype_size(x->dt);
  void *tmp = NULL;
  st = tcu_alloc(k, nbytes ? nbytes : 1, &tmp);
  if (st) return st;
  it.out = tmp;
  st = tcu_launched(tcu_cast(d->stream, x->dt, x->dt, &it), def, x->dt);
  if (!st) st = tcu_launched(tcu_reduce(d->stream, def->id, x->dt, tmp, o->data, outer, r, 1), def, x->dt);
  tcu_free(k, tmp, nbytes ? nbytes : 1); /* stream-ordered: after the reduction has read it */
  return st;
}

/* ---- random ---- */

TCU_KERNEL(tcu_k_random) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  tcu_device *d = device_of(o);
  if (!d) return tide_last_status();
  tcu_random c = {def->id, o->dt, o->nelem, attrs->rng_key, attrs->rng_counter, attrs->scalars[0], attrs->scalars[1],
                  0, 0, 0, 0};
  if (def->id == TIDE_OP_RANDOM_UNIFORM) { /* as cpu/random.c's tide_cpu_random */
    if (tide_dtype_is_int(o->dt)) {
      c.imin = (int64_t)attrs->scalars[0];
      c.irange = (uint64_t)(int64_t)attrs->scalars[1] - (uint64_t)c.imin;
    } else {
      c.below = c.b > c.a;
      c.top = nextafterf((float)c.b, -INFINITY);
    }
  }
  return tcu_launched(tcu_random_fill(d->stream, &c, o->data), def, o->dt);
}
