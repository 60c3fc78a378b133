/* cpu/indices.h — what the index-driven kernels (gather, scatter_add) share:
 * reading int32/int64 index tensors and TF's CPU check of each index's range. */
#ifndef TIDE_CPU_INDICES_H
#define TIDE_CPU_INDICES_H

#include "../core/registry.h"

/* Element k of a contiguous int32 or int64 tensor. */
static inline int64_t tide_index_at(const tide_tensor *t, int64_t k) {
  return t->dt == TIDE_INT32 ? ((const int32_t *)t->data)[k] : ((const int64_t *)t->data)[k];
}

/* Check the first n elements of the contiguous index tensor idx lie in
 * [0, size) (TF on CPU fails on one outside). The error names op, the bad
 * index's coordinates, and the tensor t indexed along `axis` (`what`: "params"). */
tide_status tide_check_indices(const char *op, const tide_tensor *idx, int64_t n, int64_t size, int axis,
                               const char *what, const tide_tensor *t);

#endif
