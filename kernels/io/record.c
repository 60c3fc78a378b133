/* io/record.c — TFRecord files: writing records (plain, or deflated in place
 * as TF's ZlibOutputBuffer does) and reading them back with every check TF makes. */
#include "record.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "../core/internal.h"

enum { PLAIN, GZIP, ZLIB };
enum { CHUNK = 64 * 1024 };

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

void tide_record_header(uint64_t len, uint8_t out[12]) {
  put_u64(out, len);
  put_u32(out + 8, tide_crc32c_masked(out, 8));
}

void tide_record_footer(const void *data, size_t len, uint8_t out[4]) {
  put_u32(out, tide_crc32c_masked(data, len));
}

/* The compression named by TF's compression_type string, or -1 with an error. */
static int compression_of(const char *what, const char *path, const char *c) {
  if (!c || !*c) return PLAIN;
  if (strcmp(c, "GZIP") == 0) return GZIP;
  if (strcmp(c, "ZLIB") == 0) return ZLIB;
  TIDE_FAIL(TIDE_ERR_VALUE, "%s '%s': compression_type must be \"\", \"GZIP\" or \"ZLIB\", got \"%s\"", what, path, c);
  return -1;
}

/* zlib's window bits for a compression: 31 = gzip wrapper, 15 = zlib wrapper. */
static int window_bits(int comp) { return comp == GZIP ? 31 : 15; }

/* ---- writer ------------------------------------------------------------------ */

struct tide_record_writer {
  FILE *f;
  char *path;
  int comp;
  z_stream z;
  uint8_t *zout; /* CHUNK bytes of deflated output */
  bool failed;   /* a write failed: later ones fail too, the file is incomplete */
};

static tide_status write_failed(tide_record_writer *w, const char *doing) {
  w->failed = true;
  return TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter '%s': %s failed: %s", w->path, doing, strerror(errno));
}

/* Deflate data[0..n) with `flush` and write what comes out. */
static tide_status deflate_out(tide_record_writer *w, const void *data, size_t n, int flush) {
  w->z.next_in = (Bytef *)(uintptr_t)data;
  /* avail_in is 32-bit: feed a larger record in pieces */
  size_t left = n;
  do {
    uInt piece = left > (1u << 30) ? (1u << 30) : (uInt)left;
    w->z.avail_in = piece;
    left -= piece;
    int f = left ? Z_NO_FLUSH : flush;
    do {
      w->z.next_out = w->zout;
      w->z.avail_out = CHUNK;
      int rc = deflate(&w->z, f);
      if (rc == Z_STREAM_ERROR) {
        w->failed = true;
        return TIDE_FAIL(TIDE_ERR_INTERNAL, "TFRecordWriter '%s': deflate failed", w->path);
      }
      size_t have = CHUNK - w->z.avail_out;
      if (have && fwrite(w->zout, 1, have, w->f) != have) return write_failed(w, "write");
    } while (w->z.avail_out == 0);
  } while (left);
  return TIDE_OK;
}

static tide_status write_bytes(tide_record_writer *w, const void *data, size_t n) {
  if (w->comp == PLAIN) {
    if (n && fwrite(data, 1, n, w->f) != n) return write_failed(w, "write");
    return TIDE_OK;
  }
  return deflate_out(w, data, n, Z_NO_FLUSH);
}

tide_record_writer *tide_record_writer_open(const char *path, const char *compression) {
  if (!path) {
    TIDE_FAIL(TIDE_ERR_VALUE, "TFRecordWriter: path is NULL");
    return NULL;
  }
  int comp = compression_of("TFRecordWriter", path, compression);
  if (comp < 0 || tide_file_check(path, true)) return NULL;
  tide_record_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    TIDE_FAIL(TIDE_ERR_MEMORY, "TFRecordWriter '%s': out of memory", path);
    return NULL;
  }
  w->comp = comp;
  if (comp != PLAIN) {
    w->zout = malloc(CHUNK);
    if (!w->zout || deflateInit2(&w->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits(comp), 8,
                                 Z_DEFAULT_STRATEGY) != Z_OK) {
      free(w->zout);
      free(w->path);
      free(w);
      TIDE_FAIL(TIDE_ERR_MEMORY, "TFRecordWriter '%s': cannot start zlib", path);
      return NULL;
    }
  }
  w->f = tide_file_fopen(path, "wb");
  if (!w->f) {
    TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter: cannot create '%s': %s", path, tide_file_why());
    if (comp != PLAIN) deflateEnd(&w->z);
    free(w->zout);
    free(w->path);
    free(w);
    return NULL;
  }
  return w;
}

