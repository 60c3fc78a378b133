/* core/infer_rank.c — shape inference when an input's rank is unknown
 * (TIDE_UNKNOWN_RANK: a traced TensorSpec(nil)): each op family's rule. */
#include "registry.h"

#include <string.h>

/* Why this file exists: an op's own inference (infer_*.c) reads its inputs'
 * dims, so it never sees a header of unknown rank. tide_infer (registry.h)
 * sends such calls here. Most families run their own inference on stand-ins:
 * each input of unknown rank replaced by one of a rank the op accepts, with
 * every dim unknown (-1). That gives the op's own dtype checks, messages and
 * output dtypes; the output shape is then kept where it holds whatever the
 * real rank is (an op that needs rank 4, reshape to a given shape) and made
 * of unknown rank where it does not. A stand-in rank is chosen so that
 * attributes valid at the real rank are valid at it too (one axis in
 * [-r, r) is in [-8, 8)); attributes that are wrong at every rank fail now,
 * the rest when the graph runs and every rank is known (the run infers again).
 * Families whose checks a stand-in could trip (several axes at once) have
 * rules written out here instead. */

enum { MAX_IN = 64 }; /* inputs a traced node may have (graph/build.c's limit) */

/* Give out dtype dt and an unknown rank. */
static void set_unknown_rank(tide_tensor *out, int dt) {
  memset(out, 0, sizeof *out);
  tide_tensor_set_contiguous_layout(out, dt, TIDE_UNKNOWN_RANK, NULL);
}

static bool rank_unknown(const tide_tensor *t) { return t->ndim < 0; }

/* A descriptor like x (dtype, symbolic flag) of rank r (at most
 * TIDE_MAX_DIMS) with every dim unknown. */
static void stand_in(const tide_tensor *x, int r, tide_tensor *s) {
  int64_t dims[TIDE_MAX_DIMS];
  if (r > TIDE_MAX_DIMS) r = TIDE_MAX_DIMS;
  for (int i = 0; i < r; i++) dims[i] = -1;
  memset(s, 0, sizeof *s);
  tide_tensor_set_contiguous_layout(s, x->dt, r, dims);
  s->flags = x->flags & TIDE_TENSOR_SYMBOLIC;
  s->dev = x->dev;
}

/* At most the top rank: attributes longer than any rank fail in the op's
 * own inference against it. */
static int capped(int r) { return r < TIDE_MAX_DIMS ? r : TIDE_MAX_DIMS; }

