/* core/registry.c — the op table built from tide/ops.def, name lookup, the
 * eager entry points (check inputs, infer, allocate outputs, run the CPU
 * backend's kernel) and the recorder hook that tracing sets. */
#include "registry.h"
#include "backend.h"
#include "unknown_dims.h"

#include <stdio.h>
#include <string.h>

/* The rows; their kernels are in the backends' tables (core/backend.h), and
 * each row's unknown-rank rule is its inference's, tide_infer_X_rank, which
 * the family defines beside it (a link error names a missing one). */
const tide_op_def tide_op_defs[TIDE_NUM_OPS] = {
#define TIDE_OP(id, name, nin, nout, dts, out, infer, cpu, flags) \
  {TIDE_OP_##id, name, nin, nout, (uint32_t)(dts), out, infer, &infer##_rank, (uint32_t)(flags)},
#include "tide/ops.def"
#undef TIDE_OP
};

const tide_attrs tide_default_attrs;

static const tide_op_def *def_of(int op) { return op >= 0 && op < TIDE_NUM_OPS ? &tide_op_defs[op] : NULL; }

const char *tide_op_name(int op) { return def_of(op) ? tide_op_defs[op].name : NULL; }

int tide_op_lookup(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TIDE_NUM_OPS; i++)
    if (strcmp(tide_op_defs[i].name, name) == 0) return i;
  return -1;
}

int tide_op_num_inputs(int op) { return def_of(op) ? tide_op_defs[op].n_in : 0; }
int tide_op_num_outputs(int op) { return def_of(op) ? tide_op_defs[op].n_out : 0; }
uint32_t tide_op_flags(int op) { return def_of(op) ? tide_op_defs[op].flags : 0; }
uint32_t tide_op_dtypes(int op) { return def_of(op) ? tide_op_defs[op].dtypes : 0; }

/* Words for a TIDE_DTS_* set, for dtype errors. */
static const char *dtype_set_name(uint32_t mask) {
  if (mask == TIDE_DTS_FLOAT) return "a float tensor (float32, float64, float16 or bfloat16)";
  if (mask == TIDE_DTS_NUMERIC) return "a numeric tensor (not bool)";
  if (mask == TIDE_DTS_INT) return "an integer tensor";
  if (mask == TIDE_DTS_BOOL) return "a bool tensor";
  if (mask == TIDE_DTS_F32_F64) return "a float32 or float64 tensor"; /* LAPACK's, and special functions' */
  if (mask == TIDE_DTS_F16_F32_F64) return "a float16, float32 or float64 tensor";
  return "a tensor of another dtype";
}

tide_status tide_check_dtype(const tide_op_def *def, const tide_tensor *t, const char *what) {
  if (t->dt < 0 || t->dt >= TIDE_NUM_DTYPES)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s has an invalid dtype code %d", def->name, what, t->dt);
  if (def->dtypes & (1u << t->dt)) return TIDE_OK;
  const char *hint = def->dtypes == TIDE_DTS_FLOAT || def->dtypes == TIDE_DTS_F32_F64 ||
                             def->dtypes == TIDE_DTS_F16_F32_F64
                         ? " (use :cast(\"float32\"))"
                     : def->dtypes == TIDE_DTS_BOOL ? " (compare, or use :cast(\"bool\"))" : "";
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: %s must be %s, got %s%s", def->name, what,
                   dtype_set_name(def->dtypes), tide_dtype_name(t->dt), hint);
}

tide_status tide_check_same_dtype(const tide_op_def *def, const tide_tensor *a, const tide_tensor *b, const char *wa,
                                  const char *wb) {
  if (a->dt == b->dt) return TIDE_OK;
  return TIDE_FAIL(TIDE_ERR_DTYPE,
                   "%s: dtype mismatch: %s is %s but %s is %s (convert one with :cast, e.g. %s:cast(\"%s\"))",
                   def->name, wa, tide_dtype_name(a->dt), wb, tide_dtype_name(b->dt), wb, tide_dtype_name(a->dt));
}

