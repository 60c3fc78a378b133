/* vm/host.c — tensors across the host boundary: calling a Lua function with
 * tensors from C, and host functions (tensor or lua_CFunction) for scripts.
 *
 * A small Lua helper, run in the real globals (it needs ffi and tide's
 * binding), turns C headers into Lua tensors that share their storage and
 * back. Scripts never see it: host functions reach it only through upvalues
 * of closures, which a sandbox without debug cannot read. */
#include "vm_state.h"

#include <ctype.h>
#include <lauxlib.h>
#include <string.h>

#include "tide/error.h"
#include "tide/tensor.h"

static const char helper_lua[] =
    "local ffi = require 'ffi'\n"
    "local tide = require 'tide'\n"
    "local binding = require 'tide.binding'\n"
    "local convert = require 'tide.convert'\n"
    "local C, Tensor, istensor = binding.C, binding.Tensor, binding.istensor\n"
    "local select, type, unpack, tostring = select, type, unpack, tostring\n"
    "local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC\n"
    "local in_ptrs = ffi.typeof('const tide_tensor *const *')\n"
    "local out_ptr = ffi.typeof('tide_tensor *')\n"
    "local H = {}\n"
    "-- A Lua tensor sharing the C header p's data (no copy).\n"
    "local function adopt(p)\n"
    "  local t = Tensor()\n"
    "  C.tide_tensor_share(t, p)\n"
    "  return binding.finish(t)\n"
    "end\n"
    "-- v as a real tensor: Variables read, numbers and tables converted; else nil, why.\n"
    "local function as_tensor(v)\n"
    "  v = convert.unvariable(v)\n"
    "  if not istensor(v) then\n"
    "    local tv = type(v)\n"
    "    if tv ~= 'number' and tv ~= 'boolean' and tv ~= 'table' then return nil, 'a ' .. tv end\n"
    "    v = tide.tensor(v)\n"
    "  end\n"
    "  if bit.band(v.flags, SYMBOLIC) ~= 0 then return nil, 'a symbolic tensor (of a trace)' end\n"
    "  return v\n"
    "end\n"
    "-- The value at dotted `name` in env, or nil.\n"
    "local function resolve(env, name)\n"
    "  local v = env\n"
    "  for part in name:gmatch('[^.]+') do\n"
    "    if type(v) ~= 'table' then return nil end\n"
    "    v = v[part]\n"
    "  end\n"
    "  return v\n"
    "end\n"
    "-- tide_vm_call_tensors: returns the count, or -1 and a usage message.\n"
    "function H.call(fn, env, n_in, ins, max_out, outs, by_name)\n"
    "  local what = 'the function'\n"
    "  if by_name then\n"
    "    what = \"'\" .. fn .. \"'\"\n"
    "    fn = resolve(env, fn)\n"
    "    if fn == nil then return -1, 'tide_vm_call_tensors: no function ' .. what end\n"
    "  end\n"
    "  local args, pin = {}, ffi.cast(in_ptrs, ins)\n"
    "  for i = 1, n_in do\n"
    "    if pin[i - 1] == nil then return -1, 'tide_vm_call_tensors: input ' .. (i - 1) .. ' is NULL' end\n"
    "    args[i] = adopt(pin[i - 1])\n"
    "  end\n"
    "  local res = { n = 0 }\n"
    "  local function keep(...) res.n = select('#', ...); for i = 1, res.n do res[i] = select(i, ...) end end\n"
    "  keep(fn(unpack(args, 1, n_in)))\n"
    "  if res.n > max_out then\n"
    "    return -1, 'tide_vm_call_tensors: ' .. what .. ' returned ' .. res.n .. ' values, more than max_out (' ..\n"
    "      max_out .. ')'\n"
    "  end\n"
    "  for i = 1, res.n do\n"
    "    local t, why = as_tensor(res[i])\n"
    "    if not t then\n"
    "      return -1, 'tide_vm_call_tensors: result ' .. i .. ' of ' .. what .. ' is ' .. why .. ', not a tensor'\n"
    "    end\n"
    "    res[i] = t\n"
    "  end\n"
    "  local pout = ffi.cast(out_ptr, outs)\n"
    "  for i = 1, res.n do C.tide_tensor_share(pout + (i - 1), res[i]) end\n"
    "  return res.n\n"
    "end\n"
    "-- n Lua tensors adopted from the C headers at outs (a host function's results).\n"
    "function H.adopt_all(outs, n)\n"
    "  local pout, r = ffi.cast(out_ptr, outs), {}\n"
    "  for i = 1, n do r[i] = adopt(pout + (i - 1)) end\n"
    "  return unpack(r, 1, n)\n"
    "end\n"
    "-- The script-facing face of a host function: arguments made tensors, then C.\n"
    "function H.wrap(trampoline, name)\n"
    "  return function(...)\n"
    "    local n = select('#', ...)\n"
    "    local args = { ... }\n"
    "    for i = 1, n do\n"
    "      local t, why = as_tensor(args[i])\n"
    "      if not t then error(name .. ': argument ' .. i .. ' is ' .. why .. ', not a tensor or number', 2) end\n"
    "      args[i] = t\n"
    "    end\n"
    "    return trampoline(unpack(args, 1, n))\n"
    "  end\n"
    "end\n"
    "return H\n";

