/* graph/tf_graph_def.c — a finalized graph as TensorFlow's GraphDef protobuf,
 * for TensorBoard's graph dashboard (tide.summary.trace_export, Keras's write_graph). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tide/fused.h"
#include "tide_proto/graph.pb-c.h"

/* Why everything comes from one list of allocations: a GraphDef is a tree of
 * small protobuf-c structs and strings; they are all freed together once
 * packed, and an allocation failure anywhere only sets `oom`. */
typedef struct enc {
  void **allocs;
  int n_allocs, cap_allocs;
  bool oom;
  Tensorflow__NodeDef **nodes;
  size_t n_nodes, cap_nodes;
  char **names;              /* open-addressing set of the names given so far */
  uint32_t names_cap, names_used;
  int n_vars;
  tide_tensor *const *handles;
  const char *const *var_names;
  const tide_tensor **var_seen; /* handles given a VarHandleOp node so far, and the node's name */
  char **var_node;
  int n_seen, cap_seen;
  const char *scope;         /* prefix of every node's name ("" or "train_function/") */
} enc;

/* One graph being written: the top one or a cond/while subgraph. */
typedef struct level {
  const tide_graph *g;
  const char *scope;         /* "" or "cond/then/" */
  const struct level *parent;
  int n_own;                 /* own inputs; those after them are captures (cap_vals) */
  const gvalue *cap_vals;    /* the parent's value each capture input stands for */
  const char *const *own_src; /* for a while subgraph: the value each loop variable starts from */
  char ***out;               /* per node: the name of each output ("n", "n:1"), NULL when dead */
} level;

static void *ealloc(enc *e, size_t size) {
  if (e->oom) return NULL;
  if (e->n_allocs == e->cap_allocs) {
    int cap = e->cap_allocs ? 2 * e->cap_allocs : 256;
    void **grown = realloc(e->allocs, (size_t)cap * sizeof *grown);
    if (!grown) { e->oom = true; return NULL; }
    e->allocs = grown;
    e->cap_allocs = cap;
  }
  void *p = calloc(1, size ? size : 1);
  if (!p) { e->oom = true; return NULL; }
  e->allocs[e->n_allocs++] = p;
  return p;
}

static char *estr(enc *e, const char *fmt, const char *a, long long k) {
  int n = snprintf(NULL, 0, fmt, a, k);
  char *s = n < 0 ? NULL : ealloc(e, (size_t)n + 1);
  if (s) snprintf(s, (size_t)n + 1, fmt, a, k);
  return s;
}

