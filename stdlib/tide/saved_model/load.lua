-- stdlib/tide/saved_model/load.lua — tide.saved_model.load: a SavedModel directory read by C
-- back into signatures and traced functions that replay its graphs (replay.lua), and its variables.
local binding = require "tide.binding"
local variable = require "tide.variable"
local spec = require "tide.tracing.spec"
local Function = require("tide.tracing.function").Function
local replay = require "tide.saved_model.replay"
local tf = require "tide.saved_model.tf"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local None, TensorSpec = spec.None, spec.TensorSpec

local M = {}

local unpack = unpack or table.unpack

local Loaded = {}
Loaded.__index = Loaded

-- A tensor sharing the C tensor t (kept alive by the model while used).
local function share(t)
  local r = Tensor()
  if C.tide_tensor_share(r, t) ~= 0 then binding.raise() end
  return binding.finish(r)
end

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
local ndim_buf = ffi.new("int[1]")

-- The input_signature of function k.
local function input_specs(m, k, def)
  local specs = {}
  for i = 0, C.tide_graph_def_num_inputs(def) - 1 do
    local dt = C.tide_graph_def_input(def, i, ndim_buf, dims_buf)
    local shape
    if ndim_buf[0] >= 0 then
      shape = {}
      for d = 0, ndim_buf[0] - 1 do
        local v = tonumber(dims_buf[d])
        shape[d + 1] = v < 0 and None or v
      end
    end
    local name = ffi.string(C.tide_saved_model_input_name(m, k, i))
    specs[i + 1] = TensorSpec(shape, ffi.string(C.tide_dtype_name(dt)), name)
  end
  return specs
end

-- fn's results as a table of the outputs by name.
local function call_with(fn, out_names, ...)
  local res = { fn(...) }
  local out = {}
  for i, name in ipairs(out_names) do out[name] = res[i] end
  return out
end

-- A signature: called with the inputs in order (or one table of them by
-- name, as TF's keyword arguments), gives {output_name = tensor, ...}.
local function signature(fn, in_specs, out_names)
  local call = function(...)
    local n = select("#", ...)
    local first = ...
    if n == 1 and type(first) == "table" and not istype(Tensor, first) and not variable.is_variable(first) and
        #in_specs >= 1 and first[in_specs[1].name] ~= nil then
      local a = {}
      for i, s in ipairs(in_specs) do
        if first[s.name] == nil then binding.error("signature: input '" .. s.name .. "' is missing") end
        a[i] = first[s.name]
      end
      return call_with(fn, out_names, unpack(a, 1, #in_specs))
    end
    return call_with(fn, out_names, ...)
  end
  return call
end

-- tide.saved_model.load(dir): an object with signatures (by name), the
-- functions as traced functions (functions[name]: positional results),
-- variables and trainable_variables, and extra (the JSON given at save).
function M.load(dir)
  if type(dir) ~= "string" or dir == "" then binding.error("saved_model.load: dir must be a path string") end
  -- decided by content: TensorFlow's saved_model.pb goes to the TF reader
  if C.tide_file_kind(dir, nil) == C.TIDE_FILE_TF_SAVED_MODEL then return tf.load(dir) end
  local pm = ffi.new("tide_saved_model *[1]")
  if C.tide_saved_model_open(dir, pm) ~= 0 then binding.raise() end
  local m = ffi.gc(pm[0], C.tide_saved_model_free)
  local self = setmetatable({ _m = m, signatures = {}, functions = {}, variables = {}, trainable_variables = {} },
    Loaded)
  for k = 0, C.tide_saved_model_num_variables(m) - 1 do
    local v = variable.Variable(share(C.tide_saved_model_variable(m, k)),
      { name = ffi.string(C.tide_saved_model_variable_name(m, k)),
        trainable = C.tide_saved_model_variable_trainable(m, k) ~= 0 })
    self.variables[k + 1] = v
    if variable.is_trainable(v) then self.trainable_variables[#self.trainable_variables + 1] = v end
  end
  local extra = C.tide_saved_model_extra(m)
  self.extra = extra ~= nil and ffi.string(extra) or nil
  for k = 0, C.tide_saved_model_num_functions(m) - 1 do
    local name = ffi.string(C.tide_saved_model_function_name(m, k))
    local def = C.tide_saved_model_function_def(m, k)
    local specs = input_specs(m, k, def)
    local outs = {}
    for i = 0, C.tide_graph_def_num_outputs(def) - 1 do outs[i + 1] = ffi.string(C.tide_saved_model_output_name(m, k, i)) end
    -- A closure of its own prototype per loaded function: tide.trace counts
    -- retraces by prototype, and functions of different models are different functions.
    local make = assert(loadstring("local run, def, vars, model = ... " ..
      "return function(...) return run(def, vars, ...) end", "=saved_model:" .. name))
    local fn = Function(make(replay.run, def, self.variables, m), { input_signature = specs, name = name })
    self.functions[name] = fn
    self.signatures[name] = signature(fn, specs, outs)
  end
  return self
end

-- Function `name` rebuilt by C alone (kernels/graph/def_build.c), reading
-- this object's variables: a callable giving the outputs in order. How
-- tide_model_load runs a SavedModel with no Lua; here for checks.
function Loaded:c_function(name)
  local k = C.tide_saved_model_find_function(self._m, name)
  if k < 0 then binding.error("saved_model: no function named '" .. tostring(name) .. "'") end
  local n = #self.variables
  local handles = ffi.new("tide_tensor *[?]", math.max(n, 1))
  for i, v in ipairs(self.variables) do handles[i - 1] = variable.handle(v) end
  local pg = ffi.new("tide_graph *[1]")
  if C.tide_saved_model_build(self._m, k, handles, pg) ~= 0 then binding.raise() end
  local g = ffi.gc(pg[0], C.tide_graph_free)
  local nin, nout = C.tide_graph_num_inputs(g), C.tide_graph_num_outputs(g)
  local vars = self.variables
  return function(...)
    local _ = vars -- the graph reads their tensors
    local ins = ffi.new("const tide_tensor *[?]", math.max(nin, 1))
    local a = { ... }
    for i = 1, nin do
      local x = a[i]
      if not istype(Tensor, x) then binding.error("saved_model: c_function takes tensors") end
      ins[i - 1] = x
    end
    local outs, res = ffi.new("tide_tensor *[?]", math.max(nout, 1)), {}
    for i = 1, nout do
      res[i] = Tensor()
      outs[i - 1] = res[i]
    end
    if C.tide_graph_run(g, nin, ins, nout, outs) ~= 0 then binding.raise() end
    for i = 1, nout do binding.finish(res[i]) end
    return unpack(res, 1, nout)
  end
end

return M
