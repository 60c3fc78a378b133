/* core/utf8.h — strict UTF-8 validation, one rule for every reader: Rust's
 * str::from_utf8 and PCRE2's check (no overlong forms, no surrogates, nothing past U+10FFFF). */
#ifndef TIDE_CORE_UTF8_H
#define TIDE_CORE_UTF8_H

#include <stddef.h>

/* The offset of the first byte of s[0..n) that starts no valid UTF-8
 * character (a stray, overlong, surrogate, too large or cut-short sequence),
 * or n when all of it is valid. */
static inline size_t tide_utf8_invalid_at(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;      /* overlong */
      else if (c == 0xED) hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;      /* overlong */
      else if (c == 0xF4) hi = 0x8F; /* past U+10FFFF */
    } else {
      return i;
    }
    if (n - i < len || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; k++)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return n;
}

#endif
