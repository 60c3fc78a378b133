/* tests/c/test_vm.c — the embedding API (tide/vm.h, libtidevm): open, run a
 * string or a file, call a function through the Lua state, statuses and errors, close.
 * Limits: test_vm_limits.c; sandbox: test_vm_sandbox.c; tensors and host functions: test_vm_host.c. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tide/random.h"
#include "tide/vm.h"
#include "util.h"

/* Write `text` to a new file under `dir`; the path is returned in `path`. */
static bool write_file(char *path, size_t size, const char *dir, const char *name, const char *text) {
  snprintf(path, size, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

static void test_run_string(void) {
  tide_vm *vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(strcmp(tide_vm_last_error(vm), "") == 0);
  CHECK(tide_vm_dostring(vm, "local tide = require \"tide\"; local t = tide.tensor{1,2} + 1; "
                               "assert(t:totable()[2] == 3)",
                           "=ok") == 0);
  CHECK(strcmp(tide_vm_last_error(vm), "") == 0);

  /* A runtime error: non-zero, message and traceback kept, the VM still usable. */
  CHECK(tide_vm_dostring(vm, "local function inner() error('boom from inner') end\ninner()", "=bad") == TIDE_VM_ERR_RUN);
  const char *err = tide_vm_last_error(vm);
  CHECK(contains(err, "bad:1: boom from inner"));
  CHECK(contains(err, "stack traceback:"));
  CHECK(contains(err, "in function 'inner'"));

  /* tide's own errors come back with their message. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'; local x = tide.tensor{1,2} + tide.tensor{1,2,3}",
                           "=shapes") != 0);
  CHECK(contains(tide_vm_last_error(vm), "add"));
  CHECK(contains(tide_vm_last_error(vm), "[2]"));
  CHECK(contains(tide_vm_last_error(vm), "[3]"));

  /* A syntax error is an error too, with no code run. */
  CHECK(tide_vm_dostring(vm, "x = = 1", "=syntax") == TIDE_VM_ERR_SYNTAX);
  CHECK(contains(tide_vm_last_error(vm), "syntax:1:"));

  /* An error object that is not a string. */
  CHECK(tide_vm_dostring(vm, "error({})", NULL) != 0);
  CHECK(contains(tide_vm_last_error(vm), "table value"));
  CHECK(tide_vm_dostring(vm, "error(setmetatable({}, {__tostring = function() return 'custom' end}))",
                           NULL) != 0);
  CHECK(contains(tide_vm_last_error(vm), "custom"));

  /* Success clears the last error; the default chunk name is "(string)". */
  CHECK(tide_vm_dostring(vm, "counter = (counter or 0) + 1", NULL) == 0);
  CHECK(strcmp(tide_vm_last_error(vm), "") == 0);
  CHECK(tide_vm_dostring(vm, "error('where')", NULL) != 0);
  CHECK(contains(tide_vm_last_error(vm), "(string):1: where"));

  /* NULL arguments are errors, not crashes. */
  CHECK(tide_vm_dostring(vm, NULL, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "NULL"));
  CHECK(tide_vm_dofile(vm, NULL) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "NULL"));
  CHECK(tide_vm_dostring(NULL, "x = 1", NULL) == TIDE_VM_ERR_USAGE);
  CHECK(tide_vm_dofile(NULL, "x.lua") != 0);
  CHECK(tide_vm_call(NULL, 0, 0) != 0);
  CHECK(strcmp(tide_vm_last_error(NULL), "") == 0);
  CHECK(tide_vm_lua_state(NULL) == NULL);
  CHECK(tide_vm_memory_used(NULL) == 0);
  CHECK(tide_vm_memory_used(vm) > 0);
  tide_vm_close(vm);
  tide_vm_close(NULL);
}

static void test_lua_state_and_call(void) {
  tide_vm *vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  lua_State *L = tide_vm_lua_state(vm);
  CHECK(L != NULL);
  if (!L) return;

  /* A global set by tide code, read through the Lua C API. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                               "local t = tide.tensor({1.5, 2.5}, 'float32') * 2\n"
                               "result = t:totable()[2]\n"
                               "function scale(a, b) return (tide.tensor{a} * b):item(), 'done' end",
                           "=globals") == 0);
  lua_getglobal(L, "result");
  CHECK(lua_isnumber(L, -1) && lua_tonumber(L, -1) == 5.0);
  lua_pop(L, 1);

  /* A value set from C, seen by Lua. */
  lua_pushinteger(L, 41);
  lua_setglobal(L, "from_c");
  CHECK(tide_vm_dostring(vm, "assert(from_c + 1 == 42)", NULL) == 0);

  /* tide_vm_call: a Lua function with arguments, returned values left on the stack. */
  int top = lua_gettop(L);
  lua_getglobal(L, "scale");
  lua_pushinteger(L, 3);
  lua_pushinteger(L, 4);
  CHECK(tide_vm_call(vm, 2, 2) == 0);
  CHECK(lua_gettop(L) == top + 2);
  CHECK(lua_tonumber(L, -2) == 12.0);
  CHECK(lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "done") == 0);
  lua_settop(L, top);

  /* A returned value: load a chunk ourselves and call it with LUA_MULTRET. */
  CHECK(luaL_loadstring(L, "local tide = require 'tide'; return (tide.tensor{7} - 2):item(), 'x', nil") == 0);
  CHECK(tide_vm_call(vm, 0, LUA_MULTRET) == 0);
  CHECK(lua_gettop(L) == top + 3);
  CHECK(lua_tonumber(L, top + 1) == 5.0);
  lua_settop(L, top);

  /* A failing call leaves nothing on the stack and keeps message + traceback. */
  lua_getglobal(L, "scale");
  lua_pushstring(L, "not a number");
  lua_pushinteger(L, 2);
  CHECK(tide_vm_call(vm, 2, 1) == TIDE_VM_ERR_RUN);
  CHECK(lua_gettop(L) == top);
  CHECK(contains(tide_vm_last_error(vm), "stack traceback:"));
  CHECK(contains(tide_vm_last_error(vm), "globals:4:")); /* the line inside scale */

  /* Calling a non-function, or with too few values on the stack. */
  lua_pushinteger(L, 1);
  CHECK(tide_vm_call(vm, 0, 0) != 0);
  CHECK(contains(tide_vm_last_error(vm), "attempt to call"));
  CHECK(lua_gettop(L) == top);
  CHECK(tide_vm_call(vm, 5, 0) == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "tide_vm_call"));
  CHECK(tide_vm_call(vm, -1, 0) != 0);
  CHECK(lua_gettop(L) == top);

  /* tide_vm_call_tensors with name NULL calls (and pops) the function on top. */
  CHECK(tide_vm_dostring(vm, "local tide = require 'tide'\n"
                             "function plus(x) return x + 1 end", NULL) == TIDE_VM_OK);
  tide_tensor x, y;
  CHECK(tide_tensor_init(&x, TIDE_INT32, 0, NULL) == TIDE_OK);
  *(int32_t *)x.data = 41;
  const tide_tensor *in[1] = {&x};
  int n_out = 0;
  lua_getglobal(L, "plus");
  CHECK(tide_vm_call_tensors(vm, NULL, 1, in, 1, &y, &n_out) == TIDE_VM_OK && n_out == 1);
  CHECK(lua_gettop(L) == top);
  if (n_out == 1) {
    CHECK(*(const int32_t *)y.data == 42);
    tide_tensor_release(&y);
  }
  lua_pushinteger(L, 3); /* not a function: the error, and the value is consumed */
  CHECK(tide_vm_call_tensors(vm, NULL, 1, in, 1, &y, &n_out) == TIDE_VM_ERR_RUN && n_out == 0);
  CHECK(contains(tide_vm_last_error(vm), "attempt to call"));
  CHECK(lua_gettop(L) == top);
  lua_pushstring(L, "plus"); /* a string on the stack is a value to call, not a name */
  CHECK(tide_vm_call_tensors(vm, NULL, 1, in, 1, &y, &n_out) == TIDE_VM_ERR_RUN);
  CHECK(contains(tide_vm_last_error(vm), "attempt to call"));
  lua_getglobal(L, "plus"); /* a misuse with a function pushed: it is popped too */
  CHECK(tide_vm_call_tensors(vm, NULL, -1, in, 1, &y, &n_out) == TIDE_VM_ERR_USAGE);
  CHECK(lua_gettop(L) == top);
  tide_tensor_release(&x);

  /* package.loaded["tide.host"].lib names the libtide.so the VM uses. */
  CHECK(tide_vm_dostring(vm, "local lib = package.loaded['tide.host'].lib\n"
                               "assert(lib:match('/libtide%.so$'), lib)\n"
                               "assert(io.open(lib, 'rb')):close()",
                           "=host") == 0);
  tide_vm_close(vm);
}

