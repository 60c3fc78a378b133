/* tests/c/test_tensor_bundle.c — TF checkpoints (tide/tensor_bundle.h) from
 * tables built here byte by byte: a good one read back, and every hostile
 * index, data file and slice refused with a message naming the fault. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tide/tide.h"
#include "util.h"
#include "../../kernels/io/crc32c.h"

static char dir[64];

/* ---- bytes ------------------------------------------------------------------ */

typedef struct buf {
  unsigned char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  if (n) memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void put_byte(buf *b, unsigned char c) { put(b, &c, 1); }
static void put_varint(buf *b, uint64_t v) {
  for (; v >= 0x80; v >>= 7) put_byte(b, (unsigned char)(v | 0x80));
  put_byte(b, (unsigned char)v);
}
static void put_u32(buf *b, uint32_t v) {
  unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  put(b, le, 4);
}
/* A length-delimited protobuf field. */
static void put_field(buf *b, int field, const buf *msg) {
  put_varint(b, (uint64_t)field << 3 | 2);
  put_varint(b, msg->n);
  put(b, msg->p, msg->n);
}
static void put_int_field(buf *b, int field, int64_t v) {
  put_varint(b, (uint64_t)field << 3);
  put_varint(b, (uint64_t)v);
}

/* ---- protos ------------------------------------------------------------------ */

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_STRING = 7, DT_UINT16 = 17 };

static buf header_proto(int num_shards, int endianness, int min_consumer, int bad_consumer) {
  buf h = {0}, v = {0};
  put_int_field(&v, 1, 1);
  if (min_consumer) put_int_field(&v, 2, min_consumer);
  if (bad_consumer) put_int_field(&v, 3, bad_consumer);
  put_int_field(&h, 1, num_shards);
  if (endianness) put_int_field(&h, 2, endianness);
  put_field(&h, 3, &v);
  free(v.p);
  return h;
}

typedef struct slice {
  int64_t start[2], len[2]; /* len -1: the whole dimension */
} slice;

static buf entry_proto(int dtype, int nd, const int64_t *dims, int shard, int64_t offset, int64_t size, uint32_t crc,
                       int n_slices, const slice *slices) {
  buf e = {0}, shape = {0};
  put_int_field(&e, 1, dtype);
  for (int k = 0; k < nd; k++) {
    buf dim = {0};
    put_int_field(&dim, 1, dims[k]);
    put_field(&shape, 2, &dim);
    free(dim.p);
  }
  if (nd < 0) put_int_field(&shape, 3, 1); /* unknown rank */
  put_field(&e, 2, &shape);
  if (shard) put_int_field(&e, 3, shard);
  if (offset) put_int_field(&e, 4, offset);
  if (size) put_int_field(&e, 5, size);
  put_varint(&e, 6 << 3 | 5);
  put_u32(&e, tide_crc32c_mask(crc));
  for (int i = 0; i < n_slices; i++) {
    buf s = {0};
    for (int d = 0; d < nd; d++) {
      buf x = {0};
      if (slices[i].start[d]) put_int_field(&x, 1, slices[i].start[d]);
      if (slices[i].len[d] >= 0) put_int_field(&x, 2, slices[i].len[d]);
      put_field(&s, 1, &x);
      free(x.p);
    }
    put_field(&e, 7, &s);
    free(s.p);
  }
  free(shape.p);
  return e;
}

/* ---- tables ------------------------------------------------------------------ */

typedef struct kv {
  const char *key;
  size_t klen;
  buf value;
} kv;

/* Entries between restart points (a key there shares nothing). */
static int restart_every = 4;

