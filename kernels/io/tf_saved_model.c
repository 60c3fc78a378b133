/* io/tf_saved_model.c — a TF SavedModel folder read: saved_model.pb's MetaGraphDef,
 * its variables (keys from the restore function, values from the tensor bundle), and
 * each signature imported into a finalized tide graph (tf_import.c, tf_ops.c). */
#include "tf_internal.h"
#include "load_cap.h"
#include "../core/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* protobuf's own limit on a message, and so on saved_model.pb */
#define TF_MAX_PB_BYTES ((int64_t)INT32_MAX)

typedef struct tf_sig {
  char *name;
  tide_graph *g;
  tide_graph_def *def;                        /* g as data, made on first request (tide_tf_saved_model_def) */
  int n_in, n_out;
  const char **in_names, **out_names;        /* TF's keys, sorted */
  const Tensorflow__TensorInfo **in_info, **out_info;
} tf_sig;

struct tide_tf_saved_model {
  char *dir;
  uint8_t *pb;
  int64_t model_bytes; /* saved_model.pb's and the variables' read: the load cap's base */
  Tensorflow__SavedModel *sm;
  const Tensorflow__MetaGraphDef *mg;
  tf_library lib;
  int n_vars;
  char **var_nodes;   /* the VarHandleOp's node name */
  char **var_keys;    /* its checkpoint key */
  tide_tensor *vars;  /* allocated once: graphs hold these addresses */
  tide_tensor **var_ptrs;
  bool *var_used;     /* reached by a signature (the scan marks them): only these are read */
  int n_sigs;
  tf_sig *sigs;
  void (*free_def)(tide_graph_def *); /* set by tf_saved_model_def.c when it makes a definition */
};

void tide_tf_saved_model_free(tide_tf_saved_model *m) {
  if (!m) return;
  for (int k = 0; m->sigs && k < m->n_sigs; k++) {
    tide_graph_free(m->sigs[k].g);
    if (m->sigs[k].def && m->free_def) m->free_def(m->sigs[k].def);
    free(m->sigs[k].name);
    free(m->sigs[k].in_names);
    free(m->sigs[k].out_names);
    free(m->sigs[k].in_info);
    free(m->sigs[k].out_info);
  }
  free(m->sigs);
  for (int k = 0; k < m->n_vars; k++) {
    free(m->var_nodes[k]);
    free(m->var_keys[k]);
    tide_tensor_release(&m->vars[k]);
  }
  free(m->var_nodes);
  free(m->var_keys);
  free(m->vars);
  free(m->var_ptrs);
  free(m->var_used);
  free(m->lib.sorted);
  if (m->lib.lib) tensorflow__function_def_library__free_unpacked(m->lib.lib, NULL);
  if (m->sm) tensorflow__saved_model__free_unpacked(m->sm, NULL);
  free(m->pb);
  free(m->dir);
  free(m);
}

static tide_status oom(void) { return TIDE_FAIL(TIDE_ERR_MEMORY, "TF SavedModel: out of memory"); }

/* Fail with the printf-style prefix, then ": " and the last error (copied first:
 * the message is formatted into the buffer that holds it). */