static uint32_t hash_name(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* Is `s` taken? With add, take it (it must not be). */
static bool name_taken(enc *e, char *s, bool add) {
  if (add && 2 * (e->names_used + 1) > e->names_cap) {
    uint32_t cap = e->names_cap ? 2 * e->names_cap : 256;
    char **grown = calloc(cap, sizeof *grown);
    if (!grown) { e->oom = true; return false; }
    for (uint32_t i = 0; i < e->names_cap; i++) {
      if (!e->names[i]) continue;
      uint32_t h = hash_name(e->names[i]) & (cap - 1);
      while (grown[h]) h = (h + 1) & (cap - 1);
      grown[h] = e->names[i];
    }
    free(e->names);
    e->names = grown;
    e->names_cap = cap;
  }
  if (!e->names_cap) return false;
  uint32_t h = hash_name(s) & (e->names_cap - 1);
  for (; e->names[h]; h = (h + 1) & (e->names_cap - 1))
    if (strcmp(e->names[h], s) == 0) return true;
  if (add) {
    e->names[h] = s;
    e->names_used++;
  }
  return false;
}

/* scope + base, made unique as TF does: "add", "add_1", "add_2". TensorBoard
 * reads "/" as a name scope, so one inside base is kept (variable names). */
static char *unique_name(enc *e, const char *scope, const char *base) {
  char *full = ealloc(e, strlen(scope) + strlen(base) + 1);
  if (!full) return NULL;
  strcpy(full, scope);
  strcat(full, base);
  if (!name_taken(e, full, false)) {
    name_taken(e, full, true);
    return full;
  }
  for (long long k = 1;; k++) {
    char *cand = estr(e, "%s_%lld", full, k);
    if (!cand) return NULL;
    if (!name_taken(e, cand, false)) {
      name_taken(e, cand, true);
      return cand;
    }
  }
}

enum { MAX_ATTRS = 12 };

/* A new node named `name` (unique already) running `op`, with room for
 * n_in inputs and MAX_ATTRS attributes. */
static Tensorflow__NodeDef *new_node_named(enc *e, char *name, const char *op, int n_in) {
  Tensorflow__NodeDef *nd = name ? ealloc(e, sizeof *nd) : NULL;
  char **in = ealloc(e, sizeof(char *) * (size_t)(n_in > 0 ? n_in : 1));
  Tensorflow__NodeDef__AttrEntry **attrs = ealloc(e, sizeof *attrs * MAX_ATTRS);
  if (!nd || !name || !in || !attrs) return NULL;
  tensorflow__node_def__init(nd);
  nd->name = name;
  nd->op = (char *)op;
  nd->input = in;
  nd->attr = attrs;
  if (e->n_nodes == e->cap_nodes) {
    size_t cap = e->cap_nodes ? 2 * e->cap_nodes : 64;
    Tensorflow__NodeDef **grown = realloc(e->nodes, cap * sizeof *grown);
    if (!grown) { e->oom = true; return NULL; }
    e->nodes = grown;
    e->cap_nodes = cap;
  }
  e->nodes[e->n_nodes++] = nd;
  return nd;
}

/* A new node named scope + base, made unique. */
static Tensorflow__NodeDef *new_node(enc *e, const char *scope, const char *base, const char *op, int n_in) {
  return new_node_named(e, unique_name(e, scope, base), op, n_in);
}

/* A NULL name (a value not written yet) is kept, for the check before packing. */
static void add_input(Tensorflow__NodeDef *nd, const char *name) {
  if (nd) nd->input[nd->n_input++] = (char *)name;
}

/* A new attribute entry `key` of nd (NULL when out of room or memory). */
static Tensorflow__AttrValue *add_attr(enc *e, Tensorflow__NodeDef *nd, const char *key) {
  if (!nd || nd->n_attr >= MAX_ATTRS) return NULL;
  Tensorflow__NodeDef__AttrEntry *entry = ealloc(e, sizeof *entry);
  Tensorflow__AttrValue *v = ealloc(e, sizeof *v);
  if (!entry || !v) return NULL;
  tensorflow__node_def__attr_entry__init(entry);
  tensorflow__attr_value__init(v);
  entry->key = (char *)key;
  entry->value = v;
  nd->attr[nd->n_attr++] = entry;
  return v;
}

/* tide's dtype as TF's DataType. */
static Tensorflow__DataType tf_dtype(int dt) {
  switch (dt) {
  case TIDE_FLOAT32: return TENSORFLOW__DATA_TYPE__DT_FLOAT;
  case TIDE_FLOAT64: return TENSORFLOW__DATA_TYPE__DT_DOUBLE;
  case TIDE_FLOAT16: return TENSORFLOW__DATA_TYPE__DT_HALF;
  case TIDE_BFLOAT16: return TENSORFLOW__DATA_TYPE__DT_BFLOAT16;
  case TIDE_INT8: return TENSORFLOW__DATA_TYPE__DT_INT8;
  case TIDE_UINT8: return TENSORFLOW__DATA_TYPE__DT_UINT8;
  case TIDE_INT32: return TENSORFLOW__DATA_TYPE__DT_INT32;
  case TIDE_INT64: return TENSORFLOW__DATA_TYPE__DT_INT64;
  case TIDE_BOOL: return TENSORFLOW__DATA_TYPE__DT_BOOL;
  case TIDE_STRING: return TENSORFLOW__DATA_TYPE__DT_STRING;
  default: return TENSORFLOW__DATA_TYPE__DT_INVALID;
  }
}

static void attr_type(enc *e, Tensorflow__NodeDef *nd, const char *key, int dt) {
  Tensorflow__AttrValue *v = add_attr(e, nd, key);
  if (!v) return;
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
  v->type = tf_dtype(dt);
}

static void attr_int(enc *e, Tensorflow__NodeDef *nd, const char *key, int64_t i) {
  Tensorflow__AttrValue *v = add_attr(e, nd, key);
  if (!v) return;
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
  v->i = i;
}

static void attr_string(enc *e, Tensorflow__NodeDef *nd, const char *key, const char *s) {
  Tensorflow__AttrValue *v = add_attr(e, nd, key);
  if (!v) return;
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
  v->s.data = (uint8_t *)s;
  v->s.len = strlen(s);
}

static Tensorflow__AttrValue__ListValue *attr_list(enc *e, Tensorflow__NodeDef *nd, const char *key) {
  Tensorflow__AttrValue *v = add_attr(e, nd, key);
  Tensorflow__AttrValue__ListValue *l = v ? ealloc(e, sizeof *l) : NULL;
  if (!l) return NULL;
  tensorflow__attr_value__list_value__init(l);
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
  v->list = l;
  return l;
}

/* The shape of descriptor d (an unknown rank, or dims with -1 for unknown ones). */
static Tensorflow__TensorShapeProto *shape_proto(enc *e, const tide_tensor *d) {
  Tensorflow__TensorShapeProto *s = ealloc(e, sizeof *s);
  if (!s) return NULL;
  tensorflow__tensor_shape_proto__init(s);
  if (d->ndim < 0) {
    s->unknown_rank = true;
    return s;
  }
  s->dim = ealloc(e, sizeof *s->dim * (size_t)(d->ndim > 0 ? d->ndim : 1));
  Tensorflow__TensorShapeProto__Dim *dims = ealloc(e, sizeof *dims * (size_t)(d->ndim > 0 ? d->ndim : 1));
  if (!s->dim || !dims) return NULL;
  for (int i = 0; i < d->ndim; i++) {
    tensorflow__tensor_shape_proto__dim__init(&dims[i]);
    dims[i].size = d->dims[i] < 0 ? -1 : d->dims[i];
    s->dim[i] = &dims[i];
  }
  s->n_dim = (size_t)d->ndim;
  return s;
}

/* "T" (the dtype of the first output) and "_output_shapes", which
 * TensorBoard prints on the edges. */
static void attr_outputs(enc *e, Tensorflow__NodeDef *nd, const char *type_key, int n, const tide_tensor *outs) {
  if (n <= 0) return;
  attr_type(e, nd, type_key, outs[0].dt);
  Tensorflow__AttrValue__ListValue *l = attr_list(e, nd, "_output_shapes");
  if (!l || !(l->shape = ealloc(e, sizeof *l->shape * (size_t)n))) return;
  for (int k = 0; k < n; k++)
    if ((l->shape[k] = shape_proto(e, &outs[k]))) l->n_shape++;
}

/* A registry op's attributes that differ from zero, under their C names. */
static void attr_op(enc *e, Tensorflow__NodeDef *nd, const tide_attrs *a) {
  if (a->nints > 0) {
    Tensorflow__AttrValue__ListValue *l = attr_list(e, nd, "ints");
    int n = a->nints < TIDE_MAX_INTS ? a->nints : TIDE_MAX_INTS;
    if (l && (l->i = ealloc(e, sizeof *l->i * (size_t)n))) {
      for (int i = 0; i < n; i++) l->i[i] = a->ints[i];
      l->n_i = (size_t)n;
    }
  }
  if (a->axis) attr_int(e, nd, "axis", a->axis);
  if (a->dtype) attr_type(e, nd, "dtype", a->dtype);
  if (a->flags) attr_int(e, nd, "flags", a->flags);
  if (a->n) attr_int(e, nd, "n", a->n);
  if (a->m) attr_int(e, nd, "m", a->m);
  if (a->scalars[0] != 0 || a->scalars[1] != 0 || a->scalars[2] != 0 || a->scalars[3] != 0) {
    Tensorflow__AttrValue__ListValue *l = attr_list(e, nd, "scalars");
    if (l && (l->f = ealloc(e, sizeof *l->f * 4))) {
      for (int i = 0; i < 4; i++) l->f[i] = (float)a->scalars[i];
      l->n_f = 4;
    }
  }
}

/* Constants whose bytes TensorBoard gets (a larger one is written with its
 * dtype and shape only: a captured dataset must not bloat the event file). */
enum { CONST_VALUE_BYTES = 1024 };

static void attr_const_value(enc *e, Tensorflow__NodeDef *nd, const tide_tensor *t) {
  Tensorflow__AttrValue *v = add_attr(e, nd, "value");
  Tensorflow__TensorProto *tp = v ? ealloc(e, sizeof *tp) : NULL;
  if (!tp) return;
  tensorflow__tensor_proto__init(tp);
  tp->dtype = tf_dtype(t->dt);
  tp->tensor_shape = shape_proto(e, t);
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
  v->tensor = tp;
  size_t bytes = (size_t)t->nelem * tide_dtype_size(t->dt);
  if (t->dt == TIDE_STRING || bytes > CONST_VALUE_BYTES || !t->data) return;
  uint8_t *copy = ealloc(e, bytes);
  if (!copy) return;
  /* The elements in row-major order, whatever the strides (a view or a broadcast). */
  size_t es = tide_dtype_size(t->dt);
  int64_t idx[TIDE_MAX_DIMS] = {0};
  for (int64_t i = 0; i < t->nelem; i++) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
    memcpy(copy + (size_t)i * es, (const uint8_t *)t->data + off * (int64_t)es, es);
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->dims[d]) break;
      idx[d] = 0;
    }
  }
  tp->tensor_content.data = copy;
  tp->tensor_content.len = bytes;
}

