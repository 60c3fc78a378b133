/* io/tensor_bundle_slices.c — TF checkpoint tensors saved in slices (TF1's
 * partitioned variables): the slices' keys, and putting a tensor together. */
#include "tensor_bundle_internal.h"

#include "atomic_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "TF checkpoint"

/* ---- the slices' keys: TF's EncodeTensorNameSlice, in OrderedCode ----------- */

/* OrderedCode's WriteNumIncreasing: a length byte, then the value's bytes
 * big-endian without leading zeros. */
static size_t put_num(unsigned char *out, uint64_t v) {
  unsigned char be[8];
  int len = 0;
  for (; v > 0; v >>= 8) be[7 - len++] = (unsigned char)(v & 0xff);
  out[0] = (unsigned char)len;
  memcpy(out + 1, be + 8 - len, (size_t)len);
  return (size_t)len + 1;
}

/* OrderedCode's WriteString: 0x00 as 00 ff, 0xff as ff 00, then 00 01. */
static size_t put_string(unsigned char *out, const char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    out[o++] = c;
    if (c == 0x00) out[o++] = 0xff;
    else if (c == 0xff) out[o++] = 0x00;
  }
  out[o++] = 0x00;
  out[o++] = 0x01;
  return o;
}

/* OrderedCode's WriteSignedNumIncreasing: the sign bit (1: >= 0), then as
 * many copies of it as bytes follow the first, a delimiter bit, and the
 * value in two's complement, big-endian; 1 to 10 bytes. */
static size_t put_signed(unsigned char *out, int64_t v) {
  static const unsigned char HEADER[11][2] = {{0, 0},       {0x80, 0},    {0xc0, 0}, {0xe0, 0},
                                              {0xf0, 0},    {0xf8, 0},    {0xfc, 0}, {0xfe, 0},
                                              {0xff, 0},    {0xff, 0x80}, {0xff, 0xc0}};
  uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
  if (x < 64) {
    out[0] = (unsigned char)(0x80 ^ (uint8_t)v);
    return 1;
  }
  int bits = 64 - __builtin_clzll(x); /* 7..63 */
  int len = bits / 7 + 1;            /* n bytes hold numbers of up to 7n-1 bits */
  unsigned char buf[10];
  buf[0] = buf[1] = v < 0 ? 0xff : 0x00;
  for (int i = 0; i < 8; i++) buf[2 + i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
  unsigned char *begin = buf + 10 - len;
  begin[0] ^= HEADER[len][0];
  begin[1] ^= HEADER[len][1];
  memcpy(out, begin, (size_t)len);
  return (size_t)len;
}

/* The key of slice `s` of the tensor keyed key[0..n): 0, the name, the rank,
 * then each extent's start and length (-1: the whole dimension). malloc'd. */
static unsigned char *slice_key(const char *key, size_t n, const Tensorflow__TensorSliceProto *s, size_t *len) {
  unsigned char *out = malloc(1 + 2 * n + 2 + 9 + 20 * s->n_extent);
  if (!out) return NULL;
  size_t o = put_num(out, 0);
  o += put_string(out + o, key, n);
  o += put_num(out + o, s->n_extent);
  for (size_t d = 0; d < s->n_extent; d++) {
    const Tensorflow__TensorSliceProto__Extent *x = s->extent[d];
    bool full = x->has_length_case != TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
    o += put_signed(out + o, x->start);
    o += put_signed(out + o, full ? -1 : x->length);
  }
  *len = o;
  return out;
}

/* ---- checks at open ----------------------------------------------------------- */

tide_status tensor_bundle_check_slices(const tide_tensor_bundle *b, const bundle_entry *e) {
  char kb[96];
  const char *key = sstable_show_key(e->key, e->key_len, kb, sizeof kb);
  const int64_t *dims = b->dims + e->dims_at;
  if (e->ndim == 0)
    return TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: '%s' is a scalar saved in slices", b->index_path, key);
  for (size_t i = 0; i < e->proto->n_slices; i++) {
    const Tensorflow__TensorSliceProto *s = e->proto->slices[i];
    if (s->n_extent != (size_t)e->ndim)
      return TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: slice %zu of '%s' has %zu extents for rank %d",
                       b->index_path, i, key, s->n_extent, e->ndim);
    for (int d = 0; d < e->ndim; d++) {
      const Tensorflow__TensorSliceProto__Extent *x = s->extent[d];
      bool full = x->has_length_case != TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
      bool ok = full ? x->start == 0
                     : x->start >= 0 && x->length >= 0 && x->start <= dims[d] && x->length <= dims[d] - x->start;
      if (!ok)
        return TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: slice %zu of '%s' passes the end of dimension %d (%"
                         PRId64 ")", b->index_path, i, key, d, dims[d]);
    }
  }
  return TIDE_OK;
}

/* ---- putting a tensor together -------------------------------------------------- */

/* Copy the slice `part` (extents start[], len[] of the tensor `out`) into
 * out, marking each element in `seen`; false when one was seen already. */
