/* data/interleave.c — interleave over a captured function: the stage, and
 * the node that reads the datasets made for each input element in TF's order.
 *
 * Each input element runs the argument graph (the function's work on the
 * element) and its template gives that element's dataset (template.c). The
 * inner datasets ("inners") each get a pass of their own, so one
 * can end (its threads joined) while the others go on.
 *
 * Order (deterministic): TF's InterleaveDataset. `cycle` slots are visited
 * in turn, `block` elements each; an empty slot takes the next input
 * element's inner when the cursor reaches it; an inner that ends frees its
 * slot and the cursor moves on. With p > 1 threads, the consumer pulls
 * input elements ahead into a queue of p "future" inners (in input order,
 * so the slot each one lands in is the one the sequential order gives), and
 * the threads open and read the current and future inners into small
 * buffers, the inner under the cursor first. The consumer reads the inner
 * under the cursor itself when no thread holds it. */
#include "stage.h"

#include <stdio.h>

/* ---- the stage ------------------------------------------------------------------ */

typedef struct interleave_ds {
  tide_dataset base;     /* input: the input elements; fn: the argument graph (or none) */
  tide_dataset *tmpl;    /* the template (held): the function's dataset (template.c) */
  int64_t cycle, block;
  int parallel;          /* 0 (in the consumer's thread) or the threads, > 1 */
  int deterministic;
} interleave_ds;

static const dstage_ops interleave_stage;

tide_dataset *tide_dataset_interleave(tide_dataset *in, tide_graph *g, tide_dataset *inner, int64_t cycle,
                                      int64_t block, int parallel, int deterministic) {
  if (!in || !inner) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: the input and the template must not be NULL");
    return NULL;
  }
  if (cycle < 1 || block < 1 || cycle > 1 << 20) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: cycle_length (%lld) and block_length (%lld) must be at least 1",
              (long long)cycle, (long long)block);
    return NULL;
  }
  if (parallel < 0 || parallel > 1024) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: parallel must be 0 to 1024, got %d", parallel);
    return NULL;
  }
  if (g && tide_graph_num_inputs(g) != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: the function takes %d tensors but an element has %d components",
              tide_graph_num_inputs(g), in->ncomp);
    return NULL;
  }
  if (g && tide_graph_num_outputs(g) > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "interleave: the function's datasets take %d tensors (at most %d)",
              tide_graph_num_outputs(g), TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  interleave_ds *ds = (interleave_ds *)dstage_new(&interleave_stage, inner->ncomp);
  if (!ds) return NULL;
  ds->base.input = dstage_hold(in);
  ds->tmpl = dstage_hold(inner);
  if (g) dstage_set_graph(&ds->base, g);
  ds->cycle = cycle, ds->block = block, ds->parallel = parallel > 1 ? parallel : 0;
  ds->deterministic = deterministic != 0;
  return &ds->base;
}

/* ---- inners ------------------------------------------------------------------- */

typedef struct ient {
  tide_tensor *vals; /* ncomp headers */
  derror err;
} ient;

typedef struct inner {
  int64_t index;      /* its input element's position (-1: an input error, in err0) */
  tide_tensor *elem;  /* the input element, until opened */
  derror err0;        /* the input's failure at this position */
  tide_dataset *ds;   /* made of the element */
  dnode *node;        /* the top of its pass (NULL until opened) */
  dpass pass;         /* its own: it ends alone */
  ient *buf;          /* a ring of made elements (and failures) */
  int head, count, cap;
  int claimed;        /* a thread is reading it (then only that thread touches node) */
  int done;           /* its end is reached: nothing more will be queued */
} inner;

static void inner_free(inner *x, int nin, int nout) {
  if (!x) return;
  /* As an iterator's end: a thread of the inner's (a parallel map's worker
   * past the inner's take) stuck in a graph stops at its next step, so the
   * node's free can join it. */
  tide_interrupt_raise(x->pass.intr);
  dpass_stop(&x->pass);
  if (x->node) x->node->ops->free(x->node);
  tide_interrupt_release(x->pass.intr);
  tide_dataset_free(x->ds);
  if (x->elem) {
    delem_release(x->elem, nin);
    free(x->elem);
  }
  free(x->err0.msg);
  for (int i = 0; i < x->cap && x->buf; i++) {
    if (x->buf[i].vals) delem_release(x->buf[i].vals, nout);
    free(x->buf[i].vals);
    free(x->buf[i].err.msg);
  }
  free(x->buf);
  pthread_mutex_destroy(&x->pass.mu);
  free(x);
}

