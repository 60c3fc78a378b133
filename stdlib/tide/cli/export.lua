-- stdlib/tide/cli/export.lua — `tide export script.lua dir`: run a script and
-- save what it returns (a Keras model, a traced function, a module with
-- signatures) as a SavedModel, or as an ONNX file (--format onnx, or a path ending .onnx).
local tide = require "tide"
local class = require "tide.class"
local fn_mod = require "tide.tracing.function"
local concrete = require "tide.tracing.concrete"

local M = {}

local function is_keras_model(x)
  return type(x) == "table" and class.is_instance(x, tide.Model)
end

-- What x is, for messages.
local function describe(x)
  if type(x) ~= "table" then return type(x) == "nil" and "nothing" or "a " .. type(x) end
  local mt = getmetatable(x)
  return mt and mt.__name and ("a " .. mt.__name) or "a table without signatures"
end

function M.run(args, cli)
  local opts, pos = cli.parse("export", args, { help = {}, format = { value = true }, opset = { value = true } }, 2)
  if opts.help then return "help" end
  local script, dir = pos[1], pos[2]
  local format = opts.format or (dir:match("%.onnx$") and "onnx" or "saved_model")
  if format ~= "onnx" and format ~= "saved_model" then
    cli.usage_error(string.format("unknown --format '%s' (saved_model or onnx)", format))
  end
  local opset = opts.opset and tonumber(opts.opset)
  if opts.opset and (format ~= "onnx" or not opset) then
    cli.usage_error(format ~= "onnx" and "--opset is for --format onnx" or
      string.format("--opset must be a number, got '%s'", opts.opset))
  end
  if not cli.exists(script) then cli.usage_error(string.format("cannot open '%s': no such file", script)) end
  local chunk, err = loadfile(script)
  if not chunk then cli.fail(string.format("cannot load '%s': %s", script, tostring(err))) end
  -- The script's own errors keep their traceback (main prints it).
  local obj = chunk()
  if format == "onnx" then
    if not (is_keras_model(obj) or class.is_instance(obj, fn_mod.Function) or
        class.is_instance(obj, concrete.ConcreteFunction)) then
      cli.fail(string.format("'%s' returned %s; for ONNX it must return a Keras model or a traced function " ..
        "(tide.trace with an input_signature)", script, describe(obj)))
    end
    tide.onnx.export(obj, dir, { opset = opset })
    print(string.format("exported %s to %s (ONNX opset %d)", is_keras_model(obj) and "the Keras model" or
      "the traced function", dir, opset or require("tide.binding").C.TIDE_ONNX_EXPORT_OPSET))
  elseif is_keras_model(obj) then
    obj:save(dir)
    print(string.format("exported %s '%s' (a Keras model, with its config) to %s", getmetatable(obj).__name,
      tostring(rawget(obj, "name")), dir))
  elseif class.is_instance(obj, fn_mod.Function) or class.is_instance(obj, concrete.ConcreteFunction) then
    tide.saved_model.save(obj, dir)
    print(string.format("exported the traced function '%s' to %s (signature serving_default)", tostring(obj.name),
      dir))
  elseif type(obj) == "table" and getmetatable(obj) == nil and obj.signatures ~= nil then
    tide.saved_model.save(obj, dir)
    print(string.format("exported the module's signatures to %s", dir))
  else
    cli.fail(string.format("'%s' returned %s; it must return a Keras model, a traced function (tide.trace with an " ..
      "input_signature) or a table with signatures", script, describe(obj)))
  end
  return 0
end

return M
