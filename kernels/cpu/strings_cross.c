/* cpu/strings_cross.c — cross_hashed (TF's SparseCrossHashed on dense
 * inputs): every combination of one feature from each input, per row, hashed.
 *
 * Inputs x1..xn, each [B, k_i] string or int64; output int64 [B, k_1*...*k_n],
 * the combinations in row-major order (the last input's feature turns
 * fastest), as TF's ProductIterator. A combination's hash starts at the key
 * (ints[0]) and folds in each feature with FingerprintCat64: a string feature
 * as its Fingerprint64, an int64 one as its value. n = num_buckets: the hash
 * modulo n, or modulo INT64_MAX when n is 0 (TF's HashCrosser). */
#include "strings_hash.h"
#include "strings_util.h"

/* The hash of feature j of row b of input t (TF's SparseTensorColumn<int64>::Feature). */
static uint64_t feature(const tide_tensor *t, int64_t b, int64_t j) {
  int64_t off = b * t->strides[0] + j * t->strides[1];
  if (t->dt == TIDE_INT64) return (uint64_t)((const int64_t *)t->data)[off];
  int64_t len;
  const char *s = tide_string_at(t->data, off, &len);
  return strings_hash_fingerprint64(s, (size_t)len);
}

tide_status tide_cpu_cross_hashed(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_out);
  int64_t rows = out[0]->dims[0], width = out[0]->dims[1];
  int64_t *o = out[0]->data;
  uint64_t mod = a->n > 0 ? (uint64_t)a->n : (uint64_t)INT64_MAX;
  int64_t *pick = malloc((size_t)n_in * sizeof *pick);
  if (!pick) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
  for (int64_t b = 0; b < rows; b++) {
    for (int i = 0; i < n_in; i++) pick[i] = 0;
    for (int64_t c = 0; c < width; c++) {
      uint64_t h = (uint64_t)a->ints[0];
      for (int i = 0; i < n_in; i++) h = strings_hash_cat64(h, feature(in[i], b, pick[i]));
      o[b * width + c] = (int64_t)(h % mod);
      for (int i = n_in - 1; i >= 0; i--) { /* the next combination: the last input turns fastest */
        if (++pick[i] < in[i]->dims[1]) break;
        pick[i] = 0;
      }
    }
  }
  free(pick);
  return TIDE_OK;
}
