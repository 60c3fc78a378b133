/* io/tensor_bundle.c — TF checkpoints (tensor bundles): the .index table's
 * header and entries checked at open, whole tensors read from the data shards. */
#include "file_bytes.h"
#include "tensor_bundle_internal.h"

#include "atomic_file.h"
#include "crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor_bundle.c assumes a little-endian machine (it reads little-endian bundles)"
#endif

#define WHO "TF checkpoint"

/* An index past this is no checkpoint's: one entry takes ~100 bytes. */
#define MAX_INDEX_BYTES ((uint64_t)1 << 30)
/* TF's own limit on a tensor's rank (TensorShape::MaxDimensions). */
enum { TF_MAX_RANK = 254 };
/* The format version tide reads (TF's kTensorBundleVersion). */
enum { BUNDLE_VERSION = 1 };

/* ---- dtypes ---------------------------------------------------------------- */

typedef struct tf_dtype_info {
  const char *name; /* tf.DType.name */
  size_t size;      /* bytes per element; 0: not a fixed size */
  int32_t tide;     /* tide_dtype, or -1 */
} tf_dtype_info;

/* TF's DataType codes (types.proto), 1..32. */
static const tf_dtype_info DTYPES[] = {
    [1] = {"float32", 4, TIDE_FLOAT32},  [2] = {"float64", 8, TIDE_FLOAT64},  [3] = {"int32", 4, TIDE_INT32},
    [4] = {"uint8", 1, TIDE_UINT8},      [5] = {"int16", 2, -1},             [6] = {"int8", 1, TIDE_INT8},
    [7] = {"string", 0, TIDE_STRING},    [8] = {"complex64", 8, -1},         [9] = {"int64", 8, TIDE_INT64},
    [10] = {"bool", 1, TIDE_BOOL},       [11] = {"qint8", 1, -1},            [12] = {"quint8", 1, -1},
    [13] = {"qint32", 4, -1},            [14] = {"bfloat16", 2, TIDE_BFLOAT16}, [15] = {"qint16", 2, -1},
    [16] = {"quint16", 2, -1},           [17] = {"uint16", 2, -1},           [18] = {"complex128", 16, -1},
    [19] = {"float16", 2, TIDE_FLOAT16}, [20] = {"resource", 0, -1},         [21] = {"variant", 0, -1},
    [22] = {"uint32", 4, -1},            [23] = {"uint64", 8, -1},           [24] = {"float8_e5m2", 1, -1},
    [25] = {"float8_e4m3fn", 1, -1},     [26] = {"float8_e4m3fnuz", 1, -1},  [27] = {"float8_e4m3b11fnuz", 1, -1},
    [28] = {"float8_e5m2fnuz", 1, -1},   [29] = {"int4", 1, -1},             [30] = {"uint4", 1, -1},
    [31] = {"int2", 1, -1},              [32] = {"uint2", 1, -1},
};
enum { N_DTYPES = (int)(sizeof DTYPES / sizeof DTYPES[0]) };

static bool known_dtype(int32_t d) { return d > 0 && d < N_DTYPES && DTYPES[d].name; }
size_t tensor_bundle_tf_size(int32_t d) { return known_dtype(d) ? DTYPES[d].size : 0; }
int32_t tensor_bundle_tide_dtype(int32_t d) { return known_dtype(d) ? DTYPES[d].tide : -1; }
const char *tensor_bundle_tf_name(int32_t d) { return known_dtype(d) ? DTYPES[d].name : "an unknown dtype"; }

/* ---- messages ---------------------------------------------------------------- */

