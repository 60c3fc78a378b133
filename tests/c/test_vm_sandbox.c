/* tests/c/test_vm_sandbox.c — a sandboxed VM (tide/vm.h): each capability
 * is refused unless the host allows it back, tide still works, and nothing
 * reachable from tide hands a script ffi, the binding or the C library. */
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tide/vm.h"
#include "util.h"

static tide_vm *open_sandbox_in(unsigned allow, const char *lua_root, const char *files_root) {
  tide_vm_options opts;
  memset(&opts, 0, sizeof opts);
  opts.sandbox = true;
  opts.allow = allow;
  opts.lua_root = lua_root;
  opts.files_root = files_root;
  return tide_vm_open(&opts);
}

static tide_vm *open_sandbox(unsigned allow, const char *lua_root) { return open_sandbox_in(allow, lua_root, NULL); }

/* `code` fails in the sandbox with a message containing `expect`. */
static bool refused(tide_vm *vm, const char *code, const char *expect) {
  tide_vm_status st = tide_vm_dostring(vm, code, "=script");
  bool ok = st == TIDE_VM_ERR_RUN && contains(tide_vm_last_error(vm), expect);
  if (!ok) fprintf(stderr, "not refused as expected: %s\n  -> %d %s\n", code, (int)st, tide_vm_last_error(vm));
  return ok;
}

static bool runs(tide_vm *vm, const char *code) {
  tide_vm_status st = tide_vm_dostring(vm, code, "=script");
  if (st != TIDE_VM_OK) fprintf(stderr, "failed: %s\n  -> %s\n", code, tide_vm_last_error(vm));
  return st == TIDE_VM_OK;
}

/* A lua_CFunction giving scripts a precompiled chunk (bytecode) to try. */
static int bytecode_writer(lua_State *L, const void *p, size_t n, void *ud) {
  (void)L;
  luaL_addlstring((luaL_Buffer *)ud, p, n);
  return 0;
}
static int make_bytecode(lua_State *L) {
  luaL_Buffer b;
  if (luaL_loadstring(L, "return 42")) return lua_error(L);
  luaL_buffinit(L, &b);
  lua_dump(L, bytecode_writer, &b);
  luaL_pushresult(&b);
  return 1;
}

/* A lua_CFunction keeping its argument (the values a script saw) in the registry. */
static int report(lua_State *L) {
  lua_settop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "test_seen");
  return 0;
}

