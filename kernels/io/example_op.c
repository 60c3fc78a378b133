/* io/example_op.c — the registry ops that parse one feature of serialized
 * tf.train.Examples (parse_example_dense, parse_example_sparse), eager or as graph nodes.
 *
 * A feature spec is split as TF's ParseExampleV2 splits it: the feature's
 * name (and a FixedLen feature's default) are inputs, a 0-d string and a
 * tensor, which tracing captures as graph constants; the value dtype, shape
 * and flags are attributes. One op per feature: tide's ops have a fixed
 * number of outputs, and a spec's features give a varying number. Each op
 * unpacks the records again (protobuf-c unpacks whole messages), so a spec
 * of k features costs k unpacks per record.
 *
 * Attributes: dtype (int64, float32 or string: the values), ints = the
 * FixedLen shape, n = 1: errors say parse_single_example (else parse_example),
 * m = 1: the dense op's third input is the default (else it is ignored).
 * A serialized input of rank 1 is a batch: results get a leading dim and
 * errors name the example's index; rank 0 is one example. */
#include <stdlib.h>
#include <string.h>

#include "../core/infer_rank.h"
#include "../core/unknown_dims.h"
#include "tide/records.h"
#include "tide/strings.h"

static const char *op_label(const tide_attrs *a) { return a->n == 1 ? "parse_single_example" : "parse_example"; }

static int feature_type(int dt) {
  return dt == TIDE_INT64 ? TIDE_FEATURE_INT64 : dt == TIDE_FLOAT32 ? TIDE_FEATURE_FLOAT : dt == TIDE_STRING ? TIDE_FEATURE_BYTES : -1;
}

/* The checks both ops make of (serialized, key) and the attributes. */
static tide_status check_common(const tide_op_def *def, const tide_attrs *a, const tide_tensor *const *in) {
  char s[128];
  const char *op = op_label(a);
  if (in[0]->dt != TIDE_STRING || in[0]->ndim > 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s (%s): serialized must be a string tensor of rank 0 or 1, got a %s tensor of shape %s",
                     op, def->name, tide_dtype_name(in[0]->dt), TIDE_SHAPE_STR(s, in[0]));
  if (in[1]->dt != TIDE_STRING || in[1]->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s (%s): the feature name must be a scalar string tensor, got a %s tensor of shape %s",
                     op, def->name, tide_dtype_name(in[1]->dt), TIDE_SHAPE_STR(s, in[1]));
  if (feature_type(a->dtype) < 0)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s (%s): dtype must be int64, float32 or string (the value lists a tf.train.Example "
                     "holds), got %s", op, def->name, tide_dtype_name(a->dtype));
  return TIDE_OK;
}

tide_status tide_infer_parse_example(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                     int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_status st = check_common(def, a, in);
  if (st) return st;
  bool batch = in[0]->ndim == 1;
  int64_t n = batch ? in[0]->dims[0] : 1;
  const char *op = op_label(a);
  if (def->id == TIDE_OP_PARSE_EXAMPLE_SPARSE) {
    int64_t unknown = -1, idx[2] = {-1, batch ? 2 : 1}, rank = batch ? 2 : 1;
    tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 2, idx);
    tide_tensor_set_contiguous_layout(out[1], a->dtype, 1, &unknown);
    tide_tensor_set_contiguous_layout(out[2], TIDE_INT64, 1, &rank);
    return TIDE_OK;
  }
  if (a->nints + (batch ? 1 : 0) > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: a feature of rank %d passes the limit of %d dims", op, a->nints, TIDE_MAX_DIMS);
  int64_t dims[TIDE_MAX_DIMS], size = 1;
  int nd = 0;
  if (batch) dims[nd++] = n;
  for (int d = 0; d < a->nints; d++) {
    if (a->ints[d] < 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: a FixedLenFeature needs a fully defined shape, dim %d is %lld", op, d,
                       (long long)a->ints[d]);
    dims[nd++] = a->ints[d];
    size *= a->ints[d];
  }
  if (a->m == 1) {
    const tide_tensor *def_v = in[2];
    if (def_v->dt != a->dtype)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the default value is %s, the feature %s", op, tide_dtype_name(def_v->dt),
                       tide_dtype_name(a->dtype));
    if (def_v->nelem >= 0 && !tide_dims_any_unknown(def_v->ndim, def_v->dims) && def_v->nelem != size)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the default value has %lld values, the feature's shape needs %lld", op,
                       (long long)def_v->nelem, (long long)size);
  }
  tide_tensor_set_contiguous_layout(out[0], a->dtype, nd, dims);
  return TIDE_OK;
}

/* The serialized records of in as pointers and lengths (row-major, through
 * its strides), and the feature's name as a C string; the caller frees *ptrs. */
