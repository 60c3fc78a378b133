/* data/transform.c — the stages that reorder or count elements in the
 * consumer's thread: shuffle (Philox draws), take, skip and repeat. */
#include "stage.h"

/* ---- shuffle ------------------------------------------------------------------ */

/* TF's shuffle: fill a buffer of `buffer` elements; then hand out a
 * uniformly drawn one and put the next input in its place; once the input
 * ends, the last buffered element fills the gap. A buffer of 1 keeps order. */
typedef struct shuffle_node {
  dnode base;
  dnode *in;
  tide_tensor *buf;     /* cap * ncomp headers */
  int64_t cap, count;
  int filled, in_done;
  uint64_t key, counter;
  derror failed;        /* the input's failure while refilling, for the next call */
} shuffle_node;

typedef struct shuffle_ds {
  tide_dataset base;
  int64_t buffer;
  uint64_t seed;
  int reshuffle;
  uint64_t passes; /* atomic: passes begun */
} shuffle_ds;

static const dstage_ops shuffle_stage;

tide_dataset *tide_dataset_shuffle(tide_dataset *in, int64_t buffer, uint64_t seed, int reshuffle) {
  if (buffer < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shuffle: buffer_size must be at least 1, got %lld", (long long)buffer);
    return NULL;
  }
  shuffle_ds *s = (shuffle_ds *)dstage_new_on(&shuffle_stage, in);
  if (!s) return NULL;
  s->buffer = buffer, s->seed = seed, s->reshuffle = reshuffle != 0;
  return &s->base;
}

/* The pass's key: (seed, pass number) when reshuffling, else (seed, 0).
 * The Lua engine (stdlib/tide/data/stages/shuffle.lua) draws the same way. */
static uint64_t shuffle_key(shuffle_ds *ds) {
  uint64_t k = __atomic_fetch_add(&ds->passes, 1, __ATOMIC_RELAXED);
  return tide_random_derive_key(ds->seed, ds->reshuffle ? k : 0);
}

/* A draw in [0, n). */
static int64_t draw(shuffle_node *s, int64_t n) {
  uint32_t r[4];
  tide_philox4x32(s->key, s->counter++, 0, r);
  uint64_t x = ((uint64_t)r[1] << 32) | r[0];
  return (int64_t)(x % (uint64_t)n);
}

static tide_status shuffle_next(dnode *self, tide_tensor *out, int *end) {
  shuffle_node *s = (shuffle_node *)self;
  int nc = self->ncomp;
  if (s->failed.st) return derror_raise(&s->failed, NULL);
  while (!s->filled) {
    int e = 0;
    tide_status st = dnext(s->in, &s->buf[s->count * nc], &e);
    if (st) return st;
    if (e) s->in_done = 1;
    else s->count++;
    if (e || s->count == s->cap) s->filled = 1;
  }
  if (s->count == 0) {
    *end = 1;
    return TIDE_OK;
  }
  int64_t i = draw(s, s->count);
  delem_move(out, &s->buf[i * nc], nc);
  if (!s->in_done) {
    int e = 0;
    tide_status st = dnext(s->in, &s->buf[i * nc], &e);
    if (!st && !e) return TIDE_OK;
    if (st) derror_save(&s->failed, st); /* raised at the next call: this one has its element */
    else s->in_done = 1;
  }
  s->count--;
  if (i != s->count) delem_move(&s->buf[i * nc], &s->buf[s->count * nc], nc);
  return TIDE_OK;
}

static void shuffle_free(dnode *self) {
  shuffle_node *s = (shuffle_node *)self;
  s->in->ops->free(s->in);
  for (int64_t i = 0; i < s->cap; i++) delem_release(&s->buf[i * self->ncomp], self->ncomp);
  free(s->buf);
  free(s->failed.msg);
  free(s);
}

static const dnode_ops shuffle_ops = {shuffle_next, shuffle_free, "shuffle"};

static dnode *shuffle_node_make(tide_dataset *ds, dpass *pass) {
  shuffle_ds *d = (shuffle_ds *)ds;
  shuffle_node *s = calloc(1, sizeof *s);
  if (s && d->buffer <= (int64_t)1 << 28) s->buf = calloc((size_t)(d->buffer * ds->ncomp), sizeof *s->buf);
  if (!s || !s->buf) {
    free(s);
    TIDE_FAIL(TIDE_ERR_MEMORY, "shuffle: out of memory for a buffer of %lld", (long long)d->buffer);
    return NULL;
  }
  s->base = (dnode){&shuffle_ops, ds->ncomp, pass};
  s->cap = d->buffer;
  s->key = shuffle_key(d);
  if (!(s->in = dnode_make(ds->input, pass))) {
    free(s->buf);
    free(s);
    return NULL;
  }
  return &s->base;
}

static tide_status shuffle_copy(tide_dataset *dst, const tide_dataset *src) {
  shuffle_ds *d = (shuffle_ds *)dst;
  const shuffle_ds *s = (const shuffle_ds *)src;
  d->buffer = s->buffer, d->seed = s->seed, d->reshuffle = s->reshuffle; /* passes: 0, a new dataset's */
  return TIDE_OK;
}

static const dstage_ops shuffle_stage = {"shuffle", sizeof(shuffle_ds), shuffle_node_make, dstage_input_cardinality,
                                         shuffle_copy, NULL, NULL, NULL};

/* ---- take and skip ------------------------------------------------------------ */

/* take: the first n elements (n < 0: all); skip: all but the first n (n < 0: none). */
typedef struct count_ds {
  tide_dataset base;
  int64_t n;
} count_ds;

