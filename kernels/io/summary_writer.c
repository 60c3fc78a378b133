/* io/summary_writer.c — TensorBoard event files: the file's name and first
 * record, the in-memory queue of framed Events, the background flusher thread. */
#include "summary_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "../core/internal.h"

/* Why a lock and a thread: a summary call from the training loop only packs
 * its Event into `queue` under `lock` (a few hundred ns); the thread (or
 * flush/close) swaps the queue out and writes it under `io_lock`, so the
 * loop never waits for the disk. */
struct tide_summary_writer {
  int holds;               /* atomic: references beyond the owner's (graphs that write to it) */
  char *path;
  FILE *file;
  int max_queue;
  int flush_millis;
  pthread_mutex_t lock;    /* guards queue, pending, closing, failed */
  pthread_cond_t wake;     /* to the flusher: the queue is full, or closing */
  uint8_t *queue;          /* framed records not yet written */
  size_t len, cap;
  int pending;             /* events in queue */
  bool closing;
  bool failed;             /* a write to the file failed: every later call fails */
  pthread_mutex_t io_lock; /* one writer of the file at a time */
  pthread_t thread;
  bool thread_started;
  bool closed;
  struct tide_summary_writer *next; /* the open writers, flushed at exit */
};

/* ---- the writers open in this process, flushed at exit ---------------- */

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static tide_summary_writer *open_writers;
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

static tide_status flush_now(tide_summary_writer *w);

/* What is queued reaches the file at a normal exit (TF flushes its writers
 * at exit too); the writers themselves are freed by their owners. */
static void flush_all_at_exit(void) {
  pthread_mutex_lock(&open_lock);
  for (tide_summary_writer *w = open_writers; w; w = w->next) flush_now(w);
  pthread_mutex_unlock(&open_lock);
}
static void register_atexit(void) { atexit(flush_all_at_exit); }

static void track(tide_summary_writer *w) {
  pthread_once(&atexit_once, register_atexit);
  pthread_mutex_lock(&open_lock);
  w->next = open_writers;
  open_writers = w;
  pthread_mutex_unlock(&open_lock);
}

static void untrack(tide_summary_writer *w) {
  pthread_mutex_lock(&open_lock);
  for (tide_summary_writer **p = &open_writers; *p; p = &(*p)->next) {
    if (*p == w) { *p = w->next; break; }
  }
  pthread_mutex_unlock(&open_lock);
}

/* ---- time, names, folders -------------------------------------------- */

/* Seconds since the epoch at microsecond resolution, as TF's NowMicros() / 1e6. */
static double wall_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
  return (double)us / 1e6;
}

