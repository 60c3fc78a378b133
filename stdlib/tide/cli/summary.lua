-- stdlib/tide/cli/summary.lua — `tide summary dir`: a SavedModel's
-- signatures (inputs and outputs: names, dtypes, shapes), its variables, and
-- a Keras model's layers (model:summary()).
local tide = require "tide"
local json = require "tide.json"
local spec = require "tide.tracing.spec"
local info = require "tide.cli.model_info"

local M = {}
local fmt = string.format

local function with_commas(n)
  local s = tostring(n)
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

-- The Keras part: the config's model rebuilt and summarized, or (when it
-- cannot be rebuilt here: custom layers) the layer list of its config.
local function keras_part(dir, extra)
  local ok, meta = pcall(json.decode, extra)
  if not ok or type(meta) ~= "table" or meta.format ~= "tide.keras" then return end
  print("")
  local built, model = pcall(tide.models.load_model, dir, { compile = false })
  if built then
    model:summary()
    return
  end
  print(fmt("Keras model (its config; it cannot be rebuilt here: %s)", tostring(model):match("^[^\n]*")))
  local cfg = meta.model and meta.model.config or {}
  for i, l in ipairs(cfg.layers or {}) do
    local c = l.config or {}
    print(fmt("  %d. %s '%s'", i, tostring(l.class_name), tostring(c.name)))
  end
end

function M.run(args, cli)
  local opts, pos = cli.parse("summary", args, { help = {} }, 1)
  if opts.help then return "help" end
  local dir = pos[1]
  local loaded = info.load(cli, dir)
  print(loaded.format == "onnx" and fmt("ONNX model %s (opset %d)", dir, loaded.opset) or fmt("SavedModel %s", dir))
  print("")
  print("Signatures:")
  for _, name in ipairs(info.signature_names(loaded)) do
    local ins, outs = info.specs(loaded, name)
    print(fmt("  %s", name))
    print("    inputs:")
    for _, s in ipairs(ins) do print("      " .. info.spec_text(s)) end
    print("    outputs:")
    for _, s in ipairs(outs) do print("      " .. info.spec_text(s)) end
  end
  print("")
  if loaded.format == "onnx" then return 0 end -- its initializers are constants of the graph, not variables
  local total, trainable = 0, 0
  local vars = loaded.variables
  if loaded.format == "tensorflow" then -- {checkpoint key = tensor}; whether each trains is not read from TF's file
    local keys = {}
    for k in pairs(vars) do keys[#keys + 1] = k end
    table.sort(keys)
    vars = {}
    for i, k in ipairs(keys) do
      local t = loaded.variables[k]
      vars[i] = { name = k, dtype = t.dtype, shape = t.shape, trainable = true }
    end
  end
  print(fmt("Variables (%d):", #vars))
  for _, v in ipairs(vars) do
    local n = 1
    for _, d in ipairs(v.shape) do n = n * d end
    total = total + n
    if v.trainable then trainable = trainable + n end
    print(fmt("  %s: %s %s%s", v.name, v.dtype, spec.dims_text(v.shape), v.trainable and "" or " (not trainable)"))
  end
  print(fmt("Total: %s values, %s trainable", with_commas(total), with_commas(trainable)))
  if loaded.extra then keras_part(dir, loaded.extra) end
  return 0
end

return M
