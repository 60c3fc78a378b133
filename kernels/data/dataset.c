/* data/dataset.c — dataset descriptions (making, references, cardinality),
 * iterators over them, and the pipeline's thread and stop helpers. */
#include "pipeline.h"
#include "tide/data_cache.h"
#include "autotune.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
#include <sched.h>
#include "../core/parallel.h"

#include <signal.h>

static int live_threads; /* atomic */

/* ---- descriptions ------------------------------------------------------------ */

static tide_dataset *ds_new(enum dkind kind, tide_dataset *input, int ncomp) {
  if (!input && kind != DS_SOURCE && kind != DS_SLICES && kind != DS_RANGE && kind != DS_ZIP && kind != DS_CONCAT) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: the input dataset is NULL");
    return NULL;
  }
  tide_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  ds->refs = 1;
  ds->kind = kind;
  ds->ncomp = input ? input->ncomp : ncomp;
  if (input) {
    __atomic_add_fetch(&input->refs, 1, __ATOMIC_RELAXED);
    ds->input = input;
  }
  return ds;
}

void tide_dataset_free(tide_dataset *ds) {
  while (ds && __atomic_sub_fetch(&ds->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    tide_dataset *input = ds->input;
    if (ds->tensors) {
      delem_release(ds->tensors, ds->ncomp);
      free(ds->tensors);
    }
    for (int k = 0; ds->row_offsets && k < ds->ncomp; k++) free(ds->row_offsets[k]);
    free(ds->row_offsets);
    if (ds->kind == DS_SOURCE && ds->src.free_ctx) ds->src.free_ctx(ds->src.ctx);
    for (int i = 0; i < ds->ninputs; i++) tide_dataset_free(ds->inputs[i]);
    free(ds->inputs);
    free(ds->pad_shapes);
    free(ds->pad_values);
    free(ds->sparse_roles);
    if (ds->cap_vals) {
      delem_release(ds->cap_vals, ds->ncaps);
      free(ds->cap_vals);
    }
    if (ds->graph) tide_graph_free(ds->graph);
    dcache_free(ds->cache);
    free(ds);
    ds = input;
  }
}

int tide_dataset_num_components(const tide_dataset *ds) { return ds ? ds->ncomp : 0; }

tide_dataset *tide_dataset_from_source(const tide_data_source *src) {
  if (!src || !src->next || src->ncomp < 1 || src->ncomp > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: a source needs next() and 1 to %d components", TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_SOURCE, NULL, src->ncomp);
  if (ds) ds->src = *src;
  return ds;
}

tide_dataset *tide_dataset_slices(int n, const tide_tensor *const *tensors) {
  if (n < 1 || n > TIDE_DATA_MAX_COMPONENTS || !tensors) {
    TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: expected 1 to %d tensors, got %d", TIDE_DATA_MAX_COMPONENTS, n);
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    const tide_tensor *t = tensors[k];
    char s0[128], sk[128];
    if (!t || (t->flags & TIDE_TENSOR_SYMBOLIC) || (!t->data && t->nelem > 0)) {
      TIDE_FAIL(TIDE_ERR_VALUE, "from_tensor_slices: component %d is not an eager tensor with data", k);
      return NULL;
    }
    if (t->ndim < 1) {
      TIDE_FAIL(TIDE_ERR_SHAPE, "from_tensor_slices: component %d is a scalar; slicing needs at least one dimension",
                k);
      return NULL;
    }
    if (t->dims[0] != tensors[0]->dims[0]) {
      TIDE_FAIL(TIDE_ERR_SHAPE,
                "from_tensor_slices: the components have different first dimensions: component 0 is %s, "
                "component %d is %s",
                TIDE_SHAPE_STR(s0, tensors[0]), k, TIDE_SHAPE_STR(sk, t));
      return NULL;
    }
  }
  tide_dataset *ds = ds_new(DS_SLICES, NULL, n);
  if (!ds) return NULL;
  ds->n = tensors[0]->dims[0];
  ds->tensors = calloc((size_t)n, sizeof *ds->tensors);
  if (!ds->tensors) {
    free(ds);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  for (int k = 0; k < n; k++) {
    const tide_tensor *t = tensors[k];
    tide_status st = dtensor_own_contiguous(&ds->tensors[k], t); /* rows are views of it */
    if (st) {
      tide_dataset_free(ds);
      return NULL;
    }
  }
  return ds;
}

tide_dataset *tide_dataset_range(int64_t start, int64_t stop, int64_t step, int dtype) {
  if (step == 0) {
    TIDE_FAIL(TIDE_ERR_VALUE, "range: step must not be 0");
    return NULL;
  }
  if (dtype != TIDE_INT32 && dtype != TIDE_INT64) {
    TIDE_FAIL(TIDE_ERR_DTYPE, "range: dtype must be int32 or int64, got %s", tide_dtype_name(dtype));
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_RANGE, NULL, 1);
  if (!ds) return NULL;
  ds->n = start, ds->stop = stop, ds->step = step, ds->dtype = dtype;
  return ds;
}

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
  tide_dataset *ds = ds_new(DS_MAP, in, 0);
  if (!ds) return NULL;
  ds->ncomp = nout;
  tide_graph_retain(g); /* a pass's threads may outlive the caller's reference */
  ds->graph = g;
  ds->parallel = parallel; /* AUTOTUNE: resolved by each pass (map.c) */
  ds->flag = deterministic != 0;
  return ds;
}

tide_dataset *tide_dataset_filter(tide_dataset *in, tide_graph *g) {
  if (!g) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the graph is NULL");
    return NULL;
  }
  if (in && tide_graph_num_inputs(g) != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the predicate takes %d tensors but an element has %d components",
              tide_graph_num_inputs(g), in->ncomp);
    return NULL;
  }
  if (tide_graph_num_outputs(g) != 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "filter: the predicate must return one bool scalar, it returns %d tensors",
              tide_graph_num_outputs(g));
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_FILTER, in, 0);
  if (!ds) return NULL;
  tide_graph_retain(g);
  ds->graph = g;
  return ds;
}

