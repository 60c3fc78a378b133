/* io/tf_ops_control.c — TF's functional control flow mapped onto tide's traced control flow: If/StatelessIf as a
 * COND node, While/StatelessWhile as a WHILE node (tide/graph.h), their branch and body functions imported into
 * subgraphs; and the TensorList ops TF's loops accumulate with, as dense tensors [num_elements, element...]. */
#include "tf_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many times a loop body is imported again with dims relaxed to unknown (one per dim a body may change). */
enum { MAX_BODY_IMPORTS = 4 };

/* The FunctionDef that node's function attribute `key` names. */
static tide_status fn_attr(tf_import *im, const Tensorflow__NodeDef *node, const char *key,
                           const Tensorflow__FunctionDef **out) {
  const Tensorflow__AttrValue *a = tf_attr(node, key);
  const char *name = a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func ? a->func->name : NULL;
  *out = name ? tf_library_find(im->lib, name) : NULL;
  if (!*out)
    return TIDE_FAIL(TIDE_ERR_VALUE, "its %s names function '%s', which the library lacks", key, name ? name : "?");
  return TIDE_OK;
}

static tide_status run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out) {
  tide_tensor *o[1] = {out};
  return tide_op_run(op, a, n, ins, 1, o);
}

/* t as a one-element bool (TF's If and While take any scalar: nonzero is true). */
static tide_status to_flag(const tide_tensor *t, const char *what, tide_tensor *out) {
  if (t->ndim > 0) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->dims[d];
    if (n != 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "its %s must have one element; it has shape of rank %d", what, t->ndim);
  }
  if (t->dt == TIDE_BOOL) return tide_tensor_share(out, t);
  tide_attrs a = {0};
  a.dtype = TIDE_BOOL;
  return run1(TIDE_OP_CAST, &a, 1, &t, out);
}

/* Import f on args into graph sub, which the caller has begun (on top of the graph being built) and ends: its
 * n_out outputs, but those skip marks, become sub's outputs (tensors only: a variable's handle cannot leave a
 * subgraph); res (may be NULL) gets all n_out too. */
static tide_status import_sub(tf_import *im, tide_graph *sub, const Tensorflow__FunctionDef *f, int n_args,
                              tf_val *const *args, int n_out, const bool *skip, tf_val *res) {
  tf_val *outs = calloc((size_t)n_out + 1, sizeof *outs);
  const tide_tensor **ptrs = calloc((size_t)n_out + 1, sizeof *ptrs);
  tide_status st = outs && ptrs ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (int k = 0; outs && k <= n_out; k++) outs[k].var = -1;
  tide_graph *outer = im->g;
  if (!st) {
    im->g = sub;
    st = tf_import_function(im, f, n_args, args, n_out, outs);
    im->g = outer;
  }
  int n = 0;
  for (int k = 0; !st && k < n_out; k++) {
    if (skip && skip[k]) continue;
    if (outs[k].var >= 0)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "function '%s' gives a variable's handle as output %d, which tide does not map",
                     f->signature->name, k);
    else ptrs[n++] = &outs[k].t;
  }
  if (!st) st = tide_graph_set_outputs(sub, n, ptrs);
  for (int k = 0; outs && k < n_out; k++) {
    if (!st && res) st = tf_val_copy(&res[k], &outs[k]);
    tf_val_release(&outs[k]);
  }
  free(outs);
  free(ptrs);
  return st;
}

/* A branch: graph sub begun, f imported into it, ended (abandoned on failure). */
static tide_status import_branch(tf_import *im, tide_graph *sub, const Tensorflow__FunctionDef *f, int n_args,
                                 tf_val *const *args, int n_out) {
  tide_status st = tide_graph_begin(sub);
  if (st) return st;
  st = import_sub(im, sub, f, n_args, args, n_out, NULL, NULL);
  if (!st) st = tide_graph_end(sub);
  if (st) tide_graph_abandon(sub);
  return st;
}

/* If/StatelessIf (cond, input...): then_branch(input...) or else_branch(input...). A condition known when the
 * model loads picks its branch there; else both become the subgraphs of a COND node, capturing the inputs. */
