/* io/saved_model.c — a SavedModel directory (docs/saved_model.md): the graph
 * file and the two tensor files, written atomically, read and checked. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tide/saved_model.h"
#include "tide/file_kind.h"
#include "tide/files.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../graph/graph_def.h"
#include "tensor_file.h"

#define SM_FORMAT "tide.saved_model"
#define SM_GRAPH_FILE "saved_model.json"
#define SM_VARS_FILE "variables.safetensors"
#define SM_CONSTS_FILE "constants.safetensors"
enum { SM_MAX_JSON = 256 << 20 };

static tide_status oom(void) { return tide_set_error(TIDE_ERR_MEMORY, "saved model: out of memory"); }

static char *dup_string(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static char **dup_strings(int n, const char *const *s) {
  char **d = calloc((size_t)n + 1, sizeof *d);
  for (int i = 0; d && i < n; i++) {
    if (!s[i] || !(d[i] = dup_string(s[i]))) {
      for (int k = 0; k < i; k++) free(d[k]);
      free(d);
      return NULL;
    }
  }
  return d;
}

static void free_strings(int n, char **s) {
  for (int i = 0; s && i < n; i++) free(s[i]);
  free(s);
}

/* ---- writing ---------------------------------------------------------------- */

typedef struct wvar {
  char *name;
  tide_tensor *handle;
  int trainable;
} wvar;

typedef struct wfunc {
  char *name;
  const tide_graph *g;
  int n_in, n_out;
  char **in_names, **out_names;
} wfunc;

struct tide_saved_model_writer {
  int n_vars, n_funcs;
  wvar *vars;
  wfunc *funcs;
  char *extra;
};

tide_saved_model_writer *tide_saved_model_writer_new(void) {
  tide_saved_model_writer *w = calloc(1, sizeof *w);
  if (!w) oom();
  return w;
}

void tide_saved_model_writer_free(tide_saved_model_writer *w) {
  if (!w) return;
  for (int i = 0; i < w->n_vars; i++) free(w->vars[i].name);
  for (int i = 0; i < w->n_funcs; i++) {
    free(w->funcs[i].name);
    free_strings(w->funcs[i].n_in, w->funcs[i].in_names);
    free_strings(w->funcs[i].n_out, w->funcs[i].out_names);
  }
  free(w->vars);
  free(w->funcs);
  free(w->extra);
  free(w);
}

tide_status tide_saved_model_add_variable(tide_saved_model_writer *w, const char *name, tide_tensor *handle,
                                          int trainable) {
  if (!w || !name || !handle || !*name)
    return tide_set_error(TIDE_ERR_VALUE, "saved model: a variable needs a name and a tensor");
  if (!strcmp(name, "__metadata__")) return tide_set_error(TIDE_ERR_VALUE, "saved model: '__metadata__' is no variable name");
  for (int i = 0; i < w->n_vars; i++)
    if (!strcmp(w->vars[i].name, name))
      return tide_set_error(TIDE_ERR_VALUE, "saved model: two variables are named '%s'", name);
  if (handle->ndim < 0 || handle->dt < 0 || handle->dt >= TIDE_NUM_DTYPES || (handle->flags & TIDE_TENSOR_SYMBOLIC))
    return tide_set_error(TIDE_ERR_VALUE, "saved model: variable '%s' holds no value", name);
  wvar *grown = realloc(w->vars, (size_t)(w->n_vars + 1) * sizeof *grown);
  if (!grown) return oom();
  w->vars = grown;
  char *n = dup_string(name);
  if (!n) return oom();
  w->vars[w->n_vars++] = (wvar){n, handle, trainable != 0};
  return TIDE_OK;
}

