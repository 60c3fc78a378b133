-- stdlib/tide/optimizers/adaptive.lua — Keras 3's newer adaptive optimizers: Lion (the sign of an interpolated
-- momentum), Lamb (Adam's step scaled by a layer-wise trust ratio), Adafactor (factored second moments) and
-- ScheduleFreeAdamW (Defazio et al. 2024: an averaged iterate instead of a schedule).
local binding = require "tide.binding"
local variable = require "tide.variable"
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local init_scope = require "tide.initializers.init_scope"

local cast, pow, sqrt, maximum, minimum = math_ops.cast, math_ops.pow, math_ops.sqrt, math_ops.maximum,
  math_ops.minimum
local square, sign = math_ops.square, math_ops.sign
local fmt = string.format

local M = {}
local kf = optimizer.keras_float -- a hyperparameter Keras casts (float32 first)

local function local_step(self, dt) return cast(self.iterations + 1, dt) end

---------------------------------------------------------------------------
-- Lion
---------------------------------------------------------------------------

-- w -= lr * sign(beta_1 m + (1 - beta_1) g); m = beta_2 m + (1 - beta_2) g.
M.Lion = optimizer.define("Lion", {
  learning_rate = 0.001,
  params = { { "beta_1", 0.9, "number" }, { "beta_2", 0.99, "number" } },
  init = function(self)
    if not (self.beta_1 > 0 and self.beta_1 <= 1) then
      binding.error(fmt("Lion: beta_1 must be in (0, 1] (0 makes it SignSGD), got %s", tostring(self.beta_1)))
    end
  end,
  slots = function() return { { "momentum" } } end,
  update_step = function(self, g, w, lr, slots)
    local beta_1, beta_2 = kf(self.beta_1), kf(self.beta_2)
    local m = slots.momentum
    w:assign_sub(lr * sign(m * beta_1 + g * (1 - beta_1)))
    m:assign(m * beta_2 + g * (1 - beta_2))
  end,
})

---------------------------------------------------------------------------
-- Lamb
---------------------------------------------------------------------------

local function l2(x) return sqrt(reduce_ops.reduce_sum(square(x))) end

-- Adam's moments and bias corrections; the step m_hat / (sqrt(v_hat) + eps) is scaled by ||w|| / ||step||
-- (1 when either norm is 0).
M.Lamb = optimizer.define("Lamb", {
  learning_rate = 0.001,
  params = { { "beta_1", 0.9, "number" }, { "beta_2", 0.999, "number" }, { "epsilon", 1e-7, "number" } },
  slots = function() return { { "momentum", "velocity" } } end,
  update_step = function(self, g, w, lr, slots)
    local t = local_step(self, g.dtype)
    local beta_1_power, beta_2_power = pow(kf(self.beta_1), t), pow(kf(self.beta_2), t)
    local m, v = slots.momentum, slots.velocity
    local new_m = m + (g - m) * (1 - self.beta_1)
    local new_v = v + (square(g) - v) * (1 - self.beta_2)
    m:assign(new_m)
    v:assign(new_v)
    local step = (new_m / (1 - beta_1_power)) / (sqrt(new_v / (1 - beta_2_power)) + self.epsilon)
    local w_norm, g_norm = l2(w), l2(step)
    local ratio = math_ops.where(math_ops.greater(w_norm, 0),
      math_ops.where(math_ops.greater(g_norm, 0), w_norm / g_norm, 1), 1)
    w:assign_sub(ratio * lr * step)
  end,
})

---------------------------------------------------------------------------
-- Adafactor
---------------------------------------------------------------------------

local function rms(x) return sqrt(reduce_ops.reduce_mean(square(x))) end

-- Variables of rank >= 2 keep row and column statistics (r: the shape less its last dim, c: less its
-- second-last), their outer product standing for the second moments; others a full "velocity".
M.Adafactor = optimizer.define("Adafactor", {
  learning_rate = 0.001,
  params = { { "beta_2_decay", -0.8, "number" }, { "epsilon_1", 1e-30, "number" }, { "epsilon_2", 1e-3, "number" },
    { "clip_threshold", 1.0, "number" }, { "relative_step", true, "bool" } },
  slots = function() return { { "velocity" } } end,
  build_each = function(self, fresh)
    for _, v in ipairs(fresh) do
      local dims = v.shape:as_list()
      if #dims >= 2 then
        local r_shape, c_shape = {}, {}
        for i = 1, #dims - 1 do r_shape[i] = dims[i] end
        for i = 1, #dims - 2 do c_shape[i] = dims[i] end
        c_shape[#c_shape + 1] = dims[#dims]
        self._slots[v].r = self:add_variable(create_ops.zeros(r_shape, v.dtype), { name = v.name .. "_r" })
        self._slots[v].c = self:add_variable(create_ops.zeros(c_shape, v.dtype), { name = v.name .. "_c" })
      end
    end
  end,
  update_step = function(self, g, w, lr, slots)
    local dt = g.dtype
    local t = local_step(self, dt)
    local inv_sqrt_t = 1 / sqrt(t)
    -- relative_step caps a constant learning rate at 1 / sqrt(t) (a schedule is left as it is)
    if self.relative_step and variable.is_variable(rawget(self, "_learning_rate")) then lr = minimum(lr, inv_sqrt_t) end
    local rho = minimum(lr, inv_sqrt_t)
    local alpha = maximum(kf(self.epsilon_2), rms(w)) * rho
    local g2 = square(g) + self.epsilon_1
    local beta = 1 - pow(t, self.beta_2_decay)
    local v = slots.velocity
    if slots.r then
      local r, c = slots.r, slots.c
      local new_r = beta * r + (1 - beta) * reduce_ops.reduce_mean(g2, -1)
      local new_c = beta * c + (1 - beta) * reduce_ops.reduce_mean(g2, -2)
      r:assign(new_r)
      c:assign(new_c)
      v:assign(shape_ops.expand_dims(new_r / reduce_ops.reduce_mean(new_r, -1, true), -1) *
        shape_ops.expand_dims(new_c, -2))
    else
      v:assign(beta * v + (1 - beta) * g2)
    end
    local u = g / sqrt(v)
    local u_hat = u / maximum(1, rms(u) / self.clip_threshold)
    w:assign_sub(alpha * u_hat)
  end,
})

---------------------------------------------------------------------------
-- ScheduleFreeAdamW
---------------------------------------------------------------------------

-- The variable holds y, the point gradients are taken at; the "momentum" slot holds z (starting at w), the
-- base sequence Adam's step moves; x, the average of the z's weighted 1/t, is y's partner:
-- x_old = (y - (1 - beta_1) z_old) / beta_1, x = (1 - 1/t) x_old + z / t, y = (1 - beta_1) z + beta_1 x.
M.ScheduleFreeAdamW = optimizer.define("ScheduleFreeAdamW", {
  learning_rate = 0.0025,
  params = { { "beta_1", 0.9, "number" }, { "beta_2", 0.999, "number" }, { "epsilon", 1e-8, "number" },
    { "warmup_steps", 0, "nonneg" } },
  slots = function() return { { "momentum", "velocity" } } end,
  -- z starts at the variable's value: set once, eagerly, even when the first traced step builds the slots
  build_each = function(self, fresh)
    init_scope.run(function()
      for _, v in ipairs(fresh) do self._slots[v].momentum:assign(v) end
    end)
  end,
  update_step = function(self, g, w, lr, slots)
    local dt = g.dtype
    local t = local_step(self, dt)
    local beta_1, beta_2, eps = kf(self.beta_1), kf(self.beta_2), kf(self.epsilon)
    if self.warmup_steps > 0 then lr = lr * minimum(t / kf(self.warmup_steps), 1) end
    local z, v = slots.momentum, slots.velocity
    local z_old = z + 0 -- a value, not the Variable (z is assigned below)
    local bias_correction_2 = 1 - pow(beta_2, t)
    local new_v = v + (square(g) - v) * (1 - beta_2)
    v:assign(new_v)
    local new_z = z_old - (lr * g) / (sqrt(new_v / bias_correction_2) + eps)
    z:assign(new_z)
    local weight = 1 / t
    -- Keras 3.15 reads z back after updating it (its momentum.value is the Variable on TF), so x_old is formed
    -- with the new z; tide follows Keras's numbers (the paper's x_old would take z_old)
    local x_old = (w - new_z * (1 - beta_1)) / beta_1
    local x_new = x_old * (1 - weight) + new_z * weight
    w:assign(new_z * (1 - beta_1) + x_new * beta_1)
  end,
})

return M