static tide_status corrupt(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status corrupt(const char *path, const char *fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: %s", path, what);
}

/* ---- files ------------------------------------------------------------------- */

/* Open `path` to read, if the file policy allows it and it is a regular file
 * (a FIFO must not hang the open): the descriptor and its size, or -1 with an
 * error naming `what` (the checkpoint's index or one of its data files). */
static int open_regular(const char *path, const char *what, uint64_t *size) {
  if (tide_file_check(path, false)) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    TIDE_FAIL(TIDE_ERR_IO, WHO ": cannot open %s '%s': %s", what, path, strerror(errno));
    return -1;
  }
  struct stat sb;
  const char *why = fstat(fd, &sb) != 0 ? strerror(errno) : !S_ISREG(sb.st_mode) ? "it is not a regular file" : NULL;
  if (why) {
    close(fd);
    TIDE_FAIL(TIDE_ERR_IO, WHO ": cannot read %s '%s': %s", what, path, why);
    return -1;
  }
  *size = (uint64_t)sb.st_size;
  return fd;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  return n < 0 ? NULL : s;
}

/* ---- opening ----------------------------------------------------------------- */

void tide_tensor_bundle_close(tide_tensor_bundle *b) {
  if (!b) return;
  for (int64_t i = 0; i < b->n_all; i++)
    if (b->all[i].proto) tensorflow__bundle_entry_proto__free_unpacked(b->all[i].proto, NULL);
  free(b->all);
  free(b->listed);
  free(b->dims);
  sstable_free(&b->table);
  free(b->image);
  free(b->index_path);
  free(b->prefix);
  free(b);
}

static tide_status read_index(tide_tensor_bundle *b, uint64_t *n) {
  uint64_t size;
  int fd = open_regular(b->index_path, "the index", &size);
  if (fd < 0) {
    /* no `prefix.index`: a prefix that is a file or folder of another format says what it is */
    const char *kind = NULL;
    struct stat sb;
    int k = stat(b->index_path, &sb) != 0 && errno == ENOENT ? tide_file_kind(b->prefix, &kind) : TIDE_FILE_UNKNOWN;
    if (k != TIDE_FILE_UNKNOWN && kind)
      return TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is no checkpoint prefix (there is no '%s'): it is %s", b->prefix,
                       b->index_path, kind);
    return tide_last_status();
  }
  tide_status st = TIDE_OK;
  if (size > MAX_INDEX_BYTES)
    st = corrupt(b->index_path, "it has %" PRIu64 " bytes; a checkpoint index has far fewer (at most %" PRIu64 " here)",
                 size, MAX_INDEX_BYTES);
  else if (!(b->image = malloc(size ? (size_t)size : 1)))
    st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory reading '%s'", b->index_path);
  else if (file_pread_all(fd, b->image, (size_t)size, 0) != 0)
    st = TIDE_FAIL(TIDE_ERR_IO, WHO ": cannot read '%s': %s", b->index_path, errno ? strerror(errno) : "it shrank");
  close(fd);
  *n = size;
  return st;
}

/* The header: the first entry, under the empty key. */
static tide_status read_header(tide_tensor_bundle *b) {
  const char *path = b->index_path;
  if (b->table.count == 0 || b->table.entries[0].key_len != 0)
    return corrupt(path, "it has no header entry (the empty key, which TF writes first)");
  const sstable_entry *h = &b->table.entries[0];
  Tensorflow__BundleHeaderProto *p = tensorflow__bundle_header_proto__unpack(NULL, h->value_len, h->value);
  if (!p) return corrupt(path, "its header is not a BundleHeaderProto");
  tide_status st = TIDE_OK;
  const Tensorflow__VersionDef *v = p->version;
  bool bad_consumer = false;
  for (size_t i = 0; v && i < v->n_bad_consumers; i++) bad_consumer |= v->bad_consumers[i] == BUNDLE_VERSION;
  if (p->num_shards < 0)
    st = corrupt(path, "its header gives %d data shards", p->num_shards);
  else if (p->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE)
    st = TIDE_FAIL(TIDE_ERR_UNSUPPORTED, WHO ": '%s' was written on a big-endian machine; tide reads little-endian "
                   "checkpoints only", path);
  else if (v && v->min_consumer > BUNDLE_VERSION)
    st = TIDE_FAIL(TIDE_ERR_UNSUPPORTED, WHO ": '%s' needs a reader of format version %d or newer; tide reads "
                   "version %d", path, v->min_consumer, BUNDLE_VERSION);
  else if (bad_consumer)
    st = TIDE_FAIL(TIDE_ERR_UNSUPPORTED, WHO ": '%s' says readers of format version %d must not read it", path,
                   BUNDLE_VERSION);
  b->num_shards = p->num_shards;
  tensorflow__bundle_header_proto__free_unpacked(p, NULL);
  return st;
}

