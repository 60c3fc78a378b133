/* core/infer_rank.h — what the families' unknown-rank rules (tide_rank_rule,
 * registry.h) are written with: common stand-in ranks and shared checks. */
#ifndef TIDE_CORE_INFER_RANK_H
#define TIDE_CORE_INFER_RANK_H

#include "registry.h"

/* True when t's rank is unknown. */
static inline bool tide_rank_unknown(const tide_tensor *t) { return t->ndim < 0; }
/* At most the top rank: attributes longer than any rank then fail in the op's own inference against it. */
static inline int tide_rank_capped(int r) { return r < TIDE_MAX_DIMS ? r : TIDE_MAX_DIMS; }

/* Stand-in ranks many families share: a scalar (it broadcasts with
 * anything, or the output's shape does not depend on it), and the top rank
 * (one axis: any valid one is valid at the top rank). */
int tide_rank_scalar(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i);
int tide_rank_top(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i);
/* A keeps_shape for families whose result shape the stand-ins always get right. */
bool tide_rank_keeps(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in);

/* Give out dtype dt and an unknown rank. */
void tide_rank_set_unknown(tide_tensor *out, int dt);
/* Make *s a descriptor like x (dtype, symbolic flag, device) of rank r (at
 * most TIDE_MAX_DIMS) with every dim unknown. */
void tide_rank_stand_in(const tide_tensor *x, int r, tide_tensor *s);
/* out: x's shape when x's rank is known, else an unknown rank; dtype x's. */
void tide_rank_shape_of_first(const tide_tensor *x, tide_tensor *out);
/* An index input's dtype check, as the index families word it. */
tide_status tide_rank_check_index(const tide_op_def *def, const tide_tensor *t, const char *what);
/* Check that `b` (named wb) has a's dtype (named wa), as the scatter families word it. */
tide_status tide_rank_check_like(const tide_op_def *def, const tide_tensor *b, const char *wb, const tide_tensor *a,
                                 const char *wa);

/* Written rules two families share: gather's (infer_shape.c: params'
 * dtype and the indices' checked, an unknown rank), which gather_nd uses,
 * and scatter_add's (infer_scatter.c: base's shape), which the
 * tensor_scatter_nd ops use. */
tide_status tide_gather_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out);
tide_status tide_scatter_unknown_rank(const tide_op_def *def, const tide_attrs *a, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out);

#endif
