-- stdlib/tide/optimizers/adagrad.lua — the accumulator family as Keras 3 has it:
-- Adagrad (sums of squared gradients from initial_accumulator_value) and
-- Adadelta (moving averages of squared gradients and of squared updates).
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"

local sqrt, square = math_ops.sqrt, math_ops.square

local M = {}

-- acc += g^2; w -= lr g / sqrt(acc + epsilon).
M.Adagrad = optimizer.define("Adagrad", {
  learning_rate = 0.001,
  params = { { "initial_accumulator_value", 0.1, "nonneg" }, { "epsilon", 1e-7, "number" } },
  slots = function() return { { "accumulator" } } end,
  slot_init = function(self) return self.initial_accumulator_value end,
  update_step = function(self, g, w, lr, slots)
    local acc = slots.accumulator
    local new_acc = acc + square(g)
    acc:assign(new_acc)
    w:assign_sub((g * lr) / sqrt(new_acc + self.epsilon))
  end,
})

-- Keras 3's Adadelta (learning_rate 0.001 by default, applied to the step):
-- Eg = rho Eg + (1 - rho) g^2; d = -sqrt(Ed + eps) g / sqrt(Eg + eps);
-- Ed = rho Ed + (1 - rho) d^2; w += lr d.
M.Adadelta = optimizer.define("Adadelta", {
  learning_rate = 0.001,
  params = { { "rho", 0.95, "number" }, { "epsilon", 1e-7, "number" } },
  slots = function() return { { "accumulated_grad", "accumulated_delta_var" } } end,
  update_step = function(self, g, w, lr, slots)
    local rho, eps = self.rho, self.epsilon
    local eg, ed = slots.accumulated_grad, slots.accumulated_delta_var
    local new_eg = eg * rho + square(g) * (1 - rho)
    eg:assign(new_eg)
    local delta = -((sqrt(ed + eps) * g) / sqrt(new_eg + eps))
    ed:assign(ed * rho + square(delta) * (1 - rho))
    w:assign_add(delta * lr)
  end,
})

return M
