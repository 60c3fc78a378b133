/* io/h5_file.c — reading HDF5 files over libhdf5: the bytes held in memory
 * and walked whole at open (links, objects, attributes, every size checked),
 * the tree as JSON, datasets read into tensors. The writer is h5_write.c. */
#include "h5_internal.h"

#include <H5PLpublic.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "file_bytes.h"
#include "tide/file_kind.h"

enum {
  H5_MAX_DEPTH = 64,
  H5_MAX_OBJECTS = 1000000,
  H5_MAX_PATH = 4096,
  H5_MAX_ATTRS = 4096,          /* per object */
  H5_MAX_ATTR_NUMBERS = 4096,   /* a numeric attribute longer than this is reported as null */
  H5_MAX_ATTR_STRINGS = 1 << 20,
  H5_MAX_CHUNKS = 1 << 20       /* chunks of one dataset */
};
/* A file larger than this is refused before it is read (Keras's biggest
 * published weights are under 1 GB). */
static const size_t H5_MAX_FILE = (size_t)16 << 30;
/* A dataset declaring more than this must store at least 1/1000 of it
 * (Keras's rule against shape and decompression bombs, with a lower floor). */
static const uint64_t H5_BOMB_FLOOR = (uint64_t)16 << 20;
static const uint64_t H5_MAX_DATASET = (uint64_t)1 << 40;

/* ---- libhdf5's errors ----------------------------------------------------- */

static pthread_once_t h5_once = PTHREAD_ONCE_INIT;
static void h5_init(void) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  H5PLset_loading_state(0);
}

void h5_quiet(void) {
  pthread_once(&h5_once, h5_init);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static herr_t first_message(unsigned n, const H5E_error2_t *e, void *ctx) {
  char *buf = ctx;
  if (n == 0 && e && e->desc) snprintf(buf, 256, "%s", e->desc);
  return 0;
}

tide_status h5_fail(tide_status status, const char *what, ...) {
  char head[600], detail[256] = "";
  va_list ap;
  va_start(ap, what);
  vsnprintf(head, sizeof head, what, ap);
  va_end(ap);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_message, detail);
  H5Eclear2(H5E_DEFAULT);
  if (detail[0]) return tide_set_error(status, "%s (libhdf5: %s)", head, detail);
  return tide_set_error(status, "%s", head);
}

/* ---- h5py's types ----------------------------------------------------------- */

static hid_t small_float(size_t epos, size_t esize, size_t msize, size_t ebias) {
  hid_t t = H5Tcopy(H5T_IEEE_F32LE);
  if (t < 0) return t;
  if (H5Tset_fields(t, 15, epos, esize, 0, msize) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, ebias) < 0) {
    H5Tclose(t);
    return H5I_INVALID_HID;
  }
  return t;
}
hid_t h5_half_type(void) { return small_float(10, 5, 10, 15); }
hid_t h5_bfloat16_type(void) { return small_float(7, 8, 7, 127); }

hid_t h5_bool_type(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
  if (t < 0) return t;
  signed char no = 0, yes = 1;
  if (H5Tenum_insert(t, "FALSE", &no) < 0 || H5Tenum_insert(t, "TRUE", &yes) < 0) {
    H5Tclose(t);
    return H5I_INVALID_HID;
  }
  return t;
}

/* ---- opening and walking ------------------------------------------------ */

typedef struct walk {
  tide_h5 *f;
  cJSON *list;
  int objects;
  haddr_t *seen; /* object addresses met so far (a second hard link, or a cycle, is refused): a hash set */
  int n_seen, cap_seen;
  uint64_t attr_bytes, attr_budget; /* attribute bytes read, and the most allowed */
  char path[H5_MAX_PATH + 2];
} walk;