tide_status tide_saved_model_add_function(tide_saved_model_writer *w, const char *name, const tide_graph *g, int n_in,
                                          const char *const *in_names, int n_out, const char *const *out_names) {
  if (!w || !name || !*name || !g) return tide_set_error(TIDE_ERR_VALUE, "saved model: a function needs a name and a graph");
  for (int i = 0; i < w->n_funcs; i++)
    if (!strcmp(w->funcs[i].name, name))
      return tide_set_error(TIDE_ERR_VALUE, "saved model: two functions are named '%s'", name);
  if (n_in != tide_graph_num_inputs(g) || n_out != tide_graph_num_outputs(g))
    return tide_set_error(TIDE_ERR_VALUE, "saved model: function '%s' has %d inputs and %d outputs, given %d and %d names",
                          name, tide_graph_num_inputs(g), tide_graph_num_outputs(g), n_in, n_out);
  wfunc *grown = realloc(w->funcs, (size_t)(w->n_funcs + 1) * sizeof *grown);
  if (!grown) return oom();
  w->funcs = grown;
  wfunc f = {dup_string(name), g, n_in, n_out, dup_strings(n_in, in_names), dup_strings(n_out, out_names)};
  if (!f.name || !f.in_names || !f.out_names) {
    free(f.name);
    free_strings(n_in, f.in_names);
    free_strings(n_out, f.out_names);
    return oom();
  }
  w->funcs[w->n_funcs++] = f;
  return TIDE_OK;
}

tide_status tide_saved_model_set_extra(tide_saved_model_writer *w, const char *json) {
  if (!w || !json) return tide_set_error(TIDE_ERR_VALUE, "saved model: extra JSON is NULL");
  cJSON *j = cJSON_Parse(json);
  if (!j) return tide_set_error(TIDE_ERR_VALUE, "saved model: the extra text is not JSON");
  cJSON_Delete(j);
  char *d = dup_string(json);
  if (!d) return oom();
  free(w->extra);
  w->extra = d;
  return TIDE_OK;
}

static cJSON *names_json(int n, char **names) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(names[i]));
  return a;
}

/* The graph file's JSON, with the constants met gathered in consts. */
static cJSON *model_json(const tide_saved_model_writer *w, gdef_tensors *consts) {
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return oom(), NULL;
  cJSON_AddStringToObject(doc, "format", SM_FORMAT);
  cJSON_AddNumberToObject(doc, "version", TIDE_SAVED_MODEL_VERSION);
  cJSON *vars = cJSON_AddArrayToObject(doc, "variables");
  tide_tensor **handles = calloc((size_t)w->n_vars + 1, sizeof *handles);
  if (!vars || !handles) {
    free(handles);
    cJSON_Delete(doc);
    return oom(), NULL;
  }
  for (int i = 0; i < w->n_vars; i++) {
    const tide_tensor *t = w->vars[i].handle;
    handles[i] = w->vars[i].handle;
    cJSON *v = cJSON_CreateObject();
    cJSON_AddItemToArray(vars, v);
    cJSON_AddStringToObject(v, "name", w->vars[i].name);
    cJSON_AddStringToObject(v, "dtype", tide_dtype_name(t->dt));
    cJSON *shape = cJSON_AddArrayToObject(v, "shape");
    for (int d = 0; shape && d < t->ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
    cJSON_AddBoolToObject(v, "trainable", w->vars[i].trainable);
  }
  cJSON *funcs = cJSON_AddArrayToObject(doc, "functions");
  for (int i = 0; funcs && i < w->n_funcs; i++) {
    const wfunc *f = &w->funcs[i];
    cJSON *graph = tide_graph_def_write(f->g, w->n_vars, handles, consts);
    if (!graph) {
      free(handles);
      cJSON_Delete(doc);
      return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(funcs, o);
    cJSON_AddStringToObject(o, "name", f->name);
    cJSON_AddItemToObject(o, "inputs", names_json(f->n_in, f->in_names));
    cJSON_AddItemToObject(o, "outputs", names_json(f->n_out, f->out_names));
    cJSON_AddItemToObject(o, "graph", graph);
  }
  free(handles);
  if (w->extra) cJSON_AddItemToObject(doc, "extra", cJSON_Parse(w->extra));
  return doc;
}

static tide_status sync_dir(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return tide_set_error(TIDE_ERR_IO, "saved model: cannot open directory %s: %s", path, strerror(errno));
  int rc = fsync(fd);
  close(fd);
  if (rc != 0 && errno != EINVAL)
    return tide_set_error(TIDE_ERR_IO, "saved model: cannot sync directory %s: %s", path, strerror(errno));
  return TIDE_OK;
}

static tide_status write_text(const char *path, const char *text) {
  tide_status checked = tide_file_check(path, true);
  if (checked) return checked;
  int fd = tide_file_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return tide_set_error(TIDE_ERR_IO, "saved model: cannot create %s: %s", path, tide_file_why());
  size_t n = strlen(text);
  const char *p = text;
  tide_status st = TIDE_OK;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      st = tide_set_error(TIDE_ERR_IO, "saved model: cannot write %s: %s", path, strerror(errno));
      break;
    }
    p += w;
    n -= (size_t)w;
  }
  if (!st && fsync(fd) != 0) st = tide_set_error(TIDE_ERR_IO, "saved model: cannot sync %s: %s", path, strerror(errno));
  close(fd);
  return st;
}

