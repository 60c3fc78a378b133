/* cpu/fused_cpu.h — the CPU backend of fused nodes inside: its prepared
 * program (cpu/fused.c prepares, cpu/fused_compile.c compiles), the layout
 * of a run, and the two engines that run it (cpu/fused_run.c). */
#ifndef TIDE_CPU_FUSED_CPU_H
#define TIDE_CPU_FUSED_CPU_H

#include <stdlib.h>

#include "fused_f32.h"
#include "elementwise.h"

enum {
  ENGINE_GENERIC = 0,
  ENGINE_F32 = 1,
  N_REGS = TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_CONSTS + TIDE_FUSED_MAX_STEPS,
  TILE_BYTES = 4 * F32_STRIP_MAX, /* a constant's tile (its first 8 bytes: the generic engine's value) */
  /* Elements per block of the generic engine: its blocks stay in L1
   * (float32: 4 KiB each). Measured on a 10-op chain over 10M float32:
   * 1024 beat 512, 2048 and 4096 by 15-50%. */
  GEN_BLOCK = 1024,
  /* Elements per block of the float32 engine (gathered inputs and bool
   * outputs take a buffer of this many floats; the rest streams). */
  F32_BLOCK = 2048,
  STACK_BYTES = 16384   /* scratch a run takes from the stack before the heap */
};

/* Outputs this large are written with streaming stores (past the caches,
 * without reading the lines first): they would not stay cached anyway, and
 * the saved read is a third of a one-input chain's memory traffic (the
 * chain bench ran 10-30% faster). Results that leave the graph stream from
 * the size of a core's L2 up: the caller reads them later if at all, and
 * from Lua they land in blocks the collector has not handed back yet, cold
 * ones (a 1M float32 chain whose results rotate through 16 blocks: 572 us
 * regular, 355 us streamed; warm, one block: within 10% either way; 256K
 * elements: no gain; bench/trace.lua's 1M chain, 2 threads: 0.33 -> 0.27 ms). */
#define STREAM_BYTES ((int64_t)16 << 20)
#define STREAM_BYTES_LEAVING ((int64_t)2 << 20)

/* Whether outputs of `bytes` (together) are written past the caches. */
static inline bool streams(int64_t bytes, unsigned hints) {
  return bytes >= ((hints & TIDE_FUSED_RESULTS_LEAVE) ? STREAM_BYTES_LEAVING : STREAM_BYTES);
}

/* How a generic step's loop reads its ctx. */
enum { CTX_NONE = 0, CTX_ATTRS, CTX_BINARY };

typedef struct gen_step {
  tide_loop_fn fn;
  int32_t ctx;              /* CTX_* */
} gen_step;

/* A prepared description. Offsets are from the program's start. */
typedef struct cpu_prog {
  int32_t engine;           /* ENGINE_* */
  int32_t costly;           /* transcendental or integer-division work: threads pay sooner */
  int32_t attrs_off;        /* tide_attrs of each step */
  int32_t consts_off;       /* each constant's tile */
  int32_t f32_off;          /* the float32 program (ENGINE_F32) */
  /* ENGINE_GENERIC: registers are inputs, constants, then steps' results */
  int32_t n_slots;          /* scratch blocks */
  int32_t slot[N_REGS];     /* scratch block of each register (inputs: when gathered) */
  int32_t dt[N_REGS];       /* dtype of each register (halves are held as float32) */
  int32_t out_of[TIDE_FUSED_MAX_STEPS]; /* the output a step is, or -1 */
  gen_step step[TIDE_FUSED_MAX_STEPS];
} cpu_prog;

static inline size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* The dtype a value of dt computes in (halves: float32), and its size. */
static inline int compute_dt(int dt) { return tide_is_half(dt) ? TIDE_FLOAT32 : dt; }
static inline int64_t compute_size(int dt) { return (int64_t)tide_dtype_size(compute_dt(dt)); }

static inline const tide_attrs *step_attrs(const cpu_prog *cp, int t) {
  return (const tide_attrs *)((const char *)cp + cp->attrs_off) + t;
}
static inline const char *const_tile(const cpu_prog *cp, int c) { return (const char *)cp + cp->consts_off + c * TILE_BYTES; }
static inline const f32_prog *f32_of(const cpu_prog *cp) { return (const f32_prog *)((const char *)cp + cp->f32_off); }

/* One input seen over the (coalesced) output space. */
typedef struct fop {
  const char *data;
  int64_t st[TIDE_MAX_DIMS];   /* bytes per step of each dim (0 where broadcast) */
  int dt;
  bool flat;                   /* element e lies at data + e * st[nd - 1] */
  bool splat;                  /* one element for all */
} fop;

typedef struct layout {
  int nd;
  int64_t dims[TIDE_MAX_DIMS];
  int64_t total;
  fop in[TIDE_FUSED_MAX_INPUTS];
} layout;

/* Lay the inputs over the outputs' shape (broadcasting), then merge dims
 * every operand walks evenly (cpu/fused.c). */
tide_status fused_cpu_lay_out(layout *r, const tide_tensor *o, int n_in, const tide_tensor *const *in);
/* Elements [e0, e0 + m) of input o (row-major over the output), through
 * load(dt, n, src, stride, dst) into dst of element size es (cpu/fused.c). */
typedef void (*load_fn)(int dt, int64_t n, const char *src, int64_t stride, char *dst);
void fused_cpu_gather(const layout *r, const fop *o, int64_t e0, int64_t m, char *dst, int64_t es, load_fn load);
/* A scratch area: the stack buffer `local` (have bytes) when need fits, else the heap. */
static inline char *fused_cpu_scratch(char *local, size_t have, size_t need) {
  return need <= have ? local : aligned_alloc(64, align64(need));
}

/* Whether the float32 engine runs f, and its compilers (cpu/fused_compile.c). */
bool tide_fused_f32_runs(const tide_fused *f);
tide_status fused_cpu_compile_f32(const tide_fused *f, cpu_prog *cp, f32_prog *p);
tide_status fused_cpu_compile_generic(const tide_fused *f, cpu_prog *cp);

/* The engines (cpu/fused_run.c): run f's program over the layout into out. */
tide_status fused_cpu_run_f32(const tide_fused *f, const cpu_prog *cp, const layout *lay, tide_tensor *const *out,
                              unsigned hints);
tide_status fused_cpu_run_generic(const tide_fused *f, const cpu_prog *cp, const layout *lay,
                                  tide_tensor *const *out, unsigned hints, int *failed);

#endif
