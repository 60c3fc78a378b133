/* tests/c/test_safetensors.c — the safetensors C API as an embedder uses it: save
 * and read back (strided, bool, scalar, empty, metadata), hostile files, atomic writes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static char dir[64];

static void path_in(char *buf, size_t size, const char *name) { snprintf(buf, size, "%s/%s", dir, name); }

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(data, 1, n, f);
  fclose(f);
}

static void test_round_trip(void) {
  char path[128];
  path_in(path, sizeof path, "a.safetensors");
  int64_t dims[2] = {2, 3};
  tide_tensor *m = tide_tensor_new(TIDE_FLOAT32, 2, dims);
  for (int i = 0; i < 6; i++) ((float *)m->data)[i] = (float)i + 0.5f;
  CHECK(tide_tensor_promote(m) == TIDE_OK); /* 24 bytes are inline: views need a storage */
  tide_tensor mt; /* a transposed view: written row-major */
  memset(&mt, 0, sizeof mt);
  int64_t tdims[2] = {3, 2}, tstrides[2] = {1, 3};
  CHECK(tide_tensor_view(&mt, m, 2, tdims, tstrides, 0) == TIDE_OK);
  int64_t bdims[1] = {3};
  tide_tensor *b = tide_tensor_new(TIDE_BOOL, 1, bdims);
  ((uint8_t *)b->data)[0] = 7; /* any nonzero byte is true: written as 1 */
  ((uint8_t *)b->data)[1] = 0;
  ((uint8_t *)b->data)[2] = 1;
  tide_tensor *s = tide_tensor_new(TIDE_INT64, 0, NULL);
  *(int64_t *)s->data = -5;
  int64_t edims[2] = {0, 4};
  tide_tensor *e = tide_tensor_new(TIDE_FLOAT64, 2, edims);
  const char *names[] = {"m", "mt", "b", "s", "e"};
  const tide_tensor *ts[] = {m, &mt, b, s, e};
  const char *keys[] = {"k"}, *values[] = {"v"};
  CHECK(tide_safetensors_save(path, 5, names, ts, 1, keys, values) == TIDE_OK);

  tide_safetensors *f = tide_safetensors_open(path);
  CHECK(f != NULL);
  if (!f) return;
  CHECK(tide_safetensors_count(f) == 5);
  CHECK(tide_safetensors_metadata_count(f) == 1);
  CHECK(strcmp(tide_safetensors_metadata_key(f, 0), "k") == 0);
  CHECK(strcmp(tide_safetensors_metadata_value(f, 0), "v") == 0);
  CHECK(tide_safetensors_find(f, "nope") == -1);
  int64_t i = tide_safetensors_find(f, "mt");
  int32_t dt, nd;
  int64_t got_dims[TIDE_MAX_DIMS];
  CHECK(tide_safetensors_info(f, i, &dt, &nd, got_dims) == TIDE_OK);
  CHECK(dt == TIDE_FLOAT32 && nd == 2 && got_dims[0] == 3 && got_dims[1] == 2);
  tide_tensor t;
  memset(&t, 0, sizeof t);
  CHECK(tide_safetensors_read(f, i, &t) == TIDE_OK);
  const float want[6] = {0.5f, 3.5f, 1.5f, 4.5f, 2.5f, 5.5f};
  CHECK(memcmp(t.data, want, sizeof want) == 0);
  tide_tensor_release(&t);
  CHECK(tide_safetensors_read(f, tide_safetensors_find(f, "b"), &t) == TIDE_OK);
  CHECK(((uint8_t *)t.data)[0] == 1 && ((uint8_t *)t.data)[1] == 0 && ((uint8_t *)t.data)[2] == 1);
  tide_tensor_release(&t);
  CHECK(tide_safetensors_read(f, tide_safetensors_find(f, "s"), &t) == TIDE_OK);
  CHECK(t.ndim == 0 && *(int64_t *)t.data == -5);
  tide_tensor_release(&t);
  CHECK(tide_safetensors_read(f, tide_safetensors_find(f, "e"), &t) == TIDE_OK);
  CHECK(t.ndim == 2 && t.nelem == 0 && t.dt == TIDE_FLOAT64);
  tide_tensor_release(&t);
  CHECK(tide_safetensors_read(f, 5, &t) == TIDE_ERR_INDEX);
  tide_safetensors_close(f);

  /* Duplicate and reserved names, symbolic tensors: refused, the file unchanged. */
  const char *dup[] = {"x", "x"};
  const tide_tensor *two[] = {m, s};
  CHECK(tide_safetensors_save(path, 2, dup, two, 0, NULL, NULL) == TIDE_ERR_VALUE);
  CHECK(strstr(tide_last_error(), "two tensors are named 'x'") != NULL);
  const char *meta[] = {"__metadata__"};
  CHECK(tide_safetensors_save(path, 1, meta, two, 0, NULL, NULL) == TIDE_ERR_VALUE);
  const char *twice[] = {"k", "k"};
  CHECK(tide_safetensors_save(path, 1, names, ts, 2, twice, twice) == TIDE_ERR_VALUE);
  CHECK(strstr(tide_last_error(), "the metadata key 'k' appears twice") != NULL);
  f = tide_safetensors_open(path);
  CHECK(f && tide_safetensors_count(f) == 5);
  tide_safetensors_close(f);

  tide_tensor_release(&mt);
  tide_tensor_free(m);
  tide_tensor_free(b);
  tide_tensor_free(s);
  tide_tensor_free(e);
}

