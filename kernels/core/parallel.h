/* core/parallel.h — the engine's one CPU thread pool.
 * Kernels split work with tide_parallel_for; nested calls run inline. */
#ifndef TIDE_CORE_PARALLEL_H
#define TIDE_CORE_PARALLEL_H

#include <stdint.h>

/* Work on [begin, end) of a range; `ctx` is the kernel's. */
typedef void (*tide_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [0, n) split across the pool. Ranges shorter than `grain`
 * are not split, so small work runs inline on the calling thread. */
void tide_parallel_for(int64_t n, int64_t grain, tide_range_fn fn, void *ctx);

/* Make kernels called on this thread run inline, never fanning out onto the
 * pool (on: 1), or use the pool again (0). Input-pipeline threads set it:
 * they are themselves the parallelism, and the machine's cores are shared
 * with the consumer's kernels, which use the pool (kernels/data/pipeline.h). */
void tide_parallel_run_inline(int on);

/* Threads the pool uses (>= 1). */
int tide_parallel_threads(void);

/* Grain sizes, in elements, for cheap elementwise work and for costly work. */
enum { TIDE_GRAIN_CHEAP = 65536, TIDE_GRAIN_COSTLY = 4096 };

/* One turn of a spin-wait loop: the CPU's spin hint (x86 PAUSE, Arm YIELD), which
 * lets the other hardware thread of the core run and costs nothing else; a
 * no-op elsewhere (the loops bound their spinning by time and then sleep). */
static inline void tide_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