/* Remove the files a SavedModel directory holds, then the directory
 * (anything else in it is left, and so is the directory then). */
static void remove_model_dir(const char *dir) {
  static const char *const FILES[] = {SM_GRAPH_FILE, SM_VARS_FILE, SM_CONSTS_FILE};
  char path[4096];
  for (size_t i = 0; i < sizeof FILES / sizeof *FILES; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* True when dir is an empty directory or a SavedModel (it may be replaced). */
static bool replaceable(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, SM_GRAPH_FILE);
  if (access(path, F_OK) == 0) return true;
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *e;
  bool empty = true;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
  closedir(d);
  return empty;
}

static void parent_of(const char *dir, char *out, size_t size) {
  snprintf(out, size, "%s", dir);
  size_t n = strlen(out);
  while (n > 1 && out[n - 1] == '/') out[--n] = 0;
  char *slash = strrchr(out, '/');
  if (!slash) snprintf(out, size, ".");
  else if (slash == out) out[1] = 0;
  else *slash = 0;
}

tide_status tide_saved_model_save(tide_saved_model_writer *w, const char *dir) {
  if (!w || !dir || !*dir) return tide_set_error(TIDE_ERR_VALUE, "saved model: no directory given");
  if (strlen(dir) > 3000) return tide_set_error(TIDE_ERR_VALUE, "saved model: directory name too long");
  tide_status checked = tide_file_check(dir, true);
  if (checked) return checked;
  struct stat sb;
  bool exists = stat(dir, &sb) == 0;
  if (exists && !S_ISDIR(sb.st_mode)) return tide_set_error(TIDE_ERR_IO, "saved model: %s exists and is not a directory", dir);
  if (exists && !replaceable(dir))
    return tide_set_error(TIDE_ERR_IO, "saved model: %s exists and is not a SavedModel (nothing was written)", dir);
  gdef_tensors consts = {0};
  cJSON *doc = model_json(w, &consts);
  if (!doc) {
    gdef_tensors_free(&consts);
    return tide_last_status() ? tide_last_status() : oom();
  }
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!text) {
    gdef_tensors_free(&consts);
    return oom();
  }
  static int counter;
  char tmp[3200], path[3300], parent[3100];
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%d", dir, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  tide_status st = TIDE_OK;
  if (mkdir(tmp, 0755) != 0) st = tide_set_error(TIDE_ERR_IO, "saved model: cannot create %s: %s", tmp, strerror(errno));
  if (!st) {
    /* Constants "c<k>" and variables by name. */
    char **names = calloc((size_t)consts.n + 1, sizeof *names);
    const tide_tensor **ts = calloc((size_t)consts.n + (size_t)w->n_vars + 1, sizeof *ts);
    if (!names || !ts) st = oom();
    for (int i = 0; !st && i < consts.n; i++) {
      names[i] = malloc(24);
      if (!names[i]) st = oom();
      else snprintf(names[i], 24, "c%d", i);
      ts[i] = &consts.items[i];
    }
    snprintf(path, sizeof path, "%s/%s", tmp, SM_CONSTS_FILE);
    if (!st) st = tfile_write(path, consts.n, (const char *const *)names, ts);
    free_strings(consts.n, names);
    const char **vnames = calloc((size_t)w->n_vars + 1, sizeof *vnames);
    if (!st && !vnames) st = oom();
    for (int i = 0; !st && i < w->n_vars; i++) {
      vnames[i] = w->vars[i].name;
      ts[i] = w->vars[i].handle;
    }
    snprintf(path, sizeof path, "%s/%s", tmp, SM_VARS_FILE);
    if (!st) st = tfile_write(path, w->n_vars, vnames, ts);
    free(vnames);
    free(ts);
  }
  snprintf(path, sizeof path, "%s/%s", tmp, SM_GRAPH_FILE);
  if (!st) st = write_text(path, text);
  free(text);
  gdef_tensors_free(&consts);
  if (!st) st = sync_dir(tmp);
  if (!st) {
    /* Swap the complete new directory in: with an existing one, exchange the
     * two atomically, then remove the old one (now at tmp). */
    if (exists) {
      if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) != 0)
        st = tide_set_error(TIDE_ERR_IO, "saved model: cannot replace %s: %s", dir, strerror(errno));
    } else if (rename(tmp, dir) != 0) {
      st = tide_set_error(TIDE_ERR_IO, "saved model: cannot rename %s to %s: %s", tmp, dir, strerror(errno));
    }
  }
  if (!st) {
    parent_of(dir, parent, sizeof parent);
    st = sync_dir(parent);
  }
  remove_model_dir(tmp); /* the old model after a swap; the unfinished one after a failure */
  return st;
}

