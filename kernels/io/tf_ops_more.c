/* io/tf_ops_more.c — TF ops of Transformer encoders (TF Hub's BERT) mapped onto registry ops: Einsum (two
 * operands as transposes, reshapes and one matmul), OneHot, ResourceGather, and StridedSlice with bounds known
 * only at run time (a gather of a run-time range per sliced dim: BERT's position_embeddings[:seq_length]). */
#include "tf_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- small builders ------------------------------------------------------------------- */

static tide_status op1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out) {
  tide_tensor *o[1] = {out};
  return tide_op_run(op, a, n, ins, 1, o);
}

/* A new eager int32 tensor of rank `rank` (0 or 1) holding n values. */
static tide_status ints32(int rank, int n, const int64_t *v, tide_tensor *out) {
  int64_t d = n;
  tide_status st = tide_tensor_init(out, TIDE_INT32, rank, &d);
  for (int i = 0; !st && i < n; i++) ((int32_t *)out->data)[i] = (int32_t)v[i];
  return st;
}

/* A product of dims (src[k]'s dim axis[k]) that one dim of a reshape's target stands for. */
typedef struct dim_prod {
  const tide_tensor *src[TIDE_MAX_DIMS];
  int axis[TIDE_MAX_DIMS];
  int n;
} dim_prod;

/* The product's value when every dim in it is known, else -1. */
static int64_t prod_known(const dim_prod *p) {
  int64_t v = 1;
  for (int k = 0; k < p->n; k++) {
    int64_t d = p->src[k]->dims[p->axis[k]];
    if (d < 0) return -1;
    v *= d;
  }
  return v;
}

/* Dim `axis` of x as a 0-d int32 (a constant when known, else read from its shape when the graph runs). */
static tide_status dim_scalar(const tide_tensor *x, int axis, tide_tensor *out) {
  if (x->dims[axis] >= 0) return ints32(0, 1, &x->dims[axis], out);
  tide_tensor shape = {0};
  tide_attrs a = {0};
  a.dtype = TIDE_INT32;
  tide_status st = op1(TIDE_OP_SHAPE, &a, 1, &x, &shape);
  if (!st) {
    tide_attrs s = {0};
    s.ints[0] = axis, s.ints[1] = axis + 1, s.ints[2] = 1, s.nints = 3, s.n = 1; /* shrink: 0-d */
    const tide_tensor *sin[1] = {&shape};
    st = op1(TIDE_OP_SLICE, &s, 1, sin, out);
  }
  tide_tensor_release(&shape);
  return st;
}

/* x reshaped to nd dims, dim i the product p[i]: a constant shape when at most one product is unknown (-1),
 * else a shape computed when the graph runs, with the known dims as hints. */
static tide_status reshape_prods(const tide_tensor *x, int nd, const dim_prod *p, tide_tensor *out) {
  tide_attrs a = {0};
  int unknown = 0;
  for (int i = 0; i < nd; i++) {
    a.ints[i] = prod_known(&p[i]);
    unknown += a.ints[i] < 0;
  }
  a.nints = nd;
  if (unknown <= 1) return op1(TIDE_OP_RESHAPE, &a, 1, &x, out);
  tide_tensor parts[TIDE_MAX_DIMS];
  memset(parts, 0, sizeof parts);
  tide_status st = TIDE_OK;
  for (int i = 0; !st && i < nd; i++) {
    tide_tensor acc = {0};
    int64_t one = 1;
    st = ints32(0, 1, &one, &acc);
    for (int k = 0; !st && k < p[i].n; k++) {
      tide_tensor d = {0}, m = {0};
      st = dim_scalar(p[i].src[k], p[i].axis[k], &d);
      const tide_tensor *mi[2] = {&acc, &d};
      if (!st) st = op1(TIDE_OP_MUL, &(tide_attrs){0}, 2, mi, &m);
      tide_tensor_release(&d);
      tide_tensor_release(&acc);
      if (!st) tide_tensor_share(&acc, &m); /* never by value: an inline header points into itself */
      tide_tensor_release(&m);
    }
    tide_attrs e = {0}; /* 0-d -> [1] for the concat */
    const tide_tensor *ei[1] = {&acc};
    if (!st) st = op1(TIDE_OP_EXPAND_DIMS, &e, 1, ei, &parts[i]);
    tide_tensor_release(&acc);
  }
  tide_tensor shape = {0};
  const tide_tensor *ci[TIDE_MAX_DIMS];
  for (int i = 0; i < nd; i++) ci[i] = &parts[i];
  if (!st) st = nd == 1 ? tide_tensor_share(&shape, &parts[0]) : op1(TIDE_OP_CONCAT, &(tide_attrs){0}, nd, ci, &shape);
  const tide_tensor *ri[2] = {x, &shape};
  if (!st) st = op1(TIDE_OP_RESHAPE, &a, 2, ri, out); /* a.ints: the hints */
  for (int i = 0; i < nd; i++) tide_tensor_release(&parts[i]);
  tide_tensor_release(&shape);
  return st;
}

