/* data/csv_source.c — CsvDataset as a tide_data_source: the records of CSV
 * files (kernels/io/csv.c) in order, each element one scalar per column. */
#include <stdlib.h>
#include <string.h>

#include "tide/data.h"
#include "tide/records.h"
#include "../core/internal.h"

typedef struct csv_ctx {
  int nfiles;
  char **files;
  int ncols;
  int64_t *cols; /* NULL: every field, in order */
  int32_t *dtypes;
  tide_tensor *defaults; /* [ncols]: shared copies */
  bool *has_default;
  char *na_value;
  char delim;
  bool use_quote, header;
} csv_ctx;

typedef struct csv_state {
  int file; /* the file being read (-1 before the first) */
  tide_csv_reader *r;
} csv_state;

static void ctx_free(void *p) {
  csv_ctx *x = p;
  if (!x) return;
  for (int i = 0; i < x->nfiles; i++) free(x->files ? x->files[i] : NULL);
  for (int c = 0; c < x->ncols; c++)
    if (x->has_default && x->has_default[c]) tide_tensor_release(&x->defaults[c]);
  free(x->files);
  free(x->cols);
  free(x->dtypes);
  free(x->defaults);
  free(x->has_default);
  free(x->na_value);
  free(x);
}

static tide_status csv_open(void *ctx, void **state) {
  (void)ctx;
  csv_state *s = calloc(1, sizeof *s);
  if (!s) return TIDE_FAIL(TIDE_ERR_MEMORY, "CsvDataset: out of memory");
  s->file = -1;
  *state = s;
  return TIDE_OK;
}

static tide_status csv_next(void *ctx, void *state, tide_tensor *const *out, int *end) {
  csv_ctx *x = ctx;
  csv_state *s = state;
  for (;;) {
    if (!s->r) {
      if (s->file + 1 >= x->nfiles) {
        *end = 1;
        return TIDE_OK;
      }
      s->file++;
      if (!(s->r = tide_csv_open(x->files[s->file], x->delim, x->use_quote))) return tide_last_status();
      if (x->header && tide_csv_next(s->r) < 0) {
        tide_csv_close(s->r); /* a file that cannot be read on: go on with the next */
        s->r = NULL;
        return tide_last_status();
      }
    }
    int rc = tide_csv_next(s->r);
    if (rc == 1) {
      const tide_tensor *defaults[64], **d = x->ncols <= 64 ? defaults : malloc((size_t)x->ncols * sizeof *d);
      if (!d) return TIDE_FAIL(TIDE_ERR_MEMORY, "CsvDataset: out of memory");
      for (int c = 0; c < x->ncols; c++) d[c] = x->has_default[c] ? &x->defaults[c] : NULL;
      tide_status st = tide_csv_decode(s->r, x->ncols, x->cols, x->dtypes, d, x->na_value, out);
      if (d != defaults) free(d);
      return st;
    }
    tide_status st = rc < 0 ? tide_last_status() : TIDE_OK;
    tide_csv_close(s->r);
    s->r = NULL;
    if (rc < 0) return st; /* bad quoting: the rest of that file cannot be split reliably */
  }
}

static void csv_close(void *ctx, void *state) {
  (void)ctx;
  csv_state *s = state;
  if (!s) return;
  tide_csv_close(s->r);
  free(s);
}

/* ctx's columns and settings over other files (interleave's per-element sources). */
static void *ctx_for_files(const void *ctx, int nfiles, const char *const *files) {
  const csv_ctx *p = ctx;
  csv_ctx *x = calloc(1, sizeof *x);
  if (!x) goto oom;
  x->ncols = p->ncols, x->delim = p->delim, x->use_quote = p->use_quote, x->header = p->header;
  size_t nc = (size_t)p->ncols;
  if (!(x->files = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *x->files)) ||
      !(x->dtypes = malloc(nc * sizeof *x->dtypes)) || !(x->defaults = calloc(nc, sizeof *x->defaults)) ||
      !(x->has_default = calloc(nc, sizeof *x->has_default)) || (p->cols && !(x->cols = malloc(nc * sizeof *x->cols))) ||
      (p->na_value && !(x->na_value = strdup(p->na_value))))
    goto oom;
  x->nfiles = nfiles;
  for (int i = 0; i < nfiles; i++)
    if (!(x->files[i] = strdup(files[i]))) goto oom;
  memcpy(x->dtypes, p->dtypes, nc * sizeof *x->dtypes);
  if (p->cols) memcpy(x->cols, p->cols, nc * sizeof *x->cols);
  for (int c = 0; c < p->ncols; c++)
    if (p->has_default[c]) {
      if (tide_tensor_share(&x->defaults[c], &p->defaults[c])) {
        ctx_free(x);
        return NULL;
      }
      x->has_default[c] = true;
    }
  return x;
oom:
  ctx_free(x);
  TIDE_FAIL(TIDE_ERR_MEMORY, "CsvDataset: out of memory");
  return NULL;
}

struct tide_dataset *tide_dataset_csv(int nfiles, const char *const *files, int ncols, const int64_t *cols,
                                      const int32_t *dtypes, const tide_tensor *const *defaults, const char *na_value,
                                      char delim, bool use_quote, bool header) {
  if (nfiles < 0 || ncols <= 0 || (nfiles && !files) || !dtypes || !defaults) {
    TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: bad arguments");
    return NULL;
  }
  csv_ctx *x = calloc(1, sizeof *x);
  if (!x) goto oom;
  x->ncols = ncols;
  x->delim = delim;
  x->use_quote = use_quote;
  x->header = header;
  if (!(x->files = calloc((size_t)(nfiles ? nfiles : 1), sizeof *x->files))) goto oom;
  x->nfiles = nfiles;
  for (int i = 0; i < nfiles; i++)
    if (!(x->files[i] = strdup(files[i]))) goto oom;
  if (!(x->dtypes = malloc((size_t)ncols * sizeof *x->dtypes)) || !(x->defaults = calloc((size_t)ncols, sizeof *x->defaults)) ||
      !(x->has_default = calloc((size_t)ncols, sizeof *x->has_default)))
    goto oom;
  memcpy(x->dtypes, dtypes, (size_t)ncols * sizeof *dtypes);
  if (cols) {
    if (!(x->cols = malloc((size_t)ncols * sizeof *cols))) goto oom;
    memcpy(x->cols, cols, (size_t)ncols * sizeof *cols);
    for (int c = 0; c < ncols; c++)
      if (cols[c] < 0) {
        TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: column indices must be non-negative");
        ctx_free(x);
        return NULL;
      }
  }
  if (na_value && !(x->na_value = strdup(na_value))) goto oom;
  for (int c = 0; c < ncols; c++)
    if (defaults[c]) {
      if (tide_tensor_share(&x->defaults[c], defaults[c])) {
        ctx_free(x);
        return NULL;
      }
      x->has_default[c] = true;
    }
  tide_data_source src = {x, ncols, TIDE_DATA_UNKNOWN, csv_open, csv_next, csv_close, ctx_free, ctx_for_files};
  tide_dataset *ds = tide_dataset_from_source(&src);
  if (!ds) ctx_free(x);
  return ds;
oom:
  ctx_free(x);
  TIDE_FAIL(TIDE_ERR_MEMORY, "CsvDataset: out of memory");
  return NULL;
}