/* The stand-in rank for input i (of unknown rank) of def; -1: a written rule. */
static int stand_in_rank(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i) {
  tide_infer_fn f = def->infer;
  /* A shape input (reshape(x, shape), fill(shape)): a vector of unknown length. */
  if ((def->flags & TIDE_OPF_SHAPE_INPUT) && i == def->n_in) return 1;
  if (def->flags & TIDE_OPF_ELEMENTWISE) return 0; /* a scalar broadcasts with anything */
  if (f == tide_infer_unary) return 0;             /* random_shuffle: same shape out */
  if (f == tide_infer_reshape) return 1;           /* x: an unknown number of elements */
  if (f == tide_infer_broadcast_to) return 0;      /* x: fits any target */
  if (f == tide_infer_transpose) return capped(a->nints); /* one perm entry per dim */
  if (f == tide_infer_slice) return capped(a->nints / 3);   /* the leading dims the spec names */
  if (f == tide_infer_tile) return capped(a->nints);
  if (f == tide_infer_pad) return a->nints % 2 ? -1 : capped(a->nints / 2); /* pairs per dim */
  if (f == tide_infer_matmul) return 2;
  /* tf.linalg (core/infer_matrix.c): one matrix stands in for any batch of them (the results' ranks stay unknown) */
  if (f == tide_infer_band_part || f == tide_infer_square || f == tide_infer_decompose ||
      f == tide_infer_matrix_solve || f == tide_infer_tridiagonal_solve)
    return 2;
  if (f == tide_infer_matrix_diag) { /* one diagonal is a vector; a range of them a matrix, one row each */
    bool one = a->nints >= 2 && a->ints[0] == a->ints[1];
    if (def->id == TIDE_OP_MATRIX_DIAG) return one ? 1 : 2;
    if (def->id == TIDE_OP_MATRIX_DIAG_PART) return 2;
    const tide_tensor *other = in[1 - i]; /* set_diag: x [..., M, N] and its diagonals [..., (K,) L] */
    if (i == 0) return rank_unknown(other) ? 2 : capped(other->ndim + (one ? 1 : 0));
    return rank_unknown(other) ? (one ? 1 : 2) : (other->ndim - (one ? 1 : 0) < 1 ? 1 : other->ndim - (one ? 1 : 0));
  }
  if (f == tide_infer_unique) return 1;
  if (f == tide_infer_sparse_xent) return i == 0 ? 1 : 2;
  if (f == tide_infer_conv2d || f == tide_infer_conv2d_bp_input || f == tide_infer_conv2d_bp_filter ||
      f == tide_infer_depthwise || f == tide_infer_depthwise_bp_input || f == tide_infer_depthwise_bp_filter ||
      f == tide_infer_pool2d || f == tide_infer_pool2d_grad || f == tide_infer_max_pool2d_grad_grad)
    return 4; /* NHWC images and HWIO filters */
  if (f == tide_infer_concat) { /* the rank a known input has, else any */
    for (int k = 0; k < n_in; k++)
      if (!rank_unknown(in[k])) return in[k]->ndim;
    return TIDE_MAX_DIMS;
  }
  if (f == tide_infer_segment) {
    if (i == 2) return 0;                          /* num_segments: a scalar */
    if (def->n_in == 2) return 1;                  /* sorted: data [N, ...], segment_ids [N] */
    /* unsorted: segment_ids' shape is a prefix of data's */
    if (i == 0) return rank_unknown(in[1]) ? 1 : in[1]->ndim;
    return rank_unknown(in[0]) ? 1 : (in[0]->ndim < 1 ? in[0]->ndim : 1);
  }
  /* One axis (argmax, cumsum, sort, top_k, softmax): any valid one is valid at the top rank. */
  if (f == tide_infer_argreduce || f == tide_infer_scan || f == tide_infer_sort || f == tide_infer_top_k ||
      f == tide_infer_softmax)
    return TIDE_MAX_DIMS;
  /* One axis of a result one rank higher. */
  if (f == tide_infer_one_hot || f == tide_infer_expand_dims) return TIDE_MAX_DIMS - 1;
  /* Strings: elementwise (separators, patterns, rewrites and substr's
   * positions are scalars or broadcast), so a scalar fits; reduce_join's
   * separator a scalar, its input a rule below (several axes); split's input
   * a vector: both outputs are vectors whatever its rank (0 or 1). */
  if (f == tide_infer_string_map || f == tide_infer_string_join || f == tide_infer_substr ||
      f == tide_infer_regex_replace)
    return 0;
  if (f == tide_infer_reduce_join) return i == 1 ? 0 : -1;
  if (f == tide_infer_string_split) return i == 0 ? 1 : 0;
  /* parse_example: serialized a batch (either rank gives valid dtypes), the
   * name a scalar, the default the feature's shape */
  if (f == tide_infer_parse_example) return i == 0 ? 1 : i == 1 ? 0 : capped(a->nints);
  return -1; /* no stand-in: a rule below */
}

/* True when the stand-in inference's output shape holds for any real rank
 * of the inputs of unknown rank. */