tide_status tf_map_if(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                      tf_val *out) {
  const Tensorflow__FunctionDef *then_f = NULL, *else_f = NULL;
  tide_status st = fn_attr(im, node, "then_branch", &then_f);
  if (!st) st = fn_attr(im, node, "else_branch", &else_f);
  const tide_tensor *pred = NULL;
  if (!st) st = tf_tensor_in(in, n_in, 0, &pred);
  if (st) return st;
  tide_tensor flag = {0};
  st = to_flag(pred, "condition", &flag);
  if (st) return st;
  if (!(flag.flags & TIDE_TENSOR_SYMBOLIC)) { /* known: import the branch it picks in place */
    bool yes = *(const unsigned char *)flag.data != 0;
    tide_tensor_release(&flag);
    return tf_import_function(im, yes ? then_f : else_f, n_in - 1, in + 1, n_out, out);
  }
  tide_graph *branch[2] = {tide_graph_new("If/then"), tide_graph_new("If/else")};
  tide_tensor *res = calloc((size_t)n_out + 1, sizeof *res);
  tide_tensor **res_p = calloc((size_t)n_out + 1, sizeof *res_p);
  if (!branch[0] || !branch[1] || !res || !res_p) st = TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (int b = 0; !st && b < 2; b++) st = import_branch(im, branch[b], b ? else_f : then_f, n_in - 1, in + 1, n_out);
  for (int k = 0; !st && k < n_out; k++) res_p[k] = &res[k];
  if (!st) st = tide_graph_cond(im->g, &flag, branch[0], branch[1], n_out, res_p);
  if (st) {
    tide_graph_free(branch[0]);
    tide_graph_free(branch[1]);
  }
  for (int k = 0; !st && k < n_out; k++) {
    st = tide_tensor_share(&out[k].t, &res[k]);
    out[k].set = !st;
  }
  for (int k = 0; res && k < n_out; k++) tide_tensor_release(&res[k]);
  free(res);
  free(res_p);
  tide_tensor_release(&flag);
  return st;
}

/* ---- While ------------------------------------------------------------------------------ */

/* Whether body gives its input k back unchanged as output k (directly or through Identity nodes): such a loop
 * variable is the same in every iteration (TF passes captured values and variables' handles so), and the loop
 * reads the outer value instead of carrying it, which keeps constants known and gradients direct. */
static bool passes_through(const Tensorflow__FunctionDef *body, int k) {
  const Tensorflow__OpDef *sig = body->signature;
  if ((size_t)k >= sig->n_input_arg || (size_t)k >= sig->n_output_arg) return false;
  const char *src = NULL;
  for (size_t r = 0; r < body->n_ret; r++)
    if (body->ret[r]->key && !strcmp(body->ret[r]->key, sig->output_arg[k]->name)) src = body->ret[r]->value;
  for (int hops = 0; src && hops < 8; hops++) {
    if (!strcmp(src, sig->input_arg[k]->name)) return true;
    size_t len = strcspn(src, ":");
    const Tensorflow__NodeDef *n = NULL;
    for (size_t i = 0; i < body->n_node_def && !n; i++)
      if (strlen(body->node_def[i]->name) == len && !strncmp(body->node_def[i]->name, src, len))
        n = body->node_def[i];
    if (!n || strcmp(n->op, "Identity") || n->n_input < 1 || strcmp(src + len, ":output:0")) return false;
    src = n->input[0];
  }
  return false;
}

/* One loop variable that the WHILE node carries: its entry value and the dims its subgraphs' inputs declare. */
typedef struct loop_var {
  int k;                /* the While's input */
  bool changed;         /* the last import of the body gave it other dims than it declared */
  bool remade;          /* own holds its entry value */
  tide_tensor own;      /* an entry value made here (shaped_list), else blank */
  int ndim;             /* TIDE_UNKNOWN_RANK once the body changed its rank */
  int64_t dims[TIDE_MAX_DIMS];
} loop_var;

/* Build cond_g and body_g over the carried variables lv (the others read from `in`); *relaxed set when the body
 * gave a carried variable other dims than it declared (they are made unknown and the caller imports again). */