/* One block of the entries (keys sharing prefixes, a restart every restart_every). */
static void block(buf *out, const kv *e, int n) {
  buf r = {0};
  int restarts = 0;
  for (int i = 0; i < n; i++) {
    size_t shared = 0;
    if (i % restart_every == 0) {
      put_u32(&r, (uint32_t)out->n);
      restarts++;
    } else {
      while (shared < e[i].klen && shared < e[i - 1].klen && e[i].key[shared] == e[i - 1].key[shared]) shared++;
    }
    put_varint(out, shared);
    put_varint(out, e[i].klen - shared);
    put_varint(out, e[i].value.n);
    put(out, e[i].key + shared, e[i].klen - shared);
    put(out, e[i].value.p, e[i].value.n);
  }
  if (!restarts) put_u32(&r, 0), restarts = 1;
  put(out, r.p, r.n);
  put_u32(out, (uint32_t)restarts);
  free(r.p);
}

/* Append a block's contents and trailer to the file; its handle in *off, *size. */
static void finish_block(buf *file, const buf *contents, unsigned char type, uint64_t *off, uint64_t *size) {
  *off = file->n;
  *size = contents->n;
  put(file, contents->p, contents->n);
  put_byte(file, type);
  uint32_t crc = tide_crc32c_extend(tide_crc32c_extend(0, contents->p, contents->n), &type, 1);
  put_u32(file, tide_crc32c_mask(crc));
}

/* A whole table of the n sorted entries: one data block, an empty metaindex,
 * an index of one entry (the last key), the footer. */
static buf table(const kv *e, int n, unsigned char type) {
  buf file = {0}, data = {0}, meta = {0}, index = {0}, handle = {0};
  block(&data, e, n);
  uint64_t d_off, d_size, m_off, m_size, i_off, i_size;
  finish_block(&file, &data, type, &d_off, &d_size);
  block(&meta, NULL, 0);
  finish_block(&file, &meta, 0, &m_off, &m_size);
  put_varint(&handle, d_off);
  put_varint(&handle, d_size);
  kv last = {n ? e[n - 1].key : "", n ? e[n - 1].klen : 0, handle};
  block(&index, &last, 1);
  finish_block(&file, &index, 0, &i_off, &i_size);
  buf footer = {0};
  put_varint(&footer, m_off);
  put_varint(&footer, m_size);
  put_varint(&footer, i_off);
  put_varint(&footer, i_size);
  while (footer.n < 40) put_byte(&footer, 0);
  put_u32(&footer, 0x8b80fb57u);
  put_u32(&footer, 0xdb477524u);
  put(&file, footer.p, footer.n);
  free(data.p), free(meta.p), free(index.p), free(handle.p), free(footer.p);
  return file;
}

/* ---- files ------------------------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  if (n) CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

/* dir/<name>.index from the entries (the header first), and data shard 0 of 1. */
static void write_bundle(const char *name, kv *e, int n, const void *data, size_t data_n, unsigned char type) {
  char path[256];
  buf t = table(e, n, type);
  snprintf(path, sizeof path, "%s/%s.index", dir, name);
  write_file(path, t.p, t.n);
  snprintf(path, sizeof path, "%s/%s.data-00000-of-00001", dir, name);
  write_file(path, data, data_n);
  free(t.p);
  for (int i = 0; i < n; i++) free(e[i].value.p);
}

static tide_tensor_bundle *open_named(const char *name) {
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
  return tide_tensor_bundle_open(prefix);
}

/* Open must fail with a message holding needle. */
static void expect_open_error(const char *name, const char *needle) {
  tide_tensor_bundle *b = open_named(name);
  bool ok = b == NULL && contains(tide_last_error(), needle) && contains(tide_last_error(), name);
  if (!ok) fprintf(stderr, "%s: expected an error with '%s', got: %s\n", name, needle, b ? "(opened)" : tide_last_error());
  CHECK(ok);
  tide_tensor_bundle_close(b);
}

