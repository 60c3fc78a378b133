/* io/safetensors.c — the safetensors format: u64 little-endian header length, a JSON
 * header (cJSON) {name: {dtype, shape, data_offsets}, __metadata__: {k: v}}, raw data. */
#include "file_bytes.h"
#include "atomic_file.h"
#include "../core/internal.h"
#include "../core/utf8.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian machine (safetensors data are little-endian)"
#endif

/* Python's safetensors refuses headers over 100 MB; so does tide. */
enum { MAX_HEADER_BYTES = 100000000 };

/* cJSON makes a 64-byte node per JSON value: a 100 MB header of "[0,0,0,..."
 * would take gigabytes. A safetensors header nests 3 deep and has about 15
 * values per tensor, so 4M values (~300 MB of nodes at worst) allow some
 * 270,000 tensors, more than any model file holds. */
enum { MAX_JSON_VALUES = 1 << 22, MAX_JSON_DEPTH = 3 };

/* Dims and offsets above 2^53 cannot come exactly through JSON numbers (doubles). */
#define MAX_JSON_INT 9007199254740992.0

typedef struct entry {
  char *name;
  int32_t dtype;
  int32_t ndim;
  int64_t dims[TIDE_MAX_DIMS];
  uint64_t begin, end; /* in the data section */
} entry;

struct tide_safetensors {
  int fd;
  char *path;
  uint64_t data_start; /* 8 + header length */
  int64_t count;
  entry *entries;      /* sorted by begin */
  int64_t meta_count;
  char **meta_keys, **meta_values;
};

/* safetensors dtype codes, indexed by tide_dtype. */
static const char *const CODES[TIDE_NUM_DTYPES] = {
    [TIDE_FLOAT32] = "F32", [TIDE_FLOAT64] = "F64", [TIDE_FLOAT16] = "F16", [TIDE_BFLOAT16] = "BF16",
    [TIDE_INT8] = "I8",     [TIDE_UINT8] = "U8",    [TIDE_INT32] = "I32",   [TIDE_INT64] = "I64",
    [TIDE_BOOL] = "BOOL"};

/* The format's other dtypes: known, but tide has no dtype for them. */
static const char *const FOREIGN[] = {"I16", "U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3",
                                      "F6_E3M2", "F4", "C64", "F8_E4M3FNUZ", "F8_E5M2FNUZ", NULL};

static int dtype_of_code(const char *s) {
  for (int d = 0; d < TIDE_NUM_DTYPES; d++)
    if (CODES[d] && strcmp(CODES[d], s) == 0) return d;
  return -1;
}

/* ---- reading ---------------------------------------------------------------- */

void tide_safetensors_close(tide_safetensors *f) {
  if (!f) return;
  if (f->fd >= 0) close(f->fd);
  for (int64_t i = 0; i < f->count; i++) free(f->entries[i].name);
  for (int64_t i = 0; i < f->meta_count; i++) {
    free(f->meta_keys[i]);
    free(f->meta_values[i]);
  }
  free(f->entries);
  free(f->meta_keys);
  free(f->meta_values);
  free(f->path);
  free(f);
}

/* A JSON number that is a whole number in [0, 2^53], into *out. */
static bool json_count(const cJSON *v, uint64_t *out) {
  if (!cJSON_IsNumber(v)) return false;
  double d = v->valuedouble;
  if (!(d >= 0 && d <= MAX_JSON_INT) || d != (double)(uint64_t)d) return false;
  *out = (uint64_t)d;
  return true;
}

