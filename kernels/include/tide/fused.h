/* tide/fused.h — a fused node as a backend-neutral description: the
 * registry ops of an elementwise group in order, their operands and outputs,
 * and the interface through which a backend runs descriptions its own way. */
#ifndef TIDE_FUSED_H
#define TIDE_FUSED_H

#ifdef __cplusplus
extern "C" {
#endif

/* The graph's fusion pass builds descriptions (kernels/graph/fuse.c); each
 * backend prepares and runs them: the CPU one as a register program
 * (kernels/cpu/fused.c), the CUDA one is to generate CUDA C from the same
 * description. A description holds no pointers: it can be copied, compared
 * and hashed as bytes (after a memset of the whole struct). Not part of
 * tide.h (nor of the Lua FFI): include it where descriptions are read. */

#include <string.h>

#include "tide/graph.h"

enum {
  TIDE_FUSED_MAX_STEPS = 48,   /* ops in one fused node */
  TIDE_FUSED_MAX_INPUTS = 16,  /* tensor inputs of one fused node */
  TIDE_FUSED_MAX_CONSTS = 16,  /* one-element constants written into it */
  TIDE_FUSED_MAX_OUTPUTS = 8,  /* values it gives (the last step's first) */
  TIDE_FUSED_MAX_ARGS = 3      /* operands of one step (where, clip_by_value) */
};

/* Where a step's operand comes from. */
enum {
  TIDE_FUSED_INPUT = 0,  /* index: the fused node's tensor input */
  TIDE_FUSED_CONST = 1,  /* index: one of the description's constants */
  TIDE_FUSED_STEP = 2    /* index: an earlier step's result */
};

typedef struct tide_fused_arg {
  int16_t src;    /* TIDE_FUSED_* */
  int16_t index;
} tide_fused_arg;

/* A one-element constant (a Lua number in a traced function): its dtype,
 * its rank (all dims 1: the rank still takes part in broadcasting) and its
 * value, exact in `f` for float dtypes and in `i` for integer and bool. */
typedef struct tide_fused_const {
  int32_t dt;
  int32_t ndim;
  double f;
  int64_t i;
} tide_fused_const;

/* One registry op. Elementwise ops read only these attributes: cast's
 * target dtype (it is `dt`), leaky_relu's alpha, gelu's approximate flag. */
typedef struct tide_fused_step {
  int32_t op;                 /* TIDE_OP_* (TIDE_OPF_ELEMENTWISE) */
  int32_t dt;                 /* dtype of the result */
  int32_t arg_dt;             /* dtype of its data operand (where: of x and y; cast: the source) */
  int32_t n_args;
  tide_fused_arg args[TIDE_FUSED_MAX_ARGS];
  uint32_t flags;             /* TIDE_ATTR_APPROXIMATE (gelu) */
  double alpha;               /* attrs.scalars[0] (leaky_relu) */
  int32_t tag;                /* the builder's name for the step (graph: its node), for messages */
} tide_fused_step;

/* The description. Every output has the iteration space's shape, the
 * broadcast of the inputs' shapes as the steps' own shape rules give it. */
typedef struct tide_fused {
  int32_t n_inputs, n_consts, n_steps, n_outputs;
  int32_t input_dt[TIDE_FUSED_MAX_INPUTS];
  tide_fused_const consts[TIDE_FUSED_MAX_CONSTS];
  tide_fused_step steps[TIDE_FUSED_MAX_STEPS];
  int32_t outputs[TIDE_FUSED_MAX_OUTPUTS];  /* the step each output is */
} tide_fused;

/* The attributes step s's op reads, in a zeroed `a` (for the registry's
 * inference and loops). */
static inline void tide_fused_step_attrs(const tide_fused_step *s, tide_attrs *a) {
  memset(a, 0, sizeof *a);
  a->dtype = s->dt;
  a->flags = s->flags;
  a->scalars[0] = s->alpha;
}

/* Hints a run may get. */
enum {
  /* No later node reads the results: they leave the graph, to be read (if
   * at all) much later, so a backend may write large ones past the caches. */
  TIDE_FUSED_RESULTS_LEAVE = 1
};

/* How a backend runs descriptions: the fused runner its table holds
 * (kernels/core/backend.h). A program is what prepare makes of a
 * description once (loops chosen, code compiled), in memory the caller
 * gives, `program_bytes` of it, 64-byte aligned: it holds no pointers to
 * memory of its own, so freeing that block frees it. */
typedef struct tide_fused_runner {
  const char *name;
  size_t (*program_bytes)(const tide_fused *f);
  /* Make f's program in `prog`; an error names what the backend cannot run. */
  tide_status (*prepare)(const tide_fused *f, void *prog);
  /* Run on the inputs (any strides; they broadcast to the outputs' shape)
   * into allocated outputs, with TIDE_FUSED_* hints. On failure, *failed is
   * the step that failed (-1 when none in particular), so the caller can
   * name where it came from. */
  tide_status (*run)(const tide_fused *f, const void *prog, const tide_tensor *const *in,
                     tide_tensor *const *out, unsigned hints, int *failed);
} tide_fused_runner;

/* The description of finalized graph g's k-th fused node (0-based, in node
 * order), or NULL when it has no such node. It lives as long as g. */
TIDE_API const tide_fused *tide_graph_fused(const tide_graph *g, int k);

#ifdef __cplusplus
}
#endif
#endif
