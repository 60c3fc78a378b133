-- stdlib/tide/ops/nn_more.lua — the rest of tf.nn's common names as compositions of tide ops (the tape
-- differentiates the ops they call): silu/swish, crelu, losses, moments' pieces and local response norm.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local dynamic_shape = require "tide.ops.dynamic_shape"

local M = {}
local fmt = string.format

local function float_arg(op, x, what)
  x = convert.arg(x, op .. " (" .. what .. ")")
  if not dtype.is_float[x.dt] then
    binding.error(fmt("%s: %s must be a float tensor, got %s", op, what, dtype.names[x.dt]))
  end
  return x
end

-- silu(features, beta=1): x * sigmoid(beta x); swish is its other name.
function M.silu(features, ...)
  local o = args.parse("silu", { "beta" }, ...)
  local x = float_arg("silu", features, "features")
  local beta = o.beta == nil and 1 or o.beta
  return m.mul(x, m.sigmoid(beta == 1 and x or m.mul(x, beta)))
end
M.swish = M.silu

-- crelu(features, axis=-1): concat(relu(x), relu(-x)) along axis.
function M.crelu(features, ...)
  local o = args.parse("crelu", { "axis" }, ...)
  local x = float_arg("crelu", features, "features")
  local axis = o.axis == nil and -1 or args.int("crelu", "axis", o.axis)
  -- (+ 0: relu keeps the -0 of -x at x = 0, where TF's crelu gives +0)
  return m.add(shape.concat({ m.relu(x), m.relu(m.neg(x)) }, axis), 0)
end

-- log_poisson_loss(targets, log_input, compute_full_loss=false): exp(c) - z c, plus Stirling's
-- z log z - z + log(2 pi z) / 2 outside 0 <= z <= 1 with compute_full_loss (TF's).
function M.log_poisson_loss(targets, log_input, ...)
  local op = "log_poisson_loss"
  local o = args.parse(op, { "compute_full_loss" }, ...)
  local z, c = float_arg(op, targets, "targets"), float_arg(op, log_input, "log_input")
  if z.dt ~= c.dt then
    binding.error(fmt("%s: targets is %s but log_input is %s", op, dtype.names[z.dt], dtype.names[c.dt]))
  end
  local loss = m.sub(m.exp(c), m.mul(c, z))
  if not args.bool(op, "compute_full_loss", o.compute_full_loss, false) then return loss end
  local stirling = m.add(m.sub(m.mul(z, m.log(z)), z), m.mul(m.log(m.mul(z, 2 * math.pi)), 0.5))
  return m.add(loss, m.where(m.logical_and(m.greater_equal(z, 0), m.less_equal(z, 1)), create.zeros_like(z), stirling))
end

-- weighted_cross_entropy_with_logits(labels, logits, pos_weight): TF's stable form
-- (1 - z) x + (1 + (q - 1) z) (log1p(exp(-|x|)) + relu(-x)).
function M.weighted_cross_entropy_with_logits(labels, logits, pos_weight)
  local op = "weighted_cross_entropy_with_logits"
  local z, x = float_arg(op, labels, "labels"), float_arg(op, logits, "logits")
  if pos_weight == nil then binding.error(op .. ": pos_weight is required") end
  local q1 = type(pos_weight) == "number" and pos_weight - 1 or m.sub(pos_weight, 1)
  local log_weight = m.add(m.mul(z, q1), 1)
  return m.add(m.mul(m.sub(1, z), x),
    m.mul(log_weight, m.add(m.log1p(m.exp(m.neg(m.abs(x)))), m.relu(m.neg(x)))))
end

-- The axes list of a moments-style call, normalized against x's rank.
local function axes_of(op, axes, ndim)
  if axes == nil then binding.error(op .. ": axes is required (a list of axes to reduce)") end
  local list = args.int_list(op, "axes", axes)
  local out = {}
  for i, a in ipairs(list) do
    if ndim >= 0 and (a < -ndim or a >= ndim) then
      binding.error(fmt("%s: axes[%d] = %d is out of range for rank %d", op, i, a, ndim))
    end
    out[i] = (a < 0 and ndim >= 0) and a + ndim or a
  end
  return out
end

-- sufficient_statistics(x, axes, shift=nil, keepdims=false): (count, sum(x - shift), sum((x - shift)^2),
-- shift) over axes; count in x's dtype (TF's).
function M.sufficient_statistics(x, ...)
  local op = "sufficient_statistics"
  local o = args.parse(op, { "axes", "shift", "keepdims" }, ...)
  x = float_arg(op, x, "x")
  local axes = axes_of(op, o.axes, x.ndim)
  local keep = args.bool(op, "keepdims", o.keepdims, false)
  local count = convert.tensor(1, dtype.names[x.dt], op)
  for _, a in ipairs(axes) do count = m.mul(count, m.cast(dynamic_shape.size_along(x, a), dtype.names[x.dt])) end
  local d = o.shift ~= nil and m.sub(x, o.shift) or x
  return count, reduce.reduce_sum(d, axes, keep), reduce.reduce_sum(m.square(d), axes, keep), o.shift
end

-- normalize_moments(counts, mean_ss, variance_ss, shift): (mean, variance) from sufficient statistics.
function M.normalize_moments(counts, mean_ss, variance_ss, shift)
  local op = "normalize_moments"
  counts = float_arg(op, counts, "counts")
  local divisor = m.reciprocal(counts)
  local shifted_mean = m.mul(mean_ss, divisor)
  local mean = shift ~= nil and m.add(shifted_mean, shift) or shifted_mean
  return mean, m.sub(m.mul(variance_ss, divisor), m.square(shifted_mean))
end

-- weighted_moments(x, axes, frequency_weights, keepdims=false): the weighted mean and variance
-- (TF's: weights broadcast against x; sums of weights of 0 give NaN).
function M.weighted_moments(x, ...)
  local op = "weighted_moments"
  local o = args.parse(op, { "axes", "frequency_weights", "keepdims" }, ...)
  x = float_arg(op, x, "x")
  if o.frequency_weights == nil then binding.error(op .. ": frequency_weights is required") end
  local w = convert.arg(o.frequency_weights, op .. " (frequency_weights)")
  if w.dt ~= x.dt then w = m.cast(w, dtype.names[x.dt]) end
  local axes = axes_of(op, o.axes, x.ndim)
  local keep = args.bool(op, "keepdims", o.keepdims, false)
  local divisor = m.reciprocal(reduce.reduce_sum(m.add(w, create.zeros_like(x)), axes, true))
  local mean = m.mul(reduce.reduce_sum(m.mul(w, x), axes, true), divisor)
  local var = m.mul(reduce.reduce_sum(m.mul(w, m.squared_difference(x, mean)), axes, true), divisor)
  if not keep then
    mean, var = shape.squeeze(mean, axes), shape.squeeze(var, axes)
  end
  return mean, var
end

-- local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5) over the last dim of
-- a 4-D input: x / (bias + alpha * sum of squares over [d - r, d + r]) ^ beta (TF's LRN); lrn is its other
-- name. The window sums come from a cumulative sum of the zero-padded squares.
function M.local_response_normalization(input, ...)
  local op = "local_response_normalization"
  local o = args.parse(op, { "depth_radius", "bias", "alpha", "beta" }, ...)
  local x = float_arg(op, input, "input")
  if x.ndim >= 0 and x.ndim ~= 4 then
    binding.error(fmt("%s: input must be 4-D [batch, height, width, depth], got shape %s", op, tostring(x.shape)))
  end
  local r = o.depth_radius == nil and 5 or args.int(op, "depth_radius", o.depth_radius)
  if r < 0 then binding.error(fmt("%s: depth_radius must be >= 0, got %d", op, r)) end
  local bias = o.bias == nil and 1 or args.number(op, "bias", o.bias)
  local alpha = o.alpha == nil and 1 or args.number(op, "alpha", o.alpha)
  local beta = o.beta == nil and 0.5 or args.number(op, "beta", o.beta)
  local sq = shape.pad(m.square(x), { { 0, 0 }, { 0, 0 }, { 0, 0 }, { r + 1, r } })
  local c = reduce.cumsum(sq, 3)
  -- window d covers padded positions d + 1 .. d + 2r + 1: c[d + 2r + 1] - c[d]
  local hi, lo = c:slice { {}, {}, {}, { 2 * r + 1, nil } }, c:slice { {}, {}, {}, { nil, -(2 * r + 1) } }
  local sum = m.sub(hi, lo)
  return m.div(x, m.pow(m.add(m.mul(sum, alpha), bias), beta))
end
M.lrn = M.local_response_normalization

-- batch_norm_with_global_normalization(t, m, v, beta, gamma, variance_epsilon, scale_after_normalization):
-- TF's older batch_normalization (gamma used only with scale_after_normalization).
function M.batch_norm_with_global_normalization(t, mean, variance, beta, gamma, variance_epsilon,
                                                scale_after_normalization)
  local op = "batch_norm_with_global_normalization"
  if type(t) == "table" and not binding.istensor(t) and t.t ~= nil then -- one options table, TF's keywords
    local o = t
    t, mean, variance, beta, gamma = o.t or o.input, o.m or o.mean, o.v or o.variance, o.beta, o.gamma
    variance_epsilon, scale_after_normalization = o.variance_epsilon, o.scale_after_normalization
  end
  if variance_epsilon == nil then binding.error(op .. ": variance_epsilon is required") end
  if scale_after_normalization == nil then binding.error(op .. ": scale_after_normalization is required") end
  local nn = require "tide.ops.nn"
  return nn.batch_normalization(t, mean, variance, beta, scale_after_normalization and gamma or nil, variance_epsilon)
end

-- compute_average_loss(per_example_loss, sample_weight=nil, global_batch_size=nil): the weighted sum over
-- the global batch (one replica here: the batch is the loss's first dim unless given).
function M.compute_average_loss(per_example_loss, ...)
  local op = "compute_average_loss"
  local o = args.parse(op, { "sample_weight", "global_batch_size" }, ...)
  local loss = float_arg(op, per_example_loss, "per_example_loss")
  if o.sample_weight ~= nil then loss = m.mul(loss, o.sample_weight) end
  local n
  if o.global_batch_size ~= nil then
    n = args.int(op, "global_batch_size", o.global_batch_size)
    if n <= 0 then binding.error(fmt("%s: global_batch_size must be positive, got %d", op, n)) end
  elseif loss.ndim == 0 then
    n = 1
  else
    n = m.cast(dynamic_shape.size_along(loss, 0), dtype.names[loss.dt])
  end
  return m.div(reduce.reduce_sum(loss), n)
end

-- scale_regularization_loss(regularization_loss): its sum over the replicas' count (one here).
function M.scale_regularization_loss(regularization_loss)
  return reduce.reduce_sum(float_arg("scale_regularization_loss", regularization_loss, "regularization_loss"))
end

return M
