/* io/zip_file.c — zip archives over libzip: reading from bytes held in
 * memory (the directory checked at open, each entry's size and method before
 * it is inflated, its CRC after), and writing stored entries atomically. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zip.h>

#include "atomic_file.h"
#include "file_bytes.h"
#include "tide/zip.h"

enum { ZIP_MAX_ENTRIES = 65536, ZIP_MAX_NAME = 4096 };
static const size_t ZIP_MAX_FILE = (size_t)16 << 30;
/* deflate expands at most 1032:1; a stored entry's size is its compressed size */
static const uint64_t DEFLATE_MAX_RATIO = 1032;

struct tide_zip {
  zip_t *za;
  char *name;
  unsigned char *bytes; /* the archive; libzip reads it in place */
  size_t n;
  int64_t count;
  char **names;
  uint64_t *sizes;
  unsigned char *entry; /* the last entry read */
};

static tide_status bad(const tide_zip *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status bad(const tide_zip *z, const char *fmt, ...) {
  char what[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return tide_set_error(TIDE_ERR_VALUE, "zip: '%s' is not a readable zip archive: %s", z->name, what);
}

static tide_status oom(const tide_zip *z) {
  return tide_set_error(TIDE_ERR_MEMORY, "zip: out of memory reading '%s'", z->name);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Check the directory and note every entry's name and size. */
static tide_status index_entries(tide_zip *z) {
  zip_int64_t count = zip_get_num_entries(z->za, 0);
  if (count < 0) return bad(z, "its directory cannot be read");
  if (count > ZIP_MAX_ENTRIES) return bad(z, "it has %lld entries (at most %d)", (long long)count, ZIP_MAX_ENTRIES);
  z->names = calloc((size_t)count + 1, sizeof *z->names);
  z->sizes = calloc((size_t)count + 1, sizeof *z->sizes);
  if (!z->names || !z->sizes) return oom(z);
  for (zip_int64_t i = 0; i < count; i++) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z->za, (zip_uint64_t)i, 0, &st) != 0)
      return bad(z, "entry %lld: %s", (long long)i, zip_error_strerror(zip_get_error(z->za)));
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((st.valid & need) != need || !st.name) return bad(z, "entry %lld lacks its name or sizes", (long long)i);
    size_t len = strlen(st.name);
    if (len == 0 || len > ZIP_MAX_NAME) return bad(z, "entry %lld has a name of %zu bytes", (long long)i, len);
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
      return bad(z, "entry '%s' is encrypted", st.name);
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.size != st.comp_size)
        return bad(z, "entry '%s' is stored but says %llu bytes in %llu", st.name, (unsigned long long)st.size,
                   (unsigned long long)st.comp_size);
    } else if (st.comp_method == ZIP_CM_DEFLATE) {
      if (st.size / DEFLATE_MAX_RATIO > st.comp_size + 1)
        return bad(z, "entry '%s' says it inflates %llu bytes to %llu, more than deflate can", st.name,
                   (unsigned long long)st.comp_size, (unsigned long long)st.size);
    } else {
      return bad(z, "entry '%s' is compressed with method %d (tide reads stored and deflated entries)", st.name,
                 (int)st.comp_method);
    }
    if (st.comp_size > z->n) return bad(z, "entry '%s' says it holds more bytes than the archive", st.name);
    if (!(z->names[i] = strdup(st.name))) return oom(z);
    z->sizes[i] = st.size;
    z->count = i + 1;
  }
  char **sorted = malloc(((size_t)count + 1) * sizeof *sorted);
  if (!sorted) return oom(z);
  memcpy(sorted, z->names, (size_t)count * sizeof *sorted);
  qsort(sorted, (size_t)count, sizeof *sorted, by_name);
  tide_status st = TIDE_OK;
  for (zip_int64_t i = 1; i < count && !st; i++)
    if (strcmp(sorted[i - 1], sorted[i]) == 0) st = bad(z, "two entries are called '%s'", sorted[i]);
  free(sorted);
  return st;
}

static tide_zip *open_bytes(tide_zip *z) {
  /* libzip takes an empty file for an empty archive; a real one has at
   * least its 22-byte end-of-directory record */
  if (z->n < 22) {
    bad(z, "it has %zu bytes, fewer than any zip archive", z->n);
    tide_zip_close(z);
    return NULL;
  }
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src = zip_source_buffer_create(z->bytes, z->n, 0, &err);
  if (src) {
    z->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    if (!z->za) zip_source_free(src);
  }
  tide_status st = TIDE_OK;
  if (!z->za) st = bad(z, "%s", zip_error_strerror(&err));
  zip_error_fini(&err);
  if (!st) st = index_entries(z);
  if (st) {
    tide_zip_close(z);
    return NULL;
  }
  return z;
}