static tide_status tf_fail_with_last(tide_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status tf_fail_with_last(tide_status st, const char *fmt, ...) {
  char last[800], head[600];
  snprintf(last, sizeof last, "%s", tide_last_error());
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  return TIDE_FAIL(st ? st : TIDE_ERR_VALUE, "%s: %s", head, last);
}

/* ---- saved_model.pb ------------------------------------------------------------- */

static tide_status read_pb(tide_tf_saved_model *m) {
  char path[4200];
  snprintf(path, sizeof path, "%s/saved_model.pb", m->dir);
  int fd = tide_file_open(path, O_RDONLY, 0);
  if (fd < 0) {
    char alt[4200];
    snprintf(alt, sizeof alt, "%s/saved_model.pbtxt", m->dir);
    struct stat sb;
    if (stat(alt, &sb) == 0)
      return TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: it holds saved_model.pbtxt (text); tide reads the binary "
                       "saved_model.pb", m->dir);
    return TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: cannot read %s: %s", m->dir, path, tide_file_why());
  }
  struct stat sb;
  tide_status st = TIDE_OK;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) st = TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: %s is not a regular file", m->dir, path);
  else if ((int64_t)sb.st_size > TF_MAX_PB_BYTES)
    st = TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: saved_model.pb has %lld bytes, past protobuf's 2 GiB", m->dir,
                   (long long)sb.st_size);
  size_t n = st ? 0 : (size_t)sb.st_size;
  if (!st && !(m->pb = malloc(n ? n : 1))) st = oom();
  for (size_t got = 0; !st && got < n;) {
    ssize_t k = pread(fd, m->pb + got, n - got, (off_t)got);
    if (k <= 0) st = TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: cannot read saved_model.pb: %s", m->dir,
                               k < 0 ? strerror(errno) : "it shrank");
    else got += (size_t)k;
  }
  close(fd);
  if (st) return st;
  m->model_bytes = (int64_t)n;
  m->sm = tensorflow__saved_model__unpack(NULL, n, m->pb);
  if (!m->sm)
    return TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: saved_model.pb is corrupt (not a SavedModel protobuf, or "
                     "truncated)", m->dir);
  return TIDE_OK;
}

/* The MetaGraphDef tagged "serve", else the only one. */
static tide_status pick_meta_graph(tide_tf_saved_model *m) {
  const Tensorflow__SavedModel *sm = m->sm;
  for (size_t i = 0; !m->mg && i < sm->n_meta_graphs; i++) {
    const Tensorflow__MetaGraphDef__MetaInfoDef *info = sm->meta_graphs[i]->meta_info_def;
    for (size_t t = 0; info && t < info->n_tags; t++)
      if (!strcmp(info->tags[t], "serve")) m->mg = sm->meta_graphs[i];
  }
  if (!m->mg && sm->n_meta_graphs == 1) m->mg = sm->meta_graphs[0];
  if (!m->mg)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: %zu meta graphs and none tagged \"serve\"", m->dir,
                     sm->n_meta_graphs);
  if (!m->mg->graph_def) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: its meta graph has no graph", m->dir);
  const ProtobufCBinaryData *lib = &m->mg->graph_def->library;
  if (lib->len > 0) {
    m->lib.lib = tensorflow__function_def_library__unpack(NULL, lib->len, lib->data);
    if (!m->lib.lib) return TIDE_FAIL(TIDE_ERR_IO, "TF SavedModel %s: its function library is corrupt", m->dir);
  }
  tide_status st = tf_library_index(&m->lib);
  if (st) return tf_fail_with_last(st, "TF SavedModel %s", m->dir);
  return TIDE_OK;
}

/* ---- variables: what the restore function assigns, read from the bundle -------------- */

static const Tensorflow__NodeDef *graph_node(const Tensorflow__GraphDef *g, const char *name, size_t len) {
  for (size_t i = 0; i < g->n_node; i++)
    if (strlen(g->node[i]->name) == len && !strncmp(g->node[i]->name, name, len)) return g->node[i];
  return NULL;
}

static const Tensorflow__NodeDef *fn_node(const Tensorflow__FunctionDef *f, const char *ref) {
  size_t len = strcspn(ref, ":");
  for (size_t i = 0; i < f->n_node_def; i++)
    if (strlen(f->node_def[i]->name) == len && !strncmp(f->node_def[i]->name, ref, len)) return f->node_def[i];
  return NULL;
}

/* String i of the Const node `ref` in f, or NULL. */
static const ProtobufCBinaryData *const_string(const Tensorflow__FunctionDef *f, const char *ref, long i) {
  const Tensorflow__NodeDef *c = fn_node(f, ref);
  const Tensorflow__AttrValue *v = c && !strcmp(c->op, "Const") ? tf_attr(c, "value") : NULL;
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || i < 0 || (size_t)i >= v->tensor->n_string_val)
    return NULL;
  return &v->tensor->string_val[i];
}