tide_status tide_dataset_bind_captures(tide_dataset *ds, int first) {
  if (!ds || (ds->kind != DS_MAP && ds->kind != DS_FILTER && ds->kind != DS_INTERLEAVE) || !ds->graph)
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: only a map, filter or interleave with a graph can bind captures");
  int n = tide_graph_num_captures(ds->graph);
  if (first < 0 || n < 1 || first + n > TIDE_DATA_MAX_COMPONENTS)
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: cannot bind %d capture(s) to the function's results %d.. (at most %d)",
                     n, first, TIDE_DATA_MAX_COMPONENTS);
  if (ds->ncaps || ds->cap_vals)
    return TIDE_FAIL(TIDE_ERR_VALUE, "interleave: this stage's captures are bound already");
  ds->cap_first = first, ds->ncaps = n;
  return TIDE_OK;
}

tide_status dtensor_own_contiguous(tide_tensor *dst, const tide_tensor *t) {
  if (tide_tensor_is_contiguous(t) && !(t->flags & TIDE_TENSOR_INLINE) && t->storage) return tide_tensor_share(dst, t);
  tide_status st = tide_tensor_init_heap(dst, t->dt, t->ndim, t->dims);
  if (!st && t->nelem > 0) st = tide_tensor_copy_into(dst, t);
  return st;
}

tide_status dgraph_run(const tide_dataset *ds, int n_in, const tide_tensor *const *in, int n_out,
                       tide_tensor *const *out) {
  if (!ds->ncaps) return tide_graph_run(ds->graph, n_in, in, n_out, out);
  if (!ds->cap_vals)
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: this dataset uses an interleave function's traced element; only that "
                                     "interleave can read it");
  const tide_tensor *caps[TIDE_DATA_MAX_COMPONENTS];
  for (int k = 0; k < ds->ncaps; k++) caps[k] = &ds->cap_vals[k];
  return tide_graph_run_captured(ds->graph, n_in, in, ds->ncaps, caps, n_out, out);
}

