/* core/tensor.c — tensor headers and storages: creating, sharing, releasing,
 * views with bounds checks, contiguity, and queued releases for hosts. */
#include "internal.h"
#include "scratch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- storage ---------------------------------------------------------------- */

/* Owned storages put the header in the first cache line of their block. */
enum { STORAGE_HEADER = 64 };
_Static_assert(sizeof(struct tide_storage) <= STORAGE_HEADER, "storage header fits a line");

tide_storage *tide_storage_new(size_t nbytes) {
  size_t total = STORAGE_HEADER + nbytes;
  if (total < nbytes) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot allocate %zu bytes", nbytes);
    return NULL;
  }
  /* A capped host's tensors count against its cap (core/account.c). */
  tide_memory_account *account = tide_memory_account_current();
  if (TIDE_UNLIKELY(account)) {
    tide_memory_account *refuser = tide_memory_account_try(account, (int64_t)total);
    if (refuser) { /* the message names the cap that refused: a load's, or the VM's around it */
      tide_memory_refused(refuser, "a tensor", nbytes);
      return NULL;
    }
    tide_memory_account_retain(account);
  }
  char *block = tide_alloc(total);
  if (!block) {
    if (account) {
      tide_memory_account_credit(account, (int64_t)total);
      tide_memory_account_release(account);
    }
    return NULL;
  }
  tide_storage *s = (tide_storage *)block;
  memset(s, 0, sizeof *s);
  s->free_ctx = account;
  s->refs = 1;
  s->data = block + STORAGE_HEADER;
  s->nbytes = nbytes;
  s->alloc_bytes = total;
  s->device = TIDE_CPU;
  return s;
}

void tide_storage_retain(tide_storage *s) { __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED); }

void tide_storage_release(tide_storage *s) {
  if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  if (s->flags & TIDE_STORAGE_STRINGS) tide_strings_release_elements(s);
  if (s->alloc_bytes) {
    tide_memory_account *account = s->free_ctx;
    size_t bytes = s->alloc_bytes;
    tide_free(s, bytes);
    if (account) {
      tide_memory_account_credit(account, (int64_t)bytes);
      tide_memory_account_release(account);
    }
  } else {
    if (s->free_fn) s->free_fn(s->free_ctx, s->free_ptr);
    free(s);
  }
}

/* ---- layout helpers ------------------------------------------------------------ */

int64_t tide_dims_product(int ndim, const int64_t *dims) {
  int64_t n = 1, sign = 0;
  for (int i = 0; i < ndim; i++) {
    sign |= dims[i]; /* any unknown (-1) dim makes it negative */
    if (__builtin_mul_overflow(n, dims[i], &n)) return -1;
  }
  return sign < 0 ? -1 : n;
}

/* An unknown dim (-1, a traced graph's None) gives nelem -1, and the strides
 * of the dims outside it 0 (they depend on it); the dims inside keep theirs. */
void tide_tensor_set_contiguous_layout(tide_tensor *t, int dtype, int ndim, const int64_t *dims) {
  if (TIDE_UNLIKELY(ndim < 0)) { /* TIDE_UNKNOWN_RANK: only tracing and its plans come here */
    for (int i = 0; i < TIDE_MAX_DIMS; i++) t->dims[i] = t->strides[i] = 0;
    t->ndim = TIDE_UNKNOWN_RANK;
    t->dt = dtype;
    t->nelem = -1;
    return;
  }
  int64_t copy[TIDE_MAX_DIMS]; /* dims may alias t->dims */
  for (int i = 0; i < ndim; i++) copy[i] = dims[i];
  int64_t stride = 1, n = 1, sign = 0;
  bool overflow = false;
  for (int i = ndim - 1; i >= 0; i--) { /* one pass: this runs for every eager op */
    int64_t d = copy[i];
    t->dims[i] = d;
    t->strides[i] = stride;
    stride = d < 0 ? 0 : stride * (d ? d : 1);
    sign |= d;
    overflow |= __builtin_mul_overflow(n, d, &n);
  }
  for (int i = ndim; i < TIDE_MAX_DIMS; i++) t->dims[i] = t->strides[i] = 0;
  t->ndim = ndim;
  t->dt = dtype;
  t->nelem = overflow || sign < 0 ? -1 : n;
}

