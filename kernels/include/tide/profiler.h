/* tide/profiler.h — the profiler (eager ops, graph nodes and runs, input
 * pipeline stages, user ranges; each with its thread, start and duration,
 * kept in per-thread buffers), its Chrome trace and summary, and the
 * check-numerics switch, both read by the engine through one hooks word. */
#ifndef TIDE_PROFILER_H
#define TIDE_PROFILER_H
#include <stdint.h>
#include "tide/export.h"
#include "tide/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event categories. */
enum {
  TIDE_PROF_OP = 0,    /* an eager op (tide_op_run) */
  TIDE_PROF_NODE,      /* a node of a traced graph */
  TIDE_PROF_GRAPH,     /* one run of a traced graph (its nodes nest inside) */
  TIDE_PROF_DATA,      /* an input pipeline stage producing an element */
  TIDE_PROF_USER,      /* a range named by the caller (a train step) */
  TIDE_PROF_WORKER,    /* one thread's chunks of an op split over the kernel pool (named as the op) */
  TIDE_PROF_COMPILE,   /* graph building: tracing a function, the graph passes, a plan for new shapes */
  TIDE_PROF_NUM_CATEGORIES
};

/* Drop the events of an earlier session and record from now on, on every
 * thread. Fails when a session is already recording. */
TIDE_API tide_status tide_profiler_start(void);
/* Stop recording; the session's events stay until the next start. */
TIDE_API void tide_profiler_stop(void);
/* 1 while a session records, else 0. */
TIDE_API int tide_profiler_active(void);
/* Nanoseconds on the clock events use (CLOCK_MONOTONIC). */
TIDE_API int64_t tide_profiler_now_ns(void);
/* Record a user range [start_ns, end_ns) named `name` (copied, cut at 55
 * bytes) on this thread; nothing when no session records. */
TIDE_API void tide_profiler_add(const char *name, int64_t start_ns, int64_t end_ns);
/* Events the last (or current) session recorded. */
TIDE_API int64_t tide_profiler_event_count(void);
/* Events a session keeps at most (the rest are dropped and counted): n >= 1,
 * taking effect at the next start. The default, TIDE_PROFILER_DEFAULT_MAX_EVENTS,
 * is 80 MB of events. */
enum { TIDE_PROFILER_DEFAULT_MAX_EVENTS = 1000000 };
TIDE_API tide_status tide_profiler_set_max_events(int64_t n);
TIDE_API int64_t tide_profiler_max_events(void);
/* Events the last (or current) session dropped: past the cap, or no memory for them. */
TIDE_API int64_t tide_profiler_dropped_events(void);
/* Record a graph-building phase (TIDE_PROF_COMPILE) named `phase` ("trace",
 * copied when it is not one of "trace", "graph_passes", "plan") about graph
 * `graph` (copied, cut at 55 bytes); nothing when no session records. */
TIDE_API void tide_profiler_add_compile(const char *phase, const char *graph, int64_t start_ns, int64_t end_ns);
/* Write the last session's events to `path` as a Chrome trace (JSON with
 * traceEvents: "X" events, ts and dur in microseconds, pid, tid, args, and
 * thread names; otherData holds the cap and the dropped events' count),
 * gzip-compressed when path ends in ".gz". Fails while a session records. */
TIDE_API tide_status tide_profiler_write_trace(const char *path);

/* One row of the summary: events of one category and name. */
typedef struct tide_profile_row {
  const char *name;    /* valid until the next tide_profiler_start */
  int32_t category;    /* TIDE_PROF_* */
  int64_t calls;
  int64_t total_ns;    /* inclusive: the events' durations summed */
  int64_t self_ns;     /* less the time of events nested inside them on their thread */
} tide_profile_row;
/* Aggregate the last session's events into rows (unordered): writes at most
 * `max` and returns how many there are (-1 while a session records). */
TIDE_API int tide_profiler_summary(tide_profile_row *rows, int max);

/* Read a whole file, inflating it when gzip-compressed (a trace this wrote):
 * a new buffer of *len bytes (NUL-terminated) to free with
 * tide_profiler_free_text, or NULL with the error set. */
TIDE_API char *tide_profiler_read_text(const char *path, int64_t *len);
TIDE_API void tide_profiler_free_text(char *text);
/* This machine's host name (gethostname; "localhost" when it has none) into
 * buf of n bytes, NUL-terminated: the name of stop()'s trace file. Read in C
 * because a sandboxed script's io reaches no file outside its folder. */
TIDE_API void tide_profiler_host_name(char *buf, int64_t n);

/* Check numerics: when on, an eager op or a graph node whose float result
 * holds a NaN or an infinity fails with an error naming the op, its inputs'
 * dtypes and shapes, and (in a graph) the Lua line that recorded it. */
TIDE_API void tide_set_check_numerics(int on);
TIDE_API int tide_check_numerics_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