static void expect_corrupt(const char *header, size_t data_bytes, const char *needle) {
  char path[128];
  path_in(path, sizeof path, "bad.safetensors");
  size_t h = strlen(header), n = 8 + h + data_bytes;
  unsigned char *buf = calloc(1, n);
  for (int k = 0; k < 8; k++) buf[k] = (unsigned char)((uint64_t)h >> (8 * k));
  memcpy(buf + 8, header, h);
  write_file(path, buf, n);
  free(buf);
  tide_safetensors *f = tide_safetensors_open(path);
  CHECK(f == NULL);
  CHECK(tide_last_status() == TIDE_ERR_IO);
  CHECK(strstr(tide_last_error(), "is corrupt") != NULL);
  if (!strstr(tide_last_error(), needle)) fprintf(stderr, "got: %s\n", tide_last_error());
  CHECK(strstr(tide_last_error(), needle) != NULL);
  tide_safetensors_close(f);
}

static void test_hostile(void) {
  expect_corrupt("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "not valid JSON");
  expect_corrupt("{\"x\":{\"dtype\":\"Q8\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "unknown dtype 'Q8'");
  expect_corrupt("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "overlaps");
  expect_corrupt("{\"x\":{\"dtype\":\"F32\",\"shape\":[99999999999,99999999999,99999999999],"
                 "\"data_offsets\":[0,8]}}", 8, "absurd shape");
  expect_corrupt("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,80]}}", 8, "pass the end of the data");
  /* A header length past the end of the file. */
  char path[128];
  path_in(path, sizeof path, "len.safetensors");
  unsigned char buf[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}', ' ', ' '};
  write_file(path, buf, sizeof buf);
  CHECK(tide_safetensors_open(path) == NULL);
  CHECK(strstr(tide_last_error(), "passes the end of the file") != NULL);
  CHECK(tide_safetensors_open(dir) == NULL);
  CHECK(strstr(tide_last_error(), "not a regular file") != NULL);
  char fifo[128];
  path_in(fifo, sizeof fifo, "fifo");
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(tide_safetensors_open(fifo) == NULL); /* refused, without waiting for a writer */
  CHECK(strstr(tide_last_error(), "not a regular file") != NULL);
}

static void test_atomic(void) {
  char path[128];
  path_in(path, sizeof path, "index");
  CHECK(tide_write_file_atomic(path, "one\n", 4) == TIDE_OK);
  CHECK(tide_write_file_atomic(path, "two!\n", 5) == TIDE_OK);
  FILE *f = fopen(path, "rb");
  char got[16] = {0};
  CHECK(f && fread(got, 1, sizeof got, f) == 5);
  if (f) fclose(f);
  CHECK(strcmp(got, "two!\n") == 0);
  /* Into a folder that does not exist: an error naming the path, nothing left. */
  char bad[160];
  snprintf(bad, sizeof bad, "%s/missing/index", dir);
  CHECK(tide_write_file_atomic(bad, "x", 1) == TIDE_ERR_IO);
  CHECK(strstr(tide_last_error(), bad) != NULL);
  char deep[160];
  snprintf(deep, sizeof deep, "%s/p/q/r", dir);
  CHECK(tide_make_dirs(deep) == TIDE_OK);
  CHECK(tide_make_dirs(deep) == TIDE_OK);
  CHECK(tide_make_dirs(path) == TIDE_ERR_IO); /* a file is in the way */
  CHECK(tide_wall_clock_seconds() > 1.7e9);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/tide_test_safetensors_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_round_trip();
  test_hostile();
  test_atomic();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 1;
  return CHECK_SUMMARY("safetensors");
}