/* ---- reading ---------------------------------------------------------------- */

typedef struct rvar {
  char *name;
  int trainable;
  tide_tensor t;
} rvar;

typedef struct rfunc {
  char *name;
  int n_in, n_out;
  char **in_names, **out_names;
  tide_graph_def *def;
} rfunc;

struct tide_saved_model {
  int n_vars, n_funcs;
  rvar *vars;
  rfunc *funcs;
  char *extra;
};

void tide_saved_model_free(tide_saved_model *m) {
  if (!m) return;
  for (int i = 0; i < m->n_vars; i++) {
    free(m->vars[i].name);
    tide_tensor_release(&m->vars[i].t);
  }
  for (int i = 0; i < m->n_funcs; i++) {
    free(m->funcs[i].name);
    free_strings(m->funcs[i].n_in, m->funcs[i].in_names);
    free_strings(m->funcs[i].n_out, m->funcs[i].out_names);
    tide_graph_def_free(m->funcs[i].def);
  }
  free(m->vars);
  free(m->funcs);
  free(m->extra);
  free(m);
}

static tide_status read_whole(const char *path, char **out, size_t *len) {
  tide_status checked = tide_file_check(path, false);
  if (checked) return checked;
  int fd = tide_file_open(path, O_RDONLY, 0); /* a regular file: a FIFO or a device is refused, never waited on */
  if (fd < 0 && (errno == EISDIR || errno == EINVAL))
    return tide_set_error(TIDE_ERR_IO, "saved model: %s is not a regular file of at most %d bytes (%s)", path,
                          SM_MAX_JSON, tide_file_why());
  if (fd < 0) return tide_set_error(TIDE_ERR_IO, "saved model: cannot open %s: %s", path, tide_file_why());
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > SM_MAX_JSON) {
    close(fd);
    return tide_set_error(TIDE_ERR_IO, "saved model: %s is not a regular file of at most %d bytes", path, SM_MAX_JSON);
  }
  char *buf = malloc((size_t)sb.st_size + 1);
  if (!buf) {
    close(fd);
    return oom();
  }
  size_t got = 0;
  while (got < (size_t)sb.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = 0;
  *out = buf;
  *len = got;
  return TIDE_OK;
}