/* A fused node's one-element constant (of shape [1] * ndim) as a Const's value. */
static void attr_fused_const(enc *e, Tensorflow__NodeDef *nd, const tide_fused_const *c) {
  int64_t ones[TIDE_MAX_DIMS];
  for (int i = 0; i < TIDE_MAX_DIMS; i++) ones[i] = 1;
  tide_tensor d;
  memset(&d, 0, sizeof d);
  d.dt = c->dt;
  d.ndim = c->ndim >= 0 && c->ndim <= TIDE_MAX_DIMS ? c->ndim : 0;
  memcpy(d.dims, ones, sizeof ones);
  attr_outputs(e, nd, "dtype", 1, &d);
  Tensorflow__AttrValue *v = add_attr(e, nd, "value");
  Tensorflow__TensorProto *tp = v ? ealloc(e, sizeof *tp) : NULL;
  if (!tp) return;
  tensorflow__tensor_proto__init(tp);
  tp->dtype = tf_dtype(c->dt);
  tp->tensor_shape = shape_proto(e, &d);
  v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
  v->tensor = tp;
  /* TF's typed fields: one value fills the shape. */
  switch (c->dt) {
  case TIDE_FLOAT32: case TIDE_FLOAT16: case TIDE_BFLOAT16:
    if ((tp->float_val = ealloc(e, sizeof(float)))) { tp->float_val[0] = (float)c->f; tp->n_float_val = 1; }
    if (c->dt != TIDE_FLOAT32 && tp->float_val) { /* half_val holds the 16 bits */
      tp->n_float_val = 0;
      if ((tp->half_val = ealloc(e, sizeof(int32_t)))) {
        tp->half_val[0] = c->dt == TIDE_FLOAT16 ? tide_float_to_half((float)c->f) : tide_float_to_bfloat16((float)c->f);
        tp->n_half_val = 1;
      }
    }
    break;
  case TIDE_FLOAT64:
    if ((tp->double_val = ealloc(e, sizeof(double)))) { tp->double_val[0] = c->f; tp->n_double_val = 1; }
    break;
  case TIDE_INT64:
    if ((tp->int64_val = ealloc(e, sizeof(int64_t)))) { tp->int64_val[0] = c->i; tp->n_int64_val = 1; }
    break;
  case TIDE_BOOL:
    if ((tp->bool_val = ealloc(e, sizeof(protobuf_c_boolean)))) { tp->bool_val[0] = c->i != 0; tp->n_bool_val = 1; }
    break;
  default: /* int8, uint8, int32: TF keeps them in int_val */
    if ((tp->int_val = ealloc(e, sizeof(int32_t)))) { tp->int_val[0] = (int32_t)c->i; tp->n_int_val = 1; }
    break;
  }
}