int tide_out_dtype(const tide_op_def *def, const tide_attrs *attrs, int dt) {
  switch (def->out_rule) {
  case TIDE_OUT_BOOL: return TIDE_BOOL;
  case TIDE_OUT_ATTR: return attrs->dtype;
  case TIDE_OUT_TRUEDIV: /* TF: small ints become float32, int32/int64 float64 */
    if (dt == TIDE_INT8 || dt == TIDE_UINT8) return TIDE_FLOAT32;
    if (dt == TIDE_INT32 || dt == TIDE_INT64) return TIDE_FLOAT64;
    return dt;
  default: return dt;
  }
}

tide_status tide_broadcast_dims(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                                int *nout, int64_t *out) {
  int n = na > nb ? na : nb;
  int64_t res[TIDE_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == db || db == 1) res[i] = da;
    else if (da == 1) res[i] = db;
    /* An unknown (-1) dim, as TF's shape functions: with n > 1 it must be n or
     * 1, so the result is n (the graph's run checks it); with 0 it is unknown. */
    else if (da < 0 || db < 0) res[i] = da > 1 ? da : db > 1 ? db : -1;
    else {
      char sa[128], sb[128];
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: incompatible shapes %s and %s (dimension %d: %lld vs %lld)", op,
                       tide_fmt_dims(sa, sizeof sa, na, a), tide_fmt_dims(sb, sizeof sb, nb, b), i,
                       (long long)da, (long long)db);
    }
  }
  for (int i = 0; i < n; i++) out[i] = res[i];
  *nout = n;
  return TIDE_OK;
}

/* The error for a string input to an op that takes none (numeric ops). */
static __attribute__((noinline, cold)) tide_status refuse_string(const tide_op_def *def, int i) {
  if (def->id == TIDE_OP_CAST)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "cast: cannot cast a string tensor (use tide.strings.to_number to parse "
                     "numbers, tide.strings.as_string for the other way)");
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: input %d is a string tensor; %s takes %s (strings work with shape ops, "
                   "equal/not_equal and tide.strings)", def->name, i + 1, def->name, dtype_set_name(def->dtypes));
}

/* The error for an op asked for a string result it cannot make (cast, eye, ...). */
static __attribute__((noinline, cold)) tide_status refuse_string_result(const tide_op_def *def) {
  if (def->id == TIDE_OP_CAST)
    return TIDE_FAIL(TIDE_ERR_DTYPE, "cast: cannot cast to string (use tide.strings.as_string)");
  return TIDE_FAIL(TIDE_ERR_DTYPE, "%s: cannot make a string tensor", def->name);
}

/* The checks every call shares: a known op, its arity, real tensors,
 * and an attribute list no op can read past. Inlined into both callers: the
 * eager path is measured in instructions (GCC stops inlining it on its own
 * once tide_op_infer grows). */
static inline __attribute__((always_inline)) tide_status check_call(const tide_op_def *def, int op,
                                                                    const tide_attrs *attrs, int n_in,
                                                                    const tide_tensor *const *in, int n_out,
                                                                    tide_tensor *const *out) {
  if (!def) return TIDE_FAIL(TIDE_ERR_VALUE, "unknown op code %d", op);
  if (attrs->nints < 0 || attrs->nints > TIDE_MAX_INTS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: attrs.nints is %d (valid: 0 to %d)", def->name, attrs->nints,
                     TIDE_MAX_INTS);
  if (def->n_in >= 0 && n_in != def->n_in && !((def->flags & TIDE_OPF_SHAPE_INPUT) && n_in == def->n_in + 1))
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects %d input(s), got %d", def->name, def->n_in, n_in);
  if (def->n_in < 0 && n_in < 1)
    return TIDE_FAIL(TIDE_ERR_VALUE, "%s: expects at least one input", def->name);
  if (TIDE_UNLIKELY(n_out != def->n_out) && !(def->n_out < 0 && n_out == n_in)) /* -1: one per input */
    return def->n_out < 0 ? TIDE_FAIL(TIDE_ERR_VALUE, "%s: has one output per input (%d), got %d", def->name, n_in, n_out)
                          : TIDE_FAIL(TIDE_ERR_VALUE, "%s: has %d output(s), got %d", def->name, def->n_out, n_out);
  for (int i = 0; i < n_in; i++) {
    if (!in[i]) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d is NULL", def->name, i + 1);
    if (!in[i]->data && in[i]->nelem > 0 && !(in[i]->flags & TIDE_TENSOR_SYMBOLIC))
      return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d has no data (released?)", def->name, i + 1);
    if (TIDE_UNLIKELY(in[i]->dt == TIDE_STRING) && !(def->dtypes & TIDE_DTS_STRING)) return refuse_string(def, i);
  }
  for (int i = 0; i < n_out; i++)
    if (!out[i]) return TIDE_FAIL(TIDE_ERR_VALUE, "%s: output %d is NULL", def->name, i + 1);
  return TIDE_OK;
}

