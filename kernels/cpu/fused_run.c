/* cpu/fused_run.c — the CPU backend's two engines over a laid-out run: the
 * float32 one (strips through the register program, blocks across the pool)
 * and the generic one (the registry's typed loops over L1 blocks). */
#include "fused_cpu.h"
#include "simd.h"
#include "../core/parallel.h"
#include "../core/half.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* ---- running: the generic engine -------------------------------------------------------- */

typedef struct gen_run {
  const tide_fused *f;
  const cpu_prog *cp;
  layout lay;
  int64_t block;
  size_t slot_bytes;
  char *out[TIDE_FUSED_MAX_OUTPUTS];
  bool stream;                 /* the outputs are written past the caches */
  int failed;                  /* scratch memory could not be had */
  tide_binary_ctx bad[TIDE_FUSED_MAX_STEPS];
} gen_run;

/* n elements of dtype dt from src (stride in bytes) into the compute-type block dst. */
static void gen_load(int dt, int64_t n, const char *src, int64_t stride, char *dst) {
  if (tide_is_half(dt)) {
    tide_halves_to_float(dt, n, src, stride, (float *)dst);
    return;
  }
  int64_t es = (int64_t)tide_dtype_size(dt), s[2] = {es, stride};
  char *p[2] = {dst, (char *)src};
  tide_copy_loop((size_t)es)(n, p, s, NULL);
}

/* Round float32 values to a half type and back, as a half-typed op's result is stored. */
static void round_halves(int dt, int64_t n, float *x) {
  if (dt == TIDE_FLOAT16) /* (inlined from core/half.h: no call per element) */
    for (int64_t i = 0; i < n; i++) x[i] = half_to_float(half_from_float(x[i]));
  else
    for (int64_t i = 0; i < n; i++) x[i] = bfloat16_to_float(bfloat16_from_float(x[i]));
}

/* Copy n bytes past the caches (dst is 64-byte aligned at block starts). */
static void stream_copy(char *dst, const char *src, size_t n) {
  size_t i = 0;
#if defined(__AVX__)
  if (((uintptr_t)dst & 31) == 0)
    for (; i + 32 <= n; i += 32) _mm256_stream_ps((float *)(dst + i), _mm256_loadu_ps((const float *)(src + i)));
#elif defined(__SSE2__)
  if (((uintptr_t)dst & 15) == 0)
    for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
#endif
  memcpy(dst + i, src + i, n - i);
}

/* Run the steps on output elements [e0, e0 + m). */
static void gen_block(gen_run *r, int64_t e0, int64_t m, char *scratch) {
  const tide_fused *f = r->f;
  const cpu_prog *cp = r->cp;
  int n_in = f->n_inputs, first = n_in + f->n_consts;
  char *ptr[N_REGS];
  int64_t str[N_REGS];
  for (int k = 0; k < n_in; k++) {
    const fop *o = &r->lay.in[k];
    if (o->flat && !tide_is_half(o->dt)) {
      str[k] = o->st[r->lay.nd - 1];
      ptr[k] = (char *)o->data + e0 * str[k];
    } else {
      ptr[k] = scratch + (size_t)cp->slot[k] * r->slot_bytes;
      str[k] = compute_size(o->dt);
      fused_cpu_gather(&r->lay, o, e0, m, ptr[k], str[k], gen_load);
    }
  }
  for (int c = 0; c < f->n_consts; c++) ptr[n_in + c] = (char *)const_tile(cp, c), str[n_in + c] = 0;
  for (int t = 0; t < f->n_steps; t++) {
    const tide_fused_step *s = &f->steps[t];
    int reg = first + t, dt = s->dt, o = cp->out_of[t];
    bool direct = o >= 0 && !tide_is_half(dt) && !r->stream; /* the op writes its output itself */
    char *p[1 + TIDE_FUSED_MAX_ARGS];
    int64_t st[1 + TIDE_FUSED_MAX_ARGS];
    p[0] = direct ? r->out[o] + e0 * (int64_t)tide_dtype_size(dt) : scratch + (size_t)cp->slot[reg] * r->slot_bytes;
    st[0] = compute_size(dt);
    for (int j = 0; j < s->n_args; j++) {
      tide_fused_arg a = s->args[j];
      int src = a.src == TIDE_FUSED_INPUT ? a.index : a.src == TIDE_FUSED_CONST ? n_in + a.index : first + a.index;
      p[j + 1] = ptr[src];
      st[j + 1] = str[src];
    }
    int ctx = cp->step[t].ctx;
    cp->step[t].fn(m, p, st, ctx == CTX_ATTRS ? (void *)step_attrs(cp, t) : ctx == CTX_BINARY ? (void *)&r->bad[t] : NULL);
    ptr[reg] = p[0];
    str[reg] = st[0];
    if (tide_is_half(dt)) {
      round_halves(dt, m, (float *)p[0]); /* later steps read what an unfused op would have stored */
      if (o >= 0) tide_float_to_halves(dt, m, (const float *)p[0], r->out[o] + e0 * 2, 2);
    } else if (o >= 0 && !direct) {
      stream_copy(r->out[o] + e0 * (int64_t)tide_dtype_size(dt), p[0], (size_t)m * tide_dtype_size(dt));
    }
  }
}

