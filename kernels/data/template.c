/* data/template.c — interleave's templates: the param leaves that take their
 * arguments from each input element, and the per-element copies of a template.
 *
 * A template is the dataset interleave's function returned, captured once.
 * For each input element, the argument graph's results (args) turn the param
 * leaves into real sources (slices, range, files), and the stages on the way
 * to them, or whose graphs capture the element, are copied through their
 * stage's table (stage.h: a copy starts from zeros); the rest is shared. */
#include "stage.h"

#include "tide/strings.h"

/* ---- param leaves --------------------------------------------------------------- */

typedef struct param_ds {
  tide_dataset base;
  int kind;            /* TIDE_DATA_PARAM_* */
  int first, nargs;    /* the arguments it reads: args[first .. first + nargs) */
  tide_dataset *proto; /* TIDE_DATA_PARAM_FILES: the file source whose reader it uses (held) */
} param_ds;

static const dstage_ops param_stage;

tide_dataset *tide_dataset_param(int kind, int first, int nargs, tide_dataset *proto) {
  int ncomp = 0;
  if (first < 0 || nargs < 0) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: a template leaf's arguments must be a non-negative range");
    return NULL;
  }
  const tide_data_source *src = dsource_of(proto);
  if (kind == TIDE_DATA_PARAM_SLICES) ncomp = nargs;
  else if (kind == TIDE_DATA_PARAM_RANGE) ncomp = nargs == 3 ? 1 : 0;
  else if (kind == TIDE_DATA_PARAM_FILES) ncomp = nargs == 1 && src && src->ctx_for_files ? proto->ncomp : 0;
  if (ncomp < 1 || ncomp > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: bad template leaf (kind %d, %d arguments%s)", kind, nargs,
              kind == TIDE_DATA_PARAM_FILES ? ", a file source that can read other files" : "");
    return NULL;
  }
  param_ds *p = (param_ds *)dstage_new(&param_stage, ncomp);
  if (!p) return NULL;
  p->kind = kind, p->first = first, p->nargs = nargs;
  if (proto) p->proto = dstage_hold(proto);
  return &p->base;
}

static dnode *param_node_make(tide_dataset *ds, dpass *pass) {
  (void)ds, (void)pass;
  TIDE_FAIL(TIDE_ERR_VALUE, "data: this dataset was made from an interleave function's traced element; only that "
                            "interleave can read it");
  return NULL;
}

static int64_t param_cardinality(const tide_dataset *ds) {
  (void)ds;
  return TIDE_DATA_UNKNOWN;
}

static void param_release(tide_dataset *ds) { tide_dataset_free(((param_ds *)ds)->proto); }

/* Not copied: each element turns it into a source (make_leaf). */
static const dstage_ops param_stage = {"param", sizeof(param_ds), param_node_make, param_cardinality, NULL,
                                       param_release, NULL, NULL};

/* An integer scalar's value. */
static tide_status int_scalar(const tide_tensor *t, const char *name, int64_t *v) {
  if (t->nelem != 1 || !t->data)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "range: %s must be a scalar, got %lld values", name, (long long)t->nelem);
  switch (t->dt) {
  case TIDE_INT8: *v = *(const int8_t *)t->data; return TIDE_OK;
  case TIDE_UINT8: *v = *(const uint8_t *)t->data; return TIDE_OK;
  case TIDE_INT32: *v = *(const int32_t *)t->data; return TIDE_OK;
  case TIDE_INT64: *v = *(const int64_t *)t->data; return TIDE_OK;
  default: return TIDE_FAIL(TIDE_ERR_DTYPE, "range: %s must be an integer, got %s", name, tide_dtype_name(t->dt));
  }
}

