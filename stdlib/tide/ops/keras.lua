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
local dyn = require "tide.ops.dynamic_shape"

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
local RENAMED = { absolute = "abs", true_divide = "divide", power = "pow", arctan2 = "atan2", var = "reduce_variance",
  amax = "max", amin = "min", average = "mean" }
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

-- keras.ops' linspace, argmax and argmin live with their families (keras_array, keras_reduce).
local FAMILIES = { require "tide.ops.keras_math", require "tide.ops.keras_reduce", require "tide.ops.keras_array",
  require "tide.ops.keras_index", require "tide.ops.keras_linalg", require "tide.ops.keras_nn",
  require "tide.ops.keras_spatial", require "tide.ops.keras_signal" }
for _, fam in ipairs(FAMILIES) do
  for k, v in pairs(fam) do M[k] = v end
end

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
  local xd, id = dyn.dims_of(x), dyn.dims_of(indices)
  local rank = #xd
  if #id ~= rank then
    binding.error(string.format("take_along_axis: x has rank %d, indices rank %d (they must be equal)",
      rank, #id))
  end
  local axis = o.axis < 0 and o.axis + rank or o.axis
  if axis < 0 or axis >= rank then binding.error("take_along_axis: axis " .. o.axis .. " out of range for rank " .. rank) end
  local perm = {}
  for i = 0, rank - 1 do if i ~= axis then perm[#perm + 1] = i end end
  perm[#perm + 1] = axis
  local inv = {}
  for i, p in ipairs(perm) do inv[p + 1] = i - 1 end
  local xt, it = shape_ops.transpose(x, perm), shape_ops.transpose(indices, perm)
  -- negative indices count from the end (the axis' size read when the graph runs where it is unknown)
  local n = math_ops.cast(dyn.size_along(xt, -1), it.dtype)
  it = math_ops.where(math_ops.less(it, 0), math_ops.add(it, n), it)
  -- broadcast the leading dims of both to their common shape (known dims only: unknown ones must agree)
  local xs, is, need = {}, {}, false
  for i = 1, rank - 1 do
    local a, b = xd[perm[i] + 1], id[perm[i] + 1]
    if a >= 0 and b >= 0 and a ~= b then
      if a ~= 1 and b ~= 1 then
        binding.error(string.format("take_along_axis: dim %d of x (%d) and indices (%d) do not broadcast",
          perm[i], a, b))
      end
      need = true
    end
    local d = math.max(a, b)
    xs[i], is[i] = d, d
  end
  if need then
    xs[rank], is[rank] = xd[axis + 1], id[axis + 1]
    xt, it = shape_ops.broadcast_to(xt, xs), shape_ops.broadcast_to(it, is)
  end
  local r = shape_ops.gather(xt, it, { axis = rank - 1, batch_dims = rank - 1 })
  return shape_ops.transpose(r, inv)
end

-- Small numpy-style compositions (docs/architecture.md's composite-op recipe: tide ops only, so gradients,
-- tracing and every backend come with them).
local function float_of(x) return math_ops.cast(x, x.dtype:match("^float") and x.dtype or "float32") end
local LN2, LN10 = math.log(2), math.log(10)

-- keras.ops.count_nonzero(x, axis=None): int32, as Keras's TF backend (tf.math.count_nonzero gives int64).
function M.count_nonzero(x, ...)
  local o = args.parse("count_nonzero", { "axis" }, ...)
  return math_ops.cast(reduce_ops.count_nonzero(x, o.axis), "int32")
end

function M.ravel(x) return flat(x) end
function M.ndim(x) return #x.shape end
function M.log2(x) x = float_of(x) return math_ops.div(math_ops.log(x), LN2) end
function M.log10(x) x = float_of(x) return math_ops.div(math_ops.log(x), LN10) end
function M.exp2(x) x = float_of(x) return math_ops.exp(math_ops.mul(x, LN2)) end
function M.deg2rad(x) x = float_of(x) return math_ops.mul(x, math.pi / 180) end
function M.rad2deg(x) x = float_of(x) return math_ops.mul(x, 180 / math.pi) end
function M.hypot(a, b) return math_ops.sqrt(math_ops.add(math_ops.square(a), math_ops.square(b))) end
-- log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|))
function M.logaddexp(a, b)
  return math_ops.add(math_ops.maximum(a, b), math_ops.log1p(math_ops.exp(math_ops.neg(math_ops.abs(
    math_ops.sub(a, b))))))
end
function M.silu(x) return math_ops.mul(x, math_ops.sigmoid(x)) end
M.swish = M.silu
function M.relu6(x) return math_ops.clip_by_value(x, 0, 6) end
-- Keras 3's hard_sigmoid: relu6(x + 3) / 6
function M.hard_sigmoid(x) return math_ops.div(math_ops.clip_by_value(math_ops.add(x, 3), 0, 6), 6) end
function M.softsign(x) return math_ops.div(x, math_ops.add(math_ops.abs(x), 1)) end
function M.log_softmax(x, ...)
  local o = args.parse("log_softmax", { "axis" }, ...)
  return nn_ops.log_softmax(x, o.axis == nil and -1 or o.axis)
end
function M.trunc(x)
  if not x.dtype:match("^float") then return x end
  return math_ops.mul(math_ops.sign(x), math_ops.floor(math_ops.abs(x)))
end

-- keras.ops.swapaxes(x, axis1, axis2) and moveaxis(x, source, destination) (single axes)
local function norm_axis(name, a, rank)
  if type(a) ~= "number" or a % 1 ~= 0 or a < -rank or a >= rank then
    binding.error(string.format("%s: axis %s out of range for rank %d", name, tostring(a), rank))
  end
  return a < 0 and a + rank or a
end
function M.swapaxes(x, a1, a2)
  local rank = #x.shape
  a1, a2 = norm_axis("swapaxes", a1, rank), norm_axis("swapaxes", a2, rank)
  local perm = {}
  for i = 0, rank - 1 do perm[i + 1] = i end
  perm[a1 + 1], perm[a2 + 1] = a2, a1
  return shape_ops.transpose(x, perm)
end
function M.moveaxis(x, src, dst)
  local rank = #x.shape
  src, dst = norm_axis("moveaxis", src, rank), norm_axis("moveaxis", dst, rank)
  local rest = {}
  for i = 0, rank - 1 do if i ~= src then rest[#rest + 1] = i end end
  table.insert(rest, dst + 1, src)
  return shape_ops.transpose(x, rest)
end

-- keras.ops.flip(x, axis=None): every axis when none is given.
function M.flip(x, ...)
  local o = args.parse("flip", { "axis" }, ...)
  local axes = o.axis
  if axes == nil then
    axes = {}
    for i = 0, #x.shape - 1 do axes[#axes + 1] = i end
  elseif type(axes) == "number" then axes = { axes } end
  return shape_ops.reverse(x, axes)
end

-- keras.ops.full(shape, fill_value, dtype=None) and full_like(x, fill_value, dtype=None)
function M.full(shape, value, ...)
  local o = args.parse("full", { "dtype" }, ...)
  local t = create_ops.fill(shape, value)
  if o.dtype ~= nil then t = math_ops.cast(t, o.dtype) end
  return t
end
function M.full_like(x, value, ...)
  local o = args.parse("full_like", { "dtype" }, ...)
  return math_ops.cast(create_ops.fill(x.shape:as_list(), value), o.dtype or x.dtype)
end

-- keras.ops.ctc_loss and ctc_decode (ops/ctc_keras.lua).
M.ctc_loss = require("tide.ops.ctc_keras").ctc_loss
M.ctc_decode = require("tide.ops.ctc_keras").ctc_decode

-- keras.ops.outer(x1, x2): the flattened inputs' outer product.
function M.outer(a, b)
  return math_ops.mul(shape_ops.reshape(a, { -1, 1 }), shape_ops.reshape(b, { 1, -1 }))
end

-- Keras 3's activation ops (keras.ops.celu, glu, sparsemax, ...): ops/activations.lua, and the kernels without a
-- parameter (sparse_plus, sparse_sigmoid, hard_tanh, tanh_shrink) from the registry.
do
  local act = require "tide.ops.activations"
  for _, name in ipairs { "celu", "glu", "hard_shrink", "soft_shrink", "sparsemax", "squareplus", "threshold" } do
    M[name] = act[name]
  end
  for _, name in ipairs { "sparse_plus", "sparse_sigmoid", "hard_tanh", "tanh_shrink" } do M[name] = math_ops[name] end
end

return M
