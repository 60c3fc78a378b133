/* io/onnx_ops_more.c — ONNX ops built from one or several of tide's: Einsum (transposes, reshapes
 * and one batched matmul), GatherElements and GatherND (gather_nd), Trilu (a mask), CumSum, TopK. */
#include "onnx_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAP(fn) static tide_status fn(onnx_import *im, const Onnx__NodeProto *node, int n_in, \
                                      const tide_tensor *const *in, int n_out, tide_tensor *out)
#define UNUSED (void)im, (void)node, (void)n_in, (void)in, (void)n_out, (void)out

static void release_all(tide_tensor *t, int n) {
  for (int k = 0; k < n; k++) tide_tensor_release(&t[k]);
}

/* ---- Einsum ------------------------------------------------------------------------- */

typedef struct eq {
  int n_ops;
  char ops[2][TIDE_MAX_DIMS + 1], out[TIDE_MAX_DIMS + 1];
} eq;

static tide_status parse_eq(const char *s, size_t len, int n_in, eq *e) {
  memset(e, 0, sizeof *e);
  int k = 0, pos = 0;
  bool arrow = false;
  char *cur = e->ops[0];
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c == ' ') continue;
    if (c == '.') return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum with an ellipsis is not mapped");
    if (c == ',' && !arrow) {
      if (++k > 1) return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum of more than two operands is not mapped");
      cur = e->ops[k], pos = 0;
    } else if (c == '-' && i + 1 < len && s[i + 1] == '>' && !arrow) {
      arrow = true, i++;
      cur = e->out, pos = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      if (pos >= TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum term of more than %d labels", TIDE_MAX_DIMS);
      if (strchr(cur, c)) return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum label '%c' twice in one term (a diagonal) is not mapped", c);
      cur[pos++] = c;
    } else return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum equation '%.*s' has '%c'", (int)len, s, c);
  }
  e->n_ops = k + 1;
  if (e->n_ops != n_in) return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum equation names %d operands for %d inputs", e->n_ops, n_in);
  if (!arrow) { /* implicit: the labels seen once, in alphabetical order */
    int n = 0;
    for (int c = 'A'; c <= 'z'; c++) {
      int seen = (strchr(e->ops[0], c) && c) + (e->n_ops > 1 && strchr(e->ops[1], c) && c);
      if (seen == 1 && n < TIDE_MAX_DIMS) e->out[n++] = (char)c;
    }
  }
  for (const char *p = e->out; *p; p++)
    if (!strchr(e->ops[0], *p) && (e->n_ops < 2 || !strchr(e->ops[1], *p)))
      return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum output label '%c' is in no operand", *p);
  return TIDE_OK;
}

/* x summed over its labels (in `lab`) that are in neither `keep1` nor `keep2`; lab is updated. */
static tide_status sum_unused(const tide_tensor *x, char *lab, const char *keep1, const char *keep2, tide_tensor *out) {
  tide_attrs a = {0};
  char rest[TIDE_MAX_DIMS + 1] = {0};
  int nr = 0;
  for (int d = 0; lab[d]; d++) {
    if (strchr(keep1, lab[d]) || (keep2 && strchr(keep2, lab[d]))) rest[nr++] = lab[d];
    else a.ints[a.nints++] = d;
  }
  if (!a.nints) return tide_tensor_share(out, x);
  strcpy(lab, rest);
  return onnx_run1(TIDE_OP_SUM, &a, 1, &x, out);
}

static int64_t label_dim(const tide_tensor *x, const char *lab, char c) {
  const char *p = strchr(lab, c);
  return p ? x->dims[p - lab] : -1;
}

/* x (labels lab) transposed into `order` (a permutation of lab). */
static tide_status permute(const tide_tensor *x, const char *lab, const char *order, tide_tensor *out) {
  int64_t perm[TIDE_MAX_DIMS];
  int n = (int)strlen(order);
  bool same = true;
  for (int i = 0; i < n; i++) {
    perm[i] = strchr(lab, order[i]) - lab;
    same &= perm[i] == i;
  }
  return same ? tide_tensor_share(out, x) : onnx_transpose(x, n, perm, out);
}

