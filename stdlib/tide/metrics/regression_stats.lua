-- stdlib/tide/metrics/regression_stats.lua — Keras 3's R2Score and the correlation metrics
-- (pearson_correlation, concordance_correlation and their MeanMetricWrapper classes).
local common = require "tide.losses.common"
local args = require "tide.args"
local base = require "tide.metrics.base"
local init_scope = require "tide.initializers.init_scope"

local ops = common.ops
local M = {}
M.impl = {}

local function pair(op, y_true, y_pred)
  y_pred = common.float_input(op, "y_pred", y_pred)
  y_true = common.like_input(op, "y_true", y_true, y_pred.dtype)
  y_true, y_pred = common.squeeze_or_expand(y_true, y_pred)
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  return y_true, y_pred
end

-- pearson_correlation: per sample (along axis), the mean product of the standardized y_true and y_pred.
function M.impl.pearson_correlation(op, y_true, y_pred, p)
  y_true, y_pred = pair(op, y_true, y_pred)
  local axis = p.axis
  local t = y_true - ops.reduce_mean(y_true, axis, true)
  local q = y_pred - ops.reduce_mean(y_pred, axis, true)
  t = t / ops.reduce_std(t, axis, true)
  q = q / ops.reduce_std(q, axis, true)
  return ops.reduce_mean(t * q, axis)
end

-- concordance_correlation: Lin's concordance, as Keras computes it (its covariance term centres y_true on
-- y_pred's mean, as Keras 3 does).
function M.impl.concordance_correlation(op, y_true, y_pred, p)
  y_true, y_pred = pair(op, y_true, y_pred)
  local axis = p.axis
  local mt, mp = ops.reduce_mean(y_true, axis, true), ops.reduce_mean(y_pred, axis, true)
  local vt, vp = ops.reduce_variance(y_true - mt, axis, true), ops.reduce_variance(y_pred - mp, axis, true)
  local covar = (y_true - mp) * (y_pred - mp)
  local norm = vt + vp + ops.square(mt - mp)
  return ops.reduce_mean(2 * covar / (norm + common.EPSILON), axis)
end

local function axis_check(op, v) return common.want_int(op, "axis", v) end

for _, spec in ipairs {
  { class = "PearsonCorrelation", name = "pearson_correlation" },
  { class = "ConcordanceCorrelation", name = "concordance_correlation" },
} do
  local impl = M.impl[spec.name]
  spec.impl, spec.params, spec.order = impl, { { "axis", -1, axis_check } }, { "name", "dtype", "axis" }
  spec.align = false
  M[spec.class] = base.wrapper(spec)
  local fname = spec.name
  -- f(y_true, y_pred, [axis]): one value per sample.
  M[fname] = function(y_true, y_pred, ...)
    local o = args.parse(fname, { "axis" }, ...)
    return impl(fname, y_true, y_pred, { axis = axis_check(fname, o.axis == nil and -1 or o.axis) })
  end
end

---------------------------------------------------------------------------
-- R2Score
---------------------------------------------------------------------------

local AGGREGATIONS = { uniform_average = true, variance_weighted_average = true }

local R2Score = common.class("R2Score", base.Metric)
M.R2Score = R2Score

-- R2Score{class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=}: the coefficient of
-- determination per output column, averaged (uniformly, by variance, or not with class_aggregation=false);
-- num_regressors > 0 gives the adjusted score when there are enough samples.
function R2Score:__init(...)
  local op = "R2Score"
  local o = common.options(op, { "class_aggregation", "num_regressors", "name", "dtype" }, ...)
  local agg = o.class_aggregation
  if agg == nil then agg = "uniform_average" end
  if agg == false then agg = nil end -- Lua's nil means "the default": false asks for no aggregation
  if agg ~= nil and not AGGREGATIONS[agg] then
    common.error(string.format("%s: class_aggregation must be \"uniform_average\", \"variance_weighted_average\" " ..
      "or false, got %s", op, tostring(agg)))
  end
  self.class_aggregation = agg
  self.num_regressors = common.want_int(op, "num_regressors", o.num_regressors == nil and 0 or o.num_regressors, 0)
  self:_init_base(op, o.name or "r2_score", o.dtype)
  self.num_samples = self:add_variable({}, "num_samples")
end

function R2Score:update_state(y_true, y_pred, sample_weight)
  local op, dt = self.name, self.dtype
  y_pred = common.float_input(op, "y_pred", y_pred, dt)
  y_true = common.like_input(op, "y_true", y_true, dt)
  y_true, y_pred = common.squeeze_or_expand(y_true, y_pred)
  if not self.sum then
    local st, sp = y_true.shape, y_pred.shape
    if st.rank ~= 2 or sp.rank ~= 2 or type(sp[2]) ~= "number" then
      common.error(string.format("%s: expects 2-D inputs (batch, outputs) with the outputs known, got y_true %s " ..
        "and y_pred %s", op, tostring(st), tostring(sp)))
    end
    init_scope.run(function()
      local c = sp[2]
      self.squared_sum = self:add_variable({ c }, "squared_sum")
      self.sum = self:add_variable({ c }, "sum")
      self.total_mse = self:add_variable({ c }, "residual")
      self.count = self:add_variable({ c }, "count")
    end)
  end
  common.check_same_shape(op, "y_true", y_true, "y_pred", y_pred)
  local sw = sample_weight == nil and ops.ones({}, dt) or common.like_input(op, "sample_weight", sample_weight, dt)
  if sw.shape.rank == 1 then sw = ops.expand_dims(sw, 1) end
  common.check_broadcast(op, "y_true", y_true, "sample_weight", sw)
  sw = ops.broadcast_to(sw, ops.shape(y_true))
  local wt = y_true * sw
  self.sum:assign_add(ops.reduce_sum(wt, 0))
  self.squared_sum:assign_add(ops.reduce_sum(y_true * wt, 0))
  self.total_mse:assign_add(ops.reduce_sum(ops.square(y_true - y_pred) * sw, 0))
  self.count:assign_add(ops.reduce_sum(sw, 0))
  self.num_samples:assign_add(common.count(y_true, dt))
end

function R2Score:result()
  if not self.sum then return ops.zeros({}, self.dtype) end
  local s, c = self.sum:read_value(), self.count:read_value()
  local mean = s / c
  local total = self.squared_sum:read_value() - s * mean
  local raw = 1 - self.total_mse:read_value() / total
  raw = ops.where(ops.is_inf(raw), 0, raw)
  local r2
  if self.class_aggregation == "uniform_average" then
    r2 = ops.reduce_mean(raw)
  elseif self.class_aggregation == "variance_weighted_average" then
    r2 = ops.reduce_sum(total * raw) / ops.reduce_sum(total)
  else
    r2 = raw
  end
  local p = self.num_regressors
  if p ~= 0 then
    -- adjusted only while p < n - 1 (Keras falls back to the plain score, with a warning, otherwise)
    local n = self.num_samples:read_value()
    local adjusted = 1 - (1 - r2) * (n - 1) / (n - p - 1)
    r2 = ops.where(ops.less(p, n - 1), adjusted, r2)
  end
  return r2
end

function R2Score:get_config()
  local c = base.Metric.get_config(self)
  c.class_aggregation, c.num_regressors = self.class_aggregation, self.num_regressors
  return c
end

return M
