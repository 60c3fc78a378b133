/* tide/data.h — the input pipeline engine: dataset descriptions (sources and
 * transformations, immutable, refcounted) and the iterators that run them. */
#ifndef TIDE_DATA_H
#define TIDE_DATA_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/tensor.h"
#include "tide/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dataset describes a stream of elements; an element is a fixed number of
 * tensors (its components: x and y of `{x, y}`, the sorted keys of a map).
 * Describing a dataset does no work; tide_dataset_iterate starts a pass over
 * it, and every pass starts from the beginning (with a new shuffle order
 * where the dataset says so). Transformations take a reference to their
 * input: the caller may drop its own at once.
 *
 * Threads: an iterator's next is called by one thread at a time. Stages that
 * need it (map with parallel > 0, prefetch) run their own threads, started at
 * the first next and joined when the iterator is freed (mid-pass too). Those
 * threads run kernels inline (never on the shared pool): a pipeline's
 * parallelism is its own thread count, so pipeline threads plus the
 * consumer's pool threads stay within cores + the pipeline's few threads,
 * and a worker that runs ahead of its consumer sleeps on a full buffer. */
typedef struct tide_dataset tide_dataset;
typedef struct tide_data_iterator tide_data_iterator;

enum {
  TIDE_DATA_INFINITE = -1,  /* cardinality of a dataset that never ends (TF's INFINITE_CARDINALITY) */
  TIDE_DATA_UNKNOWN = -2,   /* cardinality not known without running it (TF's UNKNOWN_CARDINALITY) */
  TIDE_DATA_AUTOTUNE = -1,  /* parallelism or buffer size chosen by the engine */
  TIDE_DATA_MAX_COMPONENTS = 64
};

/* ---- sources ---------------------------------------------------------------
 * A file reader (TextLineDataset, TFRecordDataset, CsvDataset) plugs in as a
 * tide_data_source: open starts a pass and gives its state; next fills the
 * element's ncomp blank headers (out[0..ncomp), tensors the caller then
 * owns) or sets *end = 1 and fills nothing; close ends the pass (also when
 * it is abandoned midway). next and close of one state are called by one
 * thread at a time, but possibly not the thread that opened it (a prefetch
 * or map worker), and several passes (states) may be open at once: keep
 * per-pass data in the state, read-only data in ctx. A failure returns a
 * status with the message set (tide_set_error) naming the file and offset:
 * the consumer sees it at that element, and the pass may continue after it.
 * free_ctx runs once, when the last dataset using the source goes. */
typedef struct tide_data_source {
  void *ctx;
  int ncomp;
  int64_t cardinality;  /* elements, or TIDE_DATA_INFINITE / TIDE_DATA_UNKNOWN */
  tide_status (*open)(void *ctx, void **state);
  tide_status (*next)(void *ctx, void *state, tide_tensor *const *out, int *end);
  void (*close)(void *ctx, void *state);
  void (*free_ctx)(void *ctx);
  /* Optional (file readers): a new ctx reading files[0..nfiles) with ctx's
   * other settings (NULL with the error set), for interleave's per-element
   * sources (tide_dataset_param). */
  void *(*ctx_for_files)(const void *ctx, int nfiles, const char *const *files);
} tide_data_source;

/* A dataset of what `src` reads (the struct is copied; ctx is owned from now). */
TIDE_API tide_dataset *tide_dataset_from_source(const tide_data_source *src);
/* The rows of n tensors (all with the same first dim): element i is row i of
 * each. The tensors are shared (copied first when not contiguous). */
TIDE_API tide_dataset *tide_dataset_slices(int n, const tide_tensor *const *tensors);
/* from_tensor_slices of an element holding SparseTensors: where
 * sparse_roles[k] is 1, components k, k+1, k+2 are one SparseTensor's
 * indices [N, r] (int64, row-major order, r >= 1), values [N] and
 * dense_shape [r] (int64); element i holds its row i: indices[a:b, 1:],
 * values[a:b] and dense_shape[1:], where a .. b are row i's entries (views,
 * computed once here). Other components (0) are sliced as by
 * tide_dataset_slices; every first dim must be dense_shape[0]. Validated
 * here (errors start "from_tensor_slices: "). NULL roles: tide_dataset_slices. */
TIDE_API tide_dataset *tide_dataset_sparse_slices(int n, const tide_tensor *const *tensors,
                                                  const unsigned char *sparse_roles);
