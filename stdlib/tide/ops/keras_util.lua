-- stdlib/tide/ops/keras_util.lua — helpers the tide.ops (keras.ops) family files share: numpy-style axis
-- checks, flattening, float promotion (Keras's: integers become float32) and the tide-op lookup for aliases.
local binding = require "tide.binding"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"

local M = {}

local fmt = string.format

-- A tensor argument of `op` (numbers and Lua tables become tensors, as Keras's convert_to_tensor).
function M.arg(op, x, what)
  if x == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what or "x")) end
  return convert.arg(x, op)
end

function M.flat(x) return shape_ops.reshape(x, { -1 }) end

function M.is_float(x) return x.dtype:match("^float") ~= nil or x.dtype == "bfloat16" end

-- keras.ops' promotion for float-valued functions: float inputs keep their dtype, the rest become float32.
function M.float_of(x)
  if M.is_float(x) then return x end
  return math_ops.cast(x, "float32")
end

-- A single axis of a rank-`rank` tensor, made non-negative; an error names the op.
function M.axis(op, a, rank, what)
  if type(a) ~= "number" or a % 1 ~= 0 or a < -rank or a >= rank then
    binding.error(fmt("%s: %s %s out of range for rank %d", op, what or "axis", tostring(a), rank))
  end
  return a < 0 and a + rank or a
end

-- The static rank of x, or an error naming the op (numpy-style functions that move axes need it).
function M.rank(op, x)
  local r = x.ndim
  if r == nil or r < 0 then binding.error(op .. ": the input's rank must be known (its shape is unknown)") end
  return r
end

-- The static size of x's dim `ax`, or an error naming the op (index lists built in Lua need it).
function M.dim(op, x, ax)
  local n = x.shape[ax + 1]
  if type(n) ~= "number" or n < 0 then
    binding.error(fmt("%s: dimension %d of %s must be known", op, ax, tostring(x.shape)))
  end
  return n
end

-- The permutation that moves axis `ax` of a rank-`rank` tensor last, and its inverse.
function M.to_last(ax, rank)
  local perm, inv = {}, {}
  for i = 0, rank - 1 do if i ~= ax then perm[#perm + 1] = i end end
  perm[#perm + 1] = ax
  for i, p in ipairs(perm) do inv[p + 1] = i - 1 end
  return perm, inv
end

-- x with axis `ax` moved last (returns the tensor and a function that moves it back).
function M.axis_last(x, ax)
  local rank = x.ndim
  if ax == rank - 1 then return x, function(y) return y end end
  local perm, inv = M.to_last(ax, rank)
  return shape_ops.transpose(x, perm), function(y) return shape_ops.transpose(y, inv) end
end

-- A `lookup(name)` over modules: the first module that has the name (for aliases), else an error.
function M.lookup(sources, who)
  return function(name)
    for _, m in ipairs(sources) do
      if m[name] ~= nil then return m[name] end
    end
    error(who .. ": no tide op " .. name .. " to alias", 2)
  end
end

return M