static tide_status build_loop(tf_import *im, const Tensorflow__FunctionDef *cond_f,
                              const Tensorflow__FunctionDef *body_f, int n, tf_val *const *in, int n_lv, loop_var *lv,
                              const bool *carried, tide_graph *cond_g, tide_graph *body_g, bool *relaxed) {
  tf_val *vals = calloc((size_t)n + 1, sizeof *vals), *res = calloc((size_t)n + 1, sizeof *res);
  tf_val **args = calloc((size_t)n + 1, sizeof *args);
  bool *skip = calloc((size_t)n + 1, 1);
  tide_status st = vals && res && args && skip ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (int k = 0; !st && k <= n; k++) vals[k].var = res[k].var = -1;
  for (int k = 0; !st && k < n; k++) {
    args[k] = carried[k] ? &vals[k] : in[k];
    skip[k] = !carried[k];
  }
  for (int s = 0; !st && s < 2; s++) {
    tide_graph *g = s ? body_g : cond_g;
    st = tide_graph_begin(g);
    if (st) break;
    for (int j = 0; !st && j < n_lv; j++) {
      const tide_tensor *init = &in[lv[j].k]->t;
      tf_val_release(&vals[lv[j].k]);
      st = tide_graph_input(g, init->dt, lv[j].ndim, lv[j].dims, &vals[lv[j].k].t);
      vals[lv[j].k].set = !st;
    }
    if (!st && !s) {
      /* cond: its one output made a one-element bool inside the subgraph */
      tf_val flag = {.var = -1};
      tide_graph *outer = im->g;
      im->g = g;
      st = tf_import_function(im, cond_f, n, args, 1, &flag);
      im->g = outer;
      tide_tensor b = {0};
      if (!st && flag.var >= 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "its cond gives a variable's handle");
      if (!st) st = to_flag(&flag.t, "cond's result", &b);
      const tide_tensor *bp = &b;
      if (!st) st = tide_graph_set_outputs(g, 1, &bp);
      tide_tensor_release(&b);
      tf_val_release(&flag);
    } else if (!st) {
      st = import_sub(im, g, body_f, n, args, n, skip, res);
    }
    if (!st) st = tide_graph_end(g);
    if (st) tide_graph_abandon(g);
  }
  *relaxed = false;
  for (int j = 0; !st && j < n_lv; j++) lv[j].changed = false;
  for (int j = 0; !st && j < n_lv; j++) {
    const tf_val *r = &res[lv[j].k];
    const tide_tensor *init = &in[lv[j].k]->t;
    if (r->t.dt != init->dt)
      st = TIDE_FAIL(TIDE_ERR_DTYPE, "its body turns loop variable %d from %s into %s", lv[j].k,
                     tide_dtype_name(init->dt), tide_dtype_name(r->t.dt));
    else if (lv[j].ndim != TIDE_UNKNOWN_RANK && r->t.ndim != lv[j].ndim) {
      lv[j].ndim = TIDE_UNKNOWN_RANK;
      *relaxed = lv[j].changed = true;
    } else {
      for (int d = 0; lv[j].ndim > 0 && d < lv[j].ndim; d++)
        if (lv[j].dims[d] >= 0 && r->t.dims[d] != lv[j].dims[d]) {
          lv[j].dims[d] = -1;
          *relaxed = lv[j].changed = true;
        }
    }
  }
  for (int k = 0; k < n && vals; k++) tf_val_release(&vals[k]);
  for (int k = 0; k < n && res; k++) tf_val_release(&res[k]);
  free(vals);
  free(res);
  free(args);
  free(skip);
  return st;
}

/* A TensorList the loop fills whose element dims TF left unknown (Keras's RNN outputs: [time, batch, units] with
 * batch unknown) enters as zeros with 1 there, and its first write would broadcast it: a shape that changes between
 * iterations, which a gradient through the loop cannot stack. When another carried variable has the element's shape
 * and keeps it (the RNN's state, whose value the list collects), the list enters as zeros of [time, that variable's
 * shape] instead, made at run time, so its shape is fixed (a dim either side leaves unknown is taken to agree: the
 * run checks it, as where's broadcast). *done when lv[j] was so remade. */
static tide_status shaped_list(loop_var *lv, int n_lv, int j, tf_val *const *in, bool *done) {
  *done = false;
  const tide_tensor *list = &in[lv[j].k]->t;
  if (!tf_val_known(in[lv[j].k]) || list->ndim < 2 || lv[j].ndim != list->ndim || lv[j].remade) return TIDE_OK;
  for (int d = 1; d < list->ndim; d++)
    if (lv[j].dims[d] < 0 && list->dims[d] != 1) return TIDE_OK; /* changed where it was not a placeholder */
  for (int i = 0; i < n_lv; i++) {
    const tide_tensor *like = &in[lv[i].k]->t;
    if (i == j || lv[i].changed || like->dt != list->dt || like->ndim != list->ndim - 1) continue;
    bool fits = true;
    for (int d = 1; fits && d < list->ndim; d++)
      fits = lv[j].dims[d] < 0 || like->dims[d - 1] < 0 || like->dims[d - 1] == list->dims[d];
    if (!fits) continue;
    /* list zeros [n, 1..] + zeros shaped like `like` [1, ...]: [n, like's dims] */
    tide_tensor shape = {0}, zeros = {0}, row = {0};
    tide_attrs s = {0}, f = {0}, e = {0};
    s.dtype = TIDE_INT64;
    f.dtype = like->dt;
    tide_status st = run1(TIDE_OP_SHAPE, &s, 1, &like, &shape);
    const tide_tensor *p = &shape;
    if (!st) st = run1(TIDE_OP_FILL, &f, 1, &p, &zeros);
    const tide_tensor *z = &zeros;
    if (!st) st = run1(TIDE_OP_EXPAND_DIMS, &e, 1, &z, &row);
    const tide_tensor *ins[2] = {list, &row};
    tide_attrs none = {0};
    if (!st) st = run1(list->dt == TIDE_BOOL ? TIDE_OP_LOGICAL_OR : TIDE_OP_ADD, &none, 2, ins, &lv[j].own);
    tide_tensor_release(&shape);
    tide_tensor_release(&zeros);
    tide_tensor_release(&row);
    if (st) return st;
    *done = lv[j].remade = true;
    return TIDE_OK;
  }
  return TIDE_OK;
}

