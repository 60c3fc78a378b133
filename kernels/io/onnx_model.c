/* io/onnx_model.c — an ONNX model file read: the ModelProto, its opset, the
 * initializers and graph inputs, every node mapped through the op tables into a
 * finalized tide graph (values found by name), and the model's declared specs. */
#include "onnx_internal.h"
#include "file_bytes.h"
#include "load_cap.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* protobuf's own limit on a message; larger models keep their weights as external data */
#define ONNX_MAX_FILE_BYTES ((size_t)INT32_MAX)
enum { UNSET = -2 }; /* an output header's ndim before its mapping fills it */

typedef struct io_spec {
  const char *name;
  int dt, ndim;
  int64_t dims[TIDE_MAX_DIMS];
} io_spec;

struct tide_onnx_model {
  char *path, *dir;
  int opset;
  int64_t file_bytes; /* the .onnx file's; with its external data, the load cap's base */
  tide_graph *g;
  int n_in, n_out;
  io_spec *in, *out;
  Onnx__ModelProto *mp; /* names point into it */
};

void tide_onnx_model_free(tide_onnx_model *m) {
  if (!m) return;
  tide_graph_free(m->g);
  free(m->in);
  free(m->out);
  if (m->mp) onnx__model_proto__free_unpacked(m->mp, NULL);
  free(m->path);
  free(m->dir);
  free(m);
}

static tide_status oom(void) { return TIDE_FAIL(TIDE_ERR_MEMORY, "ONNX: out of memory"); }