/* x transposed by perm (n dims); a copy of the reference when perm is the identity. */
static tide_status transpose_to(const tide_tensor *x, int n, const int *perm, tide_tensor *out) {
  bool ident = true;
  tide_attrs a = {0};
  for (int i = 0; i < n; i++) {
    a.ints[i] = perm[i];
    ident = ident && perm[i] == i;
  }
  a.nints = n;
  if (ident || n == 0) return tide_tensor_share(out, x);
  return op1(TIDE_OP_TRANSPOSE, &a, 1, &x, out);
}

/* ---- Einsum ------------------------------------------------------------------------------ */

enum { LABELS = 52 };

static int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -1;
}

/* One operand's subscripts as label codes (at most TIDE_MAX_DIMS), each once. */
static tide_status parse_labels(const char *s, size_t len, int *lab, int *n, const char *what) {
  *n = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') return TIDE_FAIL(TIDE_ERR_VALUE, "an equation with an ellipsis (...) is not mapped");
    int l = label_of(s[i]);
    if (l < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "'%c' in its equation is not a subscript letter", s[i]);
    for (int k = 0; k < *n; k++)
      if (lab[k] == l)
        return TIDE_FAIL(TIDE_ERR_VALUE, "%s repeats subscript '%c' (a diagonal), which is not mapped", what, s[i]);
    if (*n == TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_VALUE, "%s has more than %d subscripts", what, TIDE_MAX_DIMS);
    lab[(*n)++] = l;
  }
  return TIDE_OK;
}

static int find(const int *lab, int n, int l) {
  for (int k = 0; k < n; k++)
    if (lab[k] == l) return k;
  return -1;
}

/* x with the dims whose labels are in no other operand and not in the output summed away (lab updated). */
static tide_status sum_private(const tide_tensor *x, int *lab, int *n, const int *other, int n_other,
                               const int *outl, int n_out, tide_tensor *out) {
  tide_attrs a = {0};
  int keep = 0;
  for (int k = 0; k < *n; k++) {
    if (find(other, n_other, lab[k]) < 0 && find(outl, n_out, lab[k]) < 0) a.ints[a.nints++] = k;
    else lab[keep++] = lab[k];
  }
  if (a.nints == 0) return tide_tensor_share(out, x);
  *n = keep;
  return op1(TIDE_OP_SUM, &a, 1, &x, out);
}

