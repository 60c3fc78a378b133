/* core/profiler_internal.h — the profiler's event buffers, shared by the
 * recorder (core/profiler.c) and the Chrome trace writer (core/profiler_trace.c). */
#ifndef TIDE_PROFILER_INTERNAL_H
#define TIDE_PROFILER_INTERNAL_H

#include "internal.h"
#include "tide/profiler.h"

/* One event: 80 bytes, written by its thread alone. */
typedef struct pevent {
  int64_t ts, dur;      /* start and duration, ns */
  const char *name;     /* a static name (an op's, a stage's), or NULL: the name is text */
  uint8_t cat;          /* TIDE_PROF_* */
  char text[55];        /* detail (input shapes, the recording line, a graph's name) or the name */
} pevent;

enum { PBLOCK_EVENTS = 4096 };

/* Events in blocks: a full block links a new one (never moved, so a reader
 * holding events sees them stay); n and next are published with release. */
typedef struct pblock {
  struct pblock *next;
  int n;
  pevent ev[PBLOCK_EVENTS];
} pblock;

/* A thread's buffer for one session. */
typedef struct pbuf {
  struct pbuf *next_all;  /* the list of every buffer (under the list's lock) */
  uint64_t session;       /* atomic: the session it holds events of */
  int gone;               /* atomic: its thread has ended */
  int tid;                /* the kernel's thread id */
  char thread_name[32];
  pblock *last;           /* the block being written (the owner's alone) */
  pblock first;
} pbuf;

/* Call fn on each buffer holding events of the last session. */
void tide_prof_each_buffer(void (*fn)(const pbuf *b, void *ctx), void *ctx);
/* The last session's start, ns. */
int64_t tide_prof_session_start(void);
/* The last session's cap on events. */
int64_t tide_prof_session_cap(void);

#endif
