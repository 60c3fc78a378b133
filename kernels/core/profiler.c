/* core/profiler.c — the profiler's recording: sessions, per-thread event
 * buffers written without locks, and the summary of a session's events
 * (the Chrome trace writer is core/profiler_trace.c). */
#include "profiler_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Every buffer ever made, newest first; a thread's buffer is taken from
 * here (or added) once per session, under list_mu. Buffers are never
 * freed: a thread that ended leaves its buffer for a thread of a later
 * session to take over, and the session's events stay readable after it. */
static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static pbuf *all_bufs;
static uint64_t session;       /* atomic: the recording session's number (0: none yet) */
static int64_t session_t0;     /* its start, ns */
static _Thread_local pbuf *my_buf;
_Thread_local const char *tide_prof_label;
/* The cap: events are counted as they are claimed (one relaxed add, about
 * what the event's clock read costs), so that a session keeps at most
 * session_cap of them in all threads together and counts the rest. */
static int64_t max_events = TIDE_PROFILER_DEFAULT_MAX_EVENTS; /* atomic: for the next session */
static int64_t session_cap = TIDE_PROFILER_DEFAULT_MAX_EVENTS;
static int64_t claimed;                                        /* atomic: events claimed this session */
static int64_t dropped;                                        /* atomic: past the cap, or no memory */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

int64_t tide_prof_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tide_profiler_now_ns(void) { return tide_prof_now(); }

/* A thread ends: its buffer may serve a thread of a later session. */
static void thread_gone(void *b) { __atomic_store_n(&((pbuf *)b)->gone, 1, __ATOMIC_RELEASE); }
static void make_exit_key(void) { pthread_key_create(&exit_key, thread_gone); }

/* Empty b for session s on this thread (its owner, or a new one). */
static void reset_buf(pbuf *b, uint64_t s) {
  for (pblock *k = b->first.next, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  b->first.next = NULL;
  b->first.n = 0;
  b->last = &b->first;
  b->tid = (int)syscall(SYS_gettid);
  if (pthread_getname_np(pthread_self(), b->thread_name, sizeof b->thread_name) != 0) b->thread_name[0] = 0;
  b->gone = 0;
  __atomic_store_n(&b->session, s, __ATOMIC_RELEASE);
}

/* This thread's buffer for session s: its own, one a finished thread left
 * from an earlier session, or a new one (NULL when out of memory). */
static __attribute__((noinline)) pbuf *buf_for(uint64_t s) {
  pthread_once(&exit_once, make_exit_key);
  pbuf *b = my_buf;
  pthread_mutex_lock(&list_mu);
  if (!b)
    for (pbuf *c = all_bufs; c && !b; c = c->next_all)
      if (__atomic_load_n(&c->gone, __ATOMIC_ACQUIRE) && __atomic_load_n(&c->session, __ATOMIC_ACQUIRE) != s) b = c;
  if (!b && (b = calloc(1, sizeof *b))) {
    b->next_all = all_bufs;
    all_bufs = b;
  }
  if (b) reset_buf(b, s);
  pthread_mutex_unlock(&list_mu);
  if (b && b != my_buf) {
    my_buf = b;
    pthread_setspecific(exit_key, b);
  }
  return b;
}

/* Append s to buf at *n (cap bytes in all, one kept for the NUL). */
static void put_str(char *buf, size_t cap, size_t *n, const char *s) {
  while (*s && *n + 1 < cap) buf[(*n)++] = *s++;
}

void tide_prof_shapes(char *buf, size_t cap, int n_in, const tide_tensor *const *in) {
  size_t n = 0;
  for (int i = 0; i < n_in && n + 1 < cap; i++) {
    if (i) put_str(buf, cap, &n, " ");
    put_str(buf, cap, &n, tide_dtype_name(in[i]->dt));
    put_str(buf, cap, &n, "[");
    for (int d = 0; d < in[i]->ndim; d++) {
      char digits[24], *p = digits + sizeof digits;
      int64_t v = in[i]->dims[d];
      uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
      *--p = 0;
      do *--p = (char)('0' + u % 10); while ((u /= 10) > 0);
      if (v < 0) *--p = '-';
      if (d) put_str(buf, cap, &n, ", ");
      put_str(buf, cap, &n, p);
    }
    put_str(buf, cap, &n, "]");
  }
  buf[n < cap ? n : cap - 1] = 0;
}

/* text into dst[cap], cut at a UTF-8 character's start when too long:
 * its head, or "..." and its tail (a recording line "long/path/f.lua:12"). */
static void copy_text(char *dst, size_t cap, const char *text, bool keep_tail) {
  size_t len = strlen(text);
  if (len < cap) {
    memcpy(dst, text, len + 1);
    return;
  }
  if (keep_tail) {
    const char *t = text + len - (cap - 4);
    while ((*t & 0xC0) == 0x80) t++;
    memcpy(dst, "...", 3);
    memcpy(dst + 3, t, strlen(t) + 1);
    return;
  }
  len = cap - 1;
  while (len > 0 && (text[len] & 0xC0) == 0x80) len--;
  memcpy(dst, text, len);
  dst[len] = 0;
}

static __attribute__((noinline, cold)) void drop_event(void) { __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED); }

