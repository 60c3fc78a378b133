-- stdlib/tide/grad/segment.lua — gradients of the segment reductions, as TF's
-- math_grad.py writes them: each segment's gradient gathered back to its rows.
local grad = require "tide.grad.registry"
local m = require "tide.ops.math"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local seg = require "tide.ops.segment"
local dtype = require "tide.dtype"
local dynamic_shape = require "tide.ops.dynamic_shape"

local reg = grad.register

-- mask (shaped like ids) with size-1 dims appended to broadcast against
-- `like` (ids' dims may be unknown: expand_dims keeps them; when a rank is
-- unknown, the ones are counted when the graph runs).
local function broadcastable(mask, like)
  if mask.ndim < 0 or like.ndim < 0 then
    local extra = m.sub(dynamic_shape.rank(like), dynamic_shape.rank(mask))
    local ones = create.ones(shape.reshape(extra, { 1 }), { dtype = "int32" })
    return shape.reshape(mask, shape.concat({ dynamic_shape.shape(mask), ones }, 0))
  end
  for _ = mask.ndim + 1, like.ndim do mask = shape.expand_dims(mask, -1) end
  return mask
end

-- TF's _GatherDropNegatives: params gathered at ids, with 0 where an id is
-- negative (an unsorted op dropped that row). Gives the gathered values, the
-- clipped ids and the mask of kept rows (broadcastable against the values).
local function gather_drop_negatives(params, ids, clipped, kept)
  clipped = clipped or m.maximum(ids, 0)
  local gathered = shape.gather(params, clipped)
  kept = kept or broadcastable(m.greater_equal(ids, 0), gathered)
  return m.where(kept, gathered, 0), clipped, kept
end

-- ---- sorted ids ------------------------------------------------------------------

-- segment_sum: each row gets its segment's gradient.
reg("segment_sum", function(node, dys)
  return shape.gather(dys[1], node.inputs[2])
end)

-- segment_mean: each row gets its segment's gradient over the segment's size.
reg("segment_mean", function(node, dys)
  local x, ids, dy = node.inputs[1], node.inputs[2], dys[1]
  local ones = create.ones_like(ids, { dtype = dtype.names[dy.dt] })
  local count = broadcastable(seg.segment_sum(ones, ids), x)
  return shape.gather(m.div(dy, count), ids)
end)

-- segment_max/min (sorted or unsorted): the gradient goes to the rows equal
-- to the result, split evenly among ties.
local function min_or_max(sorted)
  return function(node, dys)
    local x, ids, y, dy = node.inputs[1], node.inputs[2], node.outputs[1], dys[1]
    local picked, clipped, kept
    if sorted then picked = shape.gather(y, ids)
    else picked, clipped, kept = gather_drop_negatives(y, ids) end
    local selected = m.equal(x, picked)
    if not sorted then selected = m.logical_and(selected, kept) end
    local ones = m.cast(selected, dtype.names[dy.dt])
    local count = sorted and seg.segment_sum(ones, ids) or seg.unsorted_segment_sum(ones, ids, node.inputs[3])
    local share = m.div(dy, count)
    local spread = sorted and shape.gather(share, ids) or gather_drop_negatives(share, ids, clipped, kept)
    return m.where(selected, spread, 0)
  end
end
reg("segment_max", min_or_max(true))
reg("segment_min", min_or_max(true))
reg("unsorted_segment_max", min_or_max(false))
reg("unsorted_segment_min", min_or_max(false))

-- segment_prod (sorted or unsorted): the segment's product over the row,
-- computed without dividing by zero: a segment with one zero gives that row
-- the product of the others (and the rest 0), one with two zeros gives 0.
local function prod(sorted)
  return function(node, dys)
    local x, ids, y, dy = node.inputs[1], node.inputs[2], node.outputs[1], dys[1]
    local n = node.inputs[3]
    local function seg_sum(v) return sorted and seg.segment_sum(v, ids) or seg.unsorted_segment_sum(v, ids, n) end
    local function seg_prod(v) return sorted and seg.segment_prod(v, ids) or seg.unsorted_segment_prod(v, ids, n) end
    local is_zero = m.equal(x, 0)
    local zeros = seg_sum(m.cast(is_zero, "int32"))
    dy = m.where(m.greater(zeros, 1), 0, dy)
    local nonzero_x = m.where(is_zero, 1, x)
    local nonzero_prod = seg_prod(nonzero_x)
    local clipped = sorted and ids or m.maximum(ids, 0)
    -- divided by nonzero_x (as TF's sorted form; its unsorted one divides by x
    -- and selects the inf away): the same values, and no inf for a second derivative
    local others = m.where(is_zero, shape.gather(nonzero_prod, clipped), m.div(shape.gather(y, clipped), nonzero_x))
    local spread = sorted and shape.gather(dy, ids) or gather_drop_negatives(dy, ids, clipped)
    return m.mul(spread, others)
  end
end
reg("segment_prod", prod(true))
reg("unsorted_segment_prod", prod(false))

-- unsorted_segment_sum: each kept row gets its segment's gradient, dropped rows 0.
reg("unsorted_segment_sum", function(node, dys)
  return (gather_drop_negatives(dys[1], node.inputs[2]))
end)

return {}