/* `intr`: the interleave's own pass's token, the parent of the inner's. */
static inner *inner_new(int64_t index, int cap, int nout, tide_interrupt *intr) {
  inner *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  pthread_mutex_init(&x->pass.mu, NULL);
  if (!(x->pass.intr = tide_interrupt_new(intr))) {
    pthread_mutex_destroy(&x->pass.mu);
    free(x);
    return NULL;
  }
  x->index = index;
  x->cap = cap;
  bool ok = (x->buf = calloc((size_t)cap, sizeof *x->buf)) != NULL;
  for (int i = 0; ok && i < cap; i++) ok = (x->buf[i].vals = calloc((size_t)nout, sizeof(tide_tensor))) != NULL;
  if (!ok) {
    inner_free(x, 0, nout);
    return NULL;
  }
  return x;
}

/* ---- the node ----------------------------------------------------------------- */

typedef struct ilv_node {
  dnode base;
  const interleave_ds *ds;
  dnode *in;
  int nin;
  int64_t cycle, block;
  inner **slots;        /* cycle entries; NULL: empty */
  inner **future;       /* pulled ahead, input order (a ring of ahead entries) */
  int fhead, nfuture, ahead;
  int64_t cursor, block_index, pulled;
  int in_done;
  int nthreads, started, stopping;
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t cv, work_cv; /* the consumer's wait; the threads' wait for work */
  unsigned seq, work_seq;
  int consumer_waits, idle;
  dwaiter waiter, work_waiter;
} ilv_node;

/* Open x: run the argument graph on its element and make its pass. */
static tide_status inner_open(ilv_node *n, inner *x) {
  tide_tensor args[TIDE_DATA_MAX_COMPONENTS];
  tide_graph *g = n->ds->base.fn.graph;
  int nargs = g ? tide_graph_num_outputs(g) : 0;
  tide_status st = TIDE_OK;
  memset(args, 0, sizeof args);
  if (nargs > TIDE_DATA_MAX_COMPONENTS) {
    st = TIDE_FAIL(TIDE_ERR_VALUE, "the function's datasets take %d tensors (at most %d)", nargs,
                   TIDE_DATA_MAX_COMPONENTS);
    nargs = 0;
  } else if (g) {
    const tide_tensor *ins[TIDE_DATA_MAX_COMPONENTS];
    tide_tensor *outs[TIDE_DATA_MAX_COMPONENTS];
    for (int k = 0; k < n->nin; k++) ins[k] = &x->elem[k];
    for (int k = 0; k < nargs; k++) outs[k] = &args[k];
    st = dgraph_run(&n->ds->base, n->nin, ins, nargs, outs);
  }
  delem_release(x->elem, n->nin);
  free(x->elem);
  x->elem = NULL;
  if (!st && !(x->ds = dtemplate_instance(n->ds->tmpl, args, nargs))) st = tide_last_status();
  delem_release(args, nargs);
  if (!st && !(x->node = dnode_make(x->ds, &x->pass))) st = tide_last_status();
  return st;
}

/* Make up to `room` elements of x (claimed; lock not held) straight into
 * its ring from `tail` on: entries the consumer does not read until count
 * grows (head + count stays put while it takes elements). Then queue them
 * under the lock, which this returns holding. Stops at x's end or a failure
 * (queued at its place, naming the input element). Filling in bursts takes
 * the lock once per burst instead of once per element. */
