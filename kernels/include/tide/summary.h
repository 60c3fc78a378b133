/* tide/summary.h — TensorBoard event files as TF2 writes them: Event and
 * Summary protobufs in TFRecord framing, buffered, flushed by a background thread. */
#ifndef TIDE_SUMMARY_H
#define TIDE_SUMMARY_H
#include "tide/export.h"
#include "tide/error.h"
#include "tide/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_summary_writer tide_summary_writer;

/* Create `logdir` (and its parents) and a new event file in it named
 * events.out.tfevents.<secs>.<host>.<pid>.<n><filename_suffix> (TF2's name;
 * its suffix is ".v2"), whose first record is file_version "brain.Event:2".
 * Events are queued in memory and written by a background thread when more
 * than max_queue wait or flush_millis ms passed (TF2: 10 and 120000), and at
 * flush, close and process exit. NULL with an error naming the path. */
TIDE_API tide_summary_writer *tide_summary_writer_open(const char *logdir, const char *filename_suffix,
                                                       int max_queue, int flush_millis);
/* The event file's path. */
TIDE_API const char *tide_summary_writer_path(const tide_summary_writer *w);
/* Write every queued event to the file now. */
TIDE_API tide_status tide_summary_writer_flush(tide_summary_writer *w);
/* Flush, stop the thread and close the file; later writes are errors
 * (closing twice is not). */
TIDE_API tide_status tide_summary_writer_close(tide_summary_writer *w);
/* Close (errors dropped) and free the writer (NULL is a no-op). */
TIDE_API void tide_summary_writer_free(tide_summary_writer *w);

/* ---- summaries (TF2's tensor summaries with plugin metadata) -------------
 * `description` may be NULL or "" (none). Each call queues one Event with
 * the wall time now, or fails with an error naming the tag. */

/* A float32 scalar, plugin "scalars" (tf.summary.scalar). */
TIDE_API tide_status tide_summary_write_scalar(tide_summary_writer *w, const char *tag, int64_t step, float value,
                                               const char *description);
/* A [buckets, 3] float64 tensor of (left, right, count), plugin "histograms",
 * bucketed from values[0..n) as tf.summary.histogram does (NaNs are not counted). */
TIDE_API tide_status tide_summary_write_histogram(tide_summary_writer *w, const char *tag, int64_t step,
                                                  const double *values, int64_t n, int buckets,
                                                  const char *description);
/* A string tensor of shape dims[0..ndim) holding strings[i] (lens[i] bytes each,
 * row-major), plugin "text" (tf.summary.text). */
TIDE_API tide_status tide_summary_write_text(tide_summary_writer *w, const char *tag, int64_t step, int ndim,
                                             const int64_t *dims, const char *const *strings, const size_t *lens,
                                             const char *description);
/* The first min(n, max_outputs) of n uint8 images [height, width, channels]
 * (channels 1 to 4, contiguous) PNG-encoded after their width and height in a
 * string tensor, plugin "images" (tf.summary.image). */
TIDE_API tide_status tide_summary_write_image(tide_summary_writer *w, const char *tag, int64_t step,
                                              const uint8_t *pixels, int64_t n, int64_t height, int64_t width,
                                              int64_t channels, int64_t max_outputs, const char *description);

/* A serialized GraphDef (graph_def, len bytes) for the graph dashboard: an
 * Event whose graph_def is it (the run's graph, as tf.summary.graph writes
 * it) and, when tag is not NULL, the tagged summary tf.summary.trace_export
 * writes: plugin "graph_run_metadata_graph", a RunMetadata holding the graph
 * as a function's pre-optimization graph. */
TIDE_API tide_status tide_summary_write_graph(tide_summary_writer *w, const char *tag, int64_t step,
                                              const uint8_t *graph_def, size_t len);

/* ---- summaries inside a traced function (io/summary_effect.c) -----------
 * Record into g (the graph being built) a node that writes, at each run, a
 * summary of `data` (a value of g, or an eager tensor) at `step` (an int32
 * or int64 scalar value) with writer w, when `condition` (NULL, or a bool
 * scalar value) holds: TF's summary ops in a tf.function. kind: what to
 * write: data a float32 scalar (SCALAR) or float64 of any shape (HISTOGRAM,
 * `buckets` buckets). The graph keeps w alive and writes nothing once w is
 * closed but raises an error naming it. */
enum { TIDE_SUMMARY_SCALAR = 0, TIDE_SUMMARY_HISTOGRAM = 1 };
TIDE_API tide_status tide_summary_record(tide_graph *g, tide_summary_writer *w, int kind, const char *tag,
                                         const char *description, int buckets, const tide_tensor *step,
                                         const tide_tensor *data, const tide_tensor *condition);

/* TF2's histogram buckets of values[0..n): out[3*i .. 3*i+2] = left edge,
 * right edge, count of bucket i, for i < buckets (all zero when n is 0). */
TIDE_API tide_status tide_summary_histogram_buckets(const double *values, int64_t n, int buckets, double *out);

#ifdef __cplusplus
}
#endif
#endif