/* Open must work and reading key must fail with a message holding needle. */
static void expect_read_error(const char *name, const char *key, const char *needle) {
  tide_tensor_bundle *b = open_named(name);
  CHECK(b != NULL);
  if (!b) {
    fprintf(stderr, "%s: %s\n", name, tide_last_error());
    return;
  }
  int64_t i = tide_tensor_bundle_find(b, key, (int64_t)strlen(key));
  CHECK(i >= 0);
  tide_tensor t = blank();
  bool ok = tide_tensor_bundle_read(b, i, &t) != TIDE_OK && contains(tide_last_error(), needle) && t.data == NULL;
  if (!ok) fprintf(stderr, "%s: expected a read error with '%s', got: %s\n", name, needle, tide_last_error());
  CHECK(ok);
  tide_tensor_bundle_close(b);
}

static kv K(const char *key, buf value) { return (kv){key, strlen(key), value}; }
static kv header(void) { return K("", header_proto(1, 0, 0, 0)); }

/* ---- a good checkpoint ----------------------------------------------------------- */

static const float F[3] = {1.5f, -2.0f, 0.25f};

/* The bytes TF writes for the string tensor {"x", "yz"}, and their CRC. */
static size_t strings_bytes(unsigned char *out, uint32_t *crc) {
  uint32_t lens[2] = {1, 2};
  *crc = tide_crc32c_extend(0, lens, 8);
  uint32_t masked = tide_crc32c_mask(*crc);
  unsigned char b[] = {1, 2, 0, 0, 0, 0, 'x', 'y', 'z'};
  memcpy(b + 2, &masked, 4);
  *crc = tide_crc32c_extend(*crc, b + 2, 4);
  *crc = tide_crc32c_extend(*crc, "xyz", 3);
  memcpy(out, b, sizeof b);
  return sizeof b;
}

static void test_good(void) {
  unsigned char data[64];
  memcpy(data, F, 12);
  uint32_t scrc;
  size_t sn = strings_bytes(data + 12, &scrc);
  int64_t d3 = 3, d2 = 2, d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  kv e[] = {header(),
            K("a/w", entry_proto(DT_FLOAT, 1, &d3, 0, 0, 12, tide_crc32c_extend(0, F, 12), 0, NULL)),
            K("a/words", entry_proto(DT_STRING, 1, &d2, 0, 12, (int64_t)sn, scrc, 0, NULL)),
            K("deep", entry_proto(DT_FLOAT, 9, d9, 0, 0, 4, tide_crc32c_extend(0, F, 4), 0, NULL)),
            K("u16", entry_proto(DT_UINT16, 1, &d2, 0, 0, 4, tide_crc32c_extend(0, F, 4), 0, NULL))};
  write_bundle("good", e, 5, data, 12 + sn, 0);
  tide_tensor_bundle *b = open_named("good");
  CHECK(b != NULL);
  if (!b) return;
  CHECK(tide_tensor_bundle_count(b) == 4);
  int64_t len;
  CHECK(strcmp(tide_tensor_bundle_key(b, 0, &len), "a/w") == 0 && len == 3);
  CHECK(tide_tensor_bundle_key(b, 4, &len) == NULL && len == 0);
  CHECK(tide_tensor_bundle_find(b, "a/words", 7) == 1);
  CHECK(tide_tensor_bundle_find(b, "", 0) == -1); /* the header is no tensor */
  CHECK(tide_tensor_bundle_find(b, "a", 1) == -1);
  CHECK(strcmp(tide_tensor_bundle_dtype_name(b, 1), "string") == 0);
  CHECK(strcmp(tide_tensor_bundle_dtype_name(b, 3), "uint16") == 0 && tide_tensor_bundle_dtype(b, 3) == -1);
  CHECK(tide_tensor_bundle_dtype(b, 0) == TIDE_FLOAT32);
  int32_t nd;
  const int64_t *dims = tide_tensor_bundle_shape(b, 2, &nd);
  CHECK(nd == 9 && dims[8] == 1); /* listed although tide cannot hold it */
  tide_tensor t = blank();
  CHECK(tide_tensor_bundle_read(b, 0, &t) == TIDE_OK);
  CHECK(t.dt == TIDE_FLOAT32 && t.ndim == 1 && t.dims[0] == 3 && memcmp(t.data, F, 12) == 0);
  tide_tensor_release(&t);
  t = blank();
  CHECK(tide_tensor_bundle_read(b, 1, &t) == TIDE_OK);
  int64_t sl;
  CHECK(t.dt == TIDE_STRING && t.nelem == 2);
  if (t.dt == TIDE_STRING) {
    CHECK(memcmp(tide_string_at(t.data, 0, &sl), "x", 1) == 0 && sl == 1);
    CHECK(memcmp(tide_string_at(t.data, 1, &sl), "yz", 2) == 0 && sl == 2);
  }
  tide_tensor_release(&t);
  t = blank();
  CHECK(tide_tensor_bundle_read(b, 2, &t) == TIDE_ERR_UNSUPPORTED && contains(tide_last_error(), "rank 9"));
  CHECK(tide_tensor_bundle_read(b, 3, &t) == TIDE_ERR_DTYPE && contains(tide_last_error(), "'u16' has dtype uint16"));
  CHECK(tide_tensor_bundle_read(b, 4, &t) == TIDE_ERR_INDEX);
  tide_tensor_bundle_close(b);
  tide_tensor_bundle_close(NULL);
  CHECK(tide_tensor_bundle_open(NULL) == NULL && tide_last_status() == TIDE_ERR_VALUE);
}

