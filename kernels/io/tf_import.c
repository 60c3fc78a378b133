/* io/tf_import.c — walking a TF graph or library function from the values it
 * must give: references resolved, nodes built in dependency order through the
 * op table (tf_ops.c), function calls inlined; or scanned for unmapped ops. */
#include "tf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How deep library functions may call one another (TF's own models nest a few). */
enum { MAX_CALL_DEPTH = 64 };

void tf_val_release(tf_val *v) {
  if (v->set && v->var < 0) tide_tensor_release(&v->t);
  memset(v, 0, sizeof *v);
  v->var = -1;
}

tide_status tf_val_copy(tf_val *dst, const tf_val *src) {
  tf_val_release(dst);
  dst->var = src->var;
  if (src->var < 0) {
    tide_status st = tide_tensor_share(&dst->t, &src->t);
    if (st) return st;
  }
  dst->set = true;
  return TIDE_OK;
}

const Tensorflow__AttrValue *tf_attr(const Tensorflow__NodeDef *node, const char *key) {
  for (size_t i = 0; i < node->n_attr; i++)
    if (node->attr[i]->key && !strcmp(node->attr[i]->key, key)) return node->attr[i]->value;
  return NULL;
}

static int cmp_fn(const void *a, const void *b) {
  const Tensorflow__FunctionDef *x = *(Tensorflow__FunctionDef *const *)a, *y = *(Tensorflow__FunctionDef *const *)b;
  return strcmp(x->signature->name, y->signature->name);
}

