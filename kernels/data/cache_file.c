/* data/cache_file.c — the cache stage's file (tide/data_cache.h): elements
 * encoded into TFRecord-framed records (kernels/io's framing and reader),
 * written through an atomic file under a lock file, and read back with checks. */
#include "pipeline.h"
#include "tide/data_cache.h"
#include "../io/record.h"
#include "../io/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the cache file holds little-endian values: a big-endian host needs byte swaps in encode and decode"
#endif

static const char MAGIC[] = "tide.data.cache 1\n";
static const char END[] = "tide.data.cache end ";
#define MAGIC_LEN (sizeof MAGIC - 1)
#define END_LEN (sizeof END - 1)

/* ---- growable bytes ------------------------------------------------------------ */

typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
} bytes;

static bool reserve(bytes *b, size_t more) {
  if (b->n + more <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + more) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) return false;
  b->p = p, b->cap = cap;
  return true;
}

/* Append n bytes (room reserved by the caller). */
static inline void put(bytes *b, const void *src, size_t n) {
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}

/* The element offsets (in elements from t->data) of t's values in row-major
 * order, one at a time: the walk a strided view needs. */
typedef struct walk {
  int64_t idx[TIDE_MAX_DIMS], off;
} walk;

static inline void walk_step(walk *w, const tide_tensor *t) {
  for (int d = t->ndim - 1; d >= 0; d--) {
    w->off += t->strides[d];
    if (++w->idx[d] < t->dims[d]) return;
    w->off -= t->strides[d] * t->dims[d];
    w->idx[d] = 0;
  }
}

static bool dtypes_ok(const char *who, int ncomp, const int32_t *dtypes) {
  if (ncomp < 1 || ncomp > TIDE_DATA_MAX_COMPONENTS || !dtypes) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: an element needs 1 to %d components, got %d", who, TIDE_DATA_MAX_COMPONENTS, ncomp);
    return false;
  }
  for (int k = 0; k < ncomp; k++)
    if (dtypes[k] < 0 || dtypes[k] >= TIDE_NUM_DTYPES) {
      TIDE_FAIL(TIDE_ERR_DTYPE, "%s: component %d has the unknown dtype code %d", who, k, (int)dtypes[k]);
      return false;
    }
  return true;
}

/* ---- the lock ------------------------------------------------------------------ */

/* The pid written in a lock file, or 0 when it cannot be read. */
static long lock_owner(const char *lock) {
  FILE *f = tide_file_fopen(lock, "rb"); /* a FIFO planted as the lock is refused, not waited on */
  long pid = 0;
  if (f) {
    if (fscanf(f, "pid %ld", &pid) != 1) pid = 0;
    fclose(f);
  }
  return pid;
}

/* Create `lock` exclusively with this process's pid in it. One that a dead
 * process left (a killed run) is taken over; one a live process holds is
 * TF's AlreadyExists: one pass at a time writes a cache file. */
static tide_status lock_take(const char *lock, const char *path) {
  for (int attempt = 0; attempt < 3; attempt++) {
    int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      char line[48];
      int n = snprintf(line, sizeof line, "pid %ld\n", (long)getpid());
      bool ok = write(fd, line, (size_t)n) == n;
      close(fd);
      if (ok) return TIDE_OK;
      unlink(lock);
      return TIDE_FAIL(TIDE_ERR_IO, "cache: cannot write the lock file %s of the cache file %s", lock, path);
    }
    if (errno != EEXIST)
      return TIDE_FAIL(TIDE_ERR_IO, "cache: cannot write the cache file %s: its lock file %s cannot be made: %s", path,
                       lock, strerror(errno));
    long pid = lock_owner(lock);
    if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
      unlink(lock); /* its writer died: the lock is stale */
      continue;
    }
    char who[64] = "";
    if (pid == (long)getpid()) snprintf(who, sizeof who, ", held by this process");
    else if (pid > 0) snprintf(who, sizeof who, ", held by process %ld", pid);
    return TIDE_FAIL(TIDE_ERR_IO,
                     "cache: another pass is writing the cache file %s now (its lock file %s exists%s); as in "
                     "TF, one pass at a time writes a cache file: finish or close the other pass first, or delete "
                     "the lock file if no process is writing",
                     path, lock, who);
  }
  return TIDE_FAIL(TIDE_ERR_IO, "cache: cannot take the lock file %s of the cache file %s", lock, path);
}

