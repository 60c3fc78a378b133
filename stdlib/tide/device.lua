-- stdlib/tide/device.lua — devices from Lua: device names, moving tensors
-- (x:to, x:cpu), the tide.device(name, fn) placement scope, GPU queries and memory settings.
local binding = require "tide.binding"
local scope = require "tide.scope"
local ffi, C = binding.ffi, binding.C

local M = {}

local CPU, CUDA = C.TIDE_CPU, C.TIDE_CUDA

-- "cpu" or "cuda:K" for a dev code.
function M.name_of(dev)
  if dev == CPU then return "cpu" end
  return "cuda:" .. tostring(dev - CUDA)
end

local parsed = ffi.new("int[1]")

-- The dev code of a device name ("cpu", "cuda", "cuda:0", "gpu:1",
-- "/device:GPU:0"); an error names the device and why when it is not there.
function M.parse(name, what)
  if type(name) ~= "string" then
    binding.error(string.format("%s: the device must be a string such as \"cpu\" or \"cuda:0\", got %s",
      what or "device", type(name)))
  end
  if C.tide_device_parse(name, parsed) ~= 0 then
    binding.error((what and what .. ": " or "") .. ffi.string(C.tide_last_error()))
  end
  return parsed[0]
end

-- A copy of t on device `name` (t itself when it is there already), as TF's
-- tf.identity under tf.device or PyTorch's x.to(device).
function M.to(t, name)
  if not binding.istensor(t) then binding.error("to: expected a tensor, got " .. type(t)) end
  local dev = M.parse(name, "to")
  if t.dev == dev then return t end
  local out = binding.Tensor()
  if C.tide_tensor_to_device(out, t, dev) ~= 0 then binding.raise() end
  binding.keep_alive(t)
  return binding.finish(out)
end

-- A copy of t in host memory (t itself when it is there).
function M.cpu(t)
  if not binding.istensor(t) then binding.error("cpu: expected a tensor, got " .. type(t)) end
  if t.dev == CPU then return t end
  local out = binding.Tensor()
  if C.tide_tensor_to_device(out, t, CPU) ~= 0 then binding.raise() end
  binding.keep_alive(t)
  return binding.finish(out)
end

-- The device tensors made by tide.tensor are placed on (tide.device sets it).
local current = CPU

function M.current() return M.name_of(current) end

-- t moved to the current placement (tensor constructors call it).
function M.place(t)
  if current == CPU or not binding.istensor(t) or t.dev == current then return t end
  return M.to(t, M.name_of(current))
end

local function restore(dev) current = dev end

-- tide.device(name, fn): run fn with tensors made by tide.tensor placed on
-- `name` (TF's `with tf.device(name):`); returns what fn returns.
function M.scope(name, fn)
  local dev = M.parse(name, "tide.device")
  if type(fn) ~= "function" then
    binding.error("tide.device: the second argument must be a function to run on " .. name .. ", got " .. type(fn))
  end
  local mark = scope.enter()
  scope.push(restore, current)
  current = dev
  return scope.call("tide.device", mark, fn)
end

-- Visible GPUs (CUDA_VISIBLE_DEVICES honoured); 0 when no driver, GPU or backend.
function M.gpu_count() return C.tide_cuda_device_count() end

-- Why no GPU is visible ("" when one is).
function M.unavailable_reason() return ffi.string(C.tide_cuda_unavailable_reason()) end

-- The GPU ordinal of a physical device table or a name ("cuda:0", "GPU:0").
function M.gpu_ordinal(gpu, what)
  local name = type(gpu) == "table" and gpu.name or gpu
  local dev = M.parse(name, what)
  if dev == CPU then binding.error(what .. ": " .. tostring(name) .. " is not a GPU") end
  return dev - CUDA
end

return M
