/* graph/def_write.c — a finalized graph written as a JSON object (the graph
 * part of docs/saved_model.md): live nodes in order, fused nodes expanded
 * back into their registry ops, constants named for the tensor file. */
#include "graph_def.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"
#include "passes.h"
#include "tide/fused.h"

static const char *const KIND_NAMES[] = {"input", "const", "capture", "variable", "op",
                                         "assign", "print", "cond", "while", "fused"};
static const char *const MODE_NAMES[] = {"set", "add", "sub"};

void gdef_tensors_free(gdef_tensors *t) {
  for (int i = 0; i < t->n; i++) tide_tensor_release(&t->items[i]);
  free(t->items);
  memset(t, 0, sizeof *t);
}

/* Append a share of v; its name is "c<index>". -1 when out of memory. */
static int add_tensor(gdef_tensors *t, const tide_tensor *v) {
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 16;
    /* not realloc: an inline tensor's header points into itself (tide/tensor.h), so each is moved by
     * tide_tensor_share, which points the copy at its own bytes; the old headers' references pass to the new */
    tide_tensor *grown = malloc((size_t)cap * sizeof *grown);
    if (!grown) return -1;
    for (int i = 0; i < t->n; i++) tide_tensor_share(&grown[i], &t->items[i]);
    for (int i = 0; i < t->n; i++)
      if (t->items[i].storage && !(t->items[i].flags & TIDE_TENSOR_INLINE)) tide_tensor_release(&t->items[i]);
    free(t->items);
    t->items = grown;
    t->cap = cap;
  }
  memset(&t->items[t->n], 0, sizeof t->items[0]);
  if (tide_tensor_share(&t->items[t->n], v)) return -1;
  return t->n++;
}

/* A 64-bit integer as a JSON number when a double holds it exactly, else as
 * a decimal string (docs/saved_model.md: readers take both). */
static cJSON *int64_json(int64_t v) {
  if (v >= -(INT64_C(1) << 53) && v <= (INT64_C(1) << 53)) return cJSON_CreateNumber((double)v);
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  return cJSON_CreateString(buf);
}

static cJSON *uint64_json(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  return cJSON_CreateString(buf);
}

/* A double as a JSON number, or "inf", "-inf", "nan" (JSON has none of them). */
static cJSON *double_json(double v) {
  if (isnan(v)) return cJSON_CreateString("nan");
  if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
  return cJSON_CreateNumber(v);
}

static cJSON *pair_json(int32_t a, int32_t b) {
  cJSON *p = cJSON_CreateArray();
  if (p) {
    cJSON_AddItemToArray(p, cJSON_CreateNumber(a));
    cJSON_AddItemToArray(p, cJSON_CreateNumber(b));
  }
  return p;
}

/* The attributes that differ from zero. */
static cJSON *attrs_json(const tide_attrs *a) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (a->nints > 0) {
    cJSON *ints = cJSON_AddArrayToObject(o, "ints");
    for (int i = 0; ints && i < a->nints && i < TIDE_MAX_INTS; i++) cJSON_AddItemToArray(ints, int64_json(a->ints[i]));
  }
  if (a->axis) cJSON_AddNumberToObject(o, "axis", a->axis);
  if (a->dtype) {
    const char *name = tide_dtype_name(a->dtype);
    if (strcmp(name, "?") != 0) cJSON_AddStringToObject(o, "dtype", name);
    else cJSON_AddNumberToObject(o, "dtype", a->dtype);
  }
  if (a->flags) cJSON_AddNumberToObject(o, "flags", a->flags);
  if (a->n) cJSON_AddItemToObject(o, "n", int64_json(a->n));
  if (a->m) cJSON_AddItemToObject(o, "m", int64_json(a->m));
  if (a->scalars[0] != 0 || a->scalars[1] != 0 || a->scalars[2] != 0 || a->scalars[3] != 0 || signbit(a->scalars[0]) ||
      signbit(a->scalars[1]) || signbit(a->scalars[2]) || signbit(a->scalars[3])) {
    cJSON *s = cJSON_AddArrayToObject(o, "scalars");
    for (int i = 0; s && i < 4; i++) cJSON_AddItemToArray(s, double_json(a->scalars[i]));
  }
  if (a->rng_key) cJSON_AddItemToObject(o, "rng_key", uint64_json(a->rng_key));
  if (a->rng_counter) cJSON_AddItemToObject(o, "rng_counter", uint64_json(a->rng_counter));
  return o;
}

