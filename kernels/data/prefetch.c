/* data/prefetch.c — prefetch: a background thread pulls elements from the
 * input into a bounded ring while the consumer works on earlier ones. */
#include "stage.h"
#include "autotune.h"

/* AUTOTUNE: the depth starts at 1 (or where the last pass left it: the
 * next epoch of fit starts there instead of starving its way up again) and
 * doubles each time the consumer finds the buffer empty, up to MAX_AUTO and
 * within the RAM budget for elements of the size seen (autotune.c). It does
 * not shrink within a pass: lowering it while the consumer never waited
 * starved the training step's next burst (bench/data.lua: the MLP's input
 * wait was 5.1% with shrinking, 4.8% without). */
enum { MAX_AUTO = 64 };

typedef struct prefetch_ds {
  tide_dataset base;
  int64_t n;  /* the depth, or TIDE_DATA_AUTOTUNE */
  int tuned;  /* atomic: AUTOTUNE: the depth the last pass settled on (0: none yet) */
} prefetch_ds;

static const dstage_ops prefetch_stage;

tide_dataset *tide_dataset_prefetch(tide_dataset *in, int64_t n) {
  if (n < 1 && n != TIDE_DATA_AUTOTUNE) {
    TIDE_FAIL(TIDE_ERR_VALUE, "prefetch: buffer_size must be at least 1 or AUTOTUNE, got %lld", (long long)n);
    return NULL;
  }
  prefetch_ds *p = (prefetch_ds *)dstage_new_on(&prefetch_stage, in);
  if (p) p->n = n;
  return p ? &p->base : NULL;
}

typedef struct pentry {
  tide_tensor *vals;
  derror err;
  int end;
} pentry;

typedef struct prefetch_node {
  dnode base;
  prefetch_ds *ds;
  dnode *in;
  int cap, limit, autotune;
  pentry *ring;
  int head, count;
  int started, finished; /* finished: the producer has queued the end */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  unsigned seq; /* bumped with every broadcast on cv (dsignal) */
  dwaiter waiter;
  int64_t elem_bytes; /* AUTOTUNE: the first element's bytes (the RAM budget), under mu */
} prefetch_node;

/* An element's bytes (for the RAM budget). */
static int64_t elem_bytes(const tide_tensor *e, int n) {
  int64_t b = 0;
  for (int k = 0; k < n; k++) b += e[k].nelem * (int64_t)tide_dtype_size(e[k].dt);
  return b;
}

/* AUTOTUNE, the consumer found the buffer empty (under mu): double the depth. */
static void deepen(prefetch_node *p) {
  int cap = dtune_ram_cap(p->elem_bytes, p->cap - 1);
  int limit = p->limit * 2 < cap ? p->limit * 2 : cap;
  if (limit > p->limit) {
    p->limit = limit;
    __atomic_store_n(&p->ds->tuned, limit, __ATOMIC_RELAXED);
    dsignal(&p->cv, &p->seq);
  }
}

static void *producer_main(void *arg) {
  prefetch_node *p = arg;
  dpass *pass = p->base.pass;
  dthread_enter();
  pthread_setname_np(pthread_self(), "tide-prefetch"); /* in profiles, top and gdb */
  int nc = p->base.ncomp;
  tide_tensor elem[TIDE_DATA_MAX_COMPONENTS];
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (p->count >= p->limit && !dpass_stopping(pass)) dwait(&p->cv, &p->mu, &p->seq, pass);
    pthread_mutex_unlock(&p->mu);
    if (dpass_stopping(pass)) break;
    memset(elem, 0, sizeof(tide_tensor) * (size_t)nc);
    int end = 0;
    tide_status st = dnext(p->in, elem, &end);
    pthread_mutex_lock(&p->mu);
    pentry *e = &p->ring[(p->head + p->count) % p->cap];
    if (st) derror_save(&e->err, st);
    else if (end) e->end = 1;
    else {
      if (p->autotune && !p->elem_bytes) p->elem_bytes = elem_bytes(elem, nc);
      delem_move(e->vals, elem, nc);
    }
    p->count++;
    if (end) p->finished = 1;
    dsignal(&p->cv, &p->seq);
    pthread_mutex_unlock(&p->mu);
    if (end) break;
  }
  return NULL;
}

