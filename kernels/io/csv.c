/* io/csv.c — CSV records (RFC 4180: quoted fields, doubled quotes, CRLF,
 * line breaks inside quotes) and their typed values as TF's CsvDataset makes them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tide/records.h"
#include "tide/strings.h"
#include "../core/internal.h"

struct tide_csv_reader {
  char *name;
  char delim;
  bool use_quote;
  FILE *f;
  const uint8_t *mem;
  size_t mem_len, mem_pos;
  int peeked; /* a character put back, or -2 for none */
  /* the record last read: fields' bytes, each NUL-terminated, at offsets */
  char *buf;
  size_t len, cap;
  size_t *starts;
  int64_t nfields, fcap;
  int64_t record; /* index of the record last read (-1 before the first) */
  int64_t line;   /* the line it began on */
  int64_t cur_line;
};

static int get(tide_csv_reader *r) {
  if (r->peeked != -2) {
    int c = r->peeked;
    r->peeked = -2;
    return c;
  }
  if (r->mem) return r->mem_pos < r->mem_len ? r->mem[r->mem_pos++] : EOF;
  return getc_unlocked(r->f);
}

static void unget(tide_csv_reader *r, int c) { r->peeked = c; }

static bool push(tide_csv_reader *r, char c) {
  if (r->len == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 256;
    char *b = realloc(r->buf, cap);
    if (!b) return false;
    r->buf = b;
    r->cap = cap;
  }
  r->buf[r->len++] = c;
  return true;
}

static bool start_field(tide_csv_reader *r) {
  if (r->nfields == r->fcap) {
    int64_t cap = r->fcap ? 2 * r->fcap : 16;
    size_t *s = realloc(r->starts, (size_t)cap * sizeof *s);
    if (!s) return false;
    r->starts = s;
    r->fcap = cap;
  }
  r->starts[r->nfields++] = r->len;
  return true;
}

static tide_csv_reader *reader_new(const char *name, char delim, bool use_quote) {
  if (delim == '\n' || delim == '\r' || (use_quote && delim == '"')) {
    TIDE_FAIL(TIDE_ERR_VALUE, "CSV '%s': field_delim cannot be a line break or the quote character", name);
    return NULL;
  }
  tide_csv_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->name = strdup(name))) {
    free(r);
    TIDE_FAIL(TIDE_ERR_MEMORY, "CSV '%s': out of memory", name);
    return NULL;
  }
  r->delim = delim;
  r->use_quote = use_quote;
  r->peeked = -2;
  r->record = -1;
  r->cur_line = 1;
  return r;
}

tide_csv_reader *tide_csv_open(const char *path, char delim, bool use_quote) {
  if (!path) {
    TIDE_FAIL(TIDE_ERR_VALUE, "CSV: path is NULL");
    return NULL;
  }
  if (tide_file_check(path, false)) return NULL;
  tide_csv_reader *r = reader_new(path, delim, use_quote);
  if (!r) return NULL;
  r->f = tide_file_fopen(path, "rb"); /* a regular file: a FIFO or a device is refused, never waited on */
  if (!r->f) {
    if (errno == EISDIR) TIDE_FAIL(TIDE_ERR_IO, "CSV file '%s' is a directory", path);
    else TIDE_FAIL(TIDE_ERR_IO, "CSV file '%s' cannot be opened: %s", path, tide_file_why());
    tide_csv_close(r);
    return NULL;
  }
  return r;
}

tide_csv_reader *tide_csv_open_memory(const void *data, size_t n, const char *name, char delim, bool use_quote) {
  tide_csv_reader *r = reader_new(name ? name : "<memory>", delim, use_quote);
  if (!r) return NULL;
  static const uint8_t empty[1];
  r->mem = data && n ? data : empty;
  r->mem_len = data ? n : 0;
  return r;
}

void tide_csv_close(tide_csv_reader *r) {
  if (!r) return;
  if (r->f) fclose(r->f);
  free(r->buf);
  free(r->starts);
  free(r->name);
  free(r);
}