/* zip or concatenate over n datasets (held). */
static tide_dataset *multi(enum dkind kind, const char *what, int n, tide_dataset *const *inputs) {
  if (n < 1 || !inputs) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: expected at least one dataset, got %d", what, n);
    return NULL;
  }
  int ncomp = 0;
  for (int i = 0; i < n; i++) {
    if (!inputs[i]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "%s: dataset %d is NULL", what, i);
      return NULL;
    }
    if (kind == DS_CONCAT && inputs[i]->ncomp != inputs[0]->ncomp) {
      TIDE_FAIL(TIDE_ERR_VALUE, "%s: the datasets' elements have different numbers of components (%d and %d)", what,
                inputs[0]->ncomp, inputs[i]->ncomp);
      return NULL;
    }
    ncomp = kind == DS_ZIP ? ncomp + inputs[i]->ncomp : inputs[0]->ncomp;
  }
  if (ncomp > TIDE_DATA_MAX_COMPONENTS) {
    TIDE_FAIL(TIDE_ERR_VALUE, "%s: an element would have %d components (at most %d)", what, ncomp,
              TIDE_DATA_MAX_COMPONENTS);
    return NULL;
  }
  tide_dataset *ds = ds_new(kind, NULL, ncomp);
  if (!ds) return NULL;
  if (!(ds->inputs = calloc((size_t)n, sizeof *ds->inputs))) {
    free(ds);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    __atomic_add_fetch(&inputs[i]->refs, 1, __ATOMIC_RELAXED);
    ds->inputs[i] = inputs[i];
  }
  ds->ninputs = n;
  return ds;
}

tide_dataset *tide_dataset_zip(int n, tide_dataset *const *inputs) { return multi(DS_ZIP, "zip", n, inputs); }

tide_dataset *tide_dataset_concatenate(int n, tide_dataset *const *inputs) {
  return multi(DS_CONCAT, "concatenate", n, inputs);
}

tide_dataset *tide_dataset_batch(tide_dataset *in, int64_t n, int drop_remainder) {
  if (n < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "batch: batch_size must be at least 1, got %lld", (long long)n);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_BATCH, in, 0);
  if (ds) ds->n = n, ds->flag = drop_remainder != 0;
  return ds;
}