/* Append n dims to the bundle's dims (cap: its capacity, grown here). */
static tide_status push_dims(tide_tensor_bundle *b, size_t *used, size_t *cap, const int64_t *d, size_t n) {
  if (n == 0) return TIDE_OK;
  if (*used + n > *cap) {
    size_t c = *cap ? *cap : 256;
    while (c < *used + n) c *= 2;
    int64_t *p = realloc(b->dims, c * sizeof *p);
    if (!p) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory reading '%s'", b->index_path);
    b->dims = p;
    *cap = c;
  }
  memcpy(b->dims + *used, d, n * sizeof *d);
  *used += n;
  return TIDE_OK;
}

/* Check one tensor's entry and fill *e. */
static tide_status read_entry_proto(tide_tensor_bundle *b, const sstable_entry *s, bundle_entry *e, size_t *dims_used,
                                    size_t *dims_cap) {
  const char *path = b->index_path;
  char kb[96];
  const char *key = sstable_show_key(s->key, s->key_len, kb, sizeof kb);
  Tensorflow__BundleEntryProto *p = tensorflow__bundle_entry_proto__unpack(NULL, s->value_len, s->value);
  if (!p) return corrupt(path, "the entry of '%s' is not a BundleEntryProto", key);
  tide_status st = TIDE_OK;
  e->key = s->key;
  e->key_len = s->key_len;
  e->tf_dtype = (int32_t)p->dtype;
  e->shard = p->shard_id;
  e->dims_at = (int64_t)*dims_used;
  const Tensorflow__TensorShapeProto *shape = p->shape;
  size_t nd = shape ? shape->n_dim : 0;
  int64_t d[TF_MAX_RANK];
  int64_t nelem = 1;
  if (!known_dtype(e->tf_dtype)) {
    st = corrupt(path, "'%s' has an unknown dtype code %d", key, e->tf_dtype);
  } else if (shape && shape->unknown_rank) {
    st = corrupt(path, "'%s' has a shape of unknown rank", key);
  } else if (nd > TF_MAX_RANK) {
    st = corrupt(path, "'%s' has rank %zu; TF allows at most %d", key, nd, TF_MAX_RANK);
  } else {
    for (size_t k = 0; k < nd && !st; k++) {
      d[k] = shape->dim[k]->size;
      if (d[k] < 0) st = corrupt(path, "dimension %zu of '%s' is %" PRId64, k, key, d[k]);
      else if (__builtin_mul_overflow(nelem, d[k], &nelem)) st = corrupt(path, "the shape of '%s' is absurd (its "
                                                                          "element count overflows)", key);
    }
  }
  if (!st) st = push_dims(b, dims_used, dims_cap, d, nd);
  e->ndim = (int32_t)nd;
  e->nelem = nelem;
  if (!st && p->n_slices > 0) {
    e->proto = p; /* its bytes are its slices', under keys of their own */
    return tensor_bundle_check_slices(b, e);
  }
  size_t esize = tensor_bundle_tf_size(e->tf_dtype);
  uint64_t want;
  if (st) {
    /* already refused above */
  } else if (p->shard_id < 0 || p->shard_id >= b->num_shards) {
    st = corrupt(path, "'%s' lies in data shard %d, but the checkpoint has %d", key, p->shard_id, b->num_shards);
  } else if (p->offset < 0 || p->size < 0 || p->size > INT64_MAX - p->offset) {
    st = corrupt(path, "'%s' has a bad byte range (offset %" PRId64 ", size %" PRId64 ")", key, p->offset, p->size);
  } else if (esize && (__builtin_mul_overflow((uint64_t)nelem, (uint64_t)esize, &want) || want != (uint64_t)p->size)) {
    st = corrupt(path, "'%s' has %" PRId64 " elements of %s (%zu bytes each), but its entry holds %" PRId64 " bytes",
                 key, nelem, tensor_bundle_tf_name(e->tf_dtype), esize, p->size);
  }
  e->offset = (uint64_t)p->offset;
  e->size = (uint64_t)p->size;
  e->crc = tide_crc32c_unmask(p->crc32c);
  tensorflow__bundle_entry_proto__free_unpacked(p, NULL);
  return st;
}

