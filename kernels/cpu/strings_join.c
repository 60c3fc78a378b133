/* cpu/strings_join.c — joining strings elementwise with broadcasting (TF's
 * strings.join), along axes (reduce_join) and by segment (unsorted_segment_join), and cutting them (substr). */
#include "strings_util.h"

tide_status tide_cpu_string_join(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(a), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  int64_t slen;
  const char *sep = tide_string_at(in[0]->data, 0, &slen);
  int64_t (*strides)[TIDE_MAX_DIMS] = malloc((size_t)n_in * sizeof *strides);
  if (!strides) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int j = 1; j < n_in; j++) tide_str_bcast(in[j], o->ndim, strides[j]);
  tide_strings_adopt(o);
  tide_strbuf b = {0};
  tide_status st = TIDE_OK;
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    b.n = 0;
    bool ok = true;
    for (int j = 1; j < n_in && ok; j++) {
      int64_t len;
      const char *s = tide_string_at(in[j]->data, tide_str_bcast_offset(o->ndim, o->dims, strides[j], k), &len);
      ok = (j == 1 || tide_strbuf_add(&b, sep, slen)) && tide_strbuf_add(&b, s, len);
    }
    st = ok ? tide_str_put(o, k, b.p, b.n) : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  }
  free(b.p);
  free(strides);
  return st;
}

tide_status tide_cpu_reduce_join(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0];
  tide_tensor *o = out[0];
  int64_t slen;
  const char *sep = tide_string_at(in[1]->data, 0, &slen);
  bool mask[TIDE_MAX_DIMS];
  tide_status st = tide_reduce_axes(def, a, x->ndim, mask);
  if (st) return st;
  /* Kept dims (outer, in order) and reduced dims (joined in row-major order, as TF). */
  int nk = 0, nr = 0, keep[TIDE_MAX_DIMS], red[TIDE_MAX_DIMS];
  int64_t nred = 1;
  for (int d = 0; d < x->ndim; d++)
    if (mask[d]) red[nr++] = d, nred *= x->dims[d];
    else keep[nk++] = d;
  tide_strings_adopt(o);
  tide_strbuf b = {0};
  for (int64_t k = 0; k < o->nelem && !st; k++) {
    int64_t base = 0, rest = k;
    for (int i = nk - 1; i >= 0; i--) {
      base += (rest % x->dims[keep[i]]) * x->strides[keep[i]];
      rest /= x->dims[keep[i]];
    }
    b.n = 0;
    bool ok = true;
    for (int64_t r = 0; r < nred && ok; r++) {
      int64_t off = base, q = r;
      for (int i = nr - 1; i >= 0; i--) {
        off += (q % x->dims[red[i]]) * x->strides[red[i]];
        q /= x->dims[red[i]];
      }
      int64_t len;
      const char *s = tide_string_at(x->data, off, &len);
      ok = (r == 0 || tide_strbuf_add(&b, sep, slen)) && tide_strbuf_add(&b, s, len);
    }
    st = ok ? tide_str_put(o, k, b.p, b.n) : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  }
  free(b.p);
  return st;
}

/* Element at offset off of an int32 or int64 tensor. */
static int64_t int_at(const tide_tensor *t, int64_t off) {
  return t->dt == TIDE_INT32 ? ((const int32_t *)t->data)[off] : ((const int64_t *)t->data)[off];
}

/* The byte offset of character c (0 <= c <= chars) of UTF-8 text b (n bytes):
 * characters start at bytes that do not continue one (TF counts so too). */
static int64_t utf8_offset(const char *b, int64_t n, int64_t c) {
  int64_t i = 0;
  for (; i < n; i++)
    if (((unsigned char)b[i] & 0xC0) != 0x80 && c-- == 0) return i;
  return n;
}

tide_status tide_cpu_substr(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor *o = out[0];
  bool chars = a->n == 1; /* pos and len count UTF-8 characters, else bytes */
  int64_t strides[3][TIDE_MAX_DIMS];
  for (int j = 0; j < 3; j++) tide_str_bcast(in[j], o->ndim, strides[j]);
  tide_strings_adopt(o);
  for (int64_t k = 0; k < o->nelem; k++) {
    int64_t bytes;
    const char *s = tide_string_at(in[0]->data, tide_str_bcast_offset(o->ndim, o->dims, strides[0], k), &bytes);
    int64_t pos = int_at(in[1], tide_str_bcast_offset(o->ndim, o->dims, strides[1], k));
    int64_t n = int_at(in[2], tide_str_bcast_offset(o->ndim, o->dims, strides[2], k));
    int64_t len = chars ? tide_utf8_chars(s, bytes) : bytes;
    /* TF: a negative pos counts from the end; pos past either end is an error; len is clipped. */
    if (pos < -len || pos > len)
      return TIDE_FAIL(TIDE_ERR_INDEX, "%s: pos %lld is out of range for a string of %lld %s (element %lld)",
                       def->name, (long long)pos, (long long)len, chars ? "characters" : "bytes", (long long)k);
    if (n < 0)
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: len must not be negative, got %lld (element %lld)", def->name,
                       (long long)n, (long long)k);
    int64_t p = pos < 0 ? pos + len : pos;
    if (n > len - p) n = len - p;
    int64_t from = chars ? utf8_offset(s, bytes, p) : p, to = chars ? utf8_offset(s, bytes, p + n) : p + n;
    tide_status st = tide_str_put(o, k, s + from, to - from);
    if (st) return st;
  }
  return TIDE_OK;
}

/* unsorted_segment_join (x, segment_ids, separator): out[s, j...] joins, in
 * order, the x[i, j...] whose segment_ids[i] is s (ids' shape a prefix of
 * x's: i runs over it); n = num_segments; an empty segment gives "". */
tide_status tide_cpu_unsorted_segment_join(const tide_op_def *def, const tide_attrs *a, int n_in,
                                           const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *x = in[0], *ids = in[1];
  tide_tensor *o = out[0];
  int64_t slen;
  const char *sep = tide_string_at(in[2]->data, 0, &slen);
  int64_t n = ids->nelem, inner = n ? x->nelem / n : 0, segs = a->n;
  int64_t *seg = malloc((size_t)(n ? n : 1) * sizeof *seg);
  if (!seg) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = tide_str_offset(ids, i);
    seg[i] = ids->dt == TIDE_INT64 ? ((const int64_t *)ids->data)[off] : ((const int32_t *)ids->data)[off];
    if (seg[i] < 0 || seg[i] >= segs) {
      int64_t v = seg[i];
      free(seg);
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: segment_ids[%lld] = %lld is out of range [0, %lld)", def->name,
                       (long long)i, (long long)v, (long long)segs);
    }
  }
  tide_strings_adopt(o);
  tide_strbuf b = {0};
  tide_status st = TIDE_OK;
  for (int64_t s = 0; s < segs && !st; s++) {
    for (int64_t j = 0; j < inner && !st; j++) {
      b.n = 0;
      bool ok = true, first = true;
      for (int64_t i = 0; i < n && ok; i++) {
        if (seg[i] != s) continue;
        int64_t len;
        const char *p = tide_str_at(x, i * inner + j, &len);
        ok = (first || tide_strbuf_add(&b, sep, slen)) && tide_strbuf_add(&b, p, len);
        first = false;
      }
      st = ok ? tide_str_put(o, s * inner + j, b.p, b.n) : TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    }
  }
  free(b.p);
  free(seg);
  return st;
}
