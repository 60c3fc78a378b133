/* cpu/dnnl_conv.c — float32 convolutions through oneDNN's C API: primitives cached
 * per shape, NHWC images used in place, filters reordered to the layout each primitive wants.
 *
 * Threads: Debian's libdnnl runs on OpenMP. Rather than let a second pool of
 * spinning OpenMP threads fight tide's pool for the cores, a pass is split over
 * the batch into a few chunks per pool thread, claimed dynamically, and each
 * chunk runs a primitive made for one thread (omp_set_num_threads(1) on the
 * thread that runs it). Only a batch smaller than the thread count runs one
 * primitive on OpenMP's threads. (Measured on 2 cores against one primitive on
 * OpenMP's threads: the same speed within noise.) */
#include "conv.h"
#include "onednn_load.h"
#include "signals.h"
#include "../core/parallel.h"
#include "../core/scratch.h"

#include <pthread.h>
#include <string.h>

/* libgomp's setter (found with oneDNN by cpu/onednn_load.c). */
static void set_omp_threads(int n) { omp_set_num_threads(n); }

static dnnl_engine_t engine;
static bool engine_ok;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

/* The first float32 convolution loads oneDNN; without it convolutions run im2col. */
static void make_engine(void) {
  engine_ok = tide_onednn_available() && dnnl_engine_create(&engine, dnnl_cpu, 0) == dnnl_success;
}

/* One stream per thread: a stream is not meant to be shared by concurrent callers. */
static _Thread_local dnnl_stream_t thread_stream;

static dnnl_stream_t stream(void) {
  if (!thread_stream && dnnl_stream_create(&thread_stream, engine, dnnl_stream_default_flags) != dnnl_success)
    thread_stream = NULL;
  return thread_stream;
}

/* ---- the primitive cache ------------------------------------------------------------- */

typedef struct dn_key {
  int32_t pass, depthwise, nthr, plain_weights;
  int64_t n, h, w, c, kh, kw, mult, oh, ow, oc, sh, sw, dh, dw, pt, pb, pl, pr;
} dn_key;

typedef struct dn_entry {
  dn_key key;
  int state;                   /* 0 empty, 1 ready, 2 oneDNN has no implementation */
  int users;                   /* callers running it now (under the lock): not evicted meanwhile */
  uint64_t stamp;              /* last use, for eviction */
  dnnl_primitive_t prim;
  dnnl_primitive_t reorder;    /* user filters -> wmd (FWD, BWD_DATA) or wmd -> user (BWD_FILTER); NULL if equal */
  dnnl_memory_desc_t xmd, ymd, wmd, umd, smd;   /* images, filters (primitive's, user's), scratchpad */
  size_t wbytes, scratch;
} dn_entry;

enum {
  CACHE_SIZE = 32,
  SMALL_MACS = 1 << 18,      /* multiply-adds below which one thread does the whole pass */
  CHUNKS_PER_THREAD = 4      /* batch chunks per pool thread: balance when a core is busy elsewhere */
};
static dn_entry cache[CACHE_SIZE];
static uint64_t clock_now;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void destroy_entry(dn_entry *e) {
  if (e->prim) dnnl_primitive_destroy(e->prim);
  if (e->reorder) dnnl_primitive_destroy(e->reorder);
  memset(e, 0, sizeof *e);
}

/* Plain descriptors of tide's layouts: images NHWC as oneDNN's logical NCHW,
 * filters [kh, kw, c, oc] as OIHW, depthwise [kh, kw, c, mult] as GOIHW (I = 1). */