/* ---- hostile indexes -------------------------------------------------------------- */

static void test_bad_headers(void) {
  int64_t d1 = 1;
  uint32_t c = tide_crc32c_extend(0, F, 4);
  kv e1[] = {K("a", entry_proto(DT_FLOAT, 1, &d1, 0, 0, 4, c, 0, NULL))};
  write_bundle("no_header", e1, 1, F, 4, 0);
  expect_open_error("no_header", "no header entry");
  kv e2[] = {K("", header_proto(1, 1, 0, 0))};
  write_bundle("big_endian", e2, 1, NULL, 0, 0);
  expect_open_error("big_endian", "big-endian");
  kv e3[] = {K("", header_proto(1, 0, 2, 0))};
  write_bundle("newer", e3, 1, NULL, 0, 0);
  expect_open_error("newer", "format version 2 or newer");
  kv e4[] = {K("", header_proto(1, 0, 0, 1))};
  write_bundle("bad_consumer", e4, 1, NULL, 0, 0);
  expect_open_error("bad_consumer", "must not read it");
  unsigned char junk[3] = {0xff, 0xff, 0xff};
  buf jb = {0};
  put(&jb, junk, 3);
  kv e5[] = {K("", jb)};
  write_bundle("junk_header", e5, 1, NULL, 0, 0);
  expect_open_error("junk_header", "not a BundleHeaderProto");
}