tide_dataset *tide_dataset_sparse_batch(tide_dataset *in, int64_t n, int drop_remainder,
                                        const unsigned char *sparse_roles) {
  if (!sparse_roles) return tide_dataset_batch(in, n, drop_remainder);
  for (int k = 0; in && k < in->ncomp; k++) {
    if (!sparse_roles[k]) continue;
    if (k + 2 >= in->ncomp || sparse_roles[k + 1] || sparse_roles[k + 2]) {
      TIDE_FAIL(TIDE_ERR_VALUE, "batch: component %d marks a SparseTensor's indices, but its values and dense_shape "
                "(components %d and %d) are missing or marked too", k, k + 1, k + 2);
      return NULL;
    }
    k += 2;
  }
  tide_dataset *ds = tide_dataset_batch(in, n, drop_remainder);
  if (!ds) return NULL;
  ds->sparse_roles = malloc((size_t)ds->ncomp);
  if (!ds->sparse_roles) {
    tide_dataset_free(ds);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  memcpy(ds->sparse_roles, sparse_roles, (size_t)ds->ncomp);
  return ds;
}

tide_dataset *tide_dataset_padded_batch(tide_dataset *in, int64_t n, int drop_remainder, const int64_t *shapes,
                                        const uint64_t *values) {
  if (n < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "padded_batch: batch_size must be at least 1, got %lld", (long long)n);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_PADDED_BATCH, in, 0);
  if (!ds) return NULL;
  ds->n = n, ds->flag = drop_remainder != 0;
  size_t nd = (size_t)ds->ncomp * TIDE_MAX_DIMS;
  ds->pad_shapes = malloc(nd * sizeof *ds->pad_shapes);
  ds->pad_values = calloc((size_t)ds->ncomp, sizeof *ds->pad_values);
  if (!ds->pad_shapes || !ds->pad_values) {
    tide_dataset_free(ds);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  for (size_t i = 0; i < nd; i++) ds->pad_shapes[i] = shapes && shapes[i] >= 0 ? shapes[i] : -1;
  if (values) memcpy(ds->pad_values, values, (size_t)ds->ncomp * sizeof *values);
  return ds;
}

tide_dataset *tide_dataset_shuffle(tide_dataset *in, int64_t buffer, uint64_t seed, int reshuffle) {
  if (buffer < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shuffle: buffer_size must be at least 1, got %lld", (long long)buffer);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_SHUFFLE, in, 0);
  if (ds) ds->n = buffer, ds->seed = seed, ds->flag = reshuffle != 0;
  return ds;
}

tide_dataset *tide_dataset_take(tide_dataset *in, int64_t n) {
  tide_dataset *ds = ds_new(DS_TAKE, in, 0);
  if (ds) ds->n = n;
  return ds;
}

tide_dataset *tide_dataset_skip(tide_dataset *in, int64_t n) {
  tide_dataset *ds = ds_new(DS_SKIP, in, 0);
  if (ds) ds->n = n;
  return ds;
}

tide_dataset *tide_dataset_repeat(tide_dataset *in, int64_t count) {
  tide_dataset *ds = ds_new(DS_REPEAT, in, 0);
  if (ds) ds->n = count;
  return ds;
}

tide_dataset *tide_dataset_prefetch(tide_dataset *in, int64_t n) {
  if (n < 1 && n != TIDE_DATA_AUTOTUNE) {
    TIDE_FAIL(TIDE_ERR_VALUE, "prefetch: buffer_size must be at least 1 or AUTOTUNE, got %lld", (long long)n);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_PREFETCH, in, 0);
  if (ds) ds->n = n;
  return ds;
}

tide_dataset *tide_dataset_shard(tide_dataset *in, int64_t num_shards, int64_t index) {
  if (num_shards < 1) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shard: num_shards must be at least 1, got %lld", (long long)num_shards);
    return NULL;
  }
  if (index < 0 || index >= num_shards) {
    TIDE_FAIL(TIDE_ERR_VALUE, "shard: index must be in [0, num_shards) = [0, %lld), got %lld", (long long)num_shards,
              (long long)index);
    return NULL;
  }
  tide_dataset *ds = ds_new(DS_SHARD, in, 0);
  if (ds) ds->n = num_shards, ds->stop = index;
  return ds;
}

tide_dataset *tide_dataset_unbatch(tide_dataset *in) { return ds_new(DS_UNBATCH, in, 0); }

tide_dataset *tide_dataset_cache(tide_dataset *in, const char *path, int ncomp, const int32_t *dtypes) {
  if (in && ncomp != in->ncomp) {
    TIDE_FAIL(TIDE_ERR_VALUE, "cache: %d dtypes given for elements of %d components", ncomp, in->ncomp);
    return NULL;
  }
  dcache *c = dcache_new(path, ncomp, dtypes);
  tide_dataset *ds = c ? ds_new(DS_CACHE, in, 0) : NULL;
  if (!ds) {
    dcache_free(c);
    return NULL;
  }
  ds->cache = c;
  return ds;
}

/* TF's cardinality rules. */
int64_t tide_dataset_cardinality(const tide_dataset *ds) {
  if (!ds) return TIDE_DATA_UNKNOWN;
  int64_t in = ds->input ? tide_dataset_cardinality(ds->input) : 0;
  switch (ds->kind) {
  case DS_SOURCE: return ds->src.cardinality;
  case DS_SLICES: return ds->n;
  case DS_RANGE: {
    int64_t span = ds->stop - ds->n;
    if ((span > 0) != (ds->step > 0) || span == 0) return 0;
    int64_t step = ds->step;
    return step > 0 ? (span + step - 1) / step : (-span + -step - 1) / -step;
  }
  case DS_PARAM: return TIDE_DATA_UNKNOWN;
  case DS_INTERLEAVE: return in == TIDE_DATA_INFINITE ? in : TIDE_DATA_UNKNOWN;
  case DS_MAP:
  case DS_SHUFFLE:
  case DS_PREFETCH:
  case DS_CACHE: return in;
  case DS_FILTER: return in == TIDE_DATA_INFINITE ? in : TIDE_DATA_UNKNOWN;
  case DS_ZIP: { /* TF: the shortest; unknown if any is; infinite if all are */
    int64_t n = TIDE_DATA_INFINITE;
    for (int i = 0; i < ds->ninputs; i++) {
      int64_t c = tide_dataset_cardinality(ds->inputs[i]);
      if (c == TIDE_DATA_UNKNOWN) return c;
      if (c != TIDE_DATA_INFINITE && (n == TIDE_DATA_INFINITE || c < n)) n = c;
    }
    return n;
  }
  case DS_CONCAT: { /* TF: infinite if any is, else unknown if any is, else the sum */
    int64_t n = 0;
    bool unknown = false;
    for (int i = 0; i < ds->ninputs; i++) {
      int64_t c = tide_dataset_cardinality(ds->inputs[i]);
      if (c == TIDE_DATA_INFINITE) return c;
      if (c == TIDE_DATA_UNKNOWN) unknown = true;
      else n += c;
    }
    return unknown ? TIDE_DATA_UNKNOWN : n;
  }
  case DS_BATCH:
  case DS_PADDED_BATCH:
    if (in < 0) return in;
    return ds->flag ? in / ds->n : (in + ds->n - 1) / ds->n;
  case DS_TAKE:
    if (ds->n < 0) return in;
    if (in == TIDE_DATA_INFINITE) return ds->n;
    if (in == TIDE_DATA_UNKNOWN) return TIDE_DATA_UNKNOWN;
    return in < ds->n ? in : ds->n;
  case DS_SKIP:
    if (in < 0) return in;
    if (ds->n < 0) return 0;
    return in > ds->n ? in - ds->n : 0;
  case DS_SHARD:
    if (in < 0) return in;
    return in / ds->n + (ds->stop < in % ds->n ? 1 : 0);
  case DS_UNBATCH: /* the rows per element are not known here (element_spec's side knows a fixed batch dim) */
    return in == TIDE_DATA_INFINITE || in == 0 ? in : TIDE_DATA_UNKNOWN;
  case DS_REPEAT:
    if (ds->n < 0) return in == 0 ? 0 : TIDE_DATA_INFINITE;
    if (in < 0) return in;
    return in * ds->n;
  }
  return TIDE_DATA_UNKNOWN;
}

/* ---- passes ------------------------------------------------------------------ */

dnode *dnode_make(tide_dataset *ds, dpass *pass) {
  switch (ds->kind) {
  case DS_SOURCE: return dnode_source(ds, pass);
  case DS_SLICES: return ds->sparse_roles ? dnode_sparse_slices(ds, pass) : dnode_slices(ds, pass);
  case DS_RANGE: return dnode_range(ds, pass);
  case DS_MAP: return dnode_map(ds, pass);
  case DS_BATCH: return dnode_batch(ds, pass);
  case DS_SHUFFLE: return dnode_shuffle(ds, pass);
  case DS_TAKE:
  case DS_SKIP: return dnode_take_skip(ds, pass);
  case DS_REPEAT: return dnode_repeat(ds, pass);
  case DS_PREFETCH: return dnode_prefetch(ds, pass);
  case DS_FILTER: return dnode_filter(ds, pass);
  case DS_ZIP:
  case DS_CONCAT: return dnode_multi(ds, pass);
  case DS_PADDED_BATCH: return dnode_padded_batch(ds, pass);
  case DS_PARAM:
  case DS_INTERLEAVE: return dnode_interleave(ds, pass);
  case DS_CACHE: return dnode_cache(ds, pass);
  case DS_SHARD: return dnode_shard(ds, pass);
  case DS_UNBATCH: return dnode_unbatch(ds, pass);
  }
  TIDE_FAIL(TIDE_ERR_INTERNAL, "data: unknown dataset kind %d", ds->kind);
  return NULL;
}

struct tide_data_iterator {
  dpass pass;
  dnode *top;
  tide_dataset *ds;
  int64_t index; /* elements handed out */
};

tide_data_iterator *tide_dataset_iterate(tide_dataset *ds) {
  if (!ds) {
    TIDE_FAIL(TIDE_ERR_VALUE, "data: iterate over a NULL dataset");
    return NULL;
  }
  tide_data_iterator *it = calloc(1, sizeof *it);
  if (!it) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: out of memory");
    return NULL;
  }
  /* The pass's threads (started while it is current: here or in next) run
   * under a token of its own, which freeing the iterator raises. */
  if (!(it->pass.intr = tide_interrupt_new(tide_interrupt_current()))) {
    free(it);
    return NULL;
  }
  pthread_mutex_init(&it->pass.mu, NULL);
  tide_interrupt *prev = tide_interrupt_swap(it->pass.intr);
  it->top = dnode_make(ds, &it->pass);
  tide_interrupt_swap(prev);
  if (!it->top) {
    pthread_mutex_destroy(&it->pass.mu);
    tide_interrupt_release(it->pass.intr);
    free(it);
    return NULL;
  }
  __atomic_add_fetch(&ds->refs, 1, __ATOMIC_RELAXED);
  it->ds = ds;
  return it;
}

