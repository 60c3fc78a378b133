/* fuzz/fuzz_json.c — libFuzzer target for the JSON reader behind
 * saved_model.json and profiler traces (tide/json.h), and the trace reader's
 * gzip inflation (tide_profiler_read_text): any bytes parse to a tree whose
 * every node walks (counts match, strings hold no NUL before their end, keys only
 * in objects) or fail with an error naming the byte; any bytes as a trace
 * file (plain, or gzip) read back whole; never a crash, an overread or a stack
 * overflow (nesting is limited).
 * fuzz-sources: kernels/io/json.c */
#include "tide/json.h"
#include "tide/tide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

/* Walk n and below; the nodes counted. */
static long walk(const tide_json_node *n, int depth) {
  if (depth > 600) __builtin_trap(); /* deeper than the parser allows */
  int kind = tide_json_kind(n);
  if (kind < TIDE_JSON_NULL || kind > TIDE_JSON_OBJECT) __builtin_trap();
  if (kind == TIDE_JSON_STRING && !tide_json_string(n)) __builtin_trap();
  if (kind != TIDE_JSON_STRING && tide_json_string(n)) __builtin_trap();
  long seen = 1;
  int count = 0;
  for (const tide_json_node *c = tide_json_first(n); c; c = tide_json_next(c)) {
    if ((kind == TIDE_JSON_OBJECT) != (tide_json_key(c) != NULL)) __builtin_trap();
    seen += walk(c, depth + 1);
    count++;
  }
  if (count != tide_json_count(n)) __builtin_trap();
  if (kind != TIDE_JSON_ARRAY && kind != TIDE_JSON_OBJECT && count) __builtin_trap();
  return seen;
}

/* The bytes as a file in memory, read back by the trace reader. */
static void read_back(const void *data, size_t size, const void *want, size_t want_size) {
  int fd = memfd_create("fuzz_json", MFD_CLOEXEC);
  if (fd < 0) return;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, (const char *)data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int64_t len = -1;
  char *text = tide_profiler_read_text(path, &len);
  if (!text) {
    if (!tide_last_error()[0]) __builtin_trap();
  } else {
    if (want && ((size_t)len != want_size || memcmp(text, want, want_size) != 0 || text[len] != '\0')) __builtin_trap();
    tide_profiler_free_text(text);
  }
  close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the text in a buffer of exactly its size: the parser must not read past it */
  char *text = malloc(size ? size : 1);
  if (!text) return 0;
  memcpy(text, data, size);
  tide_json *doc = tide_json_parse(text, size);
  if (!doc) {
    if (!tide_last_error()[0]) __builtin_trap(); /* every refusal says why */
  } else {
    walk(tide_json_root(doc), 0);
    tide_json_free(doc);
  }
  free(text);
  /* as a trace file: plain bytes read as they are (unless they look gzipped), gzipped ones inflated */
  read_back(data, size, size >= 2 && data[0] == 0x1f && data[1] == 0x8b ? NULL : data, size);
  uLongf zlen = compressBound(size) + 32;
  unsigned char *z = malloc(zlen);
  z_stream s;
  memset(&s, 0, sizeof s);
  if (z && deflateInit2(&s, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
    s.next_in = (Bytef *)data, s.avail_in = (uInt)size, s.next_out = z, s.avail_out = (uInt)zlen;
    if (deflate(&s, Z_FINISH) == Z_STREAM_END) read_back(z, s.total_out, data, size);
    deflateEnd(&s);
  }
  free(z);
  return 0;
}