static const dstage_ops take_stage, skip_stage;

static tide_dataset *count_new(const dstage_ops *stage, tide_dataset *in, int64_t n) {
  count_ds *c = (count_ds *)dstage_new_on(stage, in);
  if (c) c->n = n;
  return c ? &c->base : NULL;
}

tide_dataset *tide_dataset_take(tide_dataset *in, int64_t n) { return count_new(&take_stage, in, n); }

tide_dataset *tide_dataset_skip(tide_dataset *in, int64_t n) { return count_new(&skip_stage, in, n); }

typedef struct count_node {
  dnode base;
  int64_t n;
  dnode *in;
  int64_t seen;
} count_node;

static tide_status take_next(dnode *self, tide_tensor *out, int *end) {
  count_node *c = (count_node *)self;
  if (c->n >= 0 && c->seen >= c->n) {
    *end = 1;
    return TIDE_OK;
  }
  tide_status st = dnext(c->in, out, end);
  if (!st && !*end) c->seen++;
  return st;
}

static tide_status skip_next(dnode *self, tide_tensor *out, int *end) {
  count_node *c = (count_node *)self;
  while (c->n < 0 || c->seen < c->n) { /* n < 0: skip everything */
    tide_status st = dnext(c->in, out, end);
    if (st || *end) return st;
    delem_release(out, self->ncomp);
    c->seen++;
  }
  return dnext(c->in, out, end);
}

static void count_free(dnode *self) {
  count_node *c = (count_node *)self;
  if (c->in) c->in->ops->free(c->in);
  free(c);
}

static const dnode_ops take_ops = {take_next, count_free, "take"};
static const dnode_ops skip_ops = {skip_next, count_free, "skip"};

static dnode *count_node_make(tide_dataset *ds, dpass *pass) {
  count_node *c = calloc(1, sizeof *c);
  if (!c) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  c->base = (dnode){ds->stage == &take_stage ? &take_ops : &skip_ops, ds->ncomp, pass};
  c->n = ((const count_ds *)ds)->n;
  if (!(c->in = dnode_make(ds->input, pass))) {
    free(c);
    return NULL;
  }
  return &c->base;
}

static int64_t take_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds), n = ((const count_ds *)ds)->n;
  if (n < 0) return in;
  if (in == TIDE_DATA_INFINITE) return n;
  if (in == TIDE_DATA_UNKNOWN) return TIDE_DATA_UNKNOWN;
  return in < n ? in : n;
}

static int64_t skip_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds), n = ((const count_ds *)ds)->n;
  if (in < 0) return in;
  if (n < 0) return 0;
  return in > n ? in - n : 0;
}

static tide_status count_copy(tide_dataset *dst, const tide_dataset *src) {
  ((count_ds *)dst)->n = ((const count_ds *)src)->n;
  return TIDE_OK;
}

static const dstage_ops take_stage = {"take", sizeof(count_ds), count_node_make, take_cardinality, count_copy, NULL,
                                      NULL, NULL};
static const dstage_ops skip_stage = {"skip", sizeof(count_ds), count_node_make, skip_cardinality, count_copy, NULL,
                                      NULL, NULL};

/* ---- repeat ------------------------------------------------------------------- */

/* count passes over the input (count < 0: forever). */
static const dstage_ops repeat_stage;

tide_dataset *tide_dataset_repeat(tide_dataset *in, int64_t count) { return count_new(&repeat_stage, in, count); }

typedef struct repeat_node {
  dnode base;
  tide_dataset *ds;
  int64_t count;
  dnode *in;          /* the current pass over the input, or NULL */
  int64_t epoch;      /* passes begun */
  int64_t in_epoch;   /* elements the current pass gave */
} repeat_node;

static tide_status repeat_next(dnode *self, tide_tensor *out, int *end) {
  repeat_node *r = (repeat_node *)self;
  for (;;) {
    if (!r->in) {
      if (r->count >= 0 && r->epoch >= r->count) {
        *end = 1;
        return TIDE_OK;
      }
      if (!(r->in = dnode_make(r->ds->input, self->pass))) return tide_last_status();
      r->epoch++;
      r->in_epoch = 0;
    }
    int e = 0;
    tide_status st = dnext(r->in, out, &e);
    if (st) return st;
    if (!e) {
      r->in_epoch++;
      return TIDE_OK;
    }
    r->in->ops->free(r->in);
    r->in = NULL;
    if (r->in_epoch == 0) { /* an empty pass: repeating it gives nothing, forever or not */
      *end = 1;
      return TIDE_OK;
    }
  }
}

static void repeat_free(dnode *self) {
  repeat_node *r = (repeat_node *)self;
  if (r->in) r->in->ops->free(r->in);
  free(r);
}

static const dnode_ops repeat_ops = {repeat_next, repeat_free, "repeat"};

static dnode *repeat_node_make(tide_dataset *ds, dpass *pass) {
  repeat_node *r = calloc(1, sizeof *r);
  if (!r) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  r->base = (dnode){&repeat_ops, ds->ncomp, pass};
  r->ds = ds;
  r->count = ((const count_ds *)ds)->n;
  return &r->base;
}

static int64_t repeat_cardinality(const tide_dataset *ds) {
  int64_t in = dstage_input_cardinality(ds), n = ((const count_ds *)ds)->n;
  if (n < 0) return in == 0 ? 0 : TIDE_DATA_INFINITE;
  if (in < 0) return in;
  return in * n;
}

static const dstage_ops repeat_stage = {"repeat", sizeof(count_ds), repeat_node_make, repeat_cardinality, count_copy,
                                        NULL, NULL, NULL};