static tide_status read_entries(tide_tensor_bundle *b) {
  size_t n = b->table.count - 1; /* all but the header */
  b->all = calloc(n + 1, sizeof *b->all);
  b->listed = calloc(n + 1, sizeof *b->listed);
  if (!b->all || !b->listed) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory reading '%s'", b->index_path);
  size_t dims_used = 0, dims_cap = 0;
  for (size_t i = 0; i < n; i++) {
    tide_status st = read_entry_proto(b, &b->table.entries[i + 1], &b->all[i], &dims_used, &dims_cap);
    b->n_all = (int64_t)i + 1;
    if (st) return st;
    /* A key starting with a NUL byte is a slice of a partitioned tensor
     * (TF's EncodeTensorNameSlice): not listed, as TF lists none. */
    if (b->all[i].key_len == 0 || b->all[i].key[0] != '\0') b->listed[b->count++] = (int64_t)i;
  }
  return TIDE_OK;
}

tide_tensor_bundle *tide_tensor_bundle_open(const char *prefix) {
  if (!prefix) return TIDE_FAIL(TIDE_ERR_VALUE, WHO ": the prefix is NULL"), NULL;
  tide_tensor_bundle *b = calloc(1, sizeof *b);
  if (!b) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory"), NULL;
  tide_status st = TIDE_OK;
  uint64_t n = 0;
  if (!(b->prefix = strdup(prefix)) || !(b->index_path = str_printf("%s.index", prefix)))
    st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
  if (!st) st = read_index(b, &n);
  if (!st) st = sstable_parse(b->image, (size_t)n, WHO, b->index_path, &b->table);
  if (!st) st = read_header(b);
  if (!st) st = read_entries(b);
  if (st) {
    tide_tensor_bundle_close(b);
    return NULL;
  }
  return b;
}

/* ---- what it holds ------------------------------------------------------------ */

static const bundle_entry *listed(const tide_tensor_bundle *b, int64_t i) {
  return b && i >= 0 && i < b->count ? &b->all[b->listed[i]] : NULL;
}

int64_t tide_tensor_bundle_count(const tide_tensor_bundle *b) { return b ? b->count : 0; }

const char *tide_tensor_bundle_key(const tide_tensor_bundle *b, int64_t i, int64_t *len) {
  const bundle_entry *e = listed(b, i);
  if (len) *len = e ? (int64_t)e->key_len : 0;
  return e ? e->key : NULL;
}

int64_t tide_tensor_bundle_find(const tide_tensor_bundle *b, const char *key, int64_t len) {
  if (!b || !key || len < 0) return -1;
  int64_t at = sstable_find(&b->table, key, (size_t)len);
  if (at <= 0) return -1; /* absent, or the header */
  if (len > 0 && key[0] == '\0') return -1;
  /* the listed entries are `all` less the slices, in the same order */
  int64_t lo = 0, hi = b->count;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (b->listed[mid] < at - 1) lo = mid + 1;
    else hi = mid;
  }
  return lo < b->count && b->listed[lo] == at - 1 ? lo : -1;
}

const char *tide_tensor_bundle_dtype_name(const tide_tensor_bundle *b, int64_t i) {
  const bundle_entry *e = listed(b, i);
  return e ? tensor_bundle_tf_name(e->tf_dtype) : NULL;
}

int32_t tide_tensor_bundle_dtype(const tide_tensor_bundle *b, int64_t i) {
  const bundle_entry *e = listed(b, i);
  return e ? tensor_bundle_tide_dtype(e->tf_dtype) : -1;
}

