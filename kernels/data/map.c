/* data/map.c — map: each element through a traced graph, in the consumer's
 * thread (parallel 0) or on worker threads that run the graph with no Lua. */
#include "stage.h"
#include "autotune.h"

#include <stdio.h>

/* ---- the stage ------------------------------------------------------------------ */

typedef struct map_ds {
  tide_dataset base;     /* fn: the function */
  int parallel;          /* 0, a worker count, or TIDE_DATA_AUTOTUNE (resolved by each pass) */
  int deterministic;
  /* AUTOTUNE: what the last pass left for the next (atomic) */
  int tuned;             /* its active workers + 1 (0: none yet) */
  int tuned_backoffs;    /* the tuner's backoffs (dtune_save) */
  int64_t tuned_ns;      /* ns per element at the setting it left (0: none) */
} map_ds;

static const dstage_ops map_stage;

tide_dataset *tide_dataset_map(tide_dataset *in, tide_graph *g, int parallel, int deterministic) {
  if (!g) {
    TIDE_FAIL(TIDE_ERR_VALUE, "map: the graph is NULL");
    return NULL;
  }
  if (in && tide_graph_num_inputs(g) != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "map: the function takes %d tensors but an element has %d components",
              tide_graph_num_inputs(g), in->ncomp);
    return NULL;
  }
  int nout = tide_graph_num_outputs(g);
  if (nout < 1 || nout > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "map: the function must return 1 to %d tensors, it returns %d",
              TIDE_DATA_MAX_COMPONENTS, nout);
    return NULL;
  }
  if (parallel < 0 && parallel != TIDE_DATA_AUTOTUNE) {
    TIDE_FAIL(TIDE_ERR_VALUE, "map: parallel must be a positive count or AUTOTUNE, got %d", parallel);
    return NULL;
  }
  map_ds *m = (map_ds *)dstage_new_on(&map_stage, in);
  if (!m) return NULL;
  m->base.ncomp = nout;
  dstage_set_graph(&m->base, g);
  m->parallel = parallel;
  m->deterministic = deterministic != 0;
  return &m->base;
}

/* Run ds's graph on one element (in: the input's components, released after). */
static tide_status run_graph(const tide_dataset *ds, tide_tensor *in, int n_in, tide_tensor *out, int n_out) {
  const tide_tensor *ins[TIDE_DATA_MAX_COMPONENTS] = {0};
  tide_tensor *outs[TIDE_DATA_MAX_COMPONENTS] = {0};
  for (int k = 0; k < n_in; k++) ins[k] = &in[k];
  for (int k = 0; k < n_out; k++) outs[k] = &out[k];
  tide_status st = dgraph_run(ds, n_in, ins, n_out, outs);
  delem_release(in, n_in);
  if (st) delem_release(out, n_out);
  return st;
}

/* "map: element 17: <message>" for a failure of the function. */
static tide_status fail_element(int64_t index, tide_status st, const char *msg) {
  return TIDE_FAIL(st, "map: the function failed on element %lld: %s", (long long)index, msg);
}

/* ---- in the consumer's thread --------------------------------------------------- */

typedef struct seq_map {
  dnode base;
  tide_dataset *ds;
  dnode *in;
  int64_t index;
} seq_map;

static tide_status seq_next(dnode *self, tide_tensor *out, int *end) {
  seq_map *m = (seq_map *)self;
  tide_tensor in[TIDE_DATA_MAX_COMPONENTS];
  int n_in = m->in->ncomp;
  memset(in, 0, sizeof(tide_tensor) * (size_t)n_in);
  tide_status st = dnext(m->in, in, end);
  if (st || *end) return st;
  int64_t index = m->index++;
  st = run_graph(m->ds, in, n_in, out, self->ncomp);
  if (st) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    return fail_element(index, st, msg);
  }
  return TIDE_OK;
}

static void seq_free(dnode *self) {
  seq_map *m = (seq_map *)self;
  m->in->ops->free(m->in);
  free(m);
}

static const dnode_ops seq_ops = {seq_next, seq_free, "map"};

