/* core/tensor_text.h — a tensor written as tf.print and tf.strings.format
 * show it; inside libtide only (graph/print.c, cpu/strings_format.c). */
#ifndef TIDE_CORE_TENSOR_TEXT_H
#define TIDE_CORE_TENSOR_TEXT_H

#include "tide/tensor.h"

#include <stdio.h>

/* Write t (with data on the host) to f: nested brackets, elements apart by
 * one space and rows by a newline, at most `summarize` values at each end
 * of a dimension with "..." between (summarize < 0: all); matrices of a
 * higher rank apart by a blank line. Floats as TF writes them (the shortest
 * of 6 or 9 digits, 15 or 17 for float64, that reads back), bools 1/0,
 * strings quoted. */
void tide_tensor_text(FILE *f, const tide_tensor *t, int64_t summarize);

#endif
