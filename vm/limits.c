/* vm/limits.c — a VM's limits: the Lua allocator that charges its memory
 * account, and the per-call budgets (a count hook, a watchdog thread).
 *
 * Budgets: LuaJIT calls hooks only from the interpreter, never from compiled
 * traces, so a budgeted VM runs with the JIT off (vm.c). A count hook every
 * HOOK_STEP instructions counts the instruction budget and reads the flag the
 * watchdog sets when the time runs out; from then on it fires at every
 * instruction, so a script that catches the error with pcall is stopped at
 * its next instruction outside the pcall. A tide op running in C when the
 * time runs out is stopped by the VM's interrupt token (kernels poll it
 * between chunks), current only on the VM's thread and its pipelines'
 * threads: no other VM's or host's run sees it. */
#include "vm_state.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tide/runtime.h"

enum { HOOK_STEP = 1000 };

/* lua_Alloc with the cap: a block that would take the account past its
 * limit is refused (LuaJIT raises "not enough memory", which vm.c reports as
 * the limit; LuaJIT has no emergency collection, so uncollected garbage
 * counts). Shrinking and freeing always succeed. */
void *tide_vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tide_vm *vm = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    tide_memory_account_credit(vm->account, (int64_t)old);
    return NULL;
  }
  if (nsize > old) {
    int64_t more = (int64_t)(nsize - old);
    /* Refused only inside runs and calls: what libtidevm itself pushes
     * between them (outside any protected call, where a refusal would be a
     * Lua panic) is counted but always given. */
    if (!tide_memory_account_charge(vm->account, more)) {
      if (vm->depth > 0) {
        vm->limit_hit = true;
        return NULL;
      }
      tide_memory_account_credit(vm->account, -more); /* a negative credit: counted past the limit */
    }
  }
  void *p = realloc(ptr, nsize);
  if (!p) {
    if (nsize > old) tide_memory_account_credit(vm->account, (int64_t)(nsize - old));
    return NULL;
  }
  if (nsize < old) tide_memory_account_credit(vm->account, (int64_t)(old - nsize));
  return p;
}

/* The VM whose state `L` is (vm.c keeps it in the registry). */
static tide_vm *vm_of(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&tide_vm_open);
  lua_rawget(L, LUA_REGISTRYINDEX);
  tide_vm *vm = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return vm;
}

/* True when `source` (a chunk name) is a file of tide's own Lua library. */
static bool in_library(const tide_vm *vm, const char *source) {
  for (int k = 0; k < 3; k++) {
    const char *prefix = vm->library_sources[k];
    if (prefix && strncmp(source, prefix, strlen(prefix)) == 0) return true;
  }
  return false;
}

/* Charge `steps` to the instruction budget: the budget spent (1 time, 2 instructions), or 0. */
static int charge(tide_vm *vm, uint64_t steps) {
  int expired = __atomic_load_n(&vm->expired, __ATOMIC_RELAXED);
  if (!expired && vm->opts.instruction_limit) {
    vm->instructions += steps;
    if (vm->instructions >= vm->opts.instruction_limit) __atomic_store_n(&vm->expired, expired = 2, __ATOMIC_RELAXED);
  }
  return expired;
}

/* Raise the spent budget's error, located `level` frames up. */
static void raise_spent(lua_State *L, tide_vm *vm, int expired, int level) {
  char msg[96]; /* lua_pushfstring knows no 64-bit formats */
  if (expired == 2)
    snprintf(msg, sizeof msg, "instruction budget of %llu exceeded", (unsigned long long)vm->opts.instruction_limit);
  else
    snprintf(msg, sizeof msg, "time budget of %u ms exceeded", (unsigned)vm->opts.time_limit_ms);
  luaL_where(L, level);
  lua_pushstring(L, msg);
  lua_concat(L, 2);
  lua_error(L);
}

bool tide_vm_budget_charge(tide_vm *vm, uint64_t steps) {
  if (!vm || vm->depth == 0) return false;
  return charge(vm, steps) != 0;
}

static void budget_hook(lua_State *L, lua_Debug *ar);

void tide_vm_budget_raise(lua_State *L, tide_vm *vm) {
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1); /* as the hook does: a script that catches it stops next */
  raise_spent(L, vm, __atomic_load_n(&vm->expired, __ATOMIC_RELAXED), 1); /* 1: the Lua code calling the C function */
}

/* The count hook: charge the instructions, raise once a budget is spent. */
static void budget_hook(lua_State *L, lua_Debug *ar) {
  tide_vm *vm = vm_of(L);
  if (!vm || vm->depth == 0) return;
  int expired = charge(vm, HOOK_STEP);
  if (!expired) return;
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, 1); /* every instruction from now on */
  /* Not inside tide's own Lua library: an error between a C op and the
   * finalizer the library then gives its result would leak that result's
   * storage. The hook fires again at the next instruction, and the first one
   * back in the script raises; long work inside the library is stopped by
   * the watchdog's C interrupt at its next op. */
  if (ar && lua_getinfo(L, "S", ar) && ar->source && in_library(vm, ar->source)) return;
  raise_spent(L, vm, expired, 0); /* in a hook, level 0 is the Lua function it stopped */
}