/* ---- writer -------------------------------------------------------------------- */

struct tide_cache_writer {
  atomic_file file;
  bool file_open;
  char *lock;
  int ncomp;
  int32_t dtypes[TIDE_DATA_MAX_COMPONENTS];
  int64_t count;
  bytes rec; /* the record being encoded */
};

/* Frame rec[0..n) as a TFRecord and append it to the temporary file. */
static tide_status put_record(tide_cache_writer *w, const void *data, size_t n) {
  uint8_t head[TIDE_RECORD_HEADER_BYTES], foot[TIDE_RECORD_FOOTER_BYTES];
  tide_record_header(n, head);
  tide_record_footer(data, n, foot);
  tide_status st = atomic_file_write(&w->file, head, sizeof head);
  if (!st) st = atomic_file_write(&w->file, data, n);
  if (!st) st = atomic_file_write(&w->file, foot, sizeof foot);
  return st;
}

static void writer_free(tide_cache_writer *w) {
  if (w->file_open) atomic_file_abort(&w->file);
  if (w->lock) unlink(w->lock);
  free(w->lock);
  free(w->rec.p);
  free(w);
}

void tide_cache_writer_abort(tide_cache_writer *w) {
  if (w) writer_free(w);
}

tide_cache_writer *tide_cache_writer_open(const char *path, int ncomp, const int32_t *dtypes) {
  if (!path || !*path) {
    TIDE_FAIL(TIDE_ERR_VALUE, "cache: the cache file's name is empty");
    return NULL;
  }
  if (!dtypes_ok("cache", ncomp, dtypes)) return NULL;
  if (tide_file_check(path, true)) return NULL; /* before its lock is made beside it */
  tide_cache_writer *w = calloc(1, sizeof *w);
  size_t n = strlen(path);
  if (!w || !(w->lock = malloc(n + 6))) {
    free(w);
    TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    return NULL;
  }
  snprintf(w->lock, n + 6, "%s.lock", path);
  w->ncomp = ncomp;
  memcpy(w->dtypes, dtypes, (size_t)ncomp * sizeof *dtypes);
  if (lock_take(w->lock, path)) {
    free(w->lock);
    w->lock = NULL; /* not ours to remove */
    writer_free(w);
    return NULL;
  }
  /* temporaries that killed writers left beside the file (the lock is ours now) */
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  if (dir) (void)tide_remove_stale_temporaries(dir, slash ? slash + 1 : path, NULL, NULL);
  free(dir);
  tide_clear_error();
  if (atomic_file_begin(&w->file, path, "cache")) {
    writer_free(w);
    return NULL;
  }
  w->file_open = true;
  /* the header record */
  size_t need = MAGIC_LEN + 16;
  for (int k = 0; k < ncomp; k++) need += strlen(tide_dtype_name(dtypes[k])) + 1;
  if (!reserve(&w->rec, need + 1)) {
    writer_free(w);
    TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    return NULL;
  }
  int len = snprintf((char *)w->rec.p, need + 1, "%s%d\n", MAGIC, ncomp);
  for (int k = 0; k < ncomp; k++)
    len += snprintf((char *)w->rec.p + len, need + 1 - (size_t)len, "%s\n", tide_dtype_name(dtypes[k]));
  if (put_record(w, w->rec.p, (size_t)len)) {
    writer_free(w);
    return NULL;
  }
  return w;
}

