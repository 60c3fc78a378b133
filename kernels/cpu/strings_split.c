/* cpu/strings_split.c — split (TF's StringSplitV2): a scalar or each element
 * of a vector into pieces, given as the pieces and int64 row_splits; an
 * empty separator splits on ASCII whitespace runs (no empty pieces). */
#include "strings_util.h"

typedef struct piece {
  int64_t row, off, len;
} piece;

typedef struct pieces {
  piece *p;
  int64_t n, cap;
} pieces;

static bool add(pieces *ps, int64_t row, int64_t off, int64_t len) {
  if (ps->n == ps->cap) {
    int64_t cap = ps->cap ? 2 * ps->cap : 64;
    piece *q = realloc(ps->p, (size_t)cap * sizeof *q);
    if (!q) return false;
    ps->p = q, ps->cap = cap;
  }
  ps->p[ps->n++] = (piece){row, off, len};
  return true;
}

/* The pieces of one string (bytes b, n) into ps, as TF's SplitV2 (Python's
 * str.split): max < 0 no limit; after max splits the rest is one piece (as
 * it stands: whitespace after the last split is skipped, none at its end). */
static bool split_one(pieces *ps, int64_t row, const char *b, int64_t n, const char *sep, int64_t slen, int64_t max) {
  if (max == 0) return add(ps, row, 0, n);
  int64_t splits = 0, i = 0;
  if (slen == 0) {
    while (i < n && tide_ascii_space((unsigned char)b[i])) i++;
    while (i < n) {
      int64_t start = i;
      while (i < n && !tide_ascii_space((unsigned char)b[i])) i++;
      if (!add(ps, row, start, i - start)) return false;
      while (i < n && tide_ascii_space((unsigned char)b[i])) i++;
      if (++splits == max) return add(ps, row, i, n - i);
    }
    return true;
  }
  int64_t start = 0;
  while (i + slen <= n) {
    if (memcmp(b + i, sep, (size_t)slen) != 0) {
      i++;
      continue;
    }
    if (!add(ps, row, start, i - start)) return false;
    i += slen;
    start = i;
    if (++splits == max) break;
  }
  return add(ps, row, start, n - start);
}

tide_status tide_cpu_string_split(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  int64_t slen;
  const char *sep = tide_string_at(in[1]->data, 0, &slen);
  int64_t rows = x->ndim == 0 ? 1 : x->dims[0];
  pieces ps = {0};
  int64_t *ends = malloc((size_t)(rows + 1) * sizeof *ends);
  bool ok = ends != NULL;
  for (int64_t r = 0; r < rows && ok; r++) {
    int64_t len;
    const char *b = tide_str_at(x, r, &len);
    ok = split_one(&ps, r, b, len, sep, slen, a->n == 0 ? -1 : a->n - 1);
    ends[r] = ps.n;
  }
  tide_status st = ok ? TIDE_OK : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  int64_t n = ps.n, nsplits = rows + 1;
  if (!st) st = tide_tensor_init(out[0], TIDE_STRING, 1, &n);
  if (!st) st = tide_tensor_init(out[1], TIDE_INT64, 1, &nsplits);
  if (!st) {
    tide_strings_adopt(out[0]);
    int64_t *rs = out[1]->data;
    rs[0] = 0;
    for (int64_t r = 0; r < rows; r++) rs[r + 1] = ends[r];
    for (int64_t i = 0; i < n && !st; i++) {
      int64_t len;
      const char *b = tide_str_at(x, ps.p[i].row, &len);
      st = tide_str_put(out[0], i, b + ps.p[i].off, ps.p[i].len);
    }
  }
  free(ps.p);
  free(ends);
  return st;
}
