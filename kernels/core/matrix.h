/* core/matrix.h — what tf.linalg's inference (core/infer_matrix.c) and CPU
 * kernels (cpu/linalg_*.c) share: the matrix checks and diagonal geometry. */
#ifndef TIDE_CORE_MATRIX_H
#define TIDE_CORE_MATRIX_H

#include "registry.h"

/* Check x (named `what` in the error) has rank >= 2, and square last dims
 * when `square` (unknown dims agree with any); the error names def's op. */
tide_status tide_check_matrix(const tide_op_def *def, const tide_tensor *x, const char *what, bool square);

/* The length of the longest of diagonals lo..hi of an m x n matrix (TF's
 * max_diag_len); -1 when m or n is unknown. */
int64_t tide_max_diag_len(int64_t m, int64_t n, int64_t lo, int64_t hi);

/* Where diagonal k's elements sit in its row of max_len (TF's align, m's
 * bits: 1 superdiagonals left-aligned, 2 subdiagonals left-aligned): its
 * length, and the offset of its first element. */
static inline void tide_diag_slot(int64_t k, int64_t max_len, int64_t m, int64_t n, int64_t align, int64_t *len,
                                  int64_t *offset) {
  bool left = (k >= 0 && (align & 1)) || (k <= 0 && (align & 2));
  int64_t a = m + (k < 0 ? k : 0), b = n - (k > 0 ? k : 0);
  *len = a < b ? a : b;
  *offset = left ? 0 : max_len - *len;
}

#endif