/* The error for an output whose nelem is negative: a size that overflowed, or
 * unknown (-1) dims, which only shape inference for a traced graph (`unknown`
 * true) accepts: a run never has them. Kept out of line: the eager path never comes here. */
static __attribute__((noinline, cold)) tide_status check_size(const tide_op_def *def, const tide_tensor *o,
                                                                bool unknown) {
  int64_t n = o->nelem;
  if (n >= 0 && ((def->flags & TIDE_OPF_VIEW) || (uint64_t)n <= (uint64_t)INT64_MAX / tide_dtype_size_unchecked(o->dt)))
    return TIDE_OK;
  bool has_unknown = tide_dims_any_unknown(o->ndim, o->dims); /* a dim, or the rank */
  if (has_unknown && unknown) return TIDE_OK;
  char s[160];
  if (has_unknown)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result shape %s has unknown (-1) dimensions: an input is a "
                     "shape descriptor, not a tensor with data", def->name, TIDE_SHAPE_STR(s, o));
  return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: the result shape %s has too many elements", def->name, TIDE_SHAPE_STR(s, o));
}

/* Reject inferred outputs whose element count (or, for ops that allocate,
 * byte count) overflowed: every infer sets its layout with
 * tide_tensor_set_contiguous_layout, which gives nelem -1 on overflow, and
 * also when a dim or the rank is unknown, which check_size accepts when `unknown`. */
static inline tide_status check_outputs(const tide_op_def *def, int n_out, tide_tensor *const *out, bool unknown) {
  for (int i = 0; i < n_out; i++) {
    int64_t n = out[i]->nelem;
    if (TIDE_UNLIKELY(out[i]->dt == TIDE_STRING) && !(def->dtypes & TIDE_DTS_STRING)) return refuse_string_result(def);
    if (TIDE_LIKELY(n >= 0 && n <= (INT64_MAX >> 3))) continue;
    tide_status st = check_size(def, out[i], unknown);
    if (st) return st;
  }
  return TIDE_OK;
}

/* Descriptors may have unknown dims and ranks (a traced graph's): tide_infer. */
tide_status tide_op_infer(int op, const tide_attrs *attrs, int n_in, const tide_tensor *const *in, int n_out,
                          tide_tensor *const *out) {
  const tide_op_def *def = def_of(op);
  if (!attrs) attrs = &tide_default_attrs;
  tide_status st = check_call(def, op, attrs, n_in, in, n_out, out);
  if (!st) st = tide_infer(def, attrs, n_in, in, n_out, out);
  return st ? st : check_outputs(def, n_out, out, true);
}

/* Release the first n_out outputs and leave them blank (a failed op returns nothing). */
static void blank_outputs(int n_out, tide_tensor *const *out) {
  for (int i = 0; i < n_out; i++) {
    tide_tensor_release(out[i]);
    out[i]->ndim = 0;
  }
}

/* ---- the recorder hook (contract in registry.h) ---- */

static _Thread_local tide_recorder thread_recorder;
static tide_recorder default_recorder;

tide_recorder tide_get_recorder(void) { return thread_recorder; }

tide_recorder tide_set_recorder(tide_recorder r) {
  tide_recorder outer = thread_recorder;
  thread_recorder = r;
  return outer;
}

void tide_set_default_recorder(tide_recorder r) {
  __atomic_store_n(&default_recorder.ctx, r.ctx, __ATOMIC_RELAXED);
  __atomic_store_n(&default_recorder.record, r.record, __ATOMIC_RELEASE);
}