/* mkdir -p: 0 or -1 with errno. */
static int make_dirs(const char *dir) {
  size_t n = strlen(dir);
  char *p = malloc(n + 1);
  if (!p) { errno = ENOMEM; return -1; }
  memcpy(p, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] == '/' || p[i] == '\0') {
      char c = p[i];
      p[i] = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) { int e = errno; free(p); errno = e; return -1; }
      p[i] = c;
    }
  }
  free(p);
  struct stat st;
  if (stat(dir, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
  return 0;
}

/* ---- the queue --------------------------------------------------------- */

static bool reserve(tide_summary_writer *w, size_t more) {
  if (w->len + more <= w->cap) return true;
  size_t cap = w->cap ? w->cap : 4096;
  while (cap < w->len + more) cap *= 2;
  uint8_t *q = realloc(w->queue, cap);
  if (!q) return false;
  w->queue = q;
  w->cap = cap;
  return true;
}

/* Pack `ev` into the queue with its framing; call with w->lock held. */
static tide_status append_event(tide_summary_writer *w, const Tensorflow__Event *ev) {
  size_t n = tensorflow__event__get_packed_size(ev);
  if (!reserve(w, n + TIDE_RECORD_HEADER_BYTES + TIDE_RECORD_FOOTER_BYTES)) {
    return TIDE_FAIL(TIDE_ERR_MEMORY, "summary writer '%s': out of memory queueing an event of %zu bytes", w->path, n);
  }
  uint8_t *at = w->queue + w->len;
  tide_record_header(n, at);
  tensorflow__event__pack(ev, at + TIDE_RECORD_HEADER_BYTES);
  tide_record_footer(at + TIDE_RECORD_HEADER_BYTES, n, at + TIDE_RECORD_HEADER_BYTES + n);
  w->len += n + TIDE_RECORD_HEADER_BYTES + TIDE_RECORD_FOOTER_BYTES;
  w->pending++;
  return TIDE_OK;
}

/* Write what is queued and fflush; the queue is swapped out under the lock
 * and written outside it, so summary calls go on meanwhile. */
static tide_status flush_now(tide_summary_writer *w) {
  pthread_mutex_lock(&w->io_lock);
  pthread_mutex_lock(&w->lock);
  uint8_t *data = w->queue;
  size_t len = w->len;
  bool failed = w->failed;
  w->queue = NULL;
  w->len = w->cap = 0;
  w->pending = 0;
  pthread_mutex_unlock(&w->lock);
  tide_status s = TIDE_OK;
  if (failed) {
    s = TIDE_FAIL(TIDE_ERR_IO, "summary writer '%s': an earlier write to the file failed", w->path);
  } else if (w->file && ((len && fwrite(data, 1, len, w->file) != len) || fflush(w->file) != 0)) {
    int e = errno;
    pthread_mutex_lock(&w->lock);
    w->failed = true;
    pthread_mutex_unlock(&w->lock);
    s = TIDE_FAIL(TIDE_ERR_IO, "summary writer '%s': writing the event file failed: %s", w->path, strerror(e));
  }
  free(data);
  pthread_mutex_unlock(&w->io_lock);
  return s;
}

/* The flusher: writes when more than max_queue events wait, every
 * flush_millis, and once more when closing. */
static void *flusher(void *arg) {
  tide_summary_writer *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->closing) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    int64_t ns = deadline.tv_nsec + (int64_t)(w->flush_millis % 1000) * 1000000;
    deadline.tv_sec += w->flush_millis / 1000 + ns / 1000000000;
    deadline.tv_nsec = ns % 1000000000;
    int rc = 0;
    while (!w->closing && w->pending <= w->max_queue && rc != ETIMEDOUT) {
      rc = pthread_cond_timedwait(&w->wake, &w->lock, &deadline);
    }
    if (w->closing) break;
    if (w->pending > 0) {
      pthread_mutex_unlock(&w->lock);
      flush_now(w); /* a failure stays in w->failed for the next call to report */
      pthread_mutex_lock(&w->lock);
    }
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

/* ---- the public face -------------------------------------------------- */

static unsigned long long file_counter; /* atomic: the <n> of TF's file names */

tide_summary_writer *tide_summary_writer_open(const char *logdir, const char *filename_suffix, int max_queue,
                                              int flush_millis) {
  if (!logdir || !*logdir) {
    TIDE_FAIL(TIDE_ERR_VALUE, "create_file_writer: logdir must be a folder name, got an empty string");
    return NULL;
  }
  if (max_queue < 0 || flush_millis <= 0) {
    TIDE_FAIL(TIDE_ERR_VALUE, "create_file_writer: max_queue must be >= 0 and flush_millis > 0, got %d and %d",
              max_queue, flush_millis);
    return NULL;
  }
  if (tide_file_check(logdir, true)) return NULL;
  if (!filename_suffix) filename_suffix = "";
  if (strchr(filename_suffix, '/')) {
    TIDE_FAIL(TIDE_ERR_VALUE, "create_file_writer: filename_suffix must not contain '/', got \"%s\"", filename_suffix);
    return NULL;
  }
  if (make_dirs(logdir) != 0) {
    TIDE_FAIL(TIDE_ERR_IO, "create_file_writer: cannot create the folder '%s': %s", logdir, strerror(errno));
    return NULL;
  }
  char host[256] = "localhost";
  if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
  host[sizeof host - 1] = '\0';
  for (char *c = host; *c; c++) if (*c == '/') *c = '_';
  unsigned long long n = __atomic_fetch_add(&file_counter, 1, __ATOMIC_RELAXED);
  double now = wall_time_now();
  long long secs = (long long)now;
  size_t need = strlen(logdir) + strlen(host) + strlen(filename_suffix) + 96;
  tide_summary_writer *w = calloc(1, sizeof *w);
  char *path = malloc(need);
  if (!w || !path) {
    free(w);
    free(path);
    TIDE_FAIL(TIDE_ERR_MEMORY, "create_file_writer: out of memory");
    return NULL;
  }
  snprintf(path, need, "%s/events.out.tfevents.%010lld.%s.%d.%llu%s", logdir, secs, host, (int)getpid(), n,
           filename_suffix);
  w->path = path;
  w->max_queue = max_queue;
  w->flush_millis = flush_millis;
  pthread_mutex_init(&w->lock, NULL);
  pthread_mutex_init(&w->io_lock, NULL);
  pthread_cond_init(&w->wake, NULL);
  w->file = tide_file_fopen(path, "wb");
  if (!w->file) {
    TIDE_FAIL(TIDE_ERR_IO, "create_file_writer: cannot create the event file '%s': %s", path, tide_file_why());
    tide_summary_writer_free(w);
    return NULL;
  }
  /* The first record, as TF's EventsWriter writes it: whole seconds. */
  Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
  Tensorflow__SourceMetadata src = TENSORFLOW__SOURCE_METADATA__INIT;
  src.writer = "tide.summary";
  ev.wall_time = (double)secs;
  ev.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
  ev.file_version = "brain.Event:2";
  ev.source_metadata = &src;
  pthread_mutex_lock(&w->lock);
  tide_status s = append_event(w, &ev);
  pthread_mutex_unlock(&w->lock);
  /* TF writes the first record at once, so TensorBoard sees the run. */
  if (s == TIDE_OK) s = flush_now(w);
  if (s == TIDE_OK && pthread_create(&w->thread, NULL, flusher, w) != 0) {
    s = TIDE_FAIL(TIDE_ERR_INTERNAL, "create_file_writer: cannot start the flusher thread for '%s'", path);
  }
  if (s != TIDE_OK) {
    tide_summary_writer_free(w);
    return NULL;
  }
  w->thread_started = true;
  track(w);
  return w;
}

const char *tide_summary_writer_path(const tide_summary_writer *w) { return w ? w->path : ""; }

tide_status tide_summary_queue_event(tide_summary_writer *w, Tensorflow__Event *ev, const char *what) {
  ev->wall_time = wall_time_now();
  pthread_mutex_lock(&w->lock);
  tide_status s;
  if (w->closing) {
    s = TIDE_FAIL(TIDE_ERR_VALUE, "summary '%s': the writer of '%s' is closed", what, w->path);
  } else if (w->failed) {
    s = TIDE_FAIL(TIDE_ERR_IO, "summary '%s': an earlier write to '%s' failed", what, w->path);
  } else {
    s = append_event(w, ev);
    if (s == TIDE_OK && w->pending > w->max_queue) pthread_cond_signal(&w->wake);
  }
  pthread_mutex_unlock(&w->lock);
  return s;
}

tide_status tide_summary_queue_value(tide_summary_writer *w, int64_t step, const Tensorflow__Summary__Value *value) {
  Tensorflow__Summary summary = TENSORFLOW__SUMMARY__INIT;
  Tensorflow__Summary__Value *values[1] = { (Tensorflow__Summary__Value *)value };
  summary.n_value = 1;
  summary.value = values;
  Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
  ev.step = step;
  ev.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
  ev.summary = &summary;
  return tide_summary_queue_event(w, &ev, value->tag);
}

tide_status tide_summary_writer_flush(tide_summary_writer *w) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "summary writer: flush of a NULL writer");
  if (w->closed) return TIDE_OK; /* as TF: flushing a closed writer does nothing */
  return flush_now(w);
}

