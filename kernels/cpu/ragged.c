/* cpu/ragged.c — ragged_to_tensor (TF's RaggedTensorToTensor for one ragged dim): the rows of values given by
 * int64 row_splits laid into a dense [rows, width], short rows padded with a default, long ones cut. */
#include "strings_util.h"

tide_status tide_cpu_ragged_to_tensor(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *v = in[0], *rs = in[1], *dflt = in[2];
  tide_tensor *o = out[0];
  int64_t rows = rs->dims[0] - 1, nv = v->dims[0], width = a->n;
  const int64_t *sp = rs->data;
  int64_t ss = rs->strides[0];
  if (sp[0] != 0 || sp[rows * ss] != nv)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must start at 0 and end at the %lld values, got %lld ... %lld",
                     def->name, (long long)nv, (long long)sp[0], (long long)sp[rows * ss]);
  for (int64_t r = 0; r < rows; r++)
    if (sp[(r + 1) * ss] < sp[r * ss])
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: row_splits must not decrease (row %lld)", def->name, (long long)r);
  if (a->n == 0) /* the longest row */
    for (int64_t r = 0; r < rows; r++)
      if (sp[(r + 1) * ss] - sp[r * ss] > width) width = sp[(r + 1) * ss] - sp[r * ss];
  int64_t dims[2] = {rows, width};
  tide_status st = tide_tensor_init(o, v->dt, 2, dims);
  if (st) return st;
  if (v->dt == TIDE_STRING) {
    tide_strings_adopt(o);
    tide_string **od = o->data, *const *vd = v->data, *fill = ((tide_string *const *)dflt->data)[0];
    for (int64_t r = 0; r < rows; r++) {
      int64_t b = sp[r * ss], len = sp[(r + 1) * ss] - b;
      for (int64_t c = 0; c < width; c++) {
        tide_string *s = c < len ? vd[(b + c) * v->strides[0]] : fill;
        tide_string_retain(s);
        od[r * width + c] = s;
      }
    }
    return TIDE_OK;
  }
  size_t es = tide_dtype_size(v->dt);
  char *od = o->data;
  const char *vd = v->data, *fill = dflt->data;
  for (int64_t r = 0; r < rows; r++) {
    int64_t b = sp[r * ss], len = sp[(r + 1) * ss] - b;
    for (int64_t c = 0; c < width; c++) {
      const char *src = c < len ? vd + (b + c) * v->strides[0] * (int64_t)es : fill;
      memcpy(od + (r * width + c) * (int64_t)es, src, es);
    }
  }
  return TIDE_OK;
}