static void test_bad_entries(void) {
  int64_t neg = -2, big[2] = {INT64_MAX / 2, 3}, d2 = 2, rank[300];
  for (int k = 0; k < 300; k++) rank[k] = 1;
  uint32_t c = tide_crc32c_extend(0, F, 8);
  struct {
    const char *name;
    buf entry;
    const char *needle;
  } cases[] = {
      {"neg_dim", entry_proto(DT_FLOAT, 1, &neg, 0, 0, 8, c, 0, NULL), "dimension 0 of 'x' is -2"},
      {"overflow", entry_proto(DT_FLOAT, 2, big, 0, 0, 8, c, 0, NULL), "element count overflows"},
      {"unknown_rank", entry_proto(DT_FLOAT, -1, NULL, 0, 0, 8, c, 0, NULL), "unknown rank"},
      {"rank300", entry_proto(DT_FLOAT, 300, rank, 0, 0, 4, c, 0, NULL), "TF allows at most 254"},
      {"dtype99", entry_proto(99, 1, &d2, 0, 0, 8, c, 0, NULL), "unknown dtype code 99"},
      {"shard", entry_proto(DT_FLOAT, 1, &d2, 1, 0, 8, c, 0, NULL), "lies in data shard 1, but the checkpoint has 1"},
      {"size", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 12, c, 0, NULL), "(4 bytes each), but its entry holds 12 bytes"},
      {"offset", entry_proto(DT_FLOAT, 1, &d2, 0, -8, 8, c, 0, NULL), "bad byte range"},
      {"scalar_sliced", entry_proto(DT_FLOAT, 0, NULL, 0, 0, 0, 0, 1, (slice[]){{{0}, {0}}}), "scalar saved in slices"},
      {"slice_out", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 0, 0, 1, (slice[]){{{1}, {2}}}), "passes the end of dimension 0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kv e[] = {header(), K("x", cases[i].entry)};
    write_bundle(cases[i].name, e, 2, F, 8, 0);
    expect_open_error(cases[i].name, cases[i].needle);
  }
  buf junk = {0};
  put(&junk, "\x0a\xff", 2);
  kv e[] = {header(), K("x", junk)};
  write_bundle("junk_entry", e, 2, F, 8, 0);
  expect_open_error("junk_entry", "the entry of 'x' is not a BundleEntryProto");
}

/* Table faults: blocks, keys, restarts, the footer. */
static void test_bad_tables(void) {
  char path[256];
  int64_t d1 = 1;
  uint32_t c = tide_crc32c_extend(0, F, 4);
  kv e[] = {header(), K("b", entry_proto(DT_FLOAT, 1, &d1, 0, 0, 4, c, 0, NULL)),
            K("a", entry_proto(DT_FLOAT, 1, &d1, 0, 0, 4, c, 0, NULL))};
  write_bundle("order", e, 3, F, 4, 0);
  expect_open_error("order", "not in increasing order at 'a'");
  kv s[] = {header()};
  write_bundle("snappy", s, 1, NULL, 0, 1);
  expect_open_error("snappy", "compressed with Snappy");
  kv s7[] = {header()};
  write_bundle("type7", s7, 1, NULL, 0, 7);
  expect_open_error("type7", "unknown compression type 7");
  /* a flipped byte in the data block; a short file; a bad magic */
  kv g[] = {header(), K("a", entry_proto(DT_FLOAT, 1, &d1, 0, 0, 4, c, 0, NULL))};
  buf t = table(g, 2, 0);
  snprintf(path, sizeof path, "%s/flip.index", dir);
  t.p[3] ^= 1;
  write_file(path, t.p, t.n);
  expect_open_error("flip", "fails its checksum");
  t.p[3] ^= 1;
  snprintf(path, sizeof path, "%s/short.index", dir);
  write_file(path, t.p + t.n - 47, 47);
  expect_open_error("short", "fewer than a table's 48-byte footer");
  snprintf(path, sizeof path, "%s/empty.index", dir);
  write_file(path, "", 0);
  expect_open_error("empty", "it has 0 bytes");
  /* block handles pointing past the blocks */
  unsigned char *foot = t.p + t.n - 48;
  buf far = {0};
  put(&far, t.p, t.n - 48);
  put_varint(&far, 1u << 30), put_varint(&far, 10), put_varint(&far, 1u << 30), put_varint(&far, 10);
  while (far.n < t.n - 8) put_byte(&far, 0);
  put(&far, foot + 40, 8);
  snprintf(path, sizeof path, "%s/far.index", dir);
  write_file(path, far.p, far.n);
  expect_open_error("far", "passes the end of the blocks");
  free(far.p);
  free(t.p);
  for (int i = 0; i < 2; i++) free(g[i].value.p);
  /* a restart point that is not an entry's start */
  buf blk = {0}, file = {0}, ix = {0}, handle = {0};
  buf hv = header_proto(1, 0, 0, 0);
  put_varint(&blk, 0), put_varint(&blk, 0), put_varint(&blk, hv.n), put(&blk, hv.p, hv.n);
  put_u32(&blk, 0), put_u32(&blk, 1), put_u32(&blk, 2);
  uint64_t off, size, mo, ms, io_, is;
  finish_block(&file, &blk, 0, &off, &size);
  buf meta = {0};
  block(&meta, NULL, 0);
  finish_block(&file, &meta, 0, &mo, &ms);
  put_varint(&handle, off), put_varint(&handle, size);
  kv last = {"", 0, handle};
  block(&ix, &last, 1);
  finish_block(&file, &ix, 0, &io_, &is);
  buf footer = {0};
  put_varint(&footer, mo), put_varint(&footer, ms), put_varint(&footer, io_), put_varint(&footer, is);
  while (footer.n < 40) put_byte(&footer, 0);
  put_u32(&footer, 0x8b80fb57u), put_u32(&footer, 0xdb477524u);
  put(&file, footer.p, footer.n);
  snprintf(path, sizeof path, "%s/restart.index", dir);
  write_file(path, file.p, file.n);
  expect_open_error("restart", "restart point 1 of the data block 0 (byte 1) is not where an entry starts");
  free(blk.p), free(file.p), free(ix.p), free(handle.p), free(meta.p), free(footer.p), free(hv.p);
}