/* A tensor spec: {"dtype": "float32", "shape": [null, 3]} (shape null: any rank). */
static cJSON *spec_json(const tide_tensor *d) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "dtype", tide_dtype_name(d->dt));
  if (d->ndim < 0) {
    cJSON_AddNullToObject(o, "shape");
    return o;
  }
  cJSON *shape = cJSON_AddArrayToObject(o, "shape");
  for (int i = 0; shape && i < d->ndim; i++)
    cJSON_AddItemToArray(shape, d->dims[i] < 0 ? cJSON_CreateNull() : int64_json(d->dims[i]));
  return o;
}

typedef struct writer {
  const tide_graph *g;
  const struct writer *parent; /* the enclosing graph's writer (captures name its nodes) */
  int n_own;                   /* the graph's own inputs; those after them are captures (a finalized
                                  subgraph takes its captures as inputs: graph/build.c's adopt_sub) */
  const gvalue *cap_vals;      /* the parent's value each capture input stands for (the owner's inputs) */
  int n_vars;
  tide_tensor *const *handles;
  gdef_tensors *consts;
  cJSON *nodes;                /* the array being filled */
  int count;                   /* nodes written */
  int32_t *first;              /* per graph node: its JSON node (outputs k -> (first, k)), -1 when none */
  int32_t **fused_out;         /* per FUSED node: the JSON node of each of its outputs */
} writer;

static tide_status oom(void) { return TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory"); }

/* The JSON value (node, output) standing for value v of the graph. */
static void map_value(const writer *w, gvalue v, int32_t *node, int32_t *index) {
  if (w->fused_out[v.node]) {
    *node = w->fused_out[v.node][v.index];
    *index = 0;
  } else {
    *node = w->first[v.node];
    *index = v.index;
  }
}

static cJSON *ref_json(const writer *w, gvalue v) {
  int32_t node, index;
  map_value(w, v, &node, &index);
  return pair_json(node, index);
}

static cJSON *refs_json(const writer *w, const gvalue *in, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, ref_json(w, in[i]));
  return a;
}

static int var_index(const writer *w, const tide_tensor *handle) {
  for (int k = 0; k < w->n_vars; k++)
    if (w->handles[k] == handle) return k;
  return -1;
}

static cJSON *graph_json(const tide_graph *g, const struct writer *parent, int n_own, const gvalue *cap_vals,
                         int n_vars, tide_tensor *const *handles, gdef_tensors *consts);

/* Append a node object; returns its index or -1. */
static int push(writer *w, cJSON *node) {
  if (!node) return -1;
  cJSON_AddItemToArray(w->nodes, node);
  return w->count++;
}

/* A one-element constant of a fused description as a CONST node. */
static int const_step(writer *w, const tide_fused_const *c) {
  int64_t dims[TIDE_MAX_DIMS];
  for (int i = 0; i < TIDE_MAX_DIMS; i++) dims[i] = 1;
  tide_tensor t;
  memset(&t, 0, sizeof t);
  if (tide_tensor_init(&t, c->dt, c->ndim, dims)) return -1;
  switch (c->dt) {
  case TIDE_FLOAT32: *(float *)t.data = (float)c->f; break;
  case TIDE_FLOAT64: *(double *)t.data = c->f; break;
  case TIDE_FLOAT16: *(uint16_t *)t.data = tide_float_to_half((float)c->f); break;
  case TIDE_BFLOAT16: *(uint16_t *)t.data = tide_float_to_bfloat16((float)c->f); break;
  case TIDE_INT8: *(int8_t *)t.data = (int8_t)c->i; break;
  case TIDE_UINT8: *(uint8_t *)t.data = (uint8_t)c->i; break;
  case TIDE_INT32: *(int32_t *)t.data = (int32_t)c->i; break;
  case TIDE_INT64: *(int64_t *)t.data = c->i; break;
  case TIDE_BOOL: *(uint8_t *)t.data = c->i != 0; break;
  default: tide_tensor_release(&t); return TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: fused constant of dtype %d", c->dt), -1;
  }
  int k = add_tensor(w->consts, &t);
  tide_tensor_release(&t);
  if (k < 0) return oom(), -1;
  cJSON *o = cJSON_CreateObject();
  if (!o) return oom(), -1;
  char name[32];
  snprintf(name, sizeof name, "c%d", k);
  cJSON_AddStringToObject(o, "kind", "const");
  cJSON_AddStringToObject(o, "tensor", name);
  return push(w, o);
}