static bool place(tide_tensor *out, const tide_tensor *part, const int64_t *start, const int64_t *len,
                  unsigned char *seen) {
  int nd = out->ndim;
  size_t es = tide_dtype_size(out->dt);
  if (part->nelem == 0) return true;
  int64_t idx[TIDE_MAX_DIMS] = {0}; /* over the outer dims of the part */
  int64_t run = len[nd - 1];
  const unsigned char *src = part->data;
  for (;;) {
    int64_t at = 0;
    for (int d = 0; d < nd; d++) at = at * out->dims[d] + start[d] + (d < nd - 1 ? idx[d] : 0);
    for (int64_t k = 0; k < run; k++) {
      if (seen[at + k]) return false;
      seen[at + k] = 1;
    }
    memcpy((unsigned char *)out->data + (size_t)at * es, src, (size_t)run * es);
    src += (size_t)run * es;
    int d = nd - 2;
    for (; d >= 0; d--) {
      if (++idx[d] < len[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return true;
  }
}

tide_status tensor_bundle_read_sliced(tide_tensor_bundle *b, const bundle_entry *e, tide_tensor *out) {
  char kb[96];
  const char *key = sstable_show_key(e->key, e->key_len, kb, sizeof kb);
  int32_t dt = tensor_bundle_tide_dtype(e->tf_dtype);
  if (dt < 0 || dt == TIDE_STRING || e->ndim > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, WHO ": '%s': tensor '%s' (dtype %s, rank %d) is saved in slices, and tide "
                     "puts together only numeric and bool tensors of at most %d dims", b->prefix, key,
                     tensor_bundle_tf_name(e->tf_dtype), e->ndim, TIDE_MAX_DIMS);
  const int64_t *dims = b->dims + e->dims_at;
  size_t n = e->proto->n_slices;
  const bundle_entry **parts = calloc(n, sizeof *parts);
  if (!parts) return TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
  tide_status st = TIDE_OK;
  int64_t covered = 0;
  /* Every slice's entry first: found, of the right dtype and shape, and
   * together as many elements as the tensor (so its size is bounded by theirs). */
  for (size_t i = 0; i < n && !st; i++) {
    const Tensorflow__TensorSliceProto *s = e->proto->slices[i];
    size_t klen;
    unsigned char *k = slice_key(e->key, e->key_len, s, &klen);
    if (!k) {
      st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
      break;
    }
    int64_t at = sstable_find(&b->table, (const char *)k, klen);
    free(k);
    if (at <= 0) {
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: slice %zu of '%s' has no entry", b->index_path, i, key);
      break;
    }
    const bundle_entry *p = &b->all[at - 1];
    int64_t elems = 1;
    bool same = p->tf_dtype == e->tf_dtype && p->ndim == e->ndim && !p->proto;
    for (int d = 0; same && d < e->ndim; d++) {
      const Tensorflow__TensorSliceProto__Extent *x = s->extent[d];
      int64_t want = x->has_length_case == TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH ? x->length
                                                                                                    : dims[d];
      same = b->dims[p->dims_at + d] == want;
      elems *= want;
    }
    if (!same)
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: slice %zu of '%s' does not hold the dtype and shape its "
                     "extents give", b->index_path, i, key);
    else if (__builtin_add_overflow(covered, elems, &covered) || covered > e->nelem)
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: the slices of '%s' hold more elements than it has",
                     b->index_path, key);
    parts[i] = p;
  }
  if (!st && covered != e->nelem)
    st = TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: the slices of '%s' hold %" PRId64 " of its %" PRId64
                   " elements", b->index_path, key, covered, e->nelem);
  /* The slices are read before the tensor is made, so a slice whose bytes
   * are not in its file fails before a tensor of the size the index claims
   * is allocated. */
  tide_tensor *read = st ? NULL : calloc(n, sizeof *read);
  if (!st && !read) st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
  size_t n_read = 0;
  for (; !st && n_read < n; n_read++) {
    st = tensor_bundle_read_entry(b, parts[n_read], &read[n_read]);
    if (st) break;
  }
  unsigned char *seen = NULL;
  bool made = false;
  if (!st) {
    st = tide_tensor_init(out, dt, e->ndim, dims);
    made = !st;
  }
  if (!st && !(seen = calloc((size_t)e->nelem + 1, 1))) st = TIDE_FAIL(TIDE_ERR_MEMORY, WHO ": out of memory");
  for (size_t i = 0; i < n && !st; i++) {
    const Tensorflow__TensorSliceProto *s = e->proto->slices[i];
    int64_t start[TIDE_MAX_DIMS], len[TIDE_MAX_DIMS];
    for (int d = 0; d < e->ndim; d++) {
      bool full = s->extent[d]->has_length_case != TENSORFLOW__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
      start[d] = full ? 0 : s->extent[d]->start;
      len[d] = full ? dims[d] : s->extent[d]->length;
    }
    if (!place(out, &read[i], start, len, seen))
      st = TIDE_FAIL(TIDE_ERR_IO, WHO ": '%s' is corrupt: slice %zu of '%s' overlaps another", b->index_path, i, key);
  }
  for (size_t i = 0; i < n_read; i++) tide_tensor_release(&read[i]);
  free(read);
  if (st && made) tide_tensor_release(out);
  free(seen);
  free(parts);
  return st;
}
