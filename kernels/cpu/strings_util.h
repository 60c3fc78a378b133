/* cpu/strings_util.h — what the string kernels share: reading an element
 * of a strided string tensor in row-major order, broadcast strides, and
 * storing a new string into an output that owns its elements. */
#ifndef TIDE_CPU_STRINGS_UTIL_H
#define TIDE_CPU_STRINGS_UTIL_H

#include "../core/registry.h"

#include <stdlib.h>
#include <string.h>

/* The offset (elements) of row-major element k of t through its strides. */
static inline int64_t tide_str_offset(const tide_tensor *t, int64_t k) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (k % t->dims[d]) * t->strides[d];
    k /= t->dims[d];
  }
  return off;
}

/* Bytes and length of row-major element k of string tensor t. */
static inline const char *tide_str_at(const tide_tensor *t, int64_t k, int64_t *len) {
  return tide_string_at(t->data, tide_str_offset(t, k), len);
}

/* Strides (elements) that read t broadcast to the ndim dims of a result. */
static inline void tide_str_bcast(const tide_tensor *t, int ndim, int64_t *strides) {
  int off = ndim - t->ndim;
  for (int d = 0; d < ndim; d++)
    strides[d] = d < off || t->dims[d - off] == 1 ? 0 : t->strides[d - off];
}

/* Offset of result element k (row-major over dims) through broadcast strides. */
static inline int64_t tide_str_bcast_offset(int ndim, const int64_t *dims, const int64_t *strides, int64_t k) {
  int64_t off = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    off += (k % dims[d]) * strides[d];
    k /= dims[d];
  }
  return off;
}

/* Store a new string of len bytes as element i of o (contiguous, adopted by
 * tide_strings_adopt); "" stays NULL. */
static inline tide_status tide_str_put(tide_tensor *o, int64_t i, const char *b, int64_t len) {
  if (len == 0) return TIDE_OK;
  tide_string *s = tide_string_new(b, len);
  if (!s) return tide_last_status();
  ((tide_string **)o->data)[i] = s;
  return TIDE_OK;
}

/* ASCII whitespace (space, \t \n \v \f \r): what TF's strip, split and to_number skip. */
static inline bool tide_ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Characters of UTF-8 text b (n bytes): bytes that do not continue one, so
 * invalid UTF-8 counts too, never fails (TF counts so). */
static inline int64_t tide_utf8_chars(const char *b, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += ((unsigned char)b[i] & 0xC0) != 0x80;
  return c;
}

/* A growable byte buffer for building one result string. */
typedef struct tide_strbuf {
  char *p;
  int64_t n, cap;
} tide_strbuf;

static inline bool tide_strbuf_add(tide_strbuf *b, const char *s, int64_t n) {
  if (b->n + n > b->cap) {
    int64_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n) cap *= 2;
    char *q = realloc(b->p, (size_t)cap);
    if (!q) return false;
    b->p = q, b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, s, (size_t)n);
  b->n += n;
  return true;
}

#endif