static tide_status bad(const walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status bad(const walk *w, const char *fmt, ...) {
  char what[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  H5Eclear2(H5E_DEFAULT);
  return tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is not a readable HDF5 file: %s", w->f->name, what);
}

static tide_status oom(const walk *w) {
  return tide_set_error(TIDE_ERR_MEMORY, "hdf5: out of memory walking '%s'", w->f->name);
}

/* The printable form of an HDF5 path for messages ("/" for the root). */
static const char *shown(const char *path) { return *path ? path : "/"; }

/* How a dataset of type `ft` is read: its tide dtype and the memory type
 * (a new handle, or H5I_INVALID_HID with *why set when tide cannot read it). */
static hid_t reading_type(hid_t ds, hid_t ft, int *dtype, char *why, size_t why_n) {
  H5T_class_t cls = H5Tget_class(ft);
  size_t size = H5Tget_size(ft);
  switch (cls) {
  case H5T_FLOAT:
    if (size == 4) return *dtype = TIDE_FLOAT32, H5Tcopy(H5T_NATIVE_FLOAT);
    if (size == 8) return *dtype = TIDE_FLOAT64, H5Tcopy(H5T_NATIVE_DOUBLE);
    if (size == 2) {
      size_t spos, epos, esize, mpos, msize;
      if (H5Tget_fields(ft, &spos, &epos, &esize, &mpos, &msize) >= 0 && esize == 8)
        return *dtype = TIDE_BFLOAT16, h5_bfloat16_type();
      return *dtype = TIDE_FLOAT16, h5_half_type();
    }
    snprintf(why, why_n, "%zu-byte floats", size);
    return H5I_INVALID_HID;
  case H5T_INTEGER: {
    bool sign = H5Tget_sign(ft) == H5T_SGN_2;
    if (size == 1) return *dtype = sign ? TIDE_INT8 : TIDE_UINT8, H5Tcopy(sign ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8);
    if (size == 2 || (size == 4 && sign)) return *dtype = TIDE_INT32, H5Tcopy(H5T_NATIVE_INT32);
    if (size == 4 || (size == 8 && sign)) return *dtype = TIDE_INT64, H5Tcopy(H5T_NATIVE_INT64);
    snprintf(why, why_n, size == 8 ? "uint64 (tide has no uint64)" : "%zu-byte integers", size);
    return H5I_INVALID_HID;
  }
  case H5T_ENUM: {
    /* h5py's bool: an enum over a one-byte integer with FALSE = 0 and TRUE = 1 */
    int n = H5Tget_nmembers(ft);
    bool ok = size == 1 && n == 2;
    for (int i = 0; ok && i < 2; i++) {
      signed char v = -1;
      char *name = H5Tget_member_name(ft, (unsigned)i);
      ok = name && H5Tget_member_value(ft, (unsigned)i, &v) >= 0 &&
           ((strcmp(name, "FALSE") == 0 && v == 0) || (strcmp(name, "TRUE") == 0 && v == 1));
      if (name) H5free_memory(name);
    }
    if (ok) return *dtype = TIDE_BOOL, h5_bool_type();
    snprintf(why, why_n, "an enum that is not h5py's bool");
    return H5I_INVALID_HID;
  }
  case H5T_OPAQUE:
    /* Keras's bfloat16: a 2-byte opaque with the attribute dtype = "bfloat16"
     * (a variable-length string, which is not read: see attr_strings) */
    if (size == 2 && H5Aexists(ds, "dtype") > 0) return *dtype = TIDE_BFLOAT16, H5Tcopy(ft);
    H5Eclear2(H5E_DEFAULT);
    snprintf(why, why_n, "%zu-byte opaque data", size);
    return H5I_INVALID_HID;
  case H5T_STRING: snprintf(why, why_n, "strings"); return H5I_INVALID_HID;
  case H5T_COMPOUND: snprintf(why, why_n, "compound data"); return H5I_INVALID_HID;
  default: snprintf(why, why_n, "data of HDF5 type class %d", (int)cls); return H5I_INVALID_HID;
  }
}

/* A dataspace's rank and dims (at most TIDE_MAX_DIMS), or false with *why. */
static bool space_dims(hid_t space, int *ndim, hsize_t *dims, char *why, size_t why_n) {
  H5S_class_t sc = H5Sget_simple_extent_type(space);
  if (sc == H5S_SCALAR) {
    *ndim = 0;
    return true;
  }
  if (sc != H5S_SIMPLE) {
    snprintf(why, why_n, "an empty (null) dataspace");
    return false;
  }
  int r = H5Sget_simple_extent_ndims(space);
  if (r < 0 || r > TIDE_MAX_DIMS) {
    snprintf(why, why_n, "rank %d (tide's tensors have at most %d dims)", r, TIDE_MAX_DIMS);
    return false;
  }
  if (H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
    snprintf(why, why_n, "an unreadable dataspace");
    return false;
  }
  *ndim = r;
  return true;
}

/* Each failure below sets tide's error (the walk stops with it). */
static cJSON *attr_fail(walk *w, const char *name, const char *why) {
  if (why) bad(w, "attribute '%s' of '%s': %s", name, shown(w->path), why);
  else h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read attribute '%s' of '%s'", w->f->name, name, shown(w->path));
  return NULL;
}

/* Count `bytes` against the file's attribute budget. */
static bool attr_budget(walk *w, uint64_t bytes) {
  if (bytes > w->attr_budget - w->attr_bytes) return false;
  w->attr_bytes += bytes;
  return true;
}

/* A string attribute's n strings as JSON (one string when scalar). */
static cJSON *attr_strings(walk *w, const char *name, hid_t a, hid_t t, hssize_t n, bool scalar) {
  cJSON *out = scalar ? NULL : cJSON_CreateArray();
  if (!scalar && !out) return oom(w), NULL;
  bool ok = true;
  if (H5Tis_variable_str(t) > 0) {
    /* Not read: libhdf5 1.10 reads variable-length strings from the global
     * heap without checking it, and a corrupt heap crashes it (found by
     * fuzz/fuzz_h5.c). Such an attribute is listed as null. */
    cJSON_Delete(out);
    out = cJSON_CreateNull();
    if (!out) return oom(w), NULL;
    return out;
  } else {
    size_t size = H5Tget_size(t);
    char *buf = NULL, *one = NULL;
    hid_t mt = H5I_INVALID_HID;
    if (size == 0 || (uint64_t)n > (w->attr_budget - w->attr_bytes) / size || !attr_budget(w, (uint64_t)n * size)) {
      ok = false;
      attr_fail(w, name, "the attributes pass their size budget");
    } else if (!(buf = malloc((size_t)n * size + 1)) || !(one = malloc(size + 1))) {
      ok = false;
      oom(w);
    } else if ((mt = H5Tcopy(t)) < 0 || H5Aread(a, mt, buf) < 0) {
      ok = false;
      attr_fail(w, name, NULL);
    }
    bool space_pad = ok && H5Tget_strpad(t) == H5T_STR_SPACEPAD;
    for (hssize_t i = 0; ok && i < n; i++) {
      const char *p = buf + (size_t)i * size;
      size_t len = strnlen(p, size);
      while (space_pad && len > 0 && p[len - 1] == ' ') len--;
      memcpy(one, p, len);
      one[len] = '\0';
      cJSON *j = cJSON_CreateString(one);
      if (!j) ok = false, oom(w);
      else if (scalar) out = j;
      else cJSON_AddItemToArray(out, j);
    }
    if (mt >= 0) H5Tclose(mt);
    free(buf);
    free(one);
  }
  if (!ok) {
    cJSON_Delete(out);
    return NULL;
  }
  return out;
}

/* One attribute's value as JSON: strings, numbers, lists of either; null for
 * kinds tide does not read. NULL (tide's error set) on a failure. */
static cJSON *attr_value(walk *w, const char *name, hid_t a) {
  hid_t t = H5Aget_type(a), space = H5Aget_space(a);
  cJSON *out = NULL;
  bool done = false;
  if (t < 0 || space < 0) {
    attr_fail(w, name, NULL);
    done = true;
  } else {
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    int rank = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : 0;
    bool scalar = sc == H5S_SCALAR;
    H5T_class_t cls = H5Tget_class(t);
    if ((scalar || (sc == H5S_SIMPLE && rank == 1)) && n >= 0 && n <= H5_MAX_ATTR_STRINGS) {
      if (cls == H5T_STRING) {
        out = attr_strings(w, name, a, t, n, scalar);
        done = true;
      } else if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && n <= H5_MAX_ATTR_NUMBERS) {
        done = true;
        double *v = malloc(((size_t)n + 1) * sizeof *v);
        if (!v) oom(w);
        else if (H5Aread(a, H5T_NATIVE_DOUBLE, v) < 0) attr_fail(w, name, NULL);
        else if (scalar) out = cJSON_CreateNumber(v[0]);
        else if ((out = cJSON_CreateArray()))
          for (hssize_t i = 0; i < n; i++) cJSON_AddItemToArray(out, cJSON_CreateNumber(v[i]));
        if (v && !out && tide_last_status() == TIDE_OK) oom(w);
        free(v);
      }
    }
  }
  if (t >= 0) H5Tclose(t);
  if (space >= 0) H5Sclose(space);
  H5Eclear2(H5E_DEFAULT);
  if (!done) {
    out = cJSON_CreateNull();
    if (!out) oom(w);
  }
  return out;
}

typedef struct attr_walk {
  walk *w;
  cJSON *attrs;
  int count;
  tide_status st;
} attr_walk;

static herr_t on_attr(hid_t loc, const char *name, const H5A_info_t *info, void *ctx) {
  (void)info;
  attr_walk *aw = ctx;
  walk *w = aw->w;
  if (++aw->count > H5_MAX_ATTRS) {
    aw->st = bad(w, "'%s' has more than %d attributes", shown(w->path), H5_MAX_ATTRS);
    return -1;
  }
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) {
    attr_fail(w, name, NULL);
    aw->st = tide_last_status();
    return -1;
  }
  tide_clear_error();
  cJSON *v = attr_value(w, name, a);
  H5Aclose(a);
  if (!v) {
    aw->st = tide_last_status() ? tide_last_status() : oom(w);
    return -1;
  }
  cJSON_AddItemToObject(aw->attrs, name, v);
  return 0;
}

