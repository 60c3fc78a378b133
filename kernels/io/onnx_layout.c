/* io/onnx_layout.c — the transposes the NCHW mappings add (onnx_ops_nn.c: each Conv, pool and
 * normalization turns NCHW into NHWC and back), cancelled while the graph is built.
 *
 * Why: a CNN exported to ONNX is a chain Conv -> BatchNormalization -> Relu -> Conv ..., so
 * mapped op by op every image crossed two transposes per op: MobileNetV2 ran 2.4x slower from
 * ONNX than from the same model's SavedModel. Two rewrites, made as each op is recorded:
 * - a Transpose of a value a Transpose made composes with it: the pair becomes one Transpose
 *   of the first one's input, or nothing when the perms undo each other;
 * - an elementwise op (Relu, Clip, Add, ...) whose inputs are values transposed by one perm
 *   (others: known tensors, transposed here at load, and scalars) runs on the values before
 *   the transpose, and the transpose moves after it, to meet the next op's inverse one; so does
 *   a Pad (its amounts moved to the dims they pad).
 * The transposes nothing reads any more are dropped by the graph's dead-code pass. */
#include "onnx_internal.h"

#include <string.h>

#include "../graph/graph_internal.h" /* the nodes' fields only: fuzz/fuzz_onnx.c links no hidden symbol */

/* When t is output 0 of a Transpose node of the graph being built, with an explicit perm of
 * its rank: that perm and, in src, the symbolic value it transposes. */
static bool transposed(const tide_tensor *t, int64_t *perm, tide_tensor *src) {
  if (!t || !(t->flags & TIDE_TENSOR_SYMBOLIC) || t->inline_data.sym.index != 0) return false;
  tide_graph *g = tide_graph_building();
  int node = t->inline_data.sym.node;
  if (!g || t->inline_data.sym.graph_id != tide_graph_id(g) || node < 0 || node >= g->nnodes) return false;
  const gnode *n = &g->nodes[node];
  if (n->kind != TIDE_NODE_OP || n->op != TIDE_OP_TRANSPOSE || n->n_in != 1 || n->attrs.nints != t->ndim ||
      t->ndim < 1)
    return false;
  unsigned seen = 0; /* a permutation of 0..ndim-1 as written (not negative axes) */
  for (int i = 0; i < t->ndim; i++) {
    perm[i] = n->attrs.ints[i];
    if (perm[i] < 0 || perm[i] >= t->ndim || (seen & (1u << perm[i]))) return false;
    seen |= 1u << perm[i];
  }
  /* src names output (node, index) of g, as graph/build.c's tide_graph_symbolic writes one */
  const tide_tensor *d = &g->nodes[n->in[0].node].out[n->in[0].index];
  memset(src, 0, sizeof *src);
  src->ndim = d->ndim, src->dt = d->dt, src->nelem = d->nelem, src->dev = TIDE_CPU;
  for (int i = 0; i < d->ndim && i < TIDE_MAX_DIMS; i++) src->dims[i] = d->dims[i], src->strides[i] = d->strides[i];
  src->flags = TIDE_TENSOR_SYMBOLIC;
  src->inline_data.sym.graph_id = tide_graph_id(g);
  src->inline_data.sym.node = n->in[0].node;
  src->inline_data.sym.index = n->in[0].index;
  return src->ndim == t->ndim;
}

static tide_status transpose_by(const tide_tensor *x, int n, const int64_t *perm, tide_tensor *out) {
  tide_attrs a = {0};
  for (int i = 0; i < n; i++) a.ints[i] = perm[i];
  a.nints = n;
  tide_tensor *o[1] = {out};
  return tide_op_run(TIDE_OP_TRANSPOSE, &a, 1, &x, 1, o);
}

/* Transpose(p2) of Transpose(p1)(src) = Transpose(p1[p2[i]])(src): nothing when that is the identity. */
static bool compose(const tide_attrs *a, const tide_tensor *x, tide_tensor *out, tide_status *st) {
  int64_t p1[TIDE_MAX_DIMS], p[TIDE_MAX_DIMS];
  tide_tensor src;
  if (a->nints != x->ndim || !transposed(x, p1, &src)) return false;
  bool identity = true;
  for (int i = 0; i < x->ndim; i++) {
    if (a->ints[i] < 0 || a->ints[i] >= x->ndim) return false; /* the op's own check will say so */
    p[i] = p1[a->ints[i]];
    identity = identity && p[i] == i;
  }
  *st = identity ? tide_tensor_share(out, &src) : transpose_by(&src, x->ndim, p, out);
  return true;
}