static const tide_tensor *const_lookup(void *ctx, const char *name) { return tfile_find(ctx, name); }

static tide_status bad(const char *file, const char *fmt, const char *arg) {
  char what[300];
  snprintf(what, sizeof what, fmt, arg ? arg : "");
  return tide_set_error(TIDE_ERR_VALUE, "saved model %s: %s", file, what);
}

/* A list of strings (names); NULL with an error. */
static char **read_names(const cJSON *a, const char *file, const char *what, int *n) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > (1 << 16)) {
    bad(file, "%s must be a list of names", what);
    return NULL;
  }
  *n = cJSON_GetArraySize(a);
  char **names = calloc((size_t)*n + 1, sizeof *names);
  if (!names) return oom(), NULL;
  int i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, a) {
    if (!cJSON_IsString(x) || !(names[i] = dup_string(x->valuestring))) {
      free_strings(*n, names);
      if (!cJSON_IsString(x)) bad(file, "%s must be a list of names", what);
      else oom();
      return NULL;
    }
    i++;
  }
  return names;
}

/* Parse the graph file's text (path names it) with the tensor files' contents. */
static tide_status parse_model(const char *text, size_t len, const char *path, tfile *vars, tfile *consts,
                               tide_saved_model *m) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (!doc) return bad(path, "not valid JSON (near byte %s)", NULL);
  tide_status st = TIDE_OK;
  const cJSON *format = cJSON_GetObjectItemCaseSensitive(doc, "format");
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(doc, "version");
  if (!cJSON_IsObject(doc) || !cJSON_IsString(format) || strcmp(format->valuestring, SM_FORMAT)) {
    st = bad(path, "not a tide SavedModel (no \"format\": \"" SM_FORMAT "\")%s", NULL);
  } else if (!cJSON_IsNumber(version) || version->valuedouble < 1 || version->valuedouble != (int)version->valuedouble) {
    st = bad(path, "no format version%s", NULL);
  } else if (version->valuedouble > TIDE_SAVED_MODEL_VERSION) {
    st = tide_set_error(TIDE_ERR_UNSUPPORTED,
                        "saved model %s: format version %d is newer than this build of tide reads (%d): load it with "
                        "a newer tide", path, (int)version->valuedouble, TIDE_SAVED_MODEL_VERSION);
  }
  const cJSON *vlist = cJSON_GetObjectItemCaseSensitive(doc, "variables");
  const cJSON *flist = cJSON_GetObjectItemCaseSensitive(doc, "functions");
  if (!st && (!cJSON_IsArray(vlist) || !cJSON_IsArray(flist)))
    st = bad(path, "needs lists \"variables\" and \"functions\"%s", NULL);
  if (!st) {
    m->vars = calloc((size_t)cJSON_GetArraySize(vlist) + 1, sizeof *m->vars);
    m->funcs = calloc((size_t)cJSON_GetArraySize(flist) + 1, sizeof *m->funcs);
    if (!m->vars || !m->funcs) st = oom();
  }
  const cJSON *x;
  if (!st) cJSON_ArrayForEach(x, vlist) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "name");
    if (!cJSON_IsString(name)) {
      st = bad(path, "a variable has no name%s", NULL);
      break;
    }
    for (int k = 0; k < m->n_vars && !st; k++)
      if (!strcmp(m->vars[k].name, name->valuestring)) st = bad(path, "two variables are named '%s'", name->valuestring);
    if (st) break;
    const tide_tensor *t = tfile_find(vars, name->valuestring);
    if (!t) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: variable '%s' is missing from %s", path, name->valuestring,
                          SM_VARS_FILE);
      break;
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(x, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(x, "shape");
    bool same = cJSON_IsString(dt) && tide_dtype_from_name(dt->valuestring) == t->dt && cJSON_IsArray(shape) &&
                cJSON_GetArraySize(shape) == t->ndim;
    for (int d = 0; same && d < t->ndim; d++) {
      const cJSON *e = cJSON_GetArrayItem(shape, d);
      same = cJSON_IsNumber(e) && e->valuedouble == (double)t->dims[d];
    }
    if (!same) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: variable '%s' in %s has another dtype or shape than declared",
                          path, name->valuestring, SM_VARS_FILE);
      break;
    }
    rvar *v = &m->vars[m->n_vars];
    v->name = dup_string(name->valuestring);
    if (!v->name) {
      st = oom();
      break;
    }
    m->n_vars++;
    v->trainable = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "trainable"));
    st = tide_tensor_init_heap(&v->t, t->dt, t->ndim, t->dims);
    if (!st) st = tide_tensor_copy_into(&v->t, t);
    if (!st) st = tide_tensor_mark_variable(&v->t);
    if (st) break;
  }
  if (!st) cJSON_ArrayForEach(x, flist) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(x, "name");
    if (!cJSON_IsString(name)) {
      st = bad(path, "a function has no name%s", NULL);
      break;
    }
    if (tide_saved_model_find_function(m, name->valuestring) >= 0) {
      st = bad(path, "two functions are named '%s'", name->valuestring);
      break;
    }
    rfunc *f = &m->funcs[m->n_funcs];
    f->name = dup_string(name->valuestring);
    if (!f->name) {
      st = oom();
      break;
    }
    m->n_funcs++;
    f->in_names = read_names(cJSON_GetObjectItemCaseSensitive(x, "inputs"), path, "a function's inputs", &f->n_in);
    if (!f->in_names) {
      st = tide_last_status();
      break;
    }
    f->out_names = read_names(cJSON_GetObjectItemCaseSensitive(x, "outputs"), path, "a function's outputs", &f->n_out);
    if (!f->out_names) {
      st = tide_last_status();
      break;
    }
    st = tide_graph_def_read(cJSON_GetObjectItemCaseSensitive(x, "graph"), path, m->n_vars, const_lookup, consts,
                             &f->def);
    if (st) break;
    if (f->def->n_inputs != f->n_in || f->def->n_outputs != f->n_out) {
      st = tide_set_error(TIDE_ERR_VALUE, "saved model %s: function '%s' names %d inputs and %d outputs but its graph has "
                          "%d and %d", path, f->name, f->n_in, f->n_out, f->def->n_inputs, f->def->n_outputs);
      break;
    }
  }
  const cJSON *extra = cJSON_GetObjectItemCaseSensitive(doc, "extra");
  if (!st && extra && !(m->extra = cJSON_PrintUnformatted(extra))) st = oom();
  cJSON_Delete(doc);
  return st;
}

