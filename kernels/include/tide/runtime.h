/* tide/runtime.h — process-wide settings: version, the CPU thread pool (the
 * only one: OpenBLAS and oneDNN run inside its tasks), the CPU instruction
 * set, interrupting long kernels, and the clock and terminal test the Lua
 * library uses. */
#ifndef TIDE_RUNTIME_H
#define TIDE_RUNTIME_H
#include "tide/export.h"
#include "tide/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0" and the like. */
TIDE_API const char *tide_version(void);
/* Threads CPU kernels use; n >= 1. Default: the machine's cores. */
TIDE_API tide_status tide_set_num_threads(int n);
TIDE_API int tide_get_num_threads(void);
/* The instruction set the hot CPU loops use: "baseline" (x86-64-v2),
 * "avx2" (x86-64-v3) or "avx512" (x86-64-v4); the best this CPU has, capped
 * by the environment variable TIDE_MAX_CPU_ISA when it names one of them. */
TIDE_API const char *tide_cpu_isa(void);
/* How CPU matrix products are run on this machine, in one line: which
 * library takes which sizes, and whether that was measured here at first
 * use or pinned (TIDE_GEMM_SMALL). The first call may run that measurement
 * (about a millisecond). */
TIDE_API const char *tide_cpu_gemm_plan(void);
/* Cap the instruction set at `name` (one of the above; a CPU without it
 * keeps its best). Call it before ops run on other threads. */
TIDE_API tide_status tide_set_max_cpu_isa(const char *name);
/* Ask running kernels to stop, on every thread (from a signal handler too:
 * Ctrl-C): they return TIDE_ERR_INTERRUPTED at their next check. The next
 * op clears the request. To stop one run and not the others, use a token. */
TIDE_API void tide_request_interrupt(void);
/* Withdraw a request no kernel has seen (a REPL between runs: the Ctrl-C
 * that stopped a Lua loop must not stop the next line's first op). */
TIDE_API void tide_clear_interrupt(void);

/* ---- interrupt tokens: stopping one run ----
 * While a token is a thread's current one, raising it stops that thread's
 * kernels (TIDE_ERR_INTERRUPTED at their next check) and nothing on any
 * other thread: a VM's time budget stops its own calls, never the host's
 * model runs or another VM's. A data pipeline's threads take a token of
 * their own whose parent is the one current where the pipeline started
 * (freeing its iterator raises it). A raised token stays raised until
 * reset, and a token is raised while its parent is. */
typedef struct tide_interrupt tide_interrupt;
/* A new token (not raised) with one reference; `parent` (may be NULL) is
 * held. NULL when out of memory. */
TIDE_API tide_interrupt *tide_interrupt_new(tide_interrupt *parent);
/* Drop a reference (threads started under the token hold one each). */
TIDE_API void tide_interrupt_release(tide_interrupt *t);
/* Make `t` (NULL: none) this thread's current token; returns the previous one. */
TIDE_API tide_interrupt *tide_interrupt_swap(tide_interrupt *t);
/* Raise `t` (from any thread; not from a signal handler), or lower it again. */
TIDE_API void tide_interrupt_raise(tide_interrupt *t);
TIDE_API void tide_interrupt_reset(tide_interrupt *t);
/* Seconds on a monotonic clock (elapsed times: progress bars, benchmarks).
 * In C so that Lua code need not declare libc's clock_gettime or isatty in
 * the FFI's one global namespace, where a user's own declaration would clash. */
TIDE_API double tide_monotonic_seconds(void);
/* Seconds since the Unix epoch on the wall clock, to the microsecond or better (tide.timestamp, TF's tf.timestamp). */
TIDE_API double tide_wall_seconds(void);
/* 1 when file descriptor fd is a terminal (a progress bar redraws in place), else 0. */
TIDE_API int tide_is_terminal(int fd);

#ifdef __cplusplus
}
#endif
#endif