/* The product of the dims of labels `ls`, or -1 when one is unknown. */
static int64_t group_size(const tide_tensor *a, const char *la, const tide_tensor *b, const char *lb, const char *ls) {
  int64_t p = 1;
  for (; *ls; ls++) {
    int64_t d = label_dim(a, la, *ls);
    if (d < 0 && b) d = label_dim(b, lb, *ls);
    if (d < 0) return -1;
    p *= d;
  }
  return p;
}

MAP(map_einsum) {
  UNUSED;
  size_t len;
  const char *s = onnx_attr_s(node, "equation", &len);
  eq e;
  tide_status st = parse_eq(s, len, n_in, &e);
  if (st) return st;
  for (int k = 0; k < e.n_ops; k++) {
    if (!in[k]) return TIDE_FAIL(TIDE_ERR_VALUE, "Einsum's input %d is left out", k);
    if (in[k]->ndim != (int)strlen(e.ops[k]))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "Einsum term '%s' for an input of rank %d", e.ops[k], in[k]->ndim);
  }
  tide_tensor t[10] = {{0}};
  if (e.n_ops == 1) {
    st = sum_unused(in[0], e.ops[0], e.out, NULL, &t[0]);
    if (!st) st = permute(&t[0], e.ops[0], e.out, &out[0]);
    release_all(t, 10);
    return st;
  }
  char *la = e.ops[0], *lb = e.ops[1];
  st = sum_unused(in[0], la, lb, e.out, &t[0]);
  if (!st) st = sum_unused(in[1], lb, la, e.out, &t[1]);
  if (st) return release_all(t, 10), st;
  char batch[TIDE_MAX_DIMS + 1] = {0}, con[TIDE_MAX_DIMS + 1] = {0}, fa[TIDE_MAX_DIMS + 1] = {0},
       fb[TIDE_MAX_DIMS + 1] = {0};
  int nb = 0, nc = 0, nfa = 0, nfb = 0;
  for (const char *p = e.out; *p; p++) { /* in output order */
    if (strchr(la, *p) && strchr(lb, *p)) batch[nb++] = *p;
    else if (strchr(la, *p)) fa[nfa++] = *p;
    else fb[nfb++] = *p;
  }
  for (const char *p = la; *p; p++)
    if (strchr(lb, *p) && !strchr(e.out, *p)) con[nc++] = *p;
  char oa[TIDE_MAX_DIMS + 1], ob[TIDE_MAX_DIMS + 1], mid[TIDE_MAX_DIMS + 1];
  snprintf(oa, sizeof oa, "%s%s%s", batch, fa, con);
  snprintf(ob, sizeof ob, "%s%s%s", batch, con, fb);
  snprintf(mid, sizeof mid, "%s%s%s", batch, fa, fb);
  int64_t pb = group_size(&t[0], la, &t[1], lb, batch), pfa = group_size(&t[0], la, NULL, NULL, fa);
  int64_t pfb = group_size(&t[1], lb, NULL, NULL, fb), pc = group_size(&t[0], la, &t[1], lb, con);
  int unknown_batch = 0; /* reshapes take one -1: one free batch dim at most */
  for (const char *p = batch; *p; p++)
    unknown_batch += label_dim(&t[0], la, *p) < 0 && label_dim(&t[1], lb, *p) < 0;
  if (pfa < 0 || pfb < 0 || pc < 0 || unknown_batch > 1)
    return release_all(t, 10), TIDE_FAIL(TIDE_ERR_SHAPE, "Einsum '%.*s' needs its dims known (one free batch dim at most)",
                                         (int)len, s);
  int64_t da[3] = {pb, pfa, pc}, db[3] = {pb, pc, pfb};
  st = permute(&t[0], la, oa, &t[2]);
  if (!st) st = permute(&t[1], lb, ob, &t[3]);
  if (!st) st = onnx_reshape(&t[2], 3, da, &t[4]);
  if (!st) st = onnx_reshape(&t[3], 3, db, &t[5]);
  if (!st) st = onnx_binary(TIDE_OP_MATMUL, &t[4], &t[5], &t[6]);
  int64_t dims[TIDE_MAX_DIMS];
  int nd = 0;
  for (const char *p = mid; *p; p++) {
    int64_t d = label_dim(&t[0], la, *p);
    if (d < 0) d = label_dim(&t[1], lb, *p);
    dims[nd++] = d; /* at most one -1: the free batch dim */
  }
  if (!st) st = onnx_reshape(&t[6], nd, dims, &t[7]);
  if (!st) st = permute(&t[7], mid, e.out, &out[0]);
  release_all(t, 10);
  return st;
}

