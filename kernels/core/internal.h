/* core/internal.h — helpers shared inside the engine (never installed): the
 * storage layout, error shortcuts, shape formatting, branch hints. */
#ifndef TIDE_CORE_INTERNAL_H
#define TIDE_CORE_INTERNAL_H

#include "tide/tide.h"
#include "tide/random.h"

#include <stdio.h>

#define TIDE_LIKELY(x) __builtin_expect(!!(x), 1)
#define TIDE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TIDE_UNUSED(x) ((void)(x))

/* A refcounted buffer. Owned buffers are allocated together with this header
 * (one tide_alloc per tensor); wrapped ones call free_fn when the last
 * reference goes. */
struct tide_storage {
  int64_t refs;           /* atomic */
  void *data;             /* lowest address of the buffer (views are checked against it) */
  size_t nbytes;
  tide_free_fn free_fn;   /* wrapped memory only: called as free_fn(free_ctx, free_ptr) */
  void *free_ctx;         /* owned storages: the tide_memory_account charged for them, or NULL */
  void *free_ptr;
  size_t alloc_bytes;     /* bytes of the tide_alloc block (owned), else 0 */
  int32_t device;
  uint32_t flags;         /* TIDE_STORAGE_* */
};

/* A variable's values (tide_tensor_mark_variable): reads share them, so the
 * Lua face refuses in-place writes into them except through the variable. */
enum {
  TIDE_STORAGE_VARIABLE = 1,
  /* A TIDE_STRING buffer whose elements are references this storage owns:
   * releasing the storage releases each (core/strings.c). Kernels write
   * borrowed pointers into unflagged buffers; the registry then takes the
   * references and sets the flag (tide_strings_settle). */
  TIDE_STORAGE_STRINGS = 2
};

/* ---- string elements (core/strings.c) ---- */
/* Take a reference on every element of s (a string buffer of borrowed
 * pointers) and flag it as owning them; nothing when already flagged. */
void tide_strings_own(tide_storage *s);
/* Release every element of a flagged string storage (its last reference went). */
void tide_strings_release_elements(tide_storage *s);
/* After a kernel wrote string outputs: make each new buffer own its elements.
 * Views of flagged buffers are left as they are. */
static inline void tide_strings_settle(int n_out, tide_tensor *const *out) {
  for (int k = 0; k < n_out; k++)
    if (TIDE_UNLIKELY(out[k]->dt == TIDE_STRING) && out[k]->storage) tide_strings_own(out[k]->storage);
}
/* Mark t's new (all-"") string buffer as owning its elements, before a
 * kernel writes strings it made (refs 1 each) into it. */
static inline void tide_strings_adopt(tide_tensor *t) {
  if (t->storage) t->storage->flags |= TIDE_STORAGE_STRINGS;
}
/* copy_into for strings: dst's elements become src's (broadcast), references counted. */
tide_status tide_strings_copy_into(tide_tensor *dst, const tide_tensor *src);

/* x itself when contiguous, else a contiguous copy (core/copy.c) made in the
 * blank header *tmp, errors naming `op`; *use gets the one to read. The
 * caller releases *tmp (also on failure). A copy of strings borrows x's
 * elements: read it while x lives. */
tide_status tide_contiguous_or_copy(const char *op, const tide_tensor *x, tide_tensor *tmp, const tide_tensor **use);

/* Storage references (atomic, so views may be dropped from any thread). */
void tide_storage_retain(tide_storage *s);
void tide_storage_release(tide_storage *s);
/* A new owned storage of nbytes (refs = 1), or NULL with an error set. */
tide_storage *tide_storage_new(size_t nbytes);

/* Count a GPU allocation toward the collector's pacing (core/alloc.c). */
void tide_memory_note_device_alloc(size_t nbytes);

/* Bytes per element of a valid dtype code, for the engine's hot paths; the
 * public tide_dtype_size is the checked one (0 for an invalid code). */
extern const uint8_t tide_dtype_bytes[TIDE_NUM_DTYPES];
static inline size_t tide_dtype_size_unchecked(int dt) { return tide_dtype_bytes[dt]; }

/* Give `t`, whose contiguous layout (dims, strides, nelem, dt) is already
 * set, its data: inline when small, else a new storage. */
tide_status tide_tensor_alloc_data(tide_tensor *t);

/* Fill the dims/strides/nelem/ndim/dt of `t` for a contiguous layout. A dim
 * may be -1 (unknown, in a traced graph): nelem is then -1 and the strides
 * outside it 0. ndim TIDE_UNKNOWN_RANK (dims unread, may be NULL) gives a
 * layout of unknown rank: dims and strides 0, nelem -1. */
void tide_tensor_set_contiguous_layout(tide_tensor *t, int dtype, int ndim, const int64_t *dims);
/* Product of dims, or -1 if it overflows int64 or a dim is unknown (-1). */
int64_t tide_dims_product(int ndim, const int64_t *dims);

/* Reserve the counters random op `op` needs for its output `out` into a's
 * rng_key/rng_counter (core/random.c): from op seed a->rng_key's stream when
 * a has TIDE_ATTR_OP_SEED, else from the global stream. */
tide_status tide_random_draw_counters(int op, const tide_tensor *out, tide_attrs *a);

/* "[2, 3]" into buf (always terminated); "<unknown>" for an unknown rank
 * (ndim < 0, TF's word). Returns buf. */
