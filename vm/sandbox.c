/* vm/sandbox.c — the scripts' environment of a sandboxed VM: the safe parts
 * of the standard library, a require that reaches tide's public modules and
 * the host's Lua folder only, and what the host allows back (tide/vm.h).
 *
 * Scripts run in their own environment table; tide's modules run in the
 * real globals (they need ffi), so nothing of theirs is handed over except
 * the public tide table. The string metatable is hidden (getmetatable("")
 * gives false), so scripts cannot reach the shared string library through
 * it, and string.dump is removed from it when bytecode is refused. Under
 * the VM's file policy (vm.h's files_root), Lua's io.open, io.lines,
 * io.input, io.output, os.remove and os.rename check it too, for tide's own
 * modules and for scripts given io, acting on what they judged: io opens as
 * tide's C readers do, os.remove and os.rename act inside the parent folder
 * they opened so (binding.lua), so a link swapped in after a check is never followed. */
#include "vm_state.h"

#include <lauxlib.h>

/* Run with the real globals: (allow: table of booleans, lua_root or nil) -> env. */
static const char sandbox_lua[] =
    "local allow, lua_root = ...\n"
    "local real_load, real_loadfile, setfenv, pairs, type, error = load, loadfile, setfenv, pairs, type, error\n"
    "local function copy(t) local c = {} for k, v in pairs(t) do c[k] = v end return c end\n"
    "local env = {}\n"
    "for _, k in ipairs{'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'print', 'select', 'tonumber',\n"
    "                   'tostring', 'type', 'unpack', 'xpcall', 'rawequal', 'rawget', 'rawset', 'setmetatable',\n"
    "                   'getmetatable', '_VERSION'} do env[k] = _G[k] end\n"
    "env._G = env\n"
    "env.math, env.table, env.coroutine, env.bit = copy(math), copy(table), copy(coroutine), copy(bit)\n"
    "env.string = copy(string)\n"
    "if not allow.bytecode then env.string.dump = nil; string.dump = nil end\n"
    "getmetatable('').__metatable = false\n"
    "local gc_ok = { collect = true, count = true, step = true }\n"
    "env.collectgarbage = function(opt, arg)\n"
    "  opt = opt or 'collect'\n"
    "  if not gc_ok[opt] then error(\"collectgarbage('\" .. tostring(opt) .. \"') is not allowed in this sandbox\", 2) end\n"
    "  return collectgarbage(opt, arg)\n"
    "end\n"
    "local mode = allow.bytecode and 'bt' or 't'\n"
    "local function with_env(f, fenv)\n"
    "  if f then setfenv(f, fenv == nil and env or fenv) end\n"
    "  return f\n"
    "end\n"
    "env.load = function(chunk, name, m, fenv)\n"
    "  local f, err = real_load(chunk, name, allow.bytecode and (m or 'bt') or 't')\n"
    "  if not f then return nil, err end\n"
    "  return with_env(f, fenv)\n"
    "end\n"
    "env.loadstring = function(s, name) return env.load(s, name) end\n"
    "if allow.load_files then\n"
    "  env.loadfile = function(path, m, fenv)\n"
    "    local f, err = real_loadfile(path, allow.bytecode and (m or 'bt') or 't')\n"
    "    if not f then return nil, err end\n"
    "    return with_env(f, fenv)\n"
    "  end\n"
    "  env.dofile = function(path)\n"
    "    local f, err = env.loadfile(path)\n"
    "    if not f then error(err, 2) end\n"
    "    return f()\n"
    "  end\n"
    "end\n"
    "if allow.checked_files then -- the VM's file policy (tide/files.h) also covers Lua's io in tide's own code\n"
    "  local binding = require 'tide.binding'\n"
    "  local open, lines, input, output, remove, rename = io.open, io.lines, io.input, io.output, os.remove, os.rename\n"
    "  -- Opened as tide's C readers open (binding.open_file): the policy judges the file opened, so a link\n"
    "  -- swapped into the path after a check is refused, never followed. Refusals raise; other failures\n"
    "  -- (a missing file) return nil and a message, as io.open does.\n"
    "  local function pinned(path, mode)\n"
    "    local f, err, code, refused = binding.open_file(path, mode)\n"
    "    if refused then error(err, 3) end\n"
    "    return f, err, code\n"
    "  end\n"
    "  io.open = function(path, mode, ...)\n"
    "    if type(path) ~= 'string' and type(path) ~= 'number' then return open(path, mode, ...) end\n"
    "    local f, err, code = pinned(path, mode or 'r') -- not a tail call: the error's level is the caller's\n"
    "    return f, err, code\n"
    "  end\n"
    "  io.lines = function(path, ...)\n"
    "    if type(path) ~= 'string' and type(path) ~= 'number' then return lines(path, ...) end\n"
    "    local f, err = pinned(path, 'r')\n"
    "    if not f then error(err, 2) end -- as io.lines: a missing file is an error\n"
    "    local it = f:lines(...)\n"
    "    return function() local l = it() if l == nil then f:close() end return l end\n"
    "  end\n"
    "  io.input = function(f)\n"
    "    if type(f) == 'string' or type(f) == 'number' then f = assert(pinned(f, 'r')) end\n"
    "    return input(f)\n"
    "  end\n"
    "  io.output = function(f)\n"
    "    if type(f) == 'string' or type(f) == 'number' then f = assert(pinned(f, 'w')) end\n"
    "    return output(f)\n"
    "  end\n"
    "  -- in the parent folder judged, opened as tide opens files (binding.remove_file, rename_file)\n"
    "  local function acted(ok, err, code, refused)\n"
    "    if refused then error(err, 3) end\n"
    "    return ok, err, code\n"
    "  end\n"
    "  os.remove = function(path)\n"
    "    if type(path) ~= 'string' and type(path) ~= 'number' then return remove(path) end\n"
    "    local ok, err, code = acted(binding.remove_file(path))\n"
    "    return ok, err, code\n"
    "  end\n"
    "  os.rename = function(a, b)\n"
    "    local function named(v) return type(v) == 'string' or type(v) == 'number' end -- Lua takes numbers as names\n"
    "    if not named(a) or not named(b) then return rename(a, b) end\n"
    "    local ok, err, code = acted(binding.rename_file(a, b))\n"
    "    return ok, err, code\n"
    "  end\n"
    "end\n"
    "if allow.io then env.io = io end\n"
    "if allow.os then env.os = os end\n"
    "if allow.debug then env.debug, env.getfenv, env.setfenv = debug, getfenv, setfenv end\n"
    "if allow.c_modules then env.package = { loadlib = package.loadlib, cpath = package.cpath } end\n"
    "local loaded = { string = env.string, math = env.math, table = env.table, coroutine = env.coroutine,\n"
    "                 bit = env.bit, io = env.io, os = env.os, debug = env.debug }\n"
    "local root_path = lua_root and (lua_root .. '/?.lua;' .. lua_root .. '/?/init.lua')\n"
    "local function find(name)\n"
    "  if name == 'tide' then return require 'tide' end\n"
    "  if name == 'ffi' then return allow.ffi and require 'ffi' or nil end\n"
    "  local sub = name:match('^tide%.([%a_][%w_]*)$')\n"
    "  if sub then -- only what the public tide table holds\n"
    "    local v = require('tide')[sub]\n"
    "    return type(v) == 'table' and v or nil\n"
    "  end\n"
    "  local path = root_path and package.searchpath(name, root_path)\n"
    "  if path then -- the host's own modules run in the sandbox too\n"
    "    local f = assert(real_loadfile(path, 't'))\n"
    "    setfenv(f, env)\n"
    "    local v = f(name)\n"
    "    if v == nil then v = true end\n"
    "    return v\n"
    "  end\n"
    "  if allow.c_modules then\n"
    "    path = package.searchpath(name, package.cpath)\n"
    "    if path then\n"
    "      local f = assert(package.loadlib(path, 'luaopen_' .. name:gsub('%.', '_')))\n"
    "      local v = f(name)\n"
    "      if v == nil then v = true end\n"
    "      return v\n"
    "    end\n"
    "  end\n"
    "end\n"
    "env.require = function(name)\n"
    "  if type(name) ~= 'string' then error(\"bad argument #1 to 'require' (string expected, got \" .. type(name) .. ')', 2) end\n"
    "  local v = loaded[name]\n"
    "  if v ~= nil then return v end\n"
    "  v = find(name)\n"
    "  if v == nil then\n"
    "    error(\"module '\" .. name .. \"' is not allowed in this sandbox (scripts may require tide, its public \" ..\n"
    "          \"modules and the host's Lua modules)\", 2)\n"
    "  end\n"
    "  loaded[name] = v\n"
    "  return v\n"
    "end\n"
    "return env\n";