const int64_t *tide_tensor_bundle_shape(const tide_tensor_bundle *b, int64_t i, int32_t *ndim) {
  const bundle_entry *e = listed(b, i);
  if (ndim) *ndim = e ? e->ndim : 0;
  static const int64_t none[1] = {0};
  return e ? (e->ndim ? b->dims + e->dims_at : none) : NULL;
}

/* ---- reading ------------------------------------------------------------------ */

/* A string tensor's bytes buf[0..n): the varint64 lengths, the masked
 * CRC-32C of the lengths (each as a little-endian uint32, or uint64 past
 * 2^32-1), then the strings. *crc continues over the lengths so written,
 * the stored length checksum and the strings (TF's WriteStringTensor);
 * *lens gets the lengths (the caller frees it), *at where the strings start. */
static tide_status decode_strings(const bundle_entry *e, const char *path, const unsigned char *buf, size_t n,
                                  uint64_t **lens_out, size_t *strings_at, uint32_t *crc) {
  char kb[96];
  const char *key = sstable_show_key(e->key, e->key_len, kb, sizeof kb);
  if ((uint64_t)e->nelem > n) /* every length takes a byte at least */
    return corrupt(path, "string tensor '%s' has %" PRId64 " elements but only %zu bytes", key, e->nelem, n);
  uint64_t *lens = malloc(((size_t)e->nelem + 1) * sizeof *lens);
  if (!lens) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory reading '%s'", path);
  size_t at = 0;
  tide_status st = TIDE_OK;
  for (int64_t i = 0; i < e->nelem && !st; i++) {
    uint64_t v = 0;
    bool done = false;
    for (int k = 0; k < 10 && at < n && !done; k++) {
      unsigned char c = buf[at++];
      v |= (uint64_t)(c & 0x7f) << (7 * k);
      done = !(c & 0x80);
    }
    if (!done) st = corrupt(path, "the length of element %" PRId64 " of string tensor '%s' is broken", i, key);
    lens[i] = v;
    if (v <= UINT32_MAX) {
      uint32_t v32 = (uint32_t)v;
      *crc = tide_crc32c_extend(*crc, &v32, 4);
    } else {
      *crc = tide_crc32c_extend(*crc, &v, 8);
    }
  }
  if (!st && n - at < 4) st = corrupt(path, "string tensor '%s' ends before its length checksum", key);
  if (!st) {
    uint32_t raw;
    memcpy(&raw, buf + at, 4);
    if (tide_crc32c_unmask(raw) != *crc)
      st = corrupt(path, "the lengths of string tensor '%s' fail their checksum (stored %08x, computed %08x)", key,
                   tide_crc32c_unmask(raw), *crc);
    *crc = tide_crc32c_extend(*crc, buf + at, 4);
    at += 4;
  }
  size_t left = n - at;
  for (int64_t i = 0; i < e->nelem && !st; i++) {
    if (lens[i] > left) st = corrupt(path, "the strings of tensor '%s' run past its %zu bytes", key, n);
    else left -= (size_t)lens[i];
  }
  if (!st && left != 0) st = corrupt(path, "string tensor '%s' has %zu bytes after its last string", key, left);
  if (st) {
    free(lens);
    return st;
  }
  *crc = tide_crc32c_extend(*crc, buf + at, n - at);
  *lens_out = lens;
  *strings_at = at;
  return TIDE_OK;
}

/* The strings buf[at..) of the given lengths into the string tensor out. */
static tide_status fill_strings(const bundle_entry *e, const unsigned char *buf, size_t at, const uint64_t *lens,
                                tide_tensor *out) {
  tide_status st = TIDE_OK;
  for (int64_t i = 0; !st && i < e->nelem; i++) {
    st = tide_string_set(out, i, (const char *)buf + at, (int64_t)lens[i]);
    at += (size_t)lens[i];
  }
  return st;
}

