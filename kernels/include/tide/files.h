/* tide/files.h — the file system as tide's file functions see it: finding
 * files by pattern (tf.io.matching_files, behind Dataset.list_files). */
#ifndef TIDE_FILES_H
#define TIDE_FILES_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The paths matching any of the `n` glob patterns (`*`, `?`, `[...]`, in any
 * path component; a leading dot matched like any other character, as TF
 * does; "." and ".." never), as a new 1-D string tensor in the blank header
 * `out`: every pattern's matches together, sorted bytewise, a path that two
 * patterns match listed twice (tf.io.matching_files' rules). No match gives
 * an empty tensor; a folder that cannot be read while matching is an error
 * naming the pattern. */
TIDE_API tide_status tide_match_files(int64_t n, const char *const *patterns, tide_tensor *out);

#ifdef __cplusplus
}
#endif
#endif
