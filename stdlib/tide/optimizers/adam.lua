-- stdlib/tide/optimizers/adam.lua — the Adam family as Keras 3 has it: Adam
-- (with AMSGrad), AdamW (Adam with decoupled weight decay, 0.004 by default),
-- Adamax (the infinity norm) and Nadam (Nesterov momentum, Keras's schedule
-- of momentum with its running product u_product).
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"

local cast, pow, sqrt, maximum, abs = math_ops.cast, math_ops.pow, math_ops.sqrt, math_ops.maximum, math_ops.abs

local M = {}
local kf = optimizer.keras_float -- a hyperparameter Keras casts (float32 first)

-- The step t = iterations + 1 in dtype dt.
local function local_step(self, dt, ahead)
  return cast(self.iterations + (ahead or 1), dt)
end

local ADAM_PARAMS = {
  { "beta_1", 0.9, "number" }, { "beta_2", 0.999, "number" }, { "epsilon", 1e-7, "number" },
  { "amsgrad", false, "bool" },
}

-- m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2); (AMSGrad: v_hat =
-- max(v_hat, v), used for v); w -= m * alpha / (sqrt(v) + epsilon) with
-- alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t).
local function adam_slots(self)
  local groups = { { "momentum", "velocity" } }
  if self.amsgrad then groups[2] = { "velocity_hat" } end
  return groups
end

local function adam_update(self, g, w, lr, slots)
  local t = local_step(self, g.dtype)
  local beta_1_power, beta_2_power = pow(kf(self.beta_1), t), pow(kf(self.beta_2), t)
  local alpha = lr * sqrt(1 - beta_2_power) / (1 - beta_1_power)
  local m, v = slots.momentum, slots.velocity
  local new_m = m + (g - m) * (1 - self.beta_1)
  local new_v = v + (math_ops.square(g) - v) * (1 - self.beta_2)
  m:assign(new_m)
  v:assign(new_v)
  if self.amsgrad then
    new_v = maximum(slots.velocity_hat, new_v)
    slots.velocity_hat:assign(new_v)
  end
  w:assign_sub((new_m * alpha) / (sqrt(new_v) + self.epsilon))
end

M.Adam = optimizer.define("Adam", {
  learning_rate = 0.001, params = ADAM_PARAMS, slots = adam_slots, update_step = adam_update,
})

-- Keras's AdamW: Adam, with weight_decay (second argument) 0.004 by default.
M.AdamW = optimizer.define("AdamW", {
  learning_rate = 0.001, params = ADAM_PARAMS, slots = adam_slots, update_step = adam_update,
  weight_decay = 0.004,
  order = { "weight_decay", "beta_1", "beta_2", "epsilon", "amsgrad", "clipnorm", "clipvalue", "global_clipnorm",
            "use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps",
            "name" },
})

-- m += (g - m)(1 - beta_1); u = max(beta_2 * u, |g|);
-- w -= lr * m / ((1 - beta_1^t)(u + epsilon)).
M.Adamax = optimizer.define("Adamax", {
  learning_rate = 0.001,
  params = { { "beta_1", 0.9, "number" }, { "beta_2", 0.999, "number" }, { "epsilon", 1e-7, "number" } },
  slots = function() return { { "momentum", "norm" } } end,
  update_step = function(self, g, w, lr, slots)
    local beta_1_power = pow(kf(self.beta_1), local_step(self, g.dtype))
    local m, u = slots.momentum, slots.norm
    local new_m = m + (g - m) * (1 - self.beta_1)
    local new_u = maximum(u * self.beta_2, abs(g))
    m:assign(new_m)
    u:assign(new_u)
    w:assign_sub((new_m * lr) / ((1 - beta_1_power) * (new_u + self.epsilon)))
  end,
})

-- Keras 3's Nadam: u_t = beta_1 (1 - 0.5 * 0.96^t); u_product (one Variable,
-- in the first variable's dtype) is multiplied by u_t once per step, before
-- the updates; m_hat = u_{t+1} m / (1 - u_product u_{t+1}) + (1 - u_t) g /
-- (1 - u_product); v_hat = v / (1 - beta_2^t); w -= lr m_hat / (sqrt(v_hat) + eps).
M.Nadam = optimizer.define("Nadam", {
  learning_rate = 0.001,
  params = { { "beta_1", 0.9, "number" }, { "beta_2", 0.999, "number" }, { "epsilon", 1e-7, "number" } },
  slots = function() return { { "momentum", "velocity" } } end,
  build_extra = function(self, var_list)
    local dt = var_list[1] and var_list[1].dtype or "float32"
    rawset(self, "_u_product", self:add_variable(1.0, { dtype = dt, name = "u_product" }))
  end,
  before_updates = function(self)
    local u = self._u_product
    local decay = 1 - pow(0.96, local_step(self, u.dtype)) * 0.5
    u:assign(u * self.beta_1 * decay)
  end,
  update_step = function(self, g, w, lr, slots)
    local dt = g.dtype
    local t, t1 = local_step(self, dt), local_step(self, dt, 2)
    local decay, beta_1, beta_2 = kf(0.96), kf(self.beta_1), kf(self.beta_2)
    local u_t = (1 - pow(decay, t) * 0.5) * beta_1
    local u_t_1 = (1 - pow(decay, t1) * 0.5) * beta_1
    local u_product_t = cast(self._u_product, dt)
    local u_product_t_1 = u_product_t * u_t_1
    local beta_2_power = pow(beta_2, t)
    local m, v = slots.momentum, slots.velocity
    local new_m = m + (g - m) * (1 - beta_1)
    local new_v = v + (math_ops.square(g) - v) * (1 - beta_2)
    m:assign(new_m)
    v:assign(new_v)
    local m_hat = (new_m * u_t_1) / (1 - u_product_t_1) + (g * (1 - u_t)) / (1 - u_product_t)
    local v_hat = new_v / (1 - beta_2_power)
    w:assign_sub((m_hat * lr) / (sqrt(v_hat) + self.epsilon))
  end,
})

return M