static tide_zip *new_zip(const char *name) {
  tide_zip *z = calloc(1, sizeof *z);
  if (!z || !(z->name = strdup(name ? name : "(memory)"))) {
    free(z);
    return tide_set_error(TIDE_ERR_MEMORY, "zip: out of memory"), NULL;
  }
  return z;
}

tide_zip *tide_zip_open(const char *path) {
  if (!path) return tide_set_error(TIDE_ERR_VALUE, "zip: the path is NULL"), NULL;
  tide_zip *z = new_zip(path);
  if (!z) return NULL;
  if (file_bytes_read(path, "zip", ZIP_MAX_FILE, &z->bytes, &z->n)) {
    tide_zip_close(z);
    return NULL;
  }
  return open_bytes(z);
}

tide_zip *tide_zip_open_memory(const void *data, size_t n, const char *name) {
  if (!data && n) return tide_set_error(TIDE_ERR_VALUE, "zip: the data pointer is NULL"), NULL;
  tide_zip *z = new_zip(name);
  if (!z) return NULL;
  if (!(z->bytes = malloc(n ? n : 1))) {
    oom(z);
    tide_zip_close(z);
    return NULL;
  }
  if (n) memcpy(z->bytes, data, n);
  z->n = n;
  return open_bytes(z);
}

void tide_zip_close(tide_zip *z) {
  if (!z) return;
  if (z->za) zip_discard(z->za);
  for (int64_t i = 0; z->names && i < z->count; i++) free(z->names[i]);
  free(z->names);
  free(z->sizes);
  free(z->entry);
  free(z->bytes);
  free(z->name);
  free(z);
}

int64_t tide_zip_count(const tide_zip *z) { return z ? z->count : 0; }
const char *tide_zip_name(const tide_zip *z, int64_t i) { return z && i >= 0 && i < z->count ? z->names[i] : NULL; }
int64_t tide_zip_size(const tide_zip *z, int64_t i) {
  return z && i >= 0 && i < z->count ? (int64_t)z->sizes[i] : -1;
}

int64_t tide_zip_find(const tide_zip *z, const char *name) {
  for (int64_t i = 0; z && name && i < z->count; i++)
    if (strcmp(z->names[i], name) == 0) return i;
  return -1;
}

const void *tide_zip_read(tide_zip *z, int64_t i, size_t *n) {
  if (n) *n = 0;
  if (!z || !n) return tide_set_error(TIDE_ERR_VALUE, "zip: read: NULL argument"), NULL;
  if (i < 0 || i >= z->count)
    return tide_set_error(TIDE_ERR_INDEX, "zip: '%s' has no entry %lld", z->name, (long long)i), NULL;
  free(z->entry);
  z->entry = NULL;
  uint64_t size = z->sizes[i];
  if (size > ZIP_MAX_FILE)
    return tide_set_error(TIDE_ERR_VALUE, "zip: '%s': entry '%s' is too large (%llu bytes)", z->name, z->names[i],
                          (unsigned long long)size), NULL;
  unsigned char *buf = malloc(size ? (size_t)size : 1);
  if (!buf) return oom(z), NULL;
  zip_file_t *zf = zip_fopen_index(z->za, (zip_uint64_t)i, 0);
  if (!zf) {
    free(buf);
    return tide_set_error(TIDE_ERR_VALUE, "zip: '%s': cannot open entry '%s': %s", z->name, z->names[i],
                          zip_error_strerror(zip_get_error(z->za))), NULL;
  }
  uint64_t got = 0;
  bool ok = true;
  while (ok && got < size) {
    zip_int64_t r = zip_fread(zf, buf + got, size - got);
    if (r <= 0) ok = false;
    else got += (uint64_t)r;
  }
  char extra;
  if (ok && zip_fread(zf, &extra, 1) != 0) ok = false; /* longer than its directory says */
  char why[200];
  snprintf(why, sizeof why, "%s", ok ? "" : zip_error_strerror(zip_file_get_error(zf)));
  if (zip_fclose(zf) != 0 && ok) {
    ok = false;
    snprintf(why, sizeof why, "its CRC or length does not match its data");
  }
  if (!ok) {
    free(buf);
    return tide_set_error(TIDE_ERR_VALUE, "zip: '%s': entry '%s' cannot be read (%s)", z->name, z->names[i],
                          why[0] ? why : "it ends early"), NULL;
  }
  z->entry = buf;
  *n = (size_t)size;
  return buf;
}