/* One element into w->rec: per component u32 rank, i64 dims, the values. */
static tide_status encode(tide_cache_writer *w, const tide_tensor *const *elem) {
  bytes *b = &w->rec;
  b->n = 0;
  for (int k = 0; k < w->ncomp; k++) {
    const tide_tensor *t = elem[k];
    if (!t || (t->flags & TIDE_TENSOR_SYMBOLIC) || (!t->data && t->nelem > 0))
      return TIDE_FAIL(TIDE_ERR_VALUE, "cache: element %lld: component %d is not a tensor with data",
                       (long long)w->count, k);
    if (t->dt != w->dtypes[k])
      return TIDE_FAIL(TIDE_ERR_DTYPE, "cache: element %lld: component %d is %s, but the cache holds %s",
                       (long long)w->count, k, tide_dtype_name(t->dt), tide_dtype_name(w->dtypes[k]));
    uint32_t rank = (uint32_t)t->ndim;
    if (!reserve(b, 4 + 8 * (size_t)rank)) return TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    put(b, &rank, 4);
    put(b, t->dims, 8 * (size_t)rank);
    if (t->nelem == 0) continue;
    walk at = {{0}, 0};
    if (t->dt == TIDE_STRING) {
      for (int64_t i = 0; i < t->nelem; i++, walk_step(&at, t)) {
        int64_t len;
        const char *s = tide_string_at(t->data, at.off, &len);
        uint64_t len64 = (uint64_t)len;
        if (!reserve(b, 8 + (size_t)len)) return TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
        put(b, &len64, 8);
        put(b, s, (size_t)len);
      }
      continue;
    }
    size_t size = tide_dtype_size(t->dt), total = (size_t)t->nelem * size;
    if (!reserve(b, total)) return TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    if (tide_tensor_is_contiguous(t)) {
      put(b, t->data, total);
    } else {
      for (int64_t i = 0; i < t->nelem; i++, walk_step(&at, t)) put(b, (const char *)t->data + at.off * (int64_t)size, size);
    }
  }
  return TIDE_OK;
}

tide_status tide_cache_writer_write(tide_cache_writer *w, int n, const tide_tensor *const *elem) {
  if (!w || !elem) return TIDE_FAIL(TIDE_ERR_VALUE, "cache: write needs a writer and an element");
  if (n != w->ncomp)
    return TIDE_FAIL(TIDE_ERR_VALUE, "cache: an element of %d components, but the cache holds %d", n, w->ncomp);
  tide_status st = encode(w, elem);
  if (!st) st = put_record(w, w->rec.p, w->rec.n);
  if (!st) w->count++;
  return st;
}

tide_status tide_cache_writer_finish(tide_cache_writer *w) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "cache: finish needs a writer");
  char end[64];
  int len = snprintf(end, sizeof end, "%s%lld", END, (long long)w->count);
  tide_status st = put_record(w, end, (size_t)len);
  if (!st) {
    w->file_open = false;
    st = atomic_file_commit(&w->file); /* fsync, rename, fsync of the folder; cleans up on failure */
  }
  writer_free(w);
  return st;
}

/* ---- reader -------------------------------------------------------------------- */

struct tide_cache_reader {
  tide_record_reader *rec;
  char *path;
  int ncomp;
  int32_t dtypes[TIDE_DATA_MAX_COMPONENTS];
  int64_t count;
  char *failed; /* the first failure's message, repeated by later calls */
};

static tide_status reader_fail(tide_cache_reader *r, tide_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tide_status reader_fail(tide_cache_reader *r, tide_status st, const char *fmt, ...) {
  char msg[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!r->failed) r->failed = strdup(msg);
  return tide_set_error(st, "%s", msg);
}

void tide_cache_reader_close(tide_cache_reader *r) {
  if (!r) return;
  tide_record_reader_close(r->rec);
  free(r->path);
  free(r->failed);
  free(r);
}

/* The next record, or NULL at the end of the file (*at: its byte offset). */
static const uint8_t *next_record(tide_cache_reader *r, size_t *len, uint64_t *at, tide_status *st) {
  *at = tide_record_reader_offset(r->rec);
  const uint8_t *data = NULL;
  int rc = tide_record_reader_next(r->rec, &data, len);
  *st = TIDE_OK;
  if (rc == 1) return data;
  if (rc < 0) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    *st = reader_fail(r, TIDE_ERR_IO, "cache: the cache file %s cannot be read: %s (delete it to rebuild the cache)",
                      r->path, msg);
  }
  return NULL;
}

