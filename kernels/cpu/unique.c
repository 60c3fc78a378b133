/* cpu/unique.c — tf.unique: the distinct values of a 1-D tensor in order of
 * first occurrence, and each element's position among them (one hash pass). */
#include "iter.h"
#include "../core/registry.h"
#include "../core/scratch.h"

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

/* An open-addressing table from keys to value numbers, grown as values come
 * (so few distinct values keep it small and in cache). */
typedef struct table {
  uint64_t cap;      /* a power of two */
  int64_t *id;       /* value number per slot, -1: empty */
  uint64_t *key;     /* key per slot */
} table;

/* Make t hold `cap` empty slots; false when out of memory or past a VM's cap
 * (the error set: the tables are scratch, charged as tensors are). */
static bool table_init(table *t, uint64_t cap) {
  t->cap = cap;
  t->id = tide_scratch_alloc((size_t)cap * sizeof *t->id, "unique", "a hash table");
  t->key = t->id ? tide_scratch_alloc((size_t)cap * sizeof *t->key, "unique", "a hash table") : NULL;
  if (!t->id || !t->key) return false;
  memset(t->id, 0xff, (size_t)cap * sizeof *t->id);
  return true;
}

static void table_free(table *t) {
  tide_scratch_free(t->id, (size_t)t->cap * sizeof *t->id);
  tide_scratch_free(t->key, (size_t)t->cap * sizeof *t->key);
}

/* The slot holding key, or the empty slot where it would go. */
static inline uint64_t table_find(const table *t, uint64_t key) {
  uint64_t s = mix(key) & (t->cap - 1);
  while (t->id[s] >= 0 && t->key[s] != key) s = (s + 1) & (t->cap - 1);
  return s;
}

/* Double t's slots and insert the `count` keys of keys[] again (value u at keys[u];
 * has[u] false for a NaN, which is in no slot). */
static bool table_grow(table *t, const uint64_t *keys, const bool *has, int64_t count) {
  table bigger;
  if (!table_init(&bigger, t->cap * 2)) {
    table_free(&bigger);
    return false;
  }
  for (int64_t u = 0; u < count; u++) {
    if (!has[u]) continue;
    uint64_t s = table_find(&bigger, keys[u]);
    bigger.id[s] = u, bigger.key[s] = keys[u];
  }
  table_free(t);
  *t = bigger;
  return true;
}

tide_status tide_cpu_unique(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                            int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  tide_tensor tmp;
  const tide_tensor *x;
  tide_status st = tide_contiguous_or_copy(def->name, in[0], &tmp, &x);
  if (st) return st;
  int64_t n = x->nelem;
  int64_t *first = NULL;   /* the first occurrence of each value */
  uint64_t *keys = NULL;   /* each value's key */
  bool *has = NULL;        /* false for a NaN (no key) */
  table t = {0};
  if (a->dtype == TIDE_INT32 && n - 1 > INT32_MAX) {
    st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: %lld elements do not fit int32 positions (use out_idx=\"int64\")", def->name,
                   (long long)n);
    goto done;
  }
  if ((st = tide_tensor_init(out[1], a->dtype, 1, &n)) != TIDE_OK) goto done;
  first = tide_scratch_alloc((size_t)(n + 1) * sizeof *first, def->name, "the first positions");
  keys = first ? tide_scratch_alloc((size_t)(n + 1) * sizeof *keys, def->name, "the keys") : NULL;
  has = keys ? tide_scratch_alloc((size_t)(n + 1) * sizeof *has, def->name, "the key flags") : NULL;
  if (!first || !keys || !has || !table_init(&t, 64)) {
    st = tide_last_status(); /* its message: out of memory, or the VM's cap that refused */
    goto done;
  }
  int64_t count = 0;
  for (int64_t k = 0; k < n; k++) {
    uint64_t key = 0;
    int64_t id = count; /* a new value unless the table knows it (every NaN is new) */
    bool keyed = key_at(x, k, &key);
    if (keyed) {
      uint64_t s = table_find(&t, key);
      if (t.id[s] >= 0) id = t.id[s];
      else t.id[s] = count, t.key[s] = key;
    }
    if (id == count) {
      first[count] = k, keys[count] = key, has[count] = keyed;
      count++;
      if ((uint64_t)count * 2 > t.cap && !table_grow(&t, keys, has, count)) {
        st = tide_last_status();
        goto done;
      }
    }
    if (a->dtype == TIDE_INT32) ((int32_t *)out[1]->data)[k] = (int32_t)id;
    else ((int64_t *)out[1]->data)[k] = id;
  }
  if ((st = tide_tensor_init(out[0], x->dt, 1, &count)) != TIDE_OK) goto done;
  size_t es = tide_dtype_size_unchecked(x->dt);
  for (int64_t u = 0; u < count; u++)
    memcpy((char *)out[0]->data + u * (int64_t)es, (const char *)x->data + first[u] * (int64_t)es, es);
done:
  table_free(&t);
  tide_scratch_free(first, (size_t)(n + 1) * sizeof *first);
  tide_scratch_free(keys, (size_t)(n + 1) * sizeof *keys);
  tide_scratch_free(has, (size_t)(n + 1) * sizeof *has);
  tide_tensor_release(&tmp);
  return st;
}