/* "what" about the file, as the error every check below raises. */
#define BAD(...) (bad_file(path, __VA_ARGS__), false)
#define OOM() (TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory reading '%s'", path), false)
static void bad_file(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_file(const char *path, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* A file of another format (an HDF5 .h5, a .keras zip, ...) says what it is. */
  const char *kind;
  int k = tide_file_kind(path, &kind);
  if (k != TIDE_FILE_UNKNOWN && k != TIDE_FILE_SAFETENSORS)
    TIDE_FAIL(TIDE_ERR_IO, "safetensors: '%s' is not a safetensors file: it is %s", path, kind);
  else
    TIDE_FAIL(TIDE_ERR_IO, "safetensors: '%s' is corrupt: %s", path, what);
}

/* A name shortened for messages (a hostile file's names may be long). */
static const char *short_name(const char *s, char *buf, size_t size) {
  size_t n = strlen(s);
  if (n < size) return s;
  snprintf(buf, size, "%.*s...", (int)(size - 4), s);
  return buf;
}

/* "[2, 3]" into buf (always terminated). */
static void fmt_shape(char *buf, size_t size, const entry *e) {
  size_t at = (size_t)snprintf(buf, size, "[");
  for (int k = 0; k < e->ndim && at < size; k++)
    at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, k ? ", " : "", e->dims[k]);
  if (at < size) snprintf(buf + at, size - at, "]");
}

/* Check one tensor's description and fill *e (name not yet set). */
static bool parse_entry(const char *path, const cJSON *item, uint64_t data_bytes, entry *e) {
  char nb[80];
  const char *name = short_name(item->string, nb, sizeof nb);
  if (!cJSON_IsObject(item)) return BAD("tensor '%s' is not described by a JSON object", name);
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
  const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
  if (!cJSON_IsString(dt)) return BAD("tensor '%s' has no dtype string", name);
  int d = dtype_of_code(dt->valuestring);
  if (d < 0) {
    char cb[40];
    const char *code = short_name(dt->valuestring, cb, sizeof cb);
    for (int i = 0; FOREIGN[i]; i++)
      if (strcmp(FOREIGN[i], dt->valuestring) == 0)
        return BAD("tensor '%s' has dtype %s, which tide has no dtype for (tide reads F32, F64, F16, BF16, I8, U8, "
                   "I32, I64, BOOL)", name, code);
    return BAD("tensor '%s' has an unknown dtype '%s'", name, code);
  }
  if (!cJSON_IsArray(shape)) return BAD("tensor '%s' has no shape list", name);
  int nd = cJSON_GetArraySize(shape);
  if (nd > TIDE_MAX_DIMS)
    return BAD("tensor '%s' has rank %d; tide tensors have at most %d dims", name, nd, TIDE_MAX_DIMS);
  e->dtype = d;
  e->ndim = nd;
  int k = 0;
  uint64_t elems = 1;
  bool overflow = false;
  for (const cJSON *v = shape->child; v; v = v->next, k++) {
    uint64_t dim;
    if (!json_count(v, &dim)) return BAD("tensor '%s': shape entry %d is not a non-negative integer", name, k);
    e->dims[k] = (int64_t)dim;
    if (__builtin_mul_overflow(elems, dim, &elems) || elems > (uint64_t)INT64_MAX) overflow = true;
  }
  char sb[160];
  fmt_shape(sb, sizeof sb, e);
  uint64_t bytes;
  if (overflow || __builtin_mul_overflow(elems, (uint64_t)tide_dtype_size(d), &bytes) ||
      bytes > (uint64_t)INT64_MAX)
    return BAD("tensor '%s' has an absurd shape %s (more elements than fit in memory)", name, sb);
  if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !json_count(offs->child, &e->begin) ||
      !json_count(offs->child->next, &e->end))
    return BAD("tensor '%s': data_offsets must be two non-negative integers [begin, end]", name);
  if (e->end < e->begin)
    return BAD("tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before they begin", name, e->begin,
               e->end);
  if (e->end > data_bytes)
    return BAD("tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] pass the end of the data (%" PRIu64
               " bytes)", name, e->begin, e->end, data_bytes);
  if (e->end - e->begin != bytes)
    return BAD("tensor '%s' has shape %s and dtype %s (%" PRIu64 " bytes), but its data_offsets [%" PRIu64
               ", %" PRIu64 "] hold %" PRIu64 " bytes", name, sb, CODES[d], bytes, e->begin, e->end,
               e->end - e->begin);
  return true;
}