const char *tide_fmt_dims(char *buf, size_t size, int ndim, const int64_t *dims);
/* Shorthand for formatting a tensor's shape into a local buffer. */
#define TIDE_SHAPE_STR(buf, t) tide_fmt_dims((buf), sizeof(buf), (t)->ndim, (t)->dims)

/* A double as an integer type: truncated toward zero, saturated to the
 * type's range, NaN -> 0 (C leaves out-of-range casts undefined). One typed
 * function per type, so the cast loops that inline them vectorize. */
#define TIDE_SAT_FN(NAME, TO, LO, HI)                            \
  static inline TO NAME(double v) {                              \
    if (v != v) return 0;                                        \
    if (v <= (double)(LO)) return (TO)(LO);                      \
    if (v >= (double)(HI)) return (TO)(HI);                      \
    return (TO)v;                                                \
  }
TIDE_SAT_FN(tide_sat_i8, int8_t, INT8_MIN, INT8_MAX)
TIDE_SAT_FN(tide_sat_u8, uint8_t, 0, UINT8_MAX)
TIDE_SAT_FN(tide_sat_i32, int32_t, INT32_MIN, INT32_MAX)
#undef TIDE_SAT_FN
/* INT64_MAX is not a double: 2^63 itself must saturate too. */
static inline int64_t tide_sat_i64(double v) {
  if (v != v) return 0;
  if (v < -9223372036854775808.0) return INT64_MIN;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)v;
}
/* The same for integer dtype code dt (int8, uint8, int32, else int64). */
static inline int64_t tide_sat_int(double v, int dt) {
  switch (dt) {
  case TIDE_INT8: return tide_sat_i8(v);
  case TIDE_UINT8: return tide_sat_u8(v);
  case TIDE_INT32: return tide_sat_i32(v);
  default: return tide_sat_i64(v);
  }
}

/* Normalize an axis against ndim (negative counts from the end); -1 with an
 * error naming `op` when out of range. */
int tide_normalize_axis(const char *op, int64_t axis, int ndim);
/* Mark in mask[0..ndim) the axes axes[0..n) name (negative counts from the
 * end), the rest false; an axis out of range or named twice fails, naming `op`. */
tide_status tide_axis_mask(const char *op, int n, const int64_t *axes, int ndim, bool *mask);

/* Set an error and return its status: shorthand for kernels. */
#define TIDE_FAIL(status, ...) tide_set_error((status), __VA_ARGS__)

/* True when an interrupt was requested for this thread: the process-wide
 * request, or its current token (core/interrupt.c) raised; kernels poll it
 * between chunks. _clear withdraws the process-wide request only. */
bool tide_interrupt_pending(void);
void tide_interrupt_clear(void);
/* This thread's current token (tide_interrupt_swap), or NULL; another reference to one. */
tide_interrupt *tide_interrupt_current(void);
void tide_interrupt_retain(tide_interrupt *t);

/* The one word the hot paths (tide_op_run, a graph's steps) test: zero
 * unless an interrupt is pending (the process-wide request, or a token
 * raised somewhere), the profiler records or numerics are checked
 * (core/interrupt.c, core/profiler.c), so that with all off an op pays one
 * load and one predictable branch for them together. */
enum { TIDE_HOOK_INTERRUPT = 1, TIDE_HOOK_PROFILE = 2, TIDE_HOOK_NUMERICS = 4, TIDE_HOOK_TOKENS = 8 };
extern uint32_t tide_hooks;
static inline uint32_t tide_hooks_now(void) { return __atomic_load_n(&tide_hooks, __ATOMIC_RELAXED); }
/* Record an event of category cat (TIDE_PROF_*) on this thread: `name` a
 * static string, or NULL when the name is `text` (copied, cut to fit). */
void tide_prof_record(int cat, const char *name, const char *text, int64_t t0, int64_t t1);
/* "float32[2, 3] int32[]": the inputs' dtypes and shapes into buf[cap] (cut to fit), without printf. */
void tide_prof_shapes(char *buf, size_t cap, int n, const tide_tensor *const *in);
/* Nanoseconds on the profiler's clock. */
int64_t tide_prof_now(void);
/* While the profiler records: the name of the op or graph node this thread
 * runs (set around it), which the pool's workers give their chunks' events. */
extern _Thread_local const char *tide_prof_label;
/* With check numerics on: fail when a float output of op `name` holds a
 * NaN or an infinity, naming the op, the output and the inputs (core/numerics.c). */
tide_status tide_numerics_check(const char *name, int n_in, const tide_tensor *const *in, int n_out,
                                tide_tensor *const *out);
/* ---- file policies (core/file_policy.c) ---- */
/* This thread's current policy (tide_file_policy_swap), or NULL. */
tide_file_policy *tide_file_policy_current(void);
/* Another reference (a pipeline thread holds one). */
void tide_file_policy_retain(tide_file_policy *p);
/* tide_file_open as a stdio stream: mode "rb", "wb" (created, truncated) or
 * "ab"; NULL with errno and tide_file_why() set. */
FILE *tide_file_fopen(const char *path, const char *mode);

/* ---- memory accounts (core/account.c) ---- */
/* This thread's current account (tide_memory_account_swap), or NULL. */
tide_memory_account *tide_memory_account_current(void);
/* Another reference (a storage charged to the account holds one). */
void tide_memory_account_retain(tide_memory_account *a);

/* ---- random states (core/random.c) ---- */
/* This thread's current state (tide_random_state_swap), or NULL (the process's). */
tide_random_state *tide_random_state_current(void);
/* Another reference (a pipeline thread holds one). */
void tide_random_state_retain(tide_random_state *r);

#endif