/* A CLOCK_MONOTONIC time `seconds` from now, for pthread_cond_timedwait. */
static struct timespec after(double seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  long long ns = (long long)ts.tv_nsec + (long long)(seconds * 1e9);
  ts.tv_sec += (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

/* The watchdog: waits for a call, sleeps until its deadline, and if the
 * same call is still running then, flags it and raises the VM's interrupt
 * token (tide's kernels on the VM's threads stop), then waits for it to return. Calls that end in time are not
 * signalled: the watchdog wakes at their deadline, sees them gone, and
 * sleeps until the next call's deadline or goes idle. */
static void *watchdog(void *arg) {
  tide_vm *vm = arg;
  pthread_mutex_lock(&vm->lock);
  while (!vm->quit) {
    if (!vm->call_active) { /* only an idle watchdog needs waking (tide_vm_budget_begin) */
      vm->watchdog_idle = true;
      pthread_cond_wait(&vm->wake, &vm->lock);
      vm->watchdog_idle = false;
      continue;
    }
    uint64_t call = vm->generation;
    double left = vm->deadline - tide_monotonic_seconds();
    if (left > 0) {
      struct timespec ts = after(left);
      pthread_cond_timedwait(&vm->wake, &vm->lock, &ts);
      continue; /* woken early (call ended, quit) or timed out: look again */
    }
    __atomic_store_n(&vm->expired, 1, __ATOMIC_RELAXED);
    tide_interrupt_raise(vm->interrupt); /* stays raised until the next call resets it */
    while (!vm->quit && vm->call_active && vm->generation == call) {
      struct timespec ts = after(0.005);
      pthread_cond_timedwait(&vm->wake, &vm->lock, &ts);
    }
  }
  pthread_mutex_unlock(&vm->lock);
  return NULL;
}

bool tide_vm_limits_start(tide_vm *vm) {
  if (!vm->opts.time_limit_ms) return true;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  bool ok = pthread_mutex_init(&vm->lock, NULL) == 0;
  ok = ok && pthread_cond_init(&vm->wake, &attr) == 0;
  pthread_condattr_destroy(&attr);
  ok = ok && pthread_create(&vm->watchdog, NULL, watchdog, vm) == 0;
  vm->has_watchdog = ok;
  return ok;
}

void tide_vm_limits_stop(tide_vm *vm) {
  if (!vm->has_watchdog) return;
  pthread_mutex_lock(&vm->lock);
  vm->quit = true;
  pthread_cond_signal(&vm->wake);
  pthread_mutex_unlock(&vm->lock);
  pthread_join(vm->watchdog, NULL);
  pthread_cond_destroy(&vm->wake);
  pthread_mutex_destroy(&vm->lock);
  vm->has_watchdog = false;
}

tide_vm_status tide_vm_set_budget(tide_vm *vm, uint64_t instruction_limit, uint32_t time_limit_ms) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (!instruction_limit != !vm->opts.instruction_limit || !time_limit_ms != !vm->opts.time_limit_ms)
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE,
                        "tide_vm_set_budget: this VM was opened with %s instruction budget and %s time budget; "
                        "a new limit must be nonzero for a budget it has and zero for one it has not "
                        "(given %llu instructions, %u ms)",
                        vm->opts.instruction_limit ? "an" : "no", vm->opts.time_limit_ms ? "a" : "no",
                        (unsigned long long)instruction_limit, (unsigned)time_limit_ms);
  /* Read at the next tide_vm_budget_begin (the deadline) and by the count hook. */
  vm->opts.instruction_limit = instruction_limit;
  vm->opts.time_limit_ms = time_limit_ms;
  if (vm->has_watchdog) {
    /* A watchdog asleep until the last call's deadline, later than the next
     * call's may now be, would see that call only then: it looks again now
     * (and goes idle, so tide_vm_budget_begin wakes it). */
    pthread_mutex_lock(&vm->lock);
    pthread_cond_signal(&vm->wake);
    pthread_mutex_unlock(&vm->lock);
  }
  return TIDE_VM_OK;
}

void tide_vm_budget_begin(tide_vm *vm) {
  if (!vm->opts.instruction_limit && !vm->opts.time_limit_ms) return;
  vm->instructions = 0;
  vm->expired = 0;
  tide_interrupt_reset(vm->interrupt); /* the last call's, if its budget ran out */
  lua_sethook(vm->L, budget_hook, LUA_MASKCOUNT, HOOK_STEP);
  if (!vm->has_watchdog) return;
  pthread_mutex_lock(&vm->lock);
  vm->deadline = tide_monotonic_seconds() + vm->opts.time_limit_ms / 1000.0;
  vm->generation++;
  vm->call_active = true;
  /* A watchdog sleeping until an earlier call's deadline wakes then and
   * finds this call's: no signal (two context switches) per call. */
  if (vm->watchdog_idle) pthread_cond_signal(&vm->wake);
  pthread_mutex_unlock(&vm->lock);
}

void tide_vm_budget_end(tide_vm *vm) {
  if (!vm->opts.instruction_limit && !vm->opts.time_limit_ms) return;
  lua_sethook(vm->L, NULL, 0, 0);
  if (!vm->has_watchdog) return;
  pthread_mutex_lock(&vm->lock);
  vm->call_active = false;
  pthread_mutex_unlock(&vm->lock);
}
