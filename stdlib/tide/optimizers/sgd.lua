-- stdlib/tide/optimizers/sgd.lua — SGD (Keras 3's): plain gradient descent,
-- with momentum and Nesterov momentum.
local optimizer = require "tide.optimizers.optimizer"

local M = {}

-- m = momentum * m - lr * g; w += m (Nesterov: w += momentum * m - lr * g);
-- without momentum, w -= lr * g.
M.SGD = optimizer.define("SGD", {
  learning_rate = 0.01,
  params = { { "momentum", 0.0, "unit" }, { "nesterov", false, "bool" } },
  slots = function(self)
    if self.momentum ~= 0 then return { { "momentum" } } end
    return {}
  end,
  update_step = function(self, g, w, lr, slots)
    local m = slots.momentum
    if not m then
      w:assign_sub(g * lr)
      return
    end
    local momentum = optimizer.keras_float(self.momentum) -- Keras casts it: float32 first
    local new_m = m * momentum - g * lr
    m:assign(new_m)
    if self.nesterov then
      w:assign_add(new_m * momentum - g * lr)
    else
      w:assign_add(new_m)
    end
  end,
})

return M