/* True when the call belongs to a recorder: a symbolic input, or a stateful
 * op while this thread records. The flag comes first, so that an eager call
 * of a stateless op reads no thread-local at all. A header of unknown rank
 * that is not symbolic (corrupt: only traces make them) goes the same cold
 * way, where record_call refuses it: so the eager path's inference (the op's
 * own, called directly) never sees an unknown rank, for one comparison per input.
 * An input on a GPU goes the same cold way too (record_call hands it to
 * core/device.c), so the CPU path pays one more comparison per input. */
_Static_assert(TIDE_CPU == 0, "wants_recorder reads a nonzero dev as a GPU");
static bool wants_recorder(const tide_op_def *def, int n_in, const tide_tensor *const *in) {
  for (int i = 0; i < n_in; i++)
    if ((in[i]->flags & TIDE_TENSOR_SYMBOLIC) | (in[i]->ndim < 0) | (uint32_t)in[i]->dev) return true; /* TIDE_CPU is 0 */
  return (def->flags & (TIDE_OPF_STATEFUL | TIDE_OPF_EFFECT)) && thread_recorder.record;
}

/* Hand the call to this thread's recorder, or to the default one for a
 * symbolic input on a thread that records nothing; an eager call with an
 * input on a GPU goes to core/device.c. */
static __attribute__((noinline, cold)) tide_status record_call(const tide_op_def *def, const tide_attrs *attrs,
                                                               int n_in, const tide_tensor *const *in, int n_out,
                                                               tide_tensor *const *out) {
  bool symbolic = false;
  int dev = TIDE_CPU;
  for (int i = 0; i < n_in; i++) {
    if (!(in[i]->flags & TIDE_TENSOR_SYMBOLIC) && in[i]->ndim < 0)
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input %d has an unknown rank (<unknown>) but is not a traced tensor: "
                       "only a traced graph's symbolic tensors have one", def->name, i + 1);
    symbolic |= (in[i]->flags & TIDE_TENSOR_SYMBOLIC) != 0;
    if (dev == TIDE_CPU) dev = in[i]->dev;
  }
  if (!symbolic && dev != TIDE_CPU && !((def->flags & TIDE_OPF_STATEFUL) && thread_recorder.record))
    return tide_device_op_run(dev, def, attrs, n_in, in, n_out, out);
  tide_recorder r = thread_recorder;
  if (!r.record) {
    r.record = __atomic_load_n(&default_recorder.record, __ATOMIC_ACQUIRE);
    r.ctx = __atomic_load_n(&default_recorder.ctx, __ATOMIC_RELAXED);
  }
  if (r.record) return r.record(r.ctx, def, attrs, n_in, in, n_out, out);
  int i = 0;
  while (i < n_in && !(in[i]->flags & TIDE_TENSOR_SYMBOLIC)) i++;
  return TIDE_FAIL(TIDE_ERR_VALUE, "%s: input %d is a symbolic tensor of a traced function, used outside its trace "
                   "(no trace has been made in this process)", def->name, i + 1);
}

