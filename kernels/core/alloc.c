/* core/alloc.c — 64-byte aligned allocation with byte accounting (current,
 * peak, since the last collection) in atomics the Lua side reads cheaply,
 * and a bounded cache of freed blocks so temporaries reuse warm memory.
 *
 * Why a cache: Lua frees tensors in batches when its collector runs, so
 * without one every batch of temporaries lands on fresh pages (page faults,
 * cold caches) after glibc has trimmed or unmapped the last batch. Blocks of
 * CACHED_MIN bytes and up are rounded to size classes (four per power of two,
 * at most 25% waste), freed onto per-class LIFO lists (the most recently used,
 * warmest block is reused first) while the cache stays under its limit.
 * Smaller blocks (the results of small eager ops) are rounded to 64 bytes
 * and cached the same way: glibc's aligned_alloc splits a larger chunk for
 * every such block, which cost as much as a small op's whole kernel.
 * Blocks of LARGE bytes and up are mapped directly; from HUGE up they are
 * 2 MiB aligned and advised to use transparent huge pages. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

static tide_memory_stats stats;

enum {
  CACHED_MIN = 16 << 10,
  LARGE = 1 << 20,
  HUGE_PAGE = 2 << 20,
  HUGE = 8 << 20,
  NCLASSES = 4 * 64
};

/* A free block on a class list keeps the link in its first bytes. */
typedef struct free_block {
  struct free_block *next;
} free_block;

/* Small blocks: classes of 64-byte steps below CACHED_MIN. */
enum { SMALL_STEP = TIDE_ALIGNMENT, NSMALL = CACHED_MIN / SMALL_STEP };

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *free_lists[NCLASSES];
static free_block *small_lists[NSMALL];
static int64_t cache_limit = (int64_t)1 << 30;

static size_t round_to(size_t n, size_t step) { return (n + step - 1) / step * step; }

/* The small class of n < CACHED_MIN bytes (0 counts as 1) and its rounded size. */
static inline int small_class(size_t n, size_t *size) {
  size_t rounded = round_to(n ? n : 1, SMALL_STEP);
  *size = rounded;
  return (int)(rounded / SMALL_STEP) - 1;
}

/* The size class of n >= CACHED_MIN: its index and its rounded size. */
static int size_class(size_t n, size_t *size) {
  int k = 63 - __builtin_clzll((unsigned long long)n); /* 2^k <= n */
  size_t step = (size_t)1 << (k - 2);
  size_t rounded = round_to(n, step);
  int sub = (int)((rounded >> (k - 2)) - 4); /* 0..4; 4 means the next power */
  *size = rounded;
  return 4 * k + sub;
}