/* ---- on worker threads ----------------------------------------------------------
 * Slots hold elements in flight. A worker takes a free slot and the input's
 * next element together (under in_mu, so sequence numbers follow the
 * input's order), runs the graph outside any lock, and marks the slot done.
 * The consumer takes the slot of the next sequence number (deterministic) or
 * any done one, oldest first. At most `cap` elements are in flight or
 * waiting: workers sleep on a full set of slots.
 *
 * AUTOTUNE (autotune.c): only workers 0 .. active-1 take elements; the
 * others park on park_cv (asleep, no spinning) until the tuner wants them.
 * Workers start as `active` first reaches them, so a pass never has more
 * than the most it was tuned to. With active 0 the caller runs the graph
 * itself once every slot is handed out (sequence numbers stay in order). */

enum { SLOT_FREE = 0, SLOT_RUNNING, SLOT_DONE };

typedef struct mslot {
  int state;
  int64_t seq;
  tide_tensor *vals; /* ncomp headers */
  derror err;
} mslot;

typedef struct par_map par_map;
typedef struct mworker {
  par_map *m;
  int index;
} mworker;

struct par_map {
  dnode base;
  map_ds *ds;
  dnode *in;
  int nthreads, started, cap;
  pthread_t *threads;
  mworker *workers;
  mslot *slots;
  pthread_mutex_t mu;    /* slots, counters, flags, active */
  pthread_cond_t cv;     /* any change the other side waits for */
  unsigned cv_seq;       /* bumped with every broadcast on cv (dsignal) */
  pthread_cond_t park_cv; /* parked workers: active grew (or the pass stops) */
  pthread_mutex_t in_mu; /* pulling from the input */
  dwaiter waiter, park_waiter;
  int64_t next_seq;      /* sequence number of the next input element */
  int64_t consumed;      /* deterministic: the next sequence number to hand out */
  int in_done;
  int64_t end_seq;       /* the input's length, once in_done */
  int active;            /* workers that take elements (nthreads unless autotuned) */
  /* AUTOTUNE: the tuner and its window, in the caller's thread */
  int autotune;
  int quiet; /* active 0 and every slot seen free: no worker takes an element until the caller raises active */
  dtune tune;
  int64_t win_t0, win_in;
  int win_n;
};

static int free_slot(par_map *m) {
  for (int i = 0; i < m->cap; i++)
    if (m->slots[i].state == SLOT_FREE) return i;
  return -1;
}

static void *worker_main(void *arg) {
  mworker *self = arg;
  par_map *m = self->m;
  dpass *pass = m->base.pass;
  dthread_enter();
  pthread_setname_np(pthread_self(), "tide-map"); /* in profiles, top and gdb */
  int n_in = m->in->ncomp, n_out = m->base.ncomp;
  tide_tensor in[TIDE_DATA_MAX_COMPONENTS];
  for (;;) {
    pthread_mutex_lock(&m->mu);
    while (self->index >= m->active && !m->in_done && !dpass_stopping(pass)) pthread_cond_wait(&m->park_cv, &m->mu);
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_lock(&m->in_mu);
    pthread_mutex_lock(&m->mu);
    int i = -1;
    while (self->index < m->active && (i = free_slot(m)) < 0 && !m->in_done && !dpass_stopping(pass))
      dwait(&m->cv, &m->mu, &m->cv_seq, pass);
    if (m->in_done || dpass_stopping(pass)) {
      pthread_mutex_unlock(&m->mu);
      pthread_mutex_unlock(&m->in_mu);
      break;
    }
    if (i < 0) { /* parked while waiting for a slot */
      pthread_mutex_unlock(&m->mu);
      pthread_mutex_unlock(&m->in_mu);
      continue;
    }
    mslot *s = &m->slots[i];
    s->state = SLOT_RUNNING;
    s->seq = m->next_seq++;
    pthread_mutex_unlock(&m->mu);
    memset(in, 0, sizeof(tide_tensor) * (size_t)n_in);
    int end = 0;
    tide_status st = dnext(m->in, in, &end);
    if (st) derror_save(&s->err, st);
    if (!st && end) {
      pthread_mutex_lock(&m->mu);
      m->in_done = 1;
      m->end_seq = s->seq;
      s->state = SLOT_FREE;
      dsignal(&m->cv, &m->cv_seq);
      pthread_cond_broadcast(&m->park_cv);
      pthread_mutex_unlock(&m->mu);
      pthread_mutex_unlock(&m->in_mu);
      break;
    }
    pthread_mutex_unlock(&m->in_mu);
    if (!st) {
      int64_t t0 = tide_hooks_now() & TIDE_HOOK_PROFILE ? tide_prof_now() : -1;
      st = run_graph(&m->ds->base, in, n_in, s->vals, n_out);
      if (TIDE_UNLIKELY(t0 >= 0)) tide_prof_record(TIDE_PROF_DATA, "map_function", NULL, t0, tide_prof_now());
      if (st) {
        derror_save(&s->err, st);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", s->err.msg ? s->err.msg : "");
        free(s->err.msg);
        fail_element(s->seq, st, msg);
        s->err.msg = strdup(tide_last_error());
      }
    }
    pthread_mutex_lock(&m->mu);
    s->state = SLOT_DONE;
    dsignal(&m->cv, &m->cv_seq);
    pthread_mutex_unlock(&m->mu);
  }
  return NULL;
}

