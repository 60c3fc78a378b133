/* data/transform.c — the stages that reorder or regroup elements in the
 * consumer's thread: batch, shuffle (Philox draws), take/skip and repeat. */
#include "pipeline.h"

/* ---- batch -------------------------------------------------------------------- */

/* How a batch's pending elements become its components: stacked as they
 * are (batch) or padded first (padded_batch). */
typedef tide_status (*batch_assembly)(const tide_dataset *ds, const tide_tensor *pending, int64_t count,
                                      tide_tensor *out);

typedef struct batch_node {
  dnode base;
  tide_dataset *ds;
  dnode *in;
  tide_tensor *pending; /* n * ncomp headers: the elements of the batch being made */
  int done;
  batch_assembly assemble;
} batch_node;

/* Stack component k of `count` elements (pending[i * ncomp + k]) into *out;
 * on failure *out holds nothing. */
tide_status batch_stack_component(const tide_dataset *ds, const tide_tensor *pending, int64_t count, int k,
                                  tide_tensor *out) {
  int nc = ds->ncomp;
  const tide_tensor *first = &pending[k];
  for (int64_t i = 1; i < count; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    bool same = e->dt == first->dt && e->ndim == first->ndim;
    for (int d = 0; same && d < e->ndim; d++) same = e->dims[d] == first->dims[d];
    if (!same) {
      char s0[128], si[128];
      return TIDE_FAIL(TIDE_ERR_SHAPE,
                       "batch: cannot batch tensors with different shapes in component %d: the first element "
                       "is %s %s and element %lld is %s %s; use padded_batch for elements of different shapes",
                       k, tide_dtype_name(first->dt), TIDE_SHAPE_STR(s0, first), (long long)i,
                       tide_dtype_name(e->dt), TIDE_SHAPE_STR(si, e));
    }
  }
  int64_t dims[TIDE_MAX_DIMS];
  if (first->ndim + 1 > TIDE_MAX_DIMS)
    return TIDE_FAIL(TIDE_ERR_SHAPE, "batch: component %d has rank %d; a batch of it passes the limit of %d", k,
                     first->ndim, TIDE_MAX_DIMS);
  dims[0] = count;
  for (int d = 0; d < first->ndim; d++) dims[d + 1] = first->dims[d];
  tide_status st = tide_tensor_init(out, first->dt, first->ndim + 1, dims);
  if (st) return st;
  size_t row = (size_t)first->nelem * tide_dtype_size_unchecked(first->dt);
  for (int64_t i = 0; i < count && row > 0; i++) {
    const tide_tensor *e = &pending[i * nc + k];
    char *dst = (char *)out->data + (size_t)i * row;
    if (tide_tensor_is_contiguous(e)) {
      memcpy(dst, e->data, row);
    } else {
      tide_tensor view;
      memset(&view, 0, sizeof view);
      tide_status vs = tide_tensor_wrap(&view, dst, e->dt, e->ndim, e->dims, NULL, NULL, NULL);
      if (!vs) vs = tide_tensor_copy_into(&view, e);
      tide_tensor_release(&view);
      if (vs) {
        tide_tensor_release(out);
        return vs;
      }
    }
  }
  /* string rows were copied as raw references: the batch takes its own */
  if (first->dt == TIDE_STRING && out->storage) tide_strings_own(out->storage);
  return TIDE_OK;
}

/* Stack `count` elements (pending[i * ncomp + k]) into out[k]. */
static tide_status stack(const tide_dataset *ds, const tide_tensor *pending, int64_t count, tide_tensor *out) {
  for (int k = 0; k < ds->ncomp; k++) {
    tide_status st = batch_stack_component(ds, pending, count, k, &out[k]);
    if (st) {
      delem_release(out, k);
      return st;
    }
  }
  return TIDE_OK;
}

static tide_status batch_next(dnode *self, tide_tensor *out, int *end) {
  batch_node *b = (batch_node *)self;
  int nc = self->ncomp;
  int64_t count = 0;
  tide_status st = TIDE_OK;
  while (!b->done && count < b->ds->n) {
    int e = 0;
    st = dnext(b->in, &b->pending[count * nc], &e);
    if (st) break;
    if (e) b->done = 1;
    else count++;
  }
  if (!st && (count == 0 || (b->ds->flag && count < b->ds->n))) *end = 1;
  else if (!st) st = b->assemble(b->ds, b->pending, count, out);
  for (int64_t i = 0; i < count; i++) delem_release(&b->pending[i * nc], nc);
  return st;
}

static void batch_free(dnode *self) {
  batch_node *b = (batch_node *)self;
  b->in->ops->free(b->in);
  free(b->pending);
  free(b);
}

