/* tide/memory.h — the aligned allocator and its byte accounting.
 * The Lua binding reads the counters through one pointer to pace its collector.
 * Large blocks are mapped directly (huge pages where the kernel allows);
 * freed blocks are kept in a bounded cache, so temporaries do not page-fault
 * or go through the system allocator on every allocation. */
#ifndef TIDE_MEMORY_H
#define TIDE_MEMORY_H
#include "tide/export.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* ---- memory accounts: a cap on what one host (a capped tide_vm) holds ----
 * While an account is this thread's current one, every tensor storage made
 * on this thread, and on the data-pipeline threads it starts, is charged to
 * it (and refused past its limit, with TIDE_ERR_MEMORY "memory limit of N
 * bytes reached ..."); the storage keeps
 * the account alive and credits it back when it is freed, on any thread.
 * Hosts charge their own allocations (a Lua heap) with _charge/_credit.
 * Kernels' big scratch buffers are charged while an op runs (the pool's
 * workers run an op's chunks under its caller's account). A refusal names
 * the limit of the account that refused (a nested one's, or its parent's).
 * Not charged: headers, kernels' small temporaries, wrapped caller memory. */
typedef struct tide_memory_account tide_memory_account;

/* A new account holding one reference; limit 0 means no limit. NULL when out of memory. */
TIDE_API tide_memory_account *tide_memory_account_new(int64_t limit);
/* A new account nested in this thread's current one (if any): what it is
 * charged, that one is charged too (both limits hold), and credited back to both.
 * A reader caps what it computes while it loads this way, inside a VM's cap. */
TIDE_API tide_memory_account *tide_memory_account_new_nested(int64_t limit);
/* Drop a reference; the account goes with the last one (storages hold one each). */
TIDE_API void tide_memory_account_release(tide_memory_account *a);
/* Add `bytes` if the total stays within the limit: true; else false, nothing charged. */
TIDE_API bool tide_memory_account_charge(tide_memory_account *a, int64_t bytes);
/* Take back `bytes` charged earlier (negative: add them, past the limit if need be). */
TIDE_API void tide_memory_account_credit(tide_memory_account *a, int64_t bytes);
/* Bytes charged now. */
TIDE_API int64_t tide_memory_account_used(const tide_memory_account *a);
/* The limit (0: none). */
TIDE_API int64_t tide_memory_account_limit(const tide_memory_account *a);
/* Make `a` (NULL: none) this thread's current account; returns the previous one. */
TIDE_API tide_memory_account *tide_memory_account_swap(tide_memory_account *a);

#ifdef __cplusplus
}
#endif
#endif