/* Before cJSON allocates anything: the number of values and the nesting
 * depth, counted over the text (strings skipped). NULL when fine, else why. */
static const char *prescan(const char *text, size_t n, char *why, size_t size) {
  size_t values = 1;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < n; i++) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > MAX_JSON_DEPTH) {
        snprintf(why, size, "the header nests deeper than a safetensors header does (%d levels at byte %zu)", depth, i);
        return why;
      }
    } else if (c == '}' || c == ']') depth--;
    else if (c == ',' || c == ':') {
      if (++values > MAX_JSON_VALUES) {
        snprintf(why, size, "the header holds more than %d JSON values (a limit on the memory reading it takes)",
                 MAX_JSON_VALUES);
        return why;
      }
    }
  }
  return NULL;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static int by_offsets(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool parse_metadata(const char *path, tide_safetensors *f, const cJSON *meta) {
  if (cJSON_IsNull(meta)) return true;
  if (!cJSON_IsObject(meta)) return BAD("__metadata__ is not a JSON object");
  int n = cJSON_GetArraySize(meta);
  f->meta_keys = calloc((size_t)n + 1, sizeof(char *));
  f->meta_values = calloc((size_t)n + 1, sizeof(char *));
  if (!f->meta_keys || !f->meta_values) return OOM();
  for (const cJSON *v = meta->child; v; v = v->next) {
    char kb[80];
    if (!cJSON_IsString(v))
      return BAD("__metadata__ entry '%s' is not a string", short_name(v->string, kb, sizeof kb));
    int64_t i = f->meta_count;
    f->meta_keys[i] = strdup(v->string);
    f->meta_values[i] = strdup(v->valuestring);
    f->meta_count++;
    if (!f->meta_keys[i] || !f->meta_values[i]) return OOM();
  }
  /* Sorted by key (values move with their keys), duplicates refused. */
  for (int64_t i = 1; i < f->meta_count; i++) {
    for (int64_t j = i; j > 0 && strcmp(f->meta_keys[j - 1], f->meta_keys[j]) > 0; j--) {
      char *t = f->meta_keys[j]; f->meta_keys[j] = f->meta_keys[j - 1]; f->meta_keys[j - 1] = t;
      t = f->meta_values[j]; f->meta_values[j] = f->meta_values[j - 1]; f->meta_values[j - 1] = t;
    }
  }
  for (int64_t i = 1; i < f->meta_count; i++) {
    char kb[80];
    if (strcmp(f->meta_keys[i - 1], f->meta_keys[i]) == 0)
      return BAD("__metadata__ has the key '%s' twice", short_name(f->meta_keys[i], kb, sizeof kb));
  }
  return true;
}

/* Everything open checks once the header is parsed. */
static bool parse_header(const char *path, tide_safetensors *f, const cJSON *root, uint64_t data_bytes) {
  if (!cJSON_IsObject(root)) return BAD("the header is not a JSON object");
  int n = cJSON_GetArraySize(root);
  f->entries = calloc((size_t)n + 1, sizeof(entry));
  if (!f->entries) return OOM();
  int metas = 0;
  for (const cJSON *item = root->child; item; item = item->next) {
    if (strcmp(item->string, "__metadata__") == 0) {
      if (metas++) return BAD("__metadata__ appears twice");
      if (!parse_metadata(path, f, item)) return false;
      continue;
    }
    entry *e = &f->entries[f->count];
    if (!parse_entry(path, item, data_bytes, e)) return false;
    e->name = strdup(item->string);
    if (!e->name) return OOM();
    f->count++;
  }
  qsort(f->entries, (size_t)f->count, sizeof(entry), by_name);
  for (int64_t i = 1; i < f->count; i++) {
    char nb[80];
    if (strcmp(f->entries[i - 1].name, f->entries[i].name) == 0)
      return BAD("the tensor name '%s' appears twice", short_name(f->entries[i].name, nb, sizeof nb));
  }
  /* The byte ranges, in order, must tile the data section exactly. */
  qsort(f->entries, (size_t)f->count, sizeof(entry), by_offsets);
  uint64_t at = 0;
  for (int64_t i = 0; i < f->count; i++) {
    const entry *e = &f->entries[i];
    char nb[80], pb[80];
    if (e->begin < at)
      return BAD("tensor '%s' (bytes %" PRIu64 "-%" PRIu64 ") overlaps tensor '%s' (bytes %" PRIu64 "-%" PRIu64 ")",
                 short_name(e->name, nb, sizeof nb), e->begin, e->end,
                 short_name(f->entries[i - 1].name, pb, sizeof pb), f->entries[i - 1].begin,
                 f->entries[i - 1].end);
    if (e->begin > at)
      return BAD("bytes %" PRIu64 "-%" PRIu64 " of the data belong to no tensor (a gap before tensor '%s')", at,
                 e->begin, short_name(e->name, nb, sizeof nb));
    at = e->end;
  }
  if (at != data_bytes)
    return BAD("the tensors cover %" PRIu64 " bytes of data, but the file holds %" PRIu64 " after the header", at,
               data_bytes);
  return true;
}

tide_safetensors *tide_safetensors_open(const char *path) {
  if (!path) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: the path is NULL"), NULL;
  if (tide_file_check(path, false)) return NULL;
  /* A regular file only: a FIFO named by a hostile path must not hang the open. */
  int fd = tide_file_open(path, O_RDONLY, 0);
  if (fd < 0 && (errno == EISDIR || errno == EINVAL)) return bad_file(path, "it is not a regular file"), NULL;
  if (fd < 0) return TIDE_FAIL(TIDE_ERR_IO, "safetensors: cannot open '%s': %s", path, tide_file_why()), NULL;
  tide_safetensors *f = calloc(1, sizeof *f);
  if (!f) {
    close(fd);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory"), NULL;
  }
  f->fd = fd;
  f->path = strdup(path);
  struct stat sb;
  char *text = NULL;
  cJSON *root = NULL;
  bool ok = false;
  unsigned char len8[8];
  char why[160];
  uint64_t header_bytes = 0, size;
  size_t bad_at;
  if (!f->path) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory");
  } else if (fstat(fd, &sb) != 0) {
    TIDE_FAIL(TIDE_ERR_IO, "safetensors: cannot read '%s': %s", path, strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    bad_file(path, "it is not a regular file");
  } else if ((size = (uint64_t)sb.st_size) < 8) {
    bad_file(path, "it has %" PRIu64 " bytes; the header length alone takes 8", size);
  } else if (file_pread_all(fd, len8, 8, 0) != 0) {
    TIDE_FAIL(TIDE_ERR_IO, "safetensors: cannot read '%s': %s", path, errno ? strerror(errno) : "it shrank");
  } else {
    for (int i = 7; i >= 0; i--) header_bytes = (header_bytes << 8) | len8[i];
    if (header_bytes > size - 8) {
      bad_file(path, "its header length (%" PRIu64 " bytes) passes the end of the file (%" PRIu64 " bytes)", header_bytes, size);
    } else if (header_bytes > MAX_HEADER_BYTES) {
      bad_file(path, "its header length (%" PRIu64 " bytes) is absurd (at most %d)", header_bytes, MAX_HEADER_BYTES);
    } else if (header_bytes < 2) {
      bad_file(path, "its header (%" PRIu64 " bytes) is too short to be a JSON object", header_bytes);
    } else if (!(text = malloc(header_bytes + 1))) {
      TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory reading the header of '%s'", path);
    } else if (file_pread_all(fd, text, header_bytes, 8) != 0) {
      TIDE_FAIL(TIDE_ERR_IO, "safetensors: cannot read '%s': %s", path, errno ? strerror(errno) : "it shrank");
    } else if (text[0] != '{') {
      bad_file(path, "the header does not start with '{'");
    } else if ((bad_at = tide_utf8_invalid_at((const unsigned char *)text, (size_t)header_bytes)) < header_bytes) {
      bad_file(path, "the header is not valid UTF-8 (at byte %zu of %" PRIu64 ")", bad_at, header_bytes);
    } else if (prescan(text, (size_t)header_bytes, why, sizeof why)) {
      bad_file(path, "%s", why);
    } else {
      text[header_bytes] = '\0';
      const char *end = NULL;
      root = cJSON_ParseWithLengthOpts(text, (size_t)header_bytes, &end, false);
      size_t at = end ? (size_t)(end - text) : 0;
      while (root && at < header_bytes && (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' ||
                                           text[at] == '\r'))
        at++;
      if (!root) {
        bad_file(path, "the header is not valid JSON (at byte %zu of %" PRIu64 ")", at, header_bytes);
      } else if (at != header_bytes) {
        bad_file(path, "the header has %" PRIu64 " bytes after its JSON object that are not spaces", header_bytes - at);
      } else {
        f->data_start = 8 + header_bytes;
        ok = parse_header(path, f, root, size - f->data_start);
      }
    }
  }
  cJSON_Delete(root);
  free(text);
  if (!ok) {
    tide_safetensors_close(f);
    return NULL;
  }
  return f;
}

int64_t tide_safetensors_count(const tide_safetensors *f) { return f ? f->count : 0; }

const char *tide_safetensors_name(const tide_safetensors *f, int64_t i) {
  return f && i >= 0 && i < f->count ? f->entries[i].name : NULL;
}

int64_t tide_safetensors_find(const tide_safetensors *f, const char *name) {
  if (!f || !name) return -1;
  for (int64_t i = 0; i < f->count; i++)
    if (strcmp(f->entries[i].name, name) == 0) return i;
  return -1;
}

static tide_status check_index(const tide_safetensors *f, int64_t i) {
  if (!f) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: the file handle is NULL");
  if (i < 0 || i >= f->count)
    return TIDE_FAIL(TIDE_ERR_INDEX, "safetensors: tensor index %" PRId64 " is out of range ('%s' holds %" PRId64 ")",
                     i, f->path, f->count);
  return TIDE_OK;
}

tide_status tide_safetensors_info(const tide_safetensors *f, int64_t i, int32_t *dtype, int32_t *ndim,
                                  int64_t *dims) {
  tide_status st = check_index(f, i);
  if (st) return st;
  const entry *e = &f->entries[i];
  if (dtype) *dtype = e->dtype;
  if (ndim) *ndim = e->ndim;
  if (dims)
    for (int k = 0; k < e->ndim; k++) dims[k] = e->dims[k];
  return TIDE_OK;
}

tide_status tide_safetensors_read(tide_safetensors *f, int64_t i, tide_tensor *out) {
  tide_status st = check_index(f, i);
  if (st) return st;
  if (!out) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: the output tensor is NULL");
  const entry *e = &f->entries[i];
  st = tide_tensor_init(out, e->dtype, e->ndim, e->ndim ? e->dims : NULL);
  if (st) return st;
  size_t n = (size_t)(e->end - e->begin);
  if (n == 0) return TIDE_OK;
  if (file_pread_all(f->fd, out->data, n, f->data_start + e->begin) != 0) {
    int err = errno;
    tide_tensor_release(out);
    return TIDE_FAIL(TIDE_ERR_IO, "safetensors: cannot read tensor '%s' from '%s': %s", e->name, f->path,
                     err ? strerror(err) : "the file ended early (it changed after it was opened)");
  }
  if (e->dtype == TIDE_BOOL) {
    unsigned char *p = out->data;
    for (size_t k = 0; k < n; k++) p[k] = p[k] != 0;
  }
  return TIDE_OK;
}

int64_t tide_safetensors_metadata_count(const tide_safetensors *f) { return f ? f->meta_count : 0; }

const char *tide_safetensors_metadata_key(const tide_safetensors *f, int64_t i) {
  return f && i >= 0 && i < f->meta_count ? f->meta_keys[i] : NULL;
}

const char *tide_safetensors_metadata_value(const tide_safetensors *f, int64_t i) {
  return f && i >= 0 && i < f->meta_count ? f->meta_values[i] : NULL;
}

/* ---- writing ---------------------------------------------------------------- */

typedef struct out_entry {
  const char *name;
  const tide_tensor *t;
  uint64_t bytes;
} out_entry;

/* Python's order: larger elements first (so every tensor's data is aligned
 * to its element size, the header being padded to 8), then by name. */
static int out_order(const void *a, const void *b) {
  const out_entry *x = a, *y = b;
  size_t sx = tide_dtype_size(x->t->dt), sy = tide_dtype_size(y->t->dt);
  if (sx != sy) return sx > sy ? -1 : 1;
  return strcmp(x->name, y->name);
}

static cJSON *json_int(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIu64, v); /* exact, never "1e+17" as a double would print */
  return cJSON_CreateRaw(buf);
}