static const dnode_ops batch_ops = {batch_next, batch_free, "batch"};
static const dnode_ops padded_batch_ops = {batch_next, batch_free, "padded_batch"};

static dnode *make_batch(tide_dataset *ds, dpass *pass, const dnode_ops *ops, batch_assembly assemble) {
  batch_node *b = calloc(1, sizeof *b);
  if (b && ds->n <= (int64_t)1 << 24) b->pending = calloc((size_t)(ds->n * ds->ncomp), sizeof *b->pending);
  if (!b || !b->pending) {
    free(b);
    TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for a batch of %lld", ops->name, (long long)ds->n);
    return NULL;
  }
  b->base = (dnode){ops, ds->ncomp, pass};
  b->ds = ds;
  b->assemble = assemble;
  if (!(b->in = dnode_make(ds->input, pass))) {
    free(b->pending);
    free(b);
    return NULL;
  }
  return &b->base;
}

dnode *dnode_batch(tide_dataset *ds, dpass *pass) {
  return make_batch(ds, pass, &batch_ops, ds->sparse_roles ? sparse_stack : stack);
}

dnode *dnode_padded_batch(tide_dataset *ds, dpass *pass) {
  return make_batch(ds, pass, &padded_batch_ops, padding_stack);
}

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

/* The pass's key: (seed, pass number) when reshuffling, else (seed, 0).
 * The Lua engine (stdlib/tide/data/stages/shuffle.lua) draws the same way. */
static uint64_t shuffle_key(tide_dataset *ds) {
  uint64_t k = __atomic_fetch_add(&ds->passes, 1, __ATOMIC_RELAXED);
  return tide_random_derive_key(ds->seed, ds->flag ? k : 0);
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

dnode *dnode_shuffle(tide_dataset *ds, dpass *pass) {
  shuffle_node *s = calloc(1, sizeof *s);
  if (s && ds->n <= (int64_t)1 << 28) s->buf = calloc((size_t)(ds->n * ds->ncomp), sizeof *s->buf);
  if (!s || !s->buf) {
    free(s);
    TIDE_FAIL(TIDE_ERR_MEMORY, "shuffle: out of memory for a buffer of %lld", (long long)ds->n);
    return NULL;
  }
  s->base = (dnode){&shuffle_ops, ds->ncomp, pass};
  s->cap = ds->n;
  s->key = shuffle_key(ds);
  if (!(s->in = dnode_make(ds->input, pass))) {
    free(s->buf);
    free(s);
    return NULL;
  }
  return &s->base;
}

/* ---- take and skip ------------------------------------------------------------ */

typedef struct count_node {
  dnode base;
  tide_dataset *ds;
  dnode *in;
  int64_t seen;
} count_node;

static tide_status take_next(dnode *self, tide_tensor *out, int *end) {
  count_node *c = (count_node *)self;
  if (c->ds->n >= 0 && c->seen >= c->ds->n) {
    *end = 1;
    return TIDE_OK;
  }
  tide_status st = dnext(c->in, out, end);
  if (!st && !*end) c->seen++;
  return st;
}

static tide_status skip_next(dnode *self, tide_tensor *out, int *end) {
  count_node *c = (count_node *)self;
  while (c->ds->n < 0 || c->seen < c->ds->n) { /* n < 0: skip everything */
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

dnode *dnode_take_skip(tide_dataset *ds, dpass *pass) {
  count_node *c = calloc(1, sizeof *c);
  if (!c) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  c->base = (dnode){ds->kind == DS_TAKE ? &take_ops : &skip_ops, ds->ncomp, pass};
  c->ds = ds;
  if (!(c->in = dnode_make(ds->input, pass))) {
    free(c);
    return NULL;
  }
  return &c->base;
}

/* ---- repeat ------------------------------------------------------------------- */

typedef struct repeat_node {
  dnode base;
  tide_dataset *ds;
  dnode *in;          /* the current pass over the input, or NULL */
  int64_t epoch;      /* passes begun */
  int64_t in_epoch;   /* elements the current pass gave */
} repeat_node;

static tide_status repeat_next(dnode *self, tide_tensor *out, int *end) {
  repeat_node *r = (repeat_node *)self;
  for (;;) {
    if (!r->in) {
      if (r->ds->n >= 0 && r->epoch >= r->ds->n) {
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

dnode *dnode_repeat(tide_dataset *ds, dpass *pass) {
  repeat_node *r = calloc(1, sizeof *r);
  if (!r) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  r->base = (dnode){&repeat_ops, ds->ncomp, pass};
  r->ds = ds;
  return &r->base;
}
