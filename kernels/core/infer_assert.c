/* core/infer_assert.c — inference for assert (tide.debugging's assertions):
 * a bool (or float) condition of any shape, a 0-d string message, any data after. */
#include "infer_rank.h"

tide_status tide_infer_assert(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_out);
  if (n_in < 2) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects a condition and a message, then any data", def->name);
  if (in[0]->dt != TIDE_BOOL && !tide_dtype_is_float(in[0]->dt)) /* a float one: checked for NaN and Inf */
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: the condition must be a bool tensor (or a float one, checked for NaN and "
                     "Inf), got %s", def->name, tide_dtype_name(in[0]->dt));
  if (in[1]->dt != TIDE_STRING || in[1]->ndim != 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the message must be a 0-d string tensor", def->name);
  tide_tensor_set_contiguous_layout(out[0], TIDE_BOOL, 0, NULL);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* Any rank: a 0-d result. */
const tide_rank_rule tide_infer_assert_rank = {NULL, NULL, tide_infer_assert};
