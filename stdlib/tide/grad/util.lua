-- stdlib/tide/grad/util.lua — helpers gradient functions share: summing a
-- broadcast gradient back to an input's shape, and dims known or not.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local C = binding.C

local M = {}

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

-- True when every dim of t is known (and its rank).
local function shape_known(t)
  if t.ndim < 0 then return false end
  for i = 0, t.ndim - 1 do
    if t.dims[i] < 0 then return false end
  end
  return true
end
M.shape_known = shape_known

local SUM_TO = C.TIDE_OP_SUM_TO

-- g summed over the dims that broadcasting added or stretched, so that it
-- has the shape of `like` (the input it is the gradient of). When a dim or a
-- rank is unknown until the graph runs (a None dim may be 1 and stretched
-- then), the SUM_TO op finds those dims when it runs (a view when there are none).
function M.unbroadcast(g, like)
  if not shape_known(g) or not shape_known(like) then
    return dispatch.run(SUM_TO, nil, { dispatch.promote(g), like }, 1)
  end
  if same_shape(g, like) then return g end -- the common case: no tables made
  local gd, ld = dims(g), dims(like)
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

-- True when every dim of the list is known (none is -1); false for nil (an unknown rank).
function M.all_known(d)
  if d == nil then return false end
  for i = 1, #d do if d[i] < 0 then return false end end
  return true
end

M.error = binding.error
return M