/* Blocks [b0, b1) of the output, on one thread's scratch blocks. */
static void gen_blocks(void *arg, int64_t b0, int64_t b1) {
  gen_run *r = arg;
  size_t need = (size_t)r->cp->n_slots * r->slot_bytes;
  _Alignas(64) char local[STACK_BYTES];
  char *scratch = fused_cpu_scratch(local, sizeof local, need);
  if (!scratch) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t e0 = b * r->block, m = r->lay.total - e0 < r->block ? r->lay.total - e0 : r->block;
    gen_block(r, e0, m, scratch);
  }
  if (scratch != local) free(scratch);
#if defined(__SSE2__)
  if (r->stream) _mm_sfence();
#endif
}

tide_status fused_cpu_run_generic(const tide_fused *f, const cpu_prog *cp, const layout *lay,
                                  tide_tensor *const *out, unsigned hints, int *failed) {
  gen_run *r = malloc(sizeof *r);
  if (!r) return TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory");
  r->f = f;
  r->cp = cp;
  r->lay = *lay;
  r->failed = 0;
  int64_t bytes = 0;
  for (int o = 0; o < f->n_outputs; o++) bytes += out[o]->nelem * (int64_t)tide_dtype_size(out[o]->dt);
  r->stream = streams(bytes, hints);
  for (int o = 0; o < f->n_outputs; o++) r->out[o] = out[o]->data;
  r->block = lay->total < GEN_BLOCK ? lay->total : GEN_BLOCK;
  r->slot_bytes = align64((size_t)r->block * 8);
  memset(r->bad, 0, sizeof r->bad);
  int64_t nblocks = (lay->total + r->block - 1) / r->block;
  int64_t grain = cp->costly ? TIDE_GRAIN_COSTLY : TIDE_GRAIN_CHEAP / f->n_steps;
  if (grain < TIDE_GRAIN_COSTLY) grain = TIDE_GRAIN_COSTLY;
  tide_parallel_for(nblocks, (grain + r->block - 1) / r->block, gen_blocks, r);
  tide_status st = TIDE_OK;
  if (r->failed) st = TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory for scratch blocks");
  for (int t = 0; t < f->n_steps && !st; t++) {
    if (!r->bad[t].bad) continue;
    st = tide_binary_check(tide_op_name(f->steps[t].op), r->bad[t].bad);
    *failed = t;
  }
  free(r);
  return st;
}

/* ---- running: the float32 engine -------------------------------------------------------- */

/* The float32 kernel for this machine: the best instruction set it runs (cpu/simd.h). */
static const tide_fused_f32_kernel *f32_kernel(void) { return tide_simd.fused_f32_kernel(); }

enum { IN_CONTIG, IN_SPLAT, IN_GATHER };

typedef struct f32_run {
  const tide_fused *f;
  const cpu_prog *cp;
  const f32_prog *fp;
  const tide_fused_f32_kernel *kern;
  const layout *lay;
  int64_t block;
  int mode[TIDE_FUSED_MAX_INPUTS];
  const float *splat[TIDE_FUSED_MAX_INPUTS]; /* IN_SPLAT: a strip of copies */
  char *out[TIDE_FUSED_MAX_OUTPUTS];
  bool bool_out[TIDE_FUSED_MAX_OUTPUTS];
  int n_gather, n_bool_out;
  bool stream;
  int failed;
} f32_run;

