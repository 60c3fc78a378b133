-- stdlib/tide/ops/keras.lua — tide.ops: Keras 3's keras.ops (numpy-style names), as aliases of tide's ops where
-- keras.ops means the same, and small compositions of them where it differs (axis=None flattens, numpy defaults).
local binding = require "tide.binding"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local linalg_ops = require "tide.ops.linalg"
local create_ops = require "tide.ops.create"
local nn_ops = require "tide.ops.nn"

local M = {}

-- The ops that the aliases below may name (first module that has a name wins).
local SOURCES = { math_ops, reduce_ops, shape_ops, linalg_ops, create_ops, nn_ops, require "tide.ops.einsum" }
local function op(name)
  for _, m in ipairs(SOURCES) do
    if m[name] ~= nil then return m[name] end
  end
  error("tide.ops: no tide op " .. name .. " to alias", 2)
end

-- Same name, same meaning in keras.ops (TF backend) and tide (docs/api.md).
local SAME = {
  "abs", "add", "all", "any", "argsort", "broadcast_to", "cast", "ceil", "cos", "divide", "divide_no_nan", "einsum",
  "equal", "erf", "erfc", "exp", "expand_dims", "expm1", "floor", "floor_divide", "greater", "greater_equal",
  "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or",
  "logical_xor", "matmul", "max", "maximum", "mean", "min", "minimum", "mod", "multiply", "negative", "not_equal",
  "ones", "ones_like", "prod", "reciprocal", "reshape", "rsqrt", "sigmoid", "sign", "sin", "sort", "sqrt", "square",
  "squeeze", "stack", "std", "subtract", "sum", "tan", "tanh", "tile", "top_k", "transpose", "unstack", "where",
  "zeros", "zeros_like", "relu", "elu", "selu", "gelu", "softplus", "log_sigmoid", "softmax", "logsumexp",
}
for _, name in ipairs(SAME) do M[name] = op(name) end

-- keras.ops' numpy names for tide's TF names, same meaning.
local RENAMED = { absolute = "abs", true_divide = "divide", power = "pow", arctan2 = "atan2" }
for k, v in pairs(RENAMED) do M[k] = op(v) end

local function flat(x) return shape_ops.reshape(x, { -1 }) end

-- keras.ops.concatenate(xs, axis=0): tf.concat with numpy's default axis.
function M.concatenate(xs, ...)
  local o = args.parse("concatenate", { "axis" }, ...)
  return shape_ops.concat(xs, o.axis == nil and 0 or o.axis)
end

-- keras.ops.clip(x, x_min, x_max)
function M.clip(x, lo, hi)
  if lo == nil or hi == nil then binding.error("clip: x_min and x_max are required") end
  return math_ops.clip_by_value(x, lo, hi)
end

-- keras.ops.arange(start, stop=None, step=1, dtype=None)
function M.arange(start, ...)
  local o = args.parse("arange", { "stop", "step", "dtype" }, ...)
  if o.stop == nil then return create_ops.range(start, { delta = o.step, dtype = o.dtype }) end
  return create_ops.range(start, o.stop, o.step or 1, o.dtype)
end

-- keras.ops.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0) (scalar ends)
function M.linspace(start, stop, ...)
  local o = args.parse("linspace", { "num", "endpoint", "retstep", "dtype", "axis" }, ...)
  local num = o.num == nil and 50 or o.num
  if type(num) ~= "number" or num < 0 or num % 1 ~= 0 then
    binding.error("linspace: num must be a whole number >= 0, got " .. tostring(num))
  end
  if o.axis ~= nil and o.axis ~= 0 and o.axis ~= -1 then binding.error("linspace: axis must be 0 for scalar ends") end
  local endpoint = o.endpoint ~= false
  local dtype = o.dtype or "float32"
  local step = endpoint and (num > 1 and (stop - start) / (num - 1) or 0) or (num > 0 and (stop - start) / num or 0)
  local r
  if endpoint then
    r = create_ops.linspace(start, stop, num, { dtype = dtype })
  else
    r = create_ops.linspace(start, start + step * (num - 1), num, { dtype = dtype })
  end
  if o.retstep then return r, step end
  return r
end

