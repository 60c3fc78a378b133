-- stdlib/tide/optimizers/rmsprop.lua — RMSprop (Keras 3's): a moving average of
-- squared gradients, with momentum and the centered variant.
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"

local sqrt, square = math_ops.sqrt, math_ops.square

local M = {}

-- v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho) g and the
-- denominator is v - a^2 + eps, else v + eps; step = lr g / sqrt(denominator);
-- with momentum: mom = momentum * mom + step, w -= mom; else w -= step.
M.RMSprop = optimizer.define("RMSprop", {
  learning_rate = 0.001,
  params = { { "rho", 0.9, "number" }, { "momentum", 0.0, "nonneg" }, { "epsilon", 1e-7, "number" },
             { "centered", false, "bool" } },
  slots = function(self)
    local groups = { { "velocity" } }
    if self.momentum > 0 then groups[#groups + 1] = { "momentum" } end
    if self.centered then groups[#groups + 1] = { "average_gradient" } end
    return groups
  end,
  update_step = function(self, g, w, lr, slots)
    local rho = self.rho
    local v = slots.velocity
    local new_v = v * rho + square(g) * (1 - rho)
    v:assign(new_v)
    local denominator
    if self.centered then
      local a = slots.average_gradient
      local new_a = a * rho + g * (1 - rho)
      a:assign(new_a)
      denominator = new_v - square(new_a) + self.epsilon
    else
      denominator = new_v + self.epsilon
    end
    local increment = (g * lr) / sqrt(denominator)
    if self.momentum > 0 then
      local mom = slots.momentum
      local new_mom = mom * self.momentum + increment
      mom:assign(new_mom)
      w:assign_sub(new_mom)
    else
      w:assign_sub(increment)
    end
  end,
})

return M
