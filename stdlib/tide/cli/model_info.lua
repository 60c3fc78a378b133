-- stdlib/tide/cli/model_info.lua — what `tide run` and `tide summary` read of
-- a SavedModel: loading it with one-line errors, its signatures in order,
-- and each one's input and output specs.
local tide = require "tide"
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"

local C, ffi = binding.C, binding.ffi
local M = {}

-- The loaded SavedModel in dir (tide.saved_model.load); a missing folder is
-- a command-line error, a folder that is no SavedModel a failure.
function M.load(cli, dir)
  if not cli.exists(dir) then cli.usage_error(string.format("cannot open '%s': no such file or directory", dir)) end
  if not cli.is_dir(dir) then
    if C.tide_file_kind(dir, nil) == C.TIDE_FILE_ONNX then
      local ok, loaded = pcall(tide.onnx.load, dir)
      if not ok then cli.fail(string.format("cannot load the ONNX model '%s': %s", dir, cli.first_line(loaded))) end
      return loaded
    end
    cli.usage_error(string.format("'%s' is not a folder (a SavedModel is one) nor an ONNX model", dir))
  end
  local ok, loaded = pcall(tide.saved_model.load, dir)
  if not ok then cli.fail(string.format("cannot load the SavedModel in '%s': %s", dir, cli.first_line(loaded))) end
  return loaded
end

-- The names of the model's signatures, sorted.
function M.signature_names(loaded)
  local names = {}
  for name in pairs(loaded.functions) do names[#names + 1] = name end
  table.sort(names)
  return names
end

-- The signature to run: `name`, else serving_default, else the only one.
function M.pick(cli, loaded, name)
  local names = M.signature_names(loaded)
  if name == nil then
    if loaded.functions.serving_default then return "serving_default" end
    if #names == 1 then return names[1] end
    cli.usage_error(string.format("the model has no serving_default; choose one with --signature (%s)",
      table.concat(names, ", ")))
  end
  if not loaded.functions[name] then
    cli.usage_error(string.format("the model has no signature '%s' (it has %s)", name, table.concat(names, ", ")))
  end
  return name
end

-- Signature `name`'s input specs (TensorSpecs with names) and output specs
-- (found by tracing it once: dtypes and shapes as far as they are known).
function M.specs(loaded, name)
  local fn = loaded.functions[name]
  local inputs = fn.input_signature
  if loaded.format == "tensorflow" or loaded.format == "onnx" then return inputs, fn.output_signature end -- as declared
  local k = C.tide_saved_model_find_function(loaded._m, name)
  local cf = fn:get_concrete_function()
  local outputs = {}
  for i, t in ipairs(cf._out_syms) do
    outputs[i] = spec.TensorSpec.from_tensor(t, ffi.string(C.tide_saved_model_output_name(loaded._m, k, i - 1)))
  end
  return inputs, outputs
end

-- "name: float32 (None, 784)".
function M.spec_text(s)
  return string.format("%s: %s %s", s.name or "?", s.dtype, spec.dims_text(s.shape))
end

return M
