-- stdlib/tide/image/util.lua — what tide.image's modules share: argument checks
-- (images of rank 3 or 4, sizes, scalars that may be tensors, seed pairs) and errors naming the op.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

M.U8, M.I8, M.I32, M.I64 = C.TIDE_UINT8, C.TIDE_INT8, C.TIDE_INT32, C.TIDE_INT64
M.F32, M.F64, M.F16, M.BF16 = C.TIDE_FLOAT32, C.TIDE_FLOAT64, C.TIDE_FLOAT16, C.TIDE_BFLOAT16

-- Raise "op: <formatted message>" at the user's line.
function M.fail(op, fmt, ...) binding.error(op .. ": " .. string.format(fmt, ...)) end
local fail = M.fail

-- Any tensor argument (tables and numbers convert, Variables are read).
function M.tensor_arg(op, v, what)
  if v == nil then fail(op, "%s is required", what) end
  return istype(Tensor, v) and v or convert.arg(v, op)
end

-- An image argument: a tensor of rank 3 or 4 (unknown while tracing passes:
-- the ops check when the graph runs); `ranks` = 4 asks for a batch.
function M.image_arg(op, v, what, ranks)
  what = what or "image"
  if v == nil then
    fail(op, "%s is required (a [height, width, channels] or [batch, height, width, channels] tensor)", what)
  end
  local x = istype(Tensor, v) and v or convert.arg(v, op)
  if ranks == 4 then
    if x.ndim >= 0 and x.ndim ~= 4 then
      fail(op, "%s must be [batch, height, width, channels], got shape %s", what, tostring(x.shape))
    end
  elseif x.ndim >= 0 and x.ndim ~= 3 and x.ndim ~= 4 then
    fail(op, "%s must be [height, width, channels] or [batch, height, width, channels], got shape %s", what,
      tostring(x.shape))
  end
  return x
end

-- The height and width axes of an image of x's rank.
function M.hw_axes(x) return x.ndim == 4 and 1 or 0, x.ndim == 4 and 2 or 1 end

-- The height and width of image x as Lua numbers; they must be known (also
-- while tracing: the result's shape depends on them).
function M.known_hw(op, x)
  local ha, wa = M.hw_axes(x)
  local h, w = tonumber(x.dims[ha]), tonumber(x.dims[wa])
  if x.ndim < 0 or h < 0 or w < 0 then
    fail(op, "the image's height and width must be known while tracing, got shape %s", tostring(x.shape))
  end
  return h, w
end

-- The number of channels of image x (a Lua number, -1 when unknown).
function M.channels(x) return x.ndim > 0 and tonumber(x.dims[x.ndim - 1]) or -1 end

-- Check that image x has `want` channels (a list of allowed counts) when its channels are known.
function M.check_channels(op, x, want, what)
  local c = M.channels(x)
  if c < 0 then return end
  for _, n in ipairs(want) do if c == n then return end end
  fail(op, "%s must have %s channels (the last dim), got shape %s", what or "image", table.concat(want, " or "),
    tostring(x.shape))
end

-- x as a batch [N, H, W, C], and a function giving a batch's result back in x's rank.
function M.as_batch(x)
  if x.ndim == 4 then return x, function(y) return y end end
  return shape_ops.expand_dims(x, 0), function(y) return shape_ops.squeeze(y, { 0 }) end
end

-- A non-negative integer argument (a size or an offset), or an error naming it.
function M.count(op, what, v, positive)
  local n = args.int(op, what, v)
  if positive and n <= 0 then fail(op, "%s must be > 0, got %d", what, n) end
  if not positive and n < 0 then fail(op, "%s must be >= 0, got %d", what, n) end
  return n
end

-- A scalar argument that may be a tensor (drawn by a random op, or traced):
-- a Lua number, or a 0-d/one-element tensor cast to dtype code `dt`.
function M.scalar(op, what, v, dt)
  v = convert.unvariable(v)
  if type(v) == "number" then return v end
  if istype(Tensor, v) then
    if v.ndim > 0 and v.nelem ~= 1 then fail(op, "%s must be a scalar, got shape %s", what, tostring(v.shape)) end
    if v.ndim > 0 then v = shape_ops.reshape(v, {}) end
    if dt and v.dt ~= dt then v = math_ops.cast(v, dtype.names[dt]) end
    return v
  end
  fail(op, "%s must be a number or a scalar tensor, got %s", what, type(v))
end

-- A stateless op's seed: TF's shape [2] integer tensor, given as a Lua list
-- {a, b} or an int32/int64 tensor of shape [2]; an int64 tensor.
function M.seed_pair(op, seed)
  seed = convert.unvariable(seed)
  if seed == nil then fail(op, "seed is required: a pair of integers {a, b} or a shape [2] int32/int64 tensor") end
  if type(seed) == "table" and not istype(Tensor, seed) then
    if #seed ~= 2 then fail(op, "seed must be a pair of integers {a, b}, got %d values", #seed) end
    return convert.tensor({ args.int(op, "seed[1]", seed[1]), args.int(op, "seed[2]", seed[2]) }, "int64", op)
  end
  if not istype(Tensor, seed) then
    fail(op, "seed must be a pair of integers {a, b} or a shape [2] integer tensor, got %s", type(seed))
  end
  if seed.dt ~= M.I32 and seed.dt ~= M.I64 then
    fail(op, "seed must be an int32 or int64 tensor, got %s", dtype.names[tonumber(seed.dt)])
  end
  if seed.ndim >= 0 and (seed.ndim ~= 1 or (seed.dims[0] >= 0 and seed.dims[0] ~= 2)) then
    fail(op, "seed must have shape [2], got %s", tostring(seed.shape))
  end
  return seed
end

return M
