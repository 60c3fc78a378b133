/* core/infer_sum_to.c — shape inference for sum_to, broadcast_to's transpose:
 * which dims of x a target shape sums over, and the checks that it can. */
#include "sum_to.h"
#include "infer_rank.h"

#include <stdio.h>

tide_status tide_sum_to_axes(const tide_op_def *def, const tide_tensor *x, const tide_attrs *target, bool *axes) {
  int nd = target->nints, lead = x->ndim - nd;
  char sx[128], st[128];
  if (nd > TIDE_MAX_DIMS || lead < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot sum shape %s to a shape of rank %d", def->name,
                     TIDE_SHAPE_STR(sx, x), nd);
  for (int d = 0; d < lead; d++) axes[d] = x->dims[d] != 1;
  for (int i = 0; i < nd; i++) {
    int64_t t = target->ints[i], xd = x->dims[lead + i];
    if (t < -1 || (t >= 0 && xd >= 0 && t != xd && t != 1))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: cannot sum shape %s to %s (that shape does not broadcast to it)",
                       def->name, TIDE_SHAPE_STR(sx, x), tide_fmt_dims(st, sizeof st, nd, target->ints));
    /* an unknown target dim (tracing) is 1 or x's: the run decides */
    axes[lead + i] = t == 1 && xd != 1;
  }
  return TIDE_OK;
}

tide_status tide_infer_sum_to(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                              int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_status st = tide_check_dtype(def, x, "input");
  if (st) return st;
  tide_attrs buf;
  bool unknown, axes[TIDE_MAX_DIMS];
  if ((st = tide_shape_input(def, a, n_in, in, &buf, &a, &unknown)) != TIDE_OK) return st;
  /* Unknown ranks (tracing; infer_rank.c leaves them to this rule): a shape
   * of unknown length gives an unknown rank; x of unknown rank, the target's
   * dims, its sum decided when the graph runs. */
  if (a->nints < 0) {
    tide_tensor_set_contiguous_layout(out[0], x->dt, TIDE_UNKNOWN_RANK, NULL);
    return TIDE_OK;
  }
  if (!unknown) /* (a number: a shape string would print -1 as None) */
    for (int i = 0; i < a->nints && i < TIDE_MAX_INTS; i++)
      if (a->ints[i] < 0)
        return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the shape has a negative dimension (%lld at %d)", def->name,
                         (long long)a->ints[i], i);
  if (x->ndim >= 0 && (st = tide_sum_to_axes(def, x, a, axes)) != TIDE_OK) return st;
  tide_tensor_set_contiguous_layout(out[0], x->dt, a->nints, a->ints);
  return TIDE_OK;
}

/* ---- inputs of unknown rank (tide_rank_rule: registry.h, core/infer_rank.h) ---- */

/* x of unknown rank summed to a target's dims: sum_to's own inference reads
 * it; a shape input of unknown rank stands in as a vector (its one valid
 * rank) of unknown length, giving an unknown rank. */
static tide_status sum_to_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                       const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  if (n_in < 2 || !tide_rank_unknown(in[1])) return tide_infer_sum_to(def, a, n_in, in, n_out, out);
  tide_tensor vec;
  tide_rank_stand_in(in[1], 1, &vec);
  const tide_tensor *use[2] = {in[0], &vec};
  return tide_infer_sum_to(def, a, 2, use, n_out, out);
}
const tide_rank_rule tide_infer_sum_to_rank = {NULL, NULL, sum_to_unknown_rank};
