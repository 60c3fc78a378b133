-- stdlib/tide/saving/keras_file.lua — Keras 3's .keras files: a zip of
-- config.json (the model's config), metadata.json and model.weights.h5
-- (keras_weights.lua's layout), read and written over tide.io.zip.
local binding = require "tide.binding"
local json = require "tide.json"
local zip = require "tide.io.zip"
local h5 = require "tide.io.h5"
local layers = require "tide.layers"
local layer_mod = require "tide.layers.layer"
local tensor_shape = require "tide.tensor_shape"
local optimizers = require "tide.optimizers"
local sm_keras = require "tide.saved_model.keras"
local keras_config = require "tide.saving.keras_config"
local keras_weights = require "tide.saving.keras_weights"

local fmt = string.format
local M = {}

local WEIGHTS = "model.weights.h5"

-- The archive's weights file, opened from its bytes.
local function weights_of(z, path)
  if not z:has(WEIGHTS) then
    binding.error(fmt("'%s' is not a Keras 3 .keras file: it has no %s (entries: %s)", path, WEIGHTS,
      table.concat(z:names(), ", ")))
  end
  return h5.open_bytes(z:read(WEIGHTS), path .. ":" .. WEIGHTS)
end

-- load_weights(model, path): the weights inside a .keras file.
function M.load_weights(model, path)
  local z = zip.open(path)
  local f = weights_of(z, path)
  z:close()
  local ok, err = pcall(keras_weights.load_file, model, f, path)
  f:close()
  if not ok then error(err, 0) end
end

-- The version of Keras whose .keras layout tide writes (metadata.json's
-- keras_version: Keras reads it to pick how to load).
M.KERAS_VERSION = "3.15.1"

-- Keras's compile_config for the model's compile settings, or nil: the
-- optimizer as a Keras object; losses and metrics by name or as
-- {class_name=, config=} objects.
local function compile_out(m)
  local c = sm_keras.compile_config(m)
  if c == nil then return nil end
  local opt = c.optimizer
  return {
    optimizer = { module = "keras.optimizers", class_name = opt.class_name, config = opt.config,
      registered_name = tensor_shape.None },
    loss = c.loss, loss_weights = c.loss_weights, metrics = c.metrics, weighted_metrics = c.weighted_metrics,
    run_eagerly = c.run_eagerly or false, steps_per_execution = 1, jit_compile = false,
  }
end

-- The assets folder of an object whose weights sit at `vars_path` ("layers/x/vars" -> "assets/layers/x/").
local function asset_dir(vars_path)
  local p = vars_path:gsub("/?vars$", "")
  return p == "" and "assets/" or "assets/" .. p .. "/"
end

-- save(model, path, {include_optimizer = true}): a .keras file Keras 3's
-- keras.saving.load_model reads (written whole, then renamed into place).
function M.save(model, path, opts)
  opts = opts or {}
  local where = fmt("%s: save '%s'", layer_mod.who(model), path)
  local spec = keras_config.to_keras(model, where)
  if opts.include_optimizer ~= false then spec.compile_config = compile_out(model) end
  local w = zip.writer()
  w:add("metadata.json", json.encode { keras_version = M.KERAS_VERSION, date_saved = os.date("!%Y-%m-%d@%H:%M:%S") })
  w:add("config.json", json.encode(spec))
  w:add(WEIGHTS, keras_weights.writer(model, path .. ":" .. WEIGHTS, opts):bytes())
  -- Keras's assets (an adapted lookup's vocabulary.txt): assets/<the object's path>/<file>
  for _, e in ipairs(keras_weights.entries(model)) do
    local owner = e.owner
    local files = type(owner.save_assets) == "function" and owner:save_assets() or nil
    if files then
      local names = {}
      for name in pairs(files) do names[#names + 1] = name end
      table.sort(names)
      for _, name in ipairs(names) do w:add(asset_dir(e.path) .. name, files[name]) end
    end
  end
  w:save(path)
end

-- load_model(path, {custom_objects=, compile=true}): the model a .keras file
-- describes (Sequential or functional, with the layers tide has), its
-- weights and, when it was saved compiled, its compile and optimizer state.
function M.load_model(path, opts)
  opts = opts or {}
  local z = zip.open(path)
  if not z:has("config.json") then
    binding.error(fmt("load_model: '%s' is not a Keras 3 .keras file: it has no config.json (entries: %s)", path,
      table.concat(z:names(), ", ")))
  end
  local spec = json.decode(z:read("config.json"), "load_model: " .. path .. ":config.json")
  local where = fmt("load_model: '%s'", path)
  local tide_spec = keras_config.from_keras(spec, where, opts.custom_objects)
  local f = weights_of(z, path)
  local assets = {}   -- "assets/<path>/" -> {file name = bytes}
  for _, name in ipairs(z:names()) do
    local dir, file = name:match("^(assets/.*/)([^/]+)$")
    if dir then
      assets[dir] = assets[dir] or {}
      assets[dir][file] = z:read(name)
    end
  end
  z:close()
  local m = layers.deserialize(tide_spec, opts.custom_objects)
  for _, e in ipairs(keras_weights.entries(m)) do
    local files = assets[asset_dir(e.path)]
    if files and type(e.owner.load_assets) == "function" then e.owner:load_assets(files) end
  end
  if not rawget(m, "built") then
    binding.error(fmt("%s: the rebuilt model is not built (its config names no input shape)", where))
  end
  local c = spec.compile_config
  if type(c) == "table" and c.optimizer ~= nil and opts.compile ~= false then
    local oc = c.optimizer
    if type(oc) == "table" and oc.class_name then oc = { class_name = oc.class_name, config = oc.config } end
    sm_keras.compile_from(m, { optimizer = oc, loss = c.loss, metrics = c.metrics,
      weighted_metrics = c.weighted_metrics, loss_weights = c.loss_weights, run_eagerly = c.run_eagerly })
  end
  local ok, err = pcall(keras_weights.load_file, m, f, path)
  f:close()
  if not ok then error(err, 0) end
  return m
end

return M
