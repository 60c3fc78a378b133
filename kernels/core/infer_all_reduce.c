/* core/infer_all_reduce.c — inference for all_reduce_sum (tide.distribute's
 * collective): one output per input, each of its input's dtype and shape. */
#include "infer_rank.h"

tide_status tide_infer_all_reduce_sum(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  if (n_out != n_in)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: gives one result per input (%d), asked for %d", def->name, n_in, n_out);
  if (a->n < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the bucket size must be a number of bytes >= 0 (0: the default), got %lld",
                     def->name, (long long)a->n);
  for (int i = 0; i < n_in; i++) {
    const tide_tensor *x = in[i];
    if (x->dt != TIDE_FLOAT32 && x->dt != TIDE_FLOAT64)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input %d is %s; only float32 and float64 tensors are summed over the "
                       "workers (cast it first)", def->name, i + 1, tide_dtype_name(x->dt));
    /* An unknown rank or dims stay unknown: the value is summed as it is. */
    tide_tensor_set_contiguous_layout(out[i], x->dt, x->ndim, x->ndim > 0 ? x->dims : NULL);
  }
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* Each result as its input, whatever its rank. */
const tide_rank_rule tide_infer_all_reduce_sum_rank = {NULL, NULL, tide_infer_all_reduce_sum};
