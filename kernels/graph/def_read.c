/* graph/def_read.c — a graph's JSON object (docs/saved_model.md) read into a
 * checked tide_graph_def: every reference, op, arity, attribute and spec is
 * checked here, so a hostile file gives an error naming what is wrong. */
#include "graph_def.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

enum {
  GDEF_MAX_NODES = 1 << 22,    /* nodes in one graph */
  GDEF_MAX_VALUES = 1 << 16    /* inputs, outputs or operands of one node or graph */
};
#define GDEF_MAX_DIM (INT64_C(1) << 48)

typedef struct reader {
  const char *file;
  const char *graph;           /* the graph's name, for messages */
  int n_vars;
  gdef_lookup_fn lookup;
  void *ctx;
  int depth;
  const tide_graph_def *parent;
  int parent_limit;            /* captures name parent nodes below this one (the node owning the subgraph) */
} reader;

/* An error naming the file, graph and node (node < 0: none). */
static tide_status bad(const reader *r, int node, const char *fmt, ...) {
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (node >= 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "saved model %s: graph '%s', node %d: %s", r->file, r->graph, node, what);
  return TIDE_FAIL(TIDE_ERR_VALUE, "saved model %s: graph '%s': %s", r->file, r->graph, what);
}

/* An integer in [lo, hi]: a JSON number that is whole, or a decimal string. */
static bool get_int(const cJSON *x, int64_t lo, int64_t hi, int64_t *out) {
  int64_t v;
  if (cJSON_IsNumber(x)) {
    double d = x->valuedouble;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return false;
    v = (int64_t)d;
  } else if (cJSON_IsString(x) && x->valuestring && x->valuestring[0]) {
    char *end;
    errno = 0;
    long long p = strtoll(x->valuestring, &end, 10);
    if (errno || *end) return false;
    v = p;
  } else {
    return false;
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

static bool get_uint64(const cJSON *x, uint64_t *out) {
  if (cJSON_IsString(x) && x->valuestring && x->valuestring[0] && x->valuestring[0] != '-') {
    char *end;
    errno = 0;
    unsigned long long p = strtoull(x->valuestring, &end, 10);
    if (errno || *end) return false;
    *out = p;
    return true;
  }
  int64_t v;
  if (!get_int(x, 0, INT64_MAX, &v)) return false;
  *out = (uint64_t)v;
  return true;
}

static bool get_double(const cJSON *x, double *out) {
  if (cJSON_IsNumber(x)) {
    *out = x->valuedouble;
    return true;
  }
  if (!cJSON_IsString(x) || !x->valuestring) return false;
  if (!strcmp(x->valuestring, "inf")) *out = INFINITY;
  else if (!strcmp(x->valuestring, "-inf")) *out = -INFINITY;
  else if (!strcmp(x->valuestring, "nan")) *out = NAN;
  else return false;
  return true;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static tide_status oom(void) { return TIDE_FAIL(TIDE_ERR_MEMORY, "saved model: out of memory"); }

static int dtype_of(const cJSON *x) {
  if (cJSON_IsString(x) && x->valuestring) {
    int dt = tide_dtype_from_name(x->valuestring);
    return dt >= 0 && dt < TIDE_NUM_DTYPES ? dt : -1;
  }
  int64_t v;
  return get_int(x, 0, TIDE_NUM_DTYPES - 1, &v) ? (int)v : -1;
}

/* A spec {"dtype": ..., "shape": [null | dim, ...] | null}. */
static tide_status read_spec(const reader *r, const cJSON *j, int k, gdef_input *in) {
  if (!cJSON_IsObject(j)) return bad(r, -1, "input %d is not an object", k);
  in->dt = dtype_of(cJSON_GetObjectItemCaseSensitive(j, "dtype"));
  if (in->dt < 0) return bad(r, -1, "input %d has no known dtype", k);
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
  if (cJSON_IsNull(shape)) {
    in->ndim = TIDE_UNKNOWN_RANK;
    return TIDE_OK;
  }
  if (!cJSON_IsArray(shape)) return bad(r, -1, "input %d: shape must be a list or null", k);
  int nd = cJSON_GetArraySize(shape);
  if (nd > TIDE_MAX_DIMS) return bad(r, -1, "input %d has %d dims (at most %d)", k, nd, TIDE_MAX_DIMS);
  in->ndim = nd;
  int d = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, shape) {
    int64_t v = -1;
    if (!cJSON_IsNull(x) && !get_int(x, 0, GDEF_MAX_DIM, &v))
      return bad(r, -1, "input %d: dim %d is not null or a size in [0, 2^48]", k, d);
    in->dims[d++] = v;
  }
  return TIDE_OK;
}

static tide_status read_attrs(const reader *r, int node, const cJSON *j, tide_attrs *a) {
  memset(a, 0, sizeof *a);
  if (j == NULL || cJSON_IsNull(j)) return TIDE_OK;
  if (!cJSON_IsObject(j)) return bad(r, node, "attrs must be an object");
  const cJSON *x;
  cJSON_ArrayForEach(x, j) {
    const char *key = x->string ? x->string : "";
    int64_t v;
    if (!strcmp(key, "ints")) {
      if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) > TIDE_MAX_INTS)
        return bad(r, node, "attrs.ints must be a list of at most %d integers", TIDE_MAX_INTS);
      const cJSON *e;
      cJSON_ArrayForEach(e, x) {
        if (!get_int(e, INT64_MIN, INT64_MAX, &a->ints[a->nints])) return bad(r, node, "attrs.ints holds a non-integer");
        a->nints++;
      }
    } else if (!strcmp(key, "axis")) {
      if (!get_int(x, INT32_MIN, INT32_MAX, &v)) return bad(r, node, "attrs.axis is not a 32-bit integer");
      a->axis = (int32_t)v;
    } else if (!strcmp(key, "dtype")) {
      int dt = dtype_of(x);
      if (dt < 0) return bad(r, node, "attrs.dtype is no known dtype");
      a->dtype = dt;
    } else if (!strcmp(key, "flags")) {
      if (!get_int(x, 0, UINT32_MAX, &v)) return bad(r, node, "attrs.flags is not a 32-bit mask");
      a->flags = (uint32_t)v;
    } else if (!strcmp(key, "n") || !strcmp(key, "m")) {
      if (!get_int(x, INT64_MIN, INT64_MAX, &v)) return bad(r, node, "attrs.%s is not an integer", key);
      if (key[0] == 'n') a->n = v;
      else a->m = v;
    } else if (!strcmp(key, "scalars")) {
      if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) > 4) return bad(r, node, "attrs.scalars must be at most 4 numbers");
      int i = 0;
      const cJSON *e;
      cJSON_ArrayForEach(e, x) {
        if (!get_double(e, &a->scalars[i++])) return bad(r, node, "attrs.scalars holds a non-number");
      }
    } else if (!strcmp(key, "rng_key")) {
      if (!get_uint64(x, &a->rng_key)) return bad(r, node, "attrs.rng_key is not an unsigned 64-bit integer");
    } else if (!strcmp(key, "rng_counter")) {
      if (!get_uint64(x, &a->rng_counter)) return bad(r, node, "attrs.rng_counter is not an unsigned 64-bit integer");
    } else {
      return bad(r, node, "unknown attribute '%s'", key);
    }
  }
  return TIDE_OK;
}