/* The header text, padded with spaces so the data start at a multiple of 8. */
static char *build_header(const out_entry *es, int64_t count, int64_t meta_count, const char *const *keys,
                          const char *const *values, size_t *len) {
  cJSON *root = cJSON_CreateObject();
  bool ok = root != NULL;
  if (ok && meta_count > 0) {
    cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
    ok = meta != NULL;
    for (int64_t i = 0; ok && i < meta_count; i++) ok = cJSON_AddStringToObject(meta, keys[i], values[i]) != NULL;
  }
  uint64_t at = 0;
  for (int64_t i = 0; ok && i < count; i++) {
    const tide_tensor *t = es[i].t;
    cJSON *o = cJSON_AddObjectToObject(root, es[i].name);
    ok = o && cJSON_AddStringToObject(o, "dtype", CODES[t->dt]);
    cJSON *shape = ok ? cJSON_AddArrayToObject(o, "shape") : NULL;
    cJSON *offs = shape ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
    ok = offs != NULL;
    for (int k = 0; ok && k < t->ndim; k++) ok = cJSON_AddItemToArray(shape, json_int((uint64_t)t->dims[k]));
    ok = ok && cJSON_AddItemToArray(offs, json_int(at)) && cJSON_AddItemToArray(offs, json_int(at + es[i].bytes));
    at += es[i].bytes;
  }
  char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (!text) return NULL;
  size_t n = strlen(text), padded = (n + 7) & ~(size_t)7;
  char *out = realloc(text, padded + 1);
  if (!out) {
    free(text);
    return NULL;
  }
  memset(out + n, ' ', padded - n);
  out[padded] = '\0';
  *len = padded;
  return out;
}