/* Check the header record against the dataset's components. */
static tide_status check_header(tide_cache_reader *r, const uint8_t *d, size_t n, tide_status st) {
  if (st) return st;
  if (!d || n < MAGIC_LEN || memcmp(d, MAGIC, MAGIC_LEN) != 0 || n > 65536)
    return reader_fail(r, TIDE_ERR_IO,
                       "cache: %s is not a tide cache file (its first record at byte offset 0 is not a cache "
                       "header); delete it or choose another filename",
                       r->path);
  char *text = strndup((const char *)d + MAGIC_LEN, n - MAGIC_LEN);
  if (!text) return reader_fail(r, TIDE_ERR_MEMORY, "cache: out of memory");
  char *lines[TIDE_DATA_MAX_COMPONENTS + 2];
  int nlines = 0;
  for (char *p = text, *nl; nlines < TIDE_DATA_MAX_COMPONENTS + 2 && (nl = strchr(p, '\n')); p = nl + 1) {
    *nl = '\0';
    lines[nlines++] = p;
  }
  char *endp = NULL;
  long ncomp = nlines ? strtol(lines[0], &endp, 10) : -1;
  if (nlines == 0 || endp == lines[0] || *endp || ncomp != r->ncomp || nlines != ncomp + 1) {
    st = reader_fail(r, TIDE_ERR_VALUE,
                     "cache: the cache file %s holds elements of %s components, but the dataset's have %d (a cache of "
                     "another pipeline? delete the file)",
                     r->path, nlines ? lines[0] : "?", r->ncomp);
    free(text);
    return st;
  }
  for (int k = 0; k < r->ncomp; k++) {
    if (strcmp(lines[k + 1], tide_dtype_name(r->dtypes[k])) != 0) {
      st = reader_fail(r, TIDE_ERR_DTYPE,
                       "cache: the cache file %s holds %s in component %d, but the dataset has %s (a cache of another "
                       "pipeline? delete the file)",
                       r->path, lines[k + 1], k, tide_dtype_name(r->dtypes[k]));
      free(text);
      return st;
    }
  }
  free(text);
  return TIDE_OK;
}

tide_cache_reader *tide_cache_reader_open(const char *path, int ncomp, const int32_t *dtypes) {
  if (!path || !*path) {
    TIDE_FAIL(TIDE_ERR_VALUE, "cache: the cache file's name is empty");
    return NULL;
  }
  if (!dtypes_ok("cache", ncomp, dtypes)) return NULL;
  tide_cache_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    return NULL;
  }
  r->ncomp = ncomp;
  memcpy(r->dtypes, dtypes, (size_t)ncomp * sizeof *dtypes);
  if (!(r->rec = tide_record_reader_open(path, ""))) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    TIDE_FAIL(TIDE_ERR_IO, "cache: cannot read the cache file: %s", msg);
    tide_cache_reader_close(r);
    return NULL;
  }
  size_t len = 0;
  uint64_t at;
  tide_status st;
  const uint8_t *d = next_record(r, &len, &at, &st);
  if (check_header(r, d, len, st)) {
    tide_cache_reader_close(r);
    return NULL;
  }
  return r;
}