/* Keys that share a long prefix spell out far more bytes than the file has:
 * refused past a limit instead of taking the memory. */
static void test_key_blowup(void) {
  enum { LONG = 1 << 16, N = 2100 };
  char *base = malloc(LONG + 8);
  memset(base, 'k', LONG);
  kv *e = calloc(N + 1, sizeof *e);
  char **names = calloc(N + 1, sizeof *names);
  e[0] = header();
  for (int i = 1; i <= N; i++) {
    names[i] = malloc(LONG + 8);
    memcpy(names[i], base, LONG);
    snprintf(names[i] + LONG, 8, "%05d", i);
    e[i] = (kv){names[i], LONG + 5, {0}};
  }
  restart_every = 1 << 20; /* the file stays small: one whole key */
  write_bundle("blowup", e, N + 1, NULL, 0, 0);
  restart_every = 4;
  expect_open_error("blowup", "keys spell out more than");
  for (int i = 1; i <= N; i++) free(names[i]);
  free(names), free(e), free(base);
}

/* ---- hostile data files ------------------------------------------------------------- */

static void test_bad_data(void) {
  int64_t d2 = 2, d3 = 3;
  uint32_t c = tide_crc32c_extend(0, F, 8);
  kv e[] = {header(), K("past", entry_proto(DT_FLOAT, 1, &d3, 0, 0, 12, c, 0, NULL)),
            K("sum", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 8, c ^ 1, 0, NULL))};
  write_bundle("data", e, 3, F, 8, 0);
  expect_read_error("data", "past", "lies at bytes 0-12, past its end (8 bytes)");
  expect_read_error("data", "sum", "the bytes of tensor 'sum' fail their checksum");
  /* strings: lengths broken, their checksum wrong, bytes left over, more elements than bytes */
  unsigned char ok[16];
  uint32_t scrc;
  size_t sn = strings_bytes(ok, &scrc);
  unsigned char lens_crc[16], extra[17], broken[2] = {0x80, 0x80};
  memcpy(lens_crc, ok, sn);
  lens_crc[3] ^= 1;
  memcpy(extra, ok, sn);
  extra[sn] = 'w';
  unsigned char all[64];
  size_t at = 0;
  memcpy(all + at, lens_crc, sn), at += sn;
  memcpy(all + at, extra, sn + 1), at += sn + 1;
  memcpy(all + at, broken, 2), at += 2;
  int64_t d100 = 100;
  kv s[] = {header(), K("broken", entry_proto(DT_STRING, 1, &d2, 0, (int64_t)(2 * sn + 1), 2, 0, 0, NULL)),
            K("extra", entry_proto(DT_STRING, 1, &d2, 0, (int64_t)sn, (int64_t)sn + 1, scrc, 0, NULL)),
            K("lens", entry_proto(DT_STRING, 1, &d2, 0, 0, (int64_t)sn, scrc, 0, NULL)),
            K("many", entry_proto(DT_STRING, 1, &d100, 0, 0, (int64_t)sn, scrc, 0, NULL))};
  write_bundle("strings", s, 5, all, at, 0);
  expect_read_error("strings", "broken", "the length of element 0 of string tensor 'broken' is broken");
  expect_read_error("strings", "extra", "has 1 bytes after its last string");
  expect_read_error("strings", "lens", "the lengths of string tensor 'lens' fail their checksum");
  expect_read_error("strings", "many", "has 100 elements but only 9 bytes");
  /* the data file missing, or a folder */
  kv m[] = {header(), K("x", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 8, c, 0, NULL))};
  write_bundle("missing", m, 2, F, 8, 0);
  char path[256];
  snprintf(path, sizeof path, "%s/missing.data-00000-of-00001", dir);
  unlink(path);
  expect_read_error("missing", "x", "cannot open the data file");
  CHECK(mkdir(path, 0700) == 0);
  expect_read_error("missing", "x", "it is not a regular file");
  rmdir(path);
}