static tide_status add_attrs(walk *w, hid_t obj, cJSON *node) {
  cJSON *attrs = cJSON_AddObjectToObject(node, "attrs");
  if (!attrs) return oom(w);
  attr_walk aw = { w, attrs, 0, TIDE_OK };
  tide_clear_error();
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, on_attr, &aw) < 0) {
    if (aw.st) return aw.st;
    return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot list the attributes of '%s'", w->f->name, shown(w->path));
  }
  return aw.st;
}

static tide_status add_dataset(walk *w, hid_t ds, cJSON *node) {
  if (!cJSON_AddStringToObject(node, "kind", "dataset")) return oom(w);
  hid_t ft = H5Dget_type(ds), space = H5Dget_space(ds);
  tide_status st = TIDE_OK;
  char why[160] = "";
  int dtype = -1, ndim = 0;
  hsize_t dims[TIDE_MAX_DIMS];
  if (ft < 0 || space < 0) {
    st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read the type or shape of dataset '%s'", w->f->name, w->path);
  } else {
    hid_t mt = reading_type(ds, ft, &dtype, why, sizeof why);
    if (mt >= 0) H5Tclose(mt);
    H5Eclear2(H5E_DEFAULT);
    bool shaped = space_dims(space, &ndim, dims, why[0] ? why + strlen(why) : why,
                             sizeof why - (why[0] ? strlen(why) : 0));
    cJSON *shape = cJSON_AddArrayToObject(node, "shape");
    if (!shape) st = oom(w);
    for (int i = 0; shaped && shape && i < ndim; i++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)dims[i]));
    if (mt >= 0 && shaped) {
      if (!cJSON_AddStringToObject(node, "dtype", tide_dtype_name(dtype))) st = oom(w);
    } else {
      cJSON_AddNullToObject(node, "dtype");
      cJSON_AddStringToObject(node, "why", why);
    }
  }
  if (ft >= 0) H5Tclose(ft);
  if (space >= 0) H5Sclose(space);
  return st;
}

