/* fuzz/fuzz_tensor_bundle.c — libFuzzer target for the TF checkpoint reader: the input
 * (a 4-byte little-endian index length, the .index bytes, then the data shard's bytes)
 * opens with a clear error or lists tensors that each read or fail clearly; never a
 * crash, an overread or an allocation past what the files hold.
 * fuzz-sources: kernels/io/sstable.c kernels/io/tensor_bundle.c kernels/io/file_bytes.c kernels/io/tensor_bundle_slices.c build/gen/tide_proto/tensor_bundle.pb-c.c build/gen/tide_proto/tensor_slice.pb-c.c build/gen/tide_proto/tensor_shape.pb-c.c build/gen/tide_proto/types.pb-c.c build/gen/tide_proto/graph.pb-c.c build/gen/tide_proto/node_def.pb-c.c build/gen/tide_proto/attr_value.pb-c.c build/gen/tide_proto/tensor.pb-c.c */
#include "tide/tide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char prefix[64];

static void write_file(const char *suffix, const uint8_t *data, size_t n) {
  char path[128];
  snprintf(path, sizeof path, "%s%s", prefix, suffix);
  FILE *f = fopen(path, "wb");
  if (!f) __builtin_trap();
  if (n && fwrite(data, 1, n, f) != n) __builtin_trap();
  fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!prefix[0]) {
    /* one folder for the whole run; in memory where there is /dev/shm */
    char dir[64];
    snprintf(dir, sizeof dir, "%s/fuzz_bundle_XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(dir)) __builtin_trap();
    snprintf(prefix, sizeof prefix, "%s/ckpt", dir);
  }
  if (size < 4) return 0;
  size_t n = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
  if (n > size - 4) n = size - 4;
  write_file(".index", data + 4, n);
  /* the data as shard 0 of 1, and as both shards of 2 */
  write_file(".data-00000-of-00001", data + 4 + n, size - 4 - n);
  write_file(".data-00000-of-00002", data + 4 + n, size - 4 - n);
  write_file(".data-00001-of-00002", data + 4 + n, size - 4 - n);
  tide_tensor_bundle *b = tide_tensor_bundle_open(prefix);
  if (!b) {
    /* every refusal says why */
    if (tide_last_error()[0] == '\0') __builtin_trap();
    tide_clear_error();
    return 0;
  }
  int64_t count = tide_tensor_bundle_count(b);
  for (int64_t i = 0; i < count; i++) {
    int64_t len;
    const char *key = tide_tensor_bundle_key(b, i, &len);
    if (!key || tide_tensor_bundle_find(b, key, len) != i) __builtin_trap();
    if (!tide_tensor_bundle_dtype_name(b, i)) __builtin_trap();
    int32_t nd;
    const int64_t *dims = tide_tensor_bundle_shape(b, i, &nd);
    if (!dims || nd < 0) __builtin_trap();
    tide_tensor t;
    memset(&t, 0, sizeof t);
    if (tide_tensor_bundle_read(b, i, &t) == TIDE_OK) {
      /* the tensor holds what the index promised */
      if (t.dt != tide_tensor_bundle_dtype(b, i) || t.ndim != nd) __builtin_trap();
      for (int k = 0; k < nd; k++)
        if (t.dims[k] != dims[k]) __builtin_trap();
      if (t.dt == TIDE_BOOL)
        for (int64_t k = 0; k < t.nelem; k++)
          if (((const uint8_t *)t.data)[k] > 1) __builtin_trap();
      if (t.dt == TIDE_STRING)
        for (int64_t k = 0; k < t.nelem; k++) {
          int64_t sl;
          const char *s = tide_string_at(t.data, k, &sl);
          volatile char sink = 0;
          for (int64_t j = 0; j < sl; j++) sink ^= s[j]; /* every byte readable */
          (void)sink;
        }
      tide_tensor_release(&t);
    } else if (tide_last_error()[0] == '\0') {
      __builtin_trap();
    }
    tide_clear_error();
  }
  tide_tensor_bundle_close(b);
  return 0;
}