/* Outputs of node k of d (known once it is read). */
static int outputs_of(const tide_graph_def *d, int k) { return d->nodes[k].n_out; }

/* A pair [node, output] naming an output of one of the first `limit` nodes of d. */
static tide_status read_ref(const reader *r, int node, const cJSON *p, const tide_graph_def *d, int limit,
                            const char *what, int32_t *out) {
  int64_t a, b;
  if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !get_int(cJSON_GetArrayItem(p, 0), 0, INT32_MAX, &a) ||
      !get_int(cJSON_GetArrayItem(p, 1), 0, INT32_MAX, &b))
    return bad(r, node, "%s is not a pair [node, output]", what);
  if (a >= limit)
    return bad(r, node, "%s names node %lld, which is not an earlier node (a graph's nodes come after their inputs: "
                        "no cycles)", what, (long long)a);
  if (b >= outputs_of(d, (int)a))
    return bad(r, node, "%s names output %lld of node %lld, which has %d", what, (long long)b, (long long)a,
               outputs_of(d, (int)a));
  out[0] = (int32_t)a;
  out[1] = (int32_t)b;
  return TIDE_OK;
}

static tide_status read_graph(reader *r, const cJSON *j, tide_graph_def **out);

/* The "in" list of a node: n_in pairs into d's earlier nodes. */
static tide_status read_inputs(const reader *r, int node, const cJSON *j, const tide_graph_def *d, tide_def_node *n) {
  const cJSON *in = cJSON_GetObjectItemCaseSensitive(j, "in");
  if (in == NULL) {
    n->n_in = 0;
    return TIDE_OK;
  }
  if (!cJSON_IsArray(in)) return bad(r, node, "'in' must be a list of [node, output] pairs");
  int count = cJSON_GetArraySize(in);
  if (count > GDEF_MAX_VALUES) return bad(r, node, "%d inputs (at most %d)", count, GDEF_MAX_VALUES);
  int32_t *pairs = malloc(((size_t)count + 1) * 2 * sizeof *pairs);
  if (!pairs) return oom();
  n->in = pairs;
  n->n_in = count;
  int i = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, in) {
    char what[32];
    snprintf(what, sizeof what, "input %d", i);
    tide_status st = read_ref(r, node, p, d, node, what, &pairs[2 * i]);
    if (st) return st;
    i++;
  }
  return TIDE_OK;
}