/* Decode the element record d[0..n) (at byte offset `at`) into out. */
static tide_status decode(tide_cache_reader *r, const uint8_t *d, size_t n, uint64_t at, tide_tensor *const *out) {
  size_t pos = 0;
  char why[200];
  int k = 0; /* out[0 .. k) are made; out[k] may be */
  tide_status st = TIDE_OK;
  for (; k < r->ncomp; k++) {
    int dt = r->dtypes[k];
    uint32_t rank;
    if (n - pos < 4) goto short_record;
    memcpy(&rank, d + pos, 4);
    pos += 4;
    if (rank > TIDE_MAX_DIMS) {
      snprintf(why, sizeof why, "gives component %d rank %u", k, rank);
      goto corrupt;
    }
    if (n - pos < 8 * (size_t)rank) goto short_record;
    int64_t dims[TIDE_MAX_DIMS];
    memcpy(dims, d + pos, 8 * (size_t)rank);
    pos += 8 * (size_t)rank;
    uint64_t count = 1;
    for (uint32_t i = 0; i < rank; i++) {
      if (dims[i] < 0 || dims[i] > ((int64_t)1 << 40)) {
        snprintf(why, sizeof why, "gives component %d the dim %lld", k, (long long)dims[i]);
        goto corrupt;
      }
      uint64_t dim = (uint64_t)dims[i]; /* the count saturates at n + 1 (more than any record holds): checked below */
      count = dim && count > (n + 1) / dim ? n + 1 : count * dim;
    }
    /* every value takes at least a byte (a string its 8-byte length): check before allocating */
    size_t least = dt == TIDE_STRING ? 8 : tide_dtype_size(dt);
    if (count > (n - pos) / least) {
      snprintf(why, sizeof why, "gives component %d %llu values, more than it holds", k, (unsigned long long)count);
      goto corrupt;
    }
    if ((st = tide_tensor_init(out[k], dt, (int)rank, dims))) goto failed;
    if (dt == TIDE_STRING) {
      for (uint64_t i = 0; i < count; i++) {
        uint64_t len;
        if (n - pos < 8) goto short_record_k;
        memcpy(&len, d + pos, 8);
        pos += 8;
        if (len > n - pos) {
          snprintf(why, sizeof why, "holds a string of %llu bytes past its end", (unsigned long long)len);
          tide_tensor_release(out[k]);
          goto corrupt;
        }
        if ((st = tide_string_set(out[k], (int64_t)i, (const char *)d + pos, (int64_t)len))) {
          tide_tensor_release(out[k]);
          goto failed;
        }
        pos += (size_t)len;
      }
    } else if (count) {
      memcpy(out[k]->data, d + pos, (size_t)count * least);
      pos += (size_t)count * least;
    }
  }
  if (pos == n) return TIDE_OK;
  snprintf(why, sizeof why, "has %zu bytes left over after the element", n - pos);
  goto corrupt;
short_record_k:
  tide_tensor_release(out[k]);
short_record:
  snprintf(why, sizeof why, "ends after %zu bytes, but more data is due", n);
corrupt:
  st = reader_fail(r, TIDE_ERR_IO,
                   "cache: the cache file %s is corrupt: the element record at byte offset %" PRIu64
                   " %s (delete the file to rebuild the cache)",
                   r->path, at, why);
failed:
  for (int j = 0; j < k && j < r->ncomp; j++) tide_tensor_release(out[j]);
  return st;
}

tide_status tide_cache_reader_next(tide_cache_reader *r, int n, tide_tensor *const *out, int *end) {
  if (!r || !out || !end) return TIDE_FAIL(TIDE_ERR_VALUE, "cache: next needs a reader, headers and an end flag");
  if (r->failed) return tide_set_error(TIDE_ERR_IO, "%s", r->failed);
  if (n != r->ncomp)
    return TIDE_FAIL(TIDE_ERR_VALUE, "cache: the cache file holds elements of %d components, asked for %d", r->ncomp,
                     n);
  *end = 0;
  size_t len = 0;
  uint64_t at;
  tide_status st;
  const uint8_t *d = next_record(r, &len, &at, &st);
  if (st) return st;
  if (!d)
    return reader_fail(r, TIDE_ERR_IO,
                       "cache: the cache file %s ends at byte offset %" PRIu64
                       " without its end record (it is incomplete; delete it to rebuild the cache)",
                       r->path, at);
  if (len >= END_LEN && memcmp(d, END, END_LEN) == 0) {
    char num[32];
    size_t k = len - END_LEN < sizeof num - 1 ? len - END_LEN : sizeof num - 1;
    memcpy(num, d + END_LEN, k);
    num[k] = '\0';
    char *e = NULL;
    long long want = strtoll(num, &e, 10);
    if (e == num || *e || want != r->count)
      return reader_fail(r, TIDE_ERR_IO,
                         "cache: the cache file %s is corrupt: its end record at byte offset %" PRIu64
                         " counts %s elements, but %lld came before it",
                         r->path, at, num, (long long)r->count);
    *end = 1;
    return TIDE_OK;
  }
  if ((st = decode(r, d, len, at, out))) return st;
  r->count++;
  return TIDE_OK;
}
