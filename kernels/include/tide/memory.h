/* tide/memory.h — the aligned allocator and its byte accounting.
 * The Lua binding reads the counters through one pointer to pace its collector.
 * Large blocks are mapped directly (huge pages where the kernel allows);
 * freed blocks are kept in a bounded cache, so temporaries do not page-fault
 * or go through the system allocator on every allocation. */
#ifndef TIDE_MEMORY_H
#define TIDE_MEMORY_H
#include "tide/export.h"

enum { TIDE_ALIGNMENT = 64 };

typedef struct tide_memory_stats {
  int64_t current;         /* bytes held by live allocations */
  int64_t peak;            /* the most `current` has been */
  int64_t since_collect;   /* bytes allocated since tide_memory_mark_collected() */
  int64_t allocations;     /* number of allocations made, ever */
  int64_t cached;          /* bytes of freed blocks kept for reuse */
} tide_memory_stats;

/* 64-byte aligned memory, counted; NULL (with an error set) when out of memory. */
TIDE_API void *tide_alloc(size_t nbytes);
/* Give back memory from tide_alloc; `nbytes` must be what was asked for. */
TIDE_API void tide_free(void *ptr, size_t nbytes);
/* The live counters (never NULL); cheap to read from Lua through the FFI. */
TIDE_API const tide_memory_stats *tide_memory_stats_get(void);
/* Reset `since_collect` (the binding calls it after a garbage collection). */
TIDE_API void tide_memory_mark_collected(void);
/* Reset `peak` to `current`. */
TIDE_API void tide_memory_reset_peak(void);
/* Give the reuse cache of freed blocks back to the system. */
TIDE_API void tide_memory_release_cache(void);
/* Bytes of freed blocks kept for reuse at most (default 1 GiB; 0 disables). */
TIDE_API void tide_memory_set_cache_limit(int64_t bytes);

#endif