-- keras.ops.argmax/argmin(x, axis=None, keepdims=False): axis None is over the flattened tensor; int32 as Keras.
local function arg_reduce(name)
  local f = reduce_ops[name]
  return function(x, ...)
    local o = args.parse(name, { "axis", "keepdims" }, ...)
    local r
    if o.axis == nil then
      r = f(flat(x), 0)
      if o.keepdims then r = shape_ops.reshape(r, (function()
        local s = {}
        for i = 1, #x.shape do s[i] = 1 end
        return s
      end)()) end
    else
      r = f(x, o.axis)
      if o.keepdims then r = shape_ops.expand_dims(r, o.axis) end
    end
    return math_ops.cast(r, "int32")
  end
end
M.argmax = arg_reduce("argmax")
M.argmin = arg_reduce("argmin")

-- keras.ops.cumsum/cumprod(x, axis=None, dtype=None): axis None scans the flattened tensor.
local function scan(name)
  local f = reduce_ops[name]
  return function(x, ...)
    local o = args.parse(name, { "axis", "dtype" }, ...)
    if o.dtype ~= nil then x = math_ops.cast(x, o.dtype) end
    if o.axis == nil then return f(flat(x), 0) end
    return f(x, o.axis)
  end
end
M.cumsum = scan("cumsum")
M.cumprod = scan("cumprod")

-- keras.ops.one_hot(x, num_classes, axis=-1, dtype=None, sparse=False)
function M.one_hot(x, num_classes, ...)
  local o = args.parse("one_hot", { "axis", "dtype", "sparse" }, ...)
  if o.sparse then binding.error("one_hot: sparse = true is not supported (tide has no sparse one_hot)") end
  if type(num_classes) ~= "number" then binding.error("one_hot: num_classes must be a number") end
  return shape_ops.one_hot(x, num_classes, { axis = o.axis or -1, dtype = o.dtype or "float32" })
end

-- keras.ops.identity(n, dtype=None): the n x n identity matrix (numpy's); tide.identity stays tf.identity.
function M.identity(n, ...)
  local o = args.parse("identity", { "dtype" }, ...)
  return create_ops.eye(n, { dtype = o.dtype or "float32" })
end

-- keras.ops.take_along_axis(x, indices, axis=None): numpy's; negative indices count from the end, as Keras's
-- TF backend. Moves `axis` last, broadcasts the other dims, and gathers with batch_dims.
function M.take_along_axis(x, indices, ...)
  local o = args.parse("take_along_axis", { "axis" }, ...)
  if o.axis == nil then x, indices, o.axis = flat(x), flat(indices), 0 end
  local rank = #x.shape
  if #indices.shape ~= rank then
    binding.error(string.format("take_along_axis: x has rank %d, indices rank %d (they must be equal)",
      rank, #indices.shape))
  end
  local axis = o.axis < 0 and o.axis + rank or o.axis
  if axis < 0 or axis >= rank then binding.error("take_along_axis: axis " .. o.axis .. " out of range for rank " .. rank) end
  local perm = {}
  for i = 0, rank - 1 do if i ~= axis then perm[#perm + 1] = i end end
  perm[#perm + 1] = axis
  local inv = {}
  for i, p in ipairs(perm) do inv[p + 1] = i - 1 end
  local xt, it = shape_ops.transpose(x, perm), shape_ops.transpose(indices, perm)
  local n = xt.shape[rank]
  it = math_ops.where(math_ops.less(it, 0), math_ops.add(it, n), it)
  -- broadcast the leading dims of both to their common shape
  local xs, is = {}, {}
  for i = 1, rank - 1 do
    local a, b = xt.shape[i], it.shape[i]
    if a ~= b and a ~= 1 and b ~= 1 then
      binding.error(string.format("take_along_axis: dim %d of x (%d) and indices (%d) do not broadcast", perm[i], a, b))
    end
    local d = math.max(a, b)
    xs[i], is[i] = d, d
  end
  xs[rank], is[rank] = n, it.shape[rank]
  xt, it = shape_ops.broadcast_to(xt, xs), shape_ops.broadcast_to(it, is)
  local r = shape_ops.gather(xt, it, { axis = rank - 1, batch_dims = rank - 1 })
  return shape_ops.transpose(r, inv)
end

return M
