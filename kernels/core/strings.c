/* core/strings.c — string elements: making, counting and freeing refcounted
 * byte strings, string storages that own their elements, and the copies. */
#include "internal.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>

/* refs is atomic; the bytes follow, then a NUL outside len. A string made
 * while a memory account is current (a capped VM's call, its pipeline
 * threads) is charged to it, as tensor storages are, and credits it back
 * when freed: string tensors hold their bytes here, not in their storage. */
struct tide_string {
  int64_t refs;
  int64_t len;
  tide_memory_account *account;
  char bytes[];
};

static int64_t live_strings; /* atomic: strings made and not yet freed, for leak checks */

int64_t tide_string_live_count(void) { return __atomic_load_n(&live_strings, __ATOMIC_RELAXED); }

static size_t block_bytes(int64_t len) { return sizeof(tide_string) + (size_t)len + 1; }

tide_string *tide_string_new(const char *bytes, int64_t len) {
  if (len < 0 || (len > 0 && !bytes)) {
    TIDE_FAIL(TIDE_ERR_VALUE, "string: invalid bytes (length %lld)", (long long)len);
    return NULL;
  }
  if ((uint64_t)len > (uint64_t)INT64_MAX / 2) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "string: %lld bytes is too long", (long long)len);
    return NULL;
  }
  size_t total = block_bytes(len);
  tide_memory_account *account = tide_memory_account_current();
  if (TIDE_UNLIKELY(account)) {
    tide_memory_account *refuser = tide_memory_account_try(account, (int64_t)total);
    if (refuser) {
      tide_memory_refused(refuser, "a string", (size_t)len);
      return NULL;
    }
    tide_memory_account_retain(account);
  }
  tide_string *s = tide_alloc(total);
  if (!s) {
    if (account) {
      tide_memory_account_credit(account, (int64_t)total);
      tide_memory_account_release(account);
    }
    return NULL;
  }
  __atomic_add_fetch(&live_strings, 1, __ATOMIC_RELAXED);
  s->refs = 1;
  s->len = len;
  s->account = account;
  if (len) memcpy(s->bytes, bytes, (size_t)len);
  s->bytes[len] = '\0';
  return s;
}

void tide_string_retain(tide_string *s) {
  if (s) __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void tide_string_release(tide_string *s) {
  if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    __atomic_sub_fetch(&live_strings, 1, __ATOMIC_RELAXED);
    tide_memory_account *account = s->account;
    size_t total = block_bytes(s->len);
    tide_free(s, total);
    if (account) {
      tide_memory_account_credit(account, (int64_t)total);
      tide_memory_account_release(account);
    }
  }
}

const char *tide_string_bytes(const tide_string *s, int64_t *len) {
  if (len) *len = s ? s->len : 0;
  return s ? s->bytes : "";
}

const char *tide_string_at(const void *data, int64_t i, int64_t *len) {
  return tide_string_bytes(((tide_string *const *)data)[i], len);
}

tide_status tide_string_set(tide_tensor *t, int64_t i, const char *bytes, int64_t len) {
  if (!t || t->dt != TIDE_STRING || !t->storage)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "string_set: expected a string tensor with data");
  tide_string **slot = (tide_string **)t->data + i;
  char *lo = t->storage->data, *hi = lo + t->storage->nbytes;
  if ((char *)slot < lo || (char *)(slot + 1) > hi)
    return TIDE_FAIL(TIDE_ERR_INDEX, "string_set: element %lld is outside the tensor's storage", (long long)i);
  tide_string *s = NULL;
  if (len > 0 && !(s = tide_string_new(bytes, len))) return tide_last_status();
  tide_strings_own(t->storage);
  tide_string *old = *slot;
  *slot = s;
  tide_string_release(old);
  return TIDE_OK;
}

/* ---- storages of string references ---- */

void tide_strings_own(tide_storage *s) {
  if (!s || (s->flags & TIDE_STORAGE_STRINGS)) return;
  tide_string **e = s->data;
  size_t n = s->nbytes / sizeof *e;
  for (size_t i = 0; i < n; i++) tide_string_retain(e[i]);
  s->flags |= TIDE_STORAGE_STRINGS;
}

void tide_strings_release_elements(tide_storage *s) {
  tide_string **e = s->data;
  size_t n = s->nbytes / sizeof *e;
  for (size_t i = 0; i < n; i++) tide_string_release(e[i]);
}

tide_status tide_strings_copy_into(tide_tensor *dst, const tide_tensor *src) {
  int nd = dst->ndim, off = dst->ndim - src->ndim;
  char sd[128], ss[128];
  if (off < 0)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "copy_into: cannot broadcast a value of shape %s to %s", TIDE_SHAPE_STR(ss, src),
                     TIDE_SHAPE_STR(sd, dst));
  int64_t sstr[TIDE_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    int64_t sdim = d < off ? 1 : src->dims[d - off];
    if (sdim != dst->dims[d] && sdim != 1)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "copy_into: cannot broadcast a value of shape %s to %s",
                       TIDE_SHAPE_STR(ss, src), TIDE_SHAPE_STR(sd, dst));
    sstr[d] = d < off || sdim == 1 ? 0 : src->strides[d - off];
  }
  int64_t n = dst->nelem;
  if (n <= 0) return TIDE_OK;
  /* Take the new values first: source and destination may overlap. */
  tide_string **vals = malloc((size_t)n * sizeof *vals);
  if (!vals) return TIDE_FAIL(TIDE_ERR_MEMORY, "copy_into: out of memory");
  int64_t idx[TIDE_MAX_DIMS] = {0};
  tide_string *const *sp = src->data;
  for (int64_t k = 0; k < n; k++) {
    int64_t at = 0;
    for (int d = 0; d < nd; d++) at += idx[d] * sstr[d];
    vals[k] = sp[at];
    tide_string_retain(vals[k]);
    for (int d = nd - 1; d >= 0 && ++idx[d] == dst->dims[d]; d--) idx[d] = 0;
  }
  tide_strings_own(dst->storage);
  tide_string **dp = dst->data;
  for (int64_t k = 0; k < n; k++) {
    int64_t at = 0;
    for (int d = 0; d < nd; d++) at += idx[d] * dst->strides[d];
    tide_string *old = dp[at];
    dp[at] = vals[k];
    tide_string_release(old);
    for (int d = nd - 1; d >= 0 && ++idx[d] == dst->dims[d]; d--) idx[d] = 0;
  }
  free(vals);
  return TIDE_OK;
}