const Tensorflow__FunctionDef *tf_library_find(const tf_library *lib, const char *name) {
  size_t lo = 0, hi = lib->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(lib->sorted[mid]->signature->name, name);
    if (c == 0) return lib->sorted[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* Sort lib's functions by name (each must have a signature with a name). */
tide_status tf_library_index(tf_library *lib) {
  size_t n = lib->lib ? lib->lib->n_function : 0;
  lib->sorted = calloc(n + 1, sizeof *lib->sorted);
  if (!lib->sorted) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (size_t i = 0; i < n; i++) {
    Tensorflow__FunctionDef *f = lib->lib->function[i];
    if (!f->signature || !f->signature->name || !*f->signature->name)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: function %zu of the library has no name", i);
    lib->sorted[i] = f;
  }
  lib->n = n;
  qsort(lib->sorted, n, sizeof *lib->sorted, cmp_fn);
  for (size_t i = 1; i < n; i++)
    if (!strcmp(lib->sorted[i]->signature->name, lib->sorted[i - 1]->signature->name))
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: the library has two functions named '%s'",
                       lib->sorted[i]->signature->name);
  return TIDE_OK;
}

/* ---- a body: a graph's or a function's nodes ----------------------------------- */

typedef struct body {
  const char *where;                  /* "function 'f'" or "the graph" */
  Tensorflow__NodeDef **nodes;
  size_t n;
  int *by_name;                       /* node indices sorted by name */
  tf_val **vals;                      /* node i's outputs once built */
  int *n_vals;
  unsigned char *state;               /* 0 not reached, 1 on the walk's stack, 2 built */
  const Tensorflow__FunctionDef *fn;  /* a function's body: its args */
  tf_val *const *args;
  int n_feeds;                        /* the graph's body: its fed placeholders and variables */
  const char *const *feeds;
  tf_val *const *feed_vals;
  int (*var_of)(void *ctx, const char *node);
  void *var_ctx;
} body;

static int cmp_node(const void *a, const void *b, void *ctx) {
  Tensorflow__NodeDef **nodes = ctx;
  return strcmp(nodes[*(const int *)a]->name, nodes[*(const int *)b]->name);
}

static int find_node(const body *b, const char *name, size_t len) {
  size_t lo = 0, hi = b->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const char *s = b->nodes[b->by_name[mid]]->name;
    int c = strncmp(s, name, len);
    if (c == 0 && s[len] != '\0') c = 1;
    if (c == 0) return b->by_name[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

static void body_free(body *b) {
  for (size_t i = 0; b->vals && i < b->n; i++) {
    for (int k = 0; b->vals[i] && k < b->n_vals[i]; k++) tf_val_release(&b->vals[i][k]);
    free(b->vals[i]);
  }
  free(b->vals);
  free(b->n_vals);
  free(b->state);
  free(b->by_name);
}

static tide_status body_init(body *b, Tensorflow__NodeDef **nodes, size_t n, const char *where) {
  memset(b, 0, sizeof *b);
  b->where = where;
  b->nodes = nodes;
  b->n = n;
  b->by_name = malloc((n + 1) * sizeof *b->by_name);
  b->vals = calloc(n + 1, sizeof *b->vals);
  b->n_vals = calloc(n + 1, sizeof *b->n_vals);
  b->state = calloc(n + 1, 1);
  if (!b->by_name || !b->vals || !b->n_vals || !b->state) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (size_t i = 0; i < n; i++) {
    if (!nodes[i]->name || !nodes[i]->op)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: node %zu of %s has no name or op", i, where);
    b->by_name[i] = (int)i;
  }
  qsort_r(b->by_name, n, sizeof *b->by_name, cmp_node, nodes);
  for (size_t i = 1; i < n; i++)
    if (!strcmp(nodes[b->by_name[i]]->name, nodes[b->by_name[i - 1]]->name))
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has two nodes named '%s'", where, nodes[b->by_name[i]]->name);
  return TIDE_OK;
}

/* A reference resolved: node `node` output `index`, or argument `arg`. */
typedef struct ref {
  int node, index, arg;
  const char *arg_name; /* "node:arg:k": the output arg's name (not NUL-ended: arg_len) */
  size_t arg_len;
} ref;

/* Parse `s` ("node", "node:k", "node:arg:k", "arg" in functions); -1 node when it names
 * no node (an error set). */
static tide_status parse_ref(const body *b, const char *s, ref *r) {
  memset(r, 0, sizeof *r);
  r->node = r->arg = -1;
  const char *c1 = strchr(s, ':');
  size_t len = c1 ? (size_t)(c1 - s) : strlen(s);
  if (!c1 && b->fn) { /* a function argument */
    const Tensorflow__OpDef *sig = b->fn->signature;
    for (size_t i = 0; i < sig->n_input_arg; i++)
      if (!strcmp(sig->input_arg[i]->name, s)) {
        r->arg = (int)i;
        return TIDE_OK;
      }
  }
  r->node = find_node(b, s, len);
  if (r->node < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s refers to '%s', which it does not hold", b->where, s);
  if (!c1) return TIDE_OK;
  const char *c2 = strchr(c1 + 1, ':');
  const char *num = c2 ? c2 + 1 : c1 + 1;
  if (c2) {
    r->arg_name = c1 + 1;
    r->arg_len = (size_t)(c2 - c1 - 1);
  }
  char *end;
  long k = strtol(num, &end, 10);
  if (*num == '\0' || *end != '\0' || k < 0 || k > 100000)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s has a malformed reference '%s'", b->where, s);
  r->index = (int)k;
  return TIDE_OK;
}

/* The output index that r names among node's outputs ("node:arg:k": arg's place + k). */
static tide_status output_index(tf_import *im, const body *b, ref *r) {
  (void)im;
  if (!r->arg_name) return TIDE_OK;
  const Tensorflow__NodeDef *n = b->nodes[r->node];
  const tf_op *op = tf_op_find(n->op);
  const char *names = NULL;
  int base = -1;
  if (op) { /* a call's outputs are one list arg, "output" */
    names = op->outs;
    if (!names) base = 0; /* one output arg */
    for (int pos = 0; names && *names; pos++) {
      size_t w = strcspn(names, " ");
      if (w == r->arg_len && !strncmp(names, r->arg_name, w)) {
        base = pos;
        break;
      }
      names += w + (names[w] == ' ');
    }
  }
  if (base < 0)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s refers to output '%.*s' of node '%s' (%s), which it lacks", b->where,
                     (int)r->arg_len, r->arg_name, n->name, n->op);
  r->index += base;
  return TIDE_OK;
}

tide_status tf_import_note_missing(tf_import *im, const char *op, const char *node, const char *where) {
  /* one line per op: the first node that uses it */
  if (im->missing) {
    for (const char *p = im->missing; (p = strstr(p, op)); p++)
      if ((p == im->missing || p[-1] == '\n') && !strncmp(p + strlen(op), " (node", 6)) return TIDE_OK;
  }
  char line[512];
  int n = snprintf(line, sizeof line, "%s%s (node '%s' in %s)", im->missing ? "\n" : "", op, node, where);
  if (n < 0) return TIDE_OK;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  char *m = realloc(im->missing, im->missing_len + (size_t)n + 1);
  if (!m) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  memcpy(m + im->missing_len, line, (size_t)n + 1);
  im->missing = m;
  im->missing_len += (size_t)n;
  im->n_missing++;
  return TIDE_OK;
}

static tide_status node_fail(tf_import *im, const body *b, const Tensorflow__NodeDef *n) {
  char msg[700];
  snprintf(msg, sizeof msg, "%s", tide_last_error());
  tide_status st = tide_last_status() ? tide_last_status() : TIDE_ERR_VALUE;
  if (strncmp(msg, "TF SavedModel", 13) == 0) return TIDE_FAIL(st, "%s", msg); /* named already */
  return TIDE_FAIL(st, "TF SavedModel %s: node '%s' (%s) in %s: %s", im->dir, n->name, n->op, b->where, msg);
}

static tide_status scan_function(tf_import *im, const Tensorflow__FunctionDef *f);
static const tf_val *value_of(const body *b, const ref *r);

/* Build node i of b (its inputs are built): through its op's mapping, an inlined call, a
 * feed, a variable, or (scanning) check that tide maps it. */
static tide_status build_node(tf_import *im, body *b, int i) {
  const Tensorflow__NodeDef *n = b->nodes[i];
  const tf_op *op = tf_op_find(n->op);
  bool placeholder = !strcmp(n->op, "Placeholder"), varhandle = !strcmp(n->op, "VarHandleOp");
  if (im->scan) {
    if (varhandle && b->var_of) b->var_of(b->var_ctx, n->name); /* marks the variable used */
    if (!op && !placeholder && !varhandle) return tf_import_note_missing(im, n->op, n->name, b->where);
    /* the functions a control-flow node runs (If's branches, While's cond and body) */
    for (size_t k = 0; op && op->fn && k < n->n_attr; k++) {
      const Tensorflow__AttrValue *a = n->attr[k]->value;
      if (!a || a->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !a->func) continue;
      const Tensorflow__FunctionDef *fd = tf_library_find(im->lib, a->func->name);
      if (!fd)
        return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: node '%s' (%s) in %s runs function '%s', which the "
                         "library lacks", im->dir, n->name, n->op, b->where, a->func->name);
      tide_status st = scan_function(im, fd);
      if (st) return st;
    }
    if (op && !op->fn) {
      const Tensorflow__AttrValue *f = tf_attr(n, "f");
      const Tensorflow__FunctionDef *fd = f && f->func ? tf_library_find(im->lib, f->func->name) : NULL;
      if (!fd)
        return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: node '%s' (%s) in %s calls function '%s', which the "
                         "library lacks", im->dir, n->name, n->op, b->where, f && f->func ? f->func->name : "?");
      return scan_function(im, fd);
    }
    return TIDE_OK;
  }
  /* its data inputs */
  size_t n_in = 0;
  for (size_t k = 0; k < n->n_input; k++) n_in += n->input[k][0] != '^';
  tf_val **ins = calloc(n_in + 1, sizeof *ins);
  if (!ins) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  tide_status st = TIDE_OK;
  size_t j = 0;
  for (size_t k = 0; !st && k < n->n_input; k++) {
    if (n->input[k][0] == '^') continue;
    ref r;
    st = parse_ref(b, n->input[k], &r);
    if (!st && r.node >= 0) st = output_index(im, b, &r);
    if (!st) {
      ins[j] = (tf_val *)value_of(b, &r);
      if (!ins[j]) st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: %s refers to '%s', which has no such output",
                                  b->where, n->input[k]);
      j++;
    }
  }
  int n_out = 0;
  if (!st) {
    if (placeholder || varhandle) n_out = 1;
    else if (!op) st = TIDE_FAIL(TIDE_ERR_VALUE, "TF op %s is not mapped onto tide's ops", n->op);
    else if (!op->fn) {
      const Tensorflow__AttrValue *f = tf_attr(n, "f");
      const Tensorflow__FunctionDef *fd = f && f->func ? tf_library_find(im->lib, f->func->name) : NULL;
      if (!fd) st = TIDE_FAIL(TIDE_ERR_VALUE, "it calls function '%s', which the library lacks",
                              f && f->func ? f->func->name : "?");
      else n_out = (int)fd->signature->n_output_arg;
    } else n_out = tf_op_num_outputs(op, n);
  }
  tf_val *out = !st ? calloc((size_t)n_out + 1, sizeof *out) : NULL;
  if (!st && !out) st = TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  for (int k = 0; out && k <= n_out; k++) out[k].var = -1;
  if (!st) {
    b->vals[i] = out;
    b->n_vals[i] = n_out;
    if (placeholder) {
      int f = -1;
      for (int k = 0; k < b->n_feeds; k++)
        if (!strcmp(b->feeds[k], n->name)) f = k;
      if (f < 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "a placeholder that the signature does not feed");
      else st = tf_val_copy(&out[0], b->feed_vals[f]);
    } else if (varhandle) {
      int v = b->var_of ? b->var_of(b->var_ctx, n->name) : -1;
      if (v < 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "a variable that the SavedModel's restore function does not restore");
      out[0].var = v;
      out[0].set = true;
    } else if (!op->fn) {
      const Tensorflow__AttrValue *f = tf_attr(n, "f");
      st = tf_import_function(im, tf_library_find(im->lib, f->func->name), (int)n_in, ins, n_out, out);
    } else {
      st = op->fn(im, n, (int)n_in, ins, n_out, out);
      for (int k = 0; !st && k < n_out; k++)
        if (!out[k].set) st = TIDE_FAIL(TIDE_ERR_INTERNAL, "output %d was not made", k);
    }
  }
  free(ins);
  return st ? node_fail(im, b, n) : TIDE_OK;
}