/* n elements of dtype dt (float32 or bool) into floats (bools as masks). */
static void f32_load(int dt, int64_t n, const char *src, int64_t stride, char *dst) {
  float *o = (float *)dst;
  if (dt == TIDE_FLOAT32) {
    if (stride == 4) memcpy(o, src, (size_t)n * 4);
    else for (int64_t i = 0; i < n; i++) o[i] = *(const float *)(src + i * stride);
    return;
  }
  uint32_t *u = (uint32_t *)dst;
  for (int64_t i = 0; i < n; i++) u[i] = src[i * stride] ? 0xFFFFFFFFu : 0;
}

/* Output elements [e0, e0 + m), on one thread's scratch. */
static void f32_block(f32_run *r, int64_t e0, int64_t m, float *scratch) {
  const tide_fused *f = r->f;
  const f32_prog *fp = r->fp;
  const int S = r->kern->strip, B = (int)r->block;
  float *ptr[F32_MAX_OPS];
  float *start[TIDE_FUSED_MAX_OUTPUTS]; /* each output's first element */
  int64_t adv[TIDE_FUSED_MAX_INPUTS + TIDE_FUSED_MAX_OUTPUTS];
  /* scratch: gathered inputs (B floats each), bool outputs (B floats and a
   * strip: the last partial strip is computed whole, past the block's end,
   * and must not run into the next output's masks), then tiles */
  float *buf = scratch, *tiles = scratch + (size_t)r->n_gather * B + (size_t)r->n_bool_out * (B + F32_STRIP_MAX);
  for (int k = 0; k < f->n_inputs; k++) {
    adv[k] = S;
    switch (r->mode[k]) {
    case IN_CONTIG: ptr[k] = (float *)r->lay->in[k].data + e0; break;
    case IN_SPLAT: ptr[k] = (float *)r->splat[k], adv[k] = 0; break;
    default:
      ptr[k] = buf;
      fused_cpu_gather(r->lay, &r->lay->in[k], e0, m, (char *)buf, 4, f32_load);
      buf += B;
    }
  }
  for (int o = 0; o < f->n_outputs; o++) {
    int i = f->n_inputs + o;
    adv[i] = S;
    if (r->bool_out[o]) ptr[i] = buf, buf += B + F32_STRIP_MAX;
    else ptr[i] = (float *)r->out[o] + e0;
    start[o] = ptr[i];
  }
  for (int c = 0; c < f->n_consts; c++) ptr[fp->first_const + c] = (float *)const_tile(r->cp, c);
  ptr[fp->call_in] = tiles;
  ptr[fp->call_out] = tiles + F32_STRIP_MAX;
  for (int s = 0; s < fp->n_slots; s++) ptr[fp->first_slot + s] = tiles + (size_t)(2 + s) * F32_STRIP_MAX;
  float *tail = tiles + (size_t)(2 + fp->n_slots) * F32_STRIP_MAX;
  /* Long strips, then short ones, then the last partial short strip through tiles. */
  const int SS = r->kern->short_strip;
  int64_t full = m / S, shorts = (m - full * S) / SS, rest = m - full * S - shorts * SS;
  if (full > 0) r->kern->run(fp, r->cp, ptr, adv, full, r->stream); /* leaves ptr past the strips it ran */
  if (shorts == 0 && rest == 0) goto done;
  for (int i = 0; i < fp->n_adv; i++) adv[i] = adv[i] ? SS : 0;
  if (shorts > 0) r->kern->run_short(fp, r->cp, ptr, adv, shorts, false);
  if (rest > 0) {
    int64_t at_elem = m - rest;
    for (int k = 0; k < f->n_inputs; k++)
      if (r->mode[k] == IN_CONTIG) {
        float *t = tail + (size_t)k * F32_STRIP_MAX;
        memcpy(t, ptr[k], (size_t)rest * 4);
        memset(t + rest, 0, (size_t)(SS - rest) * 4);
        ptr[k] = t;
      }
    for (int o = 0; o < f->n_outputs; o++)
      if (!r->bool_out[o]) ptr[f->n_inputs + o] = tail + (size_t)(f->n_inputs + o) * F32_STRIP_MAX;
    r->kern->run_short(fp, r->cp, ptr, adv, 1, false);
    for (int o = 0; o < f->n_outputs; o++)
      if (!r->bool_out[o])
        memcpy(start[o] + at_elem, tail + (size_t)(f->n_inputs + o) * F32_STRIP_MAX, (size_t)rest * 4);
  }
done:
  for (int o = 0; o < f->n_outputs; o++) {
    if (!r->bool_out[o]) continue;
    const uint32_t *mask = (const uint32_t *)start[o];
    uint8_t *dst = (uint8_t *)r->out[o] + e0;
    for (int64_t i = 0; i < m; i++) dst[i] = mask[i] != 0;
  }
}

