/* io/sstable.c — decoding TF's table files (LevelDB's SSTable format, as
 * tensorflow/core/lib/io/table writes it) from memory, every offset checked. */
#include "sstable.h"

#include "atomic_file.h"
#include "crc32c.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layout, from the end of the file:
 *   footer (48 bytes): metaindex handle, index handle (each a varint64 offset
 *     and a varint64 size), zero padding to 40 bytes, the magic (fixed64)
 *   a block: its contents, then a 5-byte trailer: the compression type (0:
 *     none, 1: Snappy) and the masked CRC-32C of contents + type byte
 *   block contents: entries, then the restart offsets (fixed32 each) and
 *     their count (fixed32). An entry is varint32 shared, varint32 unshared,
 *     varint32 value length, the unshared key bytes, the value; its key is
 *     the previous key's first `shared` bytes followed by the unshared ones.
 *     At a restart offset an entry shares nothing.
 *   the index block: one entry per data block, key >= that block's last key
 *     and < the next block's first, value the block's handle. */

enum { TRAILER_BYTES = 5, TYPE_NONE = 0, TYPE_SNAPPY = 1 };

typedef struct decoder {
  const unsigned char *data; /* the image */
  size_t n;
  const char *who, *name;
  char *keys;         /* the key arena */
  size_t keys_used, keys_cap;
  sstable_entry *entries;
  size_t *key_at;     /* each entry's key offset in the arena (it moves while growing) */
  size_t count, cap;
} decoder;