static void attr_origin(enc *e, Tensorflow__NodeDef *nd, const char *origin) {
  if (origin) attr_string(e, nd, "_tide_origin", origin);
}

/* The name of output k of node `node` ("name" or "name:k"). */
static char *out_name(enc *e, const char *node, int k) {
  return k == 0 ? (char *)node : estr(e, "%s:%lld", node, k);
}

/* Room for a node's output names, each output named after nd. */
static tide_status name_outputs(enc *e, level *L, int i, const Tensorflow__NodeDef *nd, int n_out) {
  if (!nd) return TIDE_ERR_MEMORY;
  L->out[i] = ealloc(e, sizeof(char *) * (size_t)(n_out > 0 ? n_out : 1));
  if (!L->out[i]) return TIDE_ERR_MEMORY;
  for (int k = 0; k < n_out; k++) L->out[i][k] = out_name(e, nd->name, k);
  return TIDE_OK;
}

static const char *value_name(const level *L, gvalue v) {
  return L->out[v.node] ? L->out[v.node][v.index] : NULL;
}

/* The VarHandleOp node of the variable whose tensor is `handle`, made the first time. */
static const char *var_node(enc *e, const tide_tensor *handle) {
  for (int i = 0; i < e->n_seen; i++)
    if (e->var_seen[i] == handle) return e->var_node[i];
  const char *name = "Variable";
  for (int k = 0; k < e->n_vars; k++)
    if (e->handles[k] == handle && e->var_names && e->var_names[k] && *e->var_names[k]) name = e->var_names[k];
  Tensorflow__NodeDef *nd = new_node(e, e->scope, name, "VarHandleOp", 0);
  if (!nd) return NULL;
  attr_type(e, nd, "dtype", handle->dt);
  Tensorflow__AttrValue *v = add_attr(e, nd, "shape");
  if (v && (v->shape = shape_proto(e, handle))) v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
  if (e->n_seen == e->cap_seen) {
    int cap = e->cap_seen ? 2 * e->cap_seen : 16;
    const tide_tensor **s = realloc(e->var_seen, (size_t)cap * sizeof *s);
    if (s) e->var_seen = s;
    char **n = s ? realloc(e->var_node, (size_t)cap * sizeof *n) : NULL;
    if (n) e->var_node = n;
    if (!s || !n) { e->oom = true; return NULL; }
    e->cap_seen = cap;
  }
  e->var_seen[e->n_seen] = handle;
  e->var_node[e->n_seen++] = nd->name;
  return nd->name;
}