tide_status tide_summary_writer_close(tide_summary_writer *w) {
  if (!w) return TIDE_FAIL(TIDE_ERR_VALUE, "summary writer: close of a NULL writer");
  if (w->closed) return TIDE_OK;
  pthread_mutex_lock(&w->lock);
  w->closing = true;
  pthread_cond_signal(&w->wake);
  pthread_mutex_unlock(&w->lock);
  if (w->thread_started) {
    pthread_join(w->thread, NULL);
    w->thread_started = false;
  }
  untrack(w);
  tide_status s = flush_now(w);
  if (w->file && fclose(w->file) != 0 && s == TIDE_OK) {
    s = TIDE_FAIL(TIDE_ERR_IO, "summary writer '%s': closing the event file failed: %s", w->path, strerror(errno));
  }
  w->file = NULL;
  w->closed = true;
  return s;
}

void tide_summary_writer_retain(tide_summary_writer *w) { __atomic_add_fetch(&w->holds, 1, __ATOMIC_RELAXED); }

void tide_summary_writer_free(tide_summary_writer *w) {
  if (!w) return;
  if (__atomic_fetch_sub(&w->holds, 1, __ATOMIC_ACQ_REL) > 0) return; /* a graph still writes to it */
  if (w->thread_started) tide_summary_writer_close(w);
  if (w->file) fclose(w->file);
  pthread_mutex_destroy(&w->lock);
  pthread_mutex_destroy(&w->io_lock);
  pthread_cond_destroy(&w->wake);
  free(w->queue);
  free(w->path);
  free(w);
}