const char *tide_fmt_dims(char *buf, size_t size, int ndim, const int64_t *dims) {
  size_t used = 0;
  buf[0] = '\0';
  if (ndim < 0) {
    snprintf(buf, size, "<unknown>");
    return buf;
  }
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && used < size; i++) {
    if (dims[i] == -1) /* an unknown dim of a traced graph (other negatives are bad input, shown as given) */
      used += (size_t)snprintf(buf + used, size - used, i ? ", None" : "None");
    else
      used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld", (long long)dims[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

int tide_normalize_axis(const char *op, int64_t axis, int ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim || ndim == 0) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: axis %lld is out of range for a tensor of rank %d (valid: %d to %d)",
              op, (long long)axis, ndim, -ndim, ndim - 1);
    return -1;
  }
  return (int)a;
}

tide_status tide_axis_mask(const char *op, int n, const int64_t *axes, int ndim, bool *mask) {
  for (int d = 0; d < ndim; d++) mask[d] = false;
  for (int k = 0; k < n; k++) {
    int a = tide_normalize_axis(op, axes[k], ndim);
    if (a < 0) return tide_last_status();
    /* TF rejects a repeated axis ("Axes contains duplicate dimension"). */
    if (mask[a])
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: axis %lld is repeated (it names dimension %d of a tensor of rank %d)", op,
                       (long long)axes[k], a, ndim);
    mask[a] = true;
  }
  return TIDE_OK;
}

/* A valid dtype code, a rank in [0, TIDE_MAX_DIMS], no negative dims, and a byte size int64 holds. */
static tide_status check_new_shape(const char *what, int dtype, int ndim, const int64_t *dims) {
  if (dtype < 0 || dtype >= TIDE_NUM_DTYPES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: invalid dtype code %d", what, dtype);
  if (ndim < 0 || ndim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: rank %d is out of range (0 to %d)", what, ndim, TIDE_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (dims[i] < 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: dimension %d is negative (%lld)", what, i, (long long)dims[i]);
  int64_t n = tide_dims_product(ndim, dims);
  if (n < 0 || (uint64_t)n > (uint64_t)INT64_MAX / tide_dtype_size(dtype))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: shape is too large", what);
  return TIDE_OK;
}

/* ---- making and dropping ------------------------------------------------------- */

/* Allocate data for a header whose contiguous layout is set; inline if allowed and small. */
static tide_status alloc_data(tide_tensor *t, bool allow_inline) {
  size_t nbytes;
  if (t->nelem < 0 || __builtin_mul_overflow((size_t)t->nelem, tide_dtype_size_unchecked(t->dt), &nbytes))
    return TIDE_FAIL(TIDE_ERR_SHAPE, "tensor: shape is too large");
  t->dev = TIDE_CPU;
  if (TIDE_UNLIKELY(t->dt == TIDE_STRING)) { /* never inline (inline headers get no finalizer); all "" */
    tide_storage *s = tide_storage_new(nbytes);
    t->storage = s;
    t->data = s ? s->data : NULL;
    t->flags = 0;
    if (s) memset(s->data, 0, nbytes);
    return s ? TIDE_OK : tide_last_status();
  }
  if (allow_inline && nbytes <= TIDE_INLINE_BYTES) {
    t->storage = NULL;
    t->data = t->inline_data.bytes;
    t->flags = TIDE_TENSOR_INLINE;
    return TIDE_OK;
  }
  tide_storage *s = tide_storage_new(nbytes);
  t->storage = s;
  t->data = s ? s->data : NULL;
  t->flags = 0;
  return s ? TIDE_OK : tide_last_status();
}

tide_status tide_tensor_alloc_data(tide_tensor *t) { return alloc_data(t, true); }

/* tide_tensor_init and tide_tensor_init_heap: check, lay out, allocate. */
static tide_status init_tensor(tide_tensor *t, int dtype, int ndim, const int64_t *dims, bool allow_inline) {
  tide_status st = check_new_shape("tensor", dtype, ndim, dims);
  if (st) return st;
  tide_tensor_set_contiguous_layout(t, dtype, ndim, dims);
  return alloc_data(t, allow_inline);
}

tide_status tide_tensor_init(tide_tensor *t, int dtype, int ndim, const int64_t *dims) {
  return init_tensor(t, dtype, ndim, dims, true);
}

tide_status tide_tensor_init_heap(tide_tensor *t, int dtype, int ndim, const int64_t *dims) {
  return init_tensor(t, dtype, ndim, dims, false);
}

tide_status tide_tensor_wrap(tide_tensor *t, void *data, int dtype, int ndim, const int64_t *dims,
                             const int64_t *strides, tide_free_fn free_fn, void *ctx) {
  tide_status st = check_new_shape("wrap", dtype, ndim, dims);
  if (st) return st;
  if (dtype == TIDE_STRING)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "wrap: string tensors cannot wrap memory (their elements are counted "
                     "references); make one with tide_tensor_init and tide_string_set");
  int64_t n = tide_dims_product(ndim, dims);
  if (!data && n > 0) return TIDE_FAIL(TIDE_ERR_VALUE, "wrap: data pointer is NULL");
  tide_tensor_set_contiguous_layout(t, dtype, ndim, dims); /* check_new_shape bounded the sizes */
  int64_t es = (int64_t)tide_dtype_size_unchecked(dtype), *sd = t->strides;
  if (strides)
    for (int i = 0; i < ndim; i++) sd[i] = strides[i];
  /* The byte extent the strides reach, so later views can be bounds-checked;
   * every step checked, since a wrapped number would make that check lie. */
  int64_t lo = 0, hi = 0, reach, nbytes = 0;
  bool bad = false;
  for (int i = 0; i < ndim && n > 0 && !bad; i++) {
    bad = __builtin_mul_overflow(dims[i] - 1, sd[i], &reach) || __builtin_mul_overflow(reach, es, &reach) ||
          (reach < 0 ? __builtin_add_overflow(lo, reach, &lo) : __builtin_add_overflow(hi, reach, &hi));
  }
  if (n > 0 && !bad) bad = __builtin_sub_overflow(hi, lo, &nbytes) || __builtin_add_overflow(nbytes, es, &nbytes);
  tide_storage *s = bad ? NULL : calloc(1, sizeof *s);
  if (!s) {
    t->storage = NULL, t->data = NULL, t->nelem = 0;
    return bad ? TIDE_FAIL(TIDE_ERR_SHAPE, "wrap: the strides reach beyond what int64 byte offsets can address")
               : TIDE_FAIL(TIDE_ERR_MEMORY, "wrap: out of memory");
  }
  s->refs = 1;
  s->data = (char *)data + lo;
  s->nbytes = (size_t)nbytes;
  s->free_fn = free_fn;
  s->free_ctx = ctx;
  s->free_ptr = data;
  s->alloc_bytes = 0;
  s->device = TIDE_CPU;
  t->storage = s;
  t->data = data;
  t->dev = TIDE_CPU;
  t->flags = 0;
  return TIDE_OK;
}

