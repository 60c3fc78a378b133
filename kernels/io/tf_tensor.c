/* io/tf_tensor.c — TF's TensorProto (a Const node's value, an attribute) as a
 * tide tensor: sizes checked before allocating, TF's rule for short value lists. */
#include "tf_internal.h"
#include "tensor_bundle_internal.h"
#include "tide/strings.h"

#include <inttypes.h>
#include <string.h>

/* TF refuses a constant past 2 GiB (a GraphDef's own limit). */
#define TF_MAX_CONST_BYTES ((int64_t)1 << 31)

int tf_dtype_to_tide(int tf_dtype) { return tensor_bundle_tide_dtype(tf_dtype); }
const char *tf_dtype_name(int tf_dtype) { return tensor_bundle_tf_name(tf_dtype); }

/* The typed list of p that holds dtype dt's values, as (count, fetch). */
static size_t typed_count(const Tensorflow__TensorProto *p, int dt) {
  switch (dt) {
  case TIDE_FLOAT32: return p->n_float_val;
  case TIDE_FLOAT64: return p->n_double_val;
  case TIDE_INT32: case TIDE_INT8: case TIDE_UINT8: return p->n_int_val;
  case TIDE_INT64: return p->n_int64_val;
  case TIDE_BOOL: return p->n_bool_val;
  case TIDE_FLOAT16: case TIDE_BFLOAT16: return p->n_half_val;
  default: return 0;
  }
}

/* Element i of the typed list (i < count) stored at dst. */
static void typed_store(const Tensorflow__TensorProto *p, int dt, size_t i, unsigned char *dst) {
  switch (dt) {
  case TIDE_FLOAT32: memcpy(dst, &p->float_val[i], 4); break;
  case TIDE_FLOAT64: memcpy(dst, &p->double_val[i], 8); break;
  case TIDE_INT32: memcpy(dst, &p->int_val[i], 4); break;
  case TIDE_INT8: *(int8_t *)dst = (int8_t)p->int_val[i]; break;
  case TIDE_UINT8: *dst = (uint8_t)p->int_val[i]; break;
  case TIDE_INT64: memcpy(dst, &p->int64_val[i], 8); break;
  case TIDE_BOOL: *dst = p->bool_val[i] ? 1 : 0; break;
  default: { uint16_t h = (uint16_t)p->half_val[i]; memcpy(dst, &h, 2); break; }
  }
}

/* A string constant (string_val: one per element, or fewer, TF repeating the last). Its bytes count against
 * the same 2 GiB as a numeric constant's. */
static tide_status strings_from_proto(const Tensorflow__TensorProto *p, const char *what, int nd, const int64_t *dims,
                                      int64_t nelem, tide_tensor *out) {
  size_t count = p->n_string_val;
  if (count > (size_t)nelem)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has %zu strings for %" PRId64 " elements", what, count, nelem);
  int64_t total = 0;
  for (size_t i = 0; i < count; i++) total += (int64_t)p->string_val[i].len;
  if (count > 0 && (int64_t)p->string_val[count - 1].len * (nelem - (int64_t)count) > TF_MAX_CONST_BYTES - total)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s is a string constant past 2 GiB", what);
  tide_status st = tide_tensor_init(out, TIDE_STRING, nd, dims);
  for (int64_t i = 0; !st && count > 0 && i < nelem; i++) {
    const ProtobufCBinaryData *s = &p->string_val[(size_t)i < count ? (size_t)i : count - 1];
    st = tide_string_set(out, i, (const char *)s->data, (int64_t)s->len);
  }
  if (st) tide_tensor_release(out);
  return st;
}

tide_status tf_tensor_from_proto(const Tensorflow__TensorProto *p, const char *what, tide_tensor *out) {
  if (!p) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has no tensor value", what);
  int dt = tf_dtype_to_tide(p->dtype);
  if (dt < 0)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "TF SavedModel: %s is a constant of dtype %s, which tide does not import", what,
                     tf_dtype_name(p->dtype));
  const Tensorflow__TensorShapeProto *s = p->tensor_shape;
  if (s && s->unknown_rank) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has a constant of unknown rank", what);
  size_t nd = s ? s->n_dim : 0;
  if (nd > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "TF SavedModel: %s has a constant of rank %zu; tide takes at most %d", what, nd,
                     TIDE_MAX_DIMS);
  int64_t dims[TIDE_MAX_DIMS], nelem = 1, esize = (int64_t)tide_dtype_size(dt);
  for (size_t k = 0; k < nd; k++) {
    dims[k] = s->dim[k]->size;
    if (dims[k] < 0 || __builtin_mul_overflow(nelem, dims[k], &nelem) || nelem > TF_MAX_CONST_BYTES / esize)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has a constant of impossible shape (dim %zu is %" PRId64 ")",
                       what, k, dims[k]);
  }
  if (dt == TIDE_STRING) return strings_from_proto(p, what, (int)nd, dims, nelem, out);
  size_t bytes = (size_t)(nelem * esize);
  size_t count = typed_count(p, dt);
  if (p->tensor_content.len > 0 && p->tensor_content.len != bytes)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has %zu bytes of tensor content for %" PRId64
                     " elements of %s", what, p->tensor_content.len, nelem, tide_dtype_name(dt));
  if (p->tensor_content.len == 0 && count > (size_t)nelem)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has %zu values for %" PRId64 " elements", what, count, nelem);
  tide_status st = tide_tensor_init(out, dt, (int)nd, dims);
  if (st) return st;
  unsigned char *dst = out->data;
  if (p->tensor_content.len > 0) {
    memcpy(dst, p->tensor_content.data, bytes);
    if (dt == TIDE_BOOL)
      for (size_t i = 0; i < bytes; i++) dst[i] = dst[i] != 0;
  } else if (count == 0) {
    memset(dst, 0, bytes);
  } else { /* TF repeats the last value to fill the shape */
    for (int64_t i = 0; i < nelem; i++)
      typed_store(p, dt, (size_t)i < count ? (size_t)i : count - 1, dst + i * esize);
  }
  return TIDE_OK;
}
