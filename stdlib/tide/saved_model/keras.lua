-- stdlib/tide/saved_model/keras.lua — whole Keras models in a SavedModel:
-- model:save(dir) writes the serving signature (the model called in
-- inference mode), every weight and optimizer variable, and as the extra
-- JSON the model's config and compile settings; tide.models.load_model(dir)
-- rebuilds a model that predicts the same and whose fit goes on where it
-- stopped. tide.saving hands both down to the models floor (hooks).
local binding = require "tide.binding"
local json = require "tide.json"
local tracing = require "tide.tracing.function"
local spec_mod = require "tide.tracing.spec"
local layers = require "tide.layers"
local losses = require "tide.losses"
local metrics = require "tide.metrics"
local optimizers = require "tide.optimizers"
local graph = require "tide.models.graph"
local saved_model = require "tide.saved_model"

local fmt = string.format
local M = {}

local FORMAT, VERSION = "tide.keras", 1

local function who(m) return fmt("%s '%s'", getmetatable(m).__name, tostring(rawget(m, "name"))) end

-- A compile argument as config data: a name stays a name, a Loss or Metric
-- object its {class_name=, config=}; a Lua function cannot be saved.
local function identifier(m, what, id)
  if id == nil or type(id) == "string" then return id end
  if type(id) == "table" and getmetatable(id) == nil then
    local out = {}
    for k, v in pairs(id) do out[k] = identifier(m, what, v) end
    return out
  end
  if type(id) == "table" and id.get_config and id.__name then
    return { class_name = id.__name, config = id:get_config() }
  end
  binding.error(fmt("%s: save: the %s given to compile is a %s, which a saved model cannot hold; give it by name " ..
    "or as a tide.losses/tide.metrics object, or save with include_optimizer = false and compile after loading",
    who(m), what, type(id)))
end