/* Build the environment; the table is kept in the registry (vm->env_ref). */
void tide_vm_sandbox_open(tide_vm *vm) {
  lua_State *L = vm->L;
  unsigned allow = vm->opts.allow;
  if (luaL_loadbuffer(L, sandbox_lua, sizeof sandbox_lua - 1, "=(tide sandbox)")) lua_error(L);
  lua_createtable(L, 0, 8);
  static const struct {
    unsigned bit;
    const char *name;
  } bits[] = {{TIDE_VM_ALLOW_IO, "io"},
              {TIDE_VM_ALLOW_OS, "os"},
              {TIDE_VM_ALLOW_FFI, "ffi"},
              {TIDE_VM_ALLOW_DEBUG, "debug"},
              {TIDE_VM_ALLOW_LOAD_FILES, "load_files"},
              {TIDE_VM_ALLOW_BYTECODE, "bytecode"},
              {TIDE_VM_ALLOW_C_MODULES, "c_modules"}};
  for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
    lua_pushboolean(L, (allow & bits[i].bit) != 0);
    lua_setfield(L, -2, bits[i].name);
  }
  lua_pushboolean(L, vm->files != NULL);
  lua_setfield(L, -2, "checked_files");
  if (vm->lua_root) lua_pushstring(L, vm->lua_root);
  else lua_pushnil(L);
  lua_call(L, 2, 1);
  vm->env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}
