/* tests/c/test_records.c — CRC-32C (known vectors; the crc32 instruction
 * against the tables) and TFRecord framing: round trips plain, GZIP and ZLIB,
 * and every corrupt or truncated file an error naming the file and offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "../../kernels/io/crc32c.h"

static const char *const comps[] = {"", "GZIP", "ZLIB"};

/* ---- CRC-32C --------------------------------------------------------------------- */

static void test_crc_vectors(void) {
  CHECK(tide_crc32c_extend(0, "123456789", 9) == 0xe3069283u);
  CHECK(tide_crc32c_extend_portable(0, "123456789", 9) == 0xe3069283u);
  CHECK(tide_crc32c_extend(0, "", 0) == 0);
  /* LevelDB's crc32c_test vectors (from the iSCSI standard) */
  uint8_t buf[32];
  memset(buf, 0, 32);
  CHECK(tide_crc32c_extend(0, buf, 32) == 0x8a9136aau);
  memset(buf, 0xff, 32);
  CHECK(tide_crc32c_extend(0, buf, 32) == 0x62a8ab43u);
  for (int i = 0; i < 32; i++) buf[i] = (uint8_t)i;
  CHECK(tide_crc32c_extend(0, buf, 32) == 0x46dd794eu);
  CHECK(tide_crc32c_extend_portable(0, buf, 32) == 0x46dd794eu);
  for (int i = 0; i < 32; i++) buf[i] = (uint8_t)(31 - i);
  CHECK(tide_crc32c_extend(0, buf, 32) == 0x113fdb5cu);
  /* extending = checksumming the concatenation */
  CHECK(tide_crc32c_extend(tide_crc32c_extend(0, "hello ", 6), "world", 5) == tide_crc32c_extend(0, "hello world", 11));
  /* mask and unmask: LevelDB's test */
  uint32_t crc = tide_crc32c_extend(0, "foo", 3);
  CHECK(tide_crc32c_mask(crc) != crc);
  CHECK(tide_crc32c_mask(tide_crc32c_mask(crc)) != crc);
  CHECK(tide_crc32c_unmask(tide_crc32c_mask(crc)) == crc);
  CHECK(tide_crc32c_unmask(tide_crc32c_unmask(tide_crc32c_mask(tide_crc32c_mask(crc)))) == crc);
  CHECK(tide_crc32c_mask(0) == 0xa282ead8u);
}

/* The instruction and the tables agree at every length and alignment. */
static void test_crc_paths_agree(void) {
  enum { N = 4096 };
  uint8_t *buf = malloc(N + 16);
  srand(7);
  for (int i = 0; i < N + 16; i++) buf[i] = (uint8_t)rand();
  int bad = 0;
  for (int off = 0; off < 9; off++)
    for (int n = 0; n < 300; n++)
      if (tide_crc32c_extend(0x1234u, buf + off, (size_t)n) != tide_crc32c_extend_portable(0x1234u, buf + off, (size_t)n))
        bad++;
  CHECK(bad == 0);
  CHECK(tide_crc32c_extend(0, buf, N) == tide_crc32c_extend_portable(0, buf, N));
#if defined(__x86_64__)
  CHECK(tide_crc32c_hardware()); /* every x86-64-v2 CPU has SSE4.2 */
#elif defined(__aarch64__)
  /* the CRC32 extension is optional in ARMv8.0 (qemu's default CPU has it) */
  if (!tide_crc32c_hardware()) printf("SKIP 1: this aarch64 CPU has no CRC32 extension: only the tables ran\n");
#endif
  free(buf);
}

/* ---- framing ----------------------------------------------------------------------- */

/* A temporary path of this test. */
static void tmp_path(char *out, size_t n, const char *tag) {
  const char *dir = getenv("TMPDIR");
  snprintf(out, n, "%s/tide_test_records_%d_%s", dir && *dir ? dir : "/tmp", (int)getpid(), tag);
}

/* The whole file at path (caller frees); *n its size. */
static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(size > 0 ? (size_t)size : 1);
  *n = fread(b, 1, (size_t)size, f);
  fclose(f);
  return b;
}

/* The records the round trips write: empty, short, one spanning many chunks. */
enum { NREC = 5, BIG = 3 * 1024 * 1024 + 17 };
static size_t rec_len(int i) { return i == 0 ? 0 : i == 3 ? BIG : (size_t)(i * 11); }
static uint8_t rec_byte(int i, size_t j) { return (uint8_t)(i * 31 + j * 7 + (j >> 9)); }

static bool write_file(const char *path, const char *comp) {
  tide_record_writer *w = tide_record_writer_open(path, comp);
  if (!w) return false;
  uint8_t *b = malloc(BIG);
  bool ok = true;
  for (int i = 0; i < NREC; i++) {
    for (size_t j = 0; j < rec_len(i); j++) b[j] = rec_byte(i, j);
    ok = ok && tide_record_writer_write(w, b, rec_len(i)) == TIDE_OK;
  }
  free(b);
  return tide_record_writer_close(w) == TIDE_OK && ok;
}

