/* io/onnx_ops_rnn.c — ONNX's LSTM and GRU (forward, reverse, bidirectional; layout 0 and 1, as
 * torch.onnx.export writes them) unrolled over the time steps, known when the model loads, into
 * registry ops: one matmul of all steps' inputs by W, then per step a matmul by R and the gates. */
#include "onnx_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* At most this many time steps are unrolled (each is a dozen graph nodes per direction). */
#define RNN_MAX_STEPS 4096

/* Every intermediate tensor of one node's mapping, released together at its end. */
typedef struct bag {
  tide_tensor **t;
  size_t n, cap;
} bag;

static tide_tensor *fresh(bag *b) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    tide_tensor **t = realloc(b->t, cap * sizeof *t);
    if (!t) return NULL;
    b->t = t, b->cap = cap;
  }
  tide_tensor *x = calloc(1, sizeof *x);
  if (x) b->t[b->n++] = x;
  return x;
}

static void bag_free(bag *b) {
  for (size_t i = 0; i < b->n; i++) {
    tide_tensor_release(b->t[i]);
    free(b->t[i]);
  }
  free(b->t);
}

/* Each helper makes its result in a fresh slot of the bag (*out), or fails. */
#define NEW(var)                                                                          \
  tide_tensor *var = fresh(b);                                                            \
  if (!var) return TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory")

static tide_status slice_of(bag *b, const tide_tensor *x, int axis, int64_t start, int64_t stop, tide_tensor **out) {
  NEW(y);
  *out = y;
  return onnx_slice_axis(x, axis, start, stop, y);
}

static tide_status bin(bag *b, int op, const tide_tensor *x, const tide_tensor *y, tide_tensor **out) {
  NEW(z);
  *out = z;
  return onnx_binary(op, x, y, z);
}

static tide_status un(bag *b, int op, const tide_tensor *x, tide_tensor **out) {
  NEW(z);
  *out = z;
  return onnx_unary(op, x, z);
}

/* x @ w^T */
static tide_status matmul_t(bag *b, const tide_tensor *x, const tide_tensor *w, tide_tensor **out) {
  NEW(z);
  tide_attrs a = {0};
  a.flags = TIDE_ATTR_TRANSPOSE_B;
  const tide_tensor *ins[2] = {x, w};
  *out = z;
  return onnx_run1(TIDE_OP_MATMUL, &a, 2, ins, z);
}

static tide_status reshape_to(bag *b, const tide_tensor *x, int n, const int64_t *dims, tide_tensor **out) {
  NEW(z);
  *out = z;
  return onnx_reshape(x, n, dims, z);
}

static tide_status concat_of(bag *b, int axis, int n, const tide_tensor *const *xs, tide_tensor **out) {
  NEW(z);
  tide_attrs a = {0};
  a.axis = axis;
  *out = z;
  return onnx_run1(TIDE_OP_CONCAT, &a, n, xs, z);
}

typedef struct rnn {
  bool gru;
  int dirs, gates;  /* gates: 4 (LSTM: i o f c) or 3 (GRU: z r h) */
  int64_t T, H;
  bool linear_before_reset;
} rnn;

/* Input k of the node, or NULL when left out. */
static const tide_tensor *opt_in(int n_in, const tide_tensor *const *in, int k) { return k < n_in ? in[k] : NULL; }

/* One direction d: the steps in time order (reverse: from the end), h per step into hs[t];
 * xw [T, B, gates*H] holds X @ W^T + the biases that add there. */