static tide_status add_variable(tide_tf_saved_model *m, const char *node, size_t node_len, const ProtobufCBinaryData *key) {
  int k = m->n_vars;
  m->var_nodes[k] = strndup(node, node_len);
  m->var_keys[k] = strndup((const char *)key->data, key->len);
  if (!m->var_nodes[k] || !m->var_keys[k]) {
    free(m->var_nodes[k]);
    free(m->var_keys[k]);
    return oom();
  }
  m->n_vars++;
  return TIDE_OK;
}

/* Each AssignVariableOp of the restore function: which VarHandleOp of the graph it
 * assigns (through the call's inputs) and which checkpoint key (RestoreV2's tensor i). */
static tide_status map_restore(tide_tf_saved_model *m, const Tensorflow__NodeDef *call, const Tensorflow__FunctionDef *f) {
  size_t n_assign = 0;
  for (size_t i = 0; i < f->n_node_def; i++) n_assign += !strcmp(f->node_def[i]->op, "AssignVariableOp");
  m->var_nodes = calloc(n_assign + 1, sizeof *m->var_nodes);
  m->var_keys = calloc(n_assign + 1, sizeof *m->var_keys);
  m->vars = calloc(n_assign + 1, sizeof *m->vars);
  m->var_ptrs = calloc(n_assign + 1, sizeof *m->var_ptrs);
  m->var_used = calloc(n_assign + 1, sizeof *m->var_used);
  if (!m->var_nodes || !m->var_keys || !m->vars || !m->var_ptrs || !m->var_used) return oom();
  const Tensorflow__OpDef *sig = f->signature;
  for (size_t i = 0; i < f->n_node_def; i++) {
    const Tensorflow__NodeDef *a = f->node_def[i];
    if (strcmp(a->op, "AssignVariableOp") || a->n_input < 2) continue;
    long arg = -1;
    for (size_t j = 0; j < sig->n_input_arg; j++)
      if (!strcmp(sig->input_arg[j]->name, a->input[0])) arg = (long)j;
    /* the value: Identity nodes back to RestoreV2:tensors:i */
    const char *ref = a->input[1];
    const Tensorflow__NodeDef *src = fn_node(f, ref);
    for (int hops = 0; src && !strcmp(src->op, "Identity") && src->n_input > 0 && hops < 16; hops++) {
      ref = src->input[0];
      src = fn_node(f, ref);
    }
    const char *colon = strrchr(ref, ':');
    long t = colon ? strtol(colon + 1, NULL, 10) : -1;
    const ProtobufCBinaryData *key = src && !strcmp(src->op, "RestoreV2") && src->n_input >= 3
                                          ? const_string(f, src->input[1], t) : NULL;
    const ProtobufCBinaryData *slice = key ? const_string(f, src->input[2], t) : NULL;
    if (arg < 0 || (size_t)arg >= call->n_input || !key)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: the restore function '%s' assigns a variable in a way tide "
                       "does not follow (node '%s')", m->dir, sig->name, a->name);
    if (slice && slice->len > 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: variable '%.*s' is restored from a slice of a saved "
                       "tensor, which tide does not follow", m->dir, (int)key->len, (const char *)key->data);
    const char *node = call->input[arg];
    bool again = false; /* Keras restores each variable under two keys: the first is kept */
    for (int k = 0; k < m->n_vars; k++)
      again |= strlen(m->var_nodes[k]) == strcspn(node, ":") && !strncmp(m->var_nodes[k], node, strcspn(node, ":"));
    if (again) continue;
    tide_status st = add_variable(m, node, strcspn(node, ":"), key);
    if (st) return st;
  }
  return TIDE_OK;
}

