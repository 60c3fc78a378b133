-- bench/embed_vm.lua — what an embedded VM's limits cost (tide/vm.h): the same
-- work in VMs with no limits (JIT on), the JIT off alone, an instruction
-- budget, a time budget and a memory cap; and the latency of one
-- tide_vm_call_tensors from the host. Each VM is opened through the C API
-- (the tide program links libtidevm), as a host would.
--   build/tide bench/embed_vm.lua [REPEATS]
-- Prints `name: value unit` lines (the fastest of REPEATS runs: the machine is shared and noisy).
local ffi = require "ffi"
local tide = require "tide"
local C = require("tide.binding").C

ffi.cdef [[
typedef struct tide_vm tide_vm;
typedef struct tide_vm_options {
  const char *lua_root; size_t memory_limit; uint64_t instruction_limit; uint32_t time_limit_ms;
  bool sandbox; unsigned allow;
} tide_vm_options;
tide_vm *tide_vm_open(const tide_vm_options *opts);
void tide_vm_close(tide_vm *vm);
int tide_vm_dostring(tide_vm *vm, const char *code, const char *chunkname);
int tide_vm_call_tensors(tide_vm *vm, const char *name, int n_in, const tide_tensor *const *in, int max_out,
                         tide_tensor *out, int *n_out);
const char *tide_vm_last_error(const tide_vm *vm);
]]

local REPEATS = tonumber(arg and arg[1]) or 7
local now = C.tide_monotonic_seconds

local function minimum(xs)
  return math.min(unpack(xs))
end

local function open(opts)
  local o = ffi.new("tide_vm_options", opts or {})
  local vm = C.tide_vm_open(o)
  assert(vm ~= nil, "tide_vm_open failed: " .. ffi.string(C.tide_last_error()))
  return ffi.gc(vm, C.tide_vm_close)
end

local function run(vm, code)
  if C.tide_vm_dostring(vm, code, "=bench") ~= 0 then error(ffi.string(C.tide_vm_last_error(vm))) end
end

-- The workloads, defined in every VM: pure Lua, tiny tide ops, big tide ops.
local setup = [[
local tide = require 'tide'
function lua_loop() local s = 0 for i = 1, 3e6 do s = s + i % 7 end return s end
local a, b = tide.tensor({1, 2, 3, 4}, 'float32'), tide.tensor({4, 3, 2, 1}, 'float32')
function tiny_ops() local c = a for i = 1, 2e4 do c = c + b end return c end
local m = tide.ones{256, 256}
function big_ops() local c for i = 1, 20 do c = tide.matmul(m, m) end return c end
function identity(x) return x end
function scale(x) return x * 2 end
]]

local configs = {
  { "warmup", {} }, -- not compared: the first VM pays for warming caches and the allocator
  { "none", {} },
  { "jit_off", {}, "jit.off(); jit.flush()" },
  { "instructions", { instruction_limit = 1e12 } },
  { "time", { time_limit_ms = 1e6 } },
  { "memory", { memory_limit = 1024 * 1024 * 1024 } },
  { "sandbox", { sandbox = true } },
}

local base = {}
for _, cfg in ipairs(configs) do
  local name, opts, extra = cfg[1], cfg[2], cfg[3]
  local vm = open(opts)
  run(vm, setup)
  if extra then run(vm, extra) end
  for _, work in ipairs { "lua_loop", "tiny_ops", "big_ops" } do
    run(vm, work .. "()") -- warm
    local times = {}
    for r = 1, REPEATS do
      local t0 = now()
      run(vm, work .. "()")
      times[r] = now() - t0
    end
    local ms = minimum(times) * 1e3
    print(string.format("vm_%s_%s: %.2f ms", name, work, ms))
    if name == "none" then base[work] = ms
    elseif name ~= "warmup" then print(string.format("vm_%s_%s_vs_none: %.2f x", name, work, ms / base[work])) end
  end

  -- One call with a 784-float tensor in and out, from the host.
  local x = tide.ones{784}
  local ins = ffi.new("const tide_tensor *[1]", x)
  local outs = ffi.new("tide_tensor[1]")
  local n = ffi.new("int[1]")
  for _, fn in ipairs { "identity", "scale" } do
    local N = 2000
    local per = {}
    for r = 1, REPEATS do
      local t0 = now()
      for _ = 1, N do
        if C.tide_vm_call_tensors(vm, fn, 1, ins, 1, outs, n) ~= 0 then error(ffi.string(C.tide_vm_last_error(vm))) end
        C.tide_tensor_release(outs)
      end
      per[r] = (now() - t0) / N
    end
    print(string.format("vm_%s_call_%s_784: %.2f us", name, fn, minimum(per) * 1e6))
  end
  require("tide.binding").keep_alive(x)
  vm = nil
  collectgarbage()
end
