/* io/onnx_internal.h — what the ONNX reader's files share: the import state, the op
 * tables' row type and lookups (onnx_ops*.c), attributes and TensorProto values (onnx_tensor.c). */
#ifndef TIDE_IO_ONNX_INTERNAL_H
#define TIDE_IO_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "tide/tide.h"
#include "../core/internal.h"
#include "tide_proto/onnx.pb-c.h"

/* What an import builds into: the graph, the opset, and the file for errors. */
typedef struct onnx_import {
  const char *path;
  const char *dir;  /* its folder: external data lives there */
  tide_graph *g;
  int opset;
} onnx_import;

/* One node's mapping: its inputs (n_in, NULL where an optional input is left
 * out: an empty name) give its outputs (n_out blank headers to fill). Values
 * made from initializers and constants alone are eager tensors, so shapes,
 * axes and permutations computed from them are known when the model loads. */
typedef tide_status (*onnx_op_fn)(onnx_import *im, const Onnx__NodeProto *node, int n_in, const tide_tensor *const *in,
                                  int n_out, tide_tensor *out);
typedef struct onnx_op {
  const char *name; /* ONNX's op_type in the default domain: "Conv" */
  onnx_op_fn fn;
} onnx_op;

/* The mapping of ONNX op `name`, or NULL (each table file's lookup, then all). */
const onnx_op *onnx_op_find(const char *name);
const onnx_op *onnx_ops_shape_find(const char *name);
const onnx_op *onnx_ops_nn_find(const char *name);
const onnx_op *onnx_ops_more_find(const char *name);
const onnx_op *onnx_ops_resample_find(const char *name);
const onnx_op *onnx_ops_rnn_find(const char *name);

/* ---- Pad's modes past constant (onnx_ops_resample.c) ---- */
enum { ONNX_PAD_EDGE = 1, ONNX_PAD_REFLECT = 2, ONNX_PAD_WRAP = 3 };
/* x padded by before[d] and after[d] (>= 0) on each axis d, in mode ONNX_PAD_*: Gathers of index
 * lists made at load, so the padded axes' sizes must be known. */
tide_status onnx_pad_indexed(const tide_tensor *x, const int64_t *before, const int64_t *after, int mode, tide_tensor *out);

/* ---- attributes (onnx_tensor.c) ---- */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *key);
int64_t onnx_attr_i(const Onnx__NodeProto *n, const char *key, int64_t dflt);
double onnx_attr_f(const Onnx__NodeProto *n, const char *key, double dflt);
/* A string attribute compared with `want` (false when absent). */
bool onnx_attr_is(const Onnx__NodeProto *n, const char *key, const char *want);
/* A string attribute's bytes ("" and *len 0 when absent). */
const char *onnx_attr_s(const Onnx__NodeProto *n, const char *key, size_t *len);
/* An ints attribute: its count (-1 when absent); at most max copied to buf (more is an error). */
tide_status onnx_attr_ints(const Onnx__NodeProto *n, const char *key, int64_t *buf, int max, int *count);

/* ---- tensors (onnx_tensor.c) ---- */
/* tide's dtype for ONNX's TensorProto.DataType code, or -1; and ONNX's name of it. */
int onnx_dtype_to_tide(int onnx_dtype);
const char *onnx_dtype_name(int onnx_dtype);
/* ONNX's TensorProto as a new eager tensor in the blank header `out`; external
 * data is read from files in `dir` (the model's folder); errors name `what`. */
tide_status onnx_tensor_from_proto(const Onnx__TensorProto *p, const char *dir, const char *what, tide_tensor *out);

/* ---- helpers the op tables share (onnx_ops.c) ---- */
/* Whether t holds values known at load time (eager: not a graph value). */
static inline bool onnx_known(const tide_tensor *t) { return t && !(t->flags & TIDE_TENSOR_SYMBOLIC); }
/* Input k, which must be given. */
tide_status onnx_in(const Onnx__NodeProto *n, int n_in, const tide_tensor *const *in, int k, const tide_tensor **out);
/* Input k's integer values, known at load time: at most max of them. */
tide_status onnx_known_ints(const tide_tensor *t, const char *what, int64_t *buf, int max, int *n);
/* Element i (row-major) of eager tensor t, as a number. */
double onnx_number_at(const tide_tensor *t, int64_t i);
/* A new eager scalar (or 1-D of n values) of dtype dt. */
tide_status onnx_scalar(int dt, double v, tide_tensor *out);
tide_status onnx_ints_tensor(int dt, int n, const int64_t *v, tide_tensor *out);
/* One registry op with one output into the blank header out (through onnx_layout_run). */
tide_status onnx_run1(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out);
/* Binary op of two tensors, unary op of one; transpose by perm; reshape to dims (one -1 allowed). */
tide_status onnx_binary(int op, const tide_tensor *a, const tide_tensor *b, tide_tensor *out);
tide_status onnx_unary(int op, const tide_tensor *x, tide_tensor *out);
tide_status onnx_transpose(const tide_tensor *x, int n, const int64_t *perm, tide_tensor *out);
/* x[start:stop] along axis (the other axes whole), one slice op. */
tide_status onnx_slice_axis(const tide_tensor *x, int axis, int64_t start, int64_t stop, tide_tensor *out);
tide_status onnx_reshape(const tide_tensor *x, int n, const int64_t *dims, tide_tensor *out);
/* onnx_layout.c: true when op was recorded with the transposes of its inputs cancelled or
 * moved past it (a Transpose of a Transpose; an elementwise op on transposed values), *st
 * then saying how it went; false to record it as it is. */
bool onnx_layout_run(int op, const tide_attrs *a, int n, const tide_tensor *const *ins, tide_tensor *out,
                     tide_status *st);
/* A normalized axis of a rank-r tensor (negative counts from the end); -1 when out of range. */
int onnx_axis(int64_t axis, int r);

#endif
