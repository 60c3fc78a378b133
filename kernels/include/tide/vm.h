/* tide/vm.h — embedding a tide Lua state in a C program (libtidevm): open a
 * VM with limits and a sandbox, run scripts, call Lua functions with tensors,
 * and give scripts host functions. No Lua header is needed to use it.
 *
 *   tide_vm_options opts = {0};              // zero: the defaults
 *   opts.memory_limit = 64 << 20;            // Lua heap + tensor storage
 *   opts.time_limit_ms = 20;                 // per call
 *   opts.sandbox = true;                     // no io, os, ffi, debug, ...
 *   tide_vm *vm = tide_vm_open(&opts);       // NULL: see tide_last_error()
 *   if (tide_vm_dofile(vm, "policy.lua") != TIDE_VM_OK)
 *     fprintf(stderr, "%s\n", tide_vm_last_error(vm));
 *   tide_tensor out[1]; int n_out;
 *   tide_vm_call_tensors(vm, "act", 1, (const tide_tensor *[]){&state}, 1, out, &n_out);
 *   ... out[0] ...; tide_tensor_release(&out[0]);
 *   tide_vm_close(vm);
 *
 * Every run or call returns TIDE_VM_OK (0) or a tide_vm_status, and keeps the
 * message (with a Lua traceback where there is one) for tide_vm_last_error().
 * A VM is used from one thread at a time (any thread). docs/embedding.md (With Lua)
 * tells what the limits cover and cost. */
#ifndef TIDE_VM_H
#define TIDE_VM_H
#include "tide/export.h"
#include "tide/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tide_vm tide_vm;
struct lua_State; /* LuaJIT's; only Lua-aware hosts look inside */

/* What a sandboxed VM gives back to scripts (tide_vm_options.allow). */
enum {
  TIDE_VM_ALLOW_IO = 1 << 0,         /* the io library */
  TIDE_VM_ALLOW_OS = 1 << 1,         /* the os library */
  TIDE_VM_ALLOW_FFI = 1 << 2,        /* require "ffi", and tide.from_buffer on raw pointers */
  TIDE_VM_ALLOW_DEBUG = 1 << 3,      /* the debug library, getfenv and setfenv */
  TIDE_VM_ALLOW_LOAD_FILES = 1 << 4, /* loadfile and dofile (chunks run in the sandbox) */
  TIDE_VM_ALLOW_BYTECODE = 1 << 5,   /* load/loadstring of precompiled chunks, string.dump */
  TIDE_VM_ALLOW_C_MODULES = 1 << 6,  /* require of C modules (package.cpath), package.loadlib */
  TIDE_VM_ALLOW_FILES = 1 << 7,      /* tide's file functions reach any file (else: files_root, see below) */
  TIDE_VM_ALLOW_PROCESS_SETTINGS = 1 << 8, /* settings of the whole process, which change every VM and the
                                            * host's own runs: tide.config's threads, CPU instruction set,
                                            * memory cache and peak, GPU memory and TF32; check numerics */
  TIDE_VM_ALLOW_PROFILER = 1 << 9    /* tide.profiler: a session records every thread of the process (other
                                      * VMs' ops and the host's), and its summary and trace show them */
};

/* Options of tide_vm_open; all-zero (or a NULL pointer) is the default: no
 * limits, no sandbox. */
typedef struct tide_vm_options {
  const char *lua_root;       /* a folder searched first for Lua modules; NULL: $TIDE_LUA_PATH */
  size_t memory_limit;        /* bytes of Lua heap plus tensor storage made by the VM; 0: none */
  uint64_t instruction_limit; /* Lua VM instructions per run or call (counted in steps of 1000); 0: none */
  uint32_t time_limit_ms;     /* wall-clock milliseconds per run or call; 0: none */
  bool sandbox;               /* scripts get only the safe libraries, plus `allow` */
  unsigned allow;             /* TIDE_VM_ALLOW_* bits, read when sandbox is set */
  const char *files_root;     /* with sandbox, without TIDE_VM_ALLOW_FILES: the folder (which must exist)
                                 tide's file functions, and io when allowed, may touch while scripts run;
                                 NULL: no files at all, unless TIDE_VM_ALLOW_IO gives io (and them) back */
} tide_vm_options;

/* The outcome of a run or call. */
typedef enum tide_vm_status {
  TIDE_VM_OK = 0,
  TIDE_VM_ERR_RUN,    /* the script raised an error */
  TIDE_VM_ERR_SYNTAX, /* the code did not compile */
  TIDE_VM_ERR_MEMORY, /* the memory limit was reached (or the process ran out) */
  TIDE_VM_ERR_BUDGET, /* the instruction or time budget of the call ran out */
  TIDE_VM_ERR_USAGE   /* a misuse of this API: NULL arguments, no such function, a result not a tensor */
} tide_vm_status;