/* Reads all records of r and checks them against what write_file wrote. */
static bool read_back(tide_record_reader *r, int copies) {
  if (!r) return false;
  bool ok = true;
  for (int c = 0; c < copies; c++)
    for (int i = 0; i < NREC; i++) {
      const uint8_t *d = NULL;
      size_t n = 0;
      if (tide_record_reader_next(r, &d, &n) != 1 || n != rec_len(i)) return false;
      for (size_t j = 0; j < n; j++) ok = ok && d[j] == rec_byte(i, j);
    }
  const uint8_t *d;
  size_t n;
  ok = ok && tide_record_reader_next(r, &d, &n) == 0 && tide_record_reader_next(r, &d, &n) == 0;
  return ok;
}

static void test_round_trips(void) {
  for (int c = 0; c < 3; c++) {
    char path[256];
    tmp_path(path, sizeof path, "rt");
    CHECK(write_file(path, comps[c]));
    tide_record_reader *r = tide_record_reader_open(path, comps[c]);
    CHECK(read_back(r, 1));
    tide_record_reader_close(r);
    size_t n;
    uint8_t *bytes = slurp(path, &n);
    if (c == 0) CHECK(n == 16 * NREC + 11 + 22 + BIG + 44);
    else CHECK(n < BIG / 10); /* the records compress well */
    if (c == 1) CHECK(n > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b);
    if (c == 2) CHECK(n > 2 && bytes[0] == 0x78);
    r = tide_record_reader_open_memory(bytes, n, "mem", comps[c]);
    CHECK(read_back(r, 1));
    tide_record_reader_close(r);
    if (c == 1) { /* concatenated gzip members read as one stream, as gzip does */
      uint8_t *two = malloc(2 * n);
      memcpy(two, bytes, n);
      memcpy(two + n, bytes, n);
      r = tide_record_reader_open_memory(two, 2 * n, "two", "GZIP");
      CHECK(read_back(r, 2));
      tide_record_reader_close(r);
      free(two);
    }
    free(bytes);
    remove(path);
  }
}

/* The first record of a plain file by hand: TF's framing, byte for byte. */
static void test_layout(void) {
  uint8_t head[12], foot[4];
  tide_record_header(3, head);
  CHECK(head[0] == 3 && head[1] == 0 && head[7] == 0);
  uint32_t c = tide_crc32c_masked(head, 8);
  CHECK(head[8] == (c & 0xff) && head[11] == (c >> 24));
  tide_record_footer("abc", 3, foot);
  c = tide_crc32c_mask(tide_crc32c_extend(0, "abc", 3));
  CHECK(foot[0] == (c & 0xff) && foot[3] == (c >> 24));
}

/* Flush makes what was written readable while the writer stays open (event files). */
static void test_flush(void) {
  for (int c = 0; c < 3; c++) {
    char path[256];
    tmp_path(path, sizeof path, "flush");
    tide_record_writer *w = tide_record_writer_open(path, comps[c]);
    CHECK(w && tide_record_writer_write(w, "first", 5) == TIDE_OK && tide_record_writer_flush(w) == TIDE_OK);
    tide_record_reader *r = tide_record_reader_open(path, comps[c]);
    const uint8_t *d;
    size_t n;
    CHECK(r && tide_record_reader_next(r, &d, &n) == 1 && n == 5 && memcmp(d, "first", 5) == 0);
    CHECK(tide_record_reader_next(r, &d, &n) == 0);
    tide_record_reader_close(r);
    CHECK(tide_record_writer_write(w, "second", 6) == TIDE_OK && tide_record_writer_close(w) == TIDE_OK);
    r = tide_record_reader_open(path, comps[c]);
    CHECK(r && tide_record_reader_next(r, &d, &n) == 1 && tide_record_reader_next(r, &d, &n) == 1 && n == 6);
    CHECK(tide_record_reader_next(r, &d, &n) == 0);
    tide_record_reader_close(r);
    remove(path);
  }
}

/* Reads every record of bytes[0..n); the last status (0 = clean end). */
static int read_all(const uint8_t *bytes, size_t n, const char *comp, int *count) {
  tide_record_reader *r = tide_record_reader_open_memory(bytes, n, "data.tfrecord", comp);
  if (!r) return -2;
  const uint8_t *d;
  size_t len;
  int rc, k = 0;
  while ((rc = tide_record_reader_next(r, &d, &len)) == 1) k++;
  if (rc < 0) { /* sticky */
    char first[1024];
    snprintf(first, sizeof first, "%s", tide_last_error());
    CHECK(tide_record_reader_next(r, &d, &len) == -1 && strcmp(first, tide_last_error()) == 0);
  }
  tide_record_reader_close(r);
  *count = k;
  return rc;
}