tide_status tide_record_writer_write(tide_record_writer *w, const void *data, size_t len) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "TFRecordWriter: the writer is closed");
  if (w->failed) return TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter '%s': an earlier write failed", w->path);
  if (len && !data) return TIDE_FAIL(TIDE_ERR_VALUE, "TFRecordWriter '%s': data is NULL", w->path);
  uint8_t head[12], foot[4];
  tide_record_header(len, head);
  tide_record_footer(data, len, foot);
  tide_status s;
  if ((s = write_bytes(w, head, 12)) || (s = write_bytes(w, data, len)) || (s = write_bytes(w, foot, 4))) return s;
  return TIDE_OK;
}

tide_status tide_record_writer_flush(tide_record_writer *w) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "TFRecordWriter: the writer is closed");
  if (w->failed) return TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter '%s': an earlier write failed", w->path);
  tide_status s;
  if (w->comp != PLAIN && (s = deflate_out(w, NULL, 0, Z_SYNC_FLUSH))) return s;
  if (fflush(w->f) != 0) return write_failed(w, "flush");
  return TIDE_OK;
}

tide_status tide_record_writer_close(tide_record_writer *w) {
  if (!w) return TIDE_OK;
  tide_status s = TIDE_OK;
  if (w->failed) s = TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter '%s': an earlier write failed", w->path);
  if (w->comp != PLAIN) {
    if (!s) s = deflate_out(w, NULL, 0, Z_FINISH);
    deflateEnd(&w->z);
  }
  if (fclose(w->f) != 0 && !s) s = TIDE_FAIL(TIDE_ERR_IO, "TFRecordWriter '%s': close failed: %s", w->path, strerror(errno));
  free(w->zout);
  free(w->path);
  free(w);
  return s;
}

/* ---- reader ------------------------------------------------------------------ */

struct tide_record_reader {
  char *name;
  int comp;
  /* the source: a file, or bytes in memory */
  FILE *f;
  const uint8_t *mem;
  size_t mem_len, mem_pos;
  uint64_t file_size; /* plain files and memory: bounds a record's claimed length */
  bool has_size;
  /* compressed input */
  z_stream z;
  bool z_live;         /* inflateInit2 succeeded */
  bool z_ended;        /* the last stream member ended; more input starts another */
  uint8_t *zin;        /* CHUNK bytes of compressed input (file sources) */
  uint64_t zin_offset; /* compressed bytes taken from the source so far */
  bool src_eof;
  /* records */
  uint64_t offset; /* uncompressed bytes consumed */
  uint8_t *buf;
  size_t cap;
  int state; /* 0 ok, -1 failed (sticky) */
  char *error;
};