/* Tensor data as the file holds them: contiguous, bools as 0 and 1. */
static tide_status write_tensor(atomic_file *a, const tide_tensor *t) {
  if (t->nelem == 0) return TIDE_OK;
  tide_tensor copy;
  const tide_tensor *src;
  tide_status st = tide_contiguous_or_copy("safetensors", t, &copy, &src);
  if (st) {
    tide_tensor_release(&copy);
    return st;
  }
  size_t n = (size_t)src->nelem * tide_dtype_size(src->dt);
  if (src->dt == TIDE_BOOL) {
    unsigned char chunk[4096];
    const unsigned char *p = src->data;
    for (size_t k = 0; k < n && !st; k += sizeof chunk) {
      size_t m = n - k < sizeof chunk ? n - k : sizeof chunk;
      for (size_t j = 0; j < m; j++) chunk[j] = p[k + j] != 0;
      st = atomic_file_write(a, chunk, m);
    }
  } else {
    st = atomic_file_write(a, src->data, n);
  }
  tide_tensor_release(&copy);
  return st;
}

static tide_status check_save_args(const char *path, int64_t count, const char *const *names,
                                   const tide_tensor *const *tensors, int64_t meta_count, const char *const *keys,
                                   const char *const *values) {
  if (!path) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save: the path is NULL");
  if (count < 0 || meta_count < 0 || (count > 0 && (!names || !tensors)) || (meta_count > 0 && (!keys || !values)))
    return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': bad counts or NULL lists", path);
  for (int64_t i = 0; i < meta_count; i++) {
    if (!keys[i] || !values[i]) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': metadata %" PRId64
                                                 " has a NULL key or value", path, i);
    for (int64_t j = 0; j < i; j++) /* metadata are few: pairs are cheap */
      if (strcmp(keys[i], keys[j]) == 0)
        return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': the metadata key '%s' appears twice", path, keys[i]);
  }
  for (int64_t i = 0; i < count; i++) {
    const tide_tensor *t = tensors[i];
    const char *name = names[i];
    if (!name) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': name %" PRId64 " is NULL", path, i);
    if (strcmp(name, "__metadata__") == 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': '__metadata__' is reserved and cannot name a tensor",
                       path);
    if (!t) return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': tensor '%s' is NULL", path, name);
    if (t->flags & TIDE_TENSOR_SYMBOLIC)
      return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': tensor '%s' is symbolic (a value inside tide.trace) "
                       "and has no data to save", path, name);
    if (t->dev != TIDE_CPU)
      return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "safetensors: save '%s': tensor '%s' is not on the CPU", path, name);
    if (t->dt < 0 || t->dt >= TIDE_NUM_DTYPES || !CODES[t->dt])
      return TIDE_FAIL(TIDE_ERR_DTYPE, "safetensors: save '%s': tensor '%s' has a dtype safetensors cannot hold",
                       path, name);
    if (t->nelem < 0 || (t->nelem > 0 && !t->data))
      return TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': tensor '%s' has no data", path, name);
  }
  return TIDE_OK;
}

