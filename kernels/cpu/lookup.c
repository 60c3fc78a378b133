/* cpu/lookup.c — hashed vocabulary lookup (Keras's StringLookup/IntegerLookup, TF's StaticHashTable): a table
 * of open-addressed slots built from a vocabulary (lookup_table), and keys found through it (lookup_find). */
#include "lookup_hash.h"
#include "strings_util.h"

/* The vocabulary's element i hashed (string bytes, or an int64). */
static uint64_t vocab_hash(const tide_tensor *v, int64_t i) {
  if (v->dt == TIDE_STRING) {
    int64_t len;
    const char *b = tide_str_at(v, i, &len);
    return tide_lookup_hash_bytes(b, len);
  }
  return tide_lookup_hash_int(((const int64_t *)v->data)[tide_str_offset(v, i)]);
}

/* lookup_table(vocab): int64 slots (a power of two, at least twice the vocabulary), each the index of the token
 * that hashed there or -1; a token repeated keeps its first index. */
tide_status tide_cpu_lookup_table(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(a), TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *v = in[0];
  int64_t n = v->dims[0], cap = out[0]->dims[0];
  int64_t *slots = out[0]->data;
  for (int64_t s = 0; s < cap; s++) slots[s] = -1;
  uint64_t mask = (uint64_t)cap - 1;
  bool strings = v->dt == TIDE_STRING;
  for (int64_t i = 0; i < n; i++) {
    uint64_t s = vocab_hash(v, i) & mask;
    int64_t len = 0, ilen;
    const char *b = strings ? tide_str_at(v, i, &len) : NULL;
    int64_t key = strings ? 0 : ((const int64_t *)v->data)[tide_str_offset(v, i)];
    for (;; s = (s + 1) & mask) {
      int64_t j = slots[s];
      if (j < 0) {
        slots[s] = i;
        break;
      }
      bool same;
      if (strings) {
        const char *c = tide_str_at(v, j, &ilen);
        same = ilen == len && memcmp(b, c, (size_t)len) == 0;
      } else {
        same = ((const int64_t *)v->data)[tide_str_offset(v, j)] == key;
      }
      if (same) break; /* a repeat: the first index stays */
    }
  }
  return TIDE_OK;
}

/* The index of a key in the vocabulary through the table, -1 when it is not there, or -2 when the table names
 * a slot past the vocabulary (a table that lookup_table did not make from it). */
static int64_t find_string(const tide_tensor *v, const int64_t *slots, uint64_t mask, const char *b, int64_t len) {
  for (uint64_t s = tide_lookup_hash_bytes(b, len) & mask, p = 0; p <= mask; s = (s + 1) & mask, p++) {
    int64_t j = slots[s], jl;
    if (j < 0) return -1;
    if (j >= v->dims[0]) return -2;
    const char *c = tide_str_at(v, j, &jl);
    if (jl == len && memcmp(b, c, (size_t)len) == 0) return j;
  }
  return -1; /* a full table (not lookup_table's): every slot probed */
}
static int64_t find_int(const tide_tensor *v, const int64_t *slots, uint64_t mask, int64_t key) {
  const int64_t *vd = v->data;
  int64_t vs = v->strides[0];
  for (uint64_t s = tide_lookup_hash_int(key) & mask, p = 0; p <= mask; s = (s + 1) & mask, p++) {
    int64_t j = slots[s];
    if (j < 0) return -1;
    if (j >= v->dims[0]) return -2;
    if (vd[j * vs] == key) return j;
  }
  return -1;
}

/* lookup_find(keys, vocab, table): each key's index in the vocabulary plus n (Keras's first token index); a key
 * not there goes to one of the m OOV slots just before it (n - m + floormod(key, m) for ints; strings take
 * m <= 1), or -1 when m = 0. */
tide_status tide_cpu_lookup_find(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(n_in), TIDE_UNUSED(n_out);
  const tide_tensor *k = in[0], *v = in[1], *t = in[2];
  int64_t cap = t->dims[0];
  /* an empty slot always ends a probe: at least one exists when the table is over half empty */
  if (cap <= 0 || (cap & (cap - 1)) != 0 || cap < 2 * v->dims[0])
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table (%lld slots) was not made by lookup_table from this vocabulary "
                     "(%lld tokens)", def->name, (long long)cap, (long long)v->dims[0]);
  const int64_t *slots = t->data;
  int64_t *copy = NULL;
  if (t->strides[0] != 1) { /* a strided table (a view): read it contiguous */
    copy = malloc((size_t)cap * sizeof *copy);
    if (!copy) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory", def->name);
    for (int64_t s = 0; s < cap; s++) copy[s] = slots[s * t->strides[0]];
    slots = copy;
  }
  uint64_t mask = (uint64_t)cap - 1;
  int64_t *o = out[0]->data, n = out[0]->nelem, first = a->n, m = a->m;
  bool contiguous = tide_tensor_is_contiguous(k);
  tide_status st = TIDE_OK;
  for (int64_t i = 0; i < n; i++) {
    int64_t j, off = contiguous ? i : tide_str_offset(k, i);
    int64_t key = 0;
    if (k->dt == TIDE_STRING) {
      int64_t len;
      const char *b = tide_string_at(k->data, off, &len);
      j = find_string(v, slots, mask, b, len);
    } else {
      key = ((const int64_t *)k->data)[off];
      j = find_int(v, slots, mask, key);
    }
    if (j == -2) {
      st = TIDE_FAIL(TIDE_ERR_VALUE, "%s: the table names a slot past the vocabulary of %lld tokens (it was not "
                     "made by lookup_table from this vocabulary)", def->name, (long long)v->dims[0]);
      break;
    }
    if (j >= 0) o[i] = j + first;
    else if (m == 0) o[i] = -1;
    else if (m == 1) o[i] = first - 1;
    else o[i] = first - m + ((key % m) + m) % m;
  }
  free(copy);
  return st;
}