/* An elementwise op on values transposed by one perm p: Transpose(p)(op(the values before it)). */
static bool sink(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out, tide_status *st) {
  enum { MAX_IN = 4 };
  if (n < 1 || n > MAX_IN || (tide_op_flags(op) & TIDE_OPF_STATEFUL)) return false;
  int64_t p[TIDE_MAX_DIMS], q[TIDE_MAX_DIMS], inv[TIDE_MAX_DIMS];
  tide_tensor src[MAX_IN];
  bool have = false, moved[MAX_IN];
  int r = 0;
  for (int k = 0; k < n; k++) { /* every transposed input: the same perm and rank */
    moved[k] = transposed(ins[k], q, &src[k]);
    if (!moved[k]) continue;
    if (!have) {
      r = ins[k]->ndim, have = true;
      for (int i = 0; i < r; i++) p[i] = q[i];
    } else if (ins[k]->ndim != r) {
      return false;
    } else {
      for (int i = 0; i < r; i++)
        if (q[i] != p[i]) return false;
    }
  }
  if (!have) return false;
  for (int k = 0; k < n; k++) /* the others: known tensors of rank <= r, or scalars */
    if (!moved[k] && !(onnx_known(ins[k]) && ins[k]->ndim <= r) && ins[k]->ndim != 0) return false;
  for (int i = 0; i < r; i++) inv[p[i]] = i;
  tide_tensor held[MAX_IN] = {{0}}, tmp = {0};
  const tide_tensor *args[MAX_IN];
  *st = TIDE_OK;
  for (int k = 0; k < n && !*st; k++) {
    if (moved[k] || ins[k]->ndim == 0) {
      args[k] = moved[k] ? &src[k] : ins[k];
      continue;
    }
    /* a known operand broadcast against the transposed ones: ones prepended to rank r, then the inverse perm */
    int64_t dims[TIDE_MAX_DIMS];
    int lead = r - ins[k]->ndim;
    for (int i = 0; i < r; i++) dims[i] = i < lead ? 1 : ins[k]->dims[i - lead];
    tide_tensor full = {0};
    *st = onnx_reshape(ins[k], r, dims, &full);
    if (!*st) *st = onnx_transpose(&full, r, inv, &held[k]); /* known: a contiguous copy */
    tide_tensor_release(&full);
    args[k] = &held[k];
  }
  tide_tensor *o[1] = {&tmp};
  if (!*st) *st = tide_op_run(op, a, n, args, 1, o);
  if (!*st) *st = transpose_by(&tmp, r, p, out);
  tide_tensor_release(&tmp);
  for (int k = 0; k < n; k++) tide_tensor_release(&held[k]);
  return true;
}

/* Pad (ints: before and after per dim) of Transpose(p)(src) = Transpose(p)(src padded by the same
 * amounts on the dims they land on): Keras's ZeroPadding2D before a strided Conv. */
static bool pad(const tide_attrs *a, const tide_tensor *x, tide_tensor *out, tide_status *st) {
  int64_t p[TIDE_MAX_DIMS];
  tide_tensor src;
  int r = x->ndim;
  if (a->nints != 2 * r || !transposed(x, p, &src)) return false;
  tide_attrs b = *a;
  for (int i = 0; i < r; i++) b.ints[2 * p[i]] = a->ints[2 * i], b.ints[2 * p[i] + 1] = a->ints[2 * i + 1];
  tide_tensor tmp = {0}, *o[1] = {&tmp};
  const tide_tensor *in = &src;
  *st = tide_op_run(TIDE_OP_PAD, &b, 1, &in, 1, o);
  if (!*st) *st = transpose_by(&tmp, r, p, out);
  tide_tensor_release(&tmp);
  return true;
}

bool onnx_layout_run(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out,
                     tide_status *st) {
  if (op == TIDE_OP_TRANSPOSE && n == 1) return compose(a, ins[0], out, st);
  if (op == TIDE_OP_PAD && n == 1) return pad(a, ins[0], out, st);
  if (tide_op_flags(op) & TIDE_OPF_ELEMENTWISE) return sink(op, a, n, ins, out, st);
  return false;
}