/* ---- GatherElements ------------------------------------------------------------------ */

/* out[i, j, k] = data[.., idx[i, j, k] (at axis), ..]: gather_nd of every element's coordinates. */
MAP(map_gather_elements) {
  UNUSED;
  const tide_tensor *x = NULL, *idx = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &idx);
  if (st) return st;
  int r = idx->ndim;
  int ax = onnx_axis(onnx_attr_i(node, "axis", 0), x->ndim);
  if (ax < 0 || r != x->ndim || r < 1) return TIDE_FAIL(TIDE_ERR_SHAPE, "GatherElements needs indices of its data's rank and an axis in it");
  for (int d = 0; d < r; d++)
    if (idx->dims[d] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "GatherElements needs its indices' shape known");
  if (x->dims[ax] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "GatherElements needs its data's dim at the axis known");
  tide_tensor parts[TIDE_MAX_DIMS] = {{0}}, t[6] = {{0}};
  const tide_tensor *pp[TIDE_MAX_DIMS];
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  /* the indices, negative ones counted from the end: idx + dim * (idx < 0) */
  st = onnx_run1(TIDE_OP_CAST, &c, 1, &idx, &t[0]);
  if (!st) st = onnx_scalar(TIDE_INT64, 0, &t[1]);
  if (!st) st = onnx_binary(TIDE_OP_LESS, &t[0], &t[1], &t[2]);
  if (!st) st = onnx_scalar(TIDE_INT64, (double)x->dims[ax], &t[3]);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &t[0], &t[3], &t[4]);
  const tide_tensor *w[3] = {&t[2], &t[4], &t[0]};
  if (!st) st = onnx_run1(TIDE_OP_WHERE, &(tide_attrs){0}, 3, w, &t[5]);
  for (int d = 0; !st && d < r; d++) { /* coordinate d of every element, [..., 1] */
    tide_tensor coord = {0};
    if (d == ax) st = tide_tensor_share(&coord, &t[5]);
    else {
      int64_t full[TIDE_MAX_DIMS];
      for (int k = 0; k < r; k++) full[k] = idx->dims[k];
      st = tide_tensor_init(&coord, TIDE_INT64, r, full);
      int64_t inner = 1;
      for (int k = d + 1; k < r; k++) inner *= full[k];
      for (int64_t i = 0; !st && i < coord.nelem; i++) ((int64_t *)coord.data)[i] = (i / inner) % full[d];
    }
    tide_attrs e = {0};
    e.axis = -1;
    const tide_tensor *cp = &coord;
    if (!st) st = onnx_run1(TIDE_OP_EXPAND_DIMS, &e, 1, &cp, &parts[d]);
    pp[d] = &parts[d];
    tide_tensor_release(&coord);
  }
  tide_tensor coords = {0};
  tide_attrs ca = {0};
  ca.axis = -1;
  if (!st) st = r > 1 ? onnx_run1(TIDE_OP_CONCAT, &ca, r, pp, &coords) : tide_tensor_share(&coords, &parts[0]);
  if (!st) st = onnx_binary(TIDE_OP_GATHER_ND, x, &coords, &out[0]);
  tide_tensor_release(&coords);
  release_all(parts, TIDE_MAX_DIMS);
  release_all(t, 6);
  return st;
}

/* ---- Trilu ------------------------------------------------------------------------------- */