static void test_corrupt_and_truncated(void) {
  /* three records of 10, 20, 30 bytes: starts at 0, 26, 62; 108 in all */
  uint8_t file[108];
  size_t at = 0;
  for (int i = 1; i <= 3; i++) {
    uint8_t data[30];
    memset(data, 'a' + i, sizeof data);
    tide_record_header((uint64_t)(10 * i), file + at);
    memcpy(file + at + 12, data, (size_t)(10 * i));
    tide_record_footer(data, (size_t)(10 * i), file + at + 12 + 10 * i);
    at += 16 + 10 * (size_t)i;
  }
  CHECK(at == sizeof file);
  int count;
  CHECK(read_all(file, sizeof file, "", &count) == 0 && count == 3);

  /* a flipped data byte of the second record */
  file[26 + 12 + 5] ^= 1;
  CHECK(read_all(file, sizeof file, "", &count) == -1 && count == 1);
  CHECK(contains(tide_last_error(), "'data.tfrecord'") && contains(tide_last_error(), "corrupted record at byte offset 26"));
  CHECK(contains(tide_last_error(), "checksum of the record's 20 bytes of data"));
  file[26 + 12 + 5] ^= 1;
  /* a flipped length byte of the third: the length's checksum */
  file[62] ^= 0x40;
  CHECK(read_all(file, sizeof file, "", &count) == -1 && count == 2);
  CHECK(contains(tide_last_error(), "corrupted record at byte offset 62") && contains(tide_last_error(), "length"));
  file[62] ^= 0x40;
  /* a flipped footer byte */
  file[107] ^= 0x80;
  CHECK(read_all(file, sizeof file, "", &count) == -1 && count == 2);
  CHECK(contains(tide_last_error(), "corrupted record at byte offset 62"));
  file[107] ^= 0x80;

  /* every truncation: a clean end at a record boundary, else an error at the cut record */
  int bad = 0;
  for (size_t cut = 0; cut < sizeof file; cut++) {
    int rc = read_all(file, cut, "", &count);
    size_t start = cut < 26 ? 0 : cut < 62 ? 26 : 62;
    if (cut == 0 || cut == 26 || cut == 62) {
      if (rc != 0) bad++;
    } else {
      char want[64];
      snprintf(want, sizeof want, "truncated record at byte offset %zu", start);
      if (rc != -1 || !contains(tide_last_error(), want)) bad++;
    }
  }
  CHECK(bad == 0);

  /* a hostile length with a valid checksum: no huge allocation, a truncation error */
  uint8_t hostile[16];
  tide_record_header(UINT64_MAX / 3, hostile);
  memset(hostile + 12, 0, 4);
  CHECK(read_all(hostile, sizeof hostile, "", &count) == -1 && contains(tide_last_error(), "truncated record"));

  /* the same inside GZIP: written for real, then cut and corrupted */
  char path[256];
  tmp_path(path, sizeof path, "gz");
  tide_record_writer *w = tide_record_writer_open(path, "GZIP");
  tide_record_writer_write(w, hostile, 0);
  CHECK(tide_record_writer_close(w) == TIDE_OK);
  size_t n;
  uint8_t *gz = slurp(path, &n);
  CHECK(read_all(gz, n, "GZIP", &count) == 0 && count == 1);
  CHECK(read_all(gz, n, "", &count) == -1 && contains(tide_last_error(), "compression_type=\"GZIP\""));
  gz[n / 2] ^= 0xff;
  CHECK(read_all(gz, n, "GZIP", &count) == -1 && contains(tide_last_error(), "'data.tfrecord'"));
  free(gz);
  remove(path);
  /* garbage of every kind: errors, never crashes */
  uint8_t junk[300];
  srand(3);
  bad = 0;
  for (int t = 0; t < 200; t++) {
    size_t len = (size_t)(rand() % 300);
    for (size_t j = 0; j < len; j++) junk[j] = (uint8_t)rand();
    for (int c = 0; c < 3; c++)
      if (read_all(junk, len, comps[c], &count) == 1) bad++;
  }
  CHECK(bad == 0);
}

static void test_errors(void) {
  CHECK(tide_record_writer_open("/nonexistent-dir/x.tfrecord", "") == NULL);
  CHECK(contains(tide_last_error(), "/nonexistent-dir/x.tfrecord") && tide_last_status() == TIDE_ERR_IO);
  CHECK(tide_record_writer_open("/tmp/x", "LZ4") == NULL);
  CHECK(contains(tide_last_error(), "compression_type must be \"\", \"GZIP\" or \"ZLIB\", got \"LZ4\""));
  CHECK(tide_record_reader_open("/nonexistent-file.tfrecord", "") == NULL);
  CHECK(contains(tide_last_error(), "'/nonexistent-file.tfrecord' cannot be opened"));
  CHECK(tide_record_reader_open("/tmp", "") == NULL);
  CHECK(contains(tide_last_error(), "is a directory"));
  CHECK(tide_record_reader_open_memory("", 0, "m", "gzip") == NULL);
  CHECK(tide_record_writer_close(NULL) == TIDE_OK);
  tide_record_reader_close(NULL);
  int count;
  CHECK(read_all(NULL, 0, "", &count) == 0 && count == 0);
  CHECK(read_all(NULL, 0, "GZIP", &count) == 0 && count == 0);
}

int main(void) {
  test_crc_vectors();
  test_crc_paths_agree();
  test_layout();
  test_round_trips();
  test_flush();
  test_corrupt_and_truncated();
  test_errors();
  return CHECK_SUMMARY("records");
}
