/* vm/vm.c — libtidevm: opening a LuaJIT state with tide's Lua library on its
 * path (found next to this library, in-tree or installed) and the VM's limits,
 * and running code in it with tracebacks kept as the VM's last error. */
#include "tide/vm.h"
#include "vm_internal.h"
#include "vm_state.h"

#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tide/error.h"
#include "tide/runtime.h"

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

/* The folder holding this library (libtidevm.so), or "." if unknown. */
static void library_dir(char *out, size_t size) {
  Dl_info info;
  snprintf(out, size, ".");
  if (dladdr((void *)&tide_vm_open, &info) && info.dli_fname) {
    char *real = realpath(info.dli_fname, NULL);
    if (real) {
      char *slash = strrchr(real, '/');
      if (slash) *slash = '\0';
      snprintf(out, size, "%s", real);
      free(real);
    }
  }
}

/* Prepend `lua_root` (if any) and tide's folders to package.path, and record
 * in package.loaded["tide.host"] where libtide lives (so the binding loads it
 * without guessing) and what the host allows (tide's Lua library reads it).
 * In-tree, libtidevm sits in the build folder whose parent holds stdlib/ and
 * bindings/; installed, in PREFIX/lib beside PREFIX/share. */
/* Record prefix k of the chunk names tide's own Lua files get (a failed
 * allocation leaves it NULL: the budget then raises anywhere, as before). */
static void set_library_source(tide_vm *vm, int k, const char *fmt, const char *dir) {
  size_t n = strlen(fmt) + strlen(dir);
  free(vm->library_sources[k]);
  vm->library_sources[k] = malloc(n);
  if (vm->library_sources[k]) snprintf(vm->library_sources[k], n, fmt, dir);
}

static void set_paths(lua_State *L, tide_vm *vm) {
  char dir[4096], parent[4096], probe[4096 + 64], lib[4096 + 64];
  library_dir(dir, sizeof dir);
  snprintf(lib, sizeof lib, "%s/libtide.so", dir);
  snprintf(parent, sizeof parent, "%s", dir);
  char *slash = strrchr(parent, '/');
  if (slash && slash != parent) *slash = '\0';
  snprintf(probe, sizeof probe, "%s/stdlib/tide/init.lua", parent);

  luaL_Buffer b;
  lua_getglobal(L, "package");
  int package = lua_gettop(L);
  luaL_buffinit(L, &b);
  if (vm->lua_root) {
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", vm->lua_root, vm->lua_root);
    luaL_addvalue(&b);
  }
  if (file_exists(probe)) { /* running from a build folder of the source tree */
    lua_pushfstring(L, "%s/stdlib/?.lua;%s/stdlib/?/init.lua;%s/bindings/?.lua;%s/lua/?.lua;",
                    parent, parent, parent, dir);
    set_library_source(vm, 0, "@%s/stdlib/", parent);
    set_library_source(vm, 1, "@%s/bindings/", parent);
    set_library_source(vm, 2, "@%s/lua/", dir);
    snprintf(probe, sizeof probe, "%s/lj", dir);
    tide_vm_bytecode_open(L, parent, probe); /* build/lj/stdlib/..., build/lj/bindings/... (make) */
  } else { /* installed: PREFIX/lib and PREFIX/share/tide/lua */
    lua_pushfstring(L, "%s/share/tide/lua/?.lua;%s/share/tide/lua/?/init.lua;", parent, parent);
    set_library_source(vm, 0, "@%s/share/tide/lua/", parent);
  }
  luaL_addvalue(&b);
  lua_getfield(L, package, "path");
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  lua_setfield(L, package, "path");

  lua_getfield(L, package, "loaded");
  lua_newtable(L);
  lua_pushstring(L, lib);
  lua_setfield(L, -2, "lib");
  lua_pushboolean(L, vm->opts.sandbox);
  lua_setfield(L, -2, "sandbox");
  lua_pushboolean(L, !vm->opts.sandbox || (vm->opts.allow & TIDE_VM_ALLOW_FFI));
  lua_setfield(L, -2, "allow_pointers"); /* tide.from_buffer on raw addresses */
  lua_pushboolean(L, !vm->opts.sandbox || (vm->opts.allow & TIDE_VM_ALLOW_PROCESS_SETTINGS));
  lua_setfield(L, -2, "allow_process_settings"); /* binding.check_process_wide */
  lua_pushboolean(L, !vm->opts.sandbox || (vm->opts.allow & TIDE_VM_ALLOW_PROFILER));
  lua_setfield(L, -2, "allow_profiler"); /* binding.check_profiler */
  if (vm->opts.memory_limit) {
    /* Collect after cap/8 bytes of new tensors at most, so garbage does not
     * fill the cap (the binding's default step is 32 MB or more). */
    lua_pushnumber(L, (lua_Number)(vm->opts.memory_limit / 8));
    lua_setfield(L, -2, "max_gc_step");
  }
  lua_setfield(L, -2, "tide.host");
  lua_pop(L, 2);
}