static bool plain_descs(const dn_key *k, dnnl_memory_desc_t *x, dnnl_memory_desc_t *y, dnnl_memory_desc_t *u,
                        int *wnd, dnnl_dims_t wdims) {
  dnnl_dims_t xd = {k->n, k->c, k->h, k->w}, xs = {k->h * k->w * k->c, 1, k->w * k->c, k->c};
  dnnl_dims_t yd = {k->n, k->oc, k->oh, k->ow}, ys = {k->oh * k->ow * k->oc, 1, k->ow * k->oc, k->oc};
  if (dnnl_memory_desc_init_by_strides(x, 4, xd, dnnl_f32, xs) != dnnl_success) return false;
  if (dnnl_memory_desc_init_by_strides(y, 4, yd, dnnl_f32, ys) != dnnl_success) return false;
  if (k->depthwise) {
    dnnl_dims_t d = {k->c, k->mult, 1, k->kh, k->kw};
    dnnl_dims_t s = {k->mult, 1, k->c * k->mult, k->kw * k->c * k->mult, k->c * k->mult};
    *wnd = 5;
    memcpy(wdims, d, sizeof d);
    return dnnl_memory_desc_init_by_strides(u, 5, d, dnnl_f32, s) == dnnl_success;
  }
  dnnl_dims_t d = {k->oc, k->c, k->kh, k->kw}, s = {1, k->oc, k->kw * k->c * k->oc, k->c * k->oc};
  *wnd = 4;
  memcpy(wdims, d, sizeof d);
  return dnnl_memory_desc_init_by_strides(u, 4, d, dnnl_f32, s) == dnnl_success;
}

