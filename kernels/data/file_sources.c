/* data/file_sources.c — TFRecordDataset and TextLineDataset as tide_data_sources:
 * the records (kernels/io/record.c) or lines of files in order, each a 0-d string. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "tide/data.h"
#include "tide/records.h"
#include "tide/strings.h"
#include "../core/internal.h"

enum { KIND_TFRECORD, KIND_LINES };

typedef struct files_ctx {
  int kind;
  int nfiles;
  char **files;
  char *compression; /* "", "GZIP" or "ZLIB" (records); "" or "GZIP" (lines) */
} files_ctx;

typedef struct files_state {
  int file; /* the file being read (-1 before the first) */
  tide_record_reader *rec;
  gzFile lines;
  char *line; /* the line buffer (lines) */
  size_t cap;
} files_state;

static void ctx_free(void *p) {
  files_ctx *x = p;
  if (!x) return;
  for (int i = 0; i < x->nfiles; i++) free(x->files ? x->files[i] : NULL);
  free(x->files);
  free(x->compression);
  free(x);
}

static tide_status files_open(void *ctx, void **state) {
  (void)ctx;
  files_state *s = calloc(1, sizeof *s);
  if (!s) return TIDE_FAIL(TIDE_ERR_MEMORY, "dataset: out of memory");
  s->file = -1;
  *state = s;
  return TIDE_OK;
}

/* out as a 0-d string tensor holding len bytes. */
static tide_status emit(tide_tensor *out, const void *bytes, size_t len) {
  tide_status st = tide_tensor_init(out, TIDE_STRING, 0, NULL);
  if (st) return st;
  return tide_string_set(out, 0, bytes, (int64_t)len);
}

static void close_file(files_state *s) {
  if (s->rec) tide_record_reader_close(s->rec);
  if (s->lines) gzclose(s->lines);
  s->rec = NULL;
  s->lines = NULL;
}

/* Open the next file; *end when there is none. */
static tide_status open_next(files_ctx *x, files_state *s, int *end) {
  if (s->file + 1 >= x->nfiles) {
    *end = 1;
    return TIDE_OK;
  }
  const char *path = x->files[++s->file];
  if (x->kind == KIND_TFRECORD) {
    if (!(s->rec = tide_record_reader_open(path, x->compression))) return tide_last_status();
    return TIDE_OK;
  }
  tide_status st = tide_file_check(path, false);
  if (st) return st;
  /* gzopen reads plain files as they are; "GZIP" is the same reader */
  int fd = tide_file_open(path, O_RDONLY, 0); /* a regular file: a FIFO or a device is refused, never waited on */
  if (fd >= 0 && !(s->lines = gzdopen(fd, "rb"))) close(fd);
  if (!s->lines)
    return TIDE_FAIL(TIDE_ERR_IO, "TextLineDataset: cannot open '%s': %s", path, fd < 0 ? tide_file_why() : "out of memory");
  gzbuffer(s->lines, 1 << 16);
  return TIDE_OK;
}

/* One line of s->lines into s->line (without its "\n" or "\r\n", as TF's
 * ReadLine); 1 with a line, 0 at the end of the file, -1 on an error. */
static int read_line(files_ctx *x, files_state *s, size_t *len) {
  size_t n = 0;
  int c, any = 0;
  while ((c = gzgetc(s->lines)) != -1) {
    any = 1;
    if (c == '\n') break;
    if (n + 1 >= s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 256;
      char *p = realloc(s->line, cap);
      if (!p) {
        TIDE_FAIL(TIDE_ERR_MEMORY, "TextLineDataset: out of memory");
        return -1;
      }
      s->line = p;
      s->cap = cap;
    }
    s->line[n++] = (char)c;
  }
  if (c == -1) {
    int err = 0;
    const char *msg = gzerror(s->lines, &err);
    if (err != Z_OK && err != Z_STREAM_END) {
      TIDE_FAIL(TIDE_ERR_IO, "TextLineDataset: '%s': %s", x->files[s->file], msg ? msg : "read error");
      return -1;
    }
    if (!any) return 0;
  }
  if (n > 0 && s->line[n - 1] == '\r') n--;
  *len = n;
  return 1;
}