tide_status tf_map_einsum(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                          tf_val *out) {
  (void)im, (void)n_out;
  const Tensorflow__AttrValue *eq = tf_attr(node, "equation");
  if (!eq || eq->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S) return TIDE_FAIL(TIDE_ERR_VALUE, "it has no equation");
  const char *s = (const char *)eq->s.data;
  size_t len = eq->s.len;
  if (n_in < 1 || n_in > 2) return TIDE_FAIL(TIDE_ERR_VALUE, "an Einsum of %d operands is not mapped (1 or 2)", n_in);
  const tide_tensor *x[2] = {NULL, NULL};
  for (int i = 0; i < n_in; i++) {
    tide_status st = tf_tensor_in(in, n_in, i, &x[i]);
    if (st) return st;
  }
  /* split "a,b->c" */
  const char *arrow = NULL;
  for (size_t i = 0; i + 1 < len; i++)
    if (s[i] == '-' && s[i + 1] == '>') arrow = s + i;
  size_t lhs_len = arrow ? (size_t)(arrow - s) : len;
  const char *comma = memchr(s, ',', lhs_len);
  if ((n_in == 2) != (comma != NULL))
    return TIDE_FAIL(TIDE_ERR_VALUE, "its equation '%.*s' does not name %d operands", (int)len, s, n_in);
  int lab[2][TIDE_MAX_DIMS], nl[2] = {0, 0}, outl[TIDE_MAX_DIMS], no = 0;
  tide_status st = parse_labels(s, comma ? (size_t)(comma - s) : lhs_len, lab[0], &nl[0], "operand 0");
  if (!st && comma) st = parse_labels(comma + 1, lhs_len - (size_t)(comma + 1 - s), lab[1], &nl[1], "operand 1");
  if (st) return st;
  if (arrow) {
    st = parse_labels(arrow + 2, len - (size_t)(arrow + 2 - s), outl, &no, "the output");
    if (st) return st;
  } else { /* implicit output: the labels seen once, in alphabetical order */
    int count[LABELS] = {0};
    for (int i = 0; i < n_in; i++)
      for (int k = 0; k < nl[i]; k++) count[lab[i][k]]++;
    for (int l = 0; l < LABELS; l++)
      if (count[l] == 1) outl[no++] = l;
  }
  for (int i = 0; i < n_in; i++)
    if (x[i]->ndim != nl[i])
      return TIDE_FAIL(TIDE_ERR_SHAPE, "its equation gives operand %d %d subscripts, but it has rank %d", i, nl[i],
                       x[i]->ndim);
  for (int k = 0; k < no; k++)
    if (find(lab[0], nl[0], outl[k]) < 0 && (n_in < 2 || find(lab[1], nl[1], outl[k]) < 0))
      return TIDE_FAIL(TIDE_ERR_VALUE, "output subscript %d is in no operand", k);

  tide_tensor y[2] = {{0}, {0}};
  for (int i = 0; !st && i < n_in; i++)
    st = sum_private(x[i], lab[i], &nl[i], n_in == 2 ? lab[1 - i] : NULL, n_in == 2 ? nl[1 - i] : 0, outl, no, &y[i]);
  if (!st && n_in == 1) {
    int perm[TIDE_MAX_DIMS];
    for (int k = 0; k < no; k++) perm[k] = find(lab[0], nl[0], outl[k]);
    st = transpose_to(&y[0], no, perm, &out[0].t);
    tide_tensor_release(&y[0]);
    if (!st) out[0].set = true;
    return st;
  }
  /* batch (in both and the output, in output order), contracted (both, not output), free of each */
  int batch[TIDE_MAX_DIMS], con[TIDE_MAX_DIMS], fa[TIDE_MAX_DIMS], fb[TIDE_MAX_DIMS];
  int nb = 0, nc = 0, nfa = 0, nfb = 0;
  for (int k = 0; k < no; k++)
    if (find(lab[0], nl[0], outl[k]) >= 0 && find(lab[1], nl[1], outl[k]) >= 0) batch[nb++] = outl[k];
  for (int k = 0; k < nl[0]; k++) {
    int l = lab[0][k];
    if (find(lab[1], nl[1], l) < 0) fa[nfa++] = l;
    else if (find(outl, no, l) < 0) con[nc++] = l;
  }
  for (int k = 0; k < nl[1]; k++)
    if (find(lab[0], nl[0], lab[1][k]) < 0) fb[nfb++] = lab[1][k];

  tide_tensor at = {0}, bt = {0}, a2 = {0}, b2 = {0}, mm = {0}, r = {0};
  int perm[TIDE_MAX_DIMS], np = 0;
  for (int k = 0; k < nb; k++) perm[np++] = find(lab[0], nl[0], batch[k]);
  for (int k = 0; k < nfa; k++) perm[np++] = find(lab[0], nl[0], fa[k]);
  for (int k = 0; k < nc; k++) perm[np++] = find(lab[0], nl[0], con[k]);
  if (!st) st = transpose_to(&y[0], np, perm, &at);
  np = 0;
  for (int k = 0; k < nb; k++) perm[np++] = find(lab[1], nl[1], batch[k]);
  for (int k = 0; k < nc; k++) perm[np++] = find(lab[1], nl[1], con[k]);
  for (int k = 0; k < nfb; k++) perm[np++] = find(lab[1], nl[1], fb[k]);
  if (!st) st = transpose_to(&y[1], np, perm, &bt);
  /* [batch..., prod(free a), prod(contracted)] and [batch..., prod(contracted), prod(free b)] */
  dim_prod pa[TIDE_MAX_DIMS], pb[TIDE_MAX_DIMS];
  memset(pa, 0, sizeof pa), memset(pb, 0, sizeof pb);
  if (nb + 2 > TIDE_MAX_DIMS) st = st ? st : TIDE_FAIL(TIDE_ERR_SHAPE, "too many batch subscripts");
  for (int k = 0; !st && k < nb; k++) {
    pa[k] = (dim_prod){.src = {&at}, .axis = {k}, .n = 1};
    pb[k] = (dim_prod){.src = {&bt}, .axis = {k}, .n = 1};
  }
  for (int k = 0; !st && k < nfa; k++) pa[nb].src[k] = &at, pa[nb].axis[k] = nb + k, pa[nb].n++;
  for (int k = 0; !st && k < nc; k++) {
    pa[nb + 1].src[k] = &at, pa[nb + 1].axis[k] = nb + nfa + k, pa[nb + 1].n++;
    pb[nb].src[k] = &bt, pb[nb].axis[k] = nb + k, pb[nb].n++;
  }
  for (int k = 0; !st && k < nfb; k++) pb[nb + 1].src[k] = &bt, pb[nb + 1].axis[k] = nb + nc + k, pb[nb + 1].n++;
  if (!st) st = nfa == 1 && nc == 1 ? tide_tensor_share(&a2, &at) : reshape_prods(&at, nb + 2, pa, &a2);
  if (!st) st = nfb == 1 && nc == 1 ? tide_tensor_share(&b2, &bt) : reshape_prods(&bt, nb + 2, pb, &b2);
  const tide_tensor *mi[2] = {&a2, &b2};
  if (!st) st = op1(TIDE_OP_MATMUL, &(tide_attrs){0}, 2, mi, &mm);
  /* back to [batch..., free a..., free b...], then to the output's order */
  dim_prod pr[TIDE_MAX_DIMS];
  memset(pr, 0, sizeof pr);
  int nr = 0, order[TIDE_MAX_DIMS];
  for (int k = 0; k < nb; k++) pr[nr] = (dim_prod){.src = {&mm}, .axis = {k}, .n = 1}, order[nr++] = batch[k];
  for (int k = 0; k < nfa; k++) pr[nr] = (dim_prod){.src = {&at}, .axis = {nb + k}, .n = 1}, order[nr++] = fa[k];
  for (int k = 0; k < nfb; k++) pr[nr] = (dim_prod){.src = {&bt}, .axis = {nb + nc + k}, .n = 1}, order[nr++] = fb[k];
  if (!st) st = nfa == 1 && nfb == 1 ? tide_tensor_share(&r, &mm) : reshape_prods(&mm, nr, pr, &r);
  for (int k = 0; k < no; k++) perm[k] = find(order, nr, outl[k]);
  if (!st) st = transpose_to(&r, no, perm, &out[0].t);
  if (!st) out[0].set = true;
  tide_tensor *tmp[] = {&y[0], &y[1], &at, &bt, &a2, &b2, &mm, &r};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++) tide_tensor_release(tmp[k]);
  return st;
}

