-- bench/math_tf.lua — the TF math ops written as Lua compositions beside the
-- one-kernel op they lean on, and the new C kernels beside their neighbours:
--   build/tide bench/math_tf.lua      (`name: value unit` lines, medians; 1M float32 elements)
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

local N = 1000000
tide.random.set_seed(1)
local x = tide.random.normal({ N })
local y = tide.random.uniform({ N }, { minval = 0.5, maxval = 2 })
local xi = tide.random.uniform({ N }, { maxval = 5, dtype = "int32" })
local xs = tide.random.normal({ 1000, 1000 })
tide.config.set_retracing_warning { enabled = false }
local log_sigmoid_traced = tide.trace(function(v) return tide.log_sigmoid(v) end)

local cases = {
  -- compositions, each after the op it is built on
  { "softplus_1m", function() return tide.nn.softplus(x) end },
  { "log_sigmoid_1m", function() return tide.log_sigmoid(x) end },               -- neg, softplus, neg
  { "log_sigmoid_traced_1m", function() return log_sigmoid_traced(x) end },      -- one fused loop
  { "round_1m", function() return tide.round(x) end },
  { "rint_1m", function() return tide.rint(x) end },                             -- round after a dtype check
  { "sum_of_squares_1m", function() return tide.reduce_sum(tide.square(x)) end },
  { "reduce_euclidean_norm_1m", function() return tide.reduce_euclidean_norm(x) end },
  { "count_nonzero_int32_1m", function() return tide.count_nonzero(xi) end },      -- not_equal, cast, sum, cast
  -- C kernels
  { "div_1m", function() return tide.div(x, y) end },
  { "divide_no_nan_1m", function() return tide.divide_no_nan(x, y) end },
  { "squared_difference_1m", function() return tide.squared_difference(x, y) end },
  { "xlogy_1m", function() return tide.xlogy(x, y) end },
  { "atan2_1m", function() return tide.atan2(x, y) end },
  { "gelu_1m", function() return tide.nn.gelu(x) end },
  { "gelu_approximate_1m", function() return tide.nn.gelu(x, { approximate = true }) end },
  { "cumsum_1000x1000_axis0", function() return tide.cumsum(xs, 0) end },
  { "cumulative_logsumexp_1000x1000_axis0", function() return tide.cumulative_logsumexp(xs, 0) end },
  { "cumulative_logsumexp_1000x1000_axis1", function() return tide.cumulative_logsumexp(xs, 1) end },
}
for _, c in ipairs(cases) do timing.emit(c[1], timing.measure(c[2], 5) * 1e3, "ms") end
