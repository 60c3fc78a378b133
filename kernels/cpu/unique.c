/* cpu/unique.c — tf.unique: the distinct values of a 1-D tensor in order of
 * first occurrence, and each element's position among them (one hash pass). */
#include "iter.h"
#include "../core/registry.h"

#include <stdlib.h>
#include <string.h>

/* The key element k of contiguous x is compared by, or false for a value
 * equal to nothing (NaN, as TF's hash map compares with ==). float32 and
 * float64 count -0.0 and 0.0 as one value (TF hashes them alike); float16 and
 * bfloat16 compare bit patterns, so -0.0 and 0.0 stay apart, as TF's do. */
static inline bool key_at(const tide_tensor *x, int64_t k, uint64_t *key) {
  switch (x->dt) {
  case TIDE_FLOAT32: {
    float v = ((const float *)x->data)[k];
    uint32_t bits;
    if (v != v) return false;
    if (v == 0) v = 0; /* -0.0 -> 0.0 */
    memcpy(&bits, &v, 4);
    *key = bits;
    return true;
  }
  case TIDE_FLOAT64: {
    double v = ((const double *)x->data)[k];
    if (v != v) return false;
    if (v == 0) v = 0;
    memcpy(key, &v, 8);
    return true;
  }
  case TIDE_FLOAT16:
  case TIDE_BFLOAT16: {
    uint16_t bits = ((const uint16_t *)x->data)[k];
    bool nan = x->dt == TIDE_FLOAT16 ? (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) : (bits & 0x7f80) == 0x7f80 && (bits & 0x007f);
    *key = bits;
    return !nan;
  }
  case TIDE_INT8: *key = (uint64_t)(int64_t)((const int8_t *)x->data)[k]; return true;
  case TIDE_UINT8: *key = ((const uint8_t *)x->data)[k]; return true;
  case TIDE_INT32: *key = (uint64_t)(int64_t)((const int32_t *)x->data)[k]; return true;
  case TIDE_INT64: *key = (uint64_t)((const int64_t *)x->data)[k]; return true;
  default: *key = ((const uint8_t *)x->data)[k] != 0; return true; /* bool: any nonzero byte is true */
  }
}

/* A well-mixed hash of a key (splitmix64's finalizer). */
static inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

tide_status tide_cpu_unique(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp;
  const tide_tensor *x;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) return st;
  int64_t n = x->nelem;
  int64_t *first = NULL, *slot_id = NULL; /* first occurrence of each value; table slot -> value number */
  uint64_t *slot_key = NULL;
  if (a->dtype == TIDE_INT32 && n - 1 > INT32_MAX) {
    st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: %lld elements do not fit int32 positions (use out_idx=\"int64\")", def->name,
                   (long long)n);
    goto done;
  }
  if ((st = tide_tensor_init(out[1], a->dtype, 1, &n)) != TIDE_OK) goto done;
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n) cap *= 2;
  first = malloc((size_t)(n + 1) * sizeof *first);
  slot_id = malloc((size_t)cap * sizeof *slot_id);
  slot_key = malloc((size_t)cap * sizeof *slot_key);
  if (!first || !slot_id || !slot_key) {
    st = TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a table of %lld values", def->name, (long long)n);
    goto done;
  }
  memset(slot_id, 0xff, (size_t)cap * sizeof *slot_id); /* -1: empty */
  int64_t count = 0;
  for (int64_t k = 0; k < n; k++) {
    uint64_t key;
    int64_t id = -1;
    if (key_at(x, k, &key)) {
      uint64_t s = mix(key) & (cap - 1);
      while (slot_id[s] >= 0 && slot_key[s] != key) s = (s + 1) & (cap - 1);
      if (slot_id[s] < 0) slot_id[s] = count, slot_key[s] = key;
      id = slot_id[s];
    }
    if (id < 0 || id == count) first[count] = k, id = count++; /* a new value (every NaN is one) */
    if (a->dtype == TIDE_INT32) ((int32_t *)out[1]->data)[k] = (int32_t)id;
    else ((int64_t *)out[1]->data)[k] = id;
  }
  if ((st = tide_tensor_init(out[0], x->dt, 1, &count)) != TIDE_OK) goto done;
  size_t es = tide_dtsize(x->dt);
  for (int64_t u = 0; u < count; u++)
    memcpy((char *)out[0]->data + u * (int64_t)es, (const char *)x->data + first[u] * (int64_t)es, es);
done:
  free(first);
  free(slot_id);
  free(slot_key);
  tide_tensor_release(&tmp);
  return st;
}