static tide_status walk_group(walk *w, hid_t g, int depth);

typedef struct names {
  char **v;
  int n, cap;
  bool failed;
} names;

static herr_t on_link(hid_t g, const char *name, const H5L_info_t *info, void *ctx) {
  (void)g;
  (void)info;
  names *ns = ctx;
  if (ns->n == ns->cap) {
    int cap = ns->cap ? ns->cap * 2 : 16;
    char **v = realloc(ns->v, (size_t)cap * sizeof *v);
    if (!v) return ns->failed = true, -1;
    ns->v = v;
    ns->cap = cap;
  }
  if (!(ns->v[ns->n] = strdup(name))) return ns->failed = true, -1;
  ns->n++;
  return ns->n > H5_MAX_OBJECTS ? -1 : 0;
}

/* The set of object addresses met: open addressing, kept at most half full
 * (slot value 0 is empty; addresses are stored plus one). */
static bool seen_before(const walk *w, haddr_t addr) {
  if (!w->cap_seen) return false;
  size_t mask = (size_t)w->cap_seen - 1;
  for (size_t i = (size_t)(addr * 0x9E3779B97F4A7C15ull) & mask;; i = (i + 1) & mask) {
    if (w->seen[i] == 0) return false;
    if (w->seen[i] == addr + 1) return true;
  }
}

