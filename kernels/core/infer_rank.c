/* core/infer_rank.c — shape inference when an input's rank is unknown
 * (TIDE_UNKNOWN_RANK: a traced TensorSpec(nil)): runs each family's rule. */
#include "infer_rank.h"

#include <string.h>

/* Why this file exists: an op's own inference (infer_*.c) reads its inputs'
 * dims, so it never sees a header of unknown rank. tide_infer (registry.h)
 * sends such calls here. Most families run their own inference on stand-ins:
 * each input of unknown rank replaced by one of a rank the op accepts, with
 * every dim unknown. That gives the op's own dtype checks, messages and
 * output dtypes; the output shape is then kept where it holds whatever the
 * real rank is (an op that needs rank 4, reshape to a given shape) and made
 * of unknown rank where it does not. A stand-in rank is chosen so that
 * attributes valid at the real rank are valid at it too (one axis in
 * [-r, r) is in [-8, 8)); attributes that are wrong at every rank fail now,
 * the rest when the graph runs and every rank is known (the run infers again).
 * Families whose checks a stand-in could trip (several axes at once) write
 * their rule out instead. Each family's rule (tide_rank_rule) sits beside
 * its inference; this file holds what they share. */

enum { MAX_IN = 64 }; /* inputs a traced node may have (graph/build.c's limit) */

void tide_rank_set_unknown(tide_tensor *out, int dt) {
  memset(out, 0, sizeof *out);
  tide_tensor_set_contiguous_layout(out, dt, TIDE_UNKNOWN_RANK, NULL);
}

void tide_rank_stand_in(const tide_tensor *x, int r, tide_tensor *s) {
  int64_t dims[TIDE_MAX_DIMS];
  if (r > TIDE_MAX_DIMS) r = TIDE_MAX_DIMS;
  for (int i = 0; i < r; i++) dims[i] = -1;
  memset(s, 0, sizeof *s);
  tide_tensor_set_contiguous_layout(s, x->dt, r, dims);
  s->flags = x->flags & TIDE_TENSOR_SYMBOLIC;
  s->dev = x->dev;
}

void tide_rank_shape_of_first(const tide_tensor *x, tide_tensor *out) {
  if (tide_rank_unknown(x)) tide_rank_set_unknown(out, x->dt);
  else tide_tensor_set_contiguous_layout(out, x->dt, x->ndim, x->dims);
}

int tide_rank_scalar(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return 0;
}

int tide_rank_top(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in), TIDE_UNUSED(i);
  return TIDE_MAX_DIMS;
}

bool tide_rank_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(in);
  return true;
}

tide_status tide_rank_check_index(const tide_op_def *def, const tide_tensor *t, const char *what) {
  if (t->dt == TIDE_INT32 || t->dt == TIDE_INT64) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be int32 or int64, got %s (use :cast(\"int32\"))", def->name, what,
                   t->dt >= 0 && t->dt < TIDE_NUM_DTYPES ? tide_dtype_name(t->dt) : "an invalid dtype");
}

tide_status tide_rank_check_like(const tide_op_def *def, const tide_tensor *b, const char *wb, const tide_tensor *a,
                                 const char *wa) {
  if (a->dt == b->dt) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s are %s but %s is %s (convert with :cast(\"%s\"))", def->name, wb,
                   tide_dtype_name(b->dt), wa, tide_dtype_name(a->dt), tide_dtype_name(a->dt));
}

/* The stand-in rank for input i (of unknown rank) of def; -1: none fits. */
static int stand_in_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  /* A shape input (reshape(x, shape), fill(shape)): a vector of unknown length. */
  if ((def->flags & TIDE_OPF_SHAPE_INPUT) && i == def->n_in) return 1;
  return def->rank->stand_in ? def->rank->stand_in(def, a, n_in, in, i) : -1;
}

/* A call no stand-in fits: the family's written rule, or for a family with
 * none, the generic one: the op's dtype rule on its first input, and
 * outputs of unknown rank. */
static tide_status written_rule(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  if (def->rank->written) return def->rank->written(def, a, n_in, in, n_out, out);
  tide_status st;
  if (n_in > 0 && (st = tide_check_dtype(def, in[0], "input")) != TIDE_OK) return st;
  int dt = tide_out_dtype(def, a, n_in > 0 ? in[0]->dt : a->dtype);
  for (int k = 0; k < n_out; k++) tide_rank_set_unknown(out[k], dt);
  return TIDE_OK;
}

tide_status tide_infer_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  for (int i = 0; i < n_in; i++)
    if (tide_rank_unknown(in[i]) && stand_in_rank(def, a, n_in, in, i) < 0)
      return written_rule(def, a, n_in, in, n_out, out);
  if (n_in > MAX_IN) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: more than %d inputs", def->name, MAX_IN);
  tide_tensor si[MAX_IN];
  const tide_tensor *use[MAX_IN];
  bool any_stand_in = false;
  for (int i = 0; i < n_in; i++) {
    use[i] = in[i];
    if (!tide_rank_unknown(in[i])) continue;
    tide_rank_stand_in(in[i], stand_in_rank(def, a, n_in, in, i), &si[i]);
    use[i] = &si[i];
    any_stand_in = true;
  }
  if (!any_stand_in) return def->infer(def, a, n_in, in, n_out, out);
  tide_status st = def->infer(def, a, n_in, use, n_out, out);
  if (st || (def->rank->keeps_shape && def->rank->keeps_shape(def, a, n_in, in))) return st;
  for (int k = 0; k < n_out; k++) tide_rank_set_unknown(out[k], out[k]->dt);
  return TIDE_OK;
}
