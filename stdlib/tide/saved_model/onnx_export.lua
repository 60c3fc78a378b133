-- stdlib/tide/saved_model/onnx_export.lua — tide.onnx.export: a Keras model (its inference
-- call) or a traced function written as an ONNX file by C (kernels/io/onnx_write*.c).
local binding = require "tide.binding"
local args = require "tide.args"
local class = require "tide.class"
local variable = require "tide.variable"
local tracing = require "tide.tracing.function"
local concrete = require "tide.tracing.concrete"
local models = require "tide.models"
local save = require "tide.saved_model.save"
local keras = require "tide.saved_model.keras"
local ffi, C = binding.ffi, binding.C

local M = {}
local fmt = string.format
local unpack = unpack or table.unpack

local OPTIONS = { "input_signature", "opset", "input_names", "output_names" }

-- The concrete function to write for obj.
local function concrete_of(obj, sig)
  if sig ~= nil and type(sig) ~= "table" then
    binding.error("onnx.export: input_signature must be a list of TensorSpecs")
  end
  if class.is_instance(obj, models.Model) then
    if sig ~= nil then
      binding.error("onnx.export: a Keras model's inputs come from the model; give no input_signature")
    end
    return keras.serving(obj):get_concrete_function()
  end
  if class.is_instance(obj, concrete.ConcreteFunction) then
    if sig ~= nil then
      binding.error("onnx.export: a concrete function has its inputs already; give no input_signature")
    end
    return obj
  end
  if class.is_instance(obj, tracing.Function) then
    if sig ~= nil then return obj:get_concrete_function(unpack(sig)) end
    if not obj.input_signature then
      binding.error("onnx.export: the traced function has no input_signature; give one (tide.trace(f, " ..
        "{input_signature = {...}}) or onnx.export(f, path, {input_signature = {...}}))")
    end
    return obj:get_concrete_function()
  end
  if type(obj) == "function" then
    if sig == nil then
      binding.error("onnx.export: a Lua function needs an input_signature ({input_signature = {tide.TensorSpec{...}}})")
    end
    return tracing.trace(obj, { input_signature = sig }):get_concrete_function()
  end
  binding.error(fmt("onnx.export: expected a Keras model, a traced function (tide.trace) or a concrete function, " ..
    "got a %s", type(obj)))
end

-- names given in place of the defaults: a list of n strings.
local function given_names(what, list, defaults)
  if list == nil then return defaults end
  if type(list) ~= "table" or #list ~= #defaults then
    binding.error(fmt("onnx.export: %s must be a list of %d names", what, #defaults))
  end
  for i, s in ipairs(list) do
    if type(s) ~= "string" or s == "" then
      binding.error(fmt("onnx.export: %s[%d] must be a non-empty string", what, i))
    end
  end
  return list
end

local function cstrings(list)
  local arr = ffi.new("const char *[?]", math.max(#list, 1))
  for i, s in ipairs(list) do arr[i - 1] = s end
  return arr
end

-- tide.onnx.export(obj, path, {input_signature=, opset=17, input_names=, output_names=}): write obj (a Keras
-- model, a tide.trace Function, a ConcreteFunction, or a Lua function with an input_signature) as an ONNX model.
function M.export(obj, path, ...)
  local o = args.parse("onnx.export", OPTIONS, ...)
  if type(path) ~= "string" or path == "" then binding.error("onnx.export: path must be a file name string") end
  local opset = o.opset or 0
  if type(opset) ~= "number" or opset ~= math.floor(opset) then
    binding.error("onnx.export: opset must be an integer, got " .. tostring(o.opset))
  end
  local cf = concrete_of(obj, o.input_signature)
  local ins = given_names("input_names", o.input_names, save.input_names(cf))
  local outs = given_names("output_names", o.output_names, save.output_names(cf))
  local vars = cf.variables or {}
  local handles = ffi.new("tide_tensor *[?]", math.max(#vars, 1))
  local names = {}
  for i, v in ipairs(vars) do
    handles[i - 1] = variable.handle(v)
    names[i] = v.name or "variable"
  end
  local in_arr, out_arr, name_arr = cstrings(ins), cstrings(outs), cstrings(names)
  if C.tide_onnx_export(cf._g, path, opset, #ins, in_arr, #outs, out_arr, #vars, handles, name_arr) ~= 0 then
    binding.raise()
  end
end

return M