tide_status tide_saved_model_open(const char *dir, tide_saved_model **out) {
  *out = NULL;
  if (!dir || !*dir) return tide_set_error(TIDE_ERR_VALUE, "saved model: no directory given");
  if (strlen(dir) > 3000) return tide_set_error(TIDE_ERR_VALUE, "saved model: directory name too long");
  tide_status checked = tide_file_check(dir, false);
  if (checked) return checked;
  /* TF's SavedModel, an ONNX or .keras file, ... says what it is */
  const char *kind;
  int k = tide_file_kind(dir, &kind);
  if (k != TIDE_FILE_UNKNOWN && k != TIDE_FILE_TIDE_SAVED_MODEL)
    return tide_set_error(TIDE_ERR_IO, "saved model: %s is not a tide SavedModel: it is %s", dir, kind);
  char path[3100];
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return tide_set_error(TIDE_ERR_IO, "saved model: %s is not a directory", dir);
  tide_saved_model *m = calloc(1, sizeof *m);
  if (!m) return oom();
  tfile vars = {0}, consts = {0};
  char *text = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/%s", dir, SM_GRAPH_FILE);
  tide_status st = read_whole(path, &text, &len);
  char vpath[3100], cpath[3100];
  snprintf(vpath, sizeof vpath, "%s/%s", dir, SM_VARS_FILE);
  snprintf(cpath, sizeof cpath, "%s/%s", dir, SM_CONSTS_FILE);
  if (!st) st = tfile_read(vpath, &vars);
  if (!st) st = tfile_read(cpath, &consts);
  if (!st) st = parse_model(text, len, path, &vars, &consts, m);
  free(text);
  tfile_free(&vars);
  tfile_free(&consts);
  if (st) {
    tide_saved_model_free(m);
    return st;
  }
  *out = m;
  return TIDE_OK;
}