/* While/StatelessWhile (input...): while cond(vars) do vars = body(vars). Variables the body gives back unchanged
 * (passes_through) are read from outside; the others are the WHILE node's loop variables. */
tide_status tf_map_while(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                         tf_val *out) {
  const Tensorflow__FunctionDef *cond_f = NULL, *body_f = NULL;
  tide_status st = fn_attr(im, node, "cond", &cond_f);
  if (!st) st = fn_attr(im, node, "body", &body_f);
  if (st) return st;
  if (n_out != n_in || (size_t)n_in != body_f->signature->n_input_arg)
    return TIDE_FAIL(TIDE_ERR_VALUE, "it has %d inputs and %d outputs for a body of %zu arguments", n_in, n_out,
                     body_f->signature->n_input_arg);
  bool *carried = calloc((size_t)n_in + 1, 1);
  loop_var *lv = calloc((size_t)n_in + 1, sizeof *lv);
  const tide_tensor **init = calloc((size_t)n_in + 1, sizeof *init);
  tide_tensor *res = calloc((size_t)n_in + 1, sizeof *res);
  tide_tensor **res_p = calloc((size_t)n_in + 1, sizeof *res_p);
  if (!carried || !lv || !init || !res || !res_p) st = TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  int n_lv = 0;
  for (int k = 0; !st && k < n_in; k++) {
    if (passes_through(body_f, k)) continue;
    if (in[k]->var >= 0) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "its body changes loop variable %d, a variable's handle, which tide does not "
                     "map", k);
      break;
    }
    carried[k] = true;
    lv[n_lv].k = k;
    lv[n_lv].ndim = in[k]->t.ndim;
    for (int d = 0; d < in[k]->t.ndim; d++) lv[n_lv].dims[d] = in[k]->t.dims[d];
    init[n_lv] = &in[k]->t;
    res_p[n_lv] = &res[n_lv];
    n_lv++;
  }
  tide_graph *cond_g = NULL, *body_g = NULL;
  bool relaxed = true;
  for (int attempt = 0; !st && relaxed; attempt++) {
    tide_graph_free(cond_g);
    tide_graph_free(body_g);
    cond_g = tide_graph_new("While/cond");
    body_g = tide_graph_new("While/body");
    if (!cond_g || !body_g) st = TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
    else if (attempt == MAX_BODY_IMPORTS)
      st = TIDE_FAIL(TIDE_ERR_SHAPE, "its body keeps changing its loop variables' shapes");
    else st = build_loop(im, cond_f, body_f, n_in, in, n_lv, lv, carried, cond_g, body_g, &relaxed);
    for (int j = 0; !st && relaxed && j < n_lv; j++) {
      bool done = false;
      if (lv[j].changed) st = shaped_list(lv, n_lv, j, in, &done);
      if (done) init[j] = &lv[j].own;
    }
  }
  if (!st) st = tide_graph_while(im->g, n_lv, init, cond_g, body_g, -1, res_p);
  if (st) {
    tide_graph_free(cond_g);
    tide_graph_free(body_g);
  }
  for (int k = 0, j = 0; !st && k < n_in; k++) {
    if (carried[k]) {
      st = tide_tensor_share(&out[k].t, &res[j++]);
      out[k].set = !st;
    } else {
      st = tf_val_copy(&out[k], in[k]);
    }
  }
  for (int j = 0; res && j < n_lv; j++) tide_tensor_release(&res[j]);
  for (int j = 0; lv && j < n_lv; j++) tide_tensor_release(&lv[j].own);
  free(carried);
  free(lv);
  free(init);
  free(res);
  free(res_p);
  return st;
}