static tide_status run_direction(bag *b, const rnn *r, int d, const tide_tensor *xw, const tide_tensor *R,
                                 const tide_tensor *rb, const tide_tensor *P, const tide_tensor *h0,
                                 const tide_tensor *c0, tide_tensor **hs, tide_tensor **h_last, tide_tensor **c_last) {
  int64_t H = r->H, G = r->gates * H;
  tide_tensor *h = (tide_tensor *)h0, *c = (tide_tensor *)c0, *t1, *t2;
  tide_status st = TIDE_OK;
  for (int64_t k = 0; !st && k < r->T; k++) {
    int64_t t = d == 1 ? r->T - 1 - k : k;
    tide_tensor *xt = NULL, *g = NULL;
    int64_t bg[2] = {-1, G};
    st = slice_of(b, xw, 0, t, t + 1, &t1);
    if (!st) st = reshape_to(b, t1, 2, bg, &xt); /* [B, G] */
    if (st) break;
    if (!r->gru) {
      g = xt;
      if (h && !(st = matmul_t(b, h, R, &t2))) st = bin(b, TIDE_OP_ADD, xt, t2, &g);
      tide_tensor *gi = NULL, *go = NULL, *gf = NULL, *gc = NULL;
      if (!st) st = slice_of(b, g, 1, 0, H, &gi);
      if (!st) st = slice_of(b, g, 1, H, 2 * H, &go);
      if (!st) st = slice_of(b, g, 1, 2 * H, 3 * H, &gf);
      if (!st) st = slice_of(b, g, 1, 3 * H, 4 * H, &gc);
      tide_tensor *pi = NULL, *po = NULL, *pf = NULL;
      if (!st && P) st = slice_of(b, P, 0, 0, H, &pi);
      if (!st && P) st = slice_of(b, P, 0, H, 2 * H, &po);
      if (!st && P) st = slice_of(b, P, 0, 2 * H, 3 * H, &pf);
      if (!st && P && c && !(st = bin(b, TIDE_OP_MUL, pi, c, &t1))) st = bin(b, TIDE_OP_ADD, gi, t1, &gi);
      if (!st && P && c && !(st = bin(b, TIDE_OP_MUL, pf, c, &t1))) st = bin(b, TIDE_OP_ADD, gf, t1, &gf);
      tide_tensor *i = NULL, *f = NULL, *cc = NULL, *cn = NULL, *o = NULL, *tc = NULL;
      if (!st) st = un(b, TIDE_OP_SIGMOID, gi, &i);
      if (!st) st = un(b, TIDE_OP_TANH, gc, &cc);
      if (!st) st = bin(b, TIDE_OP_MUL, i, cc, &cn);
      if (!st && c && !(st = un(b, TIDE_OP_SIGMOID, gf, &f)) && !(st = bin(b, TIDE_OP_MUL, f, c, &t1)))
        st = bin(b, TIDE_OP_ADD, t1, cn, &cn);
      if (!st && P && !(st = bin(b, TIDE_OP_MUL, po, cn, &t1))) st = bin(b, TIDE_OP_ADD, go, t1, &go);
      if (!st) st = un(b, TIDE_OP_SIGMOID, go, &o);
      if (!st) st = un(b, TIDE_OP_TANH, cn, &tc);
      if (!st) st = bin(b, TIDE_OP_MUL, o, tc, &h);
      c = cn;
    } else {
      tide_tensor *xz = NULL, *xr = NULL, *xh = NULL, *hz = NULL, *hr = NULL, *hh = NULL, *z = NULL, *rr = NULL, *n = NULL;
      st = slice_of(b, xt, 1, 0, H, &xz);
      if (!st) st = slice_of(b, xt, 1, H, 2 * H, &xr);
      if (!st) st = slice_of(b, xt, 1, 2 * H, 3 * H, &xh);
      tide_tensor *Rzr = NULL, *Rh = NULL, *rbh = NULL;
      if (!st) st = slice_of(b, R, 0, 0, 2 * H, &Rzr);
      if (!st) st = slice_of(b, R, 0, 2 * H, 3 * H, &Rh);
      if (!st) st = slice_of(b, rb, 0, 2 * H, 3 * H, &rbh);
      if (!st && h) { /* h @ [Rz; Rr]^T, split */
        st = matmul_t(b, h, Rzr, &t1);
        if (!st) st = slice_of(b, t1, 1, 0, H, &hz);
        if (!st) st = slice_of(b, t1, 1, H, 2 * H, &hr);
      }
      tide_tensor *gz = xz, *gr = xr;
      if (!st && h) st = bin(b, TIDE_OP_ADD, xz, hz, &gz);
      if (!st && h) st = bin(b, TIDE_OP_ADD, xr, hr, &gr);
      if (!st) st = un(b, TIDE_OP_SIGMOID, gz, &z);
      if (!st) st = un(b, TIDE_OP_SIGMOID, gr, &rr);
      /* the candidate: Rh's bias sits inside the reset (linear_before_reset, PyTorch's) or outside */
      if (!st && !h) { /* h = 0: r * (0 + Rbh), or (r * 0) @ Rh^T + Rbh */
        if (r->linear_before_reset) st = bin(b, TIDE_OP_MUL, rr, rbh, &hh);
        else hh = rbh;
      } else if (!st && r->linear_before_reset) {
        if (!(st = matmul_t(b, h, Rh, &t1)) && !(st = bin(b, TIDE_OP_ADD, t1, rbh, &t2)))
          st = bin(b, TIDE_OP_MUL, rr, t2, &hh);
      } else if (!st) {
        if (!(st = bin(b, TIDE_OP_MUL, rr, h, &t1)) && !(st = matmul_t(b, t1, Rh, &t2)))
          st = bin(b, TIDE_OP_ADD, t2, rbh, &hh);
      }
      if (!st && !(st = bin(b, TIDE_OP_ADD, xh, hh, &t1))) st = un(b, TIDE_OP_TANH, t1, &n);
      /* h' = (1 - z) n + z h = n - z n + z h */
      if (!st && !(st = bin(b, TIDE_OP_MUL, z, n, &t1))) st = bin(b, TIDE_OP_SUB, n, t1, &t2);
      if (!st && h && !(st = bin(b, TIDE_OP_MUL, z, h, &t1))) st = bin(b, TIDE_OP_ADD, t2, t1, &t2);
      if (!st) h = t2;
    }
    if (!st) hs[t] = h;
  }
  *h_last = h, *c_last = c;
  return st;
}