/* Trilu: x where (upper ? col - row >= k : col - row <= k), else 0; the last two dims known. */
MAP(map_trilu) {
  UNUSED;
  const tide_tensor *x = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (st) return st;
  if (x->ndim < 2 || x->dims[x->ndim - 1] < 0 || x->dims[x->ndim - 2] < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "Trilu needs a matrix whose last two dims are known");
  int64_t k = 0, kn = 0;
  int n = 0;
  if (n_in > 1 && in[1]) {
    st = onnx_known_ints(in[1], "k", &kn, 1, &n);
    if (st) return st;
    if (n == 1) k = kn;
  }
  bool upper = onnx_attr_i(node, "upper", 1) != 0;
  int64_t dims[2] = {x->dims[x->ndim - 2], x->dims[x->ndim - 1]};
  if (dims[0] > (1 << 15) || dims[1] > (1 << 15)) return TIDE_FAIL(TIDE_ERR_SHAPE, "Trilu of a %" PRId64 "x%" PRId64 " matrix", dims[0], dims[1]);
  tide_tensor mask = {0}, zero = {0};
  st = tide_tensor_init(&mask, TIDE_BOOL, 2, dims);
  for (int64_t i = 0; !st && i < dims[0]; i++)
    for (int64_t j = 0; j < dims[1]; j++)
      ((unsigned char *)mask.data)[i * dims[1] + j] = upper ? j - i >= k : j - i <= k;
  if (!st) st = onnx_scalar(x->dt, 0, &zero);
  const tide_tensor *w[3] = {&mask, x, &zero};
  if (!st) st = onnx_run1(TIDE_OP_WHERE, &(tide_attrs){0}, 3, w, &out[0]);
  tide_tensor_release(&mask);
  tide_tensor_release(&zero);
  return st;
}

/* ---- CumSum, TopK, GatherND (what tide.onnx.export writes for cumsum, top_k, gather_nd) ---- */

/* CumSum(x, axis): cumsum with exclusive/reverse; the axis known at load. */
MAP(map_cumsum) {
  UNUSED;
  const tide_tensor *x = NULL, *ax = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &ax);
  int64_t axis = 0;
  int n = 0;
  if (!st) st = onnx_known_ints(ax, "axis", &axis, 1, &n);
  if (st) return st;
  if (n != 1) return TIDE_FAIL(TIDE_ERR_VALUE, "CumSum's axis must be one value, got %d", n);
  tide_attrs a = {0};
  a.axis = (int)axis;
  if (onnx_attr_i(node, "exclusive", 0)) a.flags |= TIDE_ATTR_EXCLUSIVE;
  if (onnx_attr_i(node, "reverse", 0)) a.flags |= TIDE_ATTR_REVERSE;
  return onnx_run1(TIDE_OP_CUMSUM, &a, 1, &x, &out[0]);
}

/* TopK(x, K): top_k works on the last axis and the largest values, so another axis is swapped
 * with the last (a swap is its own inverse), and largest = 0 takes the largest of the values
 * order-reversed: negated floats, bitwise-inverted integers (~ reverses the order of signed and
 * unsigned alike, with no overflow), mapped back after. Ties keep the lower index first, as
 * ONNX asks; sorted = 0 allows any order, so the sorted one serves. Indices are int64. */
MAP(map_top_k) {
  UNUSED;
  const tide_tensor *x = NULL, *kt = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &kt);
  int64_t k = 0;
  int n = 0;
  if (!st) st = onnx_known_ints(kt, "K", &k, 1, &n);
  if (st) return st;
  if (n != 1 || k < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "TopK's K must be one value >= 0");
  int r = x->ndim, ax = onnx_axis(onnx_attr_i(node, "axis", -1), r);
  if (ax < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "TopK's axis %" PRId64 " is out of range for rank %d",
                               onnx_attr_i(node, "axis", -1), r);
  bool largest = onnx_attr_i(node, "largest", 1) != 0;
  int flip = tide_dtype_is_float(x->dt) ? TIDE_OP_NEG : TIDE_OP_INVERT;
  int64_t perm[TIDE_MAX_DIMS];
  for (int d = 0; d < r; d++) perm[d] = d;
  perm[ax] = r - 1, perm[r - 1] = ax;
  tide_tensor t[6] = {{0}};
  const tide_tensor *cur = x;
  if (ax != r - 1) st = onnx_transpose(cur, r, perm, &t[0]), cur = &t[0];
  if (!st && !largest) st = onnx_unary(flip, cur, &t[1]), cur = &t[1];
  tide_attrs a = {0};
  a.n = k;
  tide_tensor *o[2] = {&t[2], &t[3]};
  if (!st) st = tide_op_run(TIDE_OP_TOP_K, &a, 1, &cur, 2, o);
  const tide_tensor *vals = &t[2], *idx = &t[3];
  if (!st && !largest) st = onnx_unary(flip, vals, &t[4]), vals = &t[4];
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  if (!st) st = onnx_run1(TIDE_OP_CAST, &c, 1, &idx, &t[5]), idx = &t[5];
  if (ax != r - 1) {
    if (!st) st = onnx_transpose(vals, r, perm, &out[0]);
    if (!st && n_out > 1) st = onnx_transpose(idx, r, perm, &out[1]);
  } else {
    if (!st) st = tide_tensor_share(&out[0], vals);
    if (!st && n_out > 1) st = tide_tensor_share(&out[1], idx);
  }
  release_all(t, 6);
  return st;
}

