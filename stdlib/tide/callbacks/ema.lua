-- stdlib/tide/callbacks/ema.lua — Keras 3's SwapEMAWeights: evaluate and predict with the optimizer's moving
-- averages of the weights (use_ema), swapping them into the model and back; swap_on_epoch for checkpoints.
local binding = require "tide.binding"
local callback = require "tide.callbacks.callback"
local Callback = callback.Callback
local options = callback.options

local M = {}

local SwapEMAWeights = Callback:extend("SwapEMAWeights")
M.SwapEMAWeights = SwapEMAWeights

-- SwapEMAWeights{swap_on_epoch=false}
function SwapEMAWeights:__init(...)
  local o = options("SwapEMAWeights", { "swap_on_epoch" }, ...)
  if o.swap_on_epoch ~= nil and type(o.swap_on_epoch) ~= "boolean" then
    binding.error("SwapEMAWeights: swap_on_epoch must be true or false, got " .. tostring(o.swap_on_epoch))
  end
  self.swap_on_epoch = o.swap_on_epoch == true
  self._ema_weights_in_model = false
end

-- The optimizer that keeps the averages (a LossScaleOptimizer's inner one), or an error saying why none.
local function ema_optimizer(self)
  local model = self.model
  local opt = model and model.optimizer
  if opt == nil then binding.error("SwapEMAWeights: the model has no optimizer (compile it first)") end
  opt = rawget(opt, "inner_optimizer") or opt
  if not opt.use_ema then
    binding.error(string.format("SwapEMAWeights: the optimizer must be made with use_ema = true (%s has use_ema = %s)",
      tostring(opt.name), tostring(opt.use_ema)))
  end
  return opt
end

-- Each trained variable and its "average" slot trade values.
local function swap(self)
  local opt = ema_optimizer(self)
  for _, v in ipairs(opt._trainable) do
    local avg = opt:get_slot(v, "average")
    if avg then
      local held = v:read_value() + 0 -- a value, not the Variable
      v:assign(avg)
      avg:assign(held)
    end
  end
end

-- The averages take the variables' values (the model keeps the EMA weights after training).
local function finalize(self)
  local opt = ema_optimizer(self)
  for _, v in ipairs(opt._trainable) do
    local avg = opt:get_slot(v, "average")
    if avg then avg:assign(v) end
  end
end

function SwapEMAWeights:on_epoch_begin()
  if self.swap_on_epoch and self._ema_weights_in_model then
    swap(self)
    self._ema_weights_in_model = false
  end
end

function SwapEMAWeights:on_epoch_end(epoch)
  if self.swap_on_epoch and not self._ema_weights_in_model then
    swap(self)
    self._ema_weights_in_model = true
    local epochs = self.params and self.params.epochs
    if epochs and epoch == epochs - 1 then finalize(self) end
  end
end

local function swap_in(self)
  if not self._ema_weights_in_model then
    swap(self)
    self._ema_weights_in_model = true
  end
end

local function swap_out(self)
  if self._ema_weights_in_model then
    swap(self)
    self._ema_weights_in_model = false
  end
end

SwapEMAWeights.on_test_begin, SwapEMAWeights.on_test_end = swap_in, swap_out
-- (Keras 3.15's on_predict_end tests the flag the wrong way round and leaves the averages in the model;
-- tide swaps back, as after evaluate)
SwapEMAWeights.on_predict_begin, SwapEMAWeights.on_predict_end = swap_in, swap_out

return M