tide_status tide_tensor_share(tide_tensor *dst, const tide_tensor *src) {
  if (dst == src) return TIDE_OK;
  memcpy(dst, src, sizeof *dst);
  if (src->flags & TIDE_TENSOR_INLINE)
    dst->data = dst->inline_data.bytes + ((const char *)src->data - (const char *)src->inline_data.bytes);
  else if (src->storage)
    tide_storage_retain(src->storage);
  return TIDE_OK;
}

void tide_tensor_release(tide_tensor *t) {
  if (!t) return;
  tide_storage *s = t->storage;
  t->storage = NULL;
  t->data = NULL;
  t->flags = 0;
  t->nelem = 0;
  if (s) tide_storage_release(s);
}

tide_status tide_tensor_promote(tide_tensor *t) {
  if (!(t->flags & TIDE_TENSOR_INLINE)) return TIDE_OK;
  size_t nbytes = (size_t)t->nelem * tide_dtype_size_unchecked(t->dt);
  tide_storage *s = tide_storage_new(nbytes);
  if (!s) return tide_last_status();
  memcpy(s->data, t->data, nbytes);
  t->storage = s;
  t->data = s->data;
  t->flags &= ~(uint32_t)TIDE_TENSOR_INLINE;
  return TIDE_OK;
}

tide_tensor *tide_tensor_new(int dtype, int ndim, const int64_t *dims) {
  tide_tensor *t = calloc(1, sizeof *t);
  if (!t) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "tensor: out of memory");
    return NULL;
  }
  if (init_tensor(t, dtype, ndim, dims, false) != TIDE_OK) {
    free(t);
    return NULL;
  }
  return t;
}

void tide_tensor_free(tide_tensor *t) {
  if (!t) return;
  tide_tensor_release(t);
  free(t);
}

/* ---- views ------------------------------------------------------------------------ */