/* Every item refused by default, one check each. */
static void test_refused(void) {
  tide_vm *vm = open_sandbox(0, NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(tide_vm_register_lua(vm, "make_bytecode", make_bytecode) == TIDE_VM_OK);
  /* io, os, debug: absent, and require does not bring them. */
  CHECK(refused(vm, "io.open('/etc/passwd')", "global 'io'"));
  CHECK(refused(vm, "require 'io'", "module 'io' is not allowed"));
  CHECK(refused(vm, "os.execute('true')", "global 'os'"));
  CHECK(refused(vm, "require 'os'", "module 'os' is not allowed"));
  CHECK(refused(vm, "debug.getregistry()", "global 'debug'"));
  CHECK(refused(vm, "require 'debug'", "module 'debug' is not allowed"));
  CHECK(refused(vm, "getfenv(0)", "global 'getfenv'"));
  CHECK(refused(vm, "setfenv(1, {})", "global 'setfenv'"));
  /* ffi, the JIT's controls, and the package library. */
  CHECK(refused(vm, "require 'ffi'", "module 'ffi' is not allowed"));
  CHECK(runs(vm, "assert(ffi == nil and jit == nil and package == nil and module == nil)"));
  CHECK(refused(vm, "require 'jit.util'", "not allowed"));
  /* C modules: package.loadlib and the cpath searcher. */
  CHECK(refused(vm, "require 'lfs'", "module 'lfs' is not allowed"));
  CHECK(refused(vm, "package.loadlib('liblua.so', 'luaopen_x')", "global 'package'"));
  /* Lua modules outside tide and the host's folder (the system's path). */
  CHECK(refused(vm, "require 'busted'", "module 'busted' is not allowed"));
  /* Loading files. */
  CHECK(refused(vm, "loadfile('/etc/hostname')", "global 'loadfile'"));
  CHECK(refused(vm, "dofile('/etc/hostname')", "global 'dofile'"));
  /* Bytecode: string.dump is gone (from the shared string table too), and
   * precompiled chunks do not load. */
  CHECK(runs(vm, "assert(string.dump == nil and ('').dump == nil)"));
  CHECK(runs(vm, "local f, err = load(make_bytecode()); assert(f == nil and err:find('mode'), err)"));
  CHECK(runs(vm, "local f, err = loadstring(make_bytecode()); assert(f == nil and err:find('mode'), err)"));
  CHECK(runs(vm, "local f, err = load(make_bytecode(), 'x', 'b'); assert(f == nil, err)"));
  CHECK(tide_vm_register_lua(vm, "report", report) == TIDE_VM_OK);
  lua_State *L = tide_vm_lua_state(vm);
  CHECK(make_bytecode(L) == 1);
  CHECK(tide_vm_dostring(vm, lua_tostring(L, -1), "=bc") == TIDE_VM_ERR_USAGE);
  CHECK(contains(tide_vm_last_error(vm), "precompiled"));
  lua_pop(L, 1);
  /* The shared string metatable is hidden; collectgarbage cannot stop the collector. */
  CHECK(runs(vm, "assert(getmetatable('') == false)"));
  CHECK(refused(vm, "collectgarbage('stop')", "not allowed in this sandbox"));
  CHECK(runs(vm, "collectgarbage(); assert(collectgarbage('count') > 0)"));
  /* Text chunks load, and run in the sandbox: no way out through load. */
  CHECK(runs(vm, "assert(load('return io')() == nil and loadstring('return 1 + 1')() == 2)"));
  CHECK(runs(vm, "assert(_G.io == nil and _G._G == _G and rawget(_G, 'require') == require)"));
  tide_vm_close(vm);
}

/* tide works, and nothing reachable from it (its tables, their metatables,
 * the lazily loaded modules, tensors) is ffi, the binding or a C library. */
static void test_tide_inside(void) {
  tide_vm *vm = open_sandbox(0, NULL);
  CHECK(vm != NULL);
  if (!vm) return;
  CHECK(runs(vm, "local tide = require 'tide'\n"
                 "local x = tide.tensor({1, 2, 3}, 'float32')\n"
                 "assert((x * 2):sum():item() == 12)\n"
                 "local layer = tide.layers.Dense{2}\n"
                 "assert(layer(tide.ones{1, 3}).shape[2] == 2)\n"
                 "assert(require('tide.layers') == tide.layers)"));
  CHECK(refused(vm, "require 'tide.binding'", "module 'tide.binding' is not allowed"));
  CHECK(refused(vm, "require 'tide.cdef'", "not allowed"));
  CHECK(refused(vm, "require 'tide.host'", "not allowed"));
  CHECK(runs(vm, "assert(require('tide').binding == nil)"));
  /* A tensor is no way to raw memory: from_buffer refuses its address. */
  CHECK(refused(vm, "local tide = require 'tide'; local x = tide.ones{4}\n"
                    "tide.from_buffer(x.data, {1000000}, 'uint8')",
                "raw pointers are not allowed in this sandbox"));
  CHECK(runs(vm, "local tide = require 'tide'; assert(tide.from_buffer('ab', {2}, 'uint8'):sum():item() == 195)"));
  CHECK(runs(vm, "assert(getmetatable(require('tide').ones{4}) == 'ffi')"));

  /* Walk everything reachable from tide (lazy modules loaded first). */
  CHECK(tide_vm_register_lua(vm, "report", report) == TIDE_VM_OK);
  CHECK(runs(vm, "local tide = require 'tide'\n"
                 "for k in pairs(getmetatable(tide).__lazy) do local _ = tide[k] end\n"
                 "local seen = {}\n"
                 "local function walk(v)\n"
                 "  if v == nil or seen[v] then return end\n"
                 "  local tv = type(v)\n"
                 "  if tv == 'table' then\n"
                 "    seen[v] = true\n"
                 "    for k, x in pairs(v) do walk(k) walk(x) end\n"
                 "    walk(getmetatable(v))\n"
                 "  elseif tv == 'function' or tv == 'userdata' or tv == 'cdata' or tv == 'thread' then\n"
                 "    seen[v] = true\n"
                 "  end\n"
                 "end\n"
                 "walk(tide)\n"
                 "report(seen)"));
  lua_State *L = tide_vm_lua_state(vm);
  CHECK(luaL_loadstring(L, "local seen = debug.getregistry().test_seen\n"
                           "local binding = require 'tide.binding'\n"
                           "local ffi = require 'ffi'\n"
                           "local bad = { [ffi] = 'ffi', [ffi.C] = 'ffi.C', [binding] = 'tide.binding',\n"
                           "  [binding.C] = 'libtide', [debug] = 'debug', [io] = 'io', [os] = 'os',\n"
                           "  [package] = 'package', [package.loaded] = 'package.loaded', [_G] = '_G',\n"
                           "  [debug.getregistry()] = 'the registry', [require] = 'require', [load] = 'load',\n"
                           "  [loadfile] = 'loadfile', [getfenv] = 'getfenv', [jit] = 'jit' }\n"
                           "local n = 0\n"
                           "for v in pairs(seen) do\n"
                           "  n = n + 1\n"
                           "  if bad[v] then error('a script reaches ' .. bad[v] .. ' through tide') end\n"
                           "end\n"
                           "assert(n > 1000, n)\n") == 0);
  CHECK(tide_vm_call(vm, 0, 0) == TIDE_VM_OK);
  if (*tide_vm_last_error(vm)) fprintf(stderr, "%s\n", tide_vm_last_error(vm));
  tide_vm_close(vm);
}

/* Write `text` to dir/name. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The host's Lua folder: its modules load, and run inside the sandbox. */
static void test_lua_root(void) {
  char dir[] = "/tmp/tide_test_sandbox_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  write_file(dir, "helper.lua", "return { has_io = io ~= nil, twice = function(x) return 2 * x end }\n");
  write_file(dir, "code.lua", "answer = 42\n");
  tide_vm *vm = open_sandbox(0, dir);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(runs(vm, "local h = require 'helper'; assert(h.twice(21) == 42 and h.has_io == false)"));
    char path[600];
    snprintf(path, sizeof path, "%s/code.lua", dir);
    CHECK(tide_vm_dofile(vm, path) == TIDE_VM_OK); /* the host may run files */
    CHECK(runs(vm, "assert(answer == 42)"));
    tide_vm_close(vm);
  }

  /* Allowed back: loadfile and dofile, still in the sandbox. */
  vm = open_sandbox(TIDE_VM_ALLOW_LOAD_FILES, NULL);
  CHECK(vm != NULL);
  if (vm) {
    char code[800];
    snprintf(code, sizeof code, "dofile('%s/code.lua'); assert(answer == 42)\n"
                                "local f = assert(loadfile('%s/helper.lua')); assert(f().has_io == false)",
             dir, dir);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  char path[600];
  snprintf(path, sizeof path, "%s/helper.lua", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/code.lua", dir);
  unlink(path);
  rmdir(dir);
}

/* Each allow bit gives its item back. */
static void test_allowed(void) {
  tide_vm *vm = open_sandbox(TIDE_VM_ALLOW_IO | TIDE_VM_ALLOW_OS | TIDE_VM_ALLOW_DEBUG, NULL);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(runs(vm, "assert(io.open and os.time() > 0 and debug.traceback and getfenv and setfenv)"));
    CHECK(runs(vm, "assert(require('io') == io and require('os') == os)"));
    CHECK(refused(vm, "require 'ffi'", "not allowed"));
    tide_vm_close(vm);
  }
  vm = open_sandbox(TIDE_VM_ALLOW_FFI, NULL);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(runs(vm, "local ffi = require 'ffi'; assert(ffi.sizeof('int') == 4)"));
    CHECK(runs(vm, "local tide = require 'tide'; local s = 'ab'\n"
                   "assert(tide.from_buffer(require('ffi').cast('const char *', s), {2}, 'uint8'):sum():item() == 195)"));
    CHECK(refused(vm, "os.exit()", "global 'os'"));
    tide_vm_close(vm);
  }
  vm = open_sandbox(TIDE_VM_ALLOW_BYTECODE, NULL);
  CHECK(vm != NULL);
  if (vm) {
    CHECK(tide_vm_register_lua(vm, "make_bytecode", make_bytecode) == TIDE_VM_OK);
    CHECK(runs(vm, "assert(load(make_bytecode())() == 42 and string.dump)"));
    tide_vm_close(vm);
  }
  vm = open_sandbox(TIDE_VM_ALLOW_C_MODULES, NULL);
  CHECK(vm != NULL);
  if (vm) {
    /* lfs is Debian's LuaFileSystem (busted needs it), on the system's cpath. */
    CHECK(runs(vm, "assert(package.loadlib and require('lfs').currentdir)"));
    tide_vm_close(vm);
  }
}