/* Load the helper into vm->helper_ref once (requires tide: outside budgets). */
tide_vm_status tide_vm_load_helper(tide_vm *vm) {
  if (vm->helper_ref != LUA_NOREF) return TIDE_VM_OK;
  lua_State *L = vm->L;
  tide_memory_account *prev = tide_memory_account_swap(vm->account);
  int st = luaL_loadbuffer(L, helper_lua, sizeof helper_lua - 1, "=(tide vm host)");
  tide_memory_account_swap(prev);
  if (st) {
    tide_vm_status r = tide_vm_fail(vm, TIDE_VM_ERR_MEMORY, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    return r;
  }
  tide_vm_status status = tide_vm_protected_trusted(vm, 0, 1);
  if (status) return status;
  vm->helper_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return TIDE_VM_OK;
}

int tide_vm_push_env(tide_vm *vm) {
  if (vm->env_ref != LUA_NOREF) lua_rawgeti(vm->L, LUA_REGISTRYINDEX, vm->env_ref);
  else lua_pushvalue(vm->L, LUA_GLOBALSINDEX);
  return 1;
}

/* Call `name` (or the function on the stack top) with tensors (see vm.h). */
tide_vm_status tide_vm_call_tensors(tide_vm *vm, const char *name, int n_in, const tide_tensor *const *in,
                                    int max_out, tide_tensor *out, int *n_out) {
  if (n_out) *n_out = 0;
  if (!vm) return TIDE_VM_ERR_USAGE;
  lua_State *L = vm->L;
  if (!name && lua_gettop(L) < 1) /* nothing to call: leave the stack as it is */
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_call_tensors: name is NULL and the Lua stack is empty");
  tide_vm_status status = TIDE_VM_OK;
  if (n_in < 0 || (n_in > 0 && !in)) status = tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_call_tensors: no inputs");
  else if (max_out < 0 || (max_out > 0 && !out))
    status = tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_call_tensors: no room for the results");
  if (!status) status = tide_vm_load_helper(vm);
  if (status) {
    if (!name) lua_pop(L, 1); /* the function is consumed either way */
    return status;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->helper_ref);
  lua_getfield(L, -1, "call");
  lua_remove(L, -2);
  if (name) lua_pushstring(L, name);
  else lua_insert(L, -2); /* H.call under the function */
  tide_vm_push_env(vm);
  lua_pushinteger(L, n_in);
  lua_pushlightuserdata(L, (void *)in);
  lua_pushinteger(L, max_out);
  lua_pushlightuserdata(L, out);
  lua_pushboolean(L, name != NULL);
  status = tide_vm_protected(vm, 7, 2);
  if (status) return status;
  int n = (int)lua_tointeger(L, -2);
  if (n < 0) {
    status = tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "%s", lua_tostring(L, -1));
  } else if (n_out) {
    *n_out = n;
  }
  lua_pop(L, 2);
  return status;
}

/* A tensor host function: in the closure's userdata, called by its Lua wrapper. */
typedef struct host_fn {
  tide_vm_host_fn fn;
  void *userdata;
  tide_vm *vm;
} host_fn;

/* A host call's argument pointers and result headers: a Lua userdata, not
 * C stack (a callback nesting host calls takes this at every level, and the
 * collector frees it whichever way the call ends). */
enum { MAX_IN = 64 };
typedef struct host_frame {
  const tide_tensor *in[MAX_IN];
  tide_tensor out[TIDE_VM_HOST_MAX_OUT];
} host_frame;

/* The C side of a host function: the wrapper made every argument a tensor;
 * call fn, adopt its results into Lua tensors, drop the C references. */