static void seen_put(haddr_t *set, size_t cap, haddr_t stored) {
  size_t mask = cap - 1;
  size_t i = (size_t)((stored - 1) * 0x9E3779B97F4A7C15ull) & mask;
  while (set[i] != 0) i = (i + 1) & mask;
  set[i] = stored;
}

static tide_status note_seen(walk *w, haddr_t addr) {
  if (2 * (w->n_seen + 1) > w->cap_seen) {
    int cap = w->cap_seen ? w->cap_seen * 2 : 64;
    haddr_t *v = calloc((size_t)cap, sizeof *v);
    if (!v) return oom(w);
    for (int i = 0; i < w->cap_seen; i++)
      if (w->seen[i]) seen_put(v, (size_t)cap, w->seen[i]);
    free(w->seen);
    w->seen = v;
    w->cap_seen = cap;
  }
  seen_put(w->seen, (size_t)w->cap_seen, addr + 1);
  w->n_seen++;
  return TIDE_OK;
}

/* One member `name` of group g, whose path is w->path + "/" + name. */
static tide_status walk_member(walk *w, hid_t g, const char *name, int depth) {
  size_t base = strlen(w->path), len = strlen(name);
  if (len == 0) return bad(w, "'%s' has a member with an empty name", shown(w->path));
  if (base + 1 + len > H5_MAX_PATH) return bad(w, "a path under '%s' is longer than %d bytes", shown(w->path), H5_MAX_PATH);
  H5L_info_t li;
  if (H5Lget_info(g, name, &li, H5P_DEFAULT) < 0)
    return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read the link '%s' in '%s'", w->f->name, name, shown(w->path));
  if (base) w->path[base] = '/';
  memcpy(w->path + base + (base ? 1 : 0), name, len + 1);
  tide_status st = TIDE_OK;
  if (li.type != H5L_TYPE_HARD) {
    st = bad(w, "'%s' is %s link; tide follows only hard links", w->path,
             li.type == H5L_TYPE_SOFT ? "a soft" : li.type == H5L_TYPE_EXTERNAL ? "an external" : "a user-defined");
  } else if (++w->objects > H5_MAX_OBJECTS) {
    st = bad(w, "it holds more than %d objects", H5_MAX_OBJECTS);
  } else {
    H5O_info_t oi;
    hid_t obj = H5I_INVALID_HID;
    if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
      st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read object '%s'", w->f->name, w->path);
    } else if (seen_before(w, oi.addr)) {
      st = bad(w, "'%s' is an object already met under another name (a cycle or a second link)", w->path);
    } else if ((st = note_seen(w, oi.addr)) == TIDE_OK) {
      if (oi.type == H5O_TYPE_GROUP || oi.type == H5O_TYPE_DATASET) {
        cJSON *node = cJSON_CreateObject();
        if (!node || !cJSON_AddStringToObject(node, "path", w->path)) {
          cJSON_Delete(node);
          st = oom(w);
        } else {
          cJSON_AddItemToArray(w->list, node);
          obj = H5Oopen(g, name, H5P_DEFAULT);
          if (obj < 0) st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot open object '%s'", w->f->name, w->path);
        }
        if (!st && oi.type == H5O_TYPE_DATASET) st = add_dataset(w, obj, node);
        if (!st && oi.type == H5O_TYPE_GROUP && !cJSON_AddStringToObject(node, "kind", "group")) st = oom(w);
        if (!st) st = add_attrs(w, obj, node);
        if (!st && oi.type == H5O_TYPE_GROUP) st = walk_group(w, obj, depth + 1);
      }
      /* named datatypes and other objects hold no weights: left out */
    }
    if (obj >= 0) H5Oclose(obj);
  }
  w->path[base] = '\0';
  return st;
}

