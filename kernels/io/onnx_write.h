/* io/onnx_write.h — what the ONNX writer's files share: the export state (an arena for
 * the messages, the nodes and initializers made so far, the names in use) and the op mappings. */
#ifndef TIDE_IO_ONNX_WRITE_H
#define TIDE_IO_ONNX_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "tide/tide.h"
#include "../core/internal.h"
#include "tide_proto/onnx.pb-c.h"

typedef struct ox_block ox_block;

/* An export in progress. Every message, string and array lives in the arena and
 * goes with it; an allocation that fails sets `oom`, after which the helpers make
 * nothing and give "" names (the caller checks ox_status). */
typedef struct onnx_export {
  int opset;
  ox_block *arena;
  bool oom;
  tide_status err;    /* the first error a helper met (its message is set), else 0 */
  Onnx__NodeProto **nodes;
  size_t n_nodes, cap_nodes;
  Onnx__TensorProto **inits;
  size_t n_inits, cap_inits;
  const char **names; /* every value name in use: an open-addressed set (NULL: empty) */
  size_t names_cap, names_used;
  unsigned counter;   /* for fresh names */
  const char *op;     /* the registry op being mapped, and where it was recorded (messages) */
  const char *origin;
} onnx_export;

void *ox_alloc(onnx_export *x, size_t n);
void ox_arena_free(onnx_export *x);
char *ox_strdup(onnx_export *x, const char *s);
/* The first error met (out of memory, or one a helper set with ox_fail), else TIDE_OK.
 * Helpers that give names give "" after an error, so mappings check once at their end. */
tide_status ox_status(onnx_export *x);
/* Note a name as taken; false when it already was. */
bool ox_take_name(onnx_export *x, const char *name);
/* A fresh value name "<hint>_<k>" no other value has. */
const char *ox_fresh(onnx_export *x, const char *hint);

/* A node of the default domain, appended: n_in inputs ("" for one left out) giving
 * n_out outputs by name; attributes are added to it after. NULL when out of memory. */
Onnx__NodeProto *ox_node(onnx_export *x, const char *op_type, int n_in, const char *const *in, int n_out,
                         const char *const *out);
void ox_attr_i(onnx_export *x, Onnx__NodeProto *n, const char *key, int64_t v);
void ox_attr_f(onnx_export *x, Onnx__NodeProto *n, const char *key, float v);
void ox_attr_s(onnx_export *x, Onnx__NodeProto *n, const char *key, const char *v);
void ox_attr_ints(onnx_export *x, Onnx__NodeProto *n, const char *key, int count, const int64_t *v);
/* A tensor attribute: a one-element tensor of tide dtype dt holding v (ConstantOfShape's value). */
void ox_attr_scalar(onnx_export *x, Onnx__NodeProto *n, const char *key, int dt, double v);

/* One-output nodes whose output gets a fresh name (returned), or the given `out`. */
const char *ox_op1(onnx_export *x, const char *op_type, const char *a, const char *out);
const char *ox_op2(onnx_export *x, const char *op_type, const char *a, const char *b, const char *out);

/* Initializers. ox_init_tensor: tensor t's values (copied, any layout) under `name`
 * (NULL: a fresh one); the others make fresh names. */
const char *ox_init_tensor(onnx_export *x, const tide_tensor *t, const char *name);
/* A 1-D int64 tensor of n values (axes, shapes, pads). */
const char *ox_init_ints(onnx_export *x, int n, const int64_t *v);
/* A 1-D float32 tensor of n values (Resize's scales). */
const char *ox_init_floats(onnx_export *x, int n, const float *v);
/* A scalar (rank 0) of tide dtype dt holding v. */
const char *ox_init_scalar(onnx_export *x, int dt, double v);
/* The same with rank ndim, every dim 1 (a fused group's constant: its rank broadcasts). */
const char *ox_init_number(onnx_export *x, int dt, int ndim, double v);
/* ONNX's TensorProto.DataType for tide dtype dt, or 0 when there is none. */
int ox_dtype(int dt);

/* ---- op mappings (onnx_write_ops.c, onnx_write_nn.c) ---- */

/* A registry op as the writer sees it: its attributes, inputs and outputs by ONNX
 * value name, and their descriptors (dtype, rank and dims; -1 where unknown). */
typedef struct ox_call {
  int op;
  const tide_attrs *a;
  int n_in, n_out;
  const char *const *in;
  const tide_tensor *const *din;
  const char *const *out;
  const tide_tensor *const *dout;
} ox_call;

/* Emits nodes that give c->out from c->in; an error names the op and what it cannot map. */
typedef tide_status (*ox_map_fn)(onnx_export *x, const ox_call *c);

/* The mapping of registry op `op` at x's opset, or NULL when there is none. */
ox_map_fn ox_mapping(const onnx_export *x, int op);
ox_map_fn ox_nn_mapping(const onnx_export *x, int op);
/* An error of the op being mapped: "onnx.export: <op> (recorded at <origin>): <what>"; the
 * first one sticks (ox_status). */
tide_status ox_fail(onnx_export *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