static tide_status records_of(const tide_attrs *a, const tide_tensor *ser, const tide_tensor *key,
                              const uint8_t ***ptrs, size_t **lens, const char **name) {
  int64_t klen;
  const char *k = tide_string_at(key->data, 0, &klen);
  if ((int64_t)strlen(k) != klen)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the feature name holds a NUL byte", op_label(a));
  *name = k;
  int64_t n = ser->nelem;
  *ptrs = malloc((size_t)(n ? n : 1) * sizeof **ptrs);
  *lens = malloc((size_t)(n ? n : 1) * sizeof **lens);
  if (!*ptrs || !*lens) {
    free(*ptrs), free(*lens);
    *ptrs = NULL, *lens = NULL;
    return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld records", op_label(a), (long long)n);
  }
  int64_t stride = ser->ndim == 1 ? ser->strides[0] : 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t len;
    (*ptrs)[i] = (const uint8_t *)tide_string_at(ser->data, i * stride, &len);
    (*lens)[i] = (size_t)len;
  }
  return TIDE_OK;
}

/* Parse feature `spec` of the records of in[0]; NULL with the error set. */
static tide_example_batch *parse(const tide_attrs *a, const tide_tensor *const *in, tide_feature_spec *spec) {
  const uint8_t **ptrs;
  size_t *lens;
  tide_status st = records_of(a, in[0], in[1], &ptrs, &lens, &spec->name);
  if (st) return NULL;
  tide_example_batch *b = tide_example_parse(in[0]->nelem, ptrs, lens, 1, spec, in[0]->ndim == 1);
  free(ptrs);
  free(lens);
  return b;
}

tide_status tide_cpu_parse_example_dense(const tide_op_def *def, const tide_attrs *a, int n_in,
                                         const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_feature_spec spec = {.type = feature_type(a->dtype), .ndim = a->nints, .dims = a->ints, .has_default = a->m == 1};
  /* a default read through its strides: the parser wants it contiguous */
  tide_tensor dense;
  memset(&dense, 0, sizeof dense);
  const tide_tensor *def_v = in[2];
  tide_status st = spec.has_default ? tide_contiguous_or_copy(def->name, in[2], &dense, &def_v) : TIDE_OK;
  if (st) {
    tide_tensor_release(&dense);
    return st;
  }
  if (spec.has_default && spec.type != TIDE_FEATURE_BYTES) spec.default_values = def_v->data;
  tide_example_batch *b = parse(a, in, &spec);
  if (!b) st = tide_last_status();
  else if (spec.type == TIDE_FEATURE_BYTES) st = tide_example_batch_strings(b, 0, out[0], spec.has_default ? def_v : NULL);
  else if (out[0]->nelem > 0) st = tide_example_batch_values(b, 0, out[0]->data);
  tide_example_batch_free(b);
  tide_tensor_release(&dense);
  return st;
}

tide_status tide_cpu_parse_example_sparse(const tide_op_def *def, const tide_attrs *a, int n_in,
                                          const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_feature_spec spec = {.type = feature_type(a->dtype), .var_len = 1};
  tide_example_batch *b = parse(a, in, &spec);
  if (!b) return tide_last_status();
  bool batch = in[0]->ndim == 1;
  int64_t count = tide_example_batch_count(b, 0);
  int64_t idx_dims[2] = {count, batch ? 2 : 1}, rank = batch ? 2 : 1;
  int64_t *pairs = NULL;
  tide_status st = tide_tensor_init(out[0], TIDE_INT64, 2, idx_dims);
  if (!st) st = tide_tensor_init(out[1], a->dtype, 1, &count);
  if (!st) st = tide_tensor_init(out[2], TIDE_INT64, 1, &rank);
  if (!st && !batch && !(pairs = malloc((size_t)(2 * count + 2) * sizeof *pairs)))
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %lld values", op_label(a), (long long)count);
  if (!st) {
    int64_t *idx = out[0]->data;
    int64_t longest = tide_example_batch_var_indices(b, 0, batch ? idx : pairs);
    if (!batch) /* one example: the positions alone */
      for (int64_t k = 0; k < count; k++) idx[k] = pairs[2 * k + 1];
    int64_t *shape = out[2]->data;
    if (batch) shape[0] = in[0]->nelem, shape[1] = longest;
    else shape[0] = longest;
    if (count > 0) {
      if (spec.type == TIDE_FEATURE_BYTES) st = tide_example_batch_strings(b, 0, out[1], NULL);
      else st = tide_example_batch_values(b, 0, out[1]->data);
    }
  }
  free(pairs);
  tide_example_batch_free(b);
  return st;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* serialized a batch (either rank gives valid dtypes), the name a scalar,
 * the default the feature's shape. */
static int parse_example_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return i == 0 ? 1 : i == 1 ? 0 : tide_rank_capped(a->nints);
}
const tide_rank_rule tide_infer_parse_example_rank = {parse_example_rank, NULL, NULL};