static tide_status map_rnn(onnx_import *im, const Onnx__NodeProto *node, int n_in, const tide_tensor *const *in,
                           int n_out, tide_tensor *out) {
  (void)im;
  rnn r = {.gru = !strcmp(node->op_type, "GRU")};
  r.gates = r.gru ? 3 : 4;
  const char *op = r.gru ? "GRU" : "LSTM";
  const tide_tensor *X = NULL, *W = NULL, *R = NULL;
  tide_status st = onnx_in(node, n_in, in, 0, &X);
  if (!st) st = onnx_in(node, n_in, in, 1, &W);
  if (!st) st = onnx_in(node, n_in, in, 2, &R);
  if (st) return st;
  const tide_tensor *B = opt_in(n_in, in, 3), *lens = opt_in(n_in, in, 4), *h0 = opt_in(n_in, in, 5);
  const tide_tensor *c0 = r.gru ? NULL : opt_in(n_in, in, 6), *P = r.gru ? NULL : opt_in(n_in, in, 7);
  size_t dl;
  const char *dir = onnx_attr_s(node, "direction", &dl);
  bool bidi = dl == 13 && !memcmp(dir, "bidirectional", 13), rev = dl == 7 && !memcmp(dir, "reverse", 7);
  if (dl && !bidi && !rev && !(dl == 7 && !memcmp(dir, "forward", 7)))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s's direction '%.*s' is not forward, reverse or bidirectional", op, (int)dl, dir);
  r.dirs = bidi ? 2 : 1;
  r.H = onnx_attr_i(node, "hidden_size", -1);
  int layout = (int)onnx_attr_i(node, "layout", 0);
  r.linear_before_reset = onnx_attr_i(node, "linear_before_reset", 0) != 0;
  if (onnx_attr(node, "activations") || onnx_attr(node, "clip") || onnx_attr_i(node, "input_forget", 0))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s with activations, clip or input_forget is not mapped (the defaults are)", op);
  if (layout != 0 && layout != 1) return TIDE_FAIL(TIDE_ERR_VALUE, "%s's layout %d is not 0 or 1", op, layout);
  if (X->ndim != 3 || W->ndim != 3 || R->ndim != 3)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s takes X, W and R of rank 3 (they have ranks %d, %d, %d)", op, X->ndim, W->ndim, R->ndim);
  if (!onnx_known(W) || !onnx_known(R) || (B && !onnx_known(B)) || (P && !onnx_known(P)))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s's W, R, B and P must be known when the model loads (initializers)", op);
  r.T = X->dims[layout ? 1 : 0];
  int64_t I = X->dims[2], G = r.gates * r.H;
  if (r.H < 1 || W->dims[0] != r.dirs || W->dims[1] != G || W->dims[2] != I || R->dims[0] != r.dirs ||
      R->dims[1] != G || R->dims[2] != r.H || (B && (B->ndim != 2 || B->dims[0] != r.dirs || B->dims[1] != 2 * G)) ||
      (P && (P->ndim != 2 || P->dims[0] != r.dirs || P->dims[1] != 3 * r.H)))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s's W, R, B or P do not fit hidden_size %" PRId64 ", %d direction(s) and %" PRId64
                     " inputs", op, r.H, r.dirs, I);
  if (r.T < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s is unrolled over its time steps, whose number must be known when the model "
                     "loads (X's axis %d is free)", op, layout ? 1 : 0);
  if (r.T < 1 || r.T > RNN_MAX_STEPS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s is unrolled over its time steps: 1 to %d of them, not %" PRId64, op,
                     RNN_MAX_STEPS, r.T);
  if (lens) { /* sequence_lens: only all-full lengths are mapped */
    bool full = onnx_known(lens);
    for (int64_t i = 0; full && i < lens->nelem; i++) full = onnx_number_at(lens, i) == (double)r.T;
    if (!full) return TIDE_FAIL(TIDE_ERR_VALUE, "%s with sequence_lens shorter than the sequence is not mapped", op);
  }
  if (X->dt != TIDE_FLOAT32 && X->dt != TIDE_FLOAT64)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s takes float32 or float64", op);
  bag bg = {0}, *b = &bg;
  tide_tensor **hs = calloc((size_t)(r.T * r.dirs), sizeof *hs);
  tide_tensor *hl[2] = {0}, *cl[2] = {0};
  if (!hs) return TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory");
  tide_tensor *x = (tide_tensor *)X, *t1;
  static const int64_t SWAP01[3] = {1, 0, 2};
  if (layout) { /* [B, T, I] -> [T, B, I] */
    tide_tensor *y = fresh(b);
    st = y ? onnx_transpose(X, 3, SWAP01, y) : TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory");
    x = y;
  }
  int64_t flat[2] = {-1, I}, tbg[3] = {r.T, -1, G}, hv[2] = {-1, r.H};
  tide_tensor *x2 = NULL;
  if (!st) st = reshape_to(b, x, 2, flat, &x2);
  for (int d = 0; !st && d < r.dirs; d++) {
    tide_tensor *Wd, *Rd, *xw, *bias = NULL, *wb = NULL, *rb = NULL, *Pd = NULL, *h = NULL, *c = NULL;
    int64_t g1[1] = {G}, p1[1] = {3 * r.H};
    st = slice_of(b, W, 0, d, d + 1, &t1);
    if (!st) st = reshape_to(b, t1, 2, (int64_t[2]){G, I}, &Wd);
    if (!st) st = slice_of(b, R, 0, d, d + 1, &t1);
    if (!st) st = reshape_to(b, t1, 2, (int64_t[2]){G, r.H}, &Rd);
    if (!st && B) {
      st = slice_of(b, B, 0, d, d + 1, &t1);
      if (!st) st = reshape_to(b, t1, 1, (int64_t[1]){2 * G}, &t1);
      if (!st) st = slice_of(b, t1, 0, 0, G, &wb);
      if (!st) st = slice_of(b, t1, 0, G, 2 * G, &rb);
      if (!st) st = reshape_to(b, wb, 1, g1, &wb);
    } else if (!st) { /* no B: zero biases (GRU's candidate still reads Rb's third) */
      NEW(z);
      st = tide_tensor_init(z, W->dt, 1, g1);
      if (!st) memset(z->data, 0, (size_t)G * tide_dtype_size(W->dt));
      wb = rb = z;
    }
    /* X @ W^T plus Wb, and plus Rb where it adds outside the reset (all of LSTM's, GRU's z and r) */
    if (!st) st = matmul_t(b, x2, Wd, &xw);
    if (!st) st = bin(b, TIDE_OP_ADD, wb, rb, &bias);
    if (!st && r.gru) { /* GRU: Wb + Rb for z and r, Wb alone for h */
      tide_tensor *zr, *wh, *parts[2];
      st = slice_of(b, bias, 0, 0, 2 * r.H, &zr);
      if (!st) st = slice_of(b, wb, 0, 2 * r.H, 3 * r.H, &wh);
      parts[0] = zr, parts[1] = wh;
      if (!st) st = concat_of(b, 0, 2, (const tide_tensor *const *)parts, &bias);
    }
    if (!st) st = bin(b, TIDE_OP_ADD, xw, bias, &xw);
    if (!st) st = reshape_to(b, xw, 3, tbg, &xw);
    if (!st && P) {
      st = slice_of(b, P, 0, d, d + 1, &t1);
      if (!st) st = reshape_to(b, t1, 1, p1, &Pd);
    }
    if (!st && h0) { /* [D, B, H]; layout 1: [B, D, H] */
      st = slice_of(b, h0, layout, d, d + 1, &t1);
      if (!st) st = reshape_to(b, t1, 2, hv, &h);
    }
    if (!st && c0) {
      st = slice_of(b, c0, layout, d, d + 1, &t1);
      if (!st) st = reshape_to(b, t1, 2, hv, &c);
    }
    int which = bidi ? d : rev ? 1 : 0;
    if (!st)
      st = run_direction(b, &r, which, xw, Rd, rb, Pd, h, c, hs + (size_t)d * (size_t)r.T, &hl[d], &cl[d]);
  }
  /* Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h and Y_c [D, B, H] (layout 1: [B, D, H]) */
  int64_t one_h[4] = {1, 1, -1, r.H}, dh[3] = {1, -1, r.H};
  if (!st && n_out > 0) {
    tide_tensor **steps = calloc((size_t)r.T, sizeof *steps), **dirs_y = calloc(2, sizeof *dirs_y);
    if (!steps || !dirs_y) st = TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory");
    for (int d = 0; !st && d < r.dirs; d++) {
      for (int64_t t = 0; !st && t < r.T; t++) st = reshape_to(b, hs[(size_t)d * (size_t)r.T + (size_t)t], 4, one_h, &steps[t]);
      if (!st) st = concat_of(b, 0, (int)r.T, (const tide_tensor *const *)steps, &dirs_y[d]);
    }
    tide_tensor *y = NULL;
    if (!st) st = r.dirs == 1 ? (y = dirs_y[0], TIDE_OK) : concat_of(b, 1, 2, (const tide_tensor *const *)dirs_y, &y);
    static const int64_t Y1[4] = {2, 0, 1, 3};
    if (!st) st = layout ? onnx_transpose(y, 4, Y1, &out[0]) : tide_tensor_share(&out[0], y);
    free(steps), free(dirs_y);
  }
  for (int k = 1; !st && k < n_out && k < (r.gru ? 2 : 3); k++) {
    tide_tensor **last = k == 1 ? hl : cl, *parts[2], *y = NULL;
    for (int d = 0; !st && d < r.dirs; d++) st = reshape_to(b, last[d], 3, dh, &parts[d]);
    if (!st) st = r.dirs == 1 ? (y = parts[0], TIDE_OK) : concat_of(b, 0, 2, (const tide_tensor *const *)parts, &y);
    if (!st) st = layout ? onnx_transpose(y, 3, SWAP01, &out[k]) : tide_tensor_share(&out[k], y);
  }
  free(hs);
  bag_free(b);
  return st;
}

static const onnx_op OPS[] = {
    {"LSTM", map_rnn},
    {"GRU", map_rnn},
};

const onnx_op *onnx_ops_rnn_find(const char *name) {
  for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
    if (!strcmp(OPS[i].name, name)) return &OPS[i];
  return NULL;
}