static void test_run_file_and_root(void) {
  char dir[] = "/tmp/tide_test_vm_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char script[512], module[512], bad[512], missing[512];
  CHECK(write_file(script, sizeof script, dir, "script.lua",
                   "local tide = require 'tide'\n"
                   "local helper = require 'helper_mod'\n"
                   "file_result = helper.double((tide.tensor{20} + 1):item())\n"));
  CHECK(write_file(module, sizeof module, dir, "helper_mod.lua",
                   "return { double = function(x) return 2 * x end }\n"));
  CHECK(write_file(bad, sizeof bad, dir, "bad.lua", "local x = 1\nerror('file failed')\n"));
  snprintf(missing, sizeof missing, "%s/no_such_file.lua", dir);

  /* lua_root is searched for modules, and tide is still found. */
  tide_vm_options opts = {0};
  opts.lua_root = dir;
  tide_vm *vm = tide_vm_open(&opts);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(tide_vm_dofile(vm, script) == 0);
    lua_State *L = tide_vm_lua_state(vm);
    lua_getglobal(L, "file_result");
    CHECK(lua_tonumber(L, -1) == 42.0);
    lua_pop(L, 1);

    CHECK(tide_vm_dofile(vm, bad) != 0);
    CHECK(contains(tide_vm_last_error(vm), "bad.lua:2: file failed"));
    CHECK(contains(tide_vm_last_error(vm), "stack traceback:"));

    CHECK(tide_vm_dofile(vm, missing) == TIDE_VM_ERR_RUN);
    CHECK(contains(tide_vm_last_error(vm), "cannot open"));
    CHECK(contains(tide_vm_last_error(vm), "no_such_file.lua"));
    tide_vm_close(vm);
  }

  /* Without lua_root the module is not found, and the error says so. */
  vm = tide_vm_open(NULL);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(tide_vm_dofile(vm, script) != 0);
    CHECK(contains(tide_vm_last_error(vm), "helper_mod"));
    tide_vm_close(vm);
  }

  /* Two VMs at once are independent. */
  tide_vm *a = tide_vm_open(NULL), *b = tide_vm_open(NULL);
  CHECK(a && b);
  if (a && b) {
    CHECK(tide_vm_dostring(a, "shared = 'a'", NULL) == 0);
    CHECK(tide_vm_dostring(b, "assert(shared == nil)", NULL) == 0);
    CHECK(tide_vm_dostring(b, "local tide = require 'tide'; assert((tide.tensor{1} + 1):item() == 2)", NULL) == 0);
  }
  tide_vm_close(a);
  tide_vm_close(b);

  unlink(script);
  unlink(module);
  unlink(bad);
  rmdir(dir);
}

