-- stdlib/tide/activations.lua — tide.activations (Keras 3's): activation
-- functions by name, get/serialize, and Keras's defaults for each.
--   tide.activations.get("relu")(x)    tide.activations.leaky_relu(x)  -- slope 0.2
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local nn = require "tide.ops.nn"

local M = {}

-- relu(x, {negative_slope=0, max_value=nil, threshold=0}) as keras.activations.relu:
-- x above threshold (clipped at max_value), minus negative_slope * (threshold - x) below it.
function M.relu(x, opts)
  if opts == nil then return math_ops.relu(x) end
  local slope, max_value, threshold = opts.negative_slope or 0, opts.max_value, opts.threshold or 0
  local y
  if threshold ~= 0 then
    y = math_ops.where(math_ops.greater(x, threshold), x, 0 * x)
  else
    y = math_ops.relu(x)
  end
  if slope ~= 0 then
    y = y + slope * math_ops.minimum(x - threshold, 0)
  end
  if max_value then y = math_ops.minimum(y, max_value) end
  return y
end

function M.leaky_relu(x, opts)
  local slope = opts and opts.negative_slope or 0.2 -- Keras's function default (the LeakyReLU layer's is 0.3)
  return math_ops.leaky_relu(x, { alpha = slope })
end
function M.relu6(x) return math_ops.minimum(math_ops.relu(x), 6) end
function M.softmax(x, opts)
  if x.ndim == 0 then
    binding.error("softmax: the input must have at least 1 dimension, got a scalar")
  end
  return nn.softmax(x, { axis = opts and opts.axis or -1 })
end
function M.log_softmax(x, opts) return nn.log_softmax(x, { axis = opts and opts.axis or -1 }) end
function M.elu(x, opts)
  local alpha = opts and opts.alpha or 1.0
  if alpha == 1.0 then return math_ops.elu(x) end
  return math_ops.where(math_ops.greater(x, 0), x, alpha * math_ops.expm1(x))
end
function M.selu(x) return math_ops.selu(x) end
function M.softplus(x) return math_ops.softplus(x) end
function M.softsign(x) return x / (math_ops.abs(x) + 1) end
function M.silu(x) return x * math_ops.sigmoid(x) end
M.swish = M.silu
function M.gelu(x, opts) return math_ops.gelu(x, { approximate = opts and opts.approximate or false }) end
function M.tanh(x) return math_ops.tanh(x) end
function M.sigmoid(x) return math_ops.sigmoid(x) end
function M.exponential(x) return math_ops.exp(x) end
function M.hard_sigmoid(x) return M.relu6(x + 3) / 6 end -- Keras 3: relu6(x + 3) / 6
function M.hard_silu(x) return x * M.hard_sigmoid(x) end
M.hard_swish = M.hard_silu
function M.mish(x) return x * math_ops.tanh(math_ops.softplus(x)) end
function M.log_sigmoid(x) return math_ops.log_sigmoid(x) end
function M.linear(x) return x end
-- Keras 3's newer activations: x first, then their parameters by position or in a table
-- (celu(x, {alpha = 2}), threshold(x, 0.5, -1)); ops/activations.lua and the registry's kernels.
do
  local act = require "tide.ops.activations"
  for _, name in ipairs { "celu", "glu", "hard_shrink", "soft_shrink", "sparsemax", "squareplus", "threshold" } do
    M[name] = act[name]
  end
  for _, name in ipairs { "sparse_plus", "sparse_sigmoid", "hard_tanh", "tanh_shrink" } do M[name] = math_ops[name] end
end

-- The names get() knows (swish and hard_swish are aliases).
local NAMES = {}
local name_of = {}
for name, fn in pairs(M) do
  if type(fn) == "function" then
    NAMES[#NAMES + 1] = name
    if not name_of[fn] or name == "silu" or name == "hard_silu" then name_of[fn] = name end
  end
end
table.sort(NAMES)
local by_name = {}
for _, name in ipairs(NAMES) do by_name[name] = M[name] end

-- The activation function for a name, a function (returned as is), or nil
-- (linear, as Keras). `what` names the argument in errors.
function M.get(identifier, what)
  if identifier == nil then return M.linear end
  if type(identifier) == "function" then return identifier end
  if type(identifier) == "table" and getmetatable(identifier) and getmetatable(identifier).__call then
    return identifier
  end
  if type(identifier) == "string" then
    local fn = by_name[identifier]
    if not fn then
      binding.error(string.format("%s: unknown activation '%s' (known: %s)", what or "activation", identifier,
        table.concat(NAMES, ", ")))
    end
    return fn
  end
  binding.error(string.format("%s: expected an activation name or a function, got %s", what or "activation",
    type(identifier)))
end

-- The name of a built-in activation (for configs), or the function itself.
function M.serialize(fn)
  return name_of[fn] or fn
end

M.deserialize = M.get

return M
