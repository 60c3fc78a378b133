-- stdlib/tide/optimizers/muon.lua — Keras 3's Muon: 2-D weights take momentum orthogonalized by five
-- Newton-Schulz iterations; the others (and embeddings, and the layers named in exclude_layers) take AdamW.
local optimizer = require "tide.optimizers.optimizer"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local linalg_ops = require "tide.ops.linalg"

local cast, pow, sqrt, square = math_ops.cast, math_ops.pow, math_ops.sqrt, math_ops.square
local matmul = linalg_ops.matmul

local M = {}
local kf = optimizer.keras_float

-- Keras's _should_use_adamw: not 2-D, an embedding (by its path or name), or a match of exclude_layers
-- (Lua patterns, searched in the path).
local function uses_adamw(self, v)
  if v.shape.rank ~= 2 then return true end
  local path = v.name or "" -- (tide's Variables carry their path in their name)
  if self.exclude_embeddings and path:lower():find("embedding", 1, true) then return true end
  for _, pattern in ipairs(self.exclude_layers or {}) do
    if path:find(pattern) then return true end
  end
  return false
end

-- Keras's zeropower_via_newtonschulz5: x scaled to unit Frobenius norm, then `steps` iterations of
-- x = a x + (b A + c A^2) x with A = x x^T (on the wide orientation).
local function newton_schulz(self, x)
  local rows, cols = x.shape[1], x.shape[2]
  local tall = rows > cols
  if tall then x = shape_ops.transpose(x) end
  x = x / (sqrt(reduce_ops.reduce_sum(square(x))) + 1e-7)
  local a, b, c = self.muon_a, self.muon_b, self.muon_c
  for _ = 1, self.ns_steps do
    local A = matmul(x, x, { transpose_b = true })
    local B = A * b + matmul(A, A) * c
    x = x * a + matmul(B, x)
  end
  if tall then x = shape_ops.transpose(x) end
  return x
end

local function adamw_step(self, g, w, lr, m, v)
  local t = cast(self.iterations + 1, g.dtype)
  local alpha = lr * sqrt(1 - pow(kf(self.adam_beta_2), t)) / (1 - pow(kf(self.adam_beta_1), t))
  local new_m = m + (g - m) * (1 - self.adam_beta_1)
  local new_v = v + (square(g) - v) * (1 - self.adam_beta_2)
  m:assign(new_m)
  v:assign(new_v)
  w:assign_sub((new_m * alpha) / (sqrt(new_v) + self.epsilon))
end

M.Muon = optimizer.define("Muon", {
  learning_rate = 0.001,
  weight_decay = 0.004,
  params = { { "adam_beta_1", 0.9, "number" }, { "adam_beta_2", 0.999, "number" },
    { "adam_weight_decay", 0.004, "nonneg" }, { "epsilon", 1e-7, "number" }, { "exclude_layers", nil, "strings" },
    { "exclude_embeddings", true, "bool" }, { "muon_a", 3.4445, "number" }, { "muon_b", -4.7750, "number" },
    { "muon_c", 2.0315, "number" }, { "adam_lr_ratio", 1, "number" }, { "momentum", 0.95, "number" },
    { "ns_steps", 5, "count" }, { "nesterov", true, "bool" }, { "rms_rate", 0.2, "nonneg" } },
  order = { "adam_beta_1", "adam_beta_2", "adam_weight_decay", "epsilon", "weight_decay", "clipnorm", "clipvalue",
    "global_clipnorm", "use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor",
    "gradient_accumulation_steps", "name", "exclude_layers", "exclude_embeddings", "muon_a", "muon_b", "muon_c",
    "adam_lr_ratio", "momentum", "ns_steps", "nesterov", "rms_rate" },
  slots = function() return { { "momentum" } } end,
  build_each = function(self, fresh)
    for _, v in ipairs(fresh) do
      if uses_adamw(self, v) then self._slots[v].velocity = self:add_variable_from_reference(v, "velocity") end
    end
  end,
  -- AdamW's variables decay by adam_weight_decay, Muon's by weight_decay
  weight_decay_of = function(self, v)
    if uses_adamw(self, v) then return self.adam_weight_decay end
    return self.weight_decay
  end,
  update_step = function(self, g, w, lr, slots)
    local m = slots.momentum
    if slots.velocity then return adamw_step(self, g, w, lr * self.adam_lr_ratio, m, slots.velocity) end
    local new_m = m + (g + m * (self.momentum - 1)) -- Keras's order of the sums
    m:assign(new_m)
    local direction = self.nesterov and (g + new_m * self.momentum) or new_m
    local update = newton_schulz(self, direction) * lr
    if self.rms_rate then
      update = update * kf(math.sqrt(math.max(w.shape[1], w.shape[2]))) * self.rms_rate
    end
    w:assign_sub(update)
  end,
})

return M
