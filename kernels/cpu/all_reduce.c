/* cpu/all_reduce.c — all_reduce_sum: each input summed over every process of
 * tide.distribute's world (kernels/core/dist.c packs them into buckets). */
#include "../core/registry.h"
#include "tide/dist.h"

tide_status tide_cpu_all_reduce_sum(const tide_op_def *def, const tide_attrs *a, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  TIDE_UNUSED(def), TIDE_UNUSED(n_out);
  tide_status st = tide_dist_init(); /* once; a graph loaded from C may run it first */
  if (st) return st;
  return tide_dist_all_reduce_sum_packed(n_in, in, out, a->n);
}
