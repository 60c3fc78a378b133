/* cpu/string_compare.c — equal and not_equal on string tensors: byte-wise
 * comparison of two elements (same length, same bytes), giving bool. */
#include "elementwise.h"

#include <string.h>

/* True when two string elements hold the same bytes (NULL is ""). */
static inline bool same_bytes(const tide_string *a, const tide_string *b) {
  if (a == b) return true;
  int64_t na, nb;
  const char *pa = tide_string_bytes(a, &na), *pb = tide_string_bytes(b, &nb);
  return na == nb && memcmp(pa, pb, (size_t)na) == 0;
}

static void equal_loop(int64_t n, char **p, const int64_t *s, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++)
    *(uint8_t *)(p[0] + i * s[0]) = same_bytes(*(tide_string **)(p[1] + i * s[1]), *(tide_string **)(p[2] + i * s[2]));
}

static void not_equal_loop(int64_t n, char **p, const int64_t *s, void *ctx) {
  (void)ctx;
  for (int64_t i = 0; i < n; i++)
    *(uint8_t *)(p[0] + i * s[0]) = !same_bytes(*(tide_string **)(p[1] + i * s[1]), *(tide_string **)(p[2] + i * s[2]));
}

tide_loop_fn tide_string_compare_loop(int op) {
  if (op == TIDE_OP_EQUAL) return equal_loop;
  if (op == TIDE_OP_NOT_EQUAL) return not_equal_loop;
  return NULL;
}
