-- stdlib/tide/saved_model/onnx.lua — ONNX models read and mapped onto tide's ops by C
-- (kernels/io/onnx_model.c): tide.onnx.load(path) gives a callable taking and giving tensors by ONNX's names;
-- tide.onnx.export (and its other name save) writes them (onnx_export.lua).
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local graph_call = require "tide.saved_model.graph_call"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local None, TensorSpec = spec.None, spec.TensorSpec

-- The writer loads on first use: it needs the Keras models (tide run m.onnx does not).
local function export(...) return require("tide.saved_model.onnx_export").export(...) end
local M = { export = export, save = export }
local unpack = unpack or table.unpack
local fmt = string.format

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
local ndim_buf = ffi.new("int[1]")

-- The model's input (or output) specs as the file declares them, named by ONNX's names.
local function specs_of(m, outputs)
  local n = outputs and C.tide_onnx_model_num_outputs(m) or C.tide_onnx_model_num_inputs(m)
  local name_of = outputs and C.tide_onnx_model_output_name or C.tide_onnx_model_input_name
  local spec_of = outputs and C.tide_onnx_model_output_spec or C.tide_onnx_model_input_spec
  local specs = {}
  for i = 0, n - 1 do
    local dt = spec_of(m, i, ndim_buf, dims_buf)
    local shape
    if ndim_buf[0] >= 0 then
      shape = {}
      for d = 0, ndim_buf[0] - 1 do
        local v = tonumber(dims_buf[d])
        shape[d + 1] = v < 0 and None or v
      end
    end
    specs[i + 1] = TensorSpec(shape, ffi.string(C.tide_dtype_name(dt)), ffi.string(name_of(m, i)))
  end
  return specs
end

local function names_of(specs)
  local t = {}
  for i, s in ipairs(specs) do t[i] = s.name end
  return t
end

-- The graph as a function of its inputs in the model's order, giving its outputs in order.
local function positional(self, m, specs, n_out)
  return graph_call.positional(self, C.tide_onnx_model_graph(m), specs, n_out, "ONNX model")
end

local Model = {}
Model.__index = Model

-- m{name = t, ...}: a table of outputs by ONNX's names; m(t): the first output of a one-input model.
function Model.__call(self, inputs, ...)
  if istype(Tensor, inputs) then
    if #self.inputs ~= 1 or select("#", ...) > 0 then
      binding.error(fmt("ONNX model takes %d inputs (%s): call it with a table {name = tensor, ...}", #self.inputs,
        table.concat(names_of(self.inputs), ", ")))
    end
    return (self._fn(inputs))
  end
  return self.signatures.serving_default(inputs)
end

-- load(path): the ONNX model at path, as a callable {format = "onnx", opset, inputs, outputs (TensorSpecs by
-- ONNX's names), signatures = {serving_default = fn{name = t} -> {name = t}}, functions = {serving_default =
-- positional fn}}.
function M.load(path)
  if type(path) ~= "string" or path == "" then binding.error("onnx.load: path must be a file name string") end
  local p = ffi.new("tide_onnx_model *[1]")
  if C.tide_onnx_model_open(path, p) ~= 0 then binding.raise() end
  local m = ffi.gc(p[0], C.tide_onnx_model_free)
  local self = setmetatable({ format = "onnx", _onnx = m, opset = C.tide_onnx_model_opset(m), signatures = {},
    functions = {} }, Model)
  local specs, out_specs = specs_of(m, false), specs_of(m, true)
  self.inputs, self.outputs = specs, out_specs
  local outs = names_of(out_specs)
  local fn = positional(self, m, specs, #outs)
  self._fn = fn
  self.functions.serving_default = setmetatable({ input_signature = specs, output_signature = out_specs,
    output_names = outs, name = "serving_default" }, { __call = function(_, ...) return fn(...) end })
  self.signatures.serving_default = function(inputs)
    if type(inputs) ~= "table" or istype(Tensor, inputs) then
      binding.error(fmt("ONNX model takes a table of inputs by name {%s = tensor, ...}",
        specs[1] and specs[1].name or "name"))
    end
    local a = {}
    for i, s in ipairs(specs) do
      if inputs[s.name] == nil then binding.error(fmt("ONNX model: input '%s' is missing", s.name)) end
      a[i] = inputs[s.name]
    end
    for key in pairs(inputs) do
      local known = false
      for _, s in ipairs(specs) do known = known or s.name == key end
      if not known then
        binding.error(fmt("ONNX model has no input named '%s' (it has %s)", tostring(key),
          table.concat(names_of(specs), ", ")))
      end
    end
    local res = { fn(unpack(a, 1, #specs)) }
    local r = {}
    for i, name in ipairs(outs) do r[name] = res[i] end
    return r
  end
  return self
end

return M
