-- stdlib/tide/grad/shape.lua — gradients of the view and shape ops of
-- ops/shape.lua (reshape, transpose, concat, tile, pad, reverse, gather, ...),
-- as TF's array_grad.py computes them: each moves the output gradient back
-- into the input's layout. split, unstack and stack need none of their own:
-- they are slices, expand_dims and concat.
local grad = require "tide.grad.registry"
local util = require "tide.grad.util"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local scatter = require "tide.ops.scatter"
local tensor = require "tide.tensor"
local m = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"
local convert = require "tide.convert"
local unpack = unpack or table.unpack

local reg, dims = grad.register, util.dims

-- A Lua list of integers as a 1-D int32 tensor.
local function tide_int32(list) return convert.tensor(list, "int32") end

-- reshape, squeeze, expand_dims: the same elements in the input's shape
-- (with None dims, its shape when the graph runs).
local function back_to_input_shape(node, dys)
  return util.reshape_like(dys[1], node.inputs[1])
end
reg("reshape", back_to_input_shape)
reg("squeeze", back_to_input_shape)
reg("expand_dims", back_to_input_shape)

-- transpose: the inverse permutation (the reverse of all dims is its own;
-- a perm names the rank even when the input's is unknown).
reg("transpose", function(node, dys)
  local a, nd = node.attrs, node.inputs[1].ndim
  local perm = {}
  if a.nints == 0 then
    return shape.transpose(dys[1])
  else
    nd = a.nints
    for i = 0, nd - 1 do
      local p = tonumber(a.ints[i])
      perm[i + 1] = p < 0 and p + nd or p
    end
  end
  local inverse = {}
  for i, p in ipairs(perm) do inverse[p + 1] = i - 1 end
  return shape.transpose(dys[1], inverse)
end)

-- broadcast_to: sum over the broadcast dims.
reg("broadcast_to", function(node, dys)
  return util.unbroadcast(dys[1], node.inputs[1])
end)

-- sum_to (the gradients' unbroadcast with None dims): its transpose, broadcast_to.
reg("sum_to", function(node, dys)
  return util.broadcast_like(dys[1], node.inputs[1])
end)

---------------------------------------------------------------------------
-- Ops that copy
---------------------------------------------------------------------------

-- copy (tide.contiguous): dy as it is.
reg("copy", function(_, dys) return dys[1] end)

-- concat: each input gets its slab of dy along the axis: a view when the
-- sizes along it are known while tracing, else a gather of the positions
-- each input held, counted when the graph runs.
reg("concat", function(node, dys)
  local inputs = node.inputs
  if #inputs == 1 then return dys[1] end
  local nd, ax = -1, node.attrs.axis
  for _, x in ipairs(inputs) do if x.ndim >= 0 then nd = x.ndim end end
  if ax < 0 and nd >= 0 then ax = ax + nd end
  local sizes, known = {}, nd >= 0 and ax >= 0
  for i, x in ipairs(inputs) do
    sizes[i] = x.ndim >= 0 and tonumber(x.dims[ax]) or -1
    known = known and sizes[i] >= 0
  end
  if known then return unpack(shape.split(dys[1], sizes, ax)) end
  local out, start = {}, nil
  for i, x in ipairs(inputs) do
    local n = dynamic_shape.size_along(x, ax)            -- a 0-d int32 tensor
    local idx = m.sub(reduce.cumsum(create.ones(shape.reshape(n, { 1 }), { dtype = "int32" })), 1)
    if start then idx = m.add(idx, start) end
    out[i] = shape.gather(dys[1], idx, { axis = ax })
    start = start and m.add(start, n) or n
  end
  return unpack(out, 1, #inputs)
end)

-- tile: dy viewed as [m0, d0, m1, d1, ...] and summed over the multiples
-- (TF's _TileGrad); dims tiled once are left whole. None dims of x are read
-- when the graph runs.
reg("tile", function(node, dys)
  local x, a = node.inputs[1], node.attrs
  local d = dims(x)
  if not d then -- x's rank comes when the graph runs: [m0, d0, m1, d1, ...] then (TF's _TileGrad)
    local mult, axes = {}, {}
    for i = 0, a.nints - 1 do
      mult[i + 1] = tonumber(a.ints[i])
      axes[i + 1] = 2 * i
    end
    if #mult == 0 then return dys[1] end
    local pairs_ = shape.stack({ tide_int32(mult), dynamic_shape.shape(x) }, 1)
    return reduce.reduce_sum(shape.reshape(dys[1], shape.reshape(pairs_, { -1 })), axes)
  end
  local split_dims, axes = {}, {}
  for i = 0, x.ndim - 1 do
    local copies = tonumber(a.ints[i])
    if copies ~= 1 then
      axes[#axes + 1] = #split_dims
      split_dims[#split_dims + 1] = copies
    end
    split_dims[#split_dims + 1] = util.dim(x, i)
  end
  if #axes == 0 then return dys[1] end
  return reduce.reduce_sum(util.reshape_to(dys[1], split_dims), axes)
end)

-- pad (CONSTANT; the mirror modes are gathers): the slice of dy that holds x,
-- its end counted from dy's end (so x's dims need not be known).
reg("pad", function(node, dys)
  local a = node.attrs
  local spec = {}
  for i = 0, a.nints / 2 - 1 do
    local before, after = tonumber(a.ints[2 * i]), tonumber(a.ints[2 * i + 1])
    spec[i + 1] = { before, after > 0 and -after or nil }
  end
  return tensor.slice(dys[1], spec)
end)

-- reverse: dy reversed along the same axes.
reg("reverse", function(node, dys)
  local a = node.attrs
  local axes = {}
  for i = 0, a.nints - 1 do axes[i + 1] = tonumber(a.ints[i]) end
  return shape.reverse(dys[1], { axis = axes })   -- a bare {} would read as options
end)

-- gather: dy added into zeros shaped like params at the gathered positions
-- (TF returns IndexedSlices for axis 0; tide's gradients are dense tensors).
-- Repeated indices accumulate. Indices get none.
reg("gather", function(node, dys)
  local params, indices = node.inputs[1], node.inputs[2]
  local a = node.attrs
  return scatter.scatter_add(create.zeros_like(params), indices, dys[1], { axis = a.axis, batch_dims = tonumber(a.n) })
end)

return {}