/* A new VM with the standard libraries (or the sandbox's) and tide's Lua
 * library reachable by require "tide" (loaded at once when the VM has a
 * budget, so no call pays for it). `opts` NULL: the defaults. NULL when
 * it cannot be made (tide_last_error() says why: out of memory, a
 * memory_limit too small for the standard libraries). */
TIDE_API tide_vm *tide_vm_open(const tide_vm_options *opts);
/* Close the VM (running finalizers, releasing every tensor it holds) and free it. NULL is allowed. */
TIDE_API void tide_vm_close(tide_vm *vm);

/* Change the budgets of the VM's next runs and calls: a host gives loading
 * a model more time than a frame, then each frame its own budget. A VM keeps
 * the kinds of budget it was opened with (the JIT is off and the watchdog
 * runs from tide_vm_open): a limit that is zero where the VM has that budget,
 * or nonzero where it has none, is TIDE_VM_ERR_USAGE and changes nothing.
 * Call it from the host between runs and calls. */
TIDE_API tide_vm_status tide_vm_set_budget(tide_vm *vm, uint64_t instruction_limit, uint32_t time_limit_ms);

/* Run Lua source (in the sandbox when the VM has one); `chunkname` names it
 * in messages (NULL: "=(string)"). Budgets and the memory limit apply. */
TIDE_API tide_vm_status tide_vm_dostring(tide_vm *vm, const char *code, const char *chunkname);
/* Run a Lua file, as tide_vm_dostring does. */
TIDE_API tide_vm_status tide_vm_dofile(tide_vm *vm, const char *path);

/* Call a Lua function with tensors and take tensors back. `name` is a global
 * of the scripts' environment, dotted names reach into tables ("policy.act");
 * NULL calls the function on top of the Lua stack (popping it). The inputs
 * are shared with Lua, not copied. Up to `max_out` results are written into
 * the blank headers `out` as new references the caller releases with
 * tide_tensor_release; `*n_out` (may be NULL) gets how many. A result that
 * is not a tensor (a number is made one) or more than max_out results is
 * TIDE_VM_ERR_USAGE. On failure nothing is written. */
TIDE_API tide_vm_status tide_vm_call_tensors(tide_vm *vm, const char *name, int n_in, const tide_tensor *const *in,
                                             int max_out, tide_tensor *out, int *n_out);

/* A host function for scripts, tensors in and out. `in` holds the call's
 * arguments (numbers and nested tables made tensors as tide.tensor does);
 * it fills up to `max_out` blank headers of `out` (tide_tensor_init, _wrap,
 * _share) and returns how many, or -1 after tide_set_error() to raise a Lua
 * error with that message. Runs on the VM's thread, inside the call. */
typedef int (*tide_vm_host_fn)(void *userdata, int n_in, const tide_tensor *const *in, int max_out,
                               tide_tensor *out);
enum { TIDE_VM_HOST_MAX_OUT = 16 };
/* Make `fn` the global `name` of the scripts' environment. TIDE_VM_OK, or
 * TIDE_VM_ERR_USAGE for a NULL or a name that is not a Lua identifier. */
TIDE_API tide_vm_status tide_vm_register(tide_vm *vm, const char *name, tide_vm_host_fn fn, void *userdata);
/* A host function written with the Lua C API: a lua_CFunction. */
typedef int (*tide_vm_lua_fn)(struct lua_State *L);
/* Make the lua_CFunction `fn` the global `name` of the scripts' environment. */
TIDE_API tide_vm_status tide_vm_register_lua(tide_vm *vm, const char *name, tide_vm_lua_fn fn);

/* The message of the last failed run or call (with a Lua traceback where
 * there is one), or "" after a success. Valid until the next run, call or close. */
TIDE_API const char *tide_vm_last_error(const tide_vm *vm);
/* Bytes the VM holds now: tensor storage made inside its runs and calls (the
 * host's references to results included), plus its Lua heap. */
TIDE_API int64_t tide_vm_memory_used(tide_vm *vm);

/* For Lua-aware hosts (lua.h, lauxlib.h): the VM's lua_State. Values a host
 * sets or reads there bypass the sandbox; code it runs with lua_pcall
 * directly escapes the budgets and memory accounting, which tide_vm_call keeps. */
TIDE_API struct lua_State *tide_vm_lua_state(tide_vm *vm);
/* Call the function on the Lua stack below its `nargs` arguments (as lua_pcall
 * does, LUA_MULTRET allowed for nresults) under the VM's budgets, with a
 * traceback on error. On success the results replace the function and
 * arguments; on failure nothing is left on the stack. */
TIDE_API tide_vm_status tide_vm_call(tide_vm *vm, int nargs, int nresults);

#ifdef __cplusplus
}
#endif
#endif