static const tf_val *value_of(const body *b, const ref *r) {
  if (r->arg >= 0) return b->args[r->arg];
  if (r->index >= b->n_vals[r->node]) return NULL;
  return &b->vals[r->node][r->index];
}

/* Build what `start` needs, then it: an explicit stack, so long chains cost no C stack. */
static tide_status need(tf_import *im, body *b, int start) {
  if (b->state[start] == 2) return TIDE_OK;
  typedef struct { int node; size_t next; } frame;
  size_t cap = 64, top = 0;
  frame *stack = malloc(cap * sizeof *stack);
  if (!stack) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
  stack[top++] = (frame){start, 0};
  b->state[start] = 1;
  tide_status st = TIDE_OK;
  while (!st && top > 0) {
    frame *f = &stack[top - 1];
    const Tensorflow__NodeDef *n = b->nodes[f->node];
    int dep = -1;
    while (!st && f->next < n->n_input) {
      const char *s = n->input[f->next++];
      ref r;
      st = parse_ref(b, s[0] == '^' ? s + 1 : s, &r);
      if (st || r.node < 0 || b->state[r.node] == 2) continue;
      if (s[0] == '^') continue; /* control edges order side effects tide does not import */
      if (b->state[r.node] == 1) {
        st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: %s has a cycle through node '%s'", im->dir, b->where,
                       b->nodes[r.node]->name);
        break;
      }
      dep = r.node;
      break;
    }
    if (st) break;
    if (dep >= 0) {
      if (top == cap) {
        frame *s2 = realloc(stack, 2 * cap * sizeof *stack);
        if (!s2) {
          st = TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
          break;
        }
        stack = s2;
        cap *= 2;
      }
      stack[top++] = (frame){dep, 0};
      b->state[dep] = 1;
      continue;
    }
    st = build_node(im, b, f->node);
    b->state[f->node] = 2;
    top--;
  }
  free(stack);
  return st;
}

