/* fuzz/fuzz_h5.c — libFuzzer target for the HDF5 reader: any bytes must open with
 * a clear error, or walk into a tree whose every dataset reads or fails cleanly.
 * It reads in this process (h5_read_in_process): in a reader process, a crash
 * would become an error and the fuzzer would see neither it nor its coverage.
 * fuzz-sources: kernels/io/h5_file.c kernels/io/h5_isolate.c kernels/io/h5_write.c kernels/io/file_bytes.c kernels/io/atomic_file.c
 * fuzz-libs: hdf5 */
#include "tide/tide.h"

#include <cjson/cJSON.h>
#include <string.h>

extern int h5_read_in_process; /* kernels/io/h5_internal.h */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  h5_read_in_process = 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tide_h5 *f = tide_h5_open_memory(data, size, "fuzz");
  if (!f) {
    /* Every refusal must say why. */
    if (tide_last_error()[0] == '\0') __builtin_trap();
    tide_clear_error();
    return 0;
  }
  const char *tree = tide_h5_tree(f);
  cJSON *list = tree ? cJSON_Parse(tree) : NULL;
  if (!list || !cJSON_IsArray(list)) __builtin_trap(); /* the tree is always valid JSON */
  cJSON *node;
  cJSON_ArrayForEach(node, list) {
    const cJSON *kind = cJSON_GetObjectItem(node, "kind"), *path = cJSON_GetObjectItem(node, "path");
    if (!cJSON_IsString(kind) || !cJSON_IsString(path)) __builtin_trap();
    if (strcmp(kind->valuestring, "dataset") != 0) continue;
    tide_tensor t;
    memset(&t, 0, sizeof t);
    if (tide_h5_read(f, path->valuestring, &t) == TIDE_OK) {
      if (t.dt == TIDE_BOOL)
        for (int64_t k = 0; k < t.nelem; k++)
          if (((const uint8_t *)t.data)[k] > 1) __builtin_trap();
      tide_tensor_release(&t);
    } else if (tide_last_error()[0] == '\0') {
      __builtin_trap();
    }
    tide_clear_error();
  }
  cJSON_Delete(list);
  tide_h5_close(f);
  tide_clear_error();
  return 0;
}