/* The source a param leaf makes of its arguments. */
static tide_dataset *make_leaf(const param_ds *t, const tide_tensor *args, int nargs) {
  int first = t->first, n = t->nargs;
  if (first + n > nargs) {
    TIDE_FAIL(TIDE_ERR_INTERNAL, "interleave: a template leaf wants arguments %d..%d of %d", first, first + n, nargs);
    return NULL;
  }
  const tide_tensor *a = args + first;
  if (t->kind == TIDE_DATA_PARAM_SLICES) {
    const tide_tensor *ptrs[TIDE_DATA_MAX_COMPONENTS];
    for (int k = 0; k < n; k++) ptrs[k] = &a[k];
    return tide_dataset_slices(n, ptrs);
  }
  if (t->kind == TIDE_DATA_PARAM_RANGE) {
    int64_t v[3];
    static const char *names[3] = {"start", "stop", "step"};
    for (int k = 0; k < 3; k++)
      if (int_scalar(&a[k], names[k], &v[k])) return NULL;
    return tide_dataset_range(v[0], v[1], v[2], TIDE_INT64);
  }
  /* files: a string scalar or list of paths */
  const tide_data_source *proto = dsource_of(t->proto);
  if (a->dt != TIDE_STRING || a->ndim > 1 || !tide_tensor_is_contiguous(a)) {
    char s[128];
    TIDE_FAIL(TIDE_ERR_VALUE, "the file names must be a string scalar or list, got %s %s", tide_dtype_name(a->dt),
              TIDE_SHAPE_STR(s, a));
    return NULL;
  }
  int nfiles = (int)a->nelem;
  char **files = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *files);
  bool ok = files != NULL;
  for (int i = 0; ok && i < nfiles; i++) {
    int64_t len = 0;
    const char *p = tide_string_at(a->data, i, &len);
    if (!(files[i] = malloc((size_t)len + 1))) ok = false;
    else {
      if (len) memcpy(files[i], p, (size_t)len);
      files[i][len] = 0;
      if ((int64_t)strlen(files[i]) != len) {
        TIDE_FAIL(TIDE_ERR_VALUE, "file name %d holds a NUL byte", i);
        for (int j = 0; j <= i; j++) free(files[j]);
        free(files);
        return NULL;
      }
    }
  }
  tide_dataset *ds = NULL;
  if (!ok) TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
  else {
    tide_data_source src = *proto;
    src.ctx = proto->ctx_for_files(proto->ctx, nfiles, (const char *const *)files);
    if (src.ctx && !(ds = tide_dataset_from_source(&src))) src.free_ctx(src.ctx);
  }
  for (int i = 0; files && i < nfiles; i++) free(files[i]);
  free(files);
  return ds;
}

/* ---- per-element copies ------------------------------------------------------------ */

/* Does ds read a param leaf, or run a graph bound to its function's
 * results? (Then each element needs a copy. An interleave's template is
 * that interleave's own, not one of its inputs: it does not count.) */
static bool needs_copy(const tide_dataset *ds) {
  if (!ds) return false;
  if (ds->stage == &param_stage || ds->fn.ncaps > 0) return true;
  if (needs_copy(ds->input)) return true;
  for (int i = 0; i < ds->ninputs; i++)
    if (needs_copy(ds->inputs[i])) return true;
  return false;
}

/* The shared part of c (a zeroed copy of t): the function held, its
 * captures bound to this element's values, the inputs made for this element. */
static tide_status copy_shared(tide_dataset *c, const tide_dataset *t, const tide_tensor *args, int nargs) {
  if (t->fn.graph) tide_graph_retain(t->fn.graph), c->fn.graph = t->fn.graph;
  if (t->fn.ncaps > 0) {
    if (t->fn.cap_first + t->fn.ncaps > nargs)
      return TIDE_FAIL(TIDE_ERR_INTERNAL, "interleave: a stage's captures want arguments %d..%d of %d",
                       t->fn.cap_first, t->fn.cap_first + t->fn.ncaps, nargs);
    if (!(c->fn.cap_vals = calloc((size_t)t->fn.ncaps, sizeof *c->fn.cap_vals)))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    c->fn.cap_first = t->fn.cap_first, c->fn.ncaps = t->fn.ncaps;
    for (int k = 0; k < t->fn.ncaps; k++) {
      tide_status st = tide_tensor_share(&c->fn.cap_vals[k], &args[t->fn.cap_first + k]);
      if (st) return st;
    }
  }
  if (t->ninputs) {
    if (!(c->inputs = calloc((size_t)t->ninputs, sizeof *c->inputs)))
      return TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    for (int i = 0; i < t->ninputs; i++) {
      if (!(c->inputs[i] = dtemplate_instance(t->inputs[i], args, nargs))) return tide_last_status();
      c->ninputs = i + 1;
    }
  }
  if (t->input && !(c->input = dtemplate_instance(t->input, args, nargs))) return tide_last_status();
  return TIDE_OK;
}

tide_dataset *dtemplate_instance(tide_dataset *t, const tide_tensor *args, int nargs) {
  if (!needs_copy(t)) return dstage_hold(t);
  if (t->stage == &param_stage) return make_leaf((const param_ds *)t, args, nargs);
  if (!t->stage->copy) {
    TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "interleave: a %s stage above a template leaf cannot be copied", t->stage->name);
    return NULL;
  }
  tide_dataset *c = dstage_new(t->stage, t->ncomp);
  if (!c) return NULL;
  tide_status st = copy_shared(c, t, args, nargs);
  if (!st) st = t->stage->copy(c, t);
  if (st) {
    if (tide_last_status() == TIDE_OK) TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    tide_dataset_free(c);
    return NULL;
  }
  return c;
}
