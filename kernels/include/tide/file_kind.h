/* tide/file_kind.h — what a file is, by its first and last bytes (a folder by
 * what it holds): what a reader handed a file of another format says. */
#ifndef TIDE_FILE_KIND_H
#define TIDE_FILE_KIND_H
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds tide tells apart. */
typedef enum tide_file_kind_code {
  TIDE_FILE_UNKNOWN = 0,     /* none of these, missing, unreadable, or refused by the file policy */
  TIDE_FILE_SAFETENSORS,     /* tide.safetensors; tide's weights and checkpoints */
  TIDE_FILE_NPY,             /* NumPy .npy */
  TIDE_FILE_NPZ,             /* NumPy .npz (a zip of .npy files) */
  TIDE_FILE_HDF5,            /* HDF5: Keras's .h5 and .weights.h5 */
  TIDE_FILE_KERAS,           /* a Keras 3 .keras zip (config.json, model.weights.h5) */
  TIDE_FILE_TORCH_ZIP,       /* torch.save's zip (data.pkl inside) */
  TIDE_FILE_PICKLE,          /* a Python pickle (a legacy PyTorch .pt) */
  TIDE_FILE_ZIP,             /* another zip archive */
  TIDE_FILE_ONNX,            /* an ONNX ModelProto (sniffed loosely) */
  TIDE_FILE_TF_SAVED_MODEL,  /* a TensorFlow SavedModel folder, or its saved_model.pb */
  TIDE_FILE_TIDE_SAVED_MODEL,/* a tide SavedModel folder (saved_model.json) */
  TIDE_FILE_CHECKPOINT_DIR,  /* a folder of checkpoints (a `checkpoint` index file) */
  TIDE_FILE_TF_INDEX,        /* the .index of a TF checkpoint (a table ending in its magic) */
  TIDE_FILE_TF_DATA,         /* a .data-0000K-of-0000N file of a TF checkpoint */
  TIDE_FILE_TFRECORD,        /* a TFRecord file (its first length's CRC checks out) */
  TIDE_FILE_GZIP             /* gzip-compressed bytes */
} tide_file_kind_code;

/* What the file or folder at `path` is (a tide_file_kind_code), reading at
 * most its first 4 KiB and last 8 bytes; never blocks on a FIFO or a
 * device. *phrase (may be NULL) gets a static phrase naming it and the tide
 * function that reads it, or saying that tide cannot read it yet: "an HDF5
 * file (Keras's .h5 or .weights.h5), which tide cannot read yet"; NULL for
 * TIDE_FILE_UNKNOWN. A path the file policy refuses is TIDE_FILE_UNKNOWN,
 * and that refusal becomes the last error: set the caller's own after. */
TIDE_API int tide_file_kind(const char *path, const char **phrase);

#ifdef __cplusplus
}
#endif
#endif