tide_status tide_data_iterator_next(tide_data_iterator *it, int n, tide_tensor *const *out, int *end) {
  if (!it || !out || !end) return TIDE_FAIL(TIDE_ERR_VALUE, "data: next needs an iterator, headers and an end flag");
  if (n != it->top->ncomp)
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: an element has %d components, asked for %d", it->top->ncomp, n);
  tide_tensor elem[TIDE_DATA_MAX_COMPONENTS];
  memset(elem, 0, sizeof(tide_tensor) * (size_t)n);
  *end = 0;
  tide_clear_error();
  dtune_consumer_enter(&it->pass, dtune_now());
  tide_interrupt *prev = tide_interrupt_swap(it->pass.intr);
  tide_status st = dnext(it->top, elem, end);
  tide_interrupt_swap(prev);
  it->pass.cons_exit = dtune_now();
  if (st || *end) return st;
  for (int k = 0; k < n; k++) {
    tide_tensor_release(out[k]);
    delem_move(out[k], &elem[k], 1);
  }
  it->index++;
  return TIDE_OK;
}

tide_status dnext_profiled(dnode *n, tide_tensor *out, int *end) {
  int64_t t0 = tide_prof_now();
  tide_status st = n->ops->next(n, out, end);
  tide_prof_record(TIDE_PROF_DATA, n->ops->name, *end ? "end" : NULL, t0, tide_prof_now());
  return st;
}