/* A FUSED node as the registry ops it holds. */
static tide_status write_fused(writer *w, int node) {
  const gnode *n = &w->g->nodes[node];
  const tide_fused *f = tide_graph_fused_desc(n);
  if (!f) return TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: fused node %d has no description", node);
  int32_t consts[TIDE_FUSED_MAX_CONSTS], steps[TIDE_FUSED_MAX_STEPS];
  for (int c = 0; c < f->n_consts; c++)
    if ((consts[c] = const_step(w, &f->consts[c])) < 0) return tide_last_status() ? tide_last_status() : oom();
  for (int s = 0; s < f->n_steps; s++) {
    const tide_fused_step *st = &f->steps[s];
    cJSON *o = cJSON_CreateObject();
    if (!o) return oom();
    cJSON_AddStringToObject(o, "kind", "op");
    cJSON_AddStringToObject(o, "op", tide_op_name(st->op));
    cJSON *in = cJSON_AddArrayToObject(o, "in");
    for (int a = 0; in && a < st->n_args; a++) {
      const tide_fused_arg *arg = &st->args[a];
      int32_t jn = -1, ji = 0;
      if (arg->src == TIDE_FUSED_INPUT && arg->index < n->n_in) map_value(w, n->in[arg->index], &jn, &ji);
      else if (arg->src == TIDE_FUSED_CONST && arg->index < f->n_consts) jn = consts[arg->index];
      else if (arg->src == TIDE_FUSED_STEP && arg->index < s) jn = steps[arg->index];
      if (jn < 0) {
        cJSON_Delete(o);
        return TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: fused node %d step %d has a bad operand", node, s);
      }
      cJSON_AddItemToArray(in, pair_json(jn, ji));
    }
    tide_attrs a;
    tide_fused_step_attrs(st, &a);
    if (st->op != TIDE_OP_CAST) a.dtype = 0;
    cJSON_AddItemToObject(o, "attrs", attrs_json(&a));
    if (st->tag >= 0 && st->tag < w->g->nnodes && w->g->nodes[st->tag].origin)
      cJSON_AddStringToObject(o, "origin", w->g->nodes[st->tag].origin);
    if ((steps[s] = push(w, o)) < 0) return oom();
  }
  w->fused_out[node] = malloc(((size_t)n->n_out + 1) * sizeof(int32_t));
  if (!w->fused_out[node]) return oom();
  for (int k = 0; k < n->n_out; k++) {
    int s = k < f->n_outputs ? f->outputs[k] : -1;
    if (s < 0 || s >= f->n_steps)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: fused node %d output %d has no step", node, k);
    w->fused_out[node][k] = steps[s];
  }
  return TIDE_OK;
}