/* Inside the first protected call: the libraries, paths and sandbox. */
static int setup(lua_State *L) {
  tide_vm *vm = lua_touserdata(L, 1);
  luaL_openlibs(L);
  set_paths(L, vm);
  /* Budgets are counted by a hook, which LuaJIT never calls from compiled
   * traces (a `while true do end` trace would spin for ever): budgeted VMs
   * interpret, and jit.on() cannot turn the compiler back on. */
  if (vm->opts.instruction_limit || vm->opts.time_limit_ms) {
    luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
    if (luaL_loadstring(L, "jit.on = function() error('the JIT stays off in a VM with a budget', 2) end") ||
        lua_pcall(L, 0, 0, 0))
      lua_error(L);
    /* A pattern match runs in one C call, where no hook fires: the budget counts its steps itself. */
    tide_vm_patterns_open(vm);
  }
  if (vm->opts.sandbox) tide_vm_sandbox_open(vm);
  return 0;
}

/* Record a failure of tide_vm_open and free what was made. */
static tide_vm *open_failed(tide_vm *vm, tide_status status, const char *msg) {
  tide_set_error(status, "tide_vm_open: %s", msg);
  tide_vm_close(vm);
  return NULL;
}

/* A LuaJIT state with the standard libraries, tide's paths and the limits (see vm.h). */
tide_vm *tide_vm_open(const tide_vm_options *opts) {
  tide_vm *vm = calloc(1, sizeof *vm);
  if (!vm) {
    tide_set_error(TIDE_ERR_MEMORY, "tide_vm_open: out of memory");
    return NULL;
  }
  if (opts) vm->opts = *opts;
  vm->env_ref = vm->helper_ref = LUA_NOREF;
  const char *root = vm->opts.lua_root ? vm->opts.lua_root : getenv("TIDE_LUA_PATH");
  if (root && *root && !(vm->lua_root = strdup(root))) return open_failed(vm, TIDE_ERR_MEMORY, "out of memory");
  vm->opts.lua_root = vm->lua_root;
  if (vm->opts.memory_limit > (size_t)INT64_MAX) vm->opts.memory_limit = (size_t)INT64_MAX;
  vm->account = tide_memory_account_new((int64_t)vm->opts.memory_limit);
  if (!vm->account) return open_failed(vm, TIDE_ERR_MEMORY, "out of memory");
  vm->interrupt = tide_interrupt_new(NULL);
  if (!vm->interrupt) return open_failed(vm, TIDE_ERR_MEMORY, "out of memory");
  vm->random = tide_random_state_new();
  if (!vm->random) return open_failed(vm, TIDE_ERR_MEMORY, "out of memory");
  /* A sandbox confines tide's file functions to files_root, or to nothing
   * (unless the host gave io back without a root: io reaches every file anyway). */
  unsigned allow = vm->opts.allow;
  if (vm->opts.sandbox && !(allow & TIDE_VM_ALLOW_FILES) && (vm->opts.files_root || !(allow & TIDE_VM_ALLOW_IO))) {
    if (!(vm->files = tide_file_policy_new(vm->opts.files_root))) {
      char msg[1024];
      snprintf(msg, sizeof msg, "files_root: %s", tide_last_error());
      return open_failed(vm, TIDE_ERR_IO, msg);
    }
  }
  vm->opts.files_root = NULL; /* the caller's string: not kept */
  if (vm->opts.memory_limit) { /* the Lua heap counts against the cap too */
    vm->lua_heap_charged = true;
    vm->L = lua_newstate(tide_vm_alloc, vm);
  } else {
    vm->L = luaL_newstate();
  }
  if (!vm->L)
    return open_failed(vm, TIDE_ERR_MEMORY, vm->opts.memory_limit ? "the memory limit is too small for a Lua state"
                                                                   : "out of memory");
  lua_pushlightuserdata(vm->L, (void *)&tide_vm_open); /* the hook finds its VM here */
  lua_pushlightuserdata(vm->L, vm);
  lua_rawset(vm->L, LUA_REGISTRYINDEX);
  lua_pushcfunction(vm->L, setup);
  lua_pushlightuserdata(vm->L, vm);
  tide_memory_account *prev = tide_memory_account_swap(vm->account);
  vm->depth = 1; /* protected: the cap applies */
  int status = lua_pcall(vm->L, 1, 0, 0);
  vm->depth = 0;
  tide_memory_account_swap(prev);
  if (status) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s%s", status == LUA_ERRMEM && vm->opts.memory_limit ? "the memory limit is too small "
                                                                                      "for the standard libraries: "
                                                                                    : "",
             lua_tostring(vm->L, -1) ? lua_tostring(vm->L, -1) : "(no message)");
    return open_failed(vm, status == LUA_ERRMEM ? TIDE_ERR_MEMORY : TIDE_ERR_INTERNAL, msg);
  }
  if (!tide_vm_limits_start(vm)) return open_failed(vm, TIDE_ERR_INTERNAL, "cannot start the watchdog thread");
  /* With a budget, tide is loaded now, so that no call's budget pays for it
   * (require "tide" takes tens of milliseconds interpreted). */
  if ((vm->opts.instruction_limit || vm->opts.time_limit_ms) && tide_vm_load_helper(vm) != TIDE_VM_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "cannot load tide: %s", tide_vm_last_error(vm));
    return open_failed(vm, TIDE_ERR_INTERNAL, msg);
  }
  return vm;
}

