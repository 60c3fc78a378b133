/* io/tensor_bundle_internal.h — what tensor_bundle.c (the index, whole
 * tensors) and tensor_bundle_slices.c (tensors saved in slices) share. */
#ifndef TIDE_IO_TENSOR_BUNDLE_INTERNAL_H
#define TIDE_IO_TENSOR_BUNDLE_INTERNAL_H

#include "tide/tensor_bundle.h"
#include "sstable.h"
#include "tide_proto/tensor_bundle.pb-c.h"

/* One entry of the index, checked. */
typedef struct bundle_entry {
  const char *key;      /* into the table's keys */
  size_t key_len;
  int32_t tf_dtype;     /* TF's DataType code */
  int32_t ndim;
  int64_t dims_at;      /* where its dims start in the bundle's dims */
  int64_t nelem;
  int32_t shard;
  uint64_t offset, size;
  uint32_t crc;         /* unmasked */
  Tensorflow__BundleEntryProto *proto; /* kept for its slices; NULL when it has none */
} bundle_entry;

struct tide_tensor_bundle {
  char *prefix;
  char *index_path;
  unsigned char *image;      /* the .index file */
  sstable table;
  int32_t num_shards;
  bundle_entry *all;         /* every entry but the header, in key order */
  int64_t n_all;
  int64_t *listed;           /* positions in `all` of the listed entries */
  int64_t count;
  int64_t *dims;             /* every entry's dims, one after another */
};

/* TF's element size of a fixed-size dtype, or 0 (strings, variants, ...). */
size_t tensor_bundle_tf_size(int32_t tf_dtype);
/* tide's dtype for TF's, or -1. */
int32_t tensor_bundle_tide_dtype(int32_t tf_dtype);
/* TF's name for a dtype ("float32", ...); "an unknown dtype" past the table. */
const char *tensor_bundle_tf_name(int32_t tf_dtype);
/* Read the whole (unsliced) entry e into the blank header `out`, its bytes
 * checked against its CRC. */
tide_status tensor_bundle_read_entry(tide_tensor_bundle *b, const bundle_entry *e, tide_tensor *out);
/* Check the slices of the sliced entry e (extents inside its shape) at open. */
tide_status tensor_bundle_check_slices(const tide_tensor_bundle *b, const bundle_entry *e);
/* Put the sliced entry e together from its slices into the blank header `out`. */
tide_status tensor_bundle_read_sliced(tide_tensor_bundle *b, const bundle_entry *e, tide_tensor *out);

#endif