static tide_status walk_group(walk *w, hid_t g, int depth) {
  if (depth > H5_MAX_DEPTH) return bad(w, "its groups nest deeper than %d", H5_MAX_DEPTH);
  names ns = { 0 };
  hsize_t idx = 0;
  tide_status st = TIDE_OK;
  if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, on_link, &ns) < 0) {
    if (ns.failed) st = oom(w);
    else if (ns.n > H5_MAX_OBJECTS) st = bad(w, "it holds more than %d objects", H5_MAX_OBJECTS);
    else st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot list group '%s'", w->f->name, shown(w->path));
  }
  for (int i = 0; i < ns.n && !st; i++) st = walk_member(w, g, ns.v[i], depth);
  for (int i = 0; i < ns.n; i++) free(ns.v[i]);
  free(ns.v);
  return st;
}

static tide_status walk_file(tide_h5 *f) {
  walk w = { .f = f };
  w.attr_budget = (uint64_t)f->image_n * 2 + ((uint64_t)1 << 20);
  w.list = cJSON_CreateArray();
  if (!w.list) return oom(&w);
  tide_status st = TIDE_OK;
  hid_t root = H5Gopen2(f->file, "/", H5P_DEFAULT);
  H5O_info_t oi;
  if (root < 0 || H5Oget_info2(root, &oi, H5O_INFO_BASIC) < 0) {
    st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot open the root group", f->name);
  } else {
    cJSON *node = cJSON_CreateObject();
    if (!node || !cJSON_AddStringToObject(node, "path", "") || !cJSON_AddStringToObject(node, "kind", "group")) {
      cJSON_Delete(node);
      st = oom(&w);
    } else {
      cJSON_AddItemToArray(w.list, node);
      st = note_seen(&w, oi.addr);
      if (!st) st = add_attrs(&w, root, node);
      if (!st) st = walk_group(&w, root, 0);
    }
  }
  if (root >= 0) H5Gclose(root);
  if (!st) {
    f->tree = cJSON_PrintUnformatted(w.list);
    if (!f->tree) st = oom(&w);
  }
  cJSON_Delete(w.list);
  free(w.seen);
  return st;
}

unsigned long long h5_next_id(void) {
  static unsigned long long counter;
  return __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
}

/* Open the n bytes at data read-only with libhdf5's core driver (which
 * copies them: the caller may free data afterwards) and walk the file.
 * Not H5LTopen_file_image: it leaks its bookkeeping on every open. */
static tide_h5 *open_image(tide_h5 *f, const void *data, size_t n) {
  h5_quiet();
  f->image_n = n;
  if (n < 8) {
    tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is not an HDF5 file (%zu bytes)", f->name, n);
    tide_h5_close(f);
    return NULL;
  }
  /* the name only has to be unique among the files this process has open */
  char inner[64];
  snprintf(inner, sizeof inner, "tide-h5-read-%llu", h5_next_id());
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, (size_t)1 << 16, 0) < 0 || H5Pset_file_image(fapl, (void *)data, n) < 0) {
    h5_fail(TIDE_ERR_MEMORY, "hdf5: cannot hold '%s' in memory (%zu bytes)", f->name, n);
    if (fapl >= 0) H5Pclose(fapl);
    tide_h5_close(f);
    return NULL;
  }
  f->file = H5Fopen(inner, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (f->file < 0) {
    f->file = H5I_INVALID_HID;
    h5_fail(TIDE_ERR_VALUE, "hdf5: '%s' is not a readable HDF5 file", f->name);
    tide_h5_close(f);
    return NULL;
  }
  if (walk_file(f)) {
    tide_h5_close(f);
    return NULL;
  }
  return f;
}

static tide_h5 *new_handle(const char *name);

tide_h5 *h5_open_image_here(const char *name, const void *data, size_t n) {
  tide_h5 *f = new_handle(name);
  return f ? open_image(f, data, n) : NULL;
}

int h5_read_in_process = -1;

/* f (a new handle) opened over the n bytes at data, in a reader process unless told otherwise. */
static tide_h5 *open_checked(tide_h5 *f, const void *data, size_t n) {
  if (h5_read_in_process < 0) {
    const char *env = getenv("TIDE_H5_IN_PROCESS");
    h5_read_in_process = env && strcmp(env, "1") == 0;
  }
  return h5_read_in_process ? open_image(f, data, n) : h5_open_image_isolated(f, data, n);
}

static tide_h5 *new_handle(const char *name) {
  tide_h5 *f = calloc(1, sizeof *f);
  if (f) {
    f->file = H5I_INVALID_HID;
    f->name = strdup(name ? name : "(memory)");
  }
  if (!f || !f->name) {
    free(f);
    tide_set_error(TIDE_ERR_MEMORY, "hdf5: out of memory");
    return NULL;
  }
  return f;
}