/* Fail with the printf-style prefix, ": ", and the last error (copied first). */
static tide_status fail_with_last(tide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status fail_with_last(tide_status st, const char *fmt, ...) {
  char last[900], head[600];
  snprintf(last, sizeof last, "%s", tide_last_error());
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  return TIDE_FAIL(st ? st : TIDE_ERR_VALUE, "%s: %s", head, last);
}

/* ---- values by name: an open-addressed table of tensors ------------------------------ */

typedef struct vtable {
  const char **names;
  tide_tensor *vals;
  size_t cap;
} vtable;

static size_t hash(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static size_t slot(const vtable *t, const char *name) {
  size_t i = hash(name) & (t->cap - 1);
  while (t->names[i] && strcmp(t->names[i], name)) i = (i + 1) & (t->cap - 1);
  return i;
}

static tide_tensor *vt_get(const vtable *t, const char *name) {
  size_t i = slot(t, name);
  return t->names[i] ? &t->vals[i] : NULL;
}

/* A new entry for name (a name given twice is an error: ONNX's graphs are SSA). */
static tide_status vt_put(vtable *t, const char *name, const char *what, tide_tensor **out) {
  size_t i = slot(t, name);
  if (t->names[i]) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the value '%s' is defined twice", what, name);
  t->names[i] = name;
  *out = &t->vals[i];
  return TIDE_OK;
}

static void vt_free(vtable *t) {
  for (size_t i = 0; t->names && i < t->cap; i++)
    if (t->names[i]) tide_tensor_release(&t->vals[i]);
  free(t->names);
  free(t->vals);
}

/* ---- reading --------------------------------------------------------------------------- */

static tide_status read_proto(tide_onnx_model *m) {
  unsigned char *buf = NULL;
  size_t n = 0;
  tide_status st = file_bytes_read(m->path, "ONNX", ONNX_MAX_FILE_BYTES, &buf, &n);
  if (st) return st;
  m->file_bytes = (int64_t)n;
  m->mp = onnx__model_proto__unpack(NULL, n, buf);
  free(buf);
  if (!m->mp)
    return TIDE_FAIL(TIDE_ERR_IO, "ONNX model %s is corrupt (not an ONNX ModelProto, or truncated)", m->path);
  if (!m->mp->graph) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s has no graph", m->path);
  return TIDE_OK;
}

static tide_status read_opset(tide_onnx_model *m) {
  m->opset = -1;
  for (size_t i = 0; i < m->mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->mp->opset_import[i];
    if ((!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) && o->has_version) m->opset = (int)o->version;
  }
  if (m->opset < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s imports no opset of the default domain", m->path);
  if (m->opset < TIDE_ONNX_MIN_OPSET || m->opset > TIDE_ONNX_MAX_OPSET)
    return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s uses opset %d; tide reads opsets %d to %d (onnx.version_converter "
                     "converts a model to another)", m->path, m->opset, TIDE_ONNX_MIN_OPSET, TIDE_ONNX_MAX_OPSET);
  return TIDE_OK;
}

/* A graph input's or output's declared type: a dense tensor of a dtype tide has. */
static tide_status value_spec(const tide_onnx_model *m, const Onnx__ValueInfoProto *v, const char *kind, io_spec *s) {
  s->name = v->name;
  if (!v->name || !*v->name) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s: an %s has no name", m->path, kind);
  const Onnx__TypeProto *t = v->type;
  if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type)
    return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s: %s '%s' is not a dense tensor (sequences, maps and sparse tensors "
                     "are not mapped)", m->path, kind, v->name);
  int od = t->tensor_type->has_elem_type ? t->tensor_type->elem_type : 0;
  s->dt = onnx_dtype_to_tide(od);
  if (s->dt < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "ONNX model %s: %s '%s' is %s, which tide lacks", m->path, kind, v->name, onnx_dtype_name(od));
  const Onnx__TensorShapeProto *sh = t->tensor_type->shape;
  if (!sh) {
    s->ndim = TIDE_UNKNOWN_RANK;
    return TIDE_OK;
  }
  if (sh->n_dim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "ONNX model %s: %s '%s' has rank %zu; tide takes at most %d", m->path, kind, v->name, sh->n_dim, TIDE_MAX_DIMS);
  s->ndim = (int)sh->n_dim;
  for (size_t d = 0; d < sh->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *dm = sh->dim[d];
    s->dims[d] = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0 ? dm->dim_value : -1;
  }
  return TIDE_OK;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) return true;
  return false;
}

/* Every node tide does not map (its op, domain, and a node using it), at once. */
static tide_status scan(const tide_onnx_model *m) {
  const Onnx__GraphProto *g = m->mp->graph;
  char *list = NULL;
  size_t len = 0;
  int n_missing = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    const char *op = n->op_type ? n->op_type : "";
    bool std_domain = !n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx");
    if (std_domain && onnx_op_find(op)) continue;
    char key[300];
    snprintf(key, sizeof key, "%s%s%s", std_domain ? "" : n->domain, std_domain ? "" : ".", op);
    if (!*op) snprintf(key, sizeof key, "(a node with no op_type)");
    bool seen = false; /* one line per op: does a line start with "key (node"? */
    size_t kl = strlen(key);
    for (const char *p = list; p && !seen; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
      seen = !strncmp(p, key, kl) && !strncmp(p + kl, " (node", 6);
    if (seen) continue;
    char line[700];
    int k = snprintf(line, sizeof line, "%s%s (node '%s')", list ? "\n" : "", key, n->name ? n->name : "");
    if (k < 0) continue;
    if ((size_t)k >= sizeof line) k = (int)sizeof line - 1;
    char *l2 = realloc(list, len + (size_t)k + 1);
    if (!l2) {
      free(list);
      return oom();
    }
    list = l2;
    memcpy(list + len, line, (size_t)k + 1);
    len += (size_t)k;
    n_missing++;
  }
  if (!n_missing) return TIDE_OK;
  tide_status st = TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s uses %d op%s that tide does not map:\n%s", m->path, n_missing,
                             n_missing == 1 ? "" : "s", list);
  free(list);
  return st;
}

