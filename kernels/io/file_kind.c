/* io/file_kind.c — telling file formats apart by their magic bytes (a folder
 * by the files it holds), for the errors of readers handed the wrong file. */
#include "tide/tide.h"
#include "crc32c.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEAD_BYTES = 4096 };

static const char *const PHRASES[] = {
    [TIDE_FILE_SAFETENSORS] = "a safetensors file: tide.safetensors.load_file and safe_open read it (model:load_weights "
                              "reads tide's weights files)",
    [TIDE_FILE_NPY] = "a NumPy .npy file: tide.io.read_npy reads it",
    [TIDE_FILE_NPZ] = "a NumPy .npz archive (a zip of .npy files), which tide does not read; tide.io.read_npy reads "
                      "each .npy in it",
    [TIDE_FILE_HDF5] = "an HDF5 file (Keras 3's .weights.h5: model:load_weights reads it, tide.io.h5 any HDF5)",
    [TIDE_FILE_KERAS] = "a Keras .keras file (a zip of config.json and model.weights.h5): tide.models.load_model "
                        "reads it",
    [TIDE_FILE_TORCH_ZIP] = "a PyTorch file (torch.save's zip around a pickle), which tide does not read: unpickling "
                            "runs code (save the weights as safetensors, which tide.safetensors reads)",
    [TIDE_FILE_PICKLE] = "a Python pickle (a legacy PyTorch .pt or .pth?), which tide does not read: unpickling runs "
                         "code (save the weights as safetensors, which tide.safetensors reads)",
    [TIDE_FILE_ZIP] = "a zip archive, which tide does not read",
    [TIDE_FILE_ONNX] = "an ONNX model: tide.onnx.load reads it",
    [TIDE_FILE_TF_SAVED_MODEL] = "a TensorFlow SavedModel (saved_model.pb): tide.saved_model.load reads it; its "
                                 "variables are a TF checkpoint, which tide.train.load_checkpoint reads (<folder>/"
                                 "variables/variables)",
    [TIDE_FILE_TIDE_SAVED_MODEL] = "a tide SavedModel folder: tide.saved_model.load reads it "
                                   "(tide.models.load_model a saved Keras model)",
    [TIDE_FILE_CHECKPOINT_DIR] = "a folder of checkpoints (it holds a `checkpoint` index): tide.train.load_checkpoint "
                                 "reads its latest",
    [TIDE_FILE_TF_INDEX] = "the index of a TensorFlow checkpoint: tide.train.load_checkpoint reads the checkpoint (its "
                           "prefix: the path without .index)",
    [TIDE_FILE_TF_DATA] = "a data file of a TensorFlow checkpoint: tide.train.load_checkpoint reads the checkpoint (its "
                          "prefix: the path before .data-)",
    [TIDE_FILE_TFRECORD] = "a TFRecord file: tide.data.TFRecordDataset reads it",
    [TIDE_FILE_GZIP] = "gzip-compressed data (a compressed TFRecord file is read with "
                       "tide.data.TFRecordDataset(path, {compression_type = \"GZIP\"}))",
};