/* ---- OneHot, ResourceGather ----------------------------------------------------------------- */

tide_status tf_map_one_hot(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                           tf_val *out) {
  (void)im, (void)n_out;
  const tide_tensor *idx = NULL, *depth = NULL, *on = NULL, *off = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &idx);
  if (!st) st = tf_tensor_in(in, n_in, 1, &depth);
  if (!st) st = tf_tensor_in(in, n_in, 2, &on);
  if (!st) st = tf_tensor_in(in, n_in, 3, &off);
  if (st) return st;
  if (!tf_val_known(in[1]) || depth->nelem != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its depth must be one number known when the model loads");
  if (!tf_val_known(in[2]) || !tf_val_known(in[3]) || on->nelem != 1 || off->nelem != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its on_value and off_value must be numbers known when the model loads");
  const Tensorflow__AttrValue *ax = tf_attr(node, "axis");
  tide_attrs a = {0};
  a.n = (int64_t)tf_number_at(depth, 0);
  a.axis = ax && ax->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I ? (int32_t)ax->i : -1;
  a.scalars[0] = tf_number_at(on, 0);
  a.scalars[1] = tf_number_at(off, 0);
  a.dtype = on->dt;
  st = op1(TIDE_OP_ONE_HOT, &a, 1, &idx, &out[0].t);
  if (!st) out[0].set = true;
  return st;
}

/* ResourceGather(resource, indices): a read of the variable, gathered along axis 0 (as GatherV2). */
tide_status tf_map_resource_gather(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in,
                                   int n_out, tf_val *out) {
  (void)n_out;
  if (n_in < 2 || in[0]->var < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "its first input is not a variable's handle");
  const tide_tensor *idx = NULL;
  tide_status st = tf_tensor_in(in, n_in, 1, &idx);
  if (st) return st;
  tide_tensor v = {0};
  st = tide_graph_variable(im->g, im->vars[in[0]->var], &v);
  const Tensorflow__AttrValue *bd = tf_attr(node, "batch_dims");
  tide_attrs a = {0};
  a.n = bd && bd->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I ? bd->i : 0;
  a.axis = (int32_t)a.n;
  const tide_tensor *gi[2] = {&v, idx};
  if (!st) st = op1(TIDE_OP_GATHER, &a, 2, gi, &out[0].t);
  if (!st) out[0].set = true;
  tide_tensor_release(&v);
  return st;
}

/* ---- StridedSlice with run-time bounds ---------------------------------------------------------- */

/* Element j of the 1-D bound tensor b as a 0-d int32. */
static tide_status bound_at(const tide_tensor *b, int j, tide_tensor *out) {
  tide_attrs s = {0};
  s.ints[0] = j, s.ints[1] = j + 1, s.ints[2] = 1, s.nints = 3, s.n = 1;
  tide_tensor e = {0};
  tide_status st = op1(TIDE_OP_SLICE, &s, 1, &b, &e);
  if (!st && e.dt != TIDE_INT32) {
    tide_attrs c = {0};
    c.dtype = TIDE_INT32;
    const tide_tensor *ci[1] = {&e};
    st = op1(TIDE_OP_CAST, &c, 1, ci, out);
  } else if (!st) st = tide_tensor_share(out, &e);
  tide_tensor_release(&e);
  return st;
}

/* A run-time bound v of a dim of size dim, as TF reads it for a positive stride: negative counts from the end,
 * then clamped to [0, dim]. */
static tide_status normalize_bound(const tide_tensor *v, const tide_tensor *dim, tide_tensor *out) {
  int64_t z = 0;
  tide_tensor zero = {0}, neg = {0}, plus = {0}, w = {0}, lo = {0};
  tide_status st = ints32(0, 1, &z, &zero);
  const tide_tensor *li[2] = {v, &zero}, *pi[2] = {v, dim}, *wi[3] = {&neg, &plus, v}, *mi[2] = {&w, &zero},
                    *ni[2] = {&lo, dim};
  if (!st) st = op1(TIDE_OP_LESS, &(tide_attrs){0}, 2, li, &neg);
  if (!st) st = op1(TIDE_OP_ADD, &(tide_attrs){0}, 2, pi, &plus);
  if (!st) st = op1(TIDE_OP_WHERE, &(tide_attrs){0}, 3, wi, &w);
  if (!st) st = op1(TIDE_OP_MAXIMUM, &(tide_attrs){0}, 2, mi, &lo);
  if (!st) st = op1(TIDE_OP_MINIMUM, &(tide_attrs){0}, 2, ni, out);
  tide_tensor *tmp[] = {&zero, &neg, &plus, &w, &lo};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++) tide_tensor_release(tmp[k]);
  return st;
}