int tide_saved_model_num_variables(const tide_saved_model *m) { return m ? m->n_vars : 0; }
const char *tide_saved_model_variable_name(const tide_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_vars ? m->vars[k].name : NULL;
}
int tide_saved_model_variable_trainable(const tide_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_vars ? m->vars[k].trainable : 0;
}
tide_tensor *tide_saved_model_variable(tide_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_vars ? &m->vars[k].t : NULL;
}
int tide_saved_model_num_functions(const tide_saved_model *m) { return m ? m->n_funcs : 0; }
const char *tide_saved_model_function_name(const tide_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_funcs ? m->funcs[k].name : NULL;
}
int tide_saved_model_find_function(const tide_saved_model *m, const char *name) {
  for (int k = 0; m && name && k < m->n_funcs; k++)
    if (!strcmp(m->funcs[k].name, name)) return k;
  return -1;
}
const tide_graph_def *tide_saved_model_function_def(const tide_saved_model *m, int k) {
  return m && k >= 0 && k < m->n_funcs ? m->funcs[k].def : NULL;
}
const char *tide_saved_model_input_name(const tide_saved_model *m, int k, int i) {
  return m && k >= 0 && k < m->n_funcs && i >= 0 && i < m->funcs[k].n_in ? m->funcs[k].in_names[i] : NULL;
}
const char *tide_saved_model_output_name(const tide_saved_model *m, int k, int i) {
  return m && k >= 0 && k < m->n_funcs && i >= 0 && i < m->funcs[k].n_out ? m->funcs[k].out_names[i] : NULL;
}
const char *tide_saved_model_extra(const tide_saved_model *m) { return m ? m->extra : NULL; }

tide_status tide_saved_model_build(tide_saved_model *m, int k, tide_tensor *const *handles, tide_graph **out) {
  *out = NULL;
  if (!m || k < 0 || k >= m->n_funcs) return tide_set_error(TIDE_ERR_INDEX, "saved model: no function %d", k);
  tide_tensor **own = NULL;
  if (!handles) {
    own = calloc((size_t)m->n_vars + 1, sizeof *own);
    if (!own) return oom();
    for (int i = 0; i < m->n_vars; i++) own[i] = &m->vars[i].t;
    handles = own;
  }
  for (int i = 0; i < m->n_vars; i++) {
    const tide_tensor *h = handles[i];
    bool same = h && h->dt == m->vars[i].t.dt && h->ndim == m->vars[i].t.ndim;
    for (int d = 0; same && d < h->ndim; d++) same = h->dims[d] == m->vars[i].t.dims[d];
    if (!same) {
      free(own);
      return tide_set_error(TIDE_ERR_VALUE, "saved model: the tensor given for variable '%s' has another dtype or shape",
                            m->vars[i].name);
    }
  }
  tide_status st = tide_graph_def_build(m->funcs[k].def, handles, out);
  free(own);
  return st;
}