/* tide_vm_open(NULL) and zeroed options are the same defaults; a failure to
 * open sets tide_last_error(). */
static void test_open_options(void) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  tide_vm *vm = tide_vm_open(&opts);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(tide_vm_dostring(vm, "assert(io and os and debug and require 'ffi' and jit.status())", NULL) == TIDE_VM_OK);
    tide_vm_close(vm);
  }
  /* A cap far below what a Lua state needs: a clear refusal, no crash. */
  opts.memory_limit = 1000;
  vm = tide_vm_open(&opts);
  CHECK(vm == NULL);
  CHECK(contains(tide_last_error(), "tide_vm_open"));
  CHECK(contains(tide_last_error(), "memory limit"));
  tide_vm_close(vm);
}

/* The global seed is each VM's own (issue 29): two sandboxed VMs seeding
 * and drawing in turn do not move each other's streams, nor the host's seed;
 * a VM's seeded draws repeat whatever another VM does in between. */
static void test_seed_per_vm(void) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sandbox = true;
  tide_vm *a = tide_vm_open(&opts), *b = tide_vm_open(&opts);
  CHECK(a != NULL && b != NULL);
  if (!a || !b) {
    tide_vm_close(a);
    tide_vm_close(b);
    return;
  }
  tide_random_set_seed(42);
  uint64_t key0, counter0, key1, counter1;
  tide_random_reserve(3, &key0, &counter0);
  CHECK(tide_vm_dostring(a, "tide = require 'tide'; tide.random.set_seed(7); x1 = tide.random.uniform{3}:totable()\n"
                            "assert(tide.random.get_seed() == 7)", "=a") == TIDE_VM_OK);
  CHECK(tide_vm_dostring(b, "tide = require 'tide'; tide.random.set_seed(100); local y = tide.random.uniform{5}\n"
                            "local s = tide.random.uniform({2}, {seed = 3})", "=b") == TIDE_VM_OK);
  CHECK(tide_vm_dostring(a, "x2 = tide.random.uniform{3}:totable(); x3 = tide.random.uniform({2}, {seed = 3}):totable()\n"
                            "assert(tide.random.get_seed() == 7, 'seed ' .. tostring(tide.random.get_seed()))",
                         "=a") == TIDE_VM_OK);
  if (*tide_vm_last_error(a)) fprintf(stderr, "%s\n", tide_vm_last_error(a));
  /* Again in a alone: the same numbers. */
  CHECK(tide_vm_dostring(a, "tide.random.set_seed(7)\n"
                            "local function same(p, q) for i = 1, #p do assert(p[i] == q[i], i) end end\n"
                            "same(x1, tide.random.uniform{3}:totable())\n"
                            "same(x2, tide.random.uniform{3}:totable())\n"
                            "same(x3, tide.random.uniform({2}, {seed = 3}):totable())", "=again") == TIDE_VM_OK);
  if (*tide_vm_last_error(a)) fprintf(stderr, "%s\n", tide_vm_last_error(a));
  CHECK(tide_vm_dostring(b, "assert(tide.random.get_seed() == 100)", "=b") == TIDE_VM_OK);
  /* The host's stream: its seed, its counters going on from its last draw. */
  CHECK(tide_random_get_seed() == 42);
  tide_random_reserve(1, &key1, &counter1);
  CHECK(key1 == key0 && counter1 == counter0 + 3);
  /* A VM never seeded draws from a seed of its own, not the host's. */
  tide_vm *c = tide_vm_open(&opts);
  CHECK(c != NULL);
  CHECK(tide_vm_dostring(c, "local tide = require 'tide'; assert(tide.random.get_seed() ~= 42)", "=c") == TIDE_VM_OK);
  tide_vm_close(c);
  tide_vm_close(a);
  tide_vm_close(b);
}

int main(void) {
  test_open_options();
  test_run_string();
  test_lua_state_and_call();
  test_run_file_and_root();
  test_seed_per_vm();
  return CHECK_SUMMARY("vm");
}
