/* tide/ops.h — the op registry's public face: op codes, attributes, queries,
 * and the eager entry points that infer, allocate and compute in one call. */
#ifndef TIDE_OPS_H
#define TIDE_OPS_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"
#include "tide/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output dtype rules used by ops.def. */
typedef enum tide_out_rule {
  TIDE_OUT_SAME = 0, TIDE_OUT_BOOL, TIDE_OUT_TRUEDIV, TIDE_OUT_ATTR
} tide_out_rule;

/* Op flags used by ops.def. */
enum {
  TIDE_OPF_ELEMENTWISE = 1,   /* one output element per broadcast input position */
  TIDE_OPF_VIEW        = 2,   /* output 0 may share input 0's storage */
  TIDE_OPF_STATEFUL    = 4,   /* draws random numbers: never folded or merged */
  TIDE_OPF_NO_GRAD     = 8,   /* not differentiable */
  /* The op may take one input more than its row says, last: a 1-D int32 or
   * int64 tensor that gives the shape attrs.ints gives otherwise (TF's
   * shape-as-a-tensor forms: tf.fill, tf.reshape, tf.random.* of tf.shape(x)).
   * Its values are read where they exist (eagerly, at a graph's run, or from a
   * graph constant); while tracing a computed one they are not, so the result
   * has that many unknown (-1) dims and the graph infers it again when it runs. */
  TIDE_OPF_SHAPE_INPUT = 16,
  /* Some output dims depend on the input's values, not only on its shape
   * (where(cond), unique, segment_sum over sorted ids): inference leaves those
   * dims unknown (-1), also eagerly, and the kernel, given its outputs as
   * headers without data, sets their layouts and allocates them itself
   * (tide_tensor_init) once it has counted. In a graph such an op's outputs
   * are late (inferred at each run) and filled by the node, never planned. */
  TIDE_OPF_DATA_SHAPE  = 32,
  /* Runs for its effect (an assertion): in a graph kept in program order,
   * never folded, merged or dropped, as a stateful op, but draws nothing. */
  TIDE_OPF_EFFECT      = 64,
  /* A primitive: every backend must implement it (no composition of other
   * primitives gives its result); the other rows are fast paths, or host ops
   * (strings, codecs, effects). The rule is in ops.def's head comment;
   * tide_backend_missing_primitives lists what a backend lacks. */
  TIDE_OPF_PRIMITIVE   = 128
};

typedef enum tide_op {
#define TIDE_OP(id, name, nin, nout, dts, out, infer, cpu, flags) TIDE_OP_##id,
#include "tide/ops.def"
#undef TIDE_OP
  TIDE_NUM_OPS
} tide_op;

/* Boolean attributes (tide_attrs.flags); each op reads the ones its row names. */
enum {
  TIDE_ATTR_KEEPDIMS    = 1,
  TIDE_ATTR_TRANSPOSE_A = 2,
  TIDE_ATTR_TRANSPOSE_B = 4,
  TIDE_ATTR_EXCLUSIVE   = 8,
  TIDE_ATTR_REVERSE     = 16,
  TIDE_ATTR_DESCENDING  = 32,
  TIDE_ATTR_APPROXIMATE = 64,
  /* Random ops: the counters are reserved where the op runs (eagerly in
   * tide_op_run, or at each run of a graph), not by the caller: from the
   * global stream, or with OP_SEED from the stream of op seed rng_key
   * (tide_random_reserve_op). Without either, rng_key/rng_counter are used as given. */
  TIDE_ATTR_OP_SEED     = 128, /* rng_key holds the op's own seed */
  TIDE_ATTR_RNG_AT_RUN  = 256, /* draw from the global stream */
  /* Linear algebra (kernels/cpu/linalg_*.c). */
  TIDE_ATTR_ADJOINT       = 512,  /* use the matrix's adjoint (its transpose: tide has no complex dtypes) */
  TIDE_ATTR_LOWER         = 1024, /* the matrix is lower triangular (else upper) */
  TIDE_ATTR_FULL_MATRICES = 2048, /* qr, svd: the full square factors */
  TIDE_ATTR_VALUES_ONLY   = 4096  /* svd, eig, self_adjoint_eig: no vectors (their outputs are empty) */
};

enum { TIDE_MAX_INTS = 3 * TIDE_MAX_DIMS };

/* An op's attributes: a plain struct, so eager calls, graph nodes and saved
 * models carry them alike. Zero is every field's default. */
typedef struct tide_attrs {
  int64_t ints[TIDE_MAX_INTS];  /* a list: axes, perm, shape, multiples, pads, slice triples */
  int32_t nints;                /* entries used in ints; 0 = none given */
  int32_t axis;                 /* one axis (negative counts from the end) */
  int32_t dtype;                /* a target dtype (cast, creation, index outputs) */
  uint32_t flags;               /* TIDE_ATTR_* */
  int64_t n;                    /* a count or mask (k, depth, batch_dims, shrink mask) */
  int64_t m;                    /* a second count or mask (slice begin/end masks) */
  double scalars[4];            /* numbers: alpha, fill value, bounds, range */
  uint64_t rng_key;             /* Philox key of a random op */
  uint64_t rng_counter;         /* first Philox counter a random op uses */
} tide_attrs;

/* ---- queries -------------------------------------------------------------- */
TIDE_API const char *tide_op_name(int op);                  /* NULL if unknown */
TIDE_API int tide_op_lookup(const char *name);              /* -1 if unknown */
TIDE_API int tide_op_num_inputs(int op);                    /* -1 = variadic */
TIDE_API int tide_op_num_outputs(int op);                   /* -1 = one per input */
TIDE_API uint32_t tide_op_flags(int op);
TIDE_API uint32_t tide_op_dtypes(int op);                   /* TIDE_DTS_* mask */

/* ---- running ops eagerly ---------------------------------------------------- */

/* Infer output dtypes and shapes into the blank headers `out` (no data). */
TIDE_API tide_status tide_op_infer(int op, const tide_attrs *attrs,
                                   int n_in, const tide_tensor *const *in,
                                   int n_out, tide_tensor *const *out);
/* Run `op`: check and infer, allocate the blank headers `out`, compute.
 * On failure the outputs are left blank and an error names the op. */
TIDE_API tide_status tide_op_run(int op, const tide_attrs *attrs,
                                 int n_in, const tide_tensor *const *in,
                                 int n_out, tide_tensor *const *out);
/* The same for the hot path of one- and two-input ops with default attributes. */
TIDE_API tide_status tide_op_unary(int op, tide_tensor *out, const tide_tensor *x);
TIDE_API tide_status tide_op_binary(int op, tide_tensor *out, const tide_tensor *a,
                                    const tide_tensor *b);

#ifdef __cplusplus
}
#endif
#endif
