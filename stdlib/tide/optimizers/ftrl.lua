-- stdlib/tide/optimizers/ftrl.lua — Keras 3's Ftrl (follow the regularized leader, McMahan et al. 2013), with
-- L1, L2 and L2-shrinkage regularization and beta; its accumulator starts at initial_accumulator_value.
local binding = require "tide.binding"
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"

local pow, square = math_ops.pow, math_ops.square
local fmt = string.format

local M = {}

local function check(self)
  if self.learning_rate_power > 0 then
    binding.error(fmt("Ftrl: learning_rate_power must be <= 0, got %s", tostring(self.learning_rate_power)))
  end
end

-- linear += g' - (n_new^-p - n^-p) / lr * w, with g' = g + 2 l2_shrinkage w and n_new = n + g^2;
-- w = (clip(linear, -l1, l1) - linear) / (n_new^-p / lr + 2 (l2 + beta / (2 lr))).
M.Ftrl = optimizer.define("Ftrl", {
  learning_rate = 0.001,
  params = { { "learning_rate_power", -0.5, "number" }, { "initial_accumulator_value", 0.1, "nonneg" },
    { "l1_regularization_strength", 0.0, "nonneg" }, { "l2_regularization_strength", 0.0, "nonneg" },
    { "l2_shrinkage_regularization_strength", 0.0, "nonneg" }, { "beta", 0.0, "number" } },
  init = check,
  slots = function() return { { "accumulator", "linear" } } end,
  slot_init = function(self, slot) if slot == "accumulator" then return self.initial_accumulator_value end end,
  update_step = function(self, g, w, lr, slots)
    local p = self.learning_rate_power
    local l2 = self.l2_regularization_strength + self.beta / (2 * lr)
    local accum, linear = slots.accumulator, slots.linear
    local g_used = g + w * (2 * self.l2_shrinkage_regularization_strength)
    local new_accum = accum + square(g)
    local new_linear = linear + (g_used - ((pow(new_accum, -p) - pow(accum, -p)) / lr) * w)
    linear:assign(new_linear)
    local quadratic = pow(new_accum, -p) / lr + l2 * 2
    local l1 = self.l1_regularization_strength
    w:assign((math_ops.clip_by_value(new_linear, -l1, l1) - new_linear) / quadratic)
    accum:assign(new_accum)
  end,
})

return M
