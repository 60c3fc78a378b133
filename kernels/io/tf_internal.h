/* io/tf_internal.h — what the TF SavedModel reader's files share: the model
 * (tf_saved_model.c), TensorProto values (tf_tensor.c), the graph and function
 * walker (tf_import.c) and the table of TF ops mapped onto tide's (tf_ops.c). */
#ifndef TIDE_IO_TF_INTERNAL_H
#define TIDE_IO_TF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "tide/tide.h"
#include "tide/tf_saved_model.h"
#include "../core/internal.h"
#include "tide_proto/function.pb-c.h"
#include "tide_proto/saved_model.pb-c.h"

/* A value while a graph is imported: a tensor (symbolic, or eager when TF's
 * graph makes it from constants alone, so shapes and axes are known at load
 * time), or the handle of variable `var`. */
typedef struct tf_val {
  tide_tensor t;
  int var;   /* >= 0: a resource handle (VarHandleOp, a resource argument); t is blank */
  bool set;
} tf_val;

/* The function library, sorted by name for lookups. */
typedef struct tf_library {
  Tensorflow__FunctionDefLibrary *lib;
  Tensorflow__FunctionDef **sorted;
  size_t n;
} tf_library;

/* What an import reads and builds into. */
typedef struct tf_import {
  const char *dir;           /* the SavedModel, for errors */
  const tf_library *lib;
  tide_graph *g;             /* the graph being built */
  tide_tensor *const *vars;  /* the model's variables, by index */
  int depth;                 /* function calls being inlined */
  /* the scan for unmapped ops: "Op (node 'name' in function 'f')" lines */
  bool scan;
  char *missing;
  size_t missing_len;
  int n_missing;
  const Tensorflow__FunctionDef **seen; /* functions scanned already */
  size_t n_seen, cap_seen;
} tf_import;

/* One node's mapping: given its inputs (n_in values), fill its outputs. */
typedef tide_status (*tf_op_fn)(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in,
                                int n_out, tf_val *out);
typedef struct tf_op {
  const char *name;  /* TF's op name: "MatMul" */
  tf_op_fn fn;       /* NULL: a function call, inlined by tf_import.c */
  int n_out;         /* outputs (-1: as many as its data inputs, or as a list attribute says: tf_op_num_outputs) */
  const char *outs;  /* its output args, space-separated ("y batch_mean ..."), for "node:arg:k" refs */
} tf_op;

/* The image ops' mappings (tf_ops_nn.c): Conv2D and DepthwiseConv2dNative, MaxPool and
 * AvgPool, FusedBatchNorm* in inference. */
tide_status tf_map_conv(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                        tf_val *out);
tide_status tf_map_pool(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                        tf_val *out);
tide_status tf_map_batch_norm(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                              tf_val *out);

/* Transformer encoders' ops (tf_ops_more.c): Einsum, OneHot, ResourceGather; and StridedSlice with bounds
 * computed at run time (masks as TF's attrs), which tf_ops.c's StridedSlice hands on. */
tide_status tf_map_einsum(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                          tf_val *out);
tide_status tf_map_one_hot(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                           tf_val *out);
tide_status tf_map_resource_gather(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in,
                                   int n_out, tf_val *out);
tide_status tf_map_strided_slice_dynamic(const Tensorflow__NodeDef *node, int n_in, tf_val *const *in,
                                         int64_t begin_mask, int64_t end_mask, int64_t shrink, tf_val *out);

/* Functional control flow (tf_ops_control.c): If/StatelessIf as a COND node, While/StatelessWhile as a WHILE
 * node; and the TensorList ops (tf_ops_list.c) as dense tensors [num_elements, element...]. */
tide_status tf_map_if(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                      tf_val *out);
tide_status tf_map_while(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                         tf_val *out);
tide_status tf_map_tensor_list(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                               tf_val *out);

