/* core/registry.h — the op table's internal side: the row struct, the
 * signatures of shape inference and kernels, and every family's functions. */
#ifndef TIDE_CORE_REGISTRY_H
#define TIDE_CORE_REGISTRY_H

#include "internal.h"

typedef struct tide_op_def tide_op_def;

/* Infer output dtypes and shapes into blank headers (no data). */
typedef tide_status (*tide_infer_fn)(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out);
/* Compute. Non-view ops get outputs already allocated by the caller; view ops
 * build their outputs themselves. */
typedef tide_status (*tide_kernel_fn)(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out);

/* How a family infers when inputs have an unknown rank (TIDE_UNKNOWN_RANK, a
 * traced TensorSpec(nil)): its rule sits beside its inference (infer_*.c),
 * named after it (tide_infer_X_rank), and core/infer_rank.c runs it. Each
 * input of unknown rank gets a stand-in of the rank `stand_in` says, with
 * every dim unknown, and the family's own inference runs on those, giving
 * its dtype checks, messages and output dtypes; outputs keep the shape it
 * gives when `keeps_shape` says that holds whatever the real rank is, else
 * get an unknown rank. core/infer_rank.h has the helpers rules use. */
typedef struct tide_rank_rule {
  /* The stand-in's rank for input i (of unknown rank), or -1: none fits
   * (then `written`). NULL: none for any input. A shape input
   * (TIDE_OPF_SHAPE_INPUT) is a vector whatever the rule says. */
  int (*stand_in)(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in, int i);
  /* True when the stand-ins' output shapes hold for any real rank; NULL: never. */
  bool (*keeps_shape)(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in);
  /* The rule written out, for calls no stand-in fits; NULL: the generic
   * one (the dtype rule on the first input, outputs of unknown rank). */
  tide_infer_fn written;
} tide_rank_rule;

struct tide_op_def {
  int id;
  const char *name;
  int n_in, n_out;
  uint32_t dtypes;      /* TIDE_DTS_* the data inputs accept */
  int out_rule;         /* tide_out_rule */
  tide_infer_fn infer;
  const tide_rank_rule *rank; /* infer's rule for inputs of unknown rank */
  uint32_t flags;       /* TIDE_OPF_* */
};

extern const tide_op_def tide_op_defs[TIDE_NUM_OPS];

/* Every family's inference and CPU kernel, declared from the table: the
 * kernels are the CPU backend's (core/backend_cpu.c), which is the designed
 * exception to "core knows no backend code"; others pick them through it. */
#define TIDE_OP(id, name, nin, nout, dts, out, infer, cpu, flags) \
  tide_status infer(const tide_op_def *, const tide_attrs *, int, const tide_tensor *const *, int, \
                    tide_tensor *const *);                                                          \
  extern const tide_rank_rule infer##_rank;                                                         \
  tide_status cpu(const tide_op_def *, const tide_attrs *, int, const tide_tensor *const *, int,   \
                  tide_tensor *const *);
#include "tide/ops.def"
#undef TIDE_OP

/* Inference for inputs of which some have an unknown rank (core/infer_rank.c):
 * def's family's rule (def->rank), giving outputs of unknown rank where nothing better holds. */
tide_status tide_infer_unknown_rank(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                    const tide_tensor *const *in, int n_out, tide_tensor *const *out);

/* Infer def's outputs into blank headers: its own inference, or the rules for
 * inputs of unknown rank (TIDE_UNKNOWN_RANK, only in traced graphs). Every
 * caller of shape inference (eager calls, the recorder, the executor's plans)
 * goes through this, so no op's own inference ever sees an unknown rank. */
static inline tide_status tide_infer(const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                     const tide_tensor *const *in, int n_out, tide_tensor *const *out) {
  for (int i = 0; i < n_in; i++)
    if (TIDE_UNLIKELY(in[i]->ndim < 0)) return tide_infer_unknown_rank(def, attrs, n_in, in, n_out, out);
  return def->infer(def, attrs, n_in, in, n_out, out);
}

/* Check `t` has a dtype the op accepts; the error names the op and suggests :cast. */
tide_status tide_check_dtype(const tide_op_def *def, const tide_tensor *t, const char *what);
/* Check a and b (named wa, wb in the error) share a dtype; the error suggests :cast. */
tide_status tide_check_same_dtype(const tide_op_def *def, const tide_tensor *a, const tide_tensor *b, const char *wa,
                                  const char *wb);
/* The output dtype the op's rule gives for data input dtype `dt`. */
int tide_out_dtype(const tide_op_def *def, const tide_attrs *attrs, int dt);
/* Broadcast shapes a and b (numpy rules) into out; error names the op. */
tide_status tide_broadcast_dims(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                                int *nout, int64_t *out);
/* Mark in mask[0..ndim) the axes attrs.ints[0..nints) name (nints 0 = all);
 * negative axes count from the end; out-of-range or repeated axes fail. */
tide_status tide_reduce_axes(const tide_op_def *def, const tide_attrs *attrs, int ndim, bool *mask);

/* ---- the recorder hook ------------------------------------------------------
 * A call goes to a recorder instead of running when an input is symbolic, or
 * when the op is stateful (random: it must draw anew at each run of what is
 * being recorded) and this thread has a recorder set. The layer above sets
 * one while it traces (kernels/graph), as Torch7's THSetErrorHandler lets the
 * layer above TH take TH's errors: the registry knows nothing of graphs. */
typedef tide_status (*tide_record_fn)(void *ctx, const tide_op_def *def, const tide_attrs *attrs, int n_in,
                                      const tide_tensor *const *in, int n_out, tide_tensor *const *out);
typedef struct tide_recorder {
  tide_record_fn record; /* NULL: none */
  void *ctx;             /* passed back to record */
} tide_recorder;

/* This thread's recorder ({NULL, NULL} when none is set). */
tide_recorder tide_get_recorder(void);
/* Make r this thread's recorder; returns the one it replaces, which the caller
 * restores when it stops recording (so nested recorders unwind in order). */
tide_recorder tide_set_recorder(tide_recorder r);
/* The recorder that gets a symbolic input on a thread with none set (a
 * symbolic tensor used past its trace): it says so, naming where the tensor
 * was made. Process-wide; without one, the registry gives its own error. */
void tide_set_default_recorder(tide_recorder r);

/* For an op flagged TIDE_OPF_SHAPE_INPUT (core/shape_input.c): *use is `a`,
 * or, when the op got its shape input, a copy in `buf` whose ints are the
 * shape tensor's values; *unknown says they are not known yet (tracing a
 * computed shape): then ints are -1, or what `a`'s ints say of them when `a`
 * gives as many (a traced x's dims for tide.shape(x)), and the op's result
 * has those dims; when the shape tensor's length is unknown too, nints is -1
 * and the result has an unknown rank. A run whose values differ from such
 * known ints fails. */
tide_status tide_shape_input(const tide_op_def *def, const tide_attrs *a, int n_in, const tide_tensor *const *in,
                             tide_attrs *buf, const tide_attrs **use, bool *unknown);
/* Give `out` dtype dt and the dims of use->ints (-1: unknown), as tide_shape_input
 * left them; an unknown rank when use->nints < 0. */
void tide_shape_input_unknown(tide_tensor *out, int dt, const tide_attrs *use);

/* A default (all-zero) attrs, for ops called without attributes. */
extern const tide_attrs tide_default_attrs;

#endif