/* Node i mapped: its inputs looked up, its op run, its named outputs entered. */
static tide_status build_node(tide_onnx_model *m, onnx_import *im, vtable *vt, const Onnx__NodeProto *n) {
  const char *op = n->op_type ? n->op_type : "";
  const onnx_op *map = onnx_op_find(op);
  if (!map) return TIDE_FAIL(TIDE_ERR_INTERNAL, "op %s is not mapped", op);
  if (n->n_input > 4096 || n->n_output > 4096) return TIDE_FAIL(TIDE_ERR_VALUE, "%zu inputs and %zu outputs", n->n_input, n->n_output);
  const tide_tensor **ins = calloc(n->n_input + 1, sizeof *ins);
  tide_tensor *outs = calloc(n->n_output + 1, sizeof *outs);
  tide_status st = ins && outs ? TIDE_OK : oom();
  for (size_t k = 0; !st && k < n->n_input; k++) {
    if (!*n->input[k]) continue; /* an optional input left out */
    ins[k] = vt_get(vt, n->input[k]);
    if (!ins[k]) st = TIDE_FAIL(TIDE_ERR_VALUE, "its input '%s' is made by no earlier node, initializer or graph input", n->input[k]);
  }
  /* n_output + 1 slots, all watched: a mapping fills out[0] even for a node that declares no outputs */
  for (size_t k = 0; outs && k <= n->n_output; k++) outs[k].ndim = UNSET;
  if (!st) st = map->fn(im, n, (int)n->n_input, ins, (int)n->n_output, outs);
  for (size_t k = 0; !st && k < n->n_output; k++) {
    if (outs[k].ndim == UNSET) {
      if (*n->output[k]) st = TIDE_FAIL(TIDE_ERR_VALUE, "its output %zu ('%s') is not mapped", k, n->output[k]);
      continue;
    }
    if (!*n->output[k]) continue;
    tide_tensor *slot_t;
    st = vt_put(vt, n->output[k], "the graph", &slot_t);
    if (!st) st = tide_tensor_share(slot_t, &outs[k]); /* shared, not copied: a small tensor's data is in its header */
  }
  for (size_t k = 0; outs && k <= n->n_output; k++)
    if (outs[k].ndim != UNSET) tide_tensor_release(&outs[k]);
  free(ins);
  free(outs);
  if (st) {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    return TIDE_FAIL(st, "ONNX model %s: node '%s' (%s): %s", m->path, n->name ? n->name : "", op, msg);
  }
  return TIDE_OK;
}

static tide_status build(tide_onnx_model *m) {
  const Onnx__GraphProto *gp = m->mp->graph;
  size_t want = gp->n_initializer + gp->n_input + 1;
  for (size_t i = 0; i < gp->n_node; i++) want += gp->node[i]->n_output;
  vtable vt = {0};
  for (vt.cap = 16; vt.cap < 2 * want; vt.cap *= 2) {}
  vt.names = calloc(vt.cap, sizeof *vt.names);
  vt.vals = calloc(vt.cap, sizeof *vt.vals);
  if (!vt.names || !vt.vals) {
    vt_free(&vt);
    return oom();
  }
  onnx_import im = {.path = m->path, .dir = m->dir, .opset = m->opset};
  tide_status st = TIDE_OK;
  int64_t model_bytes = m->file_bytes; /* the file and the external data it reads */
  /* initializers: eager tensors, so what is computed from them is known at load time */
  for (size_t i = 0; !st && i < gp->n_initializer; i++) {
    const Onnx__TensorProto *p = gp->initializer[i];
    char what[400];
    snprintf(what, sizeof what, "ONNX model %s: initializer '%s'", m->path, p->name ? p->name : "");
    if (!p->name || !*p->name) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s has no name", what);
      break;
    }
    tide_tensor *t;
    st = vt_put(&vt, p->name, what, &t);
    if (!st) st = onnx_tensor_from_proto(p, m->dir, what, t);
    if (!st && p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
      model_bytes += tide_tensor_storage_bytes(t);
  }
  /* what the nodes compute from here (folded constants, the graph's passes) is capped */
  load_cap cap = {0};
  if (!st) st = load_cap_begin(&cap, model_bytes);
  /* inputs: the graph's inputs that no initializer gives */
  m->in = calloc(gp->n_input + 1, sizeof *m->in);
  m->out = calloc(gp->n_output + 1, sizeof *m->out);
  if (!st && (!m->in || !m->out)) st = oom();
  if (!st && !(m->g = tide_graph_new("onnx"))) st = tide_last_status();
  if (!st) st = tide_graph_begin(m->g);
  bool begun = !st;
  im.g = m->g;
  for (size_t i = 0; !st && i < gp->n_input; i++) {
    io_spec s;
    st = value_spec(m, gp->input[i], "input", &s);
    if (st || is_initializer(gp, s.name)) continue;
    tide_tensor *t;
    st = vt_put(&vt, s.name, "the graph's inputs", &t);
    if (!st) st = tide_graph_input(m->g, s.dt, s.ndim, s.dims, t);
    if (!st) m->in[m->n_in++] = s;
  }
  for (size_t i = 0; !st && i < gp->n_node; i++) st = build_node(m, &im, &vt, gp->node[i]);
  const tide_tensor **res = calloc(gp->n_output + 1, sizeof *res);
  if (!st && !res) st = oom();
  for (size_t i = 0; !st && i < gp->n_output; i++) {
    io_spec s;
    st = value_spec(m, gp->output[i], "output", &s);
    if (!st && !(res[i] = vt_get(&vt, s.name)))
      st = TIDE_FAIL(TIDE_ERR_VALUE, "ONNX model %s: output '%s' is made by no node", m->path, s.name);
    if (!st) m->out[m->n_out++] = s;
  }
  if (!st) st = tide_graph_set_outputs(m->g, (int)gp->n_output, res);
  if (!st) st = tide_graph_end(m->g);
  else if (begun) tide_graph_abandon(m->g);
  if (!st) st = tide_graph_finalize(m->g, TIDE_PASS_ALL);
  load_cap_end(&cap);
  st = load_cap_explain(&cap, st);
  if (st && !strstr(tide_last_error(), m->path)) st = fail_with_last(st, "ONNX model %s", m->path);
  free(res);
  vt_free(&vt);
  return st;
}

