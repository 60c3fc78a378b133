/* core/views.h — what the view ops share inside the engine: the plan of a
 * view (dims, strides, offset) of a tensor, SLICE's plan, and borrowed views. */
#ifndef TIDE_CORE_VIEWS_H
#define TIDE_CORE_VIEWS_H

#include "registry.h"

/* The view an op takes of a tensor: its dims and strides (elements) and the
 * offset of its first element from the tensor's (a slice drops shrunk dims). */
typedef struct tide_view_plan {
  int ndim;
  int64_t dims[TIDE_MAX_DIMS], strides[TIDE_MAX_DIMS];
  int64_t offset;
} tide_view_plan;

/* Plan SLICE's attributes (see ops.def) against x's dims and strides, Python's
 * rules per dim; errors name def's op. */
tide_status tide_plan_slice(const tide_op_def *def, const tide_attrs *a, const tide_tensor *x, tide_view_plan *p);
/* Make dst a borrowed header (no reference taken, not to be released) that
 * sees src's memory as plan p says; src must outlive it. */
void tide_view_borrow(tide_tensor *dst, const tide_tensor *src, const tide_view_plan *p);

#endif
