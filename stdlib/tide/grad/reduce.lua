-- stdlib/tide/grad/reduce.lua — gradients of the ops of ops/reduce.lua:
-- reductions and scans (the output gradient broadcast back over the reduced
-- axes, TF's math_grad.py), and sort and top_k values (scattered back).
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local m = require "tide.ops.math"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local dynamic_shape = require "tide.ops.dynamic_shape"
local create = require "tide.ops.create"
local scatter = require "tide.ops.scatter"
local dtype = require "tide.dtype"
local binding = require "tide.binding"
local C = binding.C

local reg = grad.register

-- The reduced axes of a reduction node (0-based, non-negative).
local function reduced_axes(node)
  local x, a = node.inputs[1], node.attrs
  local nd = x.ndim
  local axes = {}
  if a.nints == 0 then
    for i = 0, nd - 1 do axes[#axes + 1] = i end
  else
    for i = 0, a.nints - 1 do
      local ax = tonumber(a.ints[i])
      axes[#axes + 1] = ax < 0 and ax + nd or ax
    end
  end
  return axes
end

-- The node's axes as given (nil: all), for reductions that run on x's
-- rank when the graph runs (an unknown rank normalizes them then).
local function axes_as_given(node)
  local a = node.attrs
  if a.nints == 0 then return nil end
  local axes = {}
  for i = 0, a.nints - 1 do axes[i + 1] = tonumber(a.ints[i]) end
  return axes
end

-- dy (shaped like the reduction's output) with the reduced axes put back as
-- size-1 dims, ready to broadcast against the input.
local function keepdims_view(node, dy)
  if bit.band(node.attrs.flags, C.TIDE_ATTR_KEEPDIMS) ~= 0 then return dy end
  local x = node.inputs[1]
  if x.ndim < 0 then -- an unknown rank: a full reduction's scalar broadcasts as it is, else TF's ReducedShape
    local axes = axes_as_given(node)
    if axes == nil then return dy end
    return shape.reshape(dy, dynamic_shape.reduced_shape(x, axes))
  end
  local dims = util.dims(x)
  if not util.all_known(dims) then -- a reshape could not name the unknown dims: put the axes back one by one
    local axes = reduced_axes(node)
    table.sort(axes)
    for _, ax in ipairs(axes) do dy = shape.expand_dims(dy, ax) end
    return dy
  end
  for _, ax in ipairs(reduced_axes(node)) do dims[ax + 1] = 1 end
  return shape.reshape(dy, dims)
end

-- The number of elements each output summarizes (at least 1): a Lua number,
-- or, when a reduced dim or the rank is unknown until the graph runs, a 0-d
-- tensor of dtype dt: size(x) / size(y), as TF's _safe_shape_div.
local function count(node, dt)
  local x = node.inputs[1]
  local n = 1
  if x.ndim >= 0 then
    for _, ax in ipairs(reduced_axes(node)) do
      local d = tonumber(x.dims[ax])
      if d < 0 then n = nil break end
      n = n * d
    end
    if n then return math.max(n, 1) end
  end
  local nx = dynamic_shape.num_elements(x, "int64")
  local ny = m.maximum(dynamic_shape.num_elements(node.outputs[1], "int64"), 1)
  return m.cast(m.floordiv(nx, ny), dtype.names[dt])
end

-- dy broadcast back to the input's shape (a 0-d input's dy is already its
-- shape; with None dims, x's shape when the graph runs).
local function expand(node, dy)
  local x = node.inputs[1]
  if x.ndim == 0 then return dy end
  return util.broadcast_like(keepdims_view(node, dy), x)
end

reg("sum", function(node, dys)
  return expand(node, dys[1])
end)

reg("mean", function(node, dys)
  return m.div(expand(node, dys[1]), count(node, dys[1].dt))
end)

-- max/min: the gradient is shared equally by the elements equal to the
-- result (TF's _MinOrMaxGrad: with ties, each of the k equal elements gets
-- dy / k, so the total is dy; PyTorch instead gives it all to one element).
local function min_or_max(node, dys)
  local x = node.inputs[1]
  local y = keepdims_view(node, node.outputs[1])
  local dy = keepdims_view(node, dys[1])
  local hit = m.cast(m.equal(x, y), dtype.names[x.dt])
  local axes -- nil: all of an unknown rank
  if x.ndim >= 0 then axes = reduced_axes(node) else axes = axes_as_given(node) end
  local n = reduce.reduce_sum(hit, axes, true)
  return m.mul(m.div(hit, n), dy)
end
reg("max", min_or_max)
reg("min", min_or_max)

-- prod: dy times the product of every other element of the reduced group,
-- made of an exclusive cumprod from each side so that zeros work (TF's
-- _ProdGrad): the reduced axes move to the front and flatten into one.
reg("prod", function(node, dys)
  local x = node.inputs[1]
  if x.ndim < 0 then
    util.error("GradientTape:gradient: reduce_prod's gradient moves the reduced axes to the front, which needs " ..
      "the input's rank while tracing; it is unknown (a TensorSpec of shape nil): give the input_signature a rank")
  end
  local g = expand(node, dys[1])
  local axes = reduced_axes(node)
  if #axes == 0 then return g end -- a 0-d input: prod(x) = x
  local nd, xd = x.ndim, util.dims(x)
  local is_reduced, perm = {}, {}
  -- the sizes of the two groups; -1 when a None dim is in it
  local rn, on = 1, 1
  local function times(n, d) return (n < 0 or d < 0) and -1 or n * d end
  for _, ax in ipairs(axes) do
    if not is_reduced[ax] then
      is_reduced[ax] = true
      perm[#perm + 1] = ax
      rn = times(rn, xd[ax + 1])
    end
  end
  local k = #perm
  for d = 0, nd - 1 do
    if not is_reduced[d] then
      perm[#perm + 1] = d
      on = times(on, xd[d + 1])
    end
  end
  local permuted = shape.transpose(x, perm)
  local flat
  if rn >= 0 or on >= 0 then -- one -1 is enough for reshape
    flat = shape.reshape(permuted, { rn, on })
  else -- None dims on both sides: the two products when the graph runs
    local s = dynamic_shape.shape(permuted)
    flat = shape.reshape(permuted, shape.stack { reduce.reduce_prod(s:slice { { 0, k } }),
      reduce.reduce_prod(s:slice { { k, nd } }) })
  end
  local left = reduce.cumprod(flat, 0, true, false)
  local right = reduce.cumprod(flat, 0, true, true)
  local others = util.reshape_like(m.mul(left, right), permuted)
  local inverse = {}
  for i, p in ipairs(perm) do inverse[p + 1] = i - 1 end
  return m.mul(g, shape.transpose(others, inverse))
end)

-- cumsum: a cumsum of dy the other way, with the same exclusive flag (TF's _CumsumGrad).
reg("cumsum", function(node, dys)
  local a = node.attrs
  local exclusive = bit.band(a.flags, C.TIDE_ATTR_EXCLUSIVE) ~= 0
  local reverse = bit.band(a.flags, C.TIDE_ATTR_REVERSE) ~= 0
  return reduce.cumsum(dys[1], a.axis, exclusive, not reverse)
end)

-- cumprod: cumsum(y * dy) the other way, divided by x (TF's _CumprodGrad,
-- with its div_no_nan). The caveat TF notes: an element equal to 0 gets 0,
-- which is wrong when it is the only zero in its products (the true value is
-- the product of the others); every other element's gradient is right.
-- reduce_prod's gradient has no such caveat.
reg("cumprod", function(node, dys)
  local a = node.attrs
  local x, y = node.inputs[1], node.outputs[1]
  local exclusive = bit.band(a.flags, C.TIDE_ATTR_EXCLUSIVE) ~= 0
  local reverse = bit.band(a.flags, C.TIDE_ATTR_REVERSE) ~= 0
  local out = reduce.cumsum(m.mul(y, dys[1]), a.axis, exclusive, not reverse)
  local zero = m.equal(x, 0)
  return m.where(zero, 0, m.div(out, m.where(zero, 1, x)))
end)

-- cumulative_logsumexp: dx_i = sum over the y_j that include x_i of
-- dy_j exp(x_i - y_j), as TF's _CumulativeLogsumexpGrad computes it: a
-- cumulative_logsumexp the other way of log|dy| - y, split by the sign of dy
-- so the logs exist. Where y is -inf (every term so far -inf) it reads 0:
-- those outputs reach only x that are -inf, whose terms are then 0, where
-- TF's give NaN (-inf - -inf).
reg("cumulative_logsumexp", function(node, dys)
  local a = node.attrs
  local x, y, dy = node.inputs[1], node.outputs[1], dys[1]
  local exclusive = bit.band(a.flags, C.TIDE_ATTR_EXCLUSIVE) ~= 0
  local reverse = bit.band(a.flags, C.TIDE_ATTR_REVERSE) ~= 0
  local ysafe = m.where(m.equal(y, -math.huge), 0, y)
  local function part(mask, magnitude)
    local logg = m.where(mask, m.log(m.where(mask, magnitude, 1)), -math.huge)
    local s = reduce.cumulative_logsumexp(m.sub(logg, ysafe), a.axis, exclusive, not reverse)
    return m.exp(m.add(s, x))
  end
  return m.sub(part(m.greater(dy, 0), dy), part(m.less(dy, 0), m.neg(dy)))
end)

---------------------------------------------------------------------------
-- sort and top_k values: the gradient goes back to where each value came from
---------------------------------------------------------------------------

-- dy's values scattered along the last axis of zeros shaped like x, at the
-- positions idx (an int tensor shaped like dy) says they came from.
local function scatter_last(x, idx, dy)
  local nd = x.ndim
  if nd < 0 then -- an unknown rank: counted from the end (batch_dims from indices' rank, axis from x's)
    return scatter.scatter_add(create.zeros_like(x), idx, dy, { axis = -1, batch_dims = -1 })
  end
  return scatter.scatter_add(create.zeros_like(x), idx, dy, { axis = nd - 1, batch_dims = nd - 1 })
end

-- top_k values: scattered back into zeros along the last axis (TF's _TopKGrad).
-- The indices output gets no gradient (it is int32).
reg("top_k", function(node, dys)
  if dys[1] == nil then return nil end
  return scatter_last(node.inputs[1], node.outputs[2], dys[1])
end)

-- sort: dy goes back through the sorting permutation, which argsort gives
-- (both sorts are stable, so ties map as the forward sort placed them). TF
-- sorts with top_k and inherits its gradient; this is the same map. A sort
-- along another axis moves that axis last and back (transpose views).
reg("sort", function(node, dys)
  local x, dy = node.inputs[1], dys[1]
  local a = node.attrs
  local nd = x.ndim
  if nd == 0 then return dy end
  local dir = bit.band(a.flags, C.TIDE_ATTR_DESCENDING) ~= 0 and "DESCENDING" or "ASCENDING"
  if nd < 0 then
    if a.axis ~= -1 then
      util.error("GradientTape:gradient: sort's gradient along an axis other than -1 moves that axis last, " ..
        "which needs the input's rank while tracing; it is unknown (a TensorSpec of shape nil)")
    end
    return scatter_last(x, reduce.argsort(x, -1, dir), dy)
  end
  local ax = a.axis < 0 and a.axis + nd or a.axis
  local perm = reduce.argsort(x, ax, dir)
  if ax == nd - 1 then return scatter_last(x, perm, dy) end
  local swap = {}
  for d = 1, nd do swap[d] = d - 1 end
  swap[ax + 1], swap[nd] = nd - 1, ax
  local g = scatter_last(shape.transpose(x, swap), shape.transpose(perm, swap), shape.transpose(dy, swap))
  return shape.transpose(g, swap)
end)

return {}