/* The message handler of every call: the message (or the error object's
 * __tostring) with a Lua traceback appended. */
int tide_vm_traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1); /* from the function that raised the error */
  return 1;
}

/* lua_pcall with tide_vm_traceback slipped in under the function. */
int tide_vm_pcall(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, tide_vm_traceback);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  return status;
}

/* Keep `msg` as the last error (NULL: none). */
static void set_error(tide_vm *vm, const char *msg) {
  free(vm->error);
  vm->error = msg ? strdup(msg) : NULL;
}

tide_vm_status tide_vm_fail(tide_vm *vm, tide_vm_status status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  set_error(vm, msg);
  return status;
}

/* A full collection inside a protected call (it runs finalizers, which may
 * allocate), so what a failed script dropped is given back before the next. */
static int collect(lua_State *L) {
  lua_gc(L, LUA_GCCOLLECT, 0);
  return 0;
}

/* The status and message of a failed call, whose message is on the stack top. */
static tide_vm_status failed(tide_vm *vm, int status, bool outer) {
  lua_State *L = vm->L;
  const char *msg = lua_tostring(L, -1);
  if (!msg) msg = "(error object is not a string)";
  tide_vm_status result = status == LUA_ERRSYNTAX ? TIDE_VM_ERR_SYNTAX : TIDE_VM_ERR_RUN;
  if (outer && vm->expired) {
    /* The hook raised the budget's own message; an op stopped by the
     * watchdog's interrupt says only that it was interrupted. */
    result = TIDE_VM_ERR_BUDGET;
    if (strstr(msg, "budget of") || vm->expired == 2) set_error(vm, msg);
    else tide_vm_fail(vm, result, "time budget of %u ms exceeded: %s", (unsigned)vm->opts.time_limit_ms, msg);
  } else if (status == LUA_ERRMEM) {
    result = TIDE_VM_ERR_MEMORY;
    if (vm->limit_hit)
      tide_vm_fail(vm, result, "memory limit of %zu bytes reached (the Lua heap could not grow)",
                   vm->opts.memory_limit);
    else
      set_error(vm, msg);
  } else {
    if (strstr(msg, "memory limit of ") && tide_last_status() == TIDE_ERR_MEMORY) result = TIDE_VM_ERR_MEMORY;
    set_error(vm, msg);
  }
  lua_pop(L, 1);
  if (outer && result == TIDE_VM_ERR_MEMORY) {
    vm->limit_hit = false;
    lua_pushcfunction(L, collect);
    if (lua_pcall(L, 0, 0, 0)) lua_pop(L, 1);
  }
  return result; /* a spent budget's token stays raised until the next call: its pipelines stop too */
}