static int fail(tide_csv_reader *r, const char *what) {
  TIDE_FAIL(TIDE_ERR_VALUE, "CSV file '%s': record %" PRId64 " (line %" PRId64 "): %s", r->name, r->record, r->line, what);
  return -1;
}

static int oom(tide_csv_reader *r) {
  TIDE_FAIL(TIDE_ERR_MEMORY, "CSV file '%s': out of memory in record %" PRId64, r->name, r->record);
  return -1;
}

int tide_csv_next(tide_csv_reader *r) {
  if (!r) return TIDE_FAIL(TIDE_ERR_VALUE, "CSV: the reader is closed"), -1;
  r->len = 0;
  r->nfields = 0;
  int c = get(r);
  if (c == EOF) {
    if (r->f && ferror(r->f))
      return TIDE_FAIL(TIDE_ERR_IO, "CSV file '%s': read failed: %s", r->name, strerror(errno)), -1;
    return 0;
  }
  r->record++;
  r->line = r->cur_line;
  for (;;) { /* one field per pass; c is its first character */
    if (!start_field(r)) return oom(r);
    if (r->use_quote && c == '"') {
      for (;;) {
        c = get(r);
        if (c == EOF) return fail(r, "Reached end of file without closing quoted field in record");
        if (c == '"') {
          int d = get(r);
          if (d == '"') {
            if (!push(r, '"')) return oom(r);
            continue;
          }
          c = d;
          break;
        }
        if (c == '\n') r->cur_line++;
        if (!push(r, (char)c)) return oom(r);
      }
      if (c != r->delim && c != '\n' && c != '\r' && c != EOF)
        return fail(r, "Quote inside a quoted field has to be escaped by another quote (\"\"), or end the field");
    } else {
      while (c != r->delim && c != '\n' && c != '\r' && c != EOF) {
        if (r->use_quote && c == '"') return fail(r, "Unquoted fields cannot have quotes inside");
        if (!push(r, (char)c)) return oom(r);
        c = get(r);
      }
    }
    if (!push(r, '\0')) return oom(r);
    if (c == r->delim) {
      c = get(r);
      continue;
    }
    if (c == '\r') {
      int d = get(r);
      if (d != '\n') unget(r, d);
    }
    if (c == '\r' || c == '\n') r->cur_line++;
    return 1;
  }
}

int64_t tide_csv_num_fields(const tide_csv_reader *r) { return r ? r->nfields : 0; }

const char *tide_csv_field(const tide_csv_reader *r, int64_t j, size_t *len) {
  if (!r || j < 0 || j >= r->nfields) {
    if (len) *len = 0;
    return NULL;
  }
  size_t start = r->starts[j];
  size_t end = j + 1 < r->nfields ? r->starts[j + 1] - 1 : r->len - 1;
  if (len) *len = end - start;
  return r->buf + start;
}

int64_t tide_csv_record_index(const tide_csv_reader *r) { return r ? r->record : -1; }
int64_t tide_csv_record_line(const tide_csv_reader *r) { return r ? r->line : 0; }

/* ---- typed values ------------------------------------------------------------------ */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* s[0..len) without surrounding white space, as TF's safe_strto* accept it, copied
 * to out (size n); false when it does not fit. */
static bool trimmed(const char *s, size_t len, char *out, size_t n) {
  while (len && is_space(*s)) s++, len--;
  while (len && is_space(s[len - 1])) len--;
  if (len + 1 > n) return false;
  memcpy(out, s, len);
  out[len] = '\0';
  return true;
}

