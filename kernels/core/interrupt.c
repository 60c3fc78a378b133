/* core/interrupt.c — stopping running kernels: the process-wide request
 * (Ctrl-C, a bit of the hooks word) and interrupt tokens, which stop only
 * the threads a token is current on (a VM's calls, a pipeline's threads). */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

/* A token: raised until reset; raised too while its parent is. */
struct tide_interrupt {
  int64_t refs;                  /* atomic */
  int raised;                    /* atomic */
  struct tide_interrupt *parent; /* held */
};

static __thread tide_interrupt *current_token;

/* Tokens raised now: while there is one, TIDE_HOOK_TOKENS is set, so that
 * tide_interrupt_pending() costs one load of the hooks word (as before
 * tokens) whenever no token anywhere is raised. Raising and resetting are
 * rare (a budget running out), so a lock keeps the count and the bit together. */
static int raised_tokens;
static pthread_mutex_t raised_lock = PTHREAD_MUTEX_INITIALIZER;

void tide_request_interrupt(void) { __atomic_fetch_or(&tide_hooks, TIDE_HOOK_INTERRUPT, __ATOMIC_RELAXED); }

void tide_clear_interrupt(void) { __atomic_fetch_and(&tide_hooks, ~(uint32_t)TIDE_HOOK_INTERRUPT, __ATOMIC_RELAXED); }

/* Raised, or a parent is. */
static bool token_raised(const tide_interrupt *t) {
  for (; t; t = t->parent)
    if (__atomic_load_n(&t->raised, __ATOMIC_ACQUIRE)) return true;
  return false;
}

bool tide_interrupt_pending(void) {
  uint32_t h = tide_hooks_now();
  if (TIDE_LIKELY(!(h & (TIDE_HOOK_INTERRUPT | TIDE_HOOK_TOKENS)))) return false;
  return (h & TIDE_HOOK_INTERRUPT) || token_raised(current_token);
}

/* Only the process-wide request is withdrawn: a raised token stays raised
 * until its owner resets it (every op of its run fails until then). */
void tide_interrupt_clear(void) { tide_clear_interrupt(); }

tide_interrupt *tide_interrupt_new(tide_interrupt *parent) {
  tide_interrupt *t = calloc(1, sizeof *t);
  if (!t) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make an interrupt token");
    return NULL;
  }
  t->refs = 1;
  t->parent = parent;
  tide_interrupt_retain(parent);
  return t;
}

void tide_interrupt_retain(tide_interrupt *t) {
  if (t) __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

void tide_interrupt_release(tide_interrupt *t) {
  while (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    tide_interrupt_reset(t);
    tide_interrupt *parent = t->parent;
    free(t);
    t = parent;
  }
}

void tide_interrupt_raise(tide_interrupt *t) {
  if (!t || __atomic_exchange_n(&t->raised, 1, __ATOMIC_ACQ_REL)) return;
  pthread_mutex_lock(&raised_lock);
  if (raised_tokens++ == 0) __atomic_fetch_or(&tide_hooks, TIDE_HOOK_TOKENS, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&raised_lock);
}

void tide_interrupt_reset(tide_interrupt *t) {
  if (!t || !__atomic_exchange_n(&t->raised, 0, __ATOMIC_ACQ_REL)) return;
  pthread_mutex_lock(&raised_lock);
  if (--raised_tokens == 0) __atomic_fetch_and(&tide_hooks, ~(uint32_t)TIDE_HOOK_TOKENS, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&raised_lock);
}

tide_interrupt *tide_interrupt_swap(tide_interrupt *t) {
  tide_interrupt *prev = current_token;
  current_token = t;
  return prev;
}

tide_interrupt *tide_interrupt_current(void) { return current_token; }