/* StridedSlice(x, begin, end, strides) whose begin or end is computed when the graph runs: each sliced dim is a
 * gather of range(begin, end, stride), the bounds read as TF does (negative from the end, clamped); strides
 * must be known and positive; shrunk dims are squeezed at the end. Called by tf_ops.c's StridedSlice. */
tide_status tf_map_strided_slice_dynamic(const Tensorflow__NodeDef *node, int n_in, tf_val *const *in,
                                         int64_t begin_mask, int64_t end_mask, int64_t shrink, tf_val *out) {
  const tide_tensor *x = NULL, *b = NULL, *e = NULL, *s = NULL;
  tide_status st = tf_tensor_in(in, n_in, 0, &x);
  if (!st) st = tf_tensor_in(in, n_in, 1, &b);
  if (!st) st = tf_tensor_in(in, n_in, 2, &e);
  if (!st) st = tf_tensor_in(in, n_in, 3, &s);
  if (st) return st;
  (void)node;
  if (!tf_val_known(in[3]) || s->ndim != 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its strides must be known when the model loads (its bounds are not)");
  if (b->ndim != 1 || e->ndim != 1 || b->dims[0] != s->dims[0] || e->dims[0] != s->dims[0] || x->ndim < 0 ||
      s->dims[0] > x->ndim)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "its begin, end and strides must be 1-D of one length, at most x's rank");
  int nd = (int)s->dims[0];
  tide_tensor cur = {0};
  st = tide_tensor_share(&cur, x);
  for (int j = 0; !st && j < nd; j++) {
    int64_t step = (int64_t)tf_number_at(s, j);
    bool full = (begin_mask >> j & 1) && (end_mask >> j & 1) && step == 1 && !(shrink >> j & 1);
    if (full) continue;
    if (step <= 0)
      return tide_tensor_release(&cur),
             TIDE_FAIL(TIDE_ERR_VALUE, "stride %lld with bounds known only at run time is not mapped (positive "
                       "strides are)", (long long)step);
    tide_tensor dim = {0}, bj = {0}, ej = {0}, bn = {0}, en = {0}, st1 = {0}, idx = {0}, nx = {0};
    st = dim_scalar(&cur, j, &dim);
    int64_t zero = 0, one = 1;
    if (!st) st = begin_mask >> j & 1 ? ints32(0, 1, &zero, &bj) : bound_at(b, j, &bj);
    if (!st) st = normalize_bound(&bj, &dim, &bn);
    if (!st && (shrink >> j & 1)) { /* one element: [b, b + 1) */
      tide_tensor o = {0};
      st = ints32(0, 1, &one, &o);
      const tide_tensor *ai[2] = {&bn, &o};
      if (!st) st = op1(TIDE_OP_ADD, &(tide_attrs){0}, 2, ai, &en);
      tide_tensor_release(&o);
    } else if (!st) {
      if (end_mask >> j & 1) st = tide_tensor_share(&ej, &dim);
      else st = bound_at(e, j, &ej);
      if (!st) st = normalize_bound(&ej, &dim, &en);
    }
    if (!st) st = ints32(0, 1, &step, &st1);
    tide_attrs r = {0};
    r.dtype = TIDE_INT32;
    const tide_tensor *ri[3] = {&bn, &en, &st1};
    if (!st) st = op1(TIDE_OP_RANGE_DYNAMIC, &r, 3, ri, &idx);
    tide_attrs g = {0};
    g.axis = j;
    const tide_tensor *gi[2] = {&cur, &idx};
    if (!st) st = op1(TIDE_OP_GATHER, &g, 2, gi, &nx);
    if (!st) { /* never by value: an inline header points into itself */
      tide_tensor_release(&cur);
      tide_tensor_share(&cur, &nx);
    }
    tide_tensor *tmp[] = {&dim, &bj, &ej, &bn, &en, &st1, &idx, &nx};
    for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++) tide_tensor_release(tmp[k]);
  }
  tide_attrs q = {0};
  for (int j = 0; j < nd; j++)
    if (shrink >> j & 1) q.ints[q.nints++] = j;
  const tide_tensor *qi[1] = {&cur};
  if (!st) st = q.nints ? op1(TIDE_OP_SQUEEZE, &q, 1, qi, &out[0].t) : tide_tensor_share(&out[0].t, &cur);
  if (!st) out[0].set = true;
  tide_tensor_release(&cur);
  return st;
}