/* ---- functions and graphs ----------------------------------------------------- */

static tide_status scan_function(tf_import *im, const Tensorflow__FunctionDef *f) {
  for (size_t i = 0; i < im->n_seen; i++)
    if (im->seen[i] == f) return TIDE_OK;
  if (im->n_seen == im->cap_seen) {
    size_t cap = im->cap_seen ? 2 * im->cap_seen : 16;
    const Tensorflow__FunctionDef **s = realloc(im->seen, cap * sizeof *s);
    if (!s) return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory");
    im->seen = s;
    im->cap_seen = cap;
  }
  im->seen[im->n_seen++] = f;
  return tf_import_function(im, f, 0, NULL, 0, NULL);
}

tide_status tf_import_function(tf_import *im, const Tensorflow__FunctionDef *f, int n_args, tf_val *const *args,
                               int n_outs, tf_val *outs) {
  const Tensorflow__OpDef *sig = f->signature;
  if (!im->scan && ((size_t)n_args != sig->n_input_arg || (size_t)n_outs != sig->n_output_arg))
    return TIDE_FAIL(TIDE_ERR_VALUE, "function '%s' takes %zu inputs and gives %zu outputs; the call has %d and %d",
                     sig->name, sig->n_input_arg, sig->n_output_arg, n_args, n_outs);
  if (im->depth >= MAX_CALL_DEPTH)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: function '%s' calls functions %d deep (recursion?)", im->dir,
                     sig->name, MAX_CALL_DEPTH);
  char where[300];
  snprintf(where, sizeof where, "function '%s'", sig->name);
  body b;
  tide_status st = body_init(&b, f->node_def, f->n_node_def, where);
  b.fn = f;
  b.args = args;
  im->depth++;
  for (size_t o = 0; !st && o < sig->n_output_arg; o++) {
    const char *want = sig->output_arg[o]->name, *src = NULL;
    for (size_t k = 0; k < f->n_ret; k++)
      if (f->ret[k]->key && !strcmp(f->ret[k]->key, want)) src = f->ret[k]->value;
    if (!src) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: function '%s' does not say what its output '%s' is", im->dir,
                     sig->name, want);
      break;
    }
    ref r;
    st = parse_ref(&b, src, &r);
    if (!st && r.node >= 0) st = output_index(im, &b, &r);
    if (!st && r.node >= 0) st = need(im, &b, r.node);
    if (!st && !im->scan) {
      const tf_val *v = value_of(&b, &r);
      st = v ? tf_val_copy(&outs[o], v)
             : TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: output '%s' of function '%s' names a missing output", im->dir,
                         want, sig->name);
    }
  }
  im->depth--;
  body_free(&b);
  return st;
}

tide_status tf_import_graph(tf_import *im, const Tensorflow__GraphDef *gd, int n_feeds, const char *const *feeds,
                            tf_val *const *feed_vals, int (*var_of)(void *ctx, const char *node), void *var_ctx,
                            int n_refs, const char *const *refs, tf_val *outs) {
  body b;
  tide_status st = body_init(&b, gd->node, gd->n_node, "the graph");
  b.n_feeds = n_feeds;
  b.feeds = feeds;
  b.feed_vals = feed_vals;
  b.var_of = var_of;
  b.var_ctx = var_ctx;
  for (int k = 0; !st && k < n_refs; k++) {
    ref r;
    st = parse_ref(&b, refs[k], &r);
    if (!st) st = need(im, &b, r.node);
    if (!st && !im->scan) {
      const tf_val *v = value_of(&b, &r);
      st = v ? tf_val_copy(&outs[k], v)
             : TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: '%s' names a missing output", im->dir, refs[k]);
    }
  }
  body_free(&b);
  return st;
}