/* start, start + step, ... up to stop (excluded) as scalars of dtype. */
TIDE_API tide_dataset *tide_dataset_range(int64_t start, int64_t stop, int64_t step, int dtype);

/* ---- transformations -------------------------------------------------------- */

/* Each element through graph g (finalized; inputs = the element's components,
 * outputs = the new element's). parallel 0: in the consumer's thread;
 * n > 0: n worker threads; TIDE_DATA_AUTOTUNE: tuned while it runs (below). deterministic 0
 * hands out results as they finish. The dataset holds g (tide_graph_retain);
 * variables g reads must outlive every pass. */
TIDE_API tide_dataset *tide_dataset_map(tide_dataset *in, tide_graph *g, int parallel, int deterministic);
/* The elements for which g, a graph of an element's components giving one
 * bool scalar, gives true; g runs where the pass pulls. The dataset holds g. */
TIDE_API tide_dataset *tide_dataset_filter(tide_dataset *in, tide_graph *g);
/* zip: the inputs' elements side by side (their components in order) until
 * the shortest ends; concatenate: each input's elements in turn (the same
 * number of components). Both hold their inputs. */
TIDE_API tide_dataset *tide_dataset_zip(int n, tide_dataset *const *inputs);
TIDE_API tide_dataset *tide_dataset_concatenate(int n, tide_dataset *const *inputs);
/* n elements at a time stacked along a new first dim (the last batch may be
 * smaller unless drop_remainder). */
TIDE_API tide_dataset *tide_dataset_batch(tide_dataset *in, int64_t n, int drop_remainder);
/* batch of elements holding SparseTensors: where sparse_roles[k] is 1,
 * components k, k+1, k+2 are one SparseTensor's indices [N, r] (int64),
 * values [N] and dense_shape [r] (int64), batched as TF batches them (indices
 * with the element's position in front, values concatenated, dense_shape
 * [count, each dim's largest]); other components (0) stack. NULL: batch. */
TIDE_API tide_dataset *tide_dataset_sparse_batch(tide_dataset *in, int64_t n, int drop_remainder,
                                                 const unsigned char *sparse_roles);
/* padded_batch: n elements at a time, each component padded at the end of
 * every dim to shapes[k * TIDE_MAX_DIMS + d] (-1: the batch's longest; NULL:
 * all longest) with values[k] (the component dtype's bytes; NULL: zeros),
 * then stacked. Numbers and bools (not strings). */
TIDE_API tide_dataset *tide_dataset_padded_batch(tide_dataset *in, int64_t n, int drop_remainder,
                                                 const int64_t *shapes, const uint64_t *values);
/* A buffer of `buffer` elements, each output drawn uniformly from it
 * (Philox, key from seed): pass k draws with key (seed, k) when reshuffle,
 * else (seed, 0). */
TIDE_API tide_dataset *tide_dataset_shuffle(tide_dataset *in, int64_t buffer, uint64_t seed, int reshuffle);
/* The first n elements (n < 0: all). */
TIDE_API tide_dataset *tide_dataset_take(tide_dataset *in, int64_t n);
/* All but the first n elements (n < 0: none). */
TIDE_API tide_dataset *tide_dataset_skip(tide_dataset *in, int64_t n);
/* count passes over in, one after another (count < 0: forever; a pass
 * that gives nothing ends it). */
TIDE_API tide_dataset *tide_dataset_repeat(tide_dataset *in, int64_t count);
/* TF's shard: input element i when i % num_shards == index (0 <= index <
 * num_shards). */
TIDE_API tide_dataset *tide_dataset_shard(tide_dataset *in, int64_t num_shards, int64_t index);
/* Each input element's rows as elements: row r of every component (all
 * must share their first dim; a scalar or a mismatch fails at that element).
 * Small rows are copied, larger ones (and strings) view the element. */
TIDE_API tide_dataset *tide_dataset_unbatch(tide_dataset *in);
/* Up to n elements made ahead by a background thread (TIDE_DATA_AUTOTUNE:
 * a depth that doubles when the consumer finds the buffer empty, up to 64
 * and within half the RAM, and starts the next pass where this one left it). */
TIDE_API tide_dataset *tide_dataset_prefetch(tide_dataset *in, int64_t n);