/* An eager op whose inputs passed check_call: infer, allocate, compute. */
static inline __attribute__((always_inline)) tide_status run_eager(const tide_op_def *def, int op,
                                                                   const tide_attrs *attrs, int n_in,
                                                                   const tide_tensor *const *in, int n_out,
                                                                   tide_tensor *const *out) {
  tide_status st;
  /* A TIDE_OPF_DATA_SHAPE op infers unknown (-1) dims for what it counts
   * from the data, and its kernel allocates its outputs; its inputs must be
   * real (-1 dims in a header not made by a trace are refused, as check_size
   * refuses them in another op's result). */
  bool sized_by_kernel = (def->flags & TIDE_OPF_DATA_SHAPE) != 0;
  for (int i = 0; sized_by_kernel && i < n_in; i++)
    if (tide_dims_any_unknown(in[i]->ndim, in[i]->dims))
      return TIDE_FAIL(TIDE_ERR_SHAPE, "%s: input %d has unknown (-1) dimensions: it is a shape descriptor, not a "
                       "tensor with data", def->name, i + 1);
  st = def->infer(def, attrs, n_in, in, n_out, out); /* eager inputs: ranks known (wants_recorder) */
  if (!st) st = check_outputs(def, n_out, out, sized_by_kernel);
  if (st) return st;
  if (!(def->flags & (TIDE_OPF_VIEW | TIDE_OPF_DATA_SHAPE))) {
    for (int i = 0; i < n_out; i++) {
      st = tide_tensor_alloc_data(out[i]); /* infer set a contiguous layout */
      if (st) {
        blank_outputs(i, out);
        char s[160];
        if (strncmp(tide_last_error(), "memory limit", 12) == 0) { /* a capped host's (tide/memory.h) */
          char cause[256];
          snprintf(cause, sizeof cause, "%s", tide_last_error());
          return TIDE_FAIL(st, "%s: the result of shape %s (%s) is past the %s", def->name, TIDE_SHAPE_STR(s, out[i]),
                           tide_dtype_name(out[i]->dt), cause);
        }
        return TIDE_FAIL(st, "%s: out of memory for the result of shape %s (%s)", def->name,
                         TIDE_SHAPE_STR(s, out[i]), tide_dtype_name(out[i]->dt));
      }
    }
  }
  tide_attrs drawn;
  if ((def->flags & TIDE_OPF_STATEFUL) && (attrs->flags & (TIDE_ATTR_OP_SEED | TIDE_ATTR_RNG_AT_RUN))) {
    drawn = *attrs;
    if ((st = tide_random_draw_counters(op, out[0], &drawn)) != TIDE_OK) {
      blank_outputs(n_out, out);
      return st;
    }
    attrs = &drawn;
  }
  st = tide_cpu_backend.kernels[op](def, attrs, n_in, in, n_out, out); /* eager inputs are on the CPU (wants_recorder) */
  if (st) blank_outputs(n_out, out);
  else tide_strings_settle(n_out, out);
  return st;
}

/* An eager op while a hook is set (tide_hooks): drop a stale interrupt (as
 * every op does), time the op for the profiler, check its results' numerics. */
static __attribute__((noinline, cold)) tide_status run_hooked(const tide_op_def *def, int op, const tide_attrs *attrs,
                                                              int n_in, const tide_tensor *const *in, int n_out,
                                                              tide_tensor *const *out) {
  uint32_t hooks = tide_hooks_now();
  if (hooks & TIDE_HOOK_INTERRUPT) tide_interrupt_clear();
  int64_t t0 = hooks & TIDE_HOOK_PROFILE ? tide_prof_now() : 0;
  const char *label = tide_prof_label;
  if (hooks & TIDE_HOOK_PROFILE) tide_prof_label = def->name; /* the pool's workers name their chunks by it */
  tide_status st = run_eager(def, op, attrs, n_in, in, n_out, out);
  tide_prof_label = label;
  if (hooks & TIDE_HOOK_PROFILE) {
    int64_t t1 = tide_prof_now();
    char shapes[64];
    tide_prof_shapes(shapes, sizeof shapes, n_in, in);
    tide_prof_record(TIDE_PROF_OP, def->name, shapes, t0, t1);
  }
  if (!st && (hooks & TIDE_HOOK_NUMERICS) && (st = tide_numerics_check(def->name, n_in, in, n_out, out)))
    blank_outputs(n_out, out);
  return st;
}

tide_status tide_op_run(int op, const tide_attrs *attrs, int n_in, const tide_tensor *const *in, int n_out,
                        tide_tensor *const *out) {
  const tide_op_def *def = def_of(op);
  if (!attrs) attrs = &tide_default_attrs;
  tide_status st = check_call(def, op, attrs, n_in, in, n_out, out);
  if (st) return st;
  if (TIDE_UNLIKELY(wants_recorder(def, n_in, in))) return record_call(def, attrs, n_in, in, n_out, out);
  /* One word for the interrupt, the profiler and check numerics: off, one branch. */
  if (TIDE_UNLIKELY(tide_hooks_now())) return run_hooked(def, op, attrs, n_in, in, n_out, out);
  return run_eager(def, op, attrs, n_in, in, n_out, out);
}

tide_status tide_op_unary(int op, tide_tensor *out, const tide_tensor *x) {
  return tide_op_run(op, NULL, 1, &x, 1, &out);
}

tide_status tide_op_binary(int op, tide_tensor *out, const tide_tensor *a, const tide_tensor *b) {
  const tide_tensor *in[2] = {a, b};
  return tide_op_run(op, NULL, 2, in, 1, &out);
}