/* ---- slices ------------------------------------------------------------------------- */

static void test_slices(void) {
  /* a [3, 2] float tensor in two slices: rows 0-1 and row 2 */
  const float top[4] = {1, 2, 3, 4}, bottom[2] = {5, 6};
  unsigned char data[24];
  memcpy(data, top, 16);
  memcpy(data + 16, bottom, 8);
  int64_t full[2] = {3, 2}, d_top[2] = {2, 2}, d_bottom[2] = {1, 2};
  slice parts[2] = {{{0, 0}, {2, -1}}, {{2, 0}, {1, -1}}};
  /* TF's slice keys: 0, the name, the rank, each extent's start and length (-1: all). */
  static const char k_top[] = "\x00w\x00\x01\x01\x02\x80\x82\x80\x7f";
  static const char k_bottom[] = "\x00w\x00\x01\x01\x02\x82\x81\x80\x7f";
  kv e[] = {header(),
            {k_top, sizeof k_top - 1, entry_proto(DT_FLOAT, 2, d_top, 0, 0, 16, tide_crc32c_extend(0, top, 16), 0, NULL)},
            {k_bottom, sizeof k_bottom - 1,
             entry_proto(DT_FLOAT, 2, d_bottom, 0, 16, 8, tide_crc32c_extend(0, bottom, 8), 0, NULL)},
            K("w", entry_proto(DT_FLOAT, 2, full, 0, 0, 0, 0, 2, parts))};
  write_bundle("sliced", e, 4, data, 24, 0);
  tide_tensor_bundle *b = open_named("sliced");
  CHECK(b != NULL);
  if (b) {
    CHECK(tide_tensor_bundle_count(b) == 1); /* the slices are not listed */
    tide_tensor t = blank();
    CHECK(tide_tensor_bundle_read(b, 0, &t) == TIDE_OK);
    const float want[6] = {1, 2, 3, 4, 5, 6};
    CHECK(t.ndim == 2 && t.dims[0] == 3 && t.dims[1] == 2 && memcmp(t.data, want, 24) == 0);
    tide_tensor_release(&t);
    tide_tensor_bundle_close(b);
  }
  /* overlapping slices; a slice missing; slices short of the whole */
  slice overlap[2] = {{{0, 0}, {2, -1}}, {{1, 0}, {1, -1}}};
  static const char k_mid[] = "\x00w\x00\x01\x01\x02\x81\x81\x80\x7f";
  kv o[] = {header(),
            {k_top, sizeof k_top - 1, entry_proto(DT_FLOAT, 2, d_top, 0, 0, 16, tide_crc32c_extend(0, top, 16), 0, NULL)},
            {k_mid, sizeof k_mid - 1,
             entry_proto(DT_FLOAT, 2, d_bottom, 0, 16, 8, tide_crc32c_extend(0, bottom, 8), 0, NULL)},
            K("w", entry_proto(DT_FLOAT, 2, full, 0, 0, 0, 0, 2, overlap))};
  write_bundle("overlap", o, 4, data, 24, 0);
  expect_read_error("overlap", "w", "slice 1 of 'w' overlaps another");
  kv m[] = {header(),
            {k_top, sizeof k_top - 1, entry_proto(DT_FLOAT, 2, d_top, 0, 0, 16, tide_crc32c_extend(0, top, 16), 0, NULL)},
            K("w", entry_proto(DT_FLOAT, 2, full, 0, 0, 0, 0, 2, parts))};
  write_bundle("slice_missing", m, 3, data, 24, 0);
  expect_read_error("slice_missing", "w", "slice 1 of 'w' has no entry");
  kv s[] = {header(),
            {k_top, sizeof k_top - 1, entry_proto(DT_FLOAT, 2, d_top, 0, 0, 16, tide_crc32c_extend(0, top, 16), 0, NULL)},
            K("w", entry_proto(DT_FLOAT, 2, full, 0, 0, 0, 0, 1, parts))};
  write_bundle("slice_short", s, 3, data, 24, 0);
  expect_read_error("slice_short", "w", "the slices of 'w' hold 4 of its 6 elements");
}