tide_status tide_onnx_model_open(const char *path, tide_onnx_model **out) {
  if (!out) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX: no place for the result");
  *out = NULL;
  if (!path || !*path) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX: no file given");
  if (strlen(path) > 4000) return TIDE_FAIL(TIDE_ERR_VALUE, "ONNX: file name too long");
  tide_onnx_model *m = calloc(1, sizeof *m);
  if (!m || !(m->path = strdup(path)) || !(m->dir = strdup(path))) {
    tide_onnx_model_free(m);
    return oom();
  }
  char *slash = strrchr(m->dir, '/');
  if (slash) *slash = '\0';
  else strcpy(m->dir, ".");
  if (slash == m->dir) strcpy(m->dir, "/");
  tide_status st = read_proto(m);
  if (!st) st = read_opset(m);
  if (!st) st = scan(m);
  if (!st) st = build(m);
  if (st) {
    tide_onnx_model_free(m);
    return st;
  }
  *out = m;
  return TIDE_OK;
}

/* ---- what it holds ----------------------------------------------------------------------- */

tide_graph *tide_onnx_model_graph(tide_onnx_model *m) { return m ? m->g : NULL; }
int tide_onnx_model_opset(const tide_onnx_model *m) { return m ? m->opset : -1; }
int tide_onnx_model_num_inputs(const tide_onnx_model *m) { return m ? m->n_in : 0; }
int tide_onnx_model_num_outputs(const tide_onnx_model *m) { return m ? m->n_out : 0; }
const char *tide_onnx_model_input_name(const tide_onnx_model *m, int i) {
  return m && i >= 0 && i < m->n_in ? m->in[i].name : NULL;
}
const char *tide_onnx_model_output_name(const tide_onnx_model *m, int i) {
  return m && i >= 0 && i < m->n_out ? m->out[i].name : NULL;
}

static int spec_of(const io_spec *s, int *ndim, int64_t *dims) {
  if (ndim) *ndim = s->ndim;
  for (int d = 0; dims && d < s->ndim; d++) dims[d] = s->dims[d];
  return s->dt;
}
int tide_onnx_model_input_spec(const tide_onnx_model *m, int i, int *ndim, int64_t *dims) {
  return m && i >= 0 && i < m->n_in ? spec_of(&m->in[i], ndim, dims) : -1;
}
int tide_onnx_model_output_spec(const tide_onnx_model *m, int i, int *ndim, int64_t *dims) {
  return m && i >= 0 && i < m->n_out ? spec_of(&m->out[i], ndim, dims) : -1;
}