tide_status tide_tensor_view(tide_tensor *dst, const tide_tensor *src, int ndim, const int64_t *dims,
                             const int64_t *strides, int64_t offset) {
  if (src->flags & TIDE_TENSOR_INLINE)
    return TIDE_FAIL(TIDE_ERR_INTERNAL, "view: source data is inline; promote it first");
  if (!src->storage)
    return TIDE_FAIL(TIDE_ERR_VALUE, "view: source tensor has no data (released?)");
  if (ndim < 0 || ndim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "view: rank %d is out of range (0 to %d)", ndim, TIDE_MAX_DIMS);
  int64_t es = (int64_t)tide_dtype_size_unchecked(src->dt);
  const char *base = (const char *)src->storage->data;
  int64_t n = 1;
  char sd[160];
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0) return TIDE_FAIL(TIDE_ERR_SHAPE, "view: negative dimension %lld", (long long)dims[i]);
    if (__builtin_mul_overflow(n, dims[i], &n))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "view: the shape %s has too many elements", tide_fmt_dims(sd, sizeof sd, ndim, dims));
  }
  const char *start = src->data; /* an empty view reads nothing: its offset does not matter */
  if (n > 0) {
    /* Byte offsets from the storage's base, every step checked for overflow. */
    int64_t at = (const char *)src->data - base, lo = 0, hi = 0, reach, first, last;
    bool bad = __builtin_mul_overflow(offset, es, &reach) || __builtin_add_overflow(at, reach, &at);
    for (int i = 0; i < ndim && !bad; i++) {
      bad = __builtin_mul_overflow(dims[i] - 1, strides[i], &reach) || __builtin_mul_overflow(reach, es, &reach) ||
            (reach < 0 ? __builtin_add_overflow(lo, reach, &lo) : __builtin_add_overflow(hi, reach, &hi));
    }
    bad = bad || __builtin_add_overflow(at, lo, &first) || __builtin_add_overflow(at, hi, &last);
    if (bad || first < 0 || last > (int64_t)src->storage->nbytes - es)
      return TIDE_FAIL(TIDE_ERR_INDEX, "view: the view reaches outside its storage");
    start = base + at;
  }
  tide_storage_retain(src->storage);
  int64_t d[TIDE_MAX_DIMS], s[TIDE_MAX_DIMS];
  for (int i = 0; i < ndim; i++) d[i] = dims[i], s[i] = strides[i];
  memset(dst->dims, 0, sizeof dst->dims);
  memset(dst->strides, 0, sizeof dst->strides);
  for (int i = 0; i < ndim; i++) dst->dims[i] = d[i], dst->strides[i] = s[i];
  dst->ndim = ndim;
  dst->nelem = n;
  dst->dt = src->dt;
  dst->dev = src->dev;
  dst->flags = 0;
  dst->storage = src->storage;
  dst->data = (void *)start;
  return TIDE_OK;
}

bool tide_tensor_is_contiguous(const tide_tensor *t) {
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->dims[i] == 1) continue;
    if (t->strides[i] != expected) return t->nelem == 0;
    expected *= t->dims[i];
  }
  return true;
}

int64_t tide_tensor_storage_refs(const tide_tensor *t) {
  return t->storage ? __atomic_load_n(&t->storage->refs, __ATOMIC_RELAXED) : 0;
}

tide_status tide_tensor_mark_variable(tide_tensor *t) {
  if (!t || !t->storage)
    return TIDE_FAIL(TIDE_ERR_VALUE, "mark_variable: the tensor has no storage of its own (inline or empty)");
  t->storage->flags |= TIDE_STORAGE_VARIABLE;
  return TIDE_OK;
}

bool tide_tensor_is_variable_data(const tide_tensor *t) {
  return t && t->storage && (t->storage->flags & TIDE_STORAGE_VARIABLE);
}

int64_t tide_tensor_storage_bytes(const tide_tensor *t) { return t->storage ? (int64_t)t->storage->nbytes : 0; }

/* ---- queued releases ---------------------------------------------------------- */

static pthread_mutex_t token_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t *tokens;
static size_t ntokens, captokens;

void tide_release_token(void *ctx, void *data) {
  TIDE_UNUSED(data);
  pthread_mutex_lock(&token_lock);
  if (ntokens == captokens) {
    size_t cap = captokens ? captokens * 2 : 64;
    int64_t *grown = realloc(tokens, cap * sizeof *grown);
    if (!grown) { /* the owner then lives until exit: a leak, never a crash */
      pthread_mutex_unlock(&token_lock);
      return;
    }
    tokens = grown;
    captokens = cap;
  }
  tokens[ntokens++] = (int64_t)(intptr_t)ctx;
  pthread_mutex_unlock(&token_lock);
}

int64_t tide_released_token_pop(void) {
  int64_t tok = -1;
  pthread_mutex_lock(&token_lock);
  if (ntokens) tok = tokens[--ntokens];
  pthread_mutex_unlock(&token_lock);
  return tok;
}
