/* io/onnx_tensor.c — ONNX's TensorProto as a tide tensor (typed fields, raw
 * bytes, or external data in a file beside the model), and node attributes. */
#include "onnx_internal.h"
#include "file_bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- attributes ------------------------------------------------------------------- */

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *key) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && !strcmp(n->attribute[i]->name, key)) return n->attribute[i];
  return NULL;
}

int64_t onnx_attr_i(const Onnx__NodeProto *n, const char *key, int64_t dflt) {
  const Onnx__AttributeProto *a = onnx_attr(n, key);
  return a && a->has_i ? a->i : dflt;
}

double onnx_attr_f(const Onnx__NodeProto *n, const char *key, double dflt) {
  const Onnx__AttributeProto *a = onnx_attr(n, key);
  return a && a->has_f ? a->f : dflt;
}

const char *onnx_attr_s(const Onnx__NodeProto *n, const char *key, size_t *len) {
  const Onnx__AttributeProto *a = onnx_attr(n, key);
  bool ok = a && a->has_s;
  *len = ok ? a->s.len : 0;
  return ok ? (const char *)a->s.data : "";
}

bool onnx_attr_is(const Onnx__NodeProto *n, const char *key, const char *want) {
  size_t len;
  const char *s = onnx_attr_s(n, key, &len);
  return onnx_attr(n, key) && len == strlen(want) && !memcmp(s, want, len);
}

tide_status onnx_attr_ints(const Onnx__NodeProto *n, const char *key, int64_t *buf, int max, int *count) {
  const Onnx__AttributeProto *a = onnx_attr(n, key);
  *count = -1;
  if (!a) return TIDE_OK;
  if (a->n_ints > (size_t)max) return TIDE_FAIL(TIDE_ERR_VALUE, "its attribute %s has %zu values; tide takes at most %d", key, a->n_ints, max);
  for (size_t i = 0; i < a->n_ints; i++) buf[i] = a->ints[i];
  *count = (int)a->n_ints;
  return TIDE_OK;
}

/* ---- dtypes ------------------------------------------------------------------------ */

int onnx_dtype_to_tide(int d) {
  switch (d) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return TIDE_FLOAT32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return TIDE_FLOAT64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return TIDE_FLOAT16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return TIDE_BFLOAT16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return TIDE_INT8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return TIDE_UINT8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return TIDE_INT32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return TIDE_INT64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return TIDE_BOOL;
    default: return -1;
  }
}

const char *onnx_dtype_name(int d) {
  static const char *const N[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                  "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                  "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                  "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2",
                                  "FLOAT6E2M3", "FLOAT6E3M2"};
  return d >= 0 && (size_t)d < sizeof N / sizeof N[0] ? N[d] : "an unknown data type";
}

/* ---- values -------------------------------------------------------------------------- */

/* Read `len` bytes at `off` of the external file `loc` (relative, inside the model's
 * folder) into dst. */
static tide_status read_external(const char *dir, const char *what, const char *loc, int64_t off, int64_t len,
                                 void *dst) {
  if (!loc || !*loc || loc[0] == '/' || strstr(loc, "..") || strlen(loc) > 1024)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: its external data location '%s' is not a file name inside the model's folder",
                     what, loc ? loc : "");
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, loc);
  tide_status st = tide_file_check(path, false);
  if (st) return st;
  int fd = tide_file_open(path, O_RDONLY, 0);
  if (fd < 0) return TIDE_FAIL(TIDE_ERR_IO, "%s: cannot read its external data %s: %s", what, path, tide_file_why());
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) st = TIDE_FAIL(TIDE_ERR_IO, "%s: %s is not a regular file", what, path);
  else if (off < 0 || len < 0 || off > (int64_t)sb.st_size || len > (int64_t)sb.st_size - off)
    st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: its external data (%" PRId64 " bytes at offset %" PRId64 ") runs past the end of %s "
                   "(%lld bytes)", what, len, off, path, (long long)sb.st_size);
  else if (len > 0 && file_pread_all(fd, dst, (size_t)len, (uint64_t)off) != 0)
    st = TIDE_FAIL(TIDE_ERR_IO, "%s: cannot read %s: %s", what, path, errno ? strerror(errno) : "it shrank");
  close(fd);
  return st;
}