static tide_status files_next(void *ctx, void *state, tide_tensor *const *out, int *end) {
  files_ctx *x = ctx;
  files_state *s = state;
  for (;;) {
    if (!s->rec && !s->lines) {
      tide_status st = open_next(x, s, end);
      if (st || *end) return st;
    }
    if (x->kind == KIND_TFRECORD) {
      const uint8_t *data;
      size_t len;
      int rc = tide_record_reader_next(s->rec, &data, &len);
      if (rc == 1) return emit(out[0], data, len);
      tide_status st = rc < 0 ? tide_last_status() : TIDE_OK;
      close_file(s);
      if (rc < 0) return st; /* a corrupt record: the error names the file and offset */
    } else {
      size_t len = 0;
      int rc = read_line(x, s, &len);
      if (rc == 1) return emit(out[0], s->line, len);
      tide_status st = rc < 0 ? tide_last_status() : TIDE_OK;
      close_file(s);
      if (rc < 0) return st;
    }
  }
}

static void files_close(void *ctx, void *state) {
  (void)ctx;
  files_state *s = state;
  if (!s) return;
  close_file(s);
  free(s->line);
  free(s);
}

static void *ctx_for_files(const void *ctx, int nfiles, const char *const *files);

static struct tide_dataset *files_dataset(int kind, const char *what, int nfiles, const char *const *files,
                                          const char *compression) {
  if (nfiles < 0 || (nfiles && !files)) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: bad arguments", what);
    return NULL;
  }
  if (!compression) compression = "";
  int known = !strcmp(compression, "") || !strcmp(compression, "GZIP") ||
              (kind == KIND_TFRECORD && !strcmp(compression, "ZLIB"));
  if (!known) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: compression_type must be \"\"%s or \"GZIP\", got \"%s\"", what,
              kind == KIND_TFRECORD ? ", \"ZLIB\"" : "", compression);
    return NULL;
  }
  files_ctx *x = calloc(1, sizeof *x);
  if (!x) goto oom;
  x->kind = kind;
  if (!(x->compression = strdup(compression))) goto oom;
  if (!(x->files = calloc((size_t)(nfiles ? nfiles : 1), sizeof *x->files))) goto oom;
  x->nfiles = nfiles;
  for (int i = 0; i < nfiles; i++)
    if (!files[i] || !(x->files[i] = strdup(files[i]))) goto oom;
  tide_data_source src = {x, 1, TIDE_DATA_UNKNOWN, files_open, files_next, files_close, ctx_free, ctx_for_files};
  struct tide_dataset *ds = tide_dataset_from_source(&src);
  if (!ds) ctx_free(x);
  return ds;
oom:
  ctx_free(x);
  TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", what);
  return NULL;
}

/* ctx's reader over other files (interleave's per-element sources). */
static void *ctx_for_files(const void *ctx, int nfiles, const char *const *files) {
  const files_ctx *p = ctx;
  files_ctx *x = calloc(1, sizeof *x);
  if (!x || !(x->compression = strdup(p->compression)) ||
      !(x->files = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *x->files)))
    goto oom;
  x->kind = p->kind;
  x->nfiles = nfiles;
  for (int i = 0; i < nfiles; i++)
    if (!(x->files[i] = strdup(files[i]))) goto oom;
  return x;
oom:
  ctx_free(x);
  TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", p->kind == KIND_TFRECORD ? "TFRecordDataset" : "TextLineDataset");
  return NULL;
}

struct tide_dataset *tide_dataset_tfrecord(int nfiles, const char *const *files, const char *compression) {
  return files_dataset(KIND_TFRECORD, "TFRecordDataset", nfiles, files, compression);
}

struct tide_dataset *tide_dataset_text_lines(int nfiles, const char *const *files, const char *compression) {
  return files_dataset(KIND_LINES, "TextLineDataset", nfiles, files, compression);
}