tide_status tide_safetensors_save(const char *path, int64_t count, const char *const *names,
                                  const tide_tensor *const *tensors, int64_t meta_count,
                                  const char *const *keys, const char *const *values) {
  tide_status st = check_save_args(path, count, names, tensors, meta_count, keys, values);
  if (st) return st;
  out_entry *es = calloc((size_t)count + 1, sizeof *es);
  if (!es) return TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory saving '%s'", path);
  for (int64_t i = 0; i < count; i++) {
    es[i].name = names[i];
    es[i].t = tensors[i];
    es[i].bytes = (uint64_t)tensors[i]->nelem * tide_dtype_size(tensors[i]->dt);
  }
  qsort(es, (size_t)count, sizeof *es, out_order);
  const char **sorted = count ? malloc((size_t)count * sizeof *sorted) : NULL;
  if (count && !sorted) st = TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory saving '%s'", path);
  for (int64_t i = 0; !st && i < count; i++) sorted[i] = names[i];
  if (!st && count > 1) qsort(sorted, (size_t)count, sizeof *sorted, by_string);
  for (int64_t i = 1; !st && i < count; i++)
    if (strcmp(sorted[i - 1], sorted[i]) == 0)
      st = TIDE_FAIL(TIDE_ERR_VALUE, "safetensors: save '%s': two tensors are named '%s'", path, sorted[i]);
  free(sorted);
  size_t header_len = 0;
  char *header = st ? NULL : build_header(es, count, meta_count, keys, values, &header_len);
  if (!st && !header) st = TIDE_FAIL(TIDE_ERR_MEMORY, "safetensors: out of memory building the header of '%s'", path);
  atomic_file a;
  if (!st) st = atomic_file_begin(&a, path, "safetensors");
  if (!st) {
    unsigned char len8[8];
    for (int k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)header_len >> (8 * k));
    st = atomic_file_write(&a, len8, 8);
    if (!st) st = atomic_file_write(&a, header, header_len);
    for (int64_t i = 0; i < count && !st; i++) st = write_tensor(&a, es[i].t);
    if (st) atomic_file_abort(&a);
    else st = atomic_file_commit(&a);
  }
  free(header);
  free(es);
  return st;
}
