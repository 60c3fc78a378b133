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
/* Cap the instruction set at `name` (one of the above; a CPU without it
 * keeps its best). Call it before ops run on other threads. */
TIDE_API tide_status tide_set_max_cpu_isa(const char *name);
/* Ask running kernels to stop (from a signal handler too): they return
 * TIDE_ERR_INTERRUPTED at their next check. The next op clears the request. */
TIDE_API void tide_request_interrupt(void);
/* Withdraw a request no kernel has seen (a REPL between runs: the Ctrl-C
 * that stopped a Lua loop must not stop the next line's first op). */
TIDE_API void tide_clear_interrupt(void);
/* Seconds on a monotonic clock (elapsed times: progress bars, benchmarks).
 * In C so that Lua code need not declare libc's clock_gettime or isatty in
 * the FFI's one global namespace, where a user's own declaration would clash. */
TIDE_API double tide_monotonic_seconds(void);
/* 1 when file descriptor fd is a terminal (a progress bar redraws in place), else 0. */
TIDE_API int tide_is_terminal(int fd);

#ifdef __cplusplus
}
#endif
#endif