/* Record a failure: the message is kept so that later calls repeat it. */
static int reader_fail(tide_record_reader *r, tide_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reader_fail(tide_record_reader *r, tide_status status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  r->state = -1;
  free(r->error);
  r->error = strdup(msg);
  tide_set_error(status, "%s", msg);
  return -1;
}

/* Up to n bytes of raw (possibly compressed) input into dst; -1 on a read error. */
static int64_t source_read(tide_record_reader *r, uint8_t *dst, size_t n) {
  if (r->mem) {
    size_t k = r->mem_len - r->mem_pos;
    if (k > n) k = n;
    if (k) memcpy(dst, r->mem + r->mem_pos, k);
    r->mem_pos += k;
    return (int64_t)k;
  }
  size_t k = fread(dst, 1, n, r->f);
  if (k < n && ferror(r->f)) return -1;
  return (int64_t)k;
}

/* Up to n uncompressed bytes into dst: the count (< n only at the end of the
 * data), or -1 with the reader failed. */
static int64_t read_data(tide_record_reader *r, uint8_t *dst, size_t n) {
  if (r->comp == PLAIN) {
    int64_t k = source_read(r, dst, n);
    if (k < 0) return reader_fail(r, TIDE_ERR_IO, "TFRecord file '%s': read failed at byte offset %" PRIu64 ": %s",
                                  r->name, r->offset, strerror(errno));
    r->offset += (uint64_t)k;
    return k;
  }
  size_t got = 0;
  while (got < n) {
    if (r->z.avail_in == 0 && !r->src_eof) {
      if (r->mem) { /* inflate straight from memory */
        size_t k = r->mem_len - r->mem_pos;
        if (k > (1u << 30)) k = 1u << 30;
        r->z.next_in = (Bytef *)(uintptr_t)(r->mem + r->mem_pos);
        r->z.avail_in = (uInt)k;
        r->mem_pos += k;
        if (k == 0) r->src_eof = true;
      } else {
        int64_t k = source_read(r, r->zin, CHUNK);
        if (k < 0)
          return reader_fail(r, TIDE_ERR_IO, "TFRecord file '%s': read failed near compressed byte %" PRIu64 ": %s",
                             r->name, r->zin_offset, strerror(errno));
        r->z.next_in = r->zin;
        r->z.avail_in = (uInt)k;
        if (k == 0) r->src_eof = true;
      }
    }
    if (r->z.avail_in == 0 && r->src_eof) break; /* the end of the input */
    if (r->z_ended) { /* another gzip member follows the last one (as `cat a.gz b.gz`) */
      if (inflateReset(&r->z) != Z_OK)
        return reader_fail(r, TIDE_ERR_INTERNAL, "TFRecord file '%s': inflateReset failed", r->name);
      r->z_ended = false;
    }
    r->z.next_out = dst + got;
    size_t want = n - got;
    r->z.avail_out = want > (1u << 30) ? (1u << 30) : (uInt)want;
    uInt before_in = r->z.avail_in, before_out = r->z.avail_out;
    int rc = inflate(&r->z, Z_NO_FLUSH);
    r->zin_offset += before_in - r->z.avail_in;
    got += before_out - r->z.avail_out;
    if (rc == Z_STREAM_END) {
      r->z_ended = true;
    } else if (rc == Z_BUF_ERROR) {
      /* no progress possible: needs more input, which the loop fetches or ends on */
      if (r->z.avail_in != 0)
        return reader_fail(r, TIDE_ERR_INTERNAL, "TFRecord file '%s': inflate made no progress", r->name);
    } else if (rc != Z_OK) {
      return reader_fail(r, TIDE_ERR_IO,
                         "TFRecord file '%s': the %s data is corrupt near compressed byte %" PRIu64
                         " (record data byte offset %" PRIu64 "): %s",
                         r->name, r->comp == GZIP ? "GZIP" : "ZLIB", r->zin_offset, r->offset + got,
                         r->z.msg ? r->z.msg : "inflate failed");
    }
  }
  r->offset += got;
  return (int64_t)got;
}

static tide_record_reader *reader_new(const char *name, const char *compression) {
  int comp = compression_of("TFRecord file", name ? name : "?", compression);
  if (comp < 0) return NULL;
  tide_record_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->name = strdup(name ? name : "<memory>"))) {
    free(r);
    TIDE_FAIL(TIDE_ERR_MEMORY, "TFRecord file '%s': out of memory", name ? name : "<memory>");
    return NULL;
  }
  r->comp = comp;
  if (comp != PLAIN) {
    if (inflateInit2(&r->z, window_bits(comp)) != Z_OK) {
      tide_record_reader_close(r);
      TIDE_FAIL(TIDE_ERR_MEMORY, "TFRecord file '%s': cannot start zlib", name);
      return NULL;
    }
    r->z_live = true;
  }
  return r;
}

tide_record_reader *tide_record_reader_open(const char *path, const char *compression) {
  if (!path) {
    TIDE_FAIL(TIDE_ERR_VALUE, "TFRecord reader: path is NULL");
    return NULL;
  }
  if (tide_file_check(path, false)) return NULL;
  tide_record_reader *r = reader_new(path, compression);
  if (!r) return NULL;
  r->f = tide_file_fopen(path, "rb"); /* a regular file: a FIFO or a device is refused, never waited on */
  struct stat st;
  if (!r->f) {
    if (errno == EISDIR) TIDE_FAIL(TIDE_ERR_IO, "TFRecord file '%s' is a directory", path);
    else TIDE_FAIL(TIDE_ERR_IO, "TFRecord file '%s' cannot be opened: %s", path, tide_file_why());
    tide_record_reader_close(r);
    return NULL;
  }
  if (fstat(fileno(r->f), &st) != 0) st.st_mode = 0;
  if (r->comp != PLAIN && !(r->zin = malloc(CHUNK))) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "TFRecord file '%s': out of memory", path);
    tide_record_reader_close(r);
    return NULL;
  }
  if (r->comp == PLAIN && S_ISREG(st.st_mode)) {
    r->file_size = (uint64_t)st.st_size;
    r->has_size = true;
  }
  return r;
}

tide_record_reader *tide_record_reader_open_memory(const void *data, size_t n, const char *name,
                                                   const char *compression) {
  tide_record_reader *r = reader_new(name, compression);
  if (!r) return NULL;
  static const uint8_t empty[1];
  r->mem = data && n ? data : empty;
  r->mem_len = data ? n : 0;
  if (r->comp == PLAIN) {
    r->file_size = r->mem_len;
    r->has_size = true;
  }
  return r;
}

/* Make room for n bytes in the record buffer. */
static bool reserve(tide_record_reader *r, size_t n) {
  if (n <= r->cap) return true;
  size_t cap = r->cap ? r->cap : 256;
  while (cap < n) cap = cap > SIZE_MAX / 2 ? n : cap * 2;
  uint8_t *b = realloc(r->buf, cap);
  if (!b) return false;
  r->buf = b;
  r->cap = cap;
  return true;
}

/* The record's data into r->buf: exactly len bytes or a failure. Compressed
 * data (and a pipe) has no size to check a claimed length against, so the
 * buffer grows only as data actually arrives (a forged length cannot force a
 * huge allocation). */
