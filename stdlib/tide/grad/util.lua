-- stdlib/tide/grad/util.lua — helpers gradient functions share: summing a
-- broadcast gradient back to an input's shape, and dims known or not.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local C = binding.C

local M = {}

local SHAPE, RESHAPE, BROADCAST_TO, SUM_TO = C.TIDE_OP_SHAPE, C.TIDE_OP_RESHAPE, C.TIDE_OP_BROADCAST_TO,
  C.TIDE_OP_SUM_TO

-- The dims of t as a Lua list; nil when its rank is unknown (a traced
-- tensor of a TensorSpec of shape nil).
local function dims(t)
  if t.ndim < 0 then return nil end
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end
M.dims = dims

-- True when the tape needs the gradient of input x (needs nil: every input).
function M.needs(needs, x)
  return needs == nil or needs[x] == true
end

-- True when g and t have the same shape (as their descriptors say: an
-- unknown dim equals an unknown one; never for an unknown rank).
local function same_shape(g, t)
  if g.ndim ~= t.ndim or g.ndim < 0 then return false end
  for i = 0, g.ndim - 1 do
    if g.dims[i] ~= t.dims[i] then return false end
  end
  return true
end
M.same_shape = same_shape

-- True when every dim of the list is known (none is -1); false for nil (an unknown rank).
local function all_known(d)
  if d == nil then return false end
  for i = 1, #d do if d[i] < 0 then return false end end
  return true
end
M.all_known = all_known

-- True when every dim of t is known (and its rank).
function M.shape_known(t) return all_known(dims(t)) end

-- Run `op` (reshape, broadcast_to or sum_to: ops that take a shape) on t with
-- x's shape: x's dims when all are known; else tide.shape(x), read when the
-- graph runs, with the dims known now in the attrs (so the result is as
-- well shaped as x while tracing, and the run checks them), or none when
-- x's rank is unknown.
local function to_shape_of(op, t, x)
  local d = dims(x)
  local s
  if not all_known(d) then
    local sa = dispatch.attrs()
    sa.dtype = C.TIDE_INT64
    s = dispatch.run1(SHAPE, sa, x)
  end
  local a = dispatch.attrs()
  if d then dispatch.set_ints(a, d, "gradient") end
  dispatch.promote(t) -- a view shares t's storage
  if s then return dispatch.run(op, a, { t, s }, 1) end
  return dispatch.run1(op, a, t)
end

-- x's dim i (0-based) as a Lua number when known, else as a 0-d int64
-- tensor read when the graph runs.
function M.dim(x, i)
  local d = tonumber(x.dims[i])
  if d >= 0 then return d end
  local sa = dispatch.attrs()
  sa.dtype = C.TIDE_INT64
  return dispatch.run1(SHAPE, sa, x)[i]
end

-- t reshaped to `parts`, a list of dims: Lua numbers, or 0-d int64 tensors
-- (M.dim's) known when the graph runs, the result's other dims kept as known.
function M.reshape_to(t, parts)
  local known, values = {}, nil
  for i, p in ipairs(parts) do
    if type(p) == "number" then known[i] = p
    else known[i], values = -1, values or {} end
  end
  if not values then return shape.reshape(t, known) end
  for i, p in ipairs(parts) do values[i] = type(p) == "number" and convert.tensor(p, "int64") or p end
  local s = shape.stack(values)
  local a = dispatch.attrs()
  dispatch.set_ints(a, known, "gradient")
  return dispatch.run(RESHAPE, a, { dispatch.promote(t), s }, 1)
end

-- g in x's shape (the same elements): reshape.
function M.reshape_like(g, x) return to_shape_of(RESHAPE, g, x) end

-- g broadcast to x's shape (a view).
function M.broadcast_like(g, x) return to_shape_of(BROADCAST_TO, g, x) end

-- g summed over the dims that broadcasting added or stretched, so that it
-- has the shape of `like` (the input it is the gradient of). Where like's
-- dims are all known this is decided now; an unknown (None) dim of like may
-- be 1 (summed) or g's (kept) at run time, and so may any dim when g's or
-- like's rank is unknown, so then sum_to decides when the graph runs (TF's
-- BroadcastGradientArgs), and is a view when nothing is summed.
function M.unbroadcast(g, like)
  if same_shape(g, like) and like.nelem >= 0 then return g end -- the common case: no tables made
  local gd, ld = dims(g), dims(like)
  if gd == nil or not all_known(ld) then return to_shape_of(SUM_TO, g, like) end
  local off = #gd - #ld
  local axes = {}
  for i = 1, #gd do
    local li = i - off
    if li < 1 or (ld[li] == 1 and gd[i] ~= 1) then axes[#axes + 1] = i - 1 end
  end
  if #axes == 0 then
    if #gd == #ld then return g end
    return shape.reshape(g, ld)
  end
  local s = reduce.reduce_sum(g, axes, true)
  return shape.reshape(s, ld)
end

M.error = binding.error
return M