static tide_status prefetch_next(dnode *self, tide_tensor *out, int *end) {
  prefetch_node *p = (prefetch_node *)self;
  if (!p->started) {
    if (dthread_start(&p->thread, producer_main, p) != 0) return tide_last_status();
    p->started = 1;
  }
  pthread_mutex_lock(&p->mu);
  if (p->autotune && p->count == 0) deepen(p);
  while (p->count == 0 && !dpass_stopping(self->pass)) dwait(&p->cv, &p->mu, &p->seq, self->pass);
  if (p->count == 0) {
    pthread_mutex_unlock(&p->mu);
    return dstopped();
  }
  pentry *e = &p->ring[p->head];
  tide_status st = TIDE_OK;
  if (e->end) {
    *end = 1; /* stays queued: later calls see the end again */
    pthread_mutex_unlock(&p->mu);
    return TIDE_OK;
  }
  if (e->err.st) st = derror_raise(&e->err, NULL);
  else delem_move(out, e->vals, self->ncomp);
  p->head = (p->head + 1) % p->cap;
  p->count--;
  /* Wake the producer only once the ring is down to half: it then refills
   * in a burst. Waking it for every element taken made Linux run it on the
   * consumer's core at once (a woken thread preempts the waker there), so
   * each element's production was paid for inside next even with a core
   * idle, and prefetch hid nothing (bench/data.lua's input wait). */
  if (p->count <= p->limit / 2) dsignal(&p->cv, &p->seq);
  pthread_mutex_unlock(&p->mu);
  return st;
}

static void prefetch_free(dnode *self) {
  prefetch_node *p = (prefetch_node *)self;
  if (p->started) {
    pthread_mutex_lock(&p->mu);
    dsignal(&p->cv, &p->seq);
    pthread_mutex_unlock(&p->mu);
    dthread_join(p->thread);
  }
  dpass_unwatch(self->pass, &p->waiter);
  p->in->ops->free(p->in);
  for (int i = 0; i < p->cap; i++) {
    delem_release(p->ring[i].vals, self->ncomp);
    free(p->ring[i].vals);
    free(p->ring[i].err.msg);
  }
  free(p->ring);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
}

static const dnode_ops prefetch_ops = {prefetch_next, prefetch_free, "prefetch"};

static dnode *prefetch_node_make(tide_dataset *base, dpass *pass) {
  prefetch_ds *ds = (prefetch_ds *)base;
  dnode *in = dnode_make(base->input, pass);
  if (!in) return NULL;
  prefetch_node *p = calloc(1, sizeof *p);
  int autotune = ds->n == TIDE_DATA_AUTOTUNE;
  int64_t want = autotune ? MAX_AUTO : ds->n;
  if (want > 1 << 20) want = 1 << 20;
  int cap = (int)want + 1; /* + 1: the end (or an error) fits after a full buffer */
  if (p) p->ring = calloc((size_t)cap, sizeof *p->ring);
  bool ok = p && p->ring;
  for (int i = 0; ok && i < cap; i++) ok = (p->ring[i].vals = calloc((size_t)base->ncomp, sizeof(tide_tensor))) != NULL;
  if (!ok) {
    if (p && p->ring)
      for (int i = 0; i < cap; i++) free(p->ring[i].vals);
    if (p) free(p->ring);
    free(p);
    in->ops->free(in);
    TIDE_FAIL(TIDE_ERR_MEMORY, "prefetch: out of memory");
    return NULL;
  }
  p->base = (dnode){&prefetch_ops, base->ncomp, pass};
  p->in = in;
  p->cap = cap;
  p->ds = ds;
  p->autotune = autotune;
  int tuned = __atomic_load_n(&ds->tuned, __ATOMIC_RELAXED);
  p->limit = autotune ? (tuned > 1 && tuned < cap ? tuned : 1) : (int)want;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  dpass_watch(pass, &p->waiter, &p->mu, &p->cv);
  return &p->base;
}

/* The depth the next pass starts at (before any: 1). */
static int prefetch_autotuned(const tide_dataset *ds) {
  const prefetch_ds *p = (const prefetch_ds *)ds;
  if (p->n != TIDE_DATA_AUTOTUNE) return -1;
  int tuned = __atomic_load_n(&p->tuned, __ATOMIC_RELAXED);
  return tuned > 0 ? tuned : 1;
}

static tide_status prefetch_set_autotuned(tide_dataset *ds, int value) {
  if (value < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "data: a tuned depth must be at least 1, got %d", value);
  __atomic_store_n(&((prefetch_ds *)ds)->tuned, value, __ATOMIC_RELAXED); /* each pass clamps it to its bounds */
  return TIDE_OK;
}

static tide_status prefetch_copy(tide_dataset *dst, const tide_dataset *src) {
  prefetch_ds *d = (prefetch_ds *)dst;
  const prefetch_ds *s = (const prefetch_ds *)src;
  d->n = s->n;
  d->tuned = __atomic_load_n(&s->tuned, __ATOMIC_RELAXED); /* the template's tuning, where a copy starts */
  return TIDE_OK;
}

static const dstage_ops prefetch_stage = {"prefetch", sizeof(prefetch_ds), prefetch_node_make,
                                          dstage_input_cardinality, prefetch_copy, NULL, prefetch_autotuned,
                                          prefetch_set_autotuned};
