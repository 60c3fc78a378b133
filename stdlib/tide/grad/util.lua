-- stdlib/tide/grad/util.lua — helpers gradient functions share: summing a
-- broadcast gradient back to an input's shape, and dims known or not.
local binding = require "tide.binding"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"

local M = {}

-- The dims of t as a Lua list.
local function dims(t)
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end
M.dims = dims

-- True when the tape needs the gradient of input x (needs nil: every input).
function M.needs(needs, x)
  return needs == nil or needs[x] == true
end

-- True when g and t have the same shape.
local function same_shape(g, t)
  if g.ndim ~= t.ndim then return false end
  for i = 0, g.ndim - 1 do
    if g.dims[i] ~= t.dims[i] then return false end
  end
  return true
end
M.same_shape = same_shape

-- g summed over the dims that broadcasting added or stretched, so that it
-- has the shape of `like` (the input it is the gradient of).
function M.unbroadcast(g, like)
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

-- True when every dim of the list is known (none is -1).
function M.all_known(d)
  for i = 1, #d do if d[i] < 0 then return false end end
  return true
end

M.error = binding.error
return M
