-- stdlib/tide/layers/dims.lua — shape helpers the layer families share: a dim
-- known now (a number) or only when a traced graph runs (a 0-d int32 tensor,
-- which tide.reshape takes in its list), repeating along an axis, channels_first <-> last.
local shape_ops = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"

local M = {}

-- x's dim `axis` (0-based, negative from the end): a number when known, else
-- a 0-d int32 tensor read from tide.shape(x) when the graph runs.
function M.dim(x, axis)
  local n = x.ndim
  local a = axis < 0 and axis + n or axis
  local d = x.dims[a]
  if d >= 0 then return tonumber(d) end
  return dynamic_shape.size_along(x, a)
end

-- x's dims as a list of M.dim's values.
function M.dims(x)
  local out = {}
  for i = 0, x.ndim - 1 do out[i + 1] = M.dim(x, i) end
  return out
end

-- x with each element repeated `times` times in place along axis (0-based),
-- as numpy's repeat (UpSampling's nearest neighbour).
function M.repeat_axis(x, axis, times)
  if times == 1 then return x end
  local n = x.ndim
  local dims = M.dims(x)
  local multiples = {}
  for i = 1, n + 1 do multiples[i] = 1 end
  multiples[axis + 2] = times
  local y = shape_ops.tile(shape_ops.expand_dims(x, axis + 1), multiples)
  dims[axis + 1] = dims[axis + 1] * times
  return shape_ops.reshape(y, dims) -- (dims may hold 0-d tensors: tide.reshape packs them)
end

-- Permutations between channels_first [B, C, d1.., dk] and channels_last [B, d1.., dk, C].
function M.to_channels_last(x)
  local n = x.ndim
  local perm = { 0 }
  for i = 2, n - 1 do perm[#perm + 1] = i end
  perm[#perm + 1] = 1
  return shape_ops.transpose(x, perm)
end
function M.to_channels_first(x)
  local n = x.ndim
  local perm = { 0, n - 1 }
  for i = 1, n - 2 do perm[#perm + 1] = i end
  return shape_ops.transpose(x, perm)
end

return M
