/* core/account.c — memory accounts: a byte count with a limit that tensor
 * storages made while the account is current are charged to (a capped VM). */
#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>

struct tide_memory_account {
  int64_t refs;  /* atomic: the owner's plus one per charged storage */
  int64_t used;  /* atomic */
  int64_t limit; /* 0: none */
  tide_memory_account *parent; /* a nested account's: charged alongside (a reference held) */
};

static __thread tide_memory_account *current_account;

tide_memory_account *tide_memory_account_new(int64_t limit) {
  tide_memory_account *a = calloc(1, sizeof *a);
  if (!a) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "out of memory: cannot make a memory account");
    return NULL;
  }
  a->refs = 1;
  a->limit = limit > 0 ? limit : 0;
  return a;
}

/* Nested: a loader's cap inside a capped VM must not let what the loader makes
 * escape the VM's cap, so both count it. */
tide_memory_account *tide_memory_account_new_nested(int64_t limit) {
  tide_memory_account *a = tide_memory_account_new(limit);
  if (a && current_account) {
    a->parent = current_account;
    tide_memory_account_retain(a->parent);
  }
  return a;
}

void tide_memory_account_retain(tide_memory_account *a) { __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED); }

void tide_memory_account_release(tide_memory_account *a) {
  while (a && __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    tide_memory_account *parent = a->parent;
    free(a);
    a = parent;
  }
}

/* Compare-and-swap, so two threads charging at once cannot both pass the limit. */
static bool charge_one(tide_memory_account *a, int64_t bytes) {
  int64_t used = __atomic_load_n(&a->used, __ATOMIC_RELAXED), next;
  do {
    if (__builtin_add_overflow(used, bytes, &next) || (a->limit && next > a->limit)) return false;
  } while (!__atomic_compare_exchange_n(&a->used, &used, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return true;
}

/* The account and its parents, each within its limit, or none of them. */
tide_memory_account *tide_memory_account_try(tide_memory_account *a, int64_t bytes) {
  for (tide_memory_account *p = a; p; p = p->parent) {
    if (charge_one(p, bytes)) continue;
    for (tide_memory_account *q = a; q != p; q = q->parent) __atomic_sub_fetch(&q->used, bytes, __ATOMIC_RELAXED);
    return p;
  }
  return NULL;
}

bool tide_memory_account_charge(tide_memory_account *a, int64_t bytes) { return tide_memory_account_try(a, bytes) == NULL; }

tide_status tide_memory_refused(const tide_memory_account *refuser, const char *what, size_t nbytes) {
  return TIDE_FAIL(TIDE_ERR_MEMORY, "memory limit of %lld bytes reached: %s of %zu bytes does not fit beside the "
                   "%lld bytes in use", (long long)refuser->limit, what, nbytes,
                   (long long)__atomic_load_n(&refuser->used, __ATOMIC_RELAXED));
}

/* ---- kernels' scratch ---------------------------------------------------------
 * A block of SCRATCH_HEAD + nbytes from tide_alloc: the head keeps the account
 * charged (one reference), so a buffer freed on another thread credits it. */
enum { SCRATCH_HEAD = TIDE_ALIGNMENT };

void *tide_scratch_alloc(size_t nbytes, const char *op, const char *what) {
  size_t total = nbytes + SCRATCH_HEAD;
  if (total < nbytes) {
    TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %s of %zu bytes", op, what, nbytes);
    return NULL;
  }
  tide_memory_account *a = current_account;
  if (a) {
    tide_memory_account *refuser = tide_memory_account_try(a, (int64_t)total);
    if (refuser) {
      char w[160];
      snprintf(w, sizeof w, "%s (%s's scratch)", what, op);
      tide_memory_refused(refuser, w, nbytes);
      return NULL;
    }
    tide_memory_account_retain(a);
  }
  char *block = tide_alloc(total);
  if (!block) {
    if (a) {
      tide_memory_account_credit(a, (int64_t)total);
      tide_memory_account_release(a);
    }
    TIDE_FAIL(TIDE_ERR_MEMORY, "%s: out of memory for %s of %zu bytes", op, what, nbytes);
    return NULL;
  }
  *(tide_memory_account **)block = a;
  return block + SCRATCH_HEAD;
}

void tide_scratch_free(void *p, size_t nbytes) {
  if (!p) return;
  char *block = (char *)p - SCRATCH_HEAD;
  tide_memory_account *a = *(tide_memory_account **)block;
  tide_free(block, nbytes + SCRATCH_HEAD);
  if (a) {
    tide_memory_account_credit(a, (int64_t)(nbytes + SCRATCH_HEAD));
    tide_memory_account_release(a);
  }
}

void tide_memory_account_credit(tide_memory_account *a, int64_t bytes) {
  for (; a; a = a->parent) __atomic_sub_fetch(&a->used, bytes, __ATOMIC_RELAXED);
}

int64_t tide_memory_account_used(const tide_memory_account *a) { return __atomic_load_n(&a->used, __ATOMIC_RELAXED); }

int64_t tide_memory_account_limit(const tide_memory_account *a) { return a->limit; }

tide_memory_account *tide_memory_account_swap(tide_memory_account *a) {
  tide_memory_account *prev = current_account;
  current_account = a;
  return prev;
}

tide_memory_account *tide_memory_account_current(void) { return current_account; }