/* The slot to hand out now, or -1. */
static int ready_slot(par_map *m) {
  int best = -1;
  for (int i = 0; i < m->cap; i++) {
    mslot *s = &m->slots[i];
    if (s->state != SLOT_DONE) continue;
    if (m->ds->deterministic) {
      if (s->seq == m->consumed) return i;
    } else if (best < 0 || s->seq < m->slots[best].seq) {
      best = i;
    }
  }
  return best;
}

/* Start workers up to `want` (the caller's thread). */
static tide_status start_workers(par_map *m, int want) {
  for (int t = m->started; t < want; t++) {
    if (dthread_start(&m->threads[t], worker_main, &m->workers[t]) != 0) return tide_last_status();
    m->started = t + 1;
  }
  return TIDE_OK;
}

/* AUTOTUNE: a window of the caller's calls is over: let the tuner set the
 * active workers, within the pass's budget less the other tuned maps'. */
static tide_status retune(par_map *m, int64_t now) {
  dpass *pass = m->base.pass;
  int64_t span = now - m->win_t0;
  int others = __atomic_load_n(&pass->map_workers, __ATOMIC_RELAXED) - m->active;
  int budget = dtune_cpu_budget(__atomic_load_n(&pass->consumer_busy, __ATOMIC_RELAXED)) - others;
  int was = m->active;
  int v = dtune_window(&m->tune, (double)span / m->win_n, (double)m->win_in / (double)span, budget < 0 ? 0 : budget);
  m->win_t0 = now, m->win_in = 0, m->win_n = 0;
  /* for the next pass: the settled setting (not one on trial), its time, the backoffs */
  __atomic_store_n(&m->ds->tuned, dtune_settled_value(&m->tune) + 1, __ATOMIC_RELAXED); /* + 1: 0 says none yet */
  if (m->tune.settled_n > 0) __atomic_store_n(&m->ds->tuned_ns, (int64_t)m->tune.settled, __ATOMIC_RELAXED);
  __atomic_store_n(&m->ds->tuned_backoffs, dtune_save(&m->tune), __ATOMIC_RELAXED);
  if (v == was) return TIDE_OK;
  m->quiet = 0;
  tide_status st = start_workers(m, v);
  if (st) v = m->started; /* run with the workers there are */
  __atomic_add_fetch(&pass->map_workers, v - was, __ATOMIC_RELAXED);
  pthread_mutex_lock(&m->mu);
  m->active = v;
  pthread_cond_broadcast(&m->park_cv);
  dsignal(&m->cv, &m->cv_seq); /* a worker waiting for a slot sees it is parked now */
  pthread_mutex_unlock(&m->mu);
  return st;
}

/* Quiet (active 0, nothing in flight): the next element made in the
 * caller's thread. No lock: workers take elements only below active, which
 * only this thread raises (clearing quiet first), and they look at it under
 * mu, which this thread held when it saw every slot free. */
static tide_status run_quiet(par_map *m, tide_tensor *out, int *end) {
  if (m->in_done) {
    *end = 1;
    return TIDE_OK;
  }
  int64_t seq = m->next_seq++;
  tide_tensor in[TIDE_DATA_MAX_COMPONENTS];
  int n_in = m->in->ncomp;
  memset(in, 0, sizeof(tide_tensor) * (size_t)n_in);
  int in_end = 0;
  tide_status st = dnext(m->in, in, &in_end);
  if (!st && in_end) {
    pthread_mutex_lock(&m->mu);
    m->in_done = 1;
    m->end_seq = seq;
    pthread_cond_broadcast(&m->park_cv); /* parked workers leave */
    pthread_mutex_unlock(&m->mu);
    *end = 1;
    return TIDE_OK;
  }
  m->consumed++;
  if (st) return st;
  st = run_graph(&m->ds->base, in, n_in, out, m->base.ncomp);
  if (st) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tide_last_error());
    return fail_element(seq, st, msg);
  }
  return TIDE_OK;
}