tide_h5 *tide_h5_open(const char *path) {
  if (!path) return tide_set_error(TIDE_ERR_VALUE, "hdf5: the path is NULL"), NULL;
  tide_h5 *f = new_handle(path);
  if (!f) return NULL;
  unsigned char *bytes = NULL;
  size_t n = 0;
  if (file_bytes_read(path, "hdf5", H5_MAX_FILE, &bytes, &n)) {
    tide_h5_close(f);
    return NULL;
  }
  /* a file of another format is named (what it is, which tide function reads it) */
  static const unsigned char SIG[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
  bool signed_h5 = false;
  for (size_t at = 0; at + 8 <= n && !signed_h5; at = at ? at * 2 : 512) signed_h5 = memcmp(bytes + at, SIG, 8) == 0;
  const char *phrase = NULL;
  if (!signed_h5 && tide_file_kind(path, &phrase) != TIDE_FILE_HDF5 && phrase) {
    tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is not an HDF5 file: it is %s", path, phrase);
    free(bytes);
    tide_h5_close(f);
    return NULL;
  }
  f = open_checked(f, bytes, n);
  free(bytes);
  return f;
}

tide_h5 *tide_h5_open_memory(const void *data, size_t n, const char *name) {
  if (!data && n) return tide_set_error(TIDE_ERR_VALUE, "hdf5: the data pointer is NULL"), NULL;
  tide_h5 *f = new_handle(name);
  if (!f) return NULL;
  return open_checked(f, data, n);
}

void tide_h5_close(tide_h5 *f) {
  if (!f) return;
  if (f->file >= 0) {
    h5_quiet();
    H5Fclose(f->file);
    H5Eclear2(H5E_DEFAULT);
  }
  if (f->isolated) h5_free_isolated(f);
  free(f->tree);
  free(f->out);
  free(f->name);
  free(f);
}

const char *tide_h5_tree(const tide_h5 *f) { return f ? f->tree : NULL; }

/* ---- reading datasets --------------------------------------------------- */

/* Refuse storage tide will not read: external files, virtual datasets,
 * filters other than libhdf5's built-in deflate, shuffle and fletcher32,
 * too many chunks. */
static tide_status check_storage(tide_h5 *f, const char *path, hid_t ds, uint64_t declared) {
  hid_t dcpl = H5Dget_create_plist(ds);
  if (dcpl < 0) return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read how dataset '%s' is stored", f->name, path);
  tide_status st = TIDE_OK;
  H5D_layout_t layout = H5Pget_layout(dcpl);
  int ext = H5Pget_external_count(dcpl);
  int nf = H5Pget_nfilters(dcpl);
  if (layout == H5D_VIRTUAL) {
    st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' is virtual (it reads other files); refused",
                        f->name, path);
  } else if (ext != 0) {
    st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' keeps its data in external files; refused",
                        f->name, path);
  } else if (layout < 0 || nf < 0) {
    st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read how dataset '%s' is stored", f->name, path);
  }
  for (int i = 0; !st && i < nf; i++) {
    unsigned flags = 0, conf = 0;
    size_t nv = 0;
    char fname[64];
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nv, NULL, sizeof fname, fname, &conf);
    if (id != H5Z_FILTER_DEFLATE && id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
      st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' needs filter %d, which tide does not read "
                          "(deflate, shuffle and fletcher32 only)", f->name, path, (int)id);
  }
  if (!st && layout == H5D_CHUNKED && declared > 0) {
    hsize_t chunk[32];
    int r = H5Pget_chunk(dcpl, 32, chunk);
    hid_t space = H5Dget_space(ds);
    hsize_t dims[32];
    int dr = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
    if (space >= 0) H5Sclose(space);
    double chunks = 1;
    for (int k = 0; k < r && k < dr; k++) chunks *= chunk[k] ? (double)((dims[k] + chunk[k] - 1) / chunk[k]) : 1e30;
    if (r < 0 || dr < 0 || r != dr || chunks > H5_MAX_CHUNKS)
      st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' is cut into too many chunks (at most %d)",
                          f->name, path, H5_MAX_CHUNKS);
  }
  H5Pclose(dcpl);
  H5Eclear2(H5E_DEFAULT);
  return st;
}