static bool has_file(const char *dir, const char *name) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return false;
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int folder_kind(const char *dir) {
  if (has_file(dir, "saved_model.pb") || has_file(dir, "saved_model.pbtxt")) return TIDE_FILE_TF_SAVED_MODEL;
  if (has_file(dir, "saved_model.json")) return TIDE_FILE_TIDE_SAVED_MODEL;
  if (has_file(dir, "checkpoint")) return TIDE_FILE_CHECKPOINT_DIR;
  return TIDE_FILE_UNKNOWN;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The name ends in ".data-DDDDD-of-DDDDD", TF's data file names. */
static bool tf_data_name(const char *path) {
  const char *p = strstr(path, ".data-");
  for (const char *q; p && (q = strstr(p + 1, ".data-"));) p = q;
  if (!p) return false;
  int k, n, used = 0;
  return sscanf(p, ".data-%5d-of-%5d%n", &k, &n, &used) == 2 && p[used] == '\0' && k < n;
}

static bool contains(const unsigned char *h, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(h + i, needle, m) == 0) return true;
  return false;
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* A zip: what its first entries are named tells Keras, PyTorch and NumPy apart. */
static int zip_kind(const unsigned char *h, size_t n) {
  if (contains(h, n, "data.pkl")) return TIDE_FILE_TORCH_ZIP;
  if (contains(h, n, "config.json") || contains(h, n, "metadata.json") || contains(h, n, "model.weights.h5"))
    return TIDE_FILE_KERAS;
  if (n >= 30) {
    size_t name_len = (size_t)h[26] | (size_t)h[27] << 8;
    if (30 + name_len <= n && name_len >= 4 && memcmp(h + 30 + name_len - 4, ".npy", 4) == 0) return TIDE_FILE_NPZ;
  }
  return TIDE_FILE_ZIP;
}

/* ONNX's ModelProto, loosely: ir_version (field 1: 3 to 14 in the ONNX releases
 * so far, up to 20 allowed for those to come) first, then another of ModelProto's
 * fields. A SavedModel proto also starts with field 1, but its value is 1. */
static bool onnx_like(const unsigned char *h, size_t n) {
  static const unsigned char NEXT[] = {0x12, 0x1a, 0x22, 0x28, 0x32, 0x3a, 0x42, 0x72};
  if (n < 4 || h[0] != 0x08 || h[1] < 3 || h[1] > 20) return false;
  return memchr(NEXT, h[2], sizeof NEXT) != NULL;
}

/* A pickle of protocol 2 to 5: PROTO, then what pickles start with (FRAME,
 * torch's LONG1 magic number, an empty dict or list, a global, a mark, ...). */
static bool pickle_like(const unsigned char *h, size_t n) {
  static const unsigned char FIRST[] = {0x95, 0x8a, '}', ']', 'c', '(', 'X', 0x8c, 'K', 'M', 'J'};
  return n >= 3 && h[0] == 0x80 && h[1] >= 2 && h[1] <= 5 && memchr(FIRST, h[2], sizeof FIRST) != NULL;
}

static int bytes_kind(const char *path, const unsigned char *h, size_t n, const unsigned char *tail, uint64_t size) {
  static const unsigned char HDF5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  static const unsigned char TABLE_MAGIC[8] = {0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb};
  if (n >= 8 && (memcmp(h, HDF5, 8) == 0 || (n >= 520 && memcmp(h + 512, HDF5, 8) == 0))) return TIDE_FILE_HDF5;
  if (n >= 6 && memcmp(h, "\x93NUMPY", 6) == 0) return TIDE_FILE_NPY;
  if (n >= 4 && memcmp(h, "PK\x03\x04", 4) == 0) return zip_kind(h, n);
  /* safetensors: a header length under 4 GiB, then '{' (a corrupt one still counts) */
  if (n >= 9 && h[8] == '{' && (le64(h) >> 32) == 0) return TIDE_FILE_SAFETENSORS;
  if (size >= 48 && memcmp(tail, TABLE_MAGIC, 8) == 0) return TIDE_FILE_TF_INDEX;
  if (tf_data_name(path)) return TIDE_FILE_TF_DATA;
  if (ends_with(path, "saved_model.pb")) return TIDE_FILE_TF_SAVED_MODEL;
  if (n >= 12 && tide_crc32c_masked(h, 8) == ((uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 |
                                              (uint32_t)h[11] << 24))
    return TIDE_FILE_TFRECORD;
  if (pickle_like(h, n)) return TIDE_FILE_PICKLE;
  if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b) return TIDE_FILE_GZIP;
  if (onnx_like(h, n)) return TIDE_FILE_ONNX;
  return TIDE_FILE_UNKNOWN;
}

static int kind_of(const char *path) {
  if (!path || tide_file_check(path, false) != TIDE_OK) return TIDE_FILE_UNKNOWN;
  struct stat sb;
  if (stat(path, &sb) != 0) return TIDE_FILE_UNKNOWN;
  if (S_ISDIR(sb.st_mode)) return folder_kind(path);
  if (!S_ISREG(sb.st_mode)) return TIDE_FILE_UNKNOWN;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return TIDE_FILE_UNKNOWN;
  unsigned char h[HEAD_BYTES], tail[8] = {0};
  ssize_t got = pread(fd, h, sizeof h, 0);
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || got < 0) {
    close(fd);
    return TIDE_FILE_UNKNOWN;
  }
  uint64_t size = (uint64_t)sb.st_size;
  if (size >= 8 && pread(fd, tail, 8, (off_t)(size - 8)) != 8) memset(tail, 0, 8);
  close(fd);
  return bytes_kind(path, h, (size_t)got, tail, size);
}

int tide_file_kind(const char *path, const char **phrase) {
  int saved = errno;
  int k = kind_of(path);
  errno = saved;
  if (phrase) *phrase = k == TIDE_FILE_UNKNOWN ? NULL : PHRASES[k];
  return k;
}
