/* core/copy.c — writing one host tensor's elements into another: copy_into
 * (how `x[i] = v` writes), assign (a Variable's new values, copy-on-write)
 * and the contiguous-or-copy helper, all through the CPU backend's COPY kernel. */
#include "backend.h"

#include <string.h>

/* Copy src into dst (same dtype, src broadcast to dst's shape) with the CPU
 * backend's COPY kernel, its errors naming `op`: core owns no loops. */
static tide_status copy_strided(const char *op, tide_tensor *dst, const tide_tensor *src) {
  tide_op_def named = tide_op_defs[TIDE_OP_COPY];
  named.name = op;
  return tide_cpu_backend.kernels[TIDE_OP_COPY](&named, &tide_default_attrs, 1, &src, 1, &dst);
}

/* True when the byte ranges two tensors can touch overlap. */
static bool may_overlap(const tide_tensor *a, const tide_tensor *b) {
  if (a->storage && a->storage == b->storage) return true;
  return a->data == b->data && a->nelem > 0;
}

tide_status tide_tensor_copy_into(tide_tensor *dst, const tide_tensor *src) {
  if (!dst || !src) return TIDE_FAIL(TIDE_ERR_VALUE, "copy_into: NULL tensor");
  if (TIDE_UNLIKELY((dst->dev | src->dev) != TIDE_CPU)) /* the CPU's kernel reads host memory */
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "copy_into: in-place writes into or from a GPU tensor are not supported "
                     "yet (move it with :cpu())");
  if ((dst->flags | src->flags) & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_VALUE, "copy_into: cannot write into or from a symbolic tensor of a traced function "
                                     "(in a trace, build new values: tide.slice_update, tide.where)");
  if (dst->dt != src->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "copy_into: dtype mismatch: destination is %s but value is %s (use :cast)",
                     tide_dtype_name(dst->dt), tide_dtype_name(src->dt));
  /* A broadcast destination would take several values in one element, from
   * several threads at once for a large copy. */
  for (int d = 0; d < dst->ndim; d++)
    if (dst->strides[d] == 0 && dst->dims[d] > 1) {
      char sd[128];
      return TIDE_FAIL(TIDE_ERR_VALUE,
                       "copy_into: the destination has shape %s but dimension %d repeats its elements (stride 0, a "
                       "broadcast view); write into a tensor of its own", TIDE_SHAPE_STR(sd, dst), d);
    }
  if (dst->dt == TIDE_STRING) return tide_strings_copy_into(dst, src); /* counts references */
  if (!may_overlap(dst, src)) return copy_strided("copy_into", dst, src);
  /* Source and destination share memory: go through a temporary. */
  tide_tensor tmp;
  memset(&tmp, 0, sizeof tmp);
  tide_status st = tide_tensor_init(&tmp, src->dt, src->ndim, src->dims);
  if (!st) st = copy_strided("copy_into", &tmp, src);
  if (!st) st = copy_strided("copy_into", dst, &tmp);
  tide_tensor_release(&tmp);
  return st;
}

tide_status tide_tensor_assign(tide_tensor *var, const tide_tensor *value) {
  if (!var || !value) return TIDE_FAIL(TIDE_ERR_VALUE, "assign: NULL tensor");
  if (TIDE_UNLIKELY((var->dev | value->dev) != TIDE_CPU))
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "assign: variables on a GPU are not supported yet (move the value with :cpu())");
  if ((var->flags | value->flags) & TIDE_TENSOR_SYMBOLIC)
    return TIDE_FAIL(TIDE_ERR_VALUE, "assign: a symbolic tensor cannot be assigned eagerly");
  char sv[128], sx[128];
  if (var->dt != value->dt)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "assign: the variable is %s but the value is %s (use :cast)",
                     tide_dtype_name(var->dt), tide_dtype_name(value->dt));
  bool same = var->ndim == value->ndim;
  for (int i = 0; same && i < var->ndim; i++) same = var->dims[i] == value->dims[i];
  if (!same)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "assign: the variable has shape %s but the value has shape %s",
                     TIDE_SHAPE_STR(sv, var), TIDE_SHAPE_STR(sx, value));
  if (var->storage && tide_tensor_storage_refs(var) > 1) {
    /* Someone still reads the old values: move to a storage of our own. */
    tide_tensor fresh;
    memset(&fresh, 0, sizeof fresh);
    tide_status st = tide_tensor_init_heap(&fresh, var->dt, var->ndim, var->dims);
    if (!st) st = var->dt == TIDE_STRING ? tide_strings_copy_into(&fresh, value) : copy_strided("assign", &fresh, value);
    if (st) {
      tide_tensor_release(&fresh);
      return st;
    }
    if (tide_tensor_is_variable_data(var)) fresh.storage->flags |= TIDE_STORAGE_VARIABLE;
    tide_tensor_release(var);
    memcpy(var, &fresh, sizeof fresh); /* heap data: the header moves freely */
    return TIDE_OK;
  }
  return tide_tensor_copy_into(var, value);
}

tide_status tide_contiguous_or_copy(const char *op, const tide_tensor *x, tide_tensor *tmp, const tide_tensor **use) {
  memset(tmp, 0, sizeof *tmp);
  *use = x;
  if (tide_tensor_is_contiguous(x)) return TIDE_OK;
  tide_status st = tide_tensor_init(tmp, x->dt, x->ndim, x->dims);
  if (!st) st = copy_strided(op, tmp, x);
  *use = tmp;
  return st;
}
