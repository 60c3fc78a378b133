/* tide/h5.h — HDF5 files (Keras's .weights.h5 and legacy .h5 weights) over
 * libhdf5: a checked walk of groups, datasets and attributes, and writing. */
#ifndef TIDE_H5_H
#define TIDE_H5_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An HDF5 file open for reading (its bytes held in memory) or being written
 * (in memory until saved); opaque. */
typedef struct tide_h5 tide_h5;

/* Open the HDF5 file at `path` (through the file policy; a regular file) and
 * walk it whole: hard links only (a soft or external link is refused), no
 * object reached twice, at most 64 groups deep and 1,000,000 objects, names
 * of at most 4,096 bytes. NULL with an error naming the file and the fault. */
TIDE_API tide_h5 *tide_h5_open(const char *path);
/* The same over `n` bytes at `data` (copied); `name` names it in messages. */
TIDE_API tide_h5 *tide_h5_open_memory(const void *data, size_t n, const char *name);
/* Close the file and free everything; NULL is fine. */
TIDE_API void tide_h5_close(tide_h5 *f);
/* The file's objects as JSON, in walk order (each group's members by name):
 * [{"path": "layers/dense/vars", "kind": "group", "attrs": {"name": "dense"}},
 *  {"path": "layers/dense/vars/0", "kind": "dataset", "dtype": "float32",
 *   "shape": [4, 5], "attrs": {}}, ...]. Attributes are fixed-length strings,
 * lists of them, numbers or lists of numbers (at most 4,096); other kinds are
 * null, variable-length strings (h5py's str) too: libhdf5 1.10 reads those
 * from the global heap unchecked, and a corrupt heap crashes it.
 * A dataset tide cannot read has "dtype": null and "why": the reason. Owned
 * by f; NULL for a file being written. */
TIDE_API const char *tide_h5_tree(const tide_h5 *f);
/* Read the dataset at `path` into the blank header `out` (a new contiguous
 * tensor). Its dtype and size are checked first: a dataset declaring far
 * more bytes than the file stores, external or virtual storage, or filters
 * other than deflate, shuffle and fletcher32 are refused. float16 and
 * bfloat16 (Keras's 2-byte opaque with a "dtype" attribute, whose value is
 * not read) are read as themselves, int16 and uint16 as int32, uint32 as
 * int64, HDF5 booleans (h5py's enum) as bool. */
TIDE_API tide_status tide_h5_read(tide_h5 *f, const char *path, tide_tensor *out);

/* A new, empty HDF5 file in memory; `name` names it in messages. */
TIDE_API tide_h5 *tide_h5_create(const char *name);
/* Make the group at `path` and its missing parents; an existing group is fine. */
TIDE_API tide_status tide_h5_make_group(tide_h5 *f, const char *path);
/* Give the object at `path` ("" or "/": the root) the string attribute
 * `name` = `value` (UTF-8, as h5py writes a str). */
TIDE_API tide_status tide_h5_set_attr(tide_h5 *f, const char *path, const char *name, const char *value);
/* Write tensor `t` (CPU, any layout) as the dataset at `path`, making the
 * missing groups; the types are h5py's (little-endian; bool as h5py's enum;
 * bfloat16 as a 2-byte opaque with attribute dtype = "bfloat16"). */
TIDE_API tide_status tide_h5_write(tide_h5 *f, const char *path, const tide_tensor *t);
/* The file's bytes now; owned by f (valid until the next call on f or close). */
TIDE_API const void *tide_h5_image(tide_h5 *f, size_t *n);
/* Write the file's bytes to `path` atomically (temporary file, fsync, rename). */
TIDE_API tide_status tide_h5_save(tide_h5 *f, const char *path);

#ifdef __cplusplus
}
#endif
#endif