/* Parse field text s (NUL-terminated, trimmed) as dtype dt into the scalar t. */
static bool parse_number(const char *s, int dt, tide_tensor *t) {
  if (!*s) return false;
  char *end;
  errno = 0;
  if (dt == TIDE_INT32 || dt == TIDE_INT64) {
    if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) return false;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE) return false;
    if (dt == TIDE_INT32) {
      if (v < INT32_MIN || v > INT32_MAX) return false;
      *(int32_t *)t->data = (int32_t)v;
    } else {
      *(int64_t *)t->data = (int64_t)v;
    }
    return true;
  }
  /* floats: strtod takes hex floats and "inf"/"nan" as TF's parser does */
  double v = strtod(s, &end);
  if (*end) return false;
  if (dt == TIDE_FLOAT32) *(float *)t->data = (float)v;
  else *(double *)t->data = v;
  return true;
}

static const char *dtype_text(int dt) {
  switch (dt) {
  case TIDE_INT32: return "int32";
  case TIDE_INT64: return "int64";
  case TIDE_FLOAT32: return "float";
  case TIDE_FLOAT64: return "double";
  default: return "string";
  }
}

tide_status tide_csv_decode(const tide_csv_reader *r, int ncols, const int64_t *cols, const int32_t *dtypes,
                            const tide_tensor *const *defaults, const char *na_value, tide_tensor *const *out) {
  if (!r || ncols <= 0 || !dtypes || !defaults || !out) return TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: bad arguments");
  int64_t need = ncols;
  if (cols) {
    need = 0;
    for (int c = 0; c < ncols; c++)
      if (cols[c] + 1 > need) need = cols[c] + 1;
  }
  if (cols ? r->nfields < need : r->nfields != need)
    return TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: file '%s', record %" PRId64 " (line %" PRId64 "): Expect %" PRId64
                     " fields but have %s%" PRId64 " in record", r->name, r->record, r->line, need,
                     r->nfields > need ? "more: " : "", r->nfields);
  int c = 0;
  tide_status st = TIDE_OK;
  for (; c < ncols; c++) {
    int dt = dtypes[c];
    int64_t j = cols ? cols[c] : c;
    size_t len;
    const char *s = tide_csv_field(r, j, &len);
    bool missing = len == 0 || (na_value && strlen(na_value) == len && memcmp(s, na_value, len) == 0);
    if (missing) {
      const tide_tensor *d = defaults[c];
      if (!d) {
        st = TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: file '%s', record %" PRId64 " (line %" PRId64 "): Field %d is "
                       "required but missing in record (column %" PRId64 " has no default in record_defaults)",
                       r->name, r->record, r->line, c, j);
        break;
      }
      if (d->dt != dt || d->nelem != 1) {
        st = TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: the default of field %d must be one %s", c, dtype_text(dt));
        break;
      }
      if ((st = tide_tensor_init(out[c], dt, 0, NULL))) break;
      if ((st = tide_tensor_copy_into(out[c], d))) {
        c++; /* out[c] holds storage: released below */
        break;
      }
      continue;
    }
    if (dt == TIDE_STRING) {
      if ((st = tide_tensor_init(out[c], dt, 0, NULL))) break;
      if ((st = tide_string_set(out[c], 0, s, (int64_t)len))) {
        c++;
        break;
      }
      continue;
    }
    if (dt != TIDE_INT32 && dt != TIDE_INT64 && dt != TIDE_FLOAT32 && dt != TIDE_FLOAT64) {
      st = TIDE_FAIL(TIDE_ERR_DTYPE, "CsvDataset: field %d: dtype must be int32, int64, float32, float64 or string", c);
      break;
    }
    char text[128];
    if ((st = tide_tensor_init(out[c], dt, 0, NULL))) break;
    if (!trimmed(s, len, text, sizeof text) || !parse_number(text, dt, out[c])) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "CsvDataset: file '%s', record %" PRId64 " (line %" PRId64 "): Field %d in record "
                     "is not a valid %s: %.*s", r->name, r->record, r->line, c, dtype_text(dt), (int)(len > 64 ? 64 : len), s);
      c++;
      break;
    }
  }
  if (st)
    for (int k = 0; k < c; k++) tide_tensor_release(out[k]);
  return st;
}
