/* core/profiler_trace.c — the last profiling session as a Chrome trace
 * (the JSON that chrome://tracing, Perfetto and TensorBoard's profile plugin
 * read), gzip-compressed or plain, and reading such a file back. */
#include "profiler_internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Output through a buffer to a FILE or a gzFile. */
typedef struct out {
  FILE *f;
  gzFile gz;
  char buf[1 << 16];
  size_t n;
  int failed;
} out;

static void out_flush(out *o) {
  if (o->n == 0 || o->failed) return;
  if (o->gz ? gzwrite(o->gz, o->buf, (unsigned)o->n) != (int)o->n : fwrite(o->buf, 1, o->n, o->f) != o->n)
    o->failed = 1;
  o->n = 0;
}

static void out_put(out *o, const char *s, size_t len) {
  while (len > 0) {
    if (o->n == sizeof o->buf) out_flush(o);
    size_t k = sizeof o->buf - o->n < len ? sizeof o->buf - o->n : len;
    memcpy(o->buf + o->n, s, k);
    o->n += k, s += k, len -= k;
  }
}

static void __attribute__((format(printf, 2, 3))) out_fmt(out *o, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (len > 0) out_put(o, tmp, (size_t)len < sizeof tmp ? (size_t)len : sizeof tmp - 1);
}

/* s as a JSON string. */
static void out_str(out *o, const char *s) {
  out_put(o, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      out_put(o, esc, 2);
    } else if (c < 0x20) {
      out_fmt(o, "\\u%04x", c);
    } else {
      out_put(o, (const char *)&c, 1);
    }
  }
  out_put(o, "\"", 1);
}

static const char *const category_names[TIDE_PROF_NUM_CATEGORIES] = {"op", "node", "graph", "data", "user",
                                                                     "worker", "compile"};
/* The args key naming an event's text, by category (none where the text is the name). */
static const char *const detail_keys[TIDE_PROF_NUM_CATEGORIES] = {"inputs", "recorded_at", NULL, "detail", NULL,
                                                                   "chunks", "graph"};

typedef struct writer {
  out *o;
  int pid;
  int64_t t0;
  int first;
} writer;

static void sep(writer *w) {
  out_put(w->o, w->first ? "\n" : ",\n", w->first ? 1 : 2);
  w->first = 0;
}

static void write_buffer(const pbuf *b, void *ctx) {
  writer *w = ctx;
  out *o = w->o;
  sep(w);
  out_fmt(o, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", w->pid, b->tid);
  out_str(o, b->thread_name[0] ? b->thread_name : "thread");
  out_put(o, "}}", 2);
  for (const pblock *k = &b->first; k; k = __atomic_load_n(&k->next, __ATOMIC_ACQUIRE)) {
    int n = __atomic_load_n(&k->n, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
      const pevent *e = &k->ev[i];
      int cat = e->cat < TIDE_PROF_NUM_CATEGORIES ? e->cat : TIDE_PROF_USER;
      sep(w);
      out_fmt(o, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", category_names[cat]);
      out_str(o, e->name ? e->name : e->text);
      out_fmt(o, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", w->pid, b->tid, (double)(e->ts - w->t0) / 1e3,
              (double)e->dur / 1e3);
      if (e->name && e->text[0] && detail_keys[cat]) {
        out_fmt(o, ",\"args\":{\"%s\":", detail_keys[cat]);
        out_str(o, e->text);
        out_put(o, "}", 1);
      }
      out_put(o, "}", 1);
    }
  }
}

tide_status tide_profiler_write_trace(const char *path) {
  if (!path || !*path) return TIDE_FAIL(TIDE_ERR_VALUE, "profiler: write_trace needs a path");
  if (tide_profiler_active())
    return TIDE_FAIL(TIDE_ERR_VALUE, "profiler: stop the session before writing its trace");
  tide_status checked = tide_file_check(path, true);
  if (checked) return checked;
  size_t len = strlen(path);
  bool gz = len > 3 && !strcmp(path + len - 3, ".gz");
  char *tmp = malloc(len + 16);
  out *o = calloc(1, sizeof *o);
  if (!tmp || !o) {
    free(tmp), free(o);
    return TIDE_FAIL(TIDE_ERR_MEMORY, "profiler: out of memory");
  }
  snprintf(tmp, len + 16, "%s.tmp%d", path, (int)getpid()); /* renamed over path once whole */
  int fd = tide_file_open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd >= 0 && gz && !(o->gz = gzdopen(fd, "wb6"))) close(fd);
  else if (fd >= 0 && !gz && !(o->f = fdopen(fd, "wb"))) close(fd);
  if (!o->gz && !o->f) {
    free(tmp), free(o);
    return TIDE_FAIL(TIDE_ERR_IO, "profiler: cannot write the trace '%s': %s", path, fd < 0 ? tide_file_why() : "out of memory");
  }
  writer w = {o, (int)getpid(), tide_prof_session_start(), 1};
  out_put(o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 39);
  sep(&w);
  out_fmt(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"tide\"}}", w.pid);
  tide_prof_each_buffer(write_buffer, &w);
  /* Chrome's trace format keeps top-level keys it does not know; otherData is its place for metadata. */
  out_fmt(o, "\n],\"otherData\":{\"max_events\":%lld,\"recorded_events\":%lld,\"dropped_events\":%lld}}\n",
          (long long)tide_prof_session_cap(), (long long)tide_profiler_event_count(), (long long)tide_profiler_dropped_events());
  out_flush(o);
  int failed = o->failed;
  if (o->gz) failed |= gzclose(o->gz) != Z_OK;
  else failed |= fclose(o->f) != 0;
  if (!failed) failed = rename(tmp, path) != 0;
  if (failed) remove(tmp);
  free(tmp), free(o);
  return failed ? TIDE_FAIL(TIDE_ERR_IO, "profiler: writing the trace '%s' failed", path) : TIDE_OK;
}

char *tide_profiler_read_text(const char *path, int64_t *len) {
  if (!path || !len) {
    TIDE_FAIL(TIDE_ERR_VALUE, "profiler: read_text needs a path");
    return NULL;
  }
  if (tide_file_check(path, false)) return NULL;
  int fd = tide_file_open(path, O_RDONLY, 0); /* a regular file: a FIFO or a device is refused, never waited on */
  gzFile f = fd < 0 ? NULL : gzdopen(fd, "rb"); /* reads plain files as they are */
  if (!f) {
    if (fd >= 0) close(fd);
    TIDE_FAIL(TIDE_ERR_IO, "profiler: cannot open '%s': %s", path, fd < 0 ? tide_file_why() : "out of memory");
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap + 1);
  for (int got; text;) {
    if (n == cap) {
      char *grown = realloc(text, 2 * cap + 1);
      if (!grown) {
        free(text);
        text = NULL;
        break;
      }
      text = grown, cap *= 2;
    }
    got = gzread(f, text + n, (unsigned)(cap - n));
    if (got < 0) {
      free(text);
      gzclose(f);
      TIDE_FAIL(TIDE_ERR_IO, "profiler: '%s' is not a readable (gzip) file", path);
      return NULL;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  gzclose(f);
  if (!text) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "profiler: out of memory reading '%s'", path);
    return NULL;
  }
  text[n] = 0;
  *len = (int64_t)n;
  return text;
}

void tide_profiler_free_text(char *text) { free(text); }

void tide_profiler_host_name(char *buf, int64_t n) {
  if (!buf || n <= 0) return;
  if (gethostname(buf, (size_t)n) != 0 || !buf[0]) snprintf(buf, (size_t)n, "localhost");
  buf[n - 1] = '\0';
}