static bool keeps_shape(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in) {
  tide_infer_fn f = def->infer;
  /* The shape comes from the attrs or the shape input alone (its length
   * unknown: the stand-in gives an unknown rank itself). */
  if (f == tide_infer_reshape || f == tide_infer_broadcast_to || f == tide_infer_create) return true;
  if (f == tide_infer_transpose) return a->nints > 0;
  if (f == tide_infer_tile || f == tide_infer_pad || f == tide_infer_unique || f == tide_infer_sparse_xent) return true;
  if (f == tide_infer_conv2d || f == tide_infer_conv2d_bp_input || f == tide_infer_conv2d_bp_filter ||
      f == tide_infer_depthwise || f == tide_infer_depthwise_bp_input || f == tide_infer_depthwise_bp_filter ||
      f == tide_infer_pool2d || f == tide_infer_pool2d_grad || f == tide_infer_max_pool2d_grad_grad)
    return true;
  if (f == tide_infer_concat) { /* stand-ins of a known input's rank: TF's merge */
    for (int k = 0; k < n_in; k++)
      if (!rank_unknown(in[k])) return true;
    return false;
  }
  if (f == tide_infer_segment) return !rank_unknown(in[0]) && (def->n_in == 2 || !rank_unknown(in[1]));
  if (f == tide_infer_reduce_join) return !rank_unknown(in[0]); /* only the separator's rank was unknown */
  if (f == tide_infer_string_split) return true;
  /* Strings: known when the inputs that shape the result are (not a
   * separator, pattern or rewrite, which must be scalars). */
  if (f == tide_infer_regex_replace) return !rank_unknown(in[0]);
  if (f == tide_infer_string_join || f == tide_infer_substr) {
    for (int k = f == tide_infer_string_join ? 1 : 0; k < n_in; k++)
      if (rank_unknown(in[k])) return false;
    return true;
  }
  return false;
}

