/* data/cache.c — the cache stage (tf.data's cache()): a pass decides at its
 * first element to read the kept pass (memory or file) or to run the input and keep it. */
#include "stage.h"
#include "tide/data_cache.h"

#include <sys/stat.h>

/* What a cache dataset keeps between passes. */
typedef struct dcache {
  char *path;     /* NULL: a memory cache */
  int ncomp;
  int32_t dtypes[TIDE_DATA_MAX_COMPONENTS];
  pthread_mutex_t mu; /* memory: guards complete, elems, count */
  int complete;   /* memory: elems holds a full pass, never changed again */
  tide_tensor *elems; /* count * ncomp headers */
  int64_t count;
} dcache;

static int64_t partial_passes; /* atomic */

int64_t tide_data_cache_partial_passes(void) { return __atomic_load_n(&partial_passes, __ATOMIC_RELAXED); }

/* A cache's store: path NULL or "" for memory; NULL with the error set. */
static dcache *dcache_new(const char *path, int ncomp, const int32_t *dtypes) {
  if (ncomp < 1 || ncomp > TIDE_DATA_MAX_COMPONENTS || !dtypes) {
    TIDE_FAIL(TIDE_ERR_VALUE, "cache: an element needs 1 to %d components, got %d", TIDE_DATA_MAX_COMPONENTS, ncomp);
    return NULL;
  }
  for (int k = 0; k < ncomp; k++)
    if (dtypes[k] < 0 || dtypes[k] >= TIDE_NUM_DTYPES) {
      TIDE_FAIL(TIDE_ERR_DTYPE, "cache: component %d has the unknown dtype code %d", k, (int)dtypes[k]);
      return NULL;
    }
  dcache *c = calloc(1, sizeof *c);
  if (!c || (path && *path && !(c->path = strdup(path)))) {
    free(c);
    TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory");
    return NULL;
  }
  c->ncomp = ncomp;
  memcpy(c->dtypes, dtypes, (size_t)ncomp * sizeof *dtypes);
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

static void dcache_free(dcache *c) {
  if (!c) return;
  for (int64_t i = 0; i < c->count; i++) delem_release(&c->elems[i * c->ncomp], c->ncomp);
  free(c->elems);
  free(c->path);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

/* ---- the stage ------------------------------------------------------------------- */

typedef struct cache_ds {
  tide_dataset base;
  dcache *cache;
} cache_ds;

static const dstage_ops cache_stage;

tide_dataset *tide_dataset_cache(tide_dataset *in, const char *path, int ncomp, const int32_t *dtypes) {
  if (in && ncomp != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "cache: %d dtypes given for elements of %d components", ncomp, in->ncomp);
    return NULL;
  }
  dcache *c = dcache_new(path, ncomp, dtypes);
  cache_ds *ds = c ? (cache_ds *)dstage_new_on(&cache_stage, in) : NULL;
  if (!ds) {
    dcache_free(c);
    return NULL;
  }
  ds->cache = c;
  return &ds->base;
}

/* ---- a pass ---------------------------------------------------------------------- */

enum mode {
  UNDECIDED,
  READ_MEMORY,
  READ_FILE,
  WRITE_MEMORY, /* running the input, keeping its elements */
  WRITE_FILE,
  PASS_ON,      /* the input failed: the pass goes on, keeping nothing */
  FINISHED
};

typedef struct cache_node {
  dnode base;
  tide_dataset *ds;
  dcache *c;
  enum mode mode;
  dnode *in;              /* write modes and PASS_ON: the pass over the input */
  tide_cache_reader *rd;  /* READ_FILE */
  tide_cache_writer *wr;  /* WRITE_FILE */
  tide_tensor *elems;     /* WRITE_MEMORY: this pass's elements (count * ncomp), or READ_MEMORY: the cache's */
  int64_t count, cap;     /* WRITE_MEMORY */
  int64_t pos;            /* READ_MEMORY: the next element */
} cache_node;

static void release_own(cache_node *n) {
  if (n->mode != WRITE_MEMORY) return;
  for (int64_t i = 0; i < n->count; i++) delem_release(&n->elems[i * n->c->ncomp], n->c->ncomp);
  free(n->elems);
  n->elems = NULL;
  n->count = n->cap = 0;
}

/* Keep nothing of this pass (its input failed, or it stopped early). */
static void discard(cache_node *n) {
  release_own(n);
  tide_cache_writer_abort(n->wr);
  n->wr = NULL;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The pass's mode, at its first element (as TF decides when its iterator starts). */
static tide_status decide(cache_node *n) {
  dcache *c = n->c;
  if (!c->path) {
    pthread_mutex_lock(&c->mu);
    int complete = c->complete;
    pthread_mutex_unlock(&c->mu);
    if (complete) {
      n->elems = c->elems; /* complete: never changed again, read without the lock */
      n->mode = READ_MEMORY;
      return TIDE_OK;
    }
  } else if (file_exists(c->path)) {
    if (!(n->rd = tide_cache_reader_open(c->path, c->ncomp, c->dtypes))) return tide_last_status();
    n->mode = READ_FILE;
    return TIDE_OK;
  } else if (!(n->wr = tide_cache_writer_open(c->path, c->ncomp, c->dtypes))) {
    return tide_last_status();
  }
  if (!(n->in = dnode_make(n->ds->input, n->base.pass))) {
    tide_cache_writer_abort(n->wr);
    n->wr = NULL;
    return tide_last_status();
  }
  n->mode = c->path ? WRITE_FILE : WRITE_MEMORY;
  return TIDE_OK;
}

/* Keep a reference to the element out[0 .. ncomp) in this pass's list. */
static tide_status keep(cache_node *n, const tide_tensor *out) {
  int nc = n->c->ncomp;
  if (n->count == n->cap) {
    int64_t cap = n->cap ? 2 * n->cap : 256;
    tide_tensor *e = realloc(n->elems, (size_t)(cap * nc) * sizeof *e);
    if (!e) return TIDE_FAIL(TIDE_ERR_MEMORY, "cache: out of memory keeping element %lld", (long long)n->count);
    for (int64_t i = 0; i < n->count * nc; i++) /* realloc moved the headers: inline data moved with them */
      if (e[i].flags & TIDE_TENSOR_INLINE) e[i].data = e[i].inline_data.bytes;
    memset(&e[n->count * nc], 0, (size_t)((cap - n->count) * nc) * sizeof *e);
    n->elems = e, n->cap = cap;
  }
  tide_tensor *dst = &n->elems[n->count * nc];
  for (int k = 0; k < nc; k++) {
    tide_status st = tide_tensor_share(&dst[k], &out[k]);
    if (st) {
      delem_release(dst, k);
      return st;
    }
  }
  n->count++;
  return TIDE_OK;
}

/* The pass reached its end: the kept pass becomes the cache. */
static tide_status complete(cache_node *n) {
  dcache *c = n->c;
  tide_status st = TIDE_OK;
  if (n->mode == WRITE_MEMORY) {
    pthread_mutex_lock(&c->mu);
    if (!c->complete) { /* two writing passes: the first to end fills the cache (TF's MemoryCache) */
      c->elems = n->elems, c->count = n->count, c->complete = 1;
      n->elems = NULL, n->count = n->cap = 0;
    }
    pthread_mutex_unlock(&c->mu);
    release_own(n);
  } else if (n->mode == WRITE_FILE) {
    st = tide_cache_writer_finish(n->wr); /* fsync, rename, fsync of the folder */
    n->wr = NULL;
  }
  n->mode = FINISHED;
  n->in->ops->free(n->in); /* its threads go now */
  n->in = NULL;
  return st;
}

static tide_status cache_next(dnode *self, tide_tensor *out, int *end) {
  cache_node *n = (cache_node *)self;
  int nc = self->ncomp;
  tide_status st;
  if (n->mode == UNDECIDED && (st = decide(n))) return st;
  switch (n->mode) {
  case READ_MEMORY:
    if (n->pos >= n->c->count) {
      *end = 1;
      return TIDE_OK;
    }
    for (int k = 0; k < nc; k++)
      if ((st = tide_tensor_share(&out[k], &n->elems[n->pos * nc + k]))) {
        delem_release(out, k);
        return st;
      }
    n->pos++;
    return TIDE_OK;
  case READ_FILE: {
    tide_tensor *outs[TIDE_DATA_MAX_COMPONENTS];
    for (int k = 0; k < nc; k++) outs[k] = &out[k];
    st = tide_cache_reader_next(n->rd, nc, outs, end);
    if (!st && *end) {
      tide_cache_reader_close(n->rd);
      n->rd = NULL;
      n->mode = FINISHED;
    }
    return st;
  }
  case WRITE_MEMORY:
  case WRITE_FILE:
  case PASS_ON:
    st = dnext(n->in, out, end);
    if (st) {
      /* the input failed: keep nothing; a stopping iterator's pass counts as partial in free */
      if (!dpass_stopping(self->pass) && n->mode != PASS_ON) {
        discard(n);
        n->mode = PASS_ON;
      }
      return st;
    }
    if (*end) {
      if (n->mode == PASS_ON) {
        n->mode = FINISHED;
        return TIDE_OK;
      }
      return complete(n);
    }
    if (n->mode == WRITE_MEMORY) st = keep(n, out);
    else if (n->mode == WRITE_FILE) {
      const tide_tensor *elem[TIDE_DATA_MAX_COMPONENTS];
      for (int k = 0; k < nc; k++) elem[k] = &out[k];
      st = tide_cache_writer_write(n->wr, nc, elem);
    }
    if (st) {
      delem_release(out, nc);
      discard(n);
      n->mode = PASS_ON;
    }
    return st;
  case FINISHED:
    *end = 1;
    return TIDE_OK;
  case UNDECIDED: break;
  }
  return TIDE_FAIL(TIDE_ERR_INTERNAL, "cache: a pass in no mode");
}

static void cache_free(dnode *self) {
  cache_node *n = (cache_node *)self;
  if (n->mode == WRITE_MEMORY || n->mode == WRITE_FILE) { /* stopped before its end */
    discard(n);
    __atomic_add_fetch(&partial_passes, 1, __ATOMIC_RELAXED);
  }
  tide_cache_reader_close(n->rd);
  if (n->in) n->in->ops->free(n->in);
  free(n);
}

static const dnode_ops cache_ops = {cache_next, cache_free, "cache"};

static dnode *cache_node_make(tide_dataset *ds, dpass *pass) {
  cache_node *n = calloc(1, sizeof *n);
  if (!n) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  n->base = (dnode){&cache_ops, ds->ncomp, pass};
  n->ds = ds;
  n->c = ((cache_ds *)ds)->cache;
  return &n->base;
}

static void cache_release(tide_dataset *ds) { dcache_free(((cache_ds *)ds)->cache); }

/* Not copied: each element's copy would need a store of its own, and a
 * file cache's copies would all write one file. */
static const dstage_ops cache_stage = {"cache", sizeof(cache_ds), cache_node_make, dstage_input_cardinality, NULL,
                                       cache_release, NULL, NULL};