void tide_data_iterator_free(tide_data_iterator *it) {
  if (!it) return;
  /* Stop first, everywhere: a thread blocked deep in the tree wakes and
   * returns, one running a map's graph stops at its next step (the token);
   * then each node joins its threads as the tree is freed. */
  tide_interrupt_raise(it->pass.intr);
  __atomic_store_n(&it->pass.stop, 1, __ATOMIC_RELEASE);
  pthread_mutex_lock(&it->pass.mu);
  for (dwaiter *w = it->pass.waiters; w; w = w->next) {
    pthread_mutex_lock(w->mu);
    pthread_cond_broadcast(w->cv);
    pthread_mutex_unlock(w->mu);
  }
  pthread_mutex_unlock(&it->pass.mu);
  it->top->ops->free(it->top);
  tide_interrupt_release(it->pass.intr);
  pthread_mutex_destroy(&it->pass.mu);
  tide_dataset_free(it->ds);
  free(it);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void dwait(pthread_cond_t *cv, pthread_mutex_t *mu, const unsigned *seq, const dpass *pass) {
  unsigned before = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
  pthread_mutex_unlock(mu);
  int64_t t0 = now_ns();
  for (int k = 0;; k++) {
    if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != before || dpass_stopping(pass)) break;
    if ((k & 15) == 15) {
      if (now_ns() - t0 > DSPIN_NS) break;
      sched_yield(); /* a runnable pipeline or kernel thread on this core goes first */
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  pthread_mutex_lock(mu);
  /* a signal or a stop while spinning: the caller looks again. After this
   * check a signaller needs mu, which pthread_cond_wait gives up atomically,
   * so no wake-up is lost. (The stop flag is set before its broadcast.) */
  if (__atomic_load_n(seq, __ATOMIC_ACQUIRE) != before || dpass_stopping(pass)) return;
  pthread_cond_wait(cv, mu);
}

void dpass_watch(dpass *pass, dwaiter *w, pthread_mutex_t *mu, pthread_cond_t *cv) {
  w->mu = mu, w->cv = cv;
  pthread_mutex_lock(&pass->mu);
  w->next = pass->waiters;
  pass->waiters = w;
  pthread_mutex_unlock(&pass->mu);
}

void dpass_unwatch(dpass *pass, dwaiter *w) {
  pthread_mutex_lock(&pass->mu);
  for (dwaiter **at = &pass->waiters; *at; at = &(*at)->next)
    if (*at == w) {
      *at = w->next;
      break;
    }
  pthread_mutex_unlock(&pass->mu);
}

/* ---- threads ----------------------------------------------------------------- */

/* The cores, TF's CPU budget: a tuned map starts workers up to this many as
 * its tuner (autotune.c) activates them, within what the consumer leaves. */
int tide_data_autotune_parallelism(void) { return tide_parallel_threads(); }

int tide_dataset_autotuned(const tide_dataset *ds) {
  if (!ds || !((ds->kind == DS_MAP && ds->parallel == TIDE_DATA_AUTOTUNE) ||
               (ds->kind == DS_PREFETCH && ds->n == TIDE_DATA_AUTOTUNE)))
    return -1;
  int tuned = __atomic_load_n(&ds->tuned, __ATOMIC_RELAXED);
  if (ds->kind == DS_MAP) return tuned > 0 ? tuned - 1 : 0; /* stored + 1 (map.c) */
  return tuned > 0 ? tuned : 1;
}

tide_status tide_dataset_set_autotuned(tide_dataset *ds, int value) {
  int map = ds && ds->kind == DS_MAP && ds->parallel == TIDE_DATA_AUTOTUNE;
  if (!map && !(ds && ds->kind == DS_PREFETCH && ds->n == TIDE_DATA_AUTOTUNE))
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: only a map or prefetch given AUTOTUNE has a tuned setting");
  if (value < (map ? 0 : 1))
    return TIDE_FAIL(TIDE_ERR_VALUE, "data: a tuned %s must be at least %d, got %d", map ? "parallelism" : "depth",
                     map ? 0 : 1, value);
  __atomic_store_n(&ds->tuned, map ? value + 1 : value, __ATOMIC_RELAXED); /* each pass clamps it to its bounds */
  if (map) __atomic_store_n(&ds->tuned_ns, 0, __ATOMIC_RELAXED); /* measured at another setting */
  return TIDE_OK;
}

int tide_data_live_threads(void) { return __atomic_load_n(&live_threads, __ATOMIC_RELAXED); }

/* A pipeline thread runs under the file policy, the memory account and the
 * interrupt token of the thread that started it: a sandboxed VM's scripts
 * reach files through pipelines too, the tensors a capped VM's pipeline
 * makes count against its limit (a map that makes too much fails at its
 * element, as it would on the VM's own thread), and its pass (or the VM's
 * budget) stops it. */
typedef struct {
  void *(*fn)(void *);
  void *arg;
  tide_file_policy *policy;
  tide_memory_account *account;
  tide_interrupt *intr;
} thread_start;

static void *thread_main(void *p) {
  thread_start s = *(thread_start *)p;
  free(p);
  tide_file_policy_swap(s.policy);
  tide_memory_account_swap(s.account);
  tide_interrupt_swap(s.intr);
  void *r = s.fn(s.arg);
  tide_interrupt_swap(NULL);
  tide_memory_account_swap(NULL);
  tide_file_policy_swap(NULL);
  if (s.account) tide_memory_account_release(s.account);
  tide_file_policy_release(s.policy);
  tide_interrupt_release(s.intr);
  return r;
}

/* Pipeline threads block every asynchronous signal, as the pool's workers
 * do (core/threads.c): a signal meant for the Lua VM's thread never lands here. */
int dthread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  thread_start *s = malloc(sizeof *s);
  if (!s) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: cannot start a pipeline thread (out of memory)");
    return ENOMEM;
  }
  *s = (thread_start){fn, arg, tide_file_policy_current(), tide_memory_account_current(), tide_interrupt_current()};
  tide_file_policy_retain(s->policy);
  tide_interrupt_retain(s->intr);
  if (s->account) tide_memory_account_retain(s->account);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(t, NULL, thread_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc == 0) __atomic_add_fetch(&live_threads, 1, __ATOMIC_RELAXED);
  else {
    if (s->account) tide_memory_account_release(s->account);
    tide_file_policy_release(s->policy);
    tide_interrupt_release(s->intr);
    free(s);
    TIDE_FAIL(TIDE_ERR_MEMORY, "data: cannot start a pipeline thread (error %d)", rc);
  }
  return rc;
}

void dthread_join(pthread_t t) {
  pthread_join(t, NULL);
  __atomic_sub_fetch(&live_threads, 1, __ATOMIC_RELAXED);
}

/* A pipeline thread: its kernels run inline (never on the shared pool), and
 * it runs at a lower priority (nice + 5) than the program's threads: when
 * it wakes on the core of the thread that consumes its elements, Linux then
 * does not let it preempt that thread (training waiting for its own
 * elements' production), but moves it to an idle core or runs it in the
 * gaps. The niceness is the thread's own (Linux schedules threads apart). */
void dthread_enter(void) {
  tide_parallel_run_inline(1);
  errno = 0;
  int cur = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
  if (errno == 0 && cur < 19) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), cur + 5 > 19 ? 19 : cur + 5);
}