/* Runs and calls nested inside one another at most (a host function calling
 * the script back, which calls it again, ...): each level takes C stack (the
 * host's, LuaJIT's, tide's), and a host whose callback re-enters it without
 * end would run out of it and crash. Real nesting is a few levels deep. */
enum { MAX_DEPTH = 200 };

/* Run the function under its `nargs` arguments with a traceback, the VM's
 * memory account current and, when `budget`, its budgets armed. */
static tide_vm_status run(tide_vm *vm, int nargs, int nresults, bool budget) {
  lua_State *L = vm->L;
  if (vm->depth >= MAX_DEPTH) {
    lua_pop(L, nargs + 1); /* the function and its arguments, as a failed call leaves nothing */
    return tide_vm_fail(vm, TIDE_VM_ERR_RUN, "host and script calls nested too deep (%d levels): a host function "
                        "calls the script back, which calls it again, without end?", vm->depth);
  }
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, tide_vm_traceback);
  lua_insert(L, base);
  bool outer = vm->depth == 0;
  tide_memory_account *prev = NULL;
  tide_interrupt *prev_interrupt = NULL;
  /* Script code runs under the VM's file policy at every depth: a host
   * function (host.c) gives its own code the host's policy back, and a
   * script it calls back must not inherit that. */
  tide_file_policy *prev_files = tide_file_policy_swap(vm->files);
  tide_random_state *prev_random = tide_random_state_swap(vm->random); /* the same for the global seed */
  if (outer) {
    vm->host_random = prev_random;
    prev = tide_memory_account_swap(vm->account);
    prev_interrupt = tide_interrupt_swap(vm->interrupt); /* the VM's budget stops this thread's kernels, no other's */
    vm->host_files = prev_files;
    vm->limit_hit = false;
    tide_clear_error();
    if (budget) tide_vm_budget_begin(vm);
  }
  vm->depth++;
  int status = lua_pcall(L, nargs, nresults, base);
  vm->depth--;
  tide_file_policy_swap(prev_files);
  tide_random_state_swap(prev_random);
  if (outer) {
    vm->host_random = NULL;
    if (budget) tide_vm_budget_end(vm);
    tide_memory_account_swap(prev);
    tide_interrupt_swap(prev_interrupt);
    vm->host_files = NULL;
  }
  lua_remove(L, base);
  if (status == 0) {
    if (outer && vm->expired) { /* it ran out just as it returned: drop the watchdog's request */
      tide_interrupt_reset(vm->interrupt);
      vm->expired = 0;
    }
    set_error(vm, NULL);
    return TIDE_VM_OK;
  }
  tide_vm_status result = failed(vm, status, outer);
  if (outer) vm->expired = 0;
  return result;
}

tide_vm_status tide_vm_protected(tide_vm *vm, int nargs, int nresults) { return run(vm, nargs, nresults, true); }

/* Trusted set-up code of libtidevm itself (host.c's helper): no budget. */
tide_vm_status tide_vm_protected_trusted(tide_vm *vm, int nargs, int nresults) {
  return run(vm, nargs, nresults, false);
}

/* Give the function on the stack top the scripts' environment (sandbox). */
static void sandbox_chunk(tide_vm *vm) {
  if (vm->env_ref == LUA_NOREF) return;
  lua_rawgeti(vm->L, LUA_REGISTRYINDEX, vm->env_ref);
  lua_setfenv(vm->L, -2);
}