/* Which VarHandleOp nodes the restore function restores, and from which keys. */
static tide_status map_variables(tide_tf_saved_model *m) {
  const Tensorflow__SaverDef *sd = m->mg->saver_def;
  if (!sd || !sd->restore_op_name || !*sd->restore_op_name) return TIDE_OK; /* no variables */
  const char *name = sd->restore_op_name;
  const Tensorflow__NodeDef *call = graph_node(m->mg->graph_def, name, strcspn(name, ":"));
  const Tensorflow__AttrValue *fa = call ? tf_attr(call, "f") : NULL;
  const Tensorflow__FunctionDef *f = fa && fa->func ? tf_library_find(&m->lib, fa->func->name) : NULL;
  if (!f)
    return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: its restore op '%s' is not a call of a library function (a "
                     "TF1 SavedModel? tide reads those TF2 writes)", m->dir, name);
  return map_restore(m, call, f);
}

/* The values of the variables the signatures use (others are dropped: Keras's
 * export restores a second copy of each that no signature reads). */
static tide_status read_values(tide_tf_saved_model *m) {
  int n = 0;
  for (int k = 0; k < m->n_vars; k++) {
    if (m->var_used[k]) {
      char *node = m->var_nodes[k], *key = m->var_keys[k];
      m->var_nodes[n] = node;
      m->var_keys[n] = key;
      m->var_used[n++] = true;
    } else {
      free(m->var_nodes[k]);
      free(m->var_keys[k]);
    }
  }
  m->n_vars = n;
  if (n == 0) return TIDE_OK;
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s/variables/variables", m->dir);
  tide_tensor_bundle *b = tide_tensor_bundle_open(prefix);
  if (!b) return tf_fail_with_last(tide_last_status(), "TF SavedModel %s: its variables", m->dir);
  tide_status st = TIDE_OK;
  for (int k = 0; !st && k < m->n_vars; k++) {
    int64_t i = tide_tensor_bundle_find(b, m->var_keys[k], (int64_t)strlen(m->var_keys[k]));
    if (i < 0) st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: variable '%s' is not in variables/variables", m->dir,
                              m->var_keys[k]);
    tide_tensor t = {0};
    if (!st) st = tide_tensor_bundle_read(b, i, &t);
    /* a variable's own heap storage, marked so that reads share it (as tide's own SavedModels) */
    if (!st) st = tide_tensor_init_heap(&m->vars[k], t.dt, t.ndim, t.dims);
    if (!st) st = tide_tensor_copy_into(&m->vars[k], &t);
    if (!st) st = tide_tensor_mark_variable(&m->vars[k]);
    if (!st) m->model_bytes += tide_tensor_storage_bytes(&m->vars[k]);
    tide_tensor_release(&t);
    m->var_ptrs[k] = &m->vars[k];
  }
  tide_tensor_bundle_close(b);
  return st;
}

static int var_of(void *ctx, const char *node) {
  tide_tf_saved_model *m = ctx;
  for (int k = 0; k < m->n_vars; k++)
    if (!strcmp(m->var_nodes[k], node)) {
      m->var_used[k] = true;
      return k;
    }
  return -1;
}

/* ---- signatures ------------------------------------------------------------------ */

/* By key; a missing key (a hostile file) sorts first and is refused below. */
static int cmp_entry(const void *a, const void *b) {
  const char *x = (*(Tensorflow__SignatureDef__TensorInfoEntry *const *)a)->key;
  const char *y = (*(Tensorflow__SignatureDef__TensorInfoEntry *const *)b)->key;
  if (!x || !y) return (x != NULL) - (y != NULL);
  return strcmp(x, y);
}

static tide_status sig_names(tide_tf_saved_model *m, const char *sname, Tensorflow__SignatureDef__TensorInfoEntry **e,
                             size_t n, const char ***names, const Tensorflow__TensorInfo ***info) {
  if (n > 1) qsort(e, n, sizeof *e, cmp_entry); /* e is NULL when n is 0 (found by fuzz_tf_saved_model) */
  *names = calloc(n + 1, sizeof **names);
  *info = calloc(n + 1, sizeof **info);
  if (!*names || !*info) return oom();
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__TensorInfo *t = e[i]->value;
    if (!e[i]->key || !t || !t->name || !*t->name)
      return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: '%s' of signature '%s' is a sparse or composite tensor; tide "
                       "reads dense ones", m->dir, e[i]->key ? e[i]->key : "?", sname);
    (*names)[i] = e[i]->key;
    (*info)[i] = t;
  }
  return TIDE_OK;
}