static int trampoline(lua_State *L) {
  host_fn *h = lua_touserdata(L, lua_upvalueindex(1));
  int n = lua_gettop(L);
  if (n > MAX_IN) return luaL_error(L, "a host function takes at most %d arguments, got %d", (int)MAX_IN, n);
  host_frame *f = lua_newuserdata(L, sizeof *f);
  const tide_tensor **in = f->in;
  tide_tensor *out = f->out;
  for (int i = 0; i < n; i++) in[i] = lua_topointer(L, i + 1); /* the tensor cdata's header */
  memset(out, 0, sizeof f->out);
  tide_clear_error();
  /* The host's own code: the host's rights (a script it calls back gets the VM's again, vm.c) */
  tide_file_policy *policy = tide_file_policy_swap(h->vm->host_files);
  tide_random_state *random = tide_random_state_swap(h->vm->host_random);
  int k = h->fn(h->userdata, n, in, TIDE_VM_HOST_MAX_OUT, out);
  tide_random_state_swap(random);
  tide_file_policy_swap(policy);
  if (k < 0 || k > TIDE_VM_HOST_MAX_OUT) {
    for (int i = 0; i < TIDE_VM_HOST_MAX_OUT; i++) tide_tensor_release(&out[i]);
    if (k < 0) {
      const char *msg = tide_last_error();
      lua_pushstring(L, *msg ? msg : "the host function failed");
    } else {
      lua_pushfstring(L, "the host function returned %d results, more than %d", k, (int)TIDE_VM_HOST_MAX_OUT);
    }
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(2)); /* H.adopt_all */
  lua_pushlightuserdata(L, out);
  lua_pushinteger(L, k);
  int st = lua_pcall(L, 2, k, 0);
  for (int i = 0; i < TIDE_VM_HOST_MAX_OUT; i++) tide_tensor_release(&out[i]); /* Lua holds its own now */
  if (st) return lua_error(L);
  return k;
}

/* True when `name` is a Lua identifier. */
static bool is_identifier(const char *name) {
  if (!name || !(isalpha((unsigned char)name[0]) || name[0] == '_')) return false;
  for (const char *p = name; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return false;
  return true;
}

/* Set the env's global `name` to the value on the stack top (protected: allocates). */
static int set_global(lua_State *L) {
  /* 1: env, 2: name, 3: value */
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 0;
}

static tide_vm_status define(tide_vm *vm, const char *name) {
  lua_State *L = vm->L;
  lua_pushcfunction(L, set_global);
  lua_insert(L, -2);
  tide_vm_push_env(vm);
  lua_insert(L, -2);
  lua_pushstring(L, name);
  lua_insert(L, -2);
  return tide_vm_protected_trusted(vm, 3, 0);
}

/* Make a wrapper closure around a fresh host_fn (protected: allocates). */
static int make_host(lua_State *L) {
  /* 1: lightuserdata of the host_fn template, 2: name, 3: H.wrap, 4: H.adopt_all */
  host_fn *h = lua_newuserdata(L, sizeof *h);
  *h = *(host_fn *)lua_touserdata(L, 1);
  lua_pushvalue(L, 4);
  lua_pushcclosure(L, trampoline, 2);
  lua_pushvalue(L, 3);
  lua_insert(L, -2);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 1); /* H.wrap(trampoline, name) */
  return 1;
}

tide_vm_status tide_vm_register(tide_vm *vm, const char *name, tide_vm_host_fn fn, void *userdata) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (!fn || !is_identifier(name))
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE, "tide_vm_register: needs a function and a Lua identifier as its name");
  tide_vm_status status = tide_vm_load_helper(vm);
  if (status) return status;
  lua_State *L = vm->L;
  host_fn h = {fn, userdata, vm};
  lua_pushcfunction(L, make_host);
  lua_pushlightuserdata(L, &h);
  lua_pushstring(L, name);
  lua_rawgeti(L, LUA_REGISTRYINDEX, vm->helper_ref);
  lua_getfield(L, -1, "wrap");
  lua_getfield(L, -2, "adopt_all");
  lua_remove(L, -3);
  status = tide_vm_protected_trusted(vm, 4, 1);
  if (status) return status;
  return define(vm, name);
}

tide_vm_status tide_vm_register_lua(tide_vm *vm, const char *name, tide_vm_lua_fn fn) {
  if (!vm) return TIDE_VM_ERR_USAGE;
  if (!fn || !is_identifier(name))
    return tide_vm_fail(vm, TIDE_VM_ERR_USAGE,
                        "tide_vm_register_lua: needs a function and a Lua identifier as its name");
  lua_pushcfunction(vm->L, (lua_CFunction)fn);
  return define(vm, name);
}