void tide_prof_record(int cat, const char *name, const char *text, int64_t t0, int64_t t1) {
  uint64_t s = __atomic_load_n(&session, __ATOMIC_ACQUIRE);
  if (TIDE_UNLIKELY(__atomic_fetch_add(&claimed, 1, __ATOMIC_RELAXED) >= __atomic_load_n(&session_cap, __ATOMIC_RELAXED))) {
    drop_event();
    return;
  }
  pbuf *b = my_buf;
  if (TIDE_UNLIKELY(!b || b->session != s) && !(b = buf_for(s))) {
    drop_event();
    return;
  }
  pblock *k = b->last;
  int n = k->n;
  if (TIDE_UNLIKELY(n == PBLOCK_EVENTS)) { /* a new block, published before it is used */
    pblock *nk = malloc(sizeof *nk);
    if (!nk) {
      drop_event();
      return;
    }
    nk->next = NULL;
    nk->n = 0;
    __atomic_store_n(&k->next, nk, __ATOMIC_RELEASE);
    b->last = k = nk;
    n = 0;
  }
  pevent *e = &k->ev[n];
  e->ts = t0;
  e->dur = t1 - t0;
  e->name = name;
  e->cat = (uint8_t)cat;
  if (text) copy_text(e->text, sizeof e->text, text, cat == TIDE_PROF_NODE);
  else e->text[0] = 0;
  __atomic_store_n(&k->n, n + 1, __ATOMIC_RELEASE); /* a reader sees whole events only */
}

void tide_profiler_add(const char *name, int64_t start_ns, int64_t end_ns) {
  if (!(tide_hooks_now() & TIDE_HOOK_PROFILE)) return;
  tide_prof_record(TIDE_PROF_USER, NULL, name ? name : "", start_ns, end_ns);
}

void tide_profiler_add_compile(const char *phase, const char *graph, int64_t start_ns, int64_t end_ns) {
  if (!(tide_hooks_now() & TIDE_HOOK_PROFILE)) return;
  static const char *const known[] = {"trace", "graph_passes", "plan"};
  for (size_t i = 0; phase && i < sizeof known / sizeof *known; i++)
    if (!strcmp(phase, known[i])) {
      tide_prof_record(TIDE_PROF_COMPILE, known[i], graph ? graph : "", start_ns, end_ns);
      return;
    }
  tide_prof_record(TIDE_PROF_COMPILE, NULL, phase ? phase : "", start_ns, end_ns);
}

tide_status tide_profiler_set_max_events(int64_t n) {
  if (n < 1) return TIDE_FAIL(TIDE_ERR_VALUE, "profiler: max_events must be at least 1, got %lld", (long long)n);
  __atomic_store_n(&max_events, n, __ATOMIC_RELAXED);
  return TIDE_OK;
}