static const char *const KINDS[] = {"input", "const", "capture", "variable", "op", "assign", "print", "cond", "while"};

/* A subgraph of node `node`, read with captures into d's nodes below it. */
static tide_status read_sub(reader *r, int node, const cJSON *j, const char *key, const tide_graph_def *d,
                            tide_graph_def **out) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, key);
  if (!cJSON_IsObject(s)) return bad(r, node, "'%s' must be a graph object", key);
  if (r->depth >= GDEF_MAX_DEPTH) return bad(r, node, "subgraphs nested deeper than %d", GDEF_MAX_DEPTH);
  reader sub = *r;
  sub.depth++;
  sub.parent = d;
  sub.parent_limit = node;
  return read_graph(&sub, s, out);
}

static tide_status read_node(reader *r, const cJSON *j, tide_graph_def *d, int node) {
  tide_def_node *n = &d->nodes[node];
  n->var = -1;
  n->max_iters = -1;
  if (!cJSON_IsObject(j)) return bad(r, node, "not an object");
  const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
  n->kind = -1;
  for (int k = 0; cJSON_IsString(kind) && k < (int)(sizeof KINDS / sizeof *KINDS); k++)
    if (!strcmp(kind->valuestring, KINDS[k])) n->kind = k;
  if (n->kind < 0)
    return bad(r, node, "unknown kind %s%s%s", cJSON_IsString(kind) ? "'" : "",
               cJSON_IsString(kind) ? kind->valuestring : "(missing)", cJSON_IsString(kind) ? "'" : "");
  const cJSON *origin = cJSON_GetObjectItemCaseSensitive(j, "origin");
  if (cJSON_IsString(origin) && !(n->origin = dup_string(origin->valuestring))) return oom();
  tide_status st = read_inputs(r, node, j, d, n);
  if (st) return st;
  int64_t v;
  switch (n->kind) {
  case TIDE_NODE_INPUT:
    if (!get_int(cJSON_GetObjectItemCaseSensitive(j, "index"), 0, d->n_inputs - 1, &v))
      return bad(r, node, "input index is not one of the graph's %d inputs", d->n_inputs);
    n->input_index = (int32_t)v;
    n->n_out = 1;
    break;
  case TIDE_NODE_CONST: {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "tensor");
    const tide_tensor *t = cJSON_IsString(name) ? r->lookup(r->ctx, name->valuestring) : NULL;
    if (!t) return bad(r, node, "constant names no tensor of the tensor file");
    if (tide_tensor_share(&d->values[node], t)) return tide_last_status();
    n->value = &d->values[node];
    n->n_out = 1;
    break;
  }
  case TIDE_NODE_CAPTURE: {
    if (!r->parent) return bad(r, node, "a capture in a graph that is no cond or while_loop subgraph");
    reader pr = *r;
    st = read_ref(&pr, node, cJSON_GetObjectItemCaseSensitive(j, "of"), r->parent, r->parent_limit, "'of'",
                  n->capture);
    if (st) return st;
    n->n_out = 1;
    break;
  }
  case TIDE_NODE_VARIABLE:
  case TIDE_NODE_ASSIGN:
    if (!get_int(cJSON_GetObjectItemCaseSensitive(j, "var"), 0, (int64_t)r->n_vars - 1, &v))
      return bad(r, node, "'var' names none of the model's %d variables", r->n_vars);
    n->var = (int32_t)v;
    n->n_out = n->kind == TIDE_NODE_VARIABLE ? 1 : 0;
    if (n->kind == TIDE_NODE_ASSIGN) {
      const cJSON *mode = cJSON_GetObjectItemCaseSensitive(j, "mode");
      const char *m = cJSON_IsString(mode) ? mode->valuestring : "";
      if (!strcmp(m, "set")) n->assign_mode = TIDE_ASSIGN_SET;
      else if (!strcmp(m, "add")) n->assign_mode = TIDE_ASSIGN_ADD;
      else if (!strcmp(m, "sub")) n->assign_mode = TIDE_ASSIGN_SUB;
      else return bad(r, node, "assign mode must be \"set\", \"add\" or \"sub\"");
      if (n->n_in != 1) return bad(r, node, "an assign takes 1 input, got %d", n->n_in);
    } else if (n->n_in != 0) {
      return bad(r, node, "a variable read takes no inputs");
    }
    break;
  case TIDE_NODE_OP: {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "op");
    n->op = cJSON_IsString(name) ? tide_op_lookup(name->valuestring) : -1;
    if (n->op < 0)
      return bad(r, node, "unknown op '%s' (this build of tide has no such op)",
                 cJSON_IsString(name) ? name->valuestring : "(missing)");
    int want = tide_op_num_inputs(n->op);
    bool shape_in = (tide_op_flags(n->op) & TIDE_OPF_SHAPE_INPUT) != 0;
    if (want >= 0 && n->n_in != want && !(shape_in && n->n_in == want + 1))
      return bad(r, node, "op '%s' takes %d input%s, got %d", tide_op_name(n->op), want, want == 1 ? "" : "s",
                 n->n_in);
    if (want < 0 && n->n_in < 1) return bad(r, node, "op '%s' takes at least one input", tide_op_name(n->op));
    n->n_out = tide_op_num_outputs(n->op);
    if (n->n_out < 0) n->n_out = n->n_in; /* one per input (all_reduce_sum) */
    const cJSON *nout = cJSON_GetObjectItemCaseSensitive(j, "n_out");
    if (nout && (!get_int(nout, 0, 64, &v) || v != n->n_out))
      return bad(r, node, "op '%s' gives %d output%s, the file says %s", tide_op_name(n->op), n->n_out,
                 n->n_out == 1 ? "" : "s", cJSON_IsNumber(nout) ? "otherwise" : "no number");
    st = read_attrs(r, node, cJSON_GetObjectItemCaseSensitive(j, "attrs"), &n->attrs);
    if (st) return st;
    break;
  }
  case TIDE_NODE_PRINT: {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(j, "text");
    if (!cJSON_IsString(text)) return bad(r, node, "a print needs its text");
    if (!(n->text = dup_string(text->valuestring))) return oom();
    n->n_out = 0;
    break;
  }
  case TIDE_NODE_COND: {
    if (n->n_in != 1) return bad(r, node, "a cond takes 1 input (the predicate), got %d", n->n_in);
    if (!get_int(cJSON_GetObjectItemCaseSensitive(j, "n_out"), 0, GDEF_MAX_VALUES, &v))
      return bad(r, node, "a cond needs its number of results (n_out)");
    n->n_out = (int32_t)v;
    tide_graph_def *a = NULL, *b = NULL;
    st = read_sub(r, node, j, "then", d, &a);
    n->sub[0] = a;
    if (!st) st = read_sub(r, node, j, "else", d, &b);
    n->sub[1] = b;
    if (st) return st;
    if (a->n_inputs || b->n_inputs) return bad(r, node, "a cond's branches take no inputs");
    if (a->n_outputs != n->n_out || b->n_outputs != n->n_out)
      return bad(r, node, "a cond of %d results has branches of %d and %d", n->n_out, a->n_outputs, b->n_outputs);
    break;
  }
  case TIDE_NODE_WHILE: {
    int nv = n->n_in;
    if (!get_int(cJSON_GetObjectItemCaseSensitive(j, "max_iters"), -1, INT64_MAX, &v))
      return bad(r, node, "a while_loop needs max_iters (-1: no bound)");
    n->max_iters = v;
    const cJSON *stacked = cJSON_GetObjectItemCaseSensitive(j, "stacked");
    n->stacked = cJSON_IsTrue(stacked);
    n->n_out = n->stacked ? 2 * nv + 1 : nv;
    tide_graph_def *a = NULL, *b = NULL;
    st = read_sub(r, node, j, "cond", d, &a);
    n->sub[0] = a;
    if (!st) st = read_sub(r, node, j, "body", d, &b);
    n->sub[1] = b;
    if (st) return st;
    if (a->n_inputs != nv || a->n_outputs != 1)
      return bad(r, node, "a while_loop of %d variables has a condition of %d inputs and %d outputs (want %d and 1)",
                 nv, a->n_inputs, a->n_outputs, nv);
    if (b->n_inputs != nv || b->n_outputs != nv)
      return bad(r, node, "a while_loop of %d variables has a body of %d inputs and %d outputs", nv, b->n_inputs,
                 b->n_outputs);
    break;
  }
  default: break;
  }
  return TIDE_OK;
}

