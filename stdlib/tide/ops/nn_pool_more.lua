-- stdlib/tide/ops/nn_pool_more.lua — tf.nn's 1-D and rank-dispatching pools (max_pool1d, avg_pool1d,
-- max_pool, avg_pool) through the 2-D kernels, and depth_to_space/space_to_depth as reshapes and
-- transposes. (conv1d_transpose is ops/nn_conv_nd.lua's.)
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local shape = require "tide.ops.shape"
local nn_conv = require "tide.ops.nn_conv"

local M = {}
local fmt = string.format

-- One window size or stride of a 1-D pool: a number, a list of 1, or a list of 3 with 1 at both ends.
local function one(op, what, v)
  if type(v) == "number" then return v end
  local list = args.int_list(op, what, v)
  if #list == 3 then
    if list[1] ~= 1 or list[3] ~= 1 then
      binding.error(fmt("%s: %s in the batch and channel dimensions must be 1", op, what))
    end
    return list[2]
  end
  if #list ~= 1 then binding.error(fmt("%s: %s must be a number or a list of 1 or 3, got a list of %d", op, what, #list)) end
  return list[1]
end

-- A 1-D pool [batch, width, channels] as the 2-D pool of [batch, 1, width, channels].
local function pool1d(op, pool2d)
  return function(input, ksize, ...)
    local o = args.parse(op, { "strides", "padding", "data_format" }, ...)
    if o.data_format ~= nil and o.data_format ~= "NWC" then
      binding.error(fmt("%s: data_format must be NWC, got %s", op, tostring(o.data_format)))
    end
    input = convert.arg(input, op .. " (input)")
    if input.ndim >= 0 and input.ndim ~= 3 then
      binding.error(fmt("%s: input must be 3-D [batch, width, channels], got shape %s", op, tostring(input.shape)))
    end
    if ksize == nil then binding.error(op .. ": ksize is required") end
    local k = one(op, "ksize", ksize)
    local s = o.strides == nil and k or one(op, "strides", o.strides)
    local y = pool2d(shape.expand_dims(input, 1), { 1, k }, { strides = { 1, s }, padding = o.padding })
    return shape.squeeze(y, { 1 })
  end
end
M.max_pool1d = pool1d("max_pool1d", nn_conv.max_pool2d)
M.avg_pool1d = pool1d("avg_pool1d", nn_conv.avg_pool2d)

-- max_pool / avg_pool (input, ksize, strides, padding, data_format): the 1-D or 2-D pool by input's rank.
local function by_rank(op, p1, p2)
  return function(input, ksize, ...)
    input = convert.arg(input, op .. " (input)")
    if input.ndim == 3 then return p1(input, ksize, ...) end
    if input.ndim == 4 or input.ndim < 0 then return p2(input, ksize, ...) end
    binding.error(fmt("%s: input must be 3-D or 4-D (3-D pools are not in tide yet), got shape %s", op,
      tostring(input.shape)))
  end
end
M.max_pool = by_rank("max_pool", M.max_pool1d, nn_conv.max_pool2d)
M.avg_pool = by_rank("avg_pool", M.avg_pool1d, nn_conv.avg_pool2d)

-- The block size and [batch, height, width, depth] dims of a 4-D NHWC input (all known).
local function nhwc(op, input, block_size, ...)
  local o = args.parse(op, { "data_format" }, ...)
  if o.data_format ~= nil and o.data_format ~= "NHWC" then
    binding.error(fmt("%s: data_format must be NHWC, got %s", op, tostring(o.data_format)))
  end
  input = convert.arg(input, op .. " (input)")
  local b = args.int(op, "block_size", block_size)
  if b < 2 then binding.error(fmt("%s: block_size must be at least 2, got %d", op, b)) end
  if input.ndim ~= 4 then binding.error(fmt("%s: input must be 4-D [batch, height, width, depth], got shape %s", op,
    tostring(input.shape))) end
  local d = {}
  for i = 0, 3 do d[i + 1] = tonumber(input.dims[i]) end
  if d[2] < 0 or d[3] < 0 or d[4] < 0 then
    binding.error(fmt("%s: height, width and depth must be known, got shape %s", op, tostring(input.shape)))
  end
  if d[1] < 0 then d[1] = -1 end -- an unknown batch stays one
  return input, b, d
end

-- depth_to_space(input, block_size): depth b^2 c becomes b x b blocks of c (TF's DCR order).
function M.depth_to_space(input, block_size, ...)
  local op = "depth_to_space"
  local x, b, d = nhwc(op, input, block_size, ...)
  local n, h, w, c = d[1], d[2], d[3], d[4]
  if c % (b * b) ~= 0 then
    binding.error(fmt("%s: the depth %d must be divisible by block_size^2 = %d", op, c, b * b))
  end
  local y = shape.reshape(x, { n, h, w, b, b, c / (b * b) })
  y = shape.transpose(y, { 0, 1, 3, 2, 4, 5 })
  return shape.reshape(y, { n, h * b, w * b, c / (b * b) })
end

-- space_to_depth(input, block_size): each b x b block becomes depth (the inverse of depth_to_space).
function M.space_to_depth(input, block_size, ...)
  local op = "space_to_depth"
  local x, b, d = nhwc(op, input, block_size, ...)
  local n, h, w, c = d[1], d[2], d[3], d[4]
  if h % b ~= 0 or w % b ~= 0 then
    binding.error(fmt("%s: height %d and width %d must be divisible by block_size %d", op, h, w, b))
  end
  local y = shape.reshape(x, { n, h / b, b, w / b, b, c })
  y = shape.transpose(y, { 0, 1, 3, 2, 4, 5 })
  return shape.reshape(y, { n, h / b, w / b, b * b * c })
end

return M