/* Make e's primitive for e->key; false when oneDNN has none. Runs under the lock. */
static bool create_entry(dn_entry *e) {
  const dn_key *k = &e->key;
  int wnd;
  dnnl_dims_t wdims;
  dnnl_memory_desc_t wany;
  if (!plain_descs(k, &e->xmd, &e->ymd, &e->umd, &wnd, wdims)) return false;
  if (k->plain_weights) wany = e->umd;
  else if (dnnl_memory_desc_init_by_tag(&wany, wnd, wdims, dnnl_f32, dnnl_format_tag_any) != dnnl_success)
    return false;
  dnnl_dims_t strides = {k->sh, k->sw}, dil = {k->dh - 1, k->dw - 1};
  dnnl_dims_t padl = {k->pt, k->pl}, padr = {k->pb, k->pr};
  /* Primitives choose their blocking for the thread count current when they are made. */
  set_omp_threads(k->nthr);
  dnnl_primitive_attr_t attr = NULL;
  dnnl_primitive_desc_t fpd = NULL, pd = NULL, rpd = NULL;
  dnnl_convolution_desc_t fd, bd;
  bool ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
            dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
            dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &e->xmd,
                                                       &wany, NULL, &e->ymd, strides, dil, padl,
                                                       padr) == dnnl_success &&
            dnnl_primitive_desc_create(&fpd, &fd, attr, engine, NULL) == dnnl_success;
  if (ok && k->pass == TIDE_CONV_FWD) {
    pd = fpd, fpd = NULL;
  } else if (ok) {
    if (k->pass == TIDE_CONV_BWD_DATA)
      ok = dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &e->xmd, &wany, &e->ymd,
                                                            strides, dil, padl, padr) == dnnl_success;
    else
      ok = dnnl_dilated_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct, &e->xmd, &wany, NULL,
                                                               &e->ymd, strides, dil, padl, padr) == dnnl_success;
    ok = ok && dnnl_primitive_desc_create(&pd, &bd, attr, engine, fpd) == dnnl_success;
  }
  if (ok) {
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(
        pd, k->pass == TIDE_CONV_BWD_FILTER ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    ok = wmd != NULL;
    if (ok) {
      e->wmd = *wmd;
      e->wbytes = dnnl_memory_desc_get_size(wmd);
      e->scratch = smd ? dnnl_memory_desc_get_size(smd) : 0;
      if (e->scratch) e->smd = *smd;
    }
  }
  if (ok && !dnnl_memory_desc_equal(&e->wmd, &e->umd)) {
    if (k->pass == TIDE_CONV_BWD_FILTER)
      ok = dnnl_reorder_primitive_desc_create(&rpd, &e->wmd, engine, &e->umd, engine, NULL) == dnnl_success;
    else
      ok = dnnl_reorder_primitive_desc_create(&rpd, &e->umd, engine, &e->wmd, engine, NULL) == dnnl_success;
    ok = ok && dnnl_primitive_create(&e->reorder, rpd) == dnnl_success;
  }
  ok = ok && dnnl_primitive_create(&e->prim, pd) == dnnl_success;
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (fpd) dnnl_primitive_desc_destroy(fpd);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* The ready entry for key (made on a miss), held until release(); NULL when
 * oneDNN has no implementation or every slot is busy. */
static dn_entry *acquire(const dn_key *key) {
  pthread_mutex_lock(&cache_lock);
  dn_entry *hit = NULL, *victim = NULL;
  for (int i = 0; i < CACHE_SIZE && !hit; i++) {
    dn_entry *e = &cache[i];
    if (e->state && memcmp(&e->key, key, sizeof *key) == 0) hit = e;
    else if (!e->users && (!victim || !e->state || (victim->state && e->stamp < victim->stamp))) victim = e;
  }
  if (!hit && victim) {
    destroy_entry(victim);
    victim->key = *key;
    victim->state = create_entry(victim) ? 1 : 2;
    if (victim->state == 2) { /* remember the refusal, without half-made primitives */
      if (victim->prim) dnnl_primitive_destroy(victim->prim);
      if (victim->reorder) dnnl_primitive_destroy(victim->reorder);
      victim->prim = victim->reorder = NULL;
    }
    hit = victim;
  }
  if (hit) {
    hit->stamp = ++clock_now;
    if (hit->state == 1) hit->users++;
    else hit = NULL;
  }
  pthread_mutex_unlock(&cache_lock);
  return hit;
}

static void release(dn_entry *e) {
  if (!e) return;
  pthread_mutex_lock(&cache_lock);
  e->users--;
  pthread_mutex_unlock(&cache_lock);
}

/* ---- running ------------------------------------------------------------------------- */

/* Execute primitive p with (arg, memory desc, pointer) triples; false on failure. */
static bool execute(dnnl_primitive_t p, int nargs, const int *args, const dnnl_memory_desc_t *const *mds,
                    void *const *ptrs) {
  dnnl_memory_t mem[5] = {0};
  dnnl_exec_arg_t ea[5];
  dnnl_stream_t s = stream();
  bool ok = s != NULL;
  for (int i = 0; i < nargs && ok; i++) {
    ok = dnnl_memory_create(&mem[i], mds[i], engine, ptrs[i]) == dnnl_success;
    ea[i].arg = args[i];
    ea[i].memory = mem[i];
  }
  sigset_t held;
  tide_hold_signals(&held); /* as around oneDNN's sgemm (cpu/signals.h) */
  ok = ok && dnnl_primitive_execute(p, s, nargs, ea) == dnnl_success && dnnl_stream_wait(s) == dnnl_success;
  tide_release_signals(&held);
  for (int i = 0; i < nargs; i++)
    if (mem[i]) dnnl_memory_destroy(mem[i]);
  return ok;
}

/* A pass split into chunks of the batch that the workers claim one at a time
 * (so a worker slowed by another process takes fewer): the first `big`
 * chunks hold q + 1 images and run ent[0], the others hold q and run ent[1]. */
typedef struct dn_job {
  tide_conv_pass pass;
  const tide_conv_geom *g;
  dn_entry *ent[2];
  int64_t nchunks, big, q;
  int64_t next;           /* atomic: the next chunk to claim */
  int nslots;             /* workers (the pool's parts) */
  float *x, *w, *y;
  char *wbuf[2];          /* FWD/BWD_DATA: the filters in ent[k]'s layout */
  /* BWD_FILTER, per worker slot s: its sum (slot 0: the output w itself; slot
   * s > 0: sums + (s - 1) * wsize), a plain buffer for one chunk's gradient,
   * one in the primitive's layout, and whether it ran any chunk. */
  float *sums, *plain;
  char *blocked;
  size_t wstride;
  unsigned char *used;
  char *scratch;          /* per-slot scratchpads of sstride bytes */
  size_t sstride;
  int64_t wsize;
  int failed;             /* atomic */
} dn_job;

/* Run chunk i on worker slot s; false on failure. */
static bool run_chunk(dn_job *j, int64_t i, int s) {
  const tide_conv_geom *g = j->g;
  int which = i < j->big ? 0 : 1;
  dn_entry *e = j->ent[which];
  int64_t first = i < j->big ? i * (j->q + 1) : j->big * (j->q + 1) + (i - j->big) * j->q;
  float *x = j->x + first * g->h * g->w * g->c, *y = j->y + first * g->oh * g->ow * g->oc;
  int nargs = e->scratch ? 4 : 3;
  void *scratch = j->scratch + (size_t)s * j->sstride;
  const dnnl_memory_desc_t *mds[4] = {&e->xmd, &e->wmd, &e->ymd, &e->smd};
  if (j->pass != TIDE_CONV_BWD_FILTER) {
    bool fwd = j->pass == TIDE_CONV_FWD;
    int args[4] = {fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST,
                   DNNL_ARG_SCRATCHPAD};
    void *ptrs[4] = {x, e->reorder ? (void *)j->wbuf[which] : (void *)j->w, y, scratch};
    return execute(e->prim, nargs, args, mds, ptrs);
  }
  /* The slot's first chunk writes its sum directly; later ones go through `plain` and are added. */
  float *sum = s == 0 ? j->w : j->sums + (s - 1) * j->wsize;
  bool first_here = !j->used[s];
  float *dst = first_here ? sum : j->plain + (size_t)s * j->wsize;
  void *wp = e->reorder ? (void *)(j->blocked + (size_t)s * j->wstride) : (void *)dst;
  int args[4] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST, DNNL_ARG_SCRATCHPAD};
  void *ptrs[4] = {x, wp, y, scratch};
  if (!execute(e->prim, nargs, args, mds, ptrs)) return false;
  if (e->reorder) {
    int rargs[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
    const dnnl_memory_desc_t *rmds[2] = {&e->wmd, &e->umd};
    void *rptrs[2] = {wp, dst};
    if (!execute(e->reorder, 2, rargs, rmds, rptrs)) return false;
  }
  if (!first_here)
    for (int64_t k = 0; k < j->wsize; k++) sum[k] += dst[k];
  j->used[s] = 1;
  return true;
}

/* A worker: slot `begin` (the pool gives each part one index) claims chunks until none are left. */
static void run_worker(void *arg, int64_t begin, int64_t end) {
  TIDE_UNUSED(end);
  dn_job *j = arg;
  if (j->nchunks > 1) set_omp_threads(1);
  for (;;) {
    int64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (i >= j->nchunks || __atomic_load_n(&j->failed, __ATOMIC_RELAXED)) return;
    if (!run_chunk(j, i, (int)begin)) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
  }
}

static size_t align64(size_t n) { return (n + 63) / 64 * 64; }

/* See conv.h: get (or make) the primitives for the chunk sizes, reorder the
 * filters, run the chunks on the pool, sum the filter gradients. */
tide_status tide_dnnl_conv(const char *op, tide_conv_pass pass, const tide_conv_geom *g, bool depthwise, float *x,
                           float *w, float *y) {
  pthread_once(&engine_once, make_engine);
  if (!engine_ok || g->n < 1 || g->c < 1 || g->oc < 1 || g->oh < 1 || g->ow < 1) return TIDE_ERR_UNSUPPORTED;
  int threads = tide_parallel_threads();
  /* Small work stays on the calling thread (no handoff to the pool or OpenMP). */
  double macs = (double)g->n * (double)(g->oh * g->ow) * (double)(g->kh * g->kw * g->c) *
                (double)(depthwise ? g->mult : g->oc);
  if (macs < SMALL_MACS) threads = 1;
  dn_job j;
  memset(&j, 0, sizeof j);
  j.pass = pass, j.g = g, j.x = x, j.w = w, j.y = y;
  /* A few chunks per thread when the batch allows; else one primitive on OpenMP's threads. */
  bool split = threads > 1 && g->n >= threads;
  j.nchunks = split ? (g->n < threads * CHUNKS_PER_THREAD ? g->n : threads * CHUNKS_PER_THREAD) : 1;
  j.nslots = split ? threads : 1;
  j.q = g->n / j.nchunks;
  j.big = g->n % j.nchunks;
  dn_key key;
  memset(&key, 0, sizeof key);
  key.pass = pass, key.depthwise = depthwise, key.nthr = split ? 1 : threads;
  /* Measured on AVX-512: with very few input channels oneDNN's GEMM-based
   * backward-data kernel (plain filters) beats its blocked-filter one. */
  key.plain_weights = pass == TIDE_CONV_BWD_DATA && !depthwise && g->c <= 4;
  key.h = g->h, key.w = g->w, key.c = g->c, key.kh = g->kh, key.kw = g->kw, key.mult = g->mult;
  key.oh = g->oh, key.ow = g->ow, key.oc = g->oc, key.sh = g->sh, key.sw = g->sw, key.dh = g->dh, key.dw = g->dw;
  key.pt = g->pt, key.pb = g->pb, key.pl = g->pl, key.pr = g->pr;
  key.n = j.q;
  j.ent[1] = acquire(&key);
  if (j.ent[1] && j.big) {
    key.n = j.q + 1;
    j.ent[0] = acquire(&key);
  }
  if (!j.ent[1] || (j.big && !j.ent[0])) {
    release(j.ent[1]);
    return TIDE_ERR_UNSUPPORTED;
  }

  /* Temporaries: per-slot scratchpads, then the reordered filters (FWD,
   * BWD_DATA) or the per-slot filter-gradient buffers (BWD_FILTER). */
  size_t scratch = 0, wmax = 0;
  bool reorder = false;
  for (int k = 0; k < 2; k++)
    if (j.ent[k]) {
      if (j.ent[k]->scratch > scratch) scratch = j.ent[k]->scratch;
      if (j.ent[k]->wbytes > wmax) wmax = j.ent[k]->wbytes;
      reorder = reorder || j.ent[k]->reorder;
    }
  j.sstride = align64(scratch);
  j.wstride = align64(wmax);
  j.wsize = g->kh * g->kw * g->c * (depthwise ? g->mult : g->oc);
  size_t slots = (size_t)j.nslots, wbytes = align64((size_t)j.wsize * sizeof(float));
  size_t tmp = j.sstride * slots;
  /* BWD_FILTER: slots - 1 sums, slots plain buffers, slots blocked ones, and one `used` byte per slot. */
  if (pass == TIDE_CONV_BWD_FILTER) tmp += (2 * slots - 1) * wbytes + (reorder ? j.wstride * slots : 0) + align64(slots);
  else if (reorder) tmp += 2 * j.wstride;
  char *buf = tide_scratch_alloc(tmp, op, "oneDNN's temporaries"); /* charged to a VM's cap */
  if (!buf) {
    release(j.ent[0]);
    release(j.ent[1]);
    return tide_last_status();
  }
  char *p = buf;
  j.scratch = p, p += j.sstride * slots;
  if (pass == TIDE_CONV_BWD_FILTER) {
    j.sums = (float *)p, p += (slots - 1) * wbytes;
    j.plain = (float *)p, p += slots * wbytes;
    j.blocked = p, p += reorder ? j.wstride * slots : 0;
    j.used = (unsigned char *)p;
    memset(j.used, 0, slots);
  } else {
    j.wbuf[0] = p, j.wbuf[1] = p + j.wstride;
    set_omp_threads(1);
    for (int k = 0; k < 2 && !j.failed; k++) {
      dn_entry *e = j.ent[k];
      if (!e || !e->reorder) continue;
      int rargs[2] = {DNNL_ARG_FROM, DNNL_ARG_TO};
      const dnnl_memory_desc_t *rmds[2] = {&e->umd, &e->wmd};
      void *rptrs[2] = {w, j.wbuf[k]};
      if (!execute(e->reorder, 2, rargs, rmds, rptrs)) j.failed = 1;
    }
  }
  if (!j.failed) {
    if (split) {
      tide_parallel_for(j.nslots, 1, run_worker, &j);
    } else {
      set_omp_threads(threads);
      run_worker(&j, 0, 1);
    }
  }
  if (!j.failed && pass == TIDE_CONV_BWD_FILTER) {
    /* Slot 0 is the output: zero when its worker ran no chunk (the pool may give a part no work). */
    if (!j.used[0]) memset(w, 0, (size_t)j.wsize * sizeof(float));
    for (int s = 1; s < j.nslots; s++)
      if (j.used[s]) {
        const float *part = j.sums + (s - 1) * j.wsize;
        for (int64_t k = 0; k < j.wsize; k++) w[k] += part[k];
      }
  }
  tide_scratch_free(buf, tmp);
  release(j.ent[0]);
  release(j.ent[1]);
  return j.failed ? TIDE_ERR_UNSUPPORTED : TIDE_OK;
}