static tide_status input_spec(const Tensorflow__TensorInfo *t, int *dt, int *ndim, int64_t *dims) {
  *dt = tf_dtype_to_tide(t->dtype);
  if (*dt < 0) return TIDE_FAIL(TIDE_ERR_DTYPE, "it is %s, which tide lacks", tf_dtype_name(t->dtype));
  const Tensorflow__TensorShapeProto *s = t->tensor_shape;
  if (!s || s->unknown_rank) {
    *ndim = TIDE_UNKNOWN_RANK;
    return TIDE_OK;
  }
  if (s->n_dim > TIDE_MAX_DIMS) return TIDE_FAIL(TIDE_ERR_SHAPE, "it has rank %zu; tide takes at most %d", s->n_dim, TIDE_MAX_DIMS);
  *ndim = (int)s->n_dim;
  for (size_t d = 0; d < s->n_dim; d++) dims[d] = s->dim[d]->size < 0 ? -1 : s->dim[d]->size;
  return TIDE_OK;
}

/* Node names of a signature's tensor names ("serving_default_x:0" -> "serving_default_x"). */
static char **node_names(const Tensorflow__TensorInfo **info, int n, bool keep_index) {
  char **r = calloc((size_t)n + 1, sizeof *r);
  for (int i = 0; r && i < n; i++) {
    const char *s = info[i]->name;
    size_t len = keep_index ? strlen(s) : strcspn(s, ":");
    if (!(r[i] = strndup(s, len))) {
      for (int j = 0; j < i; j++) free(r[j]);
      free(r);
      return NULL;
    }
  }
  return r;
}

static void free_names(char **r, int n) {
  for (int i = 0; r && i < n; i++) free(r[i]);
  free(r);
}

static tide_status build_signature(tide_tf_saved_model *m, tf_sig *s) {
  tf_import im = {.dir = m->dir, .lib = &m->lib, .vars = m->var_ptrs};
  tf_val *feeds = calloc((size_t)s->n_in + 1, sizeof *feeds), *outs = calloc((size_t)s->n_out + 1, sizeof *outs);
  tf_val **feed_ptrs = calloc((size_t)s->n_in + 1, sizeof *feed_ptrs);
  const tide_tensor **res = calloc((size_t)s->n_out + 1, sizeof *res);
  char **in_nodes = node_names(s->in_info, s->n_in, false), **out_refs = node_names(s->out_info, s->n_out, true);
  tide_status st = feeds && outs && feed_ptrs && res && in_nodes && out_refs ? TIDE_OK : oom();
  for (int i = 0; feeds && i <= s->n_in; i++) feeds[i].var = -1;
  for (int i = 0; outs && i <= s->n_out; i++) outs[i].var = -1;
  if (!st && !(im.g = tide_graph_new(s->name))) st = tide_last_status();
  if (!st) st = tide_graph_begin(im.g);
  bool begun = !st;
  for (int i = 0; !st && i < s->n_in; i++) {
    int dt, ndim;
    int64_t dims[TIDE_MAX_DIMS];
    st = input_spec(s->in_info[i], &dt, &ndim, dims);
    if (st) st = tf_fail_with_last(st, "TF SavedModel %s: input '%s' of signature '%s'", m->dir, s->in_names[i], s->name);
    if (!st) st = tide_graph_input(im.g, dt, ndim, dims, &feeds[i].t);
    feeds[i].set = !st;
    feed_ptrs[i] = &feeds[i];
  }
  if (!st)
    st = tf_import_graph(&im, m->mg->graph_def, s->n_in, (const char *const *)in_nodes, feed_ptrs, var_of, m, s->n_out,
                         (const char *const *)out_refs, outs);
  for (int i = 0; !st && i < s->n_out; i++) {
    if (outs[i].var >= 0)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s: output '%s' of signature '%s' is a variable's handle", m->dir,
                     s->out_names[i], s->name);
    res[i] = &outs[i].t;
  }
  if (!st) st = tide_graph_set_outputs(im.g, s->n_out, res);
  if (!st) st = tide_graph_end(im.g);
  else if (begun) tide_graph_abandon(im.g);
  if (!st) st = tide_graph_finalize(im.g, TIDE_PASS_ALL);
  if (!st) s->g = im.g;
  else tide_graph_free(im.g);
  for (int i = 0; feeds && i < s->n_in; i++) tf_val_release(&feeds[i]);
  for (int i = 0; outs && i < s->n_out; i++) tf_val_release(&outs[i]);
  free(feeds), free(outs), free(feed_ptrs), free(res);
  free_names(in_nodes, s->n_in);
  free_names(out_refs, s->n_out);
  return st;
}

