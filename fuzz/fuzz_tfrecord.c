/* fuzz/fuzz_tfrecord.c — libFuzzer target for the TFRecord reader: any bytes, read
 * plain, as GZIP and as ZLIB, give records whose framing checked out, or an error
 * naming the file and an offset; never a crash, an overread or a huge allocation.
 * fuzz-sources: kernels/io/record.c kernels/io/crc32c.c fuzz/engine_shims.c */
#include "tide/tide.h"
#include "../kernels/io/crc32c.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const comps[] = {"", "GZIP", "ZLIB"};
  for (int c = 0; c < 3; c++) {
    tide_record_reader *r = tide_record_reader_open_memory(data, size, "fuzz.tfrecord", comps[c]);
    if (!r) __builtin_trap();
    const uint8_t *rec;
    size_t len;
    int rc;
    uint64_t before = 0;
    while ((rc = tide_record_reader_next(r, &rec, &len)) == 1) {
      /* a plain record lies inside the input, framed: 16 bytes more than its data */
      uint64_t after = tide_record_reader_offset(r);
      if (after - before != len + 16) __builtin_trap();
      if (c == 0 && (after > size || memcmp(rec, data + before + 12, len) != 0)) __builtin_trap();
      volatile uint8_t sink = 0;
      for (size_t i = 0; i < len; i++) sink ^= rec[i]; /* every byte readable */
      (void)sink;
      before = after;
    }
    if (rc < 0) {
      const char *msg = tide_last_error();
      if (!strstr(msg, "fuzz.tfrecord")) __builtin_trap();
      /* the error sticks */
      if (tide_record_reader_next(r, &rec, &len) != -1) __builtin_trap();
    }
    tide_record_reader_close(r);
  }
  return 0;
}