static tide_status write_level(enc *e, level *L);

/* A subgraph of node i as the scope "<node name>/<part>/". */
static tide_status write_sub(enc *e, const level *L, const char *node_name, const char *part, const tide_graph *sub,
                             int n_own, const gvalue *cap_vals, const char *const *own_src, const char **results) {
  size_t n = strlen(node_name) + strlen(part) + 3;
  char *scope = ealloc(e, n);
  if (!scope) return TIDE_ERR_MEMORY;
  snprintf(scope, n, "%s/%s/", node_name, part);
  level S = {sub, scope, L, n_own, cap_vals, own_src, NULL};
  tide_status st = write_level(e, &S);
  if (st) return st;
  /* The results as Identity nodes, so the owning node's inputs show where they come from. */
  for (int k = 0; k < sub->n_outputs; k++) {
    Tensorflow__NodeDef *nd = new_node(e, S.scope, "output", "Identity", 1);
    if (!nd) return TIDE_ERR_MEMORY;
    add_input(nd, value_name(&S, sub->outputs[k]));
    const tide_tensor *d = &sub->nodes[sub->outputs[k].node].out[sub->outputs[k].index];
    attr_outputs(e, nd, "T", 1, d);
    results[k] = nd->name;
  }
  return TIDE_OK;
}

/* A FUSED node as the registry ops it holds (as the SavedModel writes it). */
static tide_status write_fused(enc *e, level *L, int i) {
  const gnode *n = &L->g->nodes[i];
  const tide_fused *f = tide_graph_fused_desc(n);
  if (!f) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: fused node %d has no description", i);
  const char *consts[TIDE_FUSED_MAX_CONSTS], *steps[TIDE_FUSED_MAX_STEPS];
  for (int c = 0; c < f->n_consts; c++) {
    Tensorflow__NodeDef *nd = new_node(e, L->scope, "Const", "Const", 0);
    if (!nd) return TIDE_ERR_MEMORY;
    attr_fused_const(e, nd, &f->consts[c]);
    consts[c] = nd->name;
  }
  for (int s = 0; s < f->n_steps; s++) {
    const tide_fused_step *sp = &f->steps[s];
    const char *op = tide_op_name(sp->op);
    Tensorflow__NodeDef *nd = new_node(e, L->scope, op, op, sp->n_args);
    if (!nd) return TIDE_ERR_MEMORY;
    for (int a = 0; a < sp->n_args; a++) {
      const tide_fused_arg *arg = &sp->args[a];
      const char *src = NULL;
      if (arg->src == TIDE_FUSED_INPUT && arg->index < n->n_in) src = value_name(L, n->in[arg->index]);
      else if (arg->src == TIDE_FUSED_CONST && arg->index < f->n_consts) src = consts[arg->index];
      else if (arg->src == TIDE_FUSED_STEP && arg->index < s) src = steps[arg->index];
      if (!src) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: fused node %d step %d has a bad operand", i, s);
      add_input(nd, src);
    }
    int out = -1;
    for (int k = 0; k < n->n_out && k < f->n_outputs; k++)
      if (f->outputs[k] == s) out = k;
    if (out >= 0) attr_outputs(e, nd, "T", 1, &n->out[out]);
    else attr_type(e, nd, "T", sp->dt);
    tide_attrs a;
    tide_fused_step_attrs(sp, &a);
    if (sp->op != TIDE_OP_CAST) a.dtype = 0;
    attr_op(e, nd, &a);
    if (sp->tag >= 0 && sp->tag < L->g->nnodes) attr_origin(e, nd, L->g->nodes[sp->tag].origin);
    steps[s] = nd->name;
  }
  L->out[i] = ealloc(e, sizeof(char *) * (size_t)(n->n_out > 0 ? n->n_out : 1));
  if (!L->out[i]) return TIDE_ERR_MEMORY;
  for (int k = 0; k < n->n_out; k++) {
    int s = k < f->n_outputs ? f->outputs[k] : -1;
    if (s < 0 || s >= f->n_steps) return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: fused node %d output %d has no step", i, k);
    L->out[i][k] = (char *)steps[s];
  }
  return TIDE_OK;
}