static tide_status corrupt(const decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tide_status corrupt(const decoder *d, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return TIDE_FAIL(TIDE_ERR_IO, "%s: '%s' is corrupt: %s", d->who, d->name, what);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A varint of at most `max_bytes` bytes (5 for 32 bits, 10 for 64) from
 * p[*at..end) into *v; false when it runs off the end or is too long. */
static bool varint(const unsigned char *p, size_t end, size_t *at, int max_bytes, uint64_t *v) {
  uint64_t x = 0;
  for (int k = 0; k < max_bytes && *at < end; k++) {
    unsigned char b = p[(*at)++];
    x |= (uint64_t)(b & 0x7f) << (7 * k);
    if (!(b & 0x80)) {
      if (max_bytes == 5 && x > UINT32_MAX) return false;
      *v = x;
      return true;
    }
  }
  return false;
}

typedef struct handle {
  uint64_t offset, size;
} handle;

/* A block handle from p[*at..end). */
static bool read_handle(const unsigned char *p, size_t end, size_t *at, handle *h) {
  return varint(p, end, at, 10, &h->offset) && varint(p, end, at, 10, &h->size);
}

/* The contents of the block at h, its trailer checked: *out, *len. `what` names it. */
static tide_status block_at(const decoder *d, handle h, const char *what, const unsigned char **out, size_t *len) {
  size_t limit = d->n - SSTABLE_FOOTER_BYTES;
  if (h.offset > limit || h.size > limit - h.offset || TRAILER_BYTES > limit - h.offset - h.size)
    return corrupt(d, "the %s (bytes %llu-%llu and a %d-byte trailer) passes the end of the blocks (%zu bytes)",
                   what, (unsigned long long)h.offset, (unsigned long long)(h.offset + h.size), TRAILER_BYTES, limit);
  const unsigned char *p = d->data + h.offset;
  unsigned char type = p[h.size];
  uint32_t stored = tide_crc32c_unmask(le32(p + h.size + 1));
  uint32_t actual = tide_crc32c_extend(0, p, (size_t)h.size + 1);
  if (stored != actual)
    return corrupt(d, "the %s at byte %llu fails its checksum (stored %08x, computed %08x)", what,
                   (unsigned long long)h.offset, stored, actual);
  if (type == TYPE_SNAPPY)
    return TIDE_FAIL(TIDE_ERR_UNSUPPORTED, "%s: '%s': the %s is compressed with Snappy, which tide does not read "
                     "(TF writes checkpoint indexes uncompressed)", d->who, d->name, what);
  if (type != TYPE_NONE) return corrupt(d, "the %s has an unknown compression type %u", what, type);
  *out = p;
  *len = (size_t)h.size;
  return TIDE_OK;
}

static int key_cmp(const char *a, size_t na, const char *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  if (c) return c;
  return na < nb ? -1 : na > nb;
}

/* Room for one more entry with a key of `len` bytes. */
static tide_status grow(decoder *d, size_t len) {
  if (d->count == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 64;
    sstable_entry *e = realloc(d->entries, cap * sizeof *e);
    if (e) d->entries = e;
    size_t *k = e ? realloc(d->key_at, cap * sizeof *k) : NULL;
    if (!k) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory reading '%s'", d->who, d->name);
    d->key_at = k;
    d->cap = cap;
  }
  if (len >= SSTABLE_MAX_KEY_BYTES - d->keys_used)
    return corrupt(d, "its keys spell out more than %d bytes (a limit on the memory reading them takes)",
                   SSTABLE_MAX_KEY_BYTES);
  if (d->keys_used + len + 1 > d->keys_cap) {
    size_t cap = d->keys_cap ? d->keys_cap : 4096;
    while (cap < d->keys_used + len + 1) cap *= 2;
    char *k = realloc(d->keys, cap);
    if (!k) return TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory reading '%s'", d->who, d->name);
    d->keys = k;
    d->keys_cap = cap;
  }
  return TIDE_OK;
}

/* The keys and values of one block's contents p[0..len), appended to d (the
 * entries keep their order; the caller checks order across blocks). The
 * index block goes into a decoder of its own. */
static tide_status parse_block(decoder *d, const unsigned char *p, size_t len, const char *what) {
  if (len < 4) return corrupt(d, "the %s has %zu bytes, too few for its restart count", what, len);
  uint32_t restarts = le32(p + len - 4);
  if (restarts > (len - 4) / 4)
    return corrupt(d, "the %s claims %u restart points, more than its %zu bytes hold", what, restarts, len);
  size_t end = len - 4 - 4 * (size_t)restarts; /* where the entries stop */
  const unsigned char *rs = p + end;
  if (restarts == 0 && end > 0) return corrupt(d, "the %s holds entries but no restart point", what);
  size_t at = 0, r = 0, first = d->count;
  while (at < end) {
    size_t start = at;
    uint64_t shared, unshared, vlen;
    if (!varint(p, end, &at, 5, &shared) || !varint(p, end, &at, 5, &unshared) || !varint(p, end, &at, 5, &vlen))
      return corrupt(d, "an entry of the %s at byte %zu has a broken length", what, start);
    if (unshared > end - at || vlen > end - at - unshared)
      return corrupt(d, "an entry of the %s at byte %zu runs past the block's end", what, start);
    /* Restart points lie on entry starts, in order, and there keys share nothing. */
    bool restart = r < restarts && le32(rs + 4 * r) == start;
    if (r < restarts && le32(rs + 4 * r) < start)
      return corrupt(d, "restart point %zu of the %s (byte %u) is not where an entry starts", r, what, le32(rs + 4 * r));
    if (restart) r++;
    if (d->count == first && !restart)
      return corrupt(d, "the %s's first entry is not a restart point", what);
    size_t prev_len = d->count > first ? d->entries[d->count - 1].key_len : 0;
    if (shared > prev_len || (restart && shared != 0))
      return corrupt(d, "an entry of the %s at byte %zu shares %llu bytes with a key of %zu", what, start,
                     (unsigned long long)shared, restart ? 0 : prev_len);
    size_t klen = (size_t)shared + (size_t)unshared;
    tide_status st = grow(d, klen);
    if (st) return st;
    char *key = d->keys + d->keys_used;
    if (shared) memcpy(key, d->keys + d->key_at[d->count - 1], (size_t)shared);
    memcpy(key + shared, p + at, (size_t)unshared);
    key[klen] = '\0';
    at += (size_t)unshared;
    d->key_at[d->count] = d->keys_used;
    d->entries[d->count] = (sstable_entry){NULL, klen, p + at, (size_t)vlen};
    d->keys_used += klen + 1;
    d->count++;
    at += (size_t)vlen;
  }
  if (r < restarts)
    return corrupt(d, "restart point %zu of the %s (byte %u) is not where an entry starts", r, what, le32(rs + 4 * r));
  return TIDE_OK;
}

static const char *key_of(const decoder *d, size_t i) { return d->keys + d->key_at[i]; }

const char *sstable_show_key(const char *k, size_t n, char *buf, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 8 < size; i++) {
    unsigned char c = (unsigned char)k[i];
    if (c >= 0x20 && c < 0x7f && c != '\'') buf[o++] = (char)c;
    else o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
  }
  if (o + 8 >= size) o += (size_t)snprintf(buf + o, size - o, "...");
  buf[o < size ? o : size - 1] = '\0';
  return buf;
}

static tide_status parse(decoder *d) {
  if (d->n < SSTABLE_FOOTER_BYTES)
    return corrupt(d, "it has %zu bytes, fewer than a table's %d-byte footer", d->n, SSTABLE_FOOTER_BYTES);
  const unsigned char *foot = d->data + d->n - SSTABLE_FOOTER_BYTES;
  uint64_t magic = (uint64_t)le32(foot + 40) | (uint64_t)le32(foot + 44) << 32;
  if (magic != SSTABLE_MAGIC)
    return corrupt(d, "it does not end with the table magic (0x%016llx; found 0x%016llx)",
                   (unsigned long long)SSTABLE_MAGIC, (unsigned long long)magic);
  size_t at = 0;
  handle meta, index;
  if (!read_handle(foot, 40, &at, &meta) || !read_handle(foot, 40, &at, &index))
    return corrupt(d, "its footer's block handles are broken");
  const unsigned char *p;
  size_t len;
  /* TF ignores the metaindex (it holds no filter); its place is checked all the same. */
  tide_status st = block_at(d, meta, "metaindex block", &p, &len);
  if (st) return st;
  st = block_at(d, index, "index block", &p, &len);
  if (st) return st;
  decoder idx = {.data = d->data, .n = d->n, .who = d->who, .name = d->name};
  st = parse_block(&idx, p, len, "index block");
  uint64_t next_free = 0; /* data blocks come in file order and do not overlap */
  char kb[80];
  for (size_t b = 0; !st && b < idx.count; b++) {
    const sstable_entry *ie = &idx.entries[b];
    const char *ik = key_of(&idx, b);
    if (b > 0 && key_cmp(key_of(&idx, b - 1), idx.entries[b - 1].key_len, ik, ie->key_len) >= 0) {
      st = corrupt(d, "the index block's keys are out of order at '%s'",
                   sstable_show_key(ik, ie->key_len, kb, sizeof kb));
      break;
    }
    size_t hat = 0;
    handle h;
    if (!read_handle(ie->value, ie->value_len, &hat, &h) || hat != ie->value_len) {
      st = corrupt(d, "index entry %zu is not a block handle", b);
      break;
    }
    if (h.offset < next_free) {
      st = corrupt(d, "data block %zu (at byte %llu) overlaps or precedes the block before it", b,
                   (unsigned long long)h.offset);
      break;
    }
    char what[48];
    snprintf(what, sizeof what, "data block %zu", b);
    st = block_at(d, h, what, &p, &len);
    if (st) break;
    next_free = h.offset + h.size + TRAILER_BYTES;
    size_t first = d->count;
    st = parse_block(d, p, len, what);
    if (st) break;
    for (size_t i = first; i < d->count; i++) {
      if (i > 0 && key_cmp(key_of(d, i - 1), d->entries[i - 1].key_len, key_of(d, i), d->entries[i].key_len) >= 0) {
        st = corrupt(d, "its keys are not in increasing order at '%s'",
                     sstable_show_key(key_of(d, i), d->entries[i].key_len, kb, sizeof kb));
        break;
      }
    }
    if (st) break;
    /* The block's keys lie at or below its separator, and above the one before. */
    if (d->count > first) {
      size_t last = d->count - 1;
      if (key_cmp(key_of(d, last), d->entries[last].key_len, ik, ie->key_len) > 0 ||
          (b > 0 && key_cmp(key_of(&idx, b - 1), idx.entries[b - 1].key_len, key_of(d, first),
                            d->entries[first].key_len) >= 0)) {
        st = corrupt(d, "data block %zu holds keys outside the range its index entry gives", b);
        break;
      }
    }
  }
  free(idx.keys);
  free(idx.entries);
  free(idx.key_at);
  return st;
}

tide_status sstable_parse(const unsigned char *data, size_t n, const char *who, const char *name, sstable *t) {
  memset(t, 0, sizeof *t);
  decoder d = {.data = data, .n = n, .who = who, .name = name};
  tide_status st = parse(&d);
  if (!st) {
    for (size_t i = 0; i < d.count; i++) d.entries[i].key = d.keys + d.key_at[i];
    t->entries = d.entries;
    t->count = d.count;
    t->keys = d.keys;
    d.entries = NULL;
    d.keys = NULL;
  }
  free(d.entries);
  free(d.keys);
  free(d.key_at);
  return st;
}

void sstable_free(sstable *t) {
  if (!t) return;
  free(t->entries);
  free(t->keys);
  memset(t, 0, sizeof *t);
}

int64_t sstable_find(const sstable *t, const char *key, size_t len) {
  size_t lo = 0, hi = t->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = key_cmp(t->entries[mid].key, t->entries[mid].key_len, key, len);
    if (c == 0) return (int64_t)mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}