-- The compile settings as config data, or nil (also read by tide.saving's .keras files).
local function compile_config(m)
  if not rawget(m, "compiled") then return nil end
  return {
    optimizer = optimizers.serialize(rawget(m, "optimizer")),
    loss = identifier(m, "loss", rawget(m, "loss")),
    metrics = identifier(m, "metrics", rawget(m, "_metric_ids")),
    weighted_metrics = identifier(m, "weighted_metrics", rawget(m, "_weighted_metric_ids")),
    loss_weights = rawget(m, "_loss_weights"),
    run_eagerly = rawget(m, "run_eagerly"),
  }
end

-- The serving function: the model in inference mode, traced with the
-- model's input specs, its inputs positional in the model's input order.
local function serving(m)
  local ins = rawget(m, "inputs")
  local specs = {}
  if ins then -- functional
    for i, kt in ipairs(ins) do specs[i] = spec_mod.TensorSpec(kt.shape:as_list(), kt.dtype, kt.name) end
  elseif rawget(m, "_input_batch_shape") then -- Sequential
    local dims = {}
    for i, d in ipairs(rawget(m, "_input_batch_shape")) do dims[i] = d end
    dims[1] = spec_mod.None -- any batch size
    specs[1] = spec_mod.TensorSpec(dims, rawget(m, "_input_dtype") or "float32", "inputs")
    ins = { specs[1] }
  else
    binding.error(fmt("%s: save: the model's inputs are not known; build it with tide.Input (or call it once on " ..
      "data) before saving", who(m)))
  end
  local struct = rawget(m, "_inputs_struct")
  return tracing.trace(function(...)
    local args = { ... }
    local x
    if struct == nil or #ins == 1 and layers.is_keras_tensor(struct) then
      x = args[1]
    else
      local k = 0
      x = graph.map_structure(struct, function() k = k + 1; return args[k] end)
    end
    local y = m(x, { training = false })
    if type(y) == "table" and not binding.istensor(y) and #y > 0 then return unpack(y) end
    return y
  end, { input_signature = specs, name = "serving_default" })
end

-- model:save(dir, {include_optimizer = true}).
function M.save(m, dir, opts)
  opts = opts or {}
  if type(dir) ~= "string" or dir == "" then binding.error(who(m) .. ": save: dir must be a path string") end
  local spec = layers.serialize(m) -- the config (an error names what it cannot carry)
  local ok, bad = pcall(json.encode, spec)
  if not ok then binding.error(fmt("%s: save: its config cannot be written: %s", who(m), tostring(bad))) end
  local named = {}
  local weights = m.weights
  for i, v in ipairs(weights) do named[#named + 1] = { fmt("model/%d/%s", i, v.name), v } end
  local compile = opts.include_optimizer ~= false and compile_config(m) or nil
  local opt_vars = {}
  if compile then
    -- A compiled model not yet trained has an optimizer without slots; build
    -- them (zeros, as its first step would) so the file holds what load_model
    -- rebuilds.
    local opt = rawget(m, "optimizer")
    opt:build(m.trainable_weights)
    opt_vars = opt.variables
    for i, v in ipairs(opt_vars) do named[#named + 1] = { fmt("optimizer/%d/%s", i, v.name), v } end
  end
  local extra = json.encode {
    format = FORMAT, version = VERSION, model = spec, compile = compile,
    weights = #weights, optimizer_variables = #opt_vars,
  }
  saved_model.save(m, dir, { signatures = { serving_default = serving(m) }, extra = extra, variables = named })
end

-- A compile argument again: names stay names, {class_name=, config=} become
-- objects (get), lists and tables by output name are walked.
local function revive(id, get)
  if type(id) ~= "table" then return id end
  if type(id.class_name) == "string" then return get(id) end
  local out = {}
  for k, v in pairs(id) do out[k] = revive(v, get) end
  return out
end

M.compile_config = compile_config
M.serving = serving -- also onnx_export's

-- m:compile with what compile_config wrote.
function M.compile_from(m, c)
  m:compile { optimizer = optimizers.deserialize(c.optimizer), loss = revive(c.loss, losses.get),
    metrics = revive(c.metrics, metrics.get), weighted_metrics = revive(c.weighted_metrics, metrics.get),
    loss_weights = c.loss_weights, run_eagerly = c.run_eagerly }
end

-- tide.models.load_model(dir, {custom_objects=, compile=true}).
function M.load_model(dir, opts)
  opts = opts or {}
  local loaded = saved_model.load(dir)
  if loaded.format == "tensorflow" then
    binding.error(fmt("load_model: '%s' is a TensorFlow SavedModel, which holds no Keras model tide can rebuild; " ..
      "tide.saved_model.load runs its signatures", dir))
  end
  if loaded.extra == nil then
    binding.error(fmt("load_model: '%s' is a SavedModel without a Keras model (saved with tide.saved_model.save); " ..
      "load it with tide.saved_model.load", dir))
  end
  local info = json.decode(loaded.extra, "load_model")
  if type(info) ~= "table" or info.format ~= FORMAT then
    binding.error(fmt("load_model: '%s' holds no Keras model config (its extra data is not %s)", dir, FORMAT))
  end
  if type(info.version) ~= "number" or info.version > VERSION then
    binding.error(fmt("load_model: '%s' was written by a newer tide (format %s version %s; this tide reads up to %d)",
      dir, FORMAT, tostring(info.version), VERSION))
  end
  local by_name = {}
  for _, v in ipairs(loaded.variables) do by_name[v.name] = v end
  local m = layers.deserialize(info.model, opts.custom_objects)
  if not rawget(m, "built") then
    binding.error(fmt("load_model: the rebuilt %s is not built (a subclassed model's config cannot say its input " ..
      "shapes); save such a model's weights and rebuild it in code", who(m)))
  end
  local weights = m.weights
  if #weights ~= info.weights then
    binding.error(fmt("load_model: '%s' holds %d weights but the rebuilt model has %d", dir, info.weights, #weights))
  end
  local function restore(v, key)
    local saved = by_name[key]
    if saved == nil then binding.error(fmt("load_model: '%s' lacks the variable '%s'", dir, key)) end
    v:assign(saved:read_value())
  end
  for i, v in ipairs(weights) do restore(v, fmt("model/%d/%s", i, v.name)) end
  local c = info.compile
  if c and opts.compile ~= false then
    M.compile_from(m, c)
    local opt = rawget(m, "optimizer")
    opt:build(m.trainable_weights)
    local vars = opt.variables
    if #vars ~= info.optimizer_variables then
      binding.error(fmt("load_model: '%s' holds %d optimizer variables but the rebuilt optimizer has %d", dir,
        info.optimizer_variables, #vars))
    end
    for i, v in ipairs(vars) do restore(v, fmt("optimizer/%d/%s", i, v.name)) end
  end
  return m
end

return M