tide_status tide_h5_read(tide_h5 *f, const char *path, tide_tensor *out) {
  if (!f || !path || !out) return tide_set_error(TIDE_ERR_VALUE, "hdf5: read: NULL argument");
  if (f->writing) return tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s' is being written, not read", f->name);
  return f->isolated ? h5_read_isolated(f, path, out) : h5_read_here(f, path, out, false);
}

static void free_plain(void *ctx, void *data) {
  (void)ctx;
  free(data);
}

/* out: a new dtype tensor of dims in malloc's memory (see h5_read_here). */
static tide_status init_plain(tide_tensor *out, int dtype, int ndim, const int64_t *dims, uint64_t bytes) {
  void *data = malloc(bytes ? (size_t)bytes : 1);
  if (!data) return tide_set_error(TIDE_ERR_MEMORY, "hdf5: out of memory (%llu bytes)", (unsigned long long)bytes);
  tide_status st = tide_tensor_wrap(out, data, dtype, ndim, ndim ? dims : NULL, NULL, free_plain, NULL);
  if (st) free(data);
  return st;
}

tide_status h5_read_here(tide_h5 *f, const char *path, tide_tensor *out, bool plain_malloc) {
  h5_quiet();
  hid_t ds = H5Dopen2(f->file, path, H5P_DEFAULT);
  if (ds < 0) return h5_fail(TIDE_ERR_VALUE, "hdf5: '%s' has no dataset '%s'", f->name, path);
  hid_t ft = H5Dget_type(ds), space = H5Dget_space(ds), mt = H5I_INVALID_HID;
  tide_status st = TIDE_OK;
  char why[160] = "";
  int dtype = -1, ndim = 0;
  hsize_t hd[TIDE_MAX_DIMS];
  int64_t dims[TIDE_MAX_DIMS];
  if (ft < 0 || space < 0) {
    st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read the type or shape of dataset '%s'", f->name, path);
  } else if ((mt = reading_type(ds, ft, &dtype, why, sizeof why)) < 0) {
    st = tide_set_error(TIDE_ERR_DTYPE, "hdf5: '%s': dataset '%s' holds %s, which tide cannot read", f->name, path,
                        why);
  } else if (!space_dims(space, &ndim, hd, why, sizeof why)) {
    st = tide_set_error(TIDE_ERR_SHAPE, "hdf5: '%s': dataset '%s' has %s", f->name, path, why);
  } else {
    uint64_t n = 1, declared = 0;
    bool over = false;
    for (int k = 0; k < ndim; k++) {
      dims[k] = (int64_t)hd[k];
      if (hd[k] > ((uint64_t)1 << 48) || __builtin_mul_overflow(n, (uint64_t)hd[k], &n)) over = true;
    }
    if (over || __builtin_mul_overflow(n, (uint64_t)tide_dtype_size(dtype), &declared) || declared > H5_MAX_DATASET) {
      st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' declares an absurd size", f->name, path);
    } else {
      uint64_t stored = H5Dget_storage_size(ds);
      H5Eclear2(H5E_DEFAULT);
      if (declared > H5_BOMB_FLOOR && declared / 1000 > stored)
        st = tide_set_error(TIDE_ERR_VALUE, "hdf5: '%s': dataset '%s' declares %llu bytes but stores only %llu; "
                            "refusing a likely shape or decompression bomb", f->name, path,
                            (unsigned long long)declared, (unsigned long long)stored);
      if (!st) st = check_storage(f, path, ds, declared);
      if (!st)
        st = plain_malloc ? init_plain(out, dtype, ndim, dims, declared)
                          : tide_tensor_init_heap(out, dtype, ndim, ndim ? dims : NULL);
      if (!st && n > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, (void *)out->data) < 0) {
        st = h5_fail(TIDE_ERR_VALUE, "hdf5: '%s': cannot read dataset '%s'", f->name, path);
        tide_tensor_release(out);
      }
      if (!st && dtype == TIDE_BOOL) {
        unsigned char *p = (unsigned char *)out->data;
        for (uint64_t k = 0; k < n; k++) p[k] = p[k] != 0;
      }
    }
  }
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (space >= 0) H5Sclose(space);
  H5Dclose(ds);
  H5Eclear2(H5E_DEFAULT);
  return st;
}
