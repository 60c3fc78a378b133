/* bench/malloc_count.c — the allocator functions of a bench program, each counting its
 * calls while counting is on and handing the work to glibc's (__libc_malloc and kin). */
#include "malloc_count.h"

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Exported (the build hides symbols by default): libtide's calls reach these
 * only when the program's dynamic symbol table holds them. */
#define EXPORT __attribute__((visibility("default")))

static long mallocs; /* calls counted while `counting` */
static long started; /* mallocs when counting started */
static int counting;

void malloc_count_start(void) {
  started = __atomic_load_n(&mallocs, __ATOMIC_RELAXED);
  counting = 1;
}

long malloc_count_stop(void) {
  counting = 0;
  return __atomic_load_n(&mallocs, __ATOMIC_RELAXED) - started;
}

EXPORT void *malloc(size_t n) {
  if (counting) __atomic_add_fetch(&mallocs, 1, __ATOMIC_RELAXED);
  return __libc_malloc(n);
}
EXPORT void *calloc(size_t n, size_t size) {
  if (counting) __atomic_add_fetch(&mallocs, 1, __ATOMIC_RELAXED);
  return __libc_calloc(n, size);
}
EXPORT void *realloc(void *p, size_t n) {
  if (counting) __atomic_add_fetch(&mallocs, 1, __ATOMIC_RELAXED);
  return __libc_realloc(p, n);
}
EXPORT void *aligned_alloc(size_t align, size_t n) {
  if (counting) __atomic_add_fetch(&mallocs, 1, __ATOMIC_RELAXED);
  return __libc_memalign(align, n);
}
EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (counting) __atomic_add_fetch(&mallocs, 1, __ATOMIC_RELAXED);
  *out = __libc_memalign(align, n);
  return *out ? 0 : 12; /* ENOMEM */
}