static void inner_fill(ilv_node *n, inner *x, int tail, int room) {
  int k = 0, end = 0, nc = n->base.ncomp;
  bool open_failed = false;
  while (k < room && !end) {
    ient *e = &x->buf[(tail + k) % x->cap];
    /* Under the inner's token: the threads its pass starts take it, and its end raises it. */
    tide_interrupt *prev = tide_interrupt_swap(x->pass.intr);
    tide_status st = x->node ? TIDE_OK : inner_open(n, x);
    if (!st) st = dnext(x->node, e->vals, &end);
    tide_interrupt_swap(prev);
    if (st) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", tide_last_error());
      delem_release(e->vals, nc);
      TIDE_FAIL(st, "interleave: input element %lld: %s", (long long)x->index, msg);
      derror_save(&e->err, st);
      open_failed = !x->node; /* it could not be opened: nothing follows */
      k++;
      break;
    }
    if (!end) k++;
    if (dpass_stopping(&x->pass)) break;
    if (k && __atomic_load_n(&n->consumer_waits, __ATOMIC_RELAXED)) { /* someone waits: hand over what is made */
      pthread_mutex_lock(&n->mu);
      x->count += k;
      dsignal(&n->cv, &n->seq);
      pthread_mutex_unlock(&n->mu);
      tail = (tail + k) % x->cap, room -= k, k = 0;
    }
  }
  pthread_mutex_lock(&n->mu);
  x->count += k;
  if (end || open_failed) x->done = 1;
  if (n->consumer_waits) dsignal(&n->cv, &n->seq);
}

/* Claim x (lock held) and fill up to `limit` elements of it. */
static void inner_claim_fill(ilv_node *n, inner *x, int limit) {
  x->claimed = 1;
  int tail = (x->head + x->count) % x->cap, room = x->cap - x->count;
  pthread_mutex_unlock(&n->mu);
  inner_fill(n, x, tail, room < limit ? room : limit);
  x->claimed = 0;
}

/* The inner a thread should read next: the current ones from the cursor on,
 * then the future ones in order; NULL when none needs work. */
static inner *pick(ilv_node *n) {
  for (int64_t i = 0; i < n->cycle; i++) {
    inner *x = n->slots[(n->cursor + i) % n->cycle];
    if (x && !x->claimed && !x->done && x->count < x->cap) return x;
  }
  for (int i = 0; i < n->nfuture; i++) {
    inner *x = n->future[(n->fhead + i) % n->ahead];
    if (x->index >= 0 && !x->claimed && !x->done && x->count < x->cap) return x;
  }
  return NULL;
}

static void *worker_main(void *arg) {
  ilv_node *n = arg;
  dthread_enter();
  pthread_setname_np(pthread_self(), "tide-interleave");
  pthread_mutex_lock(&n->mu);
  for (;;) {
    if (n->stopping || dpass_stopping(n->base.pass)) break;
    inner *x = pick(n);
    if (!x) {
      n->idle++;
      dwait(&n->work_cv, &n->mu, &n->work_seq, n->base.pass);
      n->idle--;
      continue;
    }
    inner_claim_fill(n, x, x->cap); /* a burst: until its ring is full or it ends */
    if (n->consumer_waits) dsignal(&n->cv, &n->seq);
  }
  pthread_mutex_unlock(&n->mu);
  return NULL;
}

static void wake_workers(ilv_node *n) {
  if (n->idle) dsignal(&n->work_cv, &n->work_seq);
}

/* An inner's ring (threads): max(8, 2 x block) elements, at most 2048. With
 * cycle + p inners open that bounds what a pass holds; 8 keeps a thread's
 * bursts long enough that the lock is taken once per several cheap elements. */
static int inner_cap(const ilv_node *n) { return n->block > 4 ? (int)(n->block < 1024 ? 2 * n->block : 2048) : 8; }

/* Pull input elements ahead until p future inners wait (threads only);
 * lock not held. An input failure is queued at its position. */
static tide_status top_up(ilv_node *n) {
  while (!n->in_done && n->nfuture < n->ahead) {
    tide_tensor *elem = calloc((size_t)n->nin, sizeof(tide_tensor));
    if (!elem) return TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    int end = 0;
    tide_status st = dnext(n->in, elem, &end);
    if (!st && end) {
      free(elem);
      n->in_done = 1;
      break;
    }
    inner *x = inner_new(st ? -1 : n->pulled, inner_cap(n), n->base.ncomp, n->base.pass->intr);
    if (!x) {
      delem_release(elem, n->nin);
      free(elem);
      return TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    }
    if (st) {
      derror_save(&x->err0, st);
      free(elem);
    } else {
      x->elem = elem;
      n->pulled++;
    }
    pthread_mutex_lock(&n->mu);
    n->future[(n->fhead + n->nfuture) % n->ahead] = x;
    n->nfuture++;
    wake_workers(n);
    pthread_mutex_unlock(&n->mu);
  }
  return TIDE_OK;
}