/* Count an allocation of nbytes in current, since_collect, allocations and peak. */
static void count_alloc(size_t nbytes) {
  int64_t cur = __atomic_add_fetch(&stats.current, (int64_t)nbytes, __ATOMIC_RELAXED);
  __atomic_add_fetch(&stats.since_collect, (int64_t)nbytes, __ATOMIC_RELAXED);
  __atomic_add_fetch(&stats.allocations, 1, __ATOMIC_RELAXED);
  int64_t peak = __atomic_load_n(&stats.peak, __ATOMIC_RELAXED);
  while (cur > peak &&
         !__atomic_compare_exchange_n(&stats.peak, &peak, cur, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

/* GPU allocations (core/device.c) count toward since_collect only, so the
 * binding's collector pacing also frees GPU tensors nobody holds any more. */
void tide_memory_note_device_alloc(size_t nbytes) {
  __atomic_add_fetch(&stats.since_collect, (int64_t)nbytes, __ATOMIC_RELAXED);
}

/* Fresh memory for a block of `size` (a class size) from the system. */
static void *system_alloc(size_t size) {
  if (size < LARGE) return aligned_alloc(TIDE_ALIGNMENT, size);
  if (size < HUGE) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  /* Over-map by one huge page and trim, so the block starts on a 2 MiB boundary. */
  size_t span = size + HUGE_PAGE;
  char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  char *start = (char *)round_to((size_t)raw, HUGE_PAGE);
  if (start > raw) munmap(raw, (size_t)(start - raw));
  size_t tail = (size_t)(raw + span - (start + size));
  if (tail) munmap(start + size, tail);
  madvise(start, size, MADV_HUGEPAGE);
  return start;
}

/* Give a block from system_alloc (of class size `size`) back to the system. */
static void system_free(void *p, size_t size) {
  if (size < LARGE) free(p);
  else munmap(p, size);
}

void *tide_alloc(size_t nbytes) {
  void *p = NULL;
  if (nbytes >= CACHED_MIN) {
    size_t size;
    int cls = size_class(nbytes, &size);
    if (cls < NCLASSES && size >= nbytes) {
      pthread_mutex_lock(&cache_lock);
      free_block *b = free_lists[cls];
      if (b) {
        free_lists[cls] = b->next;
        stats.cached -= (int64_t)size;
      }
      pthread_mutex_unlock(&cache_lock);
      p = b ? (void *)b : system_alloc(size);
    }
  } else {
    size_t size;
    int cls = small_class(nbytes, &size);
    pthread_mutex_lock(&cache_lock);
    free_block *b = small_lists[cls];
    if (b) {
      small_lists[cls] = b->next;
      stats.cached -= (int64_t)size;
    }
    pthread_mutex_unlock(&cache_lock);
    p = b ? (void *)b : aligned_alloc(TIDE_ALIGNMENT, size);
  }
  if (!p) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot allocate %zu bytes", nbytes);
    return NULL;
  }
  count_alloc(nbytes);
  return p;
}

void tide_free(void *ptr, size_t nbytes) {
  if (!ptr) return;
  __atomic_sub_fetch(&stats.current, (int64_t)nbytes, __ATOMIC_RELAXED);
  bool small = nbytes < CACHED_MIN;
  size_t size;
  int cls = small ? small_class(nbytes, &size) : size_class(nbytes, &size);
  free_block **list = small ? &small_lists[cls] : &free_lists[cls];
  pthread_mutex_lock(&cache_lock);
  bool keep = stats.cached + (int64_t)size <= cache_limit;
  if (keep) {
    free_block *b = ptr;
    b->next = *list;
    *list = b;
    stats.cached += (int64_t)size;
  }
  pthread_mutex_unlock(&cache_lock);
  if (!keep) {
    if (small) free(ptr);
    else system_free(ptr, size);
  }
}

const tide_memory_stats *tide_memory_stats_get(void) { return &stats; }

void tide_memory_mark_collected(void) { __atomic_store_n(&stats.since_collect, 0, __ATOMIC_RELAXED); }

void tide_memory_reset_peak(void) {
  __atomic_store_n(&stats.peak, __atomic_load_n(&stats.current, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

void tide_memory_set_cache_limit(int64_t bytes) {
  pthread_mutex_lock(&cache_lock);
  cache_limit = bytes < 0 ? 0 : bytes;
  bool over = stats.cached > cache_limit;
  pthread_mutex_unlock(&cache_lock);
  if (over) tide_memory_release_cache();
}

void tide_memory_release_cache(void) {
  pthread_mutex_lock(&cache_lock);
  for (int cls = 0; cls < NCLASSES; cls++) {
    if (!free_lists[cls]) continue; /* classes below CACHED_MIN stay empty (their shift would be negative) */
    size_t size = (size_t)(4 + cls % 4) << (cls / 4 - 2); /* inverse of size_class */
    for (free_block *b = free_lists[cls], *next; b; b = next) {
      next = b->next;
      system_free(b, size);
    }
    free_lists[cls] = NULL;
  }
  for (int cls = 0; cls < NSMALL; cls++) {
    for (free_block *b = small_lists[cls], *next; b; b = next) {
      next = b->next;
      free(b);
    }
    small_lists[cls] = NULL;
  }
  stats.cached = 0;
  pthread_mutex_unlock(&cache_lock);
}