/* Every op the signatures reach that tide does not map, at once. */
static tide_status scan_signatures(tide_tf_saved_model *m) {
  tf_import im = {.dir = m->dir, .lib = &m->lib, .vars = m->var_ptrs, .scan = true};
  tide_status st = TIDE_OK;
  for (int k = 0; !st && k < m->n_sigs; k++) {
    tf_sig *s = &m->sigs[k];
    char **out_refs = node_names(s->out_info, s->n_out, true);
    st = out_refs ? tf_import_graph(&im, m->mg->graph_def, 0, NULL, NULL, var_of, m, s->n_out,
                                    (const char *const *)out_refs, NULL)
                  : oom();
    free_names(out_refs, s->n_out);
  }
  if (!st && im.n_missing > 0)
    st = TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel %s uses %d TF op%s that tide does not map:\n%s", m->dir, im.n_missing,
                   im.n_missing == 1 ? "" : "s", im.missing);
  free(im.missing);
  free(im.seen);
  return st;
}

static tide_status read_signatures(tide_tf_saved_model *m) {
  const Tensorflow__MetaGraphDef *mg = m->mg;
  m->sigs = calloc(mg->n_signature_def + 1, sizeof *m->sigs);
  if (!m->sigs) return oom();
  for (size_t i = 0; i < mg->n_signature_def; i++) {
    Tensorflow__MetaGraphDef__SignatureDefEntry *e = mg->signature_def[i];
    if (!e->key || !e->value || !strcmp(e->key, "__saved_model_init_op")) continue;
    tf_sig *s = &m->sigs[m->n_sigs++];
    if (!(s->name = strdup(e->key))) return oom();
    s->n_in = (int)e->value->n_inputs;
    s->n_out = (int)e->value->n_outputs;
    tide_status st = sig_names(m, e->key, e->value->inputs, e->value->n_inputs, &s->in_names, &s->in_info);
    if (!st) st = sig_names(m, e->key, e->value->outputs, e->value->n_outputs, &s->out_names, &s->out_info);
    if (st) return st;
  }
  /* sorted by name */
  for (int a = 1; a < m->n_sigs; a++)
    for (int b = a; b > 0 && strcmp(m->sigs[b - 1].name, m->sigs[b].name) > 0; b--) {
      tf_sig t = m->sigs[b];
      m->sigs[b] = m->sigs[b - 1];
      m->sigs[b - 1] = t;
    }
  tide_status st = scan_signatures(m);
  if (!st) st = read_values(m);
  /* what the signatures compute while they load (folded constants, Fill of known shapes) is capped */
  load_cap cap = {0};
  if (!st) st = load_cap_begin(&cap, m->model_bytes);
  for (int k = 0; !st && k < m->n_sigs; k++) st = build_signature(m, &m->sigs[k]);
  load_cap_end(&cap);
  return load_cap_explain(&cap, st);
}