/* One live node. */
static tide_status write_node(writer *w, int i) {
  const gnode *n = &w->g->nodes[i];
  if (n->kind == TIDE_NODE_FUSED) return write_fused(w, i);
  if (n->kind == TIDE_NODE_EFFECT) {
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED,
                     "saved model: graph '%s' writes summaries (%s, recorded at %s): a SavedModel cannot hold them; "
                     "save a function that does not call tide.summary", w->g->name ? w->g->name : "?",
                     n->effect && n->effect->name ? n->effect->name : "effect", n->origin ? n->origin : "?");
  }
  cJSON *o = cJSON_CreateObject();
  if (!o) return oom();
  if (n->kind < 0 || n->kind > TIDE_NODE_WHILE) {
    cJSON_Delete(o);
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: node %d of unknown kind %d", i, n->kind);
  }
  cJSON_AddStringToObject(o, "kind", KIND_NAMES[n->kind]);
  tide_status st = TIDE_OK;
  switch (n->kind) {
  case TIDE_NODE_INPUT:
    if (n->input_index < w->n_own) {
      cJSON_AddNumberToObject(o, "index", n->input_index);
    } else if (w->parent && w->cap_vals && n->input_index < w->g->n_inputs) {
      cJSON_ReplaceItemInObject(o, "kind", cJSON_CreateString("capture"));
      cJSON_AddItemToObject(o, "of", ref_json(w->parent, w->cap_vals[n->input_index - w->n_own]));
    } else {
      st = TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: input node %d names no input", i);
    }
    break;
  case TIDE_NODE_CONST: {
    if (n->value.dt < 0 || n->value.ndim < 0 || (n->value.nelem > 0 && !n->value.data)) {
      st = TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: constant node %d holds no data", i);
      break;
    }
    int k = add_tensor(w->consts, &n->value);
    if (k < 0) {
      st = oom();
      break;
    }
    char name[32];
    snprintf(name, sizeof name, "c%d", k);
    cJSON_AddStringToObject(o, "tensor", name);
    break;
  }
  case TIDE_NODE_CAPTURE: /* a finalized graph has none (adopt_sub makes them inputs) */
    st = TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: capture node %d in a finalized graph", i);
    break;
  case TIDE_NODE_VARIABLE:
  case TIDE_NODE_ASSIGN: {
    int v = var_index(w, n->handle);
    if (v < 0) {
      st = TIDE_FAIL(TIDE_ERR_VALUE,
                     "saved model: graph '%s' reads or assigns a variable that is not among the model's variables "
                     "(track it on the saved object)", w->g->name ? w->g->name : "?");
      break;
    }
    cJSON_AddNumberToObject(o, "var", v);
    if (n->kind == TIDE_NODE_ASSIGN) {
      cJSON_AddStringToObject(o, "mode", MODE_NAMES[n->assign_mode >= 0 && n->assign_mode <= 2 ? n->assign_mode : 0]);
      cJSON_AddItemToObject(o, "in", refs_json(w, n->in, n->n_in));
    }
    break;
  }
  case TIDE_NODE_OP:
    cJSON_AddStringToObject(o, "op", tide_op_name(n->op));
    cJSON_AddItemToObject(o, "in", refs_json(w, n->in, n->n_in));
    cJSON_AddNumberToObject(o, "n_out", n->n_out);
    cJSON_AddItemToObject(o, "attrs", attrs_json(&n->attrs));
    break;
  case TIDE_NODE_PRINT:
    cJSON_AddStringToObject(o, "text", n->text ? n->text : "");
    cJSON_AddItemToObject(o, "in", refs_json(w, n->in, n->n_in));
    break;
  case TIDE_NODE_COND: {
    cJSON_AddItemToObject(o, "in", refs_json(w, n->in, 1));
    cJSON_AddNumberToObject(o, "n_out", n->n_out);
    const tide_graph *ta = n->sub[0], *tb = n->sub[1];
    if (n->n_in != 1 + ta->n_inputs + tb->n_inputs) {
      st = TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: cond node %d has %d inputs for %d captures", i, n->n_in,
                     ta->n_inputs + tb->n_inputs);
      break;
    }
    cJSON *a = graph_json(ta, w, 0, n->in + 1, w->n_vars, w->handles, w->consts);
    cJSON *b = a ? graph_json(tb, w, 0, n->in + 1 + ta->n_inputs, w->n_vars, w->handles, w->consts) : NULL;
    if (!a || !b) {
      cJSON_Delete(a);
      st = tide_last_status() ? tide_last_status() : oom();
      break;
    }
    cJSON_AddItemToObject(o, "then", a);
    cJSON_AddItemToObject(o, "else", b);
    break;
  }
  case TIDE_NODE_WHILE: {
    int nvars = tide_graph_while_nvars(n);
    cJSON_AddItemToObject(o, "in", refs_json(w, n->in, nvars));
    cJSON_AddItemToObject(o, "max_iters", int64_json(n->attrs.n < 0 ? -1 : n->attrs.n));
    if (n->attrs.flags & WHILE_STACKED) cJSON_AddBoolToObject(o, "stacked", 1);
    const tide_graph *tc = n->sub[0], *tbody = n->sub[1];
    if (tc->n_inputs < nvars || tbody->n_inputs < nvars || n->n_in != tc->n_inputs + tbody->n_inputs - nvars) {
      st = TIDE_FAIL(TIDE_ERR_INTERNAL, "saved model: while node %d has %d inputs for its subgraphs' %d and %d", i,
                     n->n_in, tc->n_inputs, tbody->n_inputs);
      break;
    }
    cJSON *a = graph_json(tc, w, nvars, n->in + nvars, w->n_vars, w->handles, w->consts);
    cJSON *b = a ? graph_json(tbody, w, nvars, n->in + tc->n_inputs, w->n_vars, w->handles, w->consts) : NULL;
    if (!a || !b) {
      cJSON_Delete(a);
      st = tide_last_status() ? tide_last_status() : oom();
      break;
    }
    cJSON_AddItemToObject(o, "cond", a);
    cJSON_AddItemToObject(o, "body", b);
    break;
  }
  default: break;
  }
  if (!st && n->origin) cJSON_AddStringToObject(o, "origin", n->origin);
  if (st) {
    cJSON_Delete(o);
    return st;
  }
  w->first[i] = push(w, o);
  return TIDE_OK;
}