static tide_status par_take(par_map *m, tide_tensor *out, int *end) {
  dnode *self = &m->base;
  if (m->quiet) return dpass_stopping(self->pass) ? dstopped() : run_quiet(m, out, end);
  for (;;) {
    pthread_mutex_lock(&m->mu);
    int i;
    bool inline_now = false;
    for (;;) {
      if (dpass_stopping(self->pass)) {
        pthread_mutex_unlock(&m->mu);
        return dstopped();
      }
      if ((i = ready_slot(m)) >= 0) break;
      bool any_busy = false;
      for (int k = 0; k < m->cap && !any_busy; k++) any_busy = m->slots[k].state != SLOT_FREE;
      if (m->in_done && (m->ds->deterministic ? m->consumed >= m->end_seq : !any_busy)) {
        pthread_mutex_unlock(&m->mu);
        *end = 1;
        return TIDE_OK;
      }
      if (m->active == 0 && !any_busy) {
        inline_now = true;
        break;
      }
      dwait(&m->cv, &m->mu, &m->cv_seq, self->pass);
    }
    if (inline_now) {
      m->quiet = 1;
      pthread_mutex_unlock(&m->mu);
      return run_quiet(m, out, end);
    }
    mslot *s = &m->slots[i];
    tide_status st = TIDE_OK;
    if (s->err.st) st = derror_raise(&s->err, NULL);
    else delem_move(out, s->vals, self->ncomp);
    s->state = SLOT_FREE;
    m->consumed++;
    dsignal(&m->cv, &m->cv_seq);
    pthread_mutex_unlock(&m->mu);
    return st;
  }
}

static tide_status par_next(dnode *self, tide_tensor *out, int *end) {
  par_map *m = (par_map *)self;
  if (!m->started && m->active > 0) {
    tide_status st = start_workers(m, m->active);
    if (st) return st;
  }
  if (!m->autotune) return par_take(m, out, end);
  int64_t t0 = dtune_now();
  if (!m->win_t0) m->win_t0 = t0;
  if (m->win_n >= DTUNE_WINDOW_MIN && t0 - m->win_t0 >= DTUNE_WINDOW_NS) {
    tide_status st = retune(m, t0);
    if (st) return st;
  }
  tide_status st = par_take(m, out, end);
  m->win_in += dtune_now() - t0;
  m->win_n++;
  return st;
}

static void par_free(dnode *self) {
  par_map *m = (par_map *)self;
  pthread_mutex_lock(&m->mu);
  dsignal(&m->cv, &m->cv_seq); /* the pass is stopping: workers see it and leave */
  pthread_cond_broadcast(&m->park_cv);
  pthread_mutex_unlock(&m->mu);
  for (int t = 0; t < m->started; t++) dthread_join(m->threads[t]);
  if (m->autotune) __atomic_sub_fetch(&self->pass->map_workers, m->active, __ATOMIC_RELAXED);
  dpass_unwatch(self->pass, &m->waiter);
  dpass_unwatch(self->pass, &m->park_waiter);
  m->in->ops->free(m->in);
  for (int i = 0; i < m->cap; i++) {
    delem_release(m->slots[i].vals, self->ncomp);
    free(m->slots[i].vals);
    free(m->slots[i].err.msg);
  }
  free(m->slots);
  free(m->threads);
  free(m->workers);
  pthread_mutex_destroy(&m->mu);
  pthread_cond_destroy(&m->cv);
  pthread_cond_destroy(&m->park_cv);
  pthread_mutex_destroy(&m->in_mu);
  free(m);
}

static const dnode_ops par_ops = {par_next, par_free, "parallel_map"};

