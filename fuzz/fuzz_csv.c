/* fuzz/fuzz_csv.c — libFuzzer target for the CSV reader: any bytes split into
 * records and decoded as (int64, string, float64) give values or an error naming the
 * file; never a crash or an overread.
 * fuzz-sources: kernels/io/csv.c fuzz/engine_shims.c */
#include "tide/tide.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int quote = 0; quote < 2; quote++) {
    tide_csv_reader *r = tide_csv_open_memory(data, size, "fuzz.csv", ',', quote);
    if (!r) __builtin_trap();
    int rc;
    while ((rc = tide_csv_next(r)) == 1) {
      for (int64_t j = 0; j < tide_csv_num_fields(r); j++) {
        size_t len;
        const char *s = tide_csv_field(r, j, &len);
        if (!s || s[len] != '\0') __builtin_trap();
      }
      int32_t dts[3] = {TIDE_INT64, TIDE_STRING, TIDE_FLOAT64};
      int64_t cols[3] = {0, 1, 2};
      const tide_tensor *defs[3] = {NULL, NULL, NULL};
      tide_tensor outs[3];
      tide_tensor *out[3] = {&outs[0], &outs[1], &outs[2]};
      memset(outs, 0, sizeof outs);
      if (tide_csv_decode(r, 3, cols, dts, defs, "NA", out) == TIDE_OK)
        for (int c = 0; c < 3; c++) tide_tensor_release(&outs[c]);
      else if (!strstr(tide_last_error(), "fuzz.csv")) __builtin_trap();
    }
    if (rc < 0 && !strstr(tide_last_error(), "fuzz.csv")) __builtin_trap();
    tide_csv_close(r);
  }
  return 0;
}