tide_status tensor_bundle_read_entry(tide_tensor_bundle *b, const bundle_entry *e, tide_tensor *out) {
  char kb[96];
  const char *key = sstable_show_key(e->key, e->key_len, kb, sizeof kb);
  int32_t dt = tensor_bundle_tide_dtype(e->tf_dtype);
  if (dt < 0)
    return TIDE_FAIL(TIDE_ERR_DTYPE, WHO ": '%s': tensor '%s' has dtype %s, which tide has no dtype for (tide reads "
                     "float32, float64, float16, bfloat16, int8, uint8, int32, int64, bool and string)",
                     b->prefix, key, tensor_bundle_tf_name(e->tf_dtype));
  if (e->ndim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, WHO ": '%s': tensor '%s' has rank %d; tide tensors have at most %d dims",
                     b->prefix, key, e->ndim, TIDE_MAX_DIMS);
  char *path = str_printf("%s.data-%05d-of-%05d", b->prefix, e->shard, b->num_shards);
  if (!path) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
  uint64_t fsize;
  int fd = open_regular(path, "the data file", &fsize);
  tide_status st = fd < 0 ? tide_last_status() : TIDE_OK;
  const int64_t *dims = b->dims + e->dims_at;
  unsigned char *buf = NULL;
  uint64_t *lens = NULL;
  size_t strings_at = 0;
  uint32_t crc = 0;
  bool made = false; /* out holds a tensor to release on failure */
  if (!st && (e->offset > fsize || e->size > fsize - e->offset)) {
    st = corrupt(path, "tensor '%s' lies at bytes %" PRIu64 "-%" PRIu64 ", past its end (%" PRIu64 " bytes)", key,
                 e->offset, e->offset + e->size, fsize);
  } else if (!st && dt != TIDE_STRING) {
    /* Straight into the tensor's buffer; checked before anyone sees it. */
    st = tide_tensor_init(out, dt, e->ndim, e->ndim ? dims : NULL);
    made = !st;
    if (!st && e->size && file_pread_all(fd, out->data, (size_t)e->size, e->offset) != 0)
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": cannot read tensor '%s' from '%s': %s", key, path,
                     errno ? strerror(errno) : "the file ended early (it changed after it was opened)");
    if (!st) crc = tide_crc32c_extend(0, out->data, (size_t)e->size);
  } else if (!st && e->size > 0) {
    if (!(buf = malloc((size_t)e->size))) st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory reading '%s'", path);
    else if (file_pread_all(fd, buf, (size_t)e->size, e->offset) != 0)
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": cannot read tensor '%s' from '%s': %s", key, path,
                     errno ? strerror(errno) : "the file ended early (it changed after it was opened)");
    else st = decode_strings(e, path, buf, (size_t)e->size, &lens, &strings_at, &crc);
  }
  if (fd >= 0) close(fd);
  if (!st && crc != e->crc)
    st = corrupt(path, "the bytes of tensor '%s' fail their checksum (stored %08x, computed %08x)", key, e->crc, crc);
  if (!st && dt == TIDE_STRING) {
    /* No bytes at all: every string empty, as TF reads it. */
    st = tide_tensor_init(out, TIDE_STRING, e->ndim, e->ndim ? dims : NULL);
    made = !st;
    if (!st && lens) st = fill_strings(e, buf, strings_at, lens, out);
  }
  if (!st && dt == TIDE_BOOL) {
    unsigned char *p = out->data;
    for (uint64_t k = 0; k < e->size; k++) p[k] = p[k] != 0;
  }
  if (st && made) tide_tensor_release(out);
  free(lens);
  free(buf);
  free(path);
  return st;
}

tide_status tide_tensor_bundle_read(tide_tensor_bundle *b, int64_t i, tide_tensor *out) {
  if (!b) return TIDE_FAIL(TIDE_ERR_VALUE, WHO ": the checkpoint handle is NULL");
  if (!out) return TIDE_FAIL(TIDE_ERR_VALUE, WHO ": the output tensor is NULL");
  const bundle_entry *e = listed(b, i);
  if (!e)
    return TIDE_FAIL(TIDE_ERR_INDEX, WHO ": tensor index %" PRId64 " is out of range ('%s' lists %" PRId64 ")", i,
                     b->prefix, b->count);
  return e->proto ? tensor_bundle_read_sliced(b, e, out) : tensor_bundle_read_entry(b, e, out);
}
