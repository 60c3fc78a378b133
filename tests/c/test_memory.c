/* tests/c/test_memory.c — the allocator through the public C API: alignment,
 * the byte counters the Lua collector reads, out-of-memory failures, the block cache. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

/* ---- allocator -------------------------------------------------------------------- */

static void test_allocator(void) {
  const tide_memory_stats *s = tide_memory_stats_get();
  CHECK(s != NULL);
  CHECK(s == tide_memory_stats_get()); /* one live struct the binding can keep */
  int64_t cur0 = s->current, allocs0 = s->allocations;
  tide_memory_mark_collected();
  CHECK(s->since_collect == 0);
  tide_memory_reset_peak();
  CHECK(s->peak == s->current);

  void *a = tide_alloc(1000);
  CHECK(a != NULL);
  CHECK(((uintptr_t)a % TIDE_ALIGNMENT) == 0);
  memset(a, 1, 1000); /* the memory is really there */
  CHECK(s->current == cur0 + 1000);
  CHECK(s->since_collect == 1000);
  CHECK(s->allocations == allocs0 + 1);
  CHECK(s->peak == cur0 + 1000);
  void *b = tide_alloc(24);
  CHECK(b != NULL && ((uintptr_t)b % TIDE_ALIGNMENT) == 0);
  CHECK(s->current == cur0 + 1024);
  CHECK(s->peak == cur0 + 1024);
  tide_free(a, 1000);
  CHECK(s->current == cur0 + 24);
  CHECK(s->peak == cur0 + 1024);    /* the peak stays */
  CHECK(s->since_collect == 1024);  /* frees do not count back */
  tide_memory_reset_peak();
  CHECK(s->peak == cur0 + 24);
  tide_memory_mark_collected();
  CHECK(s->since_collect == 0);
  tide_free(b, 24);
  CHECK(s->current == cur0);

  void *z = tide_alloc(0); /* a valid, freeable pointer */
  CHECK(z != NULL);
  tide_free(z, 0);
  CHECK(s->current == cur0);
  tide_free(NULL, 123); /* harmless */
  CHECK(s->current == cur0);

  /* An impossible request fails with a memory error and changes no counter. */
  tide_clear_error();
  int64_t allocs = s->allocations;
  CHECK(tide_alloc(SIZE_MAX) == NULL);
  CHECK(tide_last_status() == TIDE_ERR_MEMORY);
  CHECK(contains(tide_last_error(), "out of memory"));
  CHECK(tide_alloc(SIZE_MAX / 2) == NULL);
  CHECK(s->current == cur0 && s->allocations == allocs);

  /* Tensors with storages are counted too, and given back on release. */
  int64_t dims[] = {100, 10};
  tide_tensor t = blank();
  CHECK(tide_tensor_init(&t, TIDE_FLOAT64, 2, dims) == TIDE_OK);
  CHECK(s->current >= cur0 + 8000);
  tide_tensor_release(&t);
  CHECK(s->current == cur0);
}

/* Freed blocks are cached for reuse (counted in `cached`), small ones in
 * 64-byte classes, and given back by tide_memory_release_cache and by a
 * cache limit of 0. */
static void test_block_cache(void) {
  const tide_memory_stats *s = tide_memory_stats_get();
  tide_memory_release_cache();
  CHECK(s->cached == 0);
  int64_t cur0 = s->current;
  size_t sizes[] = {0, 1, 64, 65, 576, (16 << 10) - 1, 16 << 10, 100000, 3 << 20, 9 << 20};
  for (int i = 0; i < 10; i++) {
    void *p = tide_alloc(sizes[i]);
    CHECK(p != NULL);
    if (!p) continue;
    memset(p, 7, sizes[i]);
    tide_free(p, sizes[i]);
    CHECK(s->cached >= (int64_t)sizes[i]);
    void *q = tide_alloc(sizes[i]); /* the warm block comes back */
    CHECK(q == p);
    CHECK(((uintptr_t)q & (TIDE_ALIGNMENT - 1)) == 0);
    tide_free(q, sizes[i]);
  }
  /* A block of another small class is not handed out for this one. */
  void *a = tide_alloc(100), *b = tide_alloc(200);
  CHECK(a && b && a != b);
  tide_free(a, 100);
  void *c = tide_alloc(200);
  CHECK(c != a);
  tide_free(b, 200), tide_free(c, 200);
  CHECK(s->current == cur0);
  CHECK(s->cached > 0);
  tide_memory_release_cache();
  CHECK(s->cached == 0);
  void *p = tide_alloc(100000);
  tide_free(p, 100000);
  CHECK(s->cached > 0);
  tide_memory_set_cache_limit(0); /* gives the cache back and keeps nothing more */
  CHECK(s->cached == 0);
  p = tide_alloc(100000);
  tide_free(p, 100000);
  CHECK(s->cached == 0);
  tide_memory_set_cache_limit((int64_t)1 << 30);
}

/* ---- nested accounts: a loader's cap inside a VM's -------------------------------- */

static void test_nested_accounts(void) {
  tide_memory_account *outer = tide_memory_account_new(1 << 20);
  tide_memory_account *prev = tide_memory_account_swap(outer);
  tide_memory_account *inner = tide_memory_account_new_nested(1 << 16);
  CHECK(inner != NULL);
  tide_memory_account_swap(inner);
  int64_t dims[1] = {1000};
  tide_tensor t = {0};
  CHECK(tide_tensor_init(&t, TIDE_FLOAT32, 1, dims) == TIDE_OK); /* both are charged */
  CHECK(tide_memory_account_used(inner) >= 4000 && tide_memory_account_used(outer) == tide_memory_account_used(inner));
  dims[0] = 20000; /* 80 KB: past the inner limit, within the outer's; neither keeps a charge */
  tide_tensor big = {0};
  int64_t used = tide_memory_account_used(outer);
  CHECK(tide_tensor_init(&big, TIDE_FLOAT32, 1, dims) == TIDE_ERR_MEMORY);
  CHECK(tide_memory_account_used(outer) == used && tide_memory_account_used(inner) == used);
  tide_memory_account_swap(outer);
  tide_memory_account_release(inner); /* t's storage still holds it, and through it the outer */
  tide_memory_account_charge(outer, (1 << 20) - used - 100);
  tide_memory_account_swap(inner = tide_memory_account_new_nested(1 << 16));
  dims[0] = 1000; /* within the inner limit, past what the outer has left: refused, nothing kept */
  tide_tensor c = {0};
  CHECK(tide_tensor_init(&c, TIDE_FLOAT32, 1, dims) == TIDE_ERR_MEMORY);
  CHECK(tide_memory_account_used(inner) == 0);
  tide_memory_account_swap(prev);
  tide_memory_account_release(inner);
  tide_memory_account_credit(outer, (1 << 20) - used - 100);
  tide_tensor_release(&t); /* credited to both */
  CHECK(tide_memory_account_used(outer) == 0);
  tide_memory_account_release(outer);
}

int main(void) {
  test_allocator();
  test_block_cache();
  test_nested_accounts();
  /* Everything made here was given back. */
  CHECK(tide_memory_stats_get()->current == 0);
  return CHECK_SUMMARY("memory");
}
