/* tide/safetensors.h — safetensors files (https://github.com/huggingface/safetensors):
 * reading with every field checked before any tensor is allocated, and atomic writing. */
#ifndef TIDE_SAFETENSORS_H
#define TIDE_SAFETENSORS_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open safetensors file whose header has been read and checked; opaque. */
typedef struct tide_safetensors tide_safetensors;

/* Open `path` and check its whole header: the length (inside the file, at most
 * 100 MB), the JSON, every tensor's dtype, shape and data_offsets (in range,
 * consistent with shape and dtype, not overlapping, covering the data exactly),
 * no duplicate names, __metadata__ a map of strings. NULL with an error naming
 * the file and the fault; no tensor memory is allocated here. */
TIDE_API tide_safetensors *tide_safetensors_open(const char *path);
/* Close the file and free everything open made. NULL is fine. */
TIDE_API void tide_safetensors_close(tide_safetensors *f);
/* How many tensors the file holds. */
TIDE_API int64_t tide_safetensors_count(const tide_safetensors *f);
/* The name of tensor i (0 <= i < count, in the order of their data), or NULL. */
TIDE_API const char *tide_safetensors_name(const tide_safetensors *f, int64_t i);
/* The index of the tensor called `name`, or -1. */
TIDE_API int64_t tide_safetensors_find(const tide_safetensors *f, const char *name);
/* Tensor i's dtype (tide_dtype), rank and dims (dims: room for TIDE_MAX_DIMS). */
TIDE_API tide_status tide_safetensors_info(const tide_safetensors *f, int64_t i, int32_t *dtype, int32_t *ndim,
                                           int64_t *dims);
/* Read tensor i into the blank header `out` (a new contiguous tensor); bool
 * bytes come back as 0 and 1. A file that changed since open is an error. */
TIDE_API tide_status tide_safetensors_read(tide_safetensors *f, int64_t i, tide_tensor *out);
/* The __metadata__ entries, sorted by key: how many, and entry i's key and value. */
TIDE_API int64_t tide_safetensors_metadata_count(const tide_safetensors *f);
TIDE_API const char *tide_safetensors_metadata_key(const tide_safetensors *f, int64_t i);
TIDE_API const char *tide_safetensors_metadata_value(const tide_safetensors *f, int64_t i);

/* Write `count` tensors (tensors[i] under names[i]; any layout, CPU, not
 * symbolic) and `metadata_count` string pairs as a safetensors file at
 * `path`: to a temporary file in the same folder, fsync, rename into place,
 * fsync the folder. On failure the old file (if any) is untouched and no
 * temporary file is left. Data are laid out as Python's safetensors does
 * (larger element sizes first, then by name). */
TIDE_API tide_status tide_safetensors_save(const char *path, int64_t count, const char *const *names,
                                           const tide_tensor *const *tensors, int64_t metadata_count,
                                           const char *const *metadata_keys, const char *const *metadata_values);

/* Replace the file at `path` with `nbytes` bytes from `data`, atomically as
 * tide_safetensors_save does (temporary file, fsync, rename, fsync the folder). */
TIDE_API tide_status tide_write_file_atomic(const char *path, const void *data, size_t nbytes);
/* Remove the temporary files that atomic writes into folder `dir` left when
 * their process was killed: `.<name>.tmp-<pid>-<n>-<hex>` where <name>
 * starts with `prefix` and ends with `suffix` (suffix NULL: <name> is
 * `prefix` itself), <pid> is not this process and no process of that id
 * lives on this machine (kill(pid, 0) fails with ESRCH), and the entry is a
 * plain file. Nothing else is touched. *removed (may be NULL) gets the count;
 * a missing folder is no error. */
TIDE_API tide_status tide_remove_stale_temporaries(const char *dir, const char *prefix, const char *suffix,
                                                   int *removed);
/* Make the folder `path` and its missing parents (as mkdir -p); an existing folder is fine. */
TIDE_API tide_status tide_make_dirs(const char *path);
/* Seconds since the Unix epoch, with sub-second precision: the timestamps a
 * checkpoint index records (os.time has whole seconds only). */
TIDE_API double tide_wall_clock_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