/* ---- interleave --------------------------------------------------------------
 * interleave's function, captured once: a template dataset whose leaves
 * (tide_dataset_param) take their arguments from each input element through
 * a graph. A param leaf uses args[first .. first + nargs) of that graph's
 * outputs: TIDE_DATA_PARAM_SLICES their rows (from_tensor_slices);
 * TIDE_DATA_PARAM_RANGE start, stop, step (integer scalars; int64
 * elements); TIDE_DATA_PARAM_FILES one string tensor of paths (a scalar or
 * a list) read as `proto`, a file source with ctx_for_files, reads its own.
 * A template is read only through an interleave. */
enum { TIDE_DATA_PARAM_SLICES = 0, TIDE_DATA_PARAM_RANGE = 1, TIDE_DATA_PARAM_FILES = 2 };
TIDE_API tide_dataset *tide_dataset_param(int kind, int first, int nargs, tide_dataset *proto);
/* For each element of in: g (the element's components -> the template's
 * arguments; NULL when it has no param leaf) and the template `inner` make
 * a dataset; cycle of them are read in turn, block elements at a time (TF's
 * order). parallel <= 1: in the consumer's thread; p > 1: p threads open
 * and read ahead up to cycle + p of them. deterministic 0: when the current
 * one has nothing ready, another one's ready element goes first. */
TIDE_API tide_dataset *tide_dataset_interleave(tide_dataset *in, tide_graph *g, tide_dataset *inner, int64_t cycle,
                                               int64_t block, int parallel, int deterministic);
/* Bind the captures of ds (a map, filter or interleave of a template whose
 * graph captures values of the interleave function it was made in) to that
 * function's results first .. first + tide_graph_num_captures - 1: each copy
 * of the template runs ds's graph with its own input element's values.
 * Before any pass; such a stage is then read only through that interleave. */
TIDE_API tide_status tide_dataset_bind_captures(tide_dataset *ds, int first);

/* Drop a reference (NULL is allowed). */
TIDE_API void tide_dataset_free(tide_dataset *ds);
TIDE_API int tide_dataset_num_components(const tide_dataset *ds);
/* Elements in one pass, or TIDE_DATA_INFINITE / TIDE_DATA_UNKNOWN. */
TIDE_API int64_t tide_dataset_cardinality(const tide_dataset *ds);

/* ---- iterating -------------------------------------------------------------- */

/* A new pass over ds (NULL with the error set on failure). */
TIDE_API tide_data_iterator *tide_dataset_iterate(tide_dataset *ds);
/* The next element into n blank headers (n = the components), or *end = 1.
 * A failure (a map function's error, a bad element) names the element. */
TIDE_API tide_status tide_data_iterator_next(tide_data_iterator *it, int n, tide_tensor *const *out, int *end);
/* Stop the pass: its threads are told to stop and joined, buffered
 * elements released. NULL is allowed. */
TIDE_API void tide_data_iterator_free(tide_data_iterator *it);
/* The most worker threads a map given TIDE_DATA_AUTOTUNE starts (the
 * cores); its tuner keeps active as many as the measured rates call for
 * (0: the map runs in its caller's thread) and parks the rest. */
TIDE_API int tide_data_autotune_parallelism(void);
/* For a map or prefetch given TIDE_DATA_AUTOTUNE: the active workers (0:
 * in the caller's thread) or the buffer depth its last pass settled on, the
 * next pass's start (before any: 0 workers, depth 1); else -1. */
TIDE_API int tide_dataset_autotuned(const tide_dataset *ds);
/* Start the next pass of such a map or prefetch at `value` (clamped to the
 * pass's bounds; tests, or a setting carried from another dataset). */
TIDE_API tide_status tide_dataset_set_autotuned(tide_dataset *ds, int value);
/* For tests: the parallelism tuner run over `windows` windows of a stage
 * whose time per element and share inside next are cycle_ns[v] and
 * share[v] at parallelism v (0..hi), starting at `start` with `budget`
 * workers allowed; trace[w] (if not NULL) gets the value after window w.
 * Returns the last value (-1 on bad arguments). */
TIDE_API int tide_data_autotune_simulate(int start, int hi, int budget, const double *cycle_ns, const double *share,
                                         int windows, int *trace);
/* Threads the engine's pipelines are running now (for tests). */
TIDE_API int tide_data_live_threads(void);

#ifdef __cplusplus
}
#endif
#endif