tide_status tide_tf_saved_model_open(const char *dir, tide_tf_saved_model **out) {
  if (!out) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: no place for the result");
  *out = NULL;
  if (!dir || !*dir) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: no folder given");
  if (strlen(dir) > 4000) return TIDE_FAIL(TIDE_ERR_VALUE, "TF SavedModel: folder name too long");
  tide_status st = tide_file_check(dir, false);
  if (st) return st;
  tide_tf_saved_model *m = calloc(1, sizeof *m);
  if (!m || !(m->dir = strdup(dir))) {
    free(m);
    return oom();
  }
  st = read_pb(m);
  if (!st) st = pick_meta_graph(m);
  if (!st) st = map_variables(m);
  if (!st) st = read_signatures(m);
  if (st) {
    tide_tf_saved_model_free(m);
    return st;
  }
  *out = m;
  return TIDE_OK;
}

/* ---- what it holds --------------------------------------------------------------- */

static const tf_sig *sig_at(const tide_tf_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_sigs ? &m->sigs[k] : NULL;
}

int tide_tf_saved_model_num_signatures(const tide_tf_saved_model *m) { return m ? m->n_sigs : 0; }
const char *tide_tf_saved_model_signature_name(const tide_tf_saved_model *m, int k) {
  const tf_sig *s = sig_at(m, k);
  return s ? s->name : NULL;
}
tide_graph *tide_tf_saved_model_graph(tide_tf_saved_model *m, int k) {
  const tf_sig *s = sig_at(m, k);
  return s ? s->g : NULL;
}
const char *tide_tf_saved_model_input_name(const tide_tf_saved_model *m, int k, int i) {
  const tf_sig *s = sig_at(m, k);
  return s && i >= 0 && i < s->n_in ? s->in_names[i] : NULL;
}
const char *tide_tf_saved_model_output_name(const tide_tf_saved_model *m, int k, int i) {
  const tf_sig *s = sig_at(m, k);
  return s && i >= 0 && i < s->n_out ? s->out_names[i] : NULL;
}
int tide_tf_saved_model_input_spec(const tide_tf_saved_model *m, int k, int i, int *ndim, int64_t *dims) {
  const tf_sig *s = sig_at(m, k);
  if (!s || i < 0 || i >= s->n_in) return -1;
  int dt, nd;
  int64_t d[TIDE_MAX_DIMS];
  if (input_spec(s->in_info[i], &dt, &nd, d)) return -1;
  if (ndim) *ndim = nd;
  for (int j = 0; dims && j < nd; j++) dims[j] = d[j];
  return dt;
}
int tide_tf_saved_model_output_spec(const tide_tf_saved_model *m, int k, int i, int *ndim, int64_t *dims) {
  const tf_sig *s = sig_at(m, k);
  if (!s || i < 0 || i >= s->n_out) return -1;
  int dt, nd;
  int64_t d[TIDE_MAX_DIMS];
  if (input_spec(s->out_info[i], &dt, &nd, d)) return -1;
  if (ndim) *ndim = nd;
  for (int j = 0; dims && j < nd; j++) dims[j] = d[j];
  return dt;
}
int tide_tf_saved_model_num_variables(const tide_tf_saved_model *m) { return m ? m->n_vars : 0; }
const char *tide_tf_saved_model_variable_name(const tide_tf_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_vars ? m->var_keys[k] : NULL;
}
tide_tensor *tide_tf_saved_model_variable(tide_tf_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_vars ? &m->vars[k] : NULL;
}

/* Where tf_saved_model_def.c keeps signature k's graph definition, and the function that frees it (set there: this
 * file names no graph-definition code, so the reader links without it, as the fuzz target does). */
tide_graph_def **tf_saved_model_def_slot(tide_tf_saved_model *m, int k, void (***free_def)(tide_graph_def *)) {
  if (!m || k < 0 || k >= m->n_sigs) return NULL;
  *free_def = &m->free_def;
  return &m->sigs[k].def;
}
const char *tf_saved_model_dir(const tide_tf_saved_model *m) { return m->dir; }