/* The next input element's inner for an empty slot (lock not held): a
 * future one, or (no threads) one pulled now. NULL with *st set or at the end. */
static inner *next_inner(ilv_node *n, tide_status *st) {
  *st = TIDE_OK;
  if (n->nthreads) {
    if ((*st = top_up(n))) return NULL;
    pthread_mutex_lock(&n->mu);
    inner *x = NULL;
    if (n->nfuture) {
      x = n->future[n->fhead];
      n->fhead = (n->fhead + 1) % n->ahead;
      n->nfuture--;
    }
    pthread_mutex_unlock(&n->mu);
    return x;
  }
  if (n->in_done) return NULL;
  tide_tensor *elem = calloc((size_t)n->nin, sizeof(tide_tensor));
  if (!elem) {
    *st = TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  int end = 0;
  if ((*st = dnext(n->in, elem, &end)) || end) {
    free(elem);
    if (end) n->in_done = 1;
    return NULL;
  }
  inner *x = inner_new(n->pulled++, 1, n->base.ncomp, n->base.pass->intr);
  if (!x) {
    delem_release(elem, n->nin);
    free(elem);
    *st = TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  x->elem = elem;
  return x;
}

static void advance(ilv_node *n) {
  n->block_index = 0;
  n->cursor = (n->cursor + 1) % n->cycle;
}

static tide_status ilv_next(dnode *self, tide_tensor *out, int *end) {
  ilv_node *n = (ilv_node *)self;
  if (n->started < n->nthreads) {
    if (top_up(n)) return tide_last_status();
    for (; n->started < n->nthreads; n->started++)
      if (dthread_start(&n->threads[n->started], worker_main, n) != 0) return tide_last_status();
  }
  pthread_mutex_lock(&n->mu);
  for (;;) {
    if (dpass_stopping(self->pass)) {
      pthread_mutex_unlock(&n->mu);
      return dstopped();
    }
    inner *x = n->slots[n->cursor];
    if (!x) { /* an empty slot takes the next input element's inner */
      pthread_mutex_unlock(&n->mu);
      tide_status st;
      x = next_inner(n, &st);
      if (st) return st;
      pthread_mutex_lock(&n->mu);
      if (x && x->index < 0) { /* the input failed here: raise it, the slot stays empty */
        pthread_mutex_unlock(&n->mu);
        st = derror_raise(&x->err0, NULL);
        inner_free(x, n->nin, self->ncomp);
        return st;
      }
      if (x) {
        n->slots[n->cursor] = x;
        continue;
      }
      bool any = false;
      for (int64_t i = 0; i < n->cycle && !any; i++) any = n->slots[i] != NULL;
      if (!any) {
        pthread_mutex_unlock(&n->mu);
        *end = 1;
        return TIDE_OK;
      }
      advance(n);
      continue;
    }
    if (x->count > 0) {
      ient *e = &x->buf[x->head];
      tide_status st = TIDE_OK;
      if (e->err.st) st = derror_raise(&e->err, NULL);
      else delem_move(out, e->vals, self->ncomp);
      x->head = (x->head + 1) % x->cap;
      x->count--;
      if (!st && ++n->block_index == n->block) advance(n);
      if (!x->claimed && !x->done && x->count <= x->cap / 2) wake_workers(n);
      pthread_mutex_unlock(&n->mu);
      return st;
    }
    if (x->done && !x->claimed) { /* it ended: its slot frees and the cursor moves on */
      n->slots[n->cursor] = NULL;
      advance(n);
      pthread_mutex_unlock(&n->mu);
      inner_free(x, n->nin, self->ncomp);
      pthread_mutex_lock(&n->mu);
      continue;
    }
    if (!n->ds->deterministic) { /* not deterministic: another slot's ready element (or end) goes first */
      int64_t j = 1;
      for (; j < n->cycle; j++) {
        inner *y = n->slots[(n->cursor + j) % n->cycle];
        if (y && (y->count > 0 || (y->done && !y->claimed))) break;
      }
      if (j < n->cycle) {
        n->cursor = (n->cursor + j) % n->cycle;
        n->block_index = 0;
        continue;
      }
    }
    if (!x->claimed) { /* no thread holds it: read it here, what this block still takes */
      inner_claim_fill(n, x, (int)(n->block - n->block_index < x->cap ? n->block - n->block_index : x->cap));
      continue;
    }
    __atomic_store_n(&n->consumer_waits, 1, __ATOMIC_RELAXED);
    dwait(&n->cv, &n->mu, &n->seq, self->pass);
    __atomic_store_n(&n->consumer_waits, 0, __ATOMIC_RELAXED);
  }
}

static void ilv_free(dnode *self) {
  ilv_node *n = (ilv_node *)self;
  pthread_mutex_lock(&n->mu);
  n->stopping = 1;
  dsignal(&n->work_cv, &n->work_seq);
  /* a thread inside an inner's pass waits on that pass: stop them all */
  for (int64_t i = 0; i < n->cycle; i++)
    if (n->slots[i]) dpass_stop(&n->slots[i]->pass);
  for (int i = 0; i < n->nfuture; i++) dpass_stop(&n->future[(n->fhead + i) % n->ahead]->pass);
  pthread_mutex_unlock(&n->mu);
  for (int t = 0; t < n->started; t++) dthread_join(n->threads[t]);
  dpass_unwatch(self->pass, &n->waiter);
  dpass_unwatch(self->pass, &n->work_waiter);
  for (int64_t i = 0; i < n->cycle; i++) inner_free(n->slots[i], n->nin, self->ncomp);
  for (int i = 0; i < n->nfuture; i++) inner_free(n->future[(n->fhead + i) % n->ahead], n->nin, self->ncomp);
  n->in->ops->free(n->in);
  free(n->slots);
  free(n->future);
  free(n->threads);
  pthread_mutex_destroy(&n->mu);
  pthread_cond_destroy(&n->cv);
  pthread_cond_destroy(&n->work_cv);
  free(n);
}

static const dnode_ops ilv_ops = {ilv_next, ilv_free, "interleave"};

static dnode *interleave_node_make(tide_dataset *base, dpass *pass) {
  const interleave_ds *ds = (const interleave_ds *)base;
  dnode *in = dnode_make(base->input, pass);
  if (!in) return NULL;
  ilv_node *n = calloc(1, sizeof *n);
  int ahead = ds->parallel > 0 ? ds->parallel : 1;
  if (n) {
    n->slots = calloc((size_t)ds->cycle, sizeof *n->slots);
    n->future = calloc((size_t)ahead, sizeof *n->future);
    n->threads = calloc((size_t)ahead, sizeof *n->threads);
  }
  if (!n || !n->slots || !n->future || !n->threads) {
    if (n) free(n->slots), free(n->future), free(n->threads);
    free(n);
    in->ops->free(in);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  n->base = (dnode){&ilv_ops, base->ncomp, pass};
  n->ds = ds;
  n->in = in;
  n->nin = in->ncomp;
  n->cycle = ds->cycle, n->block = ds->block;
  n->nthreads = ds->parallel;
  n->ahead = ahead;
  pthread_mutex_init(&n->mu, NULL);
  pthread_cond_init(&n->cv, NULL);
  pthread_cond_init(&n->work_cv, NULL);
  dpass_watch(pass, &n->waiter, &n->mu, &n->cv);
  dpass_watch(pass, &n->work_waiter, &n->mu, &n->work_cv);
  return &n->base;
}

static int64_t interleave_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds);
  return in == TIDE_DATA_INFINITE ? in : TIDE_DATA_UNKNOWN;
}

/* A copy (a nested interleave inside a template) shares its template: that
 * is copied for each of the copy's own elements. */
static tide_status interleave_copy(tide_dataset *dst, const tide_dataset *src) {
  interleave_ds *d = (interleave_ds *)dst;
  const interleave_ds *s = (const interleave_ds *)src;
  d->tmpl = dstage_hold(s->tmpl);
  d->cycle = s->cycle, d->block = s->block, d->parallel = s->parallel, d->deterministic = s->deterministic;
  return TIDE_OK;
}

static void interleave_release(tide_dataset *ds) { tide_dataset_free(((interleave_ds *)ds)->tmpl); }

static const dstage_ops interleave_stage = {"interleave", sizeof(interleave_ds), interleave_node_make,
                                            interleave_cardinality, interleave_copy, interleave_release, NULL, NULL};
