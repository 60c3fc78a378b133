/* core/ngrams_count.h — how many n-grams a row of tokens gives (TF's
 * StringNGrams rules): shared by ngrams' inference and its CPU kernel. */
#ifndef TIDE_CORE_NGRAMS_COUNT_H
#define TIDE_CORE_NGRAMS_COUNT_H

#include "tide/ops.h"

/* The pad on each side for width w (TF's get_pad_width): attrs n, or w - 1
 * when n < 0, never more than w - 1. */
static inline int64_t tide_ngrams_pad(const tide_attrs *a, int64_t w) {
  int64_t p = a->n < 0 ? w - 1 : a->n;
  return p < w - 1 ? p : w - 1;
}

/* The n-grams of width w a row of len tokens gives. */
static inline int64_t tide_ngrams_of_width(const tide_attrs *a, int64_t len, int64_t w) {
  int64_t c = len + 2 * tide_ngrams_pad(a, w) - w + 1;
  return c > 0 ? c : 0;
}

/* All of a row's n-grams: each width of ints in turn, or one n-gram of the
 * whole row when m (preserve short sequences) is set and none fit. */
static inline int64_t tide_ngrams_count(const tide_attrs *a, int64_t len) {
  int64_t c = 0;
  for (int i = 0; i < a->nints; i++) c += tide_ngrams_of_width(a, len, a->ints[i]);
  return a->m && len > 0 && c == 0 ? 1 : c;
}

#endif