static const char *const ASSIGN_OPS[] = {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"};

static tide_status write_node(enc *e, level *L, int i, const char *const *in_names) {
  const gnode *n = &L->g->nodes[i];
  Tensorflow__NodeDef *nd = NULL;
  switch (n->kind) {
  case TIDE_NODE_INPUT: {
    int k = n->input_index;
    if (k >= L->n_own) { /* a capture: the enclosing graph's value itself */
      if (!L->parent || !L->cap_vals || k >= L->g->n_inputs)
        return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: input node %d names no input", i);
      L->out[i] = ealloc(e, sizeof(char *));
      if (!L->out[i]) return TIDE_ERR_MEMORY;
      L->out[i][0] = (char *)value_name(L->parent, L->cap_vals[k - L->n_own]);
      return TIDE_OK;
    }
    if (L->own_src) { /* a loop variable of a while subgraph, fed by the loop's start value */
      nd = new_node(e, L->scope, "loop_var", "LoopVar", 1);
      add_input(nd, L->own_src[k]);
    } else {
      char dflt[32];
      snprintf(dflt, sizeof dflt, "input_%d", k);
      nd = new_node(e, L->scope, in_names && in_names[k] && *in_names[k] ? in_names[k] : dflt, "Placeholder", 0);
    }
    if (nd) attr_outputs(e, nd, "dtype", 1, n->out);
    if (nd && !L->own_src) {
      Tensorflow__AttrValue *v = add_attr(e, nd, "shape");
      if (v && (v->shape = shape_proto(e, n->out))) v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
    }
    return name_outputs(e, L, i, nd, 1);
  }
  case TIDE_NODE_CONST:
    nd = new_node(e, L->scope, "Const", "Const", 0);
    if (nd) {
      attr_outputs(e, nd, "dtype", 1, n->out);
      attr_const_value(e, nd, &n->value);
    }
    break;
  case TIDE_NODE_VARIABLE: {
    const char *h = var_node(e, n->handle);
    nd = h ? new_node(e, L->scope, "ReadVariableOp", "ReadVariableOp", 1) : NULL;
    add_input(nd, h);
    attr_outputs(e, nd, "dtype", 1, n->out);
    break;
  }
  case TIDE_NODE_ASSIGN: {
    const char *h = var_node(e, n->handle);
    int mode = n->assign_mode >= 0 && n->assign_mode <= 2 ? n->assign_mode : 0;
    nd = h ? new_node(e, L->scope, ASSIGN_OPS[mode], ASSIGN_OPS[mode], 1 + n->n_in) : NULL;
    add_input(nd, h);
    for (int k = 0; nd && k < n->n_in; k++) add_input(nd, value_name(L, n->in[k]));
    if (nd) attr_type(e, nd, "dtype", n->handle->dt);
    break;
  }
  case TIDE_NODE_OP: {
    const char *op = tide_op_name(n->op);
    nd = new_node(e, L->scope, op, op, n->n_in);
    for (int k = 0; nd && k < n->n_in; k++) add_input(nd, value_name(L, n->in[k]));
    attr_outputs(e, nd, "T", n->n_out, n->out);
    if (nd) attr_op(e, nd, &n->attrs);
    break;
  }
  case TIDE_NODE_PRINT:
    nd = new_node(e, L->scope, "PrintV2", "PrintV2", n->n_in);
    for (int k = 0; nd && k < n->n_in; k++) add_input(nd, value_name(L, n->in[k]));
    if (nd) attr_string(e, nd, "template", n->text ? n->text : "");
    break;
  case TIDE_NODE_COND: {
    const tide_graph *ta = n->sub[0], *tb = n->sub[1];
    if (n->n_in != 1 + ta->n_inputs + tb->n_inputs)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: cond node %d has %d inputs for %d captures", i, n->n_in,
                       ta->n_inputs + tb->n_inputs);
    char *name = unique_name(e, L->scope, "cond");
    const char **ra = ealloc(e, sizeof(char *) * (size_t)(ta->n_outputs + 1));
    const char **rb = ealloc(e, sizeof(char *) * (size_t)(tb->n_outputs + 1));
    if (!name || !ra || !rb) return TIDE_ERR_MEMORY;
    tide_status st = write_sub(e, L, name, "then", ta, 0, n->in + 1, NULL, ra);
    if (!st) st = write_sub(e, L, name, "else", tb, 0, n->in + 1 + ta->n_inputs, NULL, rb);
    if (st) return st;
    /* The node itself, under the name its scope has (TensorBoard shows it inside the scope). */
    nd = new_node_named(e, name, "If", 1 + ta->n_outputs + tb->n_outputs);
    if (!nd) return TIDE_ERR_MEMORY;
    add_input(nd, value_name(L, n->in[0]));
    for (int k = 0; k < ta->n_outputs; k++) add_input(nd, ra[k]);
    for (int k = 0; k < tb->n_outputs; k++) add_input(nd, rb[k]);
    attr_outputs(e, nd, "T", n->n_out, n->out);
    break;
  }
  case TIDE_NODE_WHILE: {
    int nvars = tide_graph_while_nvars(n);
    const tide_graph *tc = n->sub[0], *tbody = n->sub[1];
    if (tc->n_inputs < nvars || tbody->n_inputs < nvars || n->n_in != tc->n_inputs + tbody->n_inputs - nvars)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: while node %d has %d inputs for its subgraphs' %d and %d", i,
                       n->n_in, tc->n_inputs, tbody->n_inputs);
    char *name = unique_name(e, L->scope, "while");
    const char **init = ealloc(e, sizeof(char *) * (size_t)(nvars + 1));
    const char **rc = ealloc(e, sizeof(char *) * (size_t)(tc->n_outputs + 1));
    const char **rb = ealloc(e, sizeof(char *) * (size_t)(tbody->n_outputs + 1));
    if (!name || !init || !rc || !rb) return TIDE_ERR_MEMORY;
    for (int k = 0; k < nvars; k++) init[k] = value_name(L, n->in[k]);
    tide_status st = write_sub(e, L, name, "cond", tc, nvars, n->in + nvars, init, rc);
    if (!st) st = write_sub(e, L, name, "body", tbody, nvars, n->in + tc->n_inputs, init, rb);
    if (st) return st;
    nd = new_node_named(e, name, "While", nvars + tc->n_outputs + tbody->n_outputs);
    if (!nd) return TIDE_ERR_MEMORY;
    for (int k = 0; k < nvars; k++) add_input(nd, init[k]);
    for (int k = 0; k < tc->n_outputs; k++) add_input(nd, rc[k]);
    for (int k = 0; k < tbody->n_outputs; k++) add_input(nd, rb[k]);
    attr_outputs(e, nd, "T", n->n_out, n->out);
    attr_int(e, nd, "max_iters", n->attrs.n < 0 ? -1 : n->attrs.n);
    break;
  }
  case TIDE_NODE_FUSED: return write_fused(e, L, i);
  case TIDE_NODE_EFFECT: {
    const char *op = n->effect && n->effect->name ? n->effect->name : "effect";
    nd = new_node(e, L->scope, op, op, n->n_in);
    for (int k = 0; nd && k < n->n_in; k++) add_input(nd, value_name(L, n->in[k]));
    break;
  }
  default: return TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: node %d of kind %d", i, n->kind);
  }
  if (!nd) return TIDE_ERR_MEMORY;
  attr_origin(e, nd, n->origin);
  return name_outputs(e, L, i, nd, n->n_out);
}

