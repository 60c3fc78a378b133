/* cpu/indices.c — the range check that gather and scatter_add share, with an
 * error naming the bad index by its coordinates. */
#include "indices.h"

/* "[1, 0]": the coordinates of flat position k in a tensor of shape t. */
static const char *coords_str(char *buf, size_t size, const tide_tensor *t, int64_t k) {
  int64_t c[TIDE_MAX_DIMS];
  for (int d = t->ndim - 1; d >= 0; d--) {
    c[d] = t->dims[d] ? k % t->dims[d] : 0;
    k = t->dims[d] ? k / t->dims[d] : 0;
  }
  return tide_fmt_dims(buf, size, t->ndim, c);
}

tide_status tide_check_indices(const char *op, const tide_tensor *idx, int64_t n, int64_t size, int axis,
                               const char *what, const tide_tensor *t) {
  for (int64_t k = 0; k < n; k++) {
    int64_t v = tide_index_at(idx, k);
    if (v < 0 || v >= size) {
      char sc[128], st[128];
      return TIDE_FAIL(TIDE_ERR_INDEX, "%s: indices%s = %lld is not in [0, %lld) (axis %d of %s with shape %s)", op,
                       coords_str(sc, sizeof sc, idx, k), (long long)v, (long long)size, axis, what,
                       TIDE_SHAPE_STR(st, t));
    }
  }
  return TIDE_OK;
}