/* A host function that checks a path with the host's rights: 1 when allowed. */
static int host_may_read(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)n_in, (void)in, (void)max_out;
  if (tide_tensor_init(&out[0], TIDE_INT32, 0, NULL)) return -1;
  *(int32_t *)out[0].data = tide_file_check((const char *)userdata, false) == TIDE_OK;
  return 1;
}

/* tide's file functions under the sandbox: nowhere by default, under
 * files_root when given (in pipeline threads too, and Lua's io in tide's
 * code or in scripts given io), anywhere with TIDE_VM_ALLOW_FILES; the
 * host's own functions and the host thread after a call keep their rights. */
static void test_files(void) {
  char root[] = "/tmp/tide_test_files_XXXXXX", out[] = "/tmp/tide_test_out_XXXXXX";
  CHECK(mkdtemp(root) != NULL && mkdtemp(out) != NULL);
  write_file(out, "lines.txt", "a\nb\n");
  char code[2048], outside_file[128];
  snprintf(outside_file, sizeof outside_file, "%s/lines.txt", out);

  tide_vm *vm = open_sandbox(0, NULL);
  CHECK(vm != NULL);
  if (vm) {
    snprintf(code, sizeof code, "require('tide').io.TFRecordWriter('%s/w.tfrecord')", root);
    CHECK(refused(vm, code, "file access refused: cannot write"));
    CHECK(refused(vm, code, "this host allows its scripts no files"));
    snprintf(code, sizeof code, "for x in require('tide').data.TextLineDataset('%s'):iter() do end", outside_file);
    CHECK(refused(vm, code, "allows its scripts no files"));
    CHECK(refused(vm, "require('tide').io.matching_files('/etc/*')", "allows its scripts no files"));
    CHECK(tide_file_check(outside_file, false) == TIDE_OK); /* the host thread after the call: no policy */
    CHECK(tide_vm_register(vm, "host_may_read", host_may_read, outside_file) == TIDE_VM_OK);
    CHECK(runs(vm, "assert(host_may_read():item() == 1)")); /* the host's function: the host's rights */
    tide_vm_close(vm);
  }

  vm = open_sandbox_in(TIDE_VM_ALLOW_IO, NULL, root);
  CHECK(vm != NULL);
  if (vm) {
    snprintf(code, sizeof code,
             "local tide = require 'tide'\n"
             "local w = tide.io.TFRecordWriter('%s/w.tfrecord'); w:write('hello'); w:close()\n"
             "local got = {}\n"
             "for x in tide.data.TFRecordDataset('%s/w.tfrecord'):prefetch(1):iter() do got[#got + 1] = x:item() end\n"
             "assert(#got == 1 and got[1] == 'hello')\n"
             "local f = assert(io.open('%s/note.txt', 'w')); f:write('x'); f:close()",
             root, root, root);
    CHECK(runs(vm, code));
    /* the first open happens on the prefetch thread: it has the VM's policy */
    snprintf(code, sizeof code, "for x in require('tide').data.TextLineDataset('%s'):prefetch(1):iter() do end",
             outside_file);
    CHECK(refused(vm, code, "lies outside"));
    snprintf(code, sizeof code, "io.open('%s', 'r')", outside_file);
    CHECK(refused(vm, code, "file access refused: cannot read"));
    snprintf(code, sizeof code, "os.remove('%s')", outside_file);
    CHECK(refused(vm, code, "global 'os'")); /* no os without its bit */
    snprintf(code, sizeof code, "require('tide').io.TFRecordWriter('%s/../%s/w.tfrecord')", root, strrchr(out, '/') + 1);
    CHECK(refused(vm, code, "lies outside"));
    tide_vm_close(vm);
  }

  vm = open_sandbox(TIDE_VM_ALLOW_FILES, NULL);
  CHECK(vm != NULL);
  if (vm) {
    snprintf(code, sizeof code, "for x in require('tide').data.TextLineDataset('%s'):iter() do end", outside_file);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  vm = open_sandbox(TIDE_VM_ALLOW_IO, NULL); /* io given back without a root: files as io reaches them */
  CHECK(vm != NULL);
  if (vm) {
    snprintf(code, sizeof code, "assert(io.open('%s', 'r')):close()", outside_file);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  CHECK(open_sandbox_in(0, NULL, "/no/such/root") == NULL && contains(tide_last_error(), "files_root"));

  char path[128];
  const char *made[] = {"w.tfrecord", "note.txt"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", root, made[i]);
    unlink(path);
  }
  unlink(outside_file);
  rmdir(root);
  rmdir(out);
}

/* A host function that calls the script's `cb` back (issue 29, item 1). The
 * nested script code runs under the VM's file policy again; the host's own
 * code around it keeps the host's rights (`outside` it may read). */
typedef struct {
  tide_vm *vm;
  const char *outside;
  int host_allowed_after; /* tide_file_check(outside) in the host's code after the nested call */
} callback_host;

static int host_calls_back(void *userdata, int n_in, const tide_tensor *const *in, int max_out, tide_tensor *out) {
  (void)n_in, (void)in;
  callback_host *h = userdata;
  int n = 0;
  tide_vm_status st = tide_vm_call_tensors(h->vm, "cb", 0, NULL, max_out, out, &n);
  h->host_allowed_after = tide_file_check(h->outside, false) == TIDE_OK;
  if (st != TIDE_VM_OK) {
    tide_set_error(TIDE_ERR_IO, "%s", tide_vm_last_error(h->vm));
    return -1;
  }
  return n;
}

static void test_files_nested(void) {
  char root[] = "/tmp/tide_test_files_XXXXXX", out[] = "/tmp/tide_test_out_XXXXXX";
  CHECK(mkdtemp(root) != NULL && mkdtemp(out) != NULL);
  char code[1024], escaped[128];
  snprintf(escaped, sizeof escaped, "%s/escape.npy", out);
  tide_vm *vm = open_sandbox_in(0, NULL, root);
  CHECK(vm != NULL);
  if (vm) {
    callback_host h = {vm, escaped, 0};
    CHECK(tide_vm_register(vm, "call_back", host_calls_back, &h) == TIDE_VM_OK);
    snprintf(code, sizeof code,
             "local tide = require 'tide'\n"
             "function cb() tide.io.write_npy('%s', tide.ones{2}) return 1 end\n"
             "call_back()", escaped);
    CHECK(refused(vm, code, "lies outside"));
    CHECK(access(escaped, F_OK) != 0); /* nothing written outside */
    CHECK(h.host_allowed_after == 1); /* back in the host's code: the host's rights */
    /* inside the root the nested call may write */
    snprintf(code, sizeof code,
             "local tide = require 'tide'\n"
             "function cb() tide.io.write_npy('%s/inside.npy', tide.ones{2}) return 1 end\n"
             "assert(call_back():item() == 1)", root);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  char path[160];
  snprintf(path, sizeof path, "%s/inside.npy", root);
  CHECK(unlink(path) == 0);
  unlink(escaped);
  rmdir(root);
  rmdir(out);
}

/* A dangling symbolic link planted in the allowed folder, pointing out
 * (issue 29, item 2): tide's writers (TFRecordWriter opens in C) and Lua's
 * io in tide's code (CSVLogger) and in scripts refuse it; nothing is made outside. */
static void test_files_dangling_link(void) {
  char root[] = "/tmp/tide_test_files_XXXXXX", out[] = "/tmp/tide_test_out_XXXXXX";
  CHECK(mkdtemp(root) != NULL && mkdtemp(out) != NULL);
  char link[128], target[128], code[1024];
  snprintf(link, sizeof link, "%s/planted", root);
  snprintf(target, sizeof target, "%s/escape", out);
  CHECK(symlink(target, link) == 0);
  tide_vm *vm = open_sandbox_in(TIDE_VM_ALLOW_IO, NULL, root);
  CHECK(vm != NULL);
  if (vm) {
    const char *tries[] = {"require('tide').io.TFRecordWriter('%s')",
                           "require('tide').callbacks.CSVLogger('%s'):on_train_begin()", "io.open('%s', 'w')",
                           "io.open('%s', 'a')"};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
      snprintf(code, sizeof code, tries[i], link);
      CHECK(refused(vm, code, "lies outside"));
      CHECK(access(target, F_OK) != 0); /* nothing made outside */
      unlink(target);
    }
    /* a FIFO in the allowed folder: refused before Lua's open could wait on it (item 11) */
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/pipe", root);
    CHECK(mkfifo(fifo, 0600) == 0);
    snprintf(code, sizeof code, "io.open('%s', 'r')", fifo);
    CHECK(refused(vm, code, "it is a FIFO, not a regular file"));
    snprintf(code, sizeof code, "for l in io.lines('%s') do end", fifo);
    CHECK(refused(vm, code, "it is a FIFO, not a regular file"));
    unlink(fifo);
    /* fopen's mode extensions and numbers as names reach no path unjudged (the
     * working folder, where a number names a file, lies outside the root) */
    snprintf(code, sizeof code, "io.open('%s/m.txt', 'we')", root);
    CHECK(refused(vm, code, "invalid mode"));
    CHECK(refused(vm, "io.open(4217, 'w')", "lies outside"));
    CHECK(refused(vm, "io.output(4217)", "lies outside"));
    CHECK(access("4217", F_OK) != 0);
    unlink("4217");
    tide_vm_close(vm);
  }
  unlink(link);
  unlink(target);
  rmdir(root);
  rmdir(out);
}

/* Globs with ".." after a wildcard (issue 29, item 3): matching_files and
 * Dataset.list_files list nothing outside the allowed folder. */
static void test_files_glob(void) {
  char root[] = "/tmp/tide_test_files_XXXXXX", sub[64], code[2048];
  CHECK(mkdtemp(root) != NULL);
  snprintf(sub, sizeof sub, "%s/sub", root);
  CHECK(mkdir(sub, 0700) == 0);
  tide_vm *vm = open_sandbox_in(0, NULL, root);
  CHECK(vm != NULL);
  if (vm) {
    snprintf(code, sizeof code,
             "local tide = require 'tide'\n"
             "local pattern = '%s/s*/../../../../../../etc/pass*'\n"
             "local ok, r = pcall(tide.io.matching_files, pattern)\n"
             "assert(ok and r.shape[1] == 0 or not ok and tostring(r):find('lies outside'), tostring(r))\n"
             "local n = 0\n"
             "ok, r = pcall(function()\n"
             "  for _ in tide.data.Dataset.list_files(pattern, {shuffle = false}):iter() do n = n + 1 end\n"
             "end)\n"
             "assert(n == 0 and (ok or tostring(r):find('lies outside') or tostring(r):find('matched')), tostring(r))\n"
             "ok, r = pcall(tide.io.matching_files, '%s/s*/../*')\n"
             "assert(ok and r.shape[1] == 1, tostring(r))", root, root);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  rmdir(sub);
  rmdir(root);
}

/* What changes the whole process (issue 29, items 4 and 5): refused in a
 * sandbox unless the host allows it, with a message saying so; the process
 * keeps its settings. */
static void test_process_wide(void) {
  int threads = tide_get_num_threads();
  tide_vm *vm = open_sandbox(0, NULL);
  CHECK(vm != NULL);
  if (vm) {
    const char *settings[] = {"tide.config.set_num_threads(1)", "tide.config.set_max_cpu_isa('baseline')",
                              "tide.config.set_memory_cache_limit(0)", "tide.config.reset_memory_peak()",
                              "tide.config.enable_tensor_float_32(true)", "tide.debugging.enable_check_numerics()",
                              "tide.debugging.disable_check_numerics()"};
    char code[256];
    /* the level before (aarch64 and pre-AVX2 CPUs run "baseline" anyway): a refused cap leaves it */
    const char *isa = tide_cpu_isa();
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
      snprintf(code, sizeof code, "local tide = require 'tide'; %s", settings[i]);
      CHECK(refused(vm, code, "TIDE_VM_ALLOW_PROCESS_SETTINGS"));
    }
    CHECK(tide_get_num_threads() == threads);
    CHECK(strcmp(tide_cpu_isa(), isa) == 0);
    const char *profiler[] = {"tide.profiler.start()", "tide.profiler.stop()", "tide.profiler.summary{print = false}",
                              "tide.profiler.event_count()", "tide.profiler.dropped_events()",
                              "tide.profiler.write_trace('t.json')"};
    for (size_t i = 0; i < sizeof profiler / sizeof profiler[0]; i++) {
      snprintf(code, sizeof code, "local tide = require 'tide'; %s", profiler[i]);
      CHECK(refused(vm, code, "TIDE_VM_ALLOW_PROFILER"));
    }
    /* what touches only the VM still runs: reading settings, collecting, a traced range (not recorded) */
    CHECK(runs(vm, "local tide = require 'tide'\n"
                   "assert(tide.config.get_num_threads() >= 1 and tide.config.cpu_isa())\n"
                   "tide.config.release_memory()\n"
                   "assert(tide.profiler.trace('r', function(a) return a + 1 end, 1) == 2)\n"
                   "assert(tide.profiler.active() == false)"));
    tide_vm_close(vm);
  }
  CHECK(tide_profiler_active() == 0);
  vm = open_sandbox(TIDE_VM_ALLOW_PROCESS_SETTINGS | TIDE_VM_ALLOW_PROFILER, NULL);
  CHECK(vm != NULL);
  if (vm) {
    char code[512];
    snprintf(code, sizeof code,
             "local tide = require 'tide'\n"
             "tide.config.set_num_threads(1); assert(tide.config.get_num_threads() == 1)\n"
             "tide.config.set_num_threads(%d)\n"
             "tide.profiler.start(); local _ = tide.ones{2} + 1; tide.profiler.stop()\n"
             "assert(tide.profiler.event_count() > 0)", threads);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  CHECK(tide_get_num_threads() == threads);
}

/* The check-then-open race (issue 29): a host thread swaps a link in the
 * allowed folder between a folder inside and one outside, as fast as it can,
 * while the script opens, removes and renames through it. Lua's io.open (and
 * os.remove, os.rename) checked the path, then acted on it by name, so a link
 * swapped in between made a file outside, or removed one; they now act on
 * what they opened (the file, or the parent folder) and never leave the folder. */
typedef struct {
  char in[128], out[128], link[128], tmp[128];
  int stop; /* atomic */
} flipper;

static void *flip(void *arg) {
  flipper *f = arg;
  for (unsigned i = 0; !__atomic_load_n(&f->stop, __ATOMIC_RELAXED); i++) {
    unlink(f->tmp);
    if (symlink(i & 1 ? f->out : f->in, f->tmp) == 0) rename(f->tmp, f->link);
  }
  return NULL;
}

static void test_files_link_race(void) {
  char root[] = "/tmp/tide_test_files_XXXXXX", out[] = "/tmp/tide_test_out_XXXXXX", path[256], code[2048];
  CHECK(mkdtemp(root) != NULL && mkdtemp(out) != NULL);
  flipper f;
  memset(&f, 0, sizeof f);
  snprintf(f.in, sizeof f.in, "%s/in", root);
  snprintf(f.out, sizeof f.out, "%s", out);
  snprintf(f.link, sizeof f.link, "%s/sw", root);
  snprintf(f.tmp, sizeof f.tmp, "%s/tmp", root);
  CHECK(mkdir(f.in, 0700) == 0);
  snprintf(path, sizeof path, "%s/victim", out); /* what a remove or rename through the link must not reach */
  FILE *v = fopen(path, "w");
  CHECK(v != NULL);
  if (v) fclose(v);
  tide_vm *vm = open_sandbox_in(TIDE_VM_ALLOW_IO | TIDE_VM_ALLOW_OS, NULL, root);
  CHECK(vm != NULL);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, flip, &f) == 0);
  if (vm) {
    snprintf(code, sizeof code,
             "local R, opened = '%s', 0\n"
             "for i = 1, 4000 do\n"
             "  local ok, fh = pcall(io.open, R .. '/sw/made' .. i, 'w')\n"
             "  if ok and fh then fh:close(); opened = opened + 1 end\n"
             "  pcall(os.remove, R .. '/sw/victim')\n"
             "  pcall(os.rename, R .. '/sw/victim', R .. '/in/taken')\n"
             "end\n"
             "assert(opened > 0, 'no open got through')",
             root);
    CHECK(runs(vm, code));
    tide_vm_close(vm);
  }
  __atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
  pthread_join(t, NULL);
  CHECK(access(path, F_OK) == 0); /* the victim is still there */
  char cmd[512];
  snprintf(cmd, sizeof cmd, "test \"$(ls -A %s)\" = victim", out); /* and nothing else was made outside */
  CHECK(system(cmd) == 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, out);
  CHECK(system(cmd) == 0);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "FAIL tests/c/test_vm_sandbox.c: hung (an open waiting on a FIFO?)\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
  _exit(1);
}

int main(void) {
  signal(SIGALRM, on_alarm); /* a regression that blocks fails the program instead of stalling the suite */
  alarm(600);
  test_refused();
  test_tide_inside();
  test_lua_root();
  test_allowed();
  test_files();
  test_files_nested();
  test_files_dangling_link();
  test_files_glob();
  test_files_link_race();
  test_process_wide();
  alarm(0);
  return CHECK_SUMMARY("vm_sandbox");
}