static tide_status write_level_names(enc *e, level *L, const char *const *in_names) {
  const tide_graph *g = L->g;
  L->out = ealloc(e, sizeof(char **) * (size_t)(g->nnodes + 1));
  if (!L->out) return TIDE_ERR_MEMORY;
  for (int i = 0; i < g->nnodes; i++) {
    if (g->nodes[i].flags & NODE_DEAD) continue;
    tide_status st = write_node(e, L, i, in_names);
    if (st) return st;
    if (e->oom) return TIDE_ERR_MEMORY;
  }
  return TIDE_OK;
}

static tide_status write_level(enc *e, level *L) { return write_level_names(e, L, NULL); }

static void enc_free(enc *e) {
  for (int i = 0; i < e->n_allocs; i++) free(e->allocs[i]);
  free(e->allocs);
  free(e->nodes);
  free(e->names);
  free(e->var_seen);
  free(e->var_node);
}

tide_status tide_graph_tf_graph_def(const tide_graph *g, const char *scope, int n_in, const char *const *in_names, int n_out,
                                    const char *const *out_names, int n_vars, tide_tensor *const *handles,
                                    const char *const *var_names, uint8_t **bytes, size_t *len) {
  if (!bytes || !len) return TIDE_FAIL(TIDE_ERR_VALUE, "graph def: NULL result pointers");
  *bytes = NULL;
  *len = 0;
  if (!g) return TIDE_FAIL(TIDE_ERR_VALUE, "graph def: NULL graph");
  if (!g->finalized) return TIDE_FAIL(TIDE_ERR_VALUE, "graph def: graph '%s' is not finalized", g->name ? g->name : "?");
  if (n_in < 0 || n_out < 0 || n_vars < 0 || (n_vars > 0 && !handles))
    return TIDE_FAIL(TIDE_ERR_VALUE, "graph def: bad name or variable counts");
  const char **ins = calloc((size_t)g->n_inputs + 1, sizeof *ins);
  if (!ins) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph def: out of memory");
  for (int k = 0; k < g->n_inputs && k < n_in && in_names; k++) ins[k] = in_names[k];
  enc e = {0};
  e.n_vars = n_vars;
  e.handles = handles;
  e.var_names = var_names;
  e.scope = scope ? scope : "";
  tide_clear_error();
  level L = {g, e.scope, NULL, g->n_inputs, NULL, NULL, NULL};
  tide_status st = write_level_names(&e, &L, ins);
  free(ins);
  for (int k = 0; !st && k < g->n_outputs; k++) {
    const char *name = k < n_out && out_names && out_names[k] && *out_names[k] ? out_names[k] : "Identity";
    Tensorflow__NodeDef *nd = new_node(&e, e.scope, name, "Identity", 1);
    if (!nd) { st = TIDE_ERR_MEMORY; break; }
    add_input(nd, value_name(&L, g->outputs[k]));
    attr_outputs(&e, nd, "T", 1, &g->nodes[g->outputs[k].node].out[g->outputs[k].index]);
  }
  for (size_t i = 0; !st && i < e.n_nodes; i++)
    for (size_t k = 0; k < e.nodes[i]->n_input; k++)
      if (!e.nodes[i]->input[k]) st = TIDE_FAIL(TIDE_ERR_INTERNAL, "graph def: node '%s' has an unnamed input", e.nodes[i]->name);
  if (!st && e.oom) st = TIDE_ERR_MEMORY;
  if (!st) {
    Tensorflow__GraphDef gd = TENSORFLOW__GRAPH_DEF__INIT;
    Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
    gd.node = e.nodes;
    gd.n_node = e.n_nodes;
    gd.versions = &ver;
    size_t n = tensorflow__graph_def__get_packed_size(&gd);
    uint8_t *out = malloc(n ? n : 1);
    if (!out) {
      st = TIDE_ERR_MEMORY;
    } else {
      tensorflow__graph_def__pack(&gd, out);
      *bytes = out;
      *len = n;
    }
  }
  enc_free(&e);
  if (st == TIDE_ERR_MEMORY && !tide_last_status()) return TIDE_FAIL(TIDE_ERR_MEMORY, "graph def: out of memory");
  return st ? (tide_last_status() ? tide_last_status() : st) : TIDE_OK;
}

void tide_graph_tf_graph_def_free(uint8_t *bytes) { free(bytes); }