static cJSON *graph_json(const tide_graph *g, const writer *parent, int n_own, const gvalue *cap_vals,
                         int n_vars, tide_tensor *const *handles, gdef_tensors *consts) {
  if (!g->finalized) {
    TIDE_FAIL(TIDE_ERR_VALUE, "saved model: graph '%s' is not finalized", g->name ? g->name : "?");
    return NULL;
  }
  tide_clear_error();
  writer w = {g, parent, n_own, cap_vals, n_vars, handles, consts, NULL, 0, NULL, NULL};
  cJSON *o = cJSON_CreateObject();
  w.first = malloc(((size_t)g->nnodes + 1) * sizeof *w.first);
  w.fused_out = calloc((size_t)g->nnodes + 1, sizeof *w.fused_out);
  tide_status st = (!o || !w.first || !w.fused_out) ? oom() : TIDE_OK;
  if (!st) {
    for (int i = 0; i < g->nnodes; i++) w.first[i] = -1;
    if (g->name) cJSON_AddStringToObject(o, "name", g->name);
    cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
    for (int k = 0; ins && k < n_own; k++) cJSON_AddItemToArray(ins, spec_json(&g->nodes[g->inputs[k]].out[0]));
    w.nodes = cJSON_AddArrayToObject(o, "nodes");
    if (!ins || !w.nodes) st = oom();
  }
  for (int i = 0; !st && i < g->nnodes; i++)
    if (!(g->nodes[i].flags & NODE_DEAD)) st = write_node(&w, i);
  if (!st) {
    cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
    for (int k = 0; outs && k < g->n_outputs; k++) cJSON_AddItemToArray(outs, ref_json(&w, g->outputs[k]));
    if (!outs) st = oom();
  }
  free(w.first);
  for (int i = 0; w.fused_out && i < g->nnodes; i++) free(w.fused_out[i]);
  free(w.fused_out);
  if (st) {
    cJSON_Delete(o);
    if (!tide_last_status()) oom();
    return NULL;
  }
  return o;
}

cJSON *tide_graph_def_write(const tide_graph *g, int n_vars, tide_tensor *const *handles, gdef_tensors *consts) {
  if (!g) {
    TIDE_FAIL(TIDE_ERR_VALUE, "saved model: NULL graph");
    return NULL;
  }
  return graph_json(g, NULL, g->n_inputs, NULL, n_vars, handles, consts);
}