/* A failed load: its status and message, with nothing left on the stack. */
static tide_vm_status load_failed(tide_vm *vm, int status) {
  const char *msg = lua_tostring(vm->L, -1);
  tide_vm_status result = status == LUA_ERRSYNTAX ? TIDE_VM_ERR_SYNTAX
                          : status == LUA_ERRMEM  ? TIDE_VM_ERR_MEMORY
                                                  : TIDE_VM_ERR_RUN; /* LUA_ERRFILE */
  set_error(vm, msg ? msg : "(no message)");
  lua_pop(vm->L, 1);
  return result;
}

/* Load `code` as text (a sandbox refuses bytecode), run it in the scripts' environment. */
tide_vm_status tide_vm_dostring(tide_vm *vm, const char *code, const char *chunkname) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (!code) return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_dostring: code is NULL");
  bool text_only = vm->opts.sandbox && !(vm->opts.allow & TIDE_VM_ALLOW_BYTECODE);
  if (text_only && code[0] == LUA_SIGNATURE[0])
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_dostring: a precompiled chunk, refused by the sandbox");
  tide_memory_account *prev = tide_memory_account_swap(vm->account);
  int status = luaL_loadbuffer(vm->L, code, strlen(code), chunkname ? chunkname : "=(string)");
  tide_memory_account_swap(prev);
  if (status) return load_failed(vm, status);
  sandbox_chunk(vm);
  return tide_vm_protected(vm, 0, 0);
}

/* The first byte of the file at `path`, or -1. */
static int first_byte(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  int c = fgetc(f);
  fclose(f);
  return c;
}

/* Load the file at `path` and run it as tide_vm_dostring does. */
tide_vm_status tide_vm_dofile(tide_vm *vm, const char *path) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (!path) return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_dofile: path is NULL");
  bool text_only = vm->opts.sandbox && !(vm->opts.allow & TIDE_VM_ALLOW_BYTECODE);
  if (text_only && first_byte(path) == LUA_SIGNATURE[0])
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_dofile: %s is a precompiled chunk, refused by the sandbox",
                        path);
  tide_memory_account *prev = tide_memory_account_swap(vm->account);
  int status = luaL_loadfile(vm->L, path);
  tide_memory_account_swap(prev);
  if (status) return load_failed(vm, status);
  sandbox_chunk(vm);
  return tide_vm_protected(vm, 0, 0);
}

/* lua_pcall under the budgets, with a traceback, keeping its error (see vm.h). */
tide_vm_status tide_vm_call(tide_vm *vm, int nargs, int nresults) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (nargs < 0 || lua_gettop(vm->L) < nargs + 1)
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_call: the Lua stack does not hold a function and its arguments");
  return tide_vm_protected(vm, nargs, nresults);
}

const char *tide_vm_last_error(const tide_vm *vm) { return vm && vm->error ? vm->error : ""; }

int64_t tide_vm_memory_used(tide_vm *vm) {
  if (!vm) return 0;
  int64_t used = tide_memory_account_used(vm->account);
  if (!vm->lua_heap_charged) /* the heap is not in the account: ask the collector */
    used += (int64_t)lua_gc(vm->L, LUA_GCCOUNT, 0) * 1024 + lua_gc(vm->L, LUA_GCCOUNTB, 0);
  return used;
}

struct lua_State *tide_vm_lua_state(tide_vm *vm) { return vm ? vm->L : NULL; }

/* Close the Lua state (finalizers release tensors), stop the watchdog, free the VM. */
void tide_vm_close(tide_vm *vm) {
  if (!vm) return;
  tide_vm_limits_stop(vm);
  /* Every pipeline the VM started stops: a thread stuck in a map's loop
   * returns at its next step, so the finalizers below join it in bounded time. */
  tide_interrupt_raise(vm->interrupt);
  if (vm->L) {
    tide_memory_account *prev = tide_memory_account_swap(vm->account);
    lua_close(vm->L);
    tide_memory_account_swap(prev);
  }
  tide_interrupt_release(vm->interrupt);
  tide_random_state_release(vm->random);    /* pipeline threads still running keep it alive */
  tide_memory_account_release(vm->account); /* results the host still holds keep it alive */
  tide_file_policy_release(vm->files);      /* pipeline threads still running keep it alive */
  free(vm->error);
  free(vm->lua_root);
  for (int k = 0; k < 3; k++) free(vm->library_sources[k]);
  free(vm);
}