/* GatherND(data, indices) with batch_dims: gather_nd, a negative index counted from the end of
 * its axis first (ONNX allows [-s, s-1]; tide's gather_nd, as TF's, refuses negatives): the
 * sizes of the K indexed axes, from Shape(data) (known or not), added where an index is < 0. */
MAP(map_gather_nd) {
  UNUSED;
  const tide_tensor *x = NULL, *idx = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &x);
  if (!st) st = onnx_in(node, n_in, in, 1, &idx);
  if (st) return st;
  int64_t b = onnx_attr_i(node, "batch_dims", 0);
  if (idx->ndim < 1 || idx->dims[idx->ndim - 1] < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "GatherND needs indices of rank >= 1 whose last dim is known");
  int64_t kk = idx->dims[idx->ndim - 1];
  if (b < 0 || b >= idx->ndim || b + kk > x->ndim)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "GatherND's batch_dims %" PRId64 " and %" PRId64 "-long index tuples do not fit "
                     "data of rank %d and indices of rank %d", b, kk, x->ndim, idx->ndim);
  tide_tensor t[8] = {{0}};
  tide_attrs c = {0};
  c.dtype = TIDE_INT64;
  int64_t pos[TIDE_MAX_DIMS];
  for (int64_t d = 0; d < kk; d++) pos[d] = b + d;
  tide_attrs g = {0};
  st = onnx_run1(TIDE_OP_CAST, &c, 1, &idx, &t[0]);
  if (!st) st = onnx_run1(TIDE_OP_SHAPE, &c, 1, &x, &t[1]);
  if (!st) st = onnx_ints_tensor(TIDE_INT64, (int)kk, pos, &t[2]);
  const tide_tensor *gi[2] = {&t[1], &t[2]};
  if (!st) st = onnx_run1(TIDE_OP_GATHER, &g, 2, gi, &t[3]); /* the indexed axes' sizes, [K] */
  if (!st) st = onnx_scalar(TIDE_INT64, 0, &t[4]);
  if (!st) st = onnx_binary(TIDE_OP_LESS, &t[0], &t[4], &t[5]);
  if (!st) st = onnx_binary(TIDE_OP_ADD, &t[0], &t[3], &t[6]);
  const tide_tensor *w[3] = {&t[5], &t[6], &t[0]};
  if (!st) st = onnx_run1(TIDE_OP_WHERE, &(tide_attrs){0}, 3, w, &t[7]);
  tide_attrs a = {0};
  a.n = b;
  const tide_tensor *ins[2] = {x, &t[7]};
  if (!st) st = onnx_run1(TIDE_OP_GATHER_ND, &a, 2, ins, &out[0]);
  release_all(t, 8);
  return st;
}

static const onnx_op OPS[] = {
    {"Einsum", map_einsum}, {"GatherElements", map_gather_elements}, {"Trilu", map_trilu},
    {"CumSum", map_cumsum}, {"TopK", map_top_k},                     {"GatherND", map_gather_nd},
};

const onnx_op *onnx_ops_more_find(const char *name) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}