static tide_status external_data(const Onnx__TensorProto *p, const char *dir, const char *what, size_t want, void *dst) {
  const char *loc = NULL;
  int64_t off = 0, len = -1;
  for (size_t i = 0; i < p->n_external_data; i++) {
    const char *k = p->external_data[i]->key, *v = p->external_data[i]->value;
    if (!k || !v) continue;
    char *end;
    errno = 0;
    if (!strcmp(k, "location")) loc = v;
    else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
      long long x = strtoll(v, &end, 10);
      if (*v == '\0' || *end != '\0' || errno || x < 0)
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s: its external data %s '%s' is not a count", what, k, v);
      if (!strcmp(k, "offset")) off = x;
      else len = x;
    }
  }
  if (len >= 0 && (uint64_t)len != want)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: its external data has %" PRId64 " bytes; its shape and dtype need %zu", what,
                     len, want);
  return read_external(dir, what, loc, off, (int64_t)want, dst);
}

tide_status onnx_tensor_from_proto(const Onnx__TensorProto *p, const char *dir, const char *what, tide_tensor *out) {
  int od = p->has_data_type ? p->data_type : 0;
  int dt = onnx_dtype_to_tide(od);
  if (dt < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: data type %s (%d) is not one tide reads", what, onnx_dtype_name(od), od);
  if (p->n_dims > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: rank %zu; tide takes at most %d", what, p->n_dims, TIDE_MAX_DIMS);
  if (p->segment) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: a segment of a tensor, which tide does not read", what);
  int64_t n = 1;
  for (size_t d = 0; d < p->n_dims; d++) {
    if (p->dims[d] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dim %zu is negative (%" PRId64 ")", what, d, p->dims[d]);
    if (p->dims[d] > 0 && n > INT64_MAX / 16 / p->dims[d])
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: its size overflows", what);
    n *= p->dims[d];
  }
  size_t es = tide_dtype_size(dt), bytes = (size_t)n * es;
  bool external = p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  /* what the file holds must match the shape before anything is allocated */
  size_t have = 0;
  const char *field = "raw_data";
  if (external) have = (size_t)n; /* checked against the file when read */
  else if (p->has_raw_data) have = p->raw_data.len / es * (p->raw_data.len % es == 0);
  else if (dt == TIDE_FLOAT32) have = p->n_float_data, field = "float_data";
  else if (dt == TIDE_FLOAT64) have = p->n_double_data, field = "double_data";
  else if (dt == TIDE_INT64) have = p->n_int64_data, field = "int64_data";
  else have = p->n_int32_data, field = "int32_data";
  if (p->has_raw_data && !external && p->raw_data.len != bytes)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: raw_data has %zu bytes; shape and dtype %s need %zu (truncated?)", what,
                     p->raw_data.len, onnx_dtype_name(od), bytes);
  if (have != (size_t)n)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: %s holds %zu values; its shape needs %" PRId64, what, field, have, n);
  int64_t dims[TIDE_MAX_DIMS];
  for (size_t d = 0; d < p->n_dims; d++) dims[d] = p->dims[d];
  tide_status st = tide_tensor_init_heap(out, dt, (int)p->n_dims, dims);
  if (st) return st;
  unsigned char *dst = out->data;
  if (external) st = external_data(p, dir, what, bytes, dst);
  else if (p->has_raw_data) memcpy(dst, p->raw_data.data, bytes);
  else if (dt == TIDE_FLOAT32) memcpy(dst, p->float_data, bytes);
  else if (dt == TIDE_FLOAT64) memcpy(dst, p->double_data, bytes);
  else if (dt == TIDE_INT64) memcpy(dst, p->int64_data, bytes);
  else if (dt == TIDE_INT32) memcpy(dst, p->int32_data, bytes);
  else
    for (int64_t i = 0; i < n; i++) { /* int32_data holds each narrower value (16-bit floats by their bits) */
      int32_t v = p->int32_data[i];
      if (es == 1) dst[i] = dt == TIDE_BOOL ? (unsigned char)(v != 0) : (unsigned char)v;
      else ((uint16_t *)(void *)dst)[i] = (uint16_t)v;
    }
  if (st) tide_tensor_release(out);
  return st;
}