int64_t tide_profiler_max_events(void) { return __atomic_load_n(&max_events, __ATOMIC_RELAXED); }
int64_t tide_profiler_dropped_events(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

tide_status tide_profiler_start(void) {
  pthread_mutex_lock(&list_mu);
  if (tide_hooks_now() & TIDE_HOOK_PROFILE) {
    pthread_mutex_unlock(&list_mu);
    return TIDE_FAIL(TIDE_ERR_VALUE, "profiler: a session is already recording (stop it first)");
  }
  session_t0 = tide_prof_now();
  __atomic_store_n(&session_cap, __atomic_load_n(&max_events, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  __atomic_store_n(&claimed, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
  __atomic_add_fetch(&session, 1, __ATOMIC_RELEASE);
  __atomic_fetch_or(&tide_hooks, TIDE_HOOK_PROFILE, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&list_mu);
  return TIDE_OK;
}

void tide_profiler_stop(void) { __atomic_fetch_and(&tide_hooks, ~(uint32_t)TIDE_HOOK_PROFILE, __ATOMIC_RELEASE); }

int tide_profiler_active(void) { return (tide_hooks_now() & TIDE_HOOK_PROFILE) != 0; }

void tide_prof_each_buffer(void (*fn)(const pbuf *b, void *ctx), void *ctx) {
  uint64_t s = __atomic_load_n(&session, __ATOMIC_ACQUIRE);
  pthread_mutex_lock(&list_mu);
  for (pbuf *b = all_bufs; b; b = b->next_all)
    if (s && __atomic_load_n(&b->session, __ATOMIC_ACQUIRE) == s) fn(b, ctx);
  pthread_mutex_unlock(&list_mu);
}

int64_t tide_prof_session_start(void) { return session_t0; }
int64_t tide_prof_session_cap(void) { return __atomic_load_n(&session_cap, __ATOMIC_RELAXED); }

static void count_buffer(const pbuf *b, void *ctx) {
  for (const pblock *k = &b->first; k; k = __atomic_load_n(&k->next, __ATOMIC_ACQUIRE))
    *(int64_t *)ctx += __atomic_load_n(&k->n, __ATOMIC_ACQUIRE);
}

int64_t tide_profiler_event_count(void) {
  int64_t n = 0;
  tide_prof_each_buffer(count_buffer, &n);
  return n;
}

/* ---- the summary ------------------------------------------------------------- */

typedef struct summary {
  tide_profile_row *rows;
  int n, cap;
  int failed;
} summary;

static const char *event_name(const pevent *e) { return e->name ? e->name : e->text; }

/* The index of e's row (made when new), or -1 when out of memory. */
static int row_for(summary *s, const pevent *e) {
  const char *name = event_name(e);
  for (int i = 0; i < s->n; i++) /* few distinct names: a scan is enough */
    if (s->rows[i].category == e->cat && (s->rows[i].name == name || !strcmp(s->rows[i].name, name))) return i;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    tide_profile_row *grown = realloc(s->rows, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    s->rows = grown;
    s->cap = cap;
  }
  tide_profile_row *r = &s->rows[s->n];
  memset(r, 0, sizeof *r);
  r->name = name; /* static, or the text of an event, which lives until the next start */
  r->category = e->cat;
  return s->n++;
}

static int by_start(const void *pa, const void *pb) {
  const pevent *a = *(const pevent *const *)pa, *b = *(const pevent *const *)pb;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return a->dur > b->dur ? -1 : a->dur < b->dur; /* the enclosing event first */
}

/* One thread's events in start order; a stack of open events gives each
 * event its parent, whose self time loses the child's duration. */
static void summarize_buffer(const pbuf *b, void *ctx) {
  summary *s = ctx;
  int64_t n = 0;
  count_buffer(b, &n);
  if (n == 0 || s->failed) return;
  const pevent **evs = malloc((size_t)n * sizeof *evs);
  int *rows = malloc((size_t)n * sizeof *rows);
  const pevent **stack = malloc((size_t)n * sizeof *stack);
  int64_t *stack_i = malloc((size_t)n * sizeof *stack_i);
  if (!evs || !rows || !stack || !stack_i) {
    s->failed = 1;
    goto done;
  }
  int64_t m = 0;
  for (const pblock *k = &b->first; k && m < n; k = __atomic_load_n(&k->next, __ATOMIC_ACQUIRE))
    for (int i = 0, kn = __atomic_load_n(&k->n, __ATOMIC_ACQUIRE); i < kn && m < n; i++) evs[m++] = &k->ev[i];
  qsort(evs, (size_t)m, sizeof *evs, by_start);
  int64_t depth = 0;
  for (int64_t i = 0; i < m; i++) {
    const pevent *e = evs[i];
    int ri = rows[i] = row_for(s, e);
    if (ri < 0) {
      s->failed = 1;
      goto done;
    }
    tide_profile_row *r = &s->rows[ri];
    r->calls++;
    r->total_ns += e->dur;
    r->self_ns += e->dur;
    /* a worker's chunks of the caller's own op overlap that op: its time, not time taken from it */
    if (e->cat == TIDE_PROF_WORKER) continue;
    while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= e->ts) depth--;
    if (depth > 0) s->rows[rows[stack_i[depth - 1]]].self_ns -= e->dur;
    stack[depth] = e;
    stack_i[depth++] = i;
  }
done:
  free(evs);
  free(rows);
  free(stack);
  free(stack_i);
}

int tide_profiler_summary(tide_profile_row *rows, int max) {
  if (tide_profiler_active()) {
    TIDE_FAIL(TIDE_ERR_VALUE, "profiler: the summary needs the session stopped first");
    return -1;
  }
  summary s = {0};
  tide_prof_each_buffer(summarize_buffer, &s);
  if (s.failed) {
    free(s.rows);
    TIDE_FAIL(TIDE_ERR_MEMORY, "profiler: out of memory for the summary");
    return -1;
  }
  for (int i = 0; i < s.n && i < max; i++) rows[i] = s.rows[i];
  free(s.rows);
  return s.n;
}