static dnode *map_node_make(tide_dataset *base, dpass *pass) {
  map_ds *ds = (map_ds *)base;
  dnode *in = dnode_make(base->input, pass);
  if (!in) return NULL;
  if (ds->parallel == 0) {
    seq_map *m = calloc(1, sizeof *m);
    if (!m) {
      in->ops->free(in);
      TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
      return NULL;
    }
    m->base = (dnode){&seq_ops, base->ncomp, pass};
    m->ds = base;
    m->in = in;
    return &m->base;
  }
  int autotune = ds->parallel == TIDE_DATA_AUTOTUNE;
  int nthreads = autotune ? tide_data_autotune_parallelism() : ds->parallel;
  par_map *m = calloc(1, sizeof *m);
  int cap = nthreads * 2; /* a result waiting per worker while each runs the next */
  if (m) {
    m->slots = calloc((size_t)cap, sizeof *m->slots);
    m->threads = calloc((size_t)nthreads, sizeof *m->threads);
    m->workers = calloc((size_t)nthreads, sizeof *m->workers);
  }
  bool ok = m && m->slots && m->threads && m->workers;
  for (int i = 0; ok && i < cap; i++) ok = (m->slots[i].vals = calloc((size_t)base->ncomp, sizeof(tide_tensor))) != NULL;
  if (!ok) {
    if (m && m->slots)
      for (int i = 0; i < cap; i++) free(m->slots[i].vals);
    if (m) free(m->slots), free(m->threads), free(m->workers);
    free(m);
    in->ops->free(in);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  m->base = (dnode){&par_ops, base->ncomp, pass};
  m->ds = ds;
  m->in = in;
  m->nthreads = nthreads;
  m->cap = cap;
  for (int t = 0; t < nthreads; t++) m->workers[t] = (mworker){m, t};
  m->active = nthreads;
  if (autotune) { /* start where the last pass settled, else in the caller's thread (workers as measured need shows) */
    int tuned = __atomic_load_n(&ds->tuned, __ATOMIC_RELAXED);
    m->autotune = 1;
    dtune_init(&m->tune, tuned > 0 ? tuned - 1 : 0, 0, nthreads);
    dtune_restore(&m->tune, __atomic_load_n(&ds->tuned_backoffs, __ATOMIC_RELAXED),
                  __atomic_load_n(&ds->tuned_ns, __ATOMIC_RELAXED));
    m->active = m->tune.value;
    __atomic_add_fetch(&pass->map_workers, m->active, __ATOMIC_RELAXED);
  }
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->cv, NULL);
  pthread_cond_init(&m->park_cv, NULL);
  pthread_mutex_init(&m->in_mu, NULL);
  dpass_watch(pass, &m->waiter, &m->mu, &m->cv);
  dpass_watch(pass, &m->park_waiter, &m->mu, &m->park_cv);
  return &m->base;
}

/* The active workers the next pass starts at (stored + 1: 0 says none yet). */
static int map_autotuned(const tide_dataset *ds) {
  const map_ds *m = (const map_ds *)ds;
  if (m->parallel != TIDE_DATA_AUTOTUNE) return -1;
  int tuned = __atomic_load_n(&m->tuned, __ATOMIC_RELAXED);
  return tuned > 0 ? tuned - 1 : 0;
}

static tide_status map_set_autotuned(tide_dataset *ds, int value) {
  map_ds *m = (map_ds *)ds;
  if (value < 0) return TIDE_FAIL(TIDE_ERR_VALUE, "data: a tuned parallelism must be at least 0, got %d", value);
  __atomic_store_n(&m->tuned, value + 1, __ATOMIC_RELAXED); /* each pass clamps it to its bounds */
  __atomic_store_n(&m->tuned_ns, 0, __ATOMIC_RELAXED);       /* measured at another setting */
  return TIDE_OK;
}

static tide_status map_copy(tide_dataset *dst, const tide_dataset *src) {
  map_ds *d = (map_ds *)dst;
  const map_ds *s = (const map_ds *)src;
  d->parallel = s->parallel, d->deterministic = s->deterministic;
  d->tuned = __atomic_load_n(&s->tuned, __ATOMIC_RELAXED); /* the template's tuning, where a copy starts */
  d->tuned_backoffs = __atomic_load_n(&s->tuned_backoffs, __ATOMIC_RELAXED);
  d->tuned_ns = __atomic_load_n(&s->tuned_ns, __ATOMIC_RELAXED);
  return TIDE_OK;
}

static const dstage_ops map_stage = {"map", sizeof(map_ds), map_node_make, dstage_input_cardinality, map_copy, NULL,
                                     map_autotuned, map_set_autotuned};