/* Check an index input's dtype as the index families do. */
static tide_status check_index(const tide_op_def *def, const tide_tensor *t, const char *what) {
  if (t->dt == TIDE_INT32 || t->dt == TIDE_INT64) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be int32 or int64, got %s (use :cast(\"int32\"))", def->name, what,
                   t->dt >= 0 && t->dt < TIDE_NUM_DTYPES ? tide_dtype_name(t->dt) : "an invalid dtype");
}

/* Check that `b` (named wb) has a's dtype (named wa), as the scatter families say it. */
static tide_status check_like(const tide_op_def *def, const tide_tensor *b, const char *wb, const tide_tensor *a,
                              const char *wa) {
  if (a->dt == b->dt) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s are %s but %s is %s (convert with :cast(\"%s\"))", def->name, wb,
                   tide_dtype_name(b->dt), wa, tide_dtype_name(a->dt), tide_dtype_name(a->dt));
}

/* out[0]: x's shape when x's rank is known (the update and index inputs do
 * not change it), else an unknown rank; dtype x's. */
static void shape_of_first(const tide_tensor *x, tide_tensor *out) {
  if (rank_unknown(x)) set_unknown_rank(out, x->dt);
  else tide_tensor_set_contiguous_layout(out, x->dt, x->ndim, x->dims);
}

/* The families without a stand-in: their dtype checks, then the shape. */
static tide_status written_rule(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                int n_out, tide_tensor *const *out) {
  tide_infer_fn f = def->infer;
  const tide_tensor *x = in[0];
  tide_status st;
  if (f == tide_infer_reduce) {
    /* Several axes: checked when the graph runs. A full reduction without
     * keepdims is a scalar whatever the rank (TF's rule). */
    if ((st = tide_check_dtype(def, x, "input")) != TIDE_OK) return st;
    int dt = tide_out_dtype(def, a, x->dt);
    if (a->nints == 0 && !(a->flags & TIDE_ATTR_KEEPDIMS)) tide_tensor_set_contiguous_layout(out[0], dt, 0, NULL);
    else set_unknown_rank(out[0], dt);
    return TIDE_OK;
  }
  if (f == tide_infer_pad) /* an odd count fits no rank */
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: paddings must be (before, after) pairs, got %d numbers", def->name, a->nints);
  if (f == tide_infer_reverse || f == tide_infer_squeeze) { /* several axes */
    if ((st = tide_check_dtype(def, x, "input")) != TIDE_OK) return st;
    set_unknown_rank(out[0], x->dt);
    return TIDE_OK;
  }
  if (f == tide_infer_gather || f == tide_infer_gather_nd) { /* (params, indices) */
    if ((st = tide_check_dtype(def, x, "params")) != TIDE_OK) return st;
    if ((st = check_index(def, in[1], "indices")) != TIDE_OK) return st;
    set_unknown_rank(out[0], x->dt);
    return TIDE_OK;
  }
  if (f == tide_infer_scatter_add || f == tide_infer_scatter_nd) { /* (base, indices, updates) -> base's shape */
    const char *what = f == tide_infer_scatter_add ? "base" : "tensor";
    if ((st = tide_check_dtype(def, x, what)) != TIDE_OK) return st;
    if ((st = check_index(def, in[1], "indices")) != TIDE_OK) return st;
    if ((st = check_like(def, in[2], "updates", x, what)) != TIDE_OK) return st;
    shape_of_first(x, out[0]);
    return TIDE_OK;
  }
  if (f == tide_infer_slice_update) { /* (x, update) -> x's shape */
    if ((st = tide_check_dtype(def, x, "x")) != TIDE_OK) return st;
    if (in[1]->dt != x->dt)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: update is %s but x is %s (convert with :cast(\"%s\"))", def->name,
                       tide_dtype_name(in[1]->dt), tide_dtype_name(x->dt), tide_dtype_name(x->dt));
    shape_of_first(x, out[0]);
    return TIDE_OK;
  }
  if (f == tide_infer_reduce_join) { /* as reductions: all axes without keepdims give a scalar */
    if (x->dt != TIDE_STRING)
      return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input must be a string tensor, got %s", def->name, tide_dtype_name(x->dt));
    if (in[1]->dt != TIDE_STRING || in[1]->ndim > 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the separator must be a scalar string", def->name);
    if (a->nints == 0 && !(a->flags & TIDE_ATTR_KEEPDIMS)) tide_tensor_set_contiguous_layout(out[0], TIDE_STRING, 0, NULL);
    else set_unknown_rank(out[0], TIDE_STRING);
    return TIDE_OK;
  }
  if (f == tide_infer_where_indices) { /* [N, rank], both known when it runs */
    if ((st = tide_check_dtype(def, x, "condition")) != TIDE_OK) return st;
    int64_t dims[2] = {-1, -1};
    tide_tensor_set_contiguous_layout(out[0], TIDE_INT64, 2, dims);
    return TIDE_OK;
  }
  /* The generic rule, for a family this file does not know: the op's dtype
   * rule on its first input, and outputs of unknown rank. */
  if (n_in > 0 && (st = tide_check_dtype(def, x, "input")) != TIDE_OK) return st;
  int dt = tide_out_dtype(def, a, n_in > 0 ? x->dt : a->dtype);
  for (int k = 0; k < n_out; k++) set_unknown_rank(out[k], dt);
  return TIDE_OK;
}

tide_status tide_infer_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  /* Families that read an unknown rank themselves (shape: a vector of unknown
   * length; sum_to: x of unknown rank summed to a target's dims, a target
   * shape of unknown length giving an unknown rank). */
  if (def->infer == tide_infer_shape_of) return def->infer(def, a, n_in, in, n_out, out);
  if (def->infer == tide_infer_assert) return def->infer(def, a, n_in, in, n_out, out); /* any rank: a 0-d result */
  if (def->infer == tide_infer_all_reduce_sum) return def->infer(def, a, n_in, in, n_out, out); /* each as its input */
  if (def->infer == tide_infer_sum_to) {
    if (n_in < 2 || !rank_unknown(in[1])) return def->infer(def, a, n_in, in, n_out, out);
    tide_tensor vec; /* a shape input of unknown rank: a vector (its one valid rank) of unknown length */
    stand_in(in[1], 1, &vec);
    const tide_tensor *use2[2] = {in[0], &vec};
    return def->infer(def, a, 2, use2, n_out, out);
  }
  if (n_in > MAX_IN) return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: more than %d inputs", def->name, MAX_IN);
  tide_tensor si[MAX_IN];
  const tide_tensor *use[MAX_IN];
  bool any_stand_in = false;
  for (int i = 0; i < n_in; i++) {
    use[i] = in[i];
    if (!rank_unknown(in[i])) continue;
    int r = stand_in_rank(def, a, n_in, in, i);
    if (r < 0) return written_rule(def, a, n_in, in, n_out, out);
    stand_in(in[i], r, &si[i]);
    use[i] = &si[i];
    any_stand_in = true;
  }
  if (!any_stand_in) return def->infer(def, a, n_in, in, n_out, out);
  tide_status st = def->infer(def, a, n_in, use, n_out, out);
  if (st || keeps_shape(def, a, n_in, in)) return st;
  for (int k = 0; k < n_out; k++) set_unknown_rank(out[k], out[k]->dt);
  return TIDE_OK;
}
