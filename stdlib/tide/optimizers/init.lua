-- stdlib/tide/optimizers/init.lua — tide.optimizers (Keras 3's keras.optimizers):
-- the optimizer classes, schedules, and get/serialize/deserialize by name or config.
local binding = require "tide.binding"
local class = require "tide.class"
local optimizer = require "tide.optimizers.optimizer"
local A = require "tide.optimizers.arguments"

local fmt = string.format

local M = {
  Optimizer = optimizer.Optimizer,
  schedules = require "tide.optimizers.schedules",
}

local loss_scale = require "tide.optimizers.loss_scale"
for _, family in ipairs { require "tide.optimizers.sgd", require "tide.optimizers.adam",
                          require "tide.optimizers.rmsprop", require "tide.optimizers.adagrad",
                          require "tide.optimizers.adaptive", require "tide.optimizers.ftrl",
                          require "tide.optimizers.muon", require "tide.optimizers.multi", loss_scale } do
  for name, cls in pairs(family) do
    if type(cls) == "table" then M[name] = cls end
  end
end

-- Keras's lookup: class names, case-insensitive ("adam", "Adam", "rmsprop").
local BY_NAME = {}
for _, name in ipairs { "SGD", "Adam", "AdamW", "Adamax", "Nadam", "RMSprop", "Adagrad", "Adadelta", "Lion", "Lamb",
  "Adafactor", "Ftrl", "Muon", "ScheduleFreeAdamW" } do
  BY_NAME[name:lower()] = M[name]
end

local function known_names()
  local out = {}
  for k in pairs(BY_NAME) do out[#out + 1] = k end
  table.sort(out)
  return table.concat(out, ", ")
end

-- True when x is an optimizer.
function M.is_optimizer(x) return class.is_instance(x, optimizer.Optimizer) end

-- Keras's serialize: { class_name = "Adam", config = opt:get_config() }.
function M.serialize(opt)
  if not M.is_optimizer(opt) then
    binding.error(fmt("optimizers.serialize: expects an optimizer, got %s", A.describe(opt)))
  end
  return { class_name = opt.__name, config = opt:get_config() }
end

-- Keras's deserialize: the optimizer serialize described (class names case-insensitive).
function M.deserialize(config)
  if type(config) ~= "table" or type(config.class_name) ~= "string" then
    binding.error(fmt("optimizers.deserialize: expects {class_name = ..., config = {...}}, got %s",
      A.describe(config)))
  end
  -- (a LossScaleOptimizer or MultiOptimizer by config only: it needs its inner optimizers')
  local cls = BY_NAME[config.class_name:lower()] or
    (config.class_name == "LossScaleOptimizer" and config.config and M.LossScaleOptimizer or nil) or
    (config.class_name == "MultiOptimizer" and config.config and M.MultiOptimizer or nil)
  if not cls then
    binding.error(fmt("optimizers: unknown optimizer '%s' (known: %s)", config.class_name, known_names()))
  end
  return cls.from_config(config.config or {})
end
loss_scale.set_deserialize(M.deserialize)
require("tide.optimizers.multi").set_deserialize(M.deserialize)

-- Keras's get: an optimizer from a name ("adam"), a serialized config, or an
-- optimizer (returned as it is); nil gives nil.
function M.get(identifier)
  if identifier == nil then return nil end
  if M.is_optimizer(identifier) then return identifier end
  if type(identifier) == "string" then return M.deserialize { class_name = identifier } end
  if type(identifier) == "table" and getmetatable(identifier) == nil then return M.deserialize(identifier) end
  binding.error(fmt("optimizers.get: could not interpret the optimizer identifier %s (give a name such as " ..
    "\"adam\", a config {class_name=, config=}, or an optimizer)", A.describe(identifier)))
end

return M