static int read_payload(tide_record_reader *r, uint64_t start, uint64_t len) {
  size_t have = 0;
  while (have < len) {
    size_t step = (size_t)(len - have);
    size_t grow = have < (1u << 20) ? (1u << 20) : have;
    if ((r->comp != PLAIN || !r->has_size) && step > grow) step = grow;
    if (!reserve(r, have + step))
      return reader_fail(r, TIDE_ERR_MEMORY, "TFRecord file '%s': out of memory for the record at byte offset %" PRIu64
                         " (%" PRIu64 " bytes)", r->name, start, len);
    int64_t k = read_data(r, r->buf + have, step);
    if (k < 0) return -1;
    have += (size_t)k;
    if ((size_t)k < step)
      return reader_fail(r, TIDE_ERR_IO,
                         "TFRecord file '%s': truncated record at byte offset %" PRIu64 ": its header says %" PRIu64
                         " bytes of data but the file ends after %zu",
                         r->name, start, len, have);
  }
  return 0;
}

int tide_record_reader_next(tide_record_reader *r, const uint8_t **data, size_t *len) {
  if (!r) return TIDE_FAIL(TIDE_ERR_VALUE, "TFRecord reader: the reader is closed"), -1;
  if (r->state < 0) {
    tide_set_error(TIDE_ERR_IO, "%s", r->error ? r->error : "TFRecord reader: an earlier read failed");
    return -1;
  }
  uint64_t start = r->offset;
  uint8_t head[12], foot[4];
  int64_t k = read_data(r, head, 12);
  if (k < 0) return -1;
  if (k == 0) return 0;
  if (k < 12)
    return reader_fail(r, TIDE_ERR_IO,
                       "TFRecord file '%s': truncated record at byte offset %" PRIu64
                       ": the file ends %d bytes into the 12-byte record header",
                       r->name, start, (int)k);
  uint64_t n = get_u64(head);
  if (tide_crc32c_masked(head, 8) != get_u32(head + 8)) {
    /* at the first record, a file of another format says what it is (gzip: the
     * message below names compression_type) */
    const char *kind = NULL;
    int k2 = start == 0 && r->f ? tide_file_kind(r->name, &kind) : TIDE_FILE_UNKNOWN;
    if (k2 != TIDE_FILE_UNKNOWN && k2 != TIDE_FILE_TFRECORD && k2 != TIDE_FILE_GZIP && kind)
      return reader_fail(r, TIDE_ERR_IO, "TFRecord file '%s' is not a TFRecord file: it is %s", r->name, kind);
    return reader_fail(r, TIDE_ERR_IO,
                       "TFRecord file '%s': corrupted record at byte offset %" PRIu64
                       ": the checksum of the record's length does not match (damaged, or not a TFRecord file%s)",
                       r->name, start, r->comp == PLAIN ? "; a GZIP file needs compression_type=\"GZIP\"" : "");
  }
  if (r->has_size && (r->file_size < start + 16 || n > r->file_size - start - 16))
    return reader_fail(r, TIDE_ERR_IO,
                       "TFRecord file '%s': truncated record at byte offset %" PRIu64 ": its header says %" PRIu64
                       " bytes of data but only %" PRIu64 " bytes follow",
                       r->name, start, n, r->file_size > start + 12 ? r->file_size - start - 12 : 0);
  if (n > SIZE_MAX - 16)
    return reader_fail(r, TIDE_ERR_IO, "TFRecord file '%s': corrupted record at byte offset %" PRIu64
                       ": length %" PRIu64 " is too large", r->name, start, n);
  if (read_payload(r, start, n) < 0) return -1;
  k = read_data(r, foot, 4);
  if (k < 0) return -1;
  if (k < 4)
    return reader_fail(r, TIDE_ERR_IO,
                       "TFRecord file '%s': truncated record at byte offset %" PRIu64
                       ": the file ends inside the record's 4-byte data checksum",
                       r->name, start);
  if (tide_crc32c_masked(r->buf, (size_t)n) != get_u32(foot))
    return reader_fail(r, TIDE_ERR_IO,
                       "TFRecord file '%s': corrupted record at byte offset %" PRIu64
                       ": the checksum of the record's %" PRIu64 " bytes of data does not match",
                       r->name, start, n);
  static const uint8_t nothing[1];
  *data = n ? r->buf : nothing;
  *len = (size_t)n;
  return 1;
}

uint64_t tide_record_reader_offset(const tide_record_reader *r) { return r ? r->offset : 0; }

void tide_record_reader_close(tide_record_reader *r) {
  if (!r) return;
  if (r->f) fclose(r->f);
  if (r->z_live) inflateEnd(&r->z);
  free(r->zin);
  free(r->buf);
  free(r->error);
  free(r->name);
  free(r);
}
