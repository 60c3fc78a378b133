/* cpu/signals.h — holding a thread's asynchronous signals while a library
 * call runs that a signal handler would corrupt.
 *
 * Why: Debian's oneDNN 2.6 sgemm corrupts the malloc heap when a signal
 * handler runs in the middle of it (a plain C program calling dnnl_sgemm
 * under a 1 ms ITIMER_PROF aborts with "corrupted size vs. prev_size"; with
 * the signals held it does not). Such handlers are common: LuaJIT's
 * profiler (jit.p, SIGPROF), the REPL's Ctrl-C (SIGINT), a game engine's
 * own. A held signal is delivered when the call returns (about 0.3 us for
 * the two mask changes, against 5 us and more for the products that go
 * there). */
#ifndef TIDE_CPU_SIGNALS_H
#define TIDE_CPU_SIGNALS_H

#include <pthread.h>
#include <signal.h>

/* Hold every asynchronous signal on this thread; *old gets the mask to restore. */
static inline void tide_hold_signals(sigset_t *old) {
  sigset_t all;
  sigfillset(&all);
  /* synchronous faults stay deliverable: holding them would hide a crash */
  sigdelset(&all, SIGSEGV), sigdelset(&all, SIGBUS), sigdelset(&all, SIGFPE), sigdelset(&all, SIGILL);
  pthread_sigmask(SIG_BLOCK, &all, old);
}

/* Deliver what was held and restore the mask tide_hold_signals saved. */
static inline void tide_release_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

#endif
