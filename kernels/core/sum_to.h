/* core/sum_to.h — what sum_to's inference and CPU kernel share: the dims of x
 * that summing to a target shape reduces. */
#ifndef TIDE_CORE_SUM_TO_H
#define TIDE_CORE_SUM_TO_H

#include "registry.h"

/* axes[d] (d < x->ndim) = whether sum_to(x, target->ints) sums over x's dim d:
 * the leading dims the target lacks (but size-1 ones) and the dims where the
 * target is 1 and x is not. An unknown (-1) target dim sums nothing here: it
 * is decided when the values are known. Errors (naming def's op) when the
 * target is longer than x or does not broadcast to it. */
tide_status tide_sum_to_axes(const tide_op_def *def, const tide_tensor *x, const tide_attrs *target, bool *axes);

#endif