/* ---- the file policy and special files -------------------------------------------------- */

static void test_policy(void) {
  char inner[128], path[256], target[256];
  snprintf(inner, sizeof inner, "%s/inner", dir);
  CHECK(mkdir(inner, 0700) == 0);
  int64_t d2 = 2;
  uint32_t c = tide_crc32c_extend(0, F, 8);
  kv e[] = {header(), K("x", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 8, c, 0, NULL))};
  write_bundle("inner/ok", e, 2, F, 8, 0);
  kv e2[] = {header(), K("x", entry_proto(DT_FLOAT, 1, &d2, 0, 0, 8, c, 0, NULL))};
  write_bundle("outside", e2, 2, F, 8, 0);
  /* a data file inside that is a link to one outside */
  snprintf(path, sizeof path, "%s/inner/linked.index", dir);
  snprintf(target, sizeof target, "%s/inner/ok.index", dir);
  CHECK(link(target, path) == 0);
  snprintf(path, sizeof path, "%s/inner/linked.data-00000-of-00001", dir);
  snprintf(target, sizeof target, "%s/outside.data-00000-of-00001", dir);
  CHECK(symlink(target, path) == 0);
  tide_file_policy *p = tide_file_policy_new(inner);
  CHECK(p != NULL);
  tide_file_policy *prev = tide_file_policy_swap(p);
  expect_open_error("outside", "file access refused");
  tide_tensor_bundle *b = open_named("inner/ok");
  CHECK(b != NULL);
  tide_tensor t = blank();
  if (b) CHECK(tide_tensor_bundle_read(b, 0, &t) == TIDE_OK);
  tide_tensor_release(&t);
  tide_tensor_bundle_close(b);
  expect_read_error("inner/linked", "x", "file access refused");
  tide_file_policy_swap(prev);
  tide_file_policy_release(p);
  /* a FIFO as the index is refused, not waited on */
  snprintf(path, sizeof path, "%s/fifo.index", dir);
  CHECK(mkfifo(path, 0600) == 0);
  expect_open_error("fifo", "not a regular file");
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/tide_bundle_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_good();
  test_bad_headers();
  test_bad_entries();
  test_bad_tables();
  test_key_blowup();
  test_bad_data();
  test_slices();
  test_policy();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  return CHECK_SUMMARY("tensor_bundle");
}
