/* tide/tensor_bundle.h — reading TensorFlow checkpoints (TF's tensor bundle:
 * `prefix.index` and `prefix.data-0000K-of-0000N`), as tf.train.load_checkpoint. */
#ifndef TIDE_TENSOR_BUNDLE_H
#define TIDE_TENSOR_BUNDLE_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An open checkpoint whose index has been read and checked; opaque. */
typedef struct tide_tensor_bundle tide_tensor_bundle;

/* Open the checkpoint whose files start with `prefix` (TF's prefix: "ckpt-1"
 * for ckpt-1.index): read `prefix.index` whole (at most 1 GiB) and check it
 * before anything else is allocated: the table (footer, magic, every block's
 * CRC-32C, keys and offsets), the header (little-endian, a format version
 * tide reads) and every entry (dtype, shape, shard, byte range; a fixed-size
 * dtype's size matching its shape). The data files are opened only to read.
 * Under a file policy (tide/files.h) every file must be allowed. NULL with
 * an error naming the file and the fault. */
TIDE_API tide_tensor_bundle *tide_tensor_bundle_open(const char *prefix);
/* Free everything open made. NULL is fine. */
TIDE_API void tide_tensor_bundle_close(tide_tensor_bundle *b);
/* How many tensors the checkpoint lists: what tf.train.list_variables lists
 * (_CHECKPOINTABLE_OBJECT_GRAPH included; neither the header nor the parts
 * of a tensor saved in slices). */
TIDE_API int64_t tide_tensor_bundle_count(const tide_tensor_bundle *b);
/* The key of tensor i (0 <= i < count, in bytewise key order, as TF sorts
 * them) and its length in bytes (len may be NULL); NULL when i is out of range. */
TIDE_API const char *tide_tensor_bundle_key(const tide_tensor_bundle *b, int64_t i, int64_t *len);
/* The index of the tensor whose key is key[0..len), or -1. */
TIDE_API int64_t tide_tensor_bundle_find(const tide_tensor_bundle *b, const char *key, int64_t len);
/* Tensor i's dtype as TF names it ("float32", "float16", "string", "uint16", ...). */
TIDE_API const char *tide_tensor_bundle_dtype_name(const tide_tensor_bundle *b, int64_t i);
/* Tensor i's dtype in tide (a tide_dtype), or -1 when tide has no such dtype. */
TIDE_API int32_t tide_tensor_bundle_dtype(const tide_tensor_bundle *b, int64_t i);
/* Tensor i's rank in *ndim and its dims (valid while b is open; TF allows
 * ranks past TIDE_MAX_DIMS, which only reading refuses). NULL out of range. */
TIDE_API const int64_t *tide_tensor_bundle_shape(const tide_tensor_bundle *b, int64_t i, int32_t *ndim);
/* Read tensor i into the blank header `out` (a new contiguous tensor with
 * TF's dtype and shape: int64 and float64 exact, strings as tide strings,
 * bools as 0 and 1); its bytes must pass the CRC-32C the index holds, as TF
 * checks them. A tensor saved in slices is put together from them. Errors
 * name the checkpoint, the key and the fault (a dtype tide lacks, a data
 * file missing or too short, a checksum mismatch). */
TIDE_API tide_status tide_tensor_bundle_read(tide_tensor_bundle *b, int64_t i, tide_tensor *out);

#ifdef __cplusplus
}
#endif
#endif