/* Fill, ZerosLike/OnesLike, Range and Split (tf_ops_fill.c). */
tide_status tf_map_fill_ops(tf_import *im, const Tensorflow__NodeDef *node, int n_in, tf_val *const *in, int n_out,
                            tf_val *out);

/* tf_saved_model.c's slot for signature k's graph definition (NULL when k is out of range), and the slot of the
 * function that frees one, which tf_saved_model_def.c fills; the model's folder, for messages. */
tide_graph_def **tf_saved_model_def_slot(tide_tf_saved_model *m, int k, void (***free_def)(tide_graph_def *));
const char *tf_saved_model_dir(const tide_tf_saved_model *m);

/* The mapping of TF op `name`, or NULL when tide does not map it. */
const tf_op *tf_op_find(const char *name);
/* Node's output count for op (a list output counts what its attrs say). */
int tf_op_num_outputs(const tf_op *op, const Tensorflow__NodeDef *node);

/* Node attribute `key`, or NULL. */
const Tensorflow__AttrValue *tf_attr(const Tensorflow__NodeDef *node, const char *key);
/* The FunctionDef named `name` in lib, or NULL. */
const Tensorflow__FunctionDef *tf_library_find(const tf_library *lib, const char *name);

/* TF's TensorProto as a new eager tensor in the blank header `out`; errors
 * name `what` (the node). */
tide_status tf_tensor_from_proto(const Tensorflow__TensorProto *p, const char *what, tide_tensor *out);
/* tide's dtype for TF's DataType code, or -1. */
int tf_dtype_to_tide(int tf_dtype);
/* TF's name of a DataType code ("float32"). */
const char *tf_dtype_name(int tf_dtype);

/* Inline function f on the values `args` (one per input arg), giving its
 * outputs (one per output arg) in `outs`; or, when im->scan, note every op
 * of f (and of functions it calls) that tide does not map. */
tide_status tf_import_function(tf_import *im, const Tensorflow__FunctionDef *f, int n_args, tf_val *const *args,
                               int n_outs, tf_val *outs);
/* Evaluate the top-level graph's values named `refs` ("node:k"), with the
 * placeholders named in `feeds` (n_feeds names: "serving_default_x") bound
 * to `feed_vals`, and VarHandleOp nodes to variables through var_of (node
 * name -> variable index, -1 for none). outs: n_refs values. */
tide_status tf_import_graph(tf_import *im, const Tensorflow__GraphDef *gd, int n_feeds, const char *const *feeds,
                            tf_val *const *feed_vals, int (*var_of)(void *ctx, const char *node), void *var_ctx,
                            int n_refs, const char *const *refs, tf_val *outs);
/* Note an op tide does not map (the scan's list). */
tide_status tf_import_note_missing(tf_import *im, const char *op, const char *node, const char *where);

void tf_val_release(tf_val *v);
/* dst (released first) takes another reference to src's value. */
tide_status tf_val_copy(tf_val *dst, const tf_val *src);
/* For the op mappings (tf_ops.c, tf_ops_more.c): input k of a node as a tensor (a variable's handle is
 * refused), and element i (row-major) of a known tensor as a number. */
tide_status tf_tensor_in(tf_val *const *in, int n_in, int k, const tide_tensor **out);
double tf_number_at(const tide_tensor *t, int64_t i);
/* Input k's values, known when the model loads (else an error naming `what`): at most max integers into buf, n
 * gets how many. */
tide_status tf_known_ints(tf_val *const *in, int n_in, int k, const char *what, int64_t *buf, int max, int *n);
/* Sort lib's functions by name for tf_library_find (names checked unique). */
tide_status tf_library_index(tf_library *lib);
/* Whether v holds known values (an eager tensor: a constant of TF's graph). */
static inline bool tf_val_known(const tf_val *v) {
  return v->set && v->var < 0 && !(v->t.flags & TIDE_TENSOR_SYMBOLIC);
}

#endif
