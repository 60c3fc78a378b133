/* fuzz/fuzz_example.c — libFuzzer target for the tf.train.Example parser: any bytes
 * parsed against specs of every kind give values whose counts add up, or an error
 * naming the feature or the input; never a crash or an overread.
 * fuzz-sources: kernels/io/example.c build/gen/tide_proto/example.pb-c.c build/gen/tide_proto/feature.pb-c.c */
#include "tide/tide.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the input as one example and as a batch of two (split in the middle) */
  static const int64_t two[1] = {2};
  static const int64_t def_i[2] = {-1, -2};
  static const float def_f[1] = {0.5f};
  static const char *const names[6] = {"a", "b", "c", "d", "e", "f"};
  tide_feature_spec specs[6];
  memset(specs, 0, sizeof specs);
  for (int i = 0; i < 6; i++) specs[i].name = names[i];
  specs[0] = (tide_feature_spec){"a", TIDE_FEATURE_INT64, 0, 1, two, 1, def_i};
  specs[1] = (tide_feature_spec){"b", TIDE_FEATURE_FLOAT, 0, 0, NULL, 1, def_f};
  specs[2] = (tide_feature_spec){"c", TIDE_FEATURE_BYTES, 1, 0, NULL, 0, NULL};
  specs[3] = (tide_feature_spec){"d", TIDE_FEATURE_INT64, 1, 0, NULL, 0, NULL};
  specs[4] = (tide_feature_spec){"e", TIDE_FEATURE_FLOAT, 1, 0, NULL, 0, NULL};
  specs[5] = (tide_feature_spec){"f", TIDE_FEATURE_BYTES, 0, 0, NULL, 0, NULL}; /* required */
  const uint8_t *ptrs[2] = {data, data + size / 2};
  size_t lens[2] = {size / 2, size - size / 2};
  for (int batch = 0; batch < 2; batch++) {
    int64_t n = batch ? 2 : 1;
    size_t one = size;
    tide_example_batch *b = tide_example_parse(n, batch ? ptrs : &data, batch ? lens : &one, 6, specs, batch);
    if (!b) {
      if (!tide_last_error()[0]) __builtin_trap();
      continue;
    }
    for (int i = 0; i < 6; i++) {
      int64_t count = tide_example_batch_count(b, i);
      if (count < 0) __builtin_trap();
      if (i == 0 && count != 2 * n) __builtin_trap();
      if (i == 1 && count != n) __builtin_trap();
      if (specs[i].type == TIDE_FEATURE_BYTES) {
        int64_t dims[1] = {count};
        tide_tensor t;
        memset(&t, 0, sizeof t);
        if (tide_tensor_init(&t, TIDE_STRING, 1, dims) != TIDE_OK) __builtin_trap();
        if (tide_example_batch_strings(b, i, &t, NULL) != TIDE_OK) __builtin_trap();
        for (int64_t k = 0; k < count; k++) {
          size_t len;
          const uint8_t *p = tide_example_batch_bytes(b, i, k, &len);
          int64_t l2;
          const char *s = tide_string_at(t.data, k, &l2);
          if (!p || (int64_t)len != l2 || (len && memcmp(p, s, len) != 0)) __builtin_trap();
        }
        tide_tensor_release(&t);
      } else {
        void *out = malloc(count ? (size_t)count * 8 : 1);
        if (tide_example_batch_values(b, i, out) != TIDE_OK) __builtin_trap();
        free(out);
      }
      if (specs[i].var_len) {
        int64_t *idx = malloc(count ? (size_t)count * 16 : 1);
        int64_t longest = tide_example_batch_var_indices(b, i, idx);
        for (int64_t k = 0; k < count; k++)
          if (idx[2 * k] < 0 || idx[2 * k] >= n || idx[2 * k + 1] < 0 || idx[2 * k + 1] >= longest) __builtin_trap();
        free(idx);
      }
    }
    tide_example_batch_free(b);
  }
  return 0;
}