/* ---- writing -------------------------------------------------------------- */

struct tide_zip_writer {
  zip_source_t *src; /* the archive's bytes, kept past zip_close */
  zip_t *za;
  bool done;
};

tide_zip_writer *tide_zip_writer_new(void) {
  tide_zip_writer *w = calloc(1, sizeof *w);
  if (!w) return tide_set_error(TIDE_ERR_MEMORY, "zip: out of memory"), NULL;
  zip_error_t err;
  zip_error_init(&err);
  w->src = zip_source_buffer_create(NULL, 0, 0, &err);
  if (w->src) {
    zip_source_keep(w->src);
    w->za = zip_open_from_source(w->src, ZIP_TRUNCATE, &err);
  }
  if (!w->src || !w->za) {
    tide_set_error(TIDE_ERR_MEMORY, "zip: cannot start an archive: %s", zip_error_strerror(&err));
    zip_error_fini(&err);
    tide_zip_writer_free(w);
    return NULL;
  }
  zip_error_fini(&err);
  return w;
}

tide_status tide_zip_writer_add(tide_zip_writer *w, const char *name, const void *data, size_t n) {
  if (!w || !name || (!data && n)) return tide_set_error(TIDE_ERR_VALUE, "zip: add: NULL argument");
  if (w->done) return tide_set_error(TIDE_ERR_VALUE, "zip: add: the archive was already saved");
  if (!*name || strlen(name) > ZIP_MAX_NAME) return tide_set_error(TIDE_ERR_VALUE, "zip: add: bad entry name");
  void *copy = malloc(n ? n : 1);
  if (!copy) return tide_set_error(TIDE_ERR_MEMORY, "zip: out of memory adding '%s' (%zu bytes)", name, n);
  if (n) memcpy(copy, data, n);
  zip_source_t *s = zip_source_buffer(w->za, copy, n, 1);
  if (!s) {
    free(copy);
    return tide_set_error(TIDE_ERR_MEMORY, "zip: cannot add '%s': %s", name, zip_error_strerror(zip_get_error(w->za)));
  }
  zip_int64_t idx = zip_file_add(w->za, name, s, ZIP_FL_ENC_UTF_8);
  if (idx < 0) {
    zip_source_free(s);
    return tide_set_error(TIDE_ERR_VALUE, "zip: cannot add '%s': %s", name, zip_error_strerror(zip_get_error(w->za)));
  }
  if (zip_set_file_compression(w->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_mtime(w->za, (zip_uint64_t)idx, time(NULL), 0) != 0)
    return tide_set_error(TIDE_ERR_VALUE, "zip: cannot add '%s': %s", name, zip_error_strerror(zip_get_error(w->za)));
  return TIDE_OK;
}

tide_status tide_zip_writer_save(tide_zip_writer *w, const char *path) {
  if (!w || !path) return tide_set_error(TIDE_ERR_VALUE, "zip: save: NULL argument");
  if (w->done) return tide_set_error(TIDE_ERR_VALUE, "zip: save: the archive was already saved");
  w->done = true;
  if (zip_close(w->za) != 0) {
    tide_status st = tide_set_error(TIDE_ERR_IO, "zip: cannot finish '%s': %s", path,
                                    zip_error_strerror(zip_get_error(w->za)));
    zip_discard(w->za);
    w->za = NULL;
    return st;
  }
  w->za = NULL;
  if (zip_source_open(w->src) != 0) return tide_set_error(TIDE_ERR_IO, "zip: cannot read back '%s'", path);
  zip_int64_t size = -1;
  if (zip_source_seek(w->src, 0, SEEK_END) == 0) size = zip_source_tell(w->src);
  unsigned char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
  bool ok = buf && zip_source_seek(w->src, 0, SEEK_SET) == 0 &&
            zip_source_read(w->src, buf, (zip_uint64_t)size) == size;
  zip_source_close(w->src);
  if (!ok) {
    free(buf);
    return tide_set_error(TIDE_ERR_IO, "zip: cannot read back the archive for '%s'", path);
  }
  atomic_file a;
  tide_status st = atomic_file_begin(&a, path, "zip");
  if (!st) {
    st = atomic_file_write(&a, buf, (size_t)size);
    if (st) atomic_file_abort(&a);
    else st = atomic_file_commit(&a);
  }
  free(buf);
  return st;
}

void tide_zip_writer_free(tide_zip_writer *w) {
  if (!w) return;
  if (w->za) zip_discard(w->za);
  if (w->src) zip_source_free(w->src);
  free(w);
}