static tide_status read_graph(reader *r, const cJSON *j, tide_graph_def **out) {
  *out = NULL;
  tide_graph_def *d = calloc(1, sizeof *d);
  if (!d) return oom();
  *out = d;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
  d->name = dup_string(cJSON_IsString(name) ? name->valuestring : "graph");
  if (!d->name) return oom();
  r->graph = d->name;
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(j, "inputs");
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "nodes");
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
  if (!cJSON_IsArray(ins) || !cJSON_IsArray(nodes) || !cJSON_IsArray(outs))
    return bad(r, -1, "a graph needs lists 'inputs', 'nodes' and 'outputs'");
  int ni = cJSON_GetArraySize(ins), nn = cJSON_GetArraySize(nodes), no = cJSON_GetArraySize(outs);
  if (ni > GDEF_MAX_VALUES || no > GDEF_MAX_VALUES || nn > GDEF_MAX_NODES)
    return bad(r, -1, "%d inputs, %d nodes and %d outputs: too many", ni, nn, no);
  d->inputs = calloc((size_t)ni + 1, sizeof *d->inputs);
  d->nodes = calloc((size_t)nn + 1, sizeof *d->nodes);
  d->values = calloc((size_t)nn + 1, sizeof *d->values);
  d->outputs = calloc(((size_t)no + 1) * 2, sizeof *d->outputs);
  if (!d->inputs || !d->nodes || !d->values || !d->outputs) return oom();
  const cJSON *x;
  tide_status st;
  cJSON_ArrayForEach(x, ins) {
    if ((st = read_spec(r, x, d->n_inputs, &d->inputs[d->n_inputs]))) return st;
    d->n_inputs++;
  }
  cJSON_ArrayForEach(x, nodes) {
    r->graph = d->name; /* a subgraph read below renamed it */
    st = read_node(r, x, d, d->n_nodes);
    d->n_nodes++; /* counted even when it failed, so free sees what it holds */
    if (st) return st;
  }
  r->graph = d->name;
  cJSON_ArrayForEach(x, outs) {
    char what[32];
    snprintf(what, sizeof what, "output %d", d->n_outputs);
    if ((st = read_ref(r, -1, x, d, d->n_nodes, what, &d->outputs[2 * d->n_outputs]))) return st;
    d->n_outputs++;
  }
  return TIDE_OK;
}

