/* bench/malloc_count.h — counting the system allocator's calls in a bench program.
 * Link bench/malloc_count.c into the program: its malloc, calloc, realloc, aligned_alloc and
 * posix_memalign win over libc's, for libtide too, and count while counting is on. */
#ifndef TIDE_BENCH_MALLOC_COUNT_H
#define TIDE_BENCH_MALLOC_COUNT_H

/* Start counting allocator calls (every thread's, atomically). */
void malloc_count_start(void);

/* Stop counting; returns the calls made since malloc_count_start. */
long malloc_count_stop(void);

#endif
