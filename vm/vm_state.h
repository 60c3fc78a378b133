/* vm/vm_state.h — the tide_vm structure and what libtidevm's files share
 * inside it: the limits (limits.c), the sandbox (sandbox.c), host calls (host.c). */
#ifndef TIDE_VM_STATE_H
#define TIDE_VM_STATE_H

#include <lua.h>
#include <pthread.h>
#include <stdbool.h>

#include "tide/files.h"
#include "tide/memory.h"
#include "tide/random.h"
#include "tide/runtime.h"
#include "tide/vm.h"

struct tide_vm {
  lua_State *L;
  char *error;
  tide_vm_options opts;
  char *lua_root;                /* opts.lua_root's copy */
  tide_memory_account *account;  /* tensor storage made in calls (+ the Lua heap when capped) */
  tide_interrupt *interrupt;     /* current on the VM's thread in calls (and its pipelines' parent): the
                                  * watchdog raises it when the time runs out, the next call resets it */
  tide_file_policy *files;       /* what tide's file functions may touch in calls (sandbox), or NULL */
  tide_file_policy *host_files;  /* the policy the host's thread had when the outermost call began: host
                                  * functions run under it, script code (at any depth) under `files` */
  tide_random_state *random;     /* the scripts' global seed and streams (set_seed), current in calls at
                                  * every depth and on their pipelines' threads: no VM's reaches another's */
  tide_random_state *host_random; /* the host thread's when the outermost call began: host functions' */
  bool lua_heap_charged;         /* the Lua heap goes through limits.c's allocator */
  bool limit_hit;                /* the allocator refused a block since the call began */
  int depth;                     /* nested runs and calls (a host function calling back) */
  /* budgets of the current outermost call */
  uint64_t instructions;         /* counted by the hook, in steps */
  int expired;                  /* 1: the time ran out (set by the watchdog), 2: the instructions */
  double deadline;               /* tide_monotonic_seconds() at which the time runs out */
  /* the watchdog (only with a time limit) */
  pthread_t watchdog;
  bool has_watchdog;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool call_active, quit, watchdog_idle;
  uint64_t generation;           /* counts calls, so the watchdog tells one from the next */
  /* Chunk-name prefixes ("@/path/stdlib/") of tide's own Lua library: a spent
   * budget raises only outside it (limits.c), never between a C op and the
   * finalizer the library gives its result. */
  char *library_sources[3];
  int env_ref;                   /* LUA_REGISTRYINDEX ref of the scripts' environment (sandbox), or LUA_NOREF */
  int helper_ref;                /* ref of host.c's Lua helper table, or LUA_NOREF */
};

/* limits.c */
void *tide_vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
bool tide_vm_limits_start(tide_vm *vm);  /* the watchdog thread; false if it cannot start */
void tide_vm_limits_stop(tide_vm *vm);
void tide_vm_budget_begin(tide_vm *vm);  /* before an outermost call: arm hook and deadline */
void tide_vm_budget_end(tide_vm *vm);    /* after it: disarm */
/* Work done in C inside a call (a pattern match's steps): charge `steps` to
 * the instruction budget; true when a budget is spent (then raise its error). */
bool tide_vm_budget_charge(tide_vm *vm, uint64_t steps);
void tide_vm_budget_raise(lua_State *L, tide_vm *vm);

/* patterns.c: string.find/match/gmatch/gsub whose matcher charges the budgets
 * (inside a protected call, before the sandbox copies the string library). */
void tide_vm_patterns_open(tide_vm *vm);

/* sandbox.c: build the scripts' environment into vm->env_ref (inside a
 * protected call: raises on failure). */
void tide_vm_sandbox_open(tide_vm *vm);
/* Load tide's own modules (files under source_root) from their bytecode under
 * bytecode_root when it matches the source (vm/bytecode.c). */
void tide_vm_bytecode_open(lua_State *L, const char *source_root, const char *bytecode_root);

/* host.c */
int tide_vm_push_env(tide_vm *vm);       /* push the scripts' environment table (sandbox) or _G */
/* Load tide and host.c's helper (once), outside the budgets. */
tide_vm_status tide_vm_load_helper(tide_vm *vm);

/* vm.c: run a protected call of the function under its nargs arguments
 * with the VM's budgets, memory account and error keeping. */
tide_vm_status tide_vm_protected(tide_vm *vm, int nargs, int nresults);
/* The same without the budgets, for libtidevm's own set-up code. */
tide_vm_status tide_vm_protected_trusted(tide_vm *vm, int nargs, int nresults);
/* Record a misuse of the API itself as the last error. */
tide_vm_status tide_vm_fail(tide_vm *vm, tide_vm_status status, const char *fmt, ...);

#endif