void tide_graph_def_free(tide_graph_def *d) {
  if (!d) return;
  for (int i = 0; i < d->n_nodes; i++) {
    tide_def_node *n = &d->nodes[i];
    free((void *)n->in);
    free((void *)n->text);
    free((void *)n->origin);
    tide_graph_def_free((tide_graph_def *)n->sub[0]);
    tide_graph_def_free((tide_graph_def *)n->sub[1]);
    tide_tensor_release(&d->values[i]);
  }
  free(d->nodes);
  free(d->values);
  free(d->inputs);
  free(d->outputs);
  free(d->name);
  free(d);
}

tide_status tide_graph_def_read(const cJSON *j, const char *file, int n_vars, gdef_lookup_fn lookup, void *ctx,
                                tide_graph_def **out) {
  reader r = {file ? file : "?", "?", n_vars, lookup, ctx, 0, NULL, 0};
  *out = NULL;
  if (!cJSON_IsObject(j)) return bad(&r, -1, "not a graph object");
  tide_graph_def *d;
  tide_status st = read_graph(&r, j, &d);
  if (st) {
    tide_graph_def_free(d);
    return st;
  }
  *out = d;
  return TIDE_OK;
}

/* ---- the public accessors ------------------------------------------------------- */

int tide_graph_def_num_inputs(const tide_graph_def *d) { return d ? d->n_inputs : 0; }

int tide_graph_def_input(const tide_graph_def *d, int i, int *ndim, int64_t *dims) {
  if (!d || i < 0 || i >= d->n_inputs) return -1;
  const gdef_input *in = &d->inputs[i];
  if (ndim) *ndim = in->ndim;
  for (int k = 0; dims && k < in->ndim; k++) dims[k] = in->dims[k];
  return in->dt;
}

int tide_graph_def_num_nodes(const tide_graph_def *d) { return d ? d->n_nodes : 0; }

const tide_def_node *tide_graph_def_node(const tide_graph_def *d, int i) {
  return d && i >= 0 && i < d->n_nodes ? &d->nodes[i] : NULL;
}

int tide_graph_def_num_outputs(const tide_graph_def *d) { return d ? d->n_outputs : 0; }

void tide_graph_def_output(const tide_graph_def *d, int i, int32_t *out) {
  if (!d || i < 0 || i >= d->n_outputs) {
    out[0] = out[1] = -1;
    return;
  }
  out[0] = d->outputs[2 * i];
  out[1] = d->outputs[2 * i + 1];
}