/* Scratch floats one thread needs. */
static size_t f32_scratch_floats(const f32_run *r) {
  return (size_t)r->n_gather * (size_t)r->block + (size_t)r->n_bool_out * ((size_t)r->block + F32_STRIP_MAX) +
         (size_t)(2 + r->fp->n_slots + r->f->n_inputs + r->f->n_outputs) * F32_STRIP_MAX;
}

static void f32_blocks(void *arg, int64_t b0, int64_t b1) {
  f32_run *r = arg;
  size_t need = f32_scratch_floats(r) * sizeof(float);
  _Alignas(64) char local[STACK_BYTES];
  float *scratch = (float *)fused_cpu_scratch(local, sizeof local, need);
  if (!scratch) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t b = b0; b < b1; b++) {
    int64_t e0 = b * r->block, m = r->lay->total - e0 < r->block ? r->lay->total - e0 : r->block;
    f32_block(r, e0, m, scratch);
  }
  if ((char *)scratch != local) free(scratch);
#if defined(__SSE2__)
  if (r->stream) _mm_sfence();
#endif
}

tide_status fused_cpu_run_f32(const tide_fused *f, const cpu_prog *cp, const layout *lay, tide_tensor *const *out,
                              unsigned hints) {
  f32_run r;
  r.f = f;
  r.cp = cp;
  r.fp = f32_of(cp);
  r.kern = f32_kernel();
  r.lay = lay;
  r.failed = 0;
  r.n_gather = r.n_bool_out = 0;
  /* Inputs of one element become a strip of copies, here, once. */
  _Alignas(64) float splats[TIDE_FUSED_MAX_INPUTS][F32_STRIP_MAX];
  for (int k = 0; k < f->n_inputs; k++) {
    const fop *o = &lay->in[k];
    if (o->splat) {
      r.mode[k] = IN_SPLAT;
      f32_load(o->dt, 1, o->data, 0, (char *)splats[k]);
      for (int i = 1; i < F32_STRIP_MAX; i++) splats[k][i] = splats[k][0];
      r.splat[k] = splats[k];
    } else if (o->flat && o->dt == TIDE_FLOAT32 && o->st[lay->nd - 1] == 4) {
      r.mode[k] = IN_CONTIG;
    } else {
      r.mode[k] = IN_GATHER;
      r.n_gather++;
    }
  }
  bool aligned = true;
  for (int o = 0; o < f->n_outputs; o++) {
    r.out[o] = out[o]->data;
    r.bool_out[o] = out[o]->dt == TIDE_BOOL;
    r.n_bool_out += r.bool_out[o];
    if (((uintptr_t)r.out[o] & 63) != 0) aligned = false;
  }
  r.stream = aligned && r.n_bool_out == 0 && streams(lay->total * 4 * f->n_outputs, hints);
  r.block = lay->total < F32_BLOCK ? lay->total : F32_BLOCK;
  int64_t nblocks = (lay->total + r.block - 1) / r.block;
  int64_t grain = cp->costly ? TIDE_GRAIN_COSTLY : TIDE_GRAIN_CHEAP / f->n_steps;
  if (grain < TIDE_GRAIN_COSTLY) grain = TIDE_GRAIN_COSTLY;
  tide_parallel_for(nblocks, (grain + r.block - 1) / r.block, f32_blocks, &r);
  if (r.failed) return TIDE_FAIL(TIDE_ERR_MEMORY, "fused: out of memory for scratch blocks");
  return TIDE_OK;
}

