-- stdlib/tide/ops/nn_forms.lua — tf.nn's other spellings of convolution and pooling: max_pool3d/avg_pool3d (through
-- the 2-D pools), pool, convolution, conv_transpose, atrous_conv2d(_transpose), separable_conv2d and space_to_batch,
-- each a composition of the conv and pool ops, so they trace and differentiate through them.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local shape = require "tide.ops.shape"
local nn_conv = require "tide.ops.nn_conv"
local nn_conv_nd = require "tide.ops.nn_conv_nd"
local pool_more = require "tide.ops.nn_pool_more"
local dynamic_shape = require "tide.ops.dynamic_shape"

local M = {}
local fmt = string.format

-- A window size or stride for `n` spatial dims: a number, a list of n, or of n + 2 with 1 at both ends.
local function spatial(op, what, v, n)
  if type(v) == "number" then
    local out = {}
    for i = 1, n do out[i] = v end
    return out
  end
  local list = args.int_list(op, what, v)
  if #list == n + 2 then
    if list[1] ~= 1 or list[n + 2] ~= 1 then
      binding.error(fmt("%s: %s in the batch and channel dimensions must be 1", op, what))
    end
    return { unpack(list, 2, n + 1) }
  end
  if #list ~= n then binding.error(fmt("%s: %s must be a number or a list of %d or %d, got %d", op, what, n, n + 2, #list)) end
  return list
end

local function dim(x, i) -- a known dim as a number, else a 0-d tensor of it
  local d = tonumber(x.dims[i])
  return d >= 0 and d or dynamic_shape.shape(x)[i]
end

-- A 3-D pool [batch, depth, height, width, channels]: the 2-D pool over (height, width) of [batch * depth, ...],
-- then over depth; exact, since a box window's max (mean, with SAME's count the product of each axis's) is the max
-- (mean) of the maxes (means) along each axis.
local function pool3d(op, pool2d)
  return function(input, ksize, ...)
    local o = args.parse(op, { "strides", "padding", "data_format" }, ...)
    if o.data_format ~= nil and o.data_format ~= "NDHWC" then
      binding.error(fmt("%s: data_format must be NDHWC, got %s", op, tostring(o.data_format)))
    end
    local x = convert.arg(input, op .. " (input)")
    if x.ndim ~= 5 then
      binding.error(fmt("%s: input must be 5-D [batch, depth, height, width, channels], got shape %s", op, tostring(x.shape)))
    end
    if ksize == nil then binding.error(op .. ": ksize is required") end
    local k = spatial(op, "ksize", ksize, 3)
    local s = o.strides == nil and k or spatial(op, "strides", o.strides, 3)
    local pad = o.padding == nil and "VALID" or o.padding
    local b, d, c = dim(x, 0), dim(x, 1), dim(x, 4)
    if type(d) ~= "number" or type(c) ~= "number" then binding.error(op .. ": the depth and channels must be known") end
    local y = pool2d(shape.reshape(x, { -1, dim(x, 2), dim(x, 3), c }), { k[2], k[3] }, { strides = { s[2], s[3] }, padding = pad })
    local h2, w2 = dim(y, 1), dim(y, 2)
    local hw = (type(h2) == "number" and type(w2) == "number") and h2 * w2 or -1
    y = pool2d(shape.reshape(y, { b, d, hw, c }), { k[1], 1 }, { strides = { s[1], 1 }, padding = pad })
    return shape.reshape(y, { b, dim(y, 1), h2, w2, c })
  end
end
M.max_pool3d = pool3d("max_pool3d", nn_conv.max_pool2d)
M.avg_pool3d = pool3d("avg_pool3d", nn_conv.avg_pool2d)

local POOLS = {
  MAX = { pool_more.max_pool1d, nn_conv.max_pool2d, M.max_pool3d },
  AVG = { pool_more.avg_pool1d, nn_conv.avg_pool2d, M.avg_pool3d },
}

-- pool(input, window_shape, pooling_type, strides=nil, padding="VALID", data_format=nil, dilations=nil) as
-- tf.nn.pool: "MAX" or "AVG" over the 1, 2 or 3 spatial dims of a channels-last input (dilations of 1).
function M.pool(input, window_shape, pooling_type, ...)
  local op = "pool"
  local o = args.parse(op, { "strides", "padding", "data_format", "dilations", "name" }, ...)
  local x = convert.arg(input, op .. " (input)")
  local list = POOLS[pooling_type]
  if not list then binding.error(fmt("%s: pooling_type must be \"MAX\" or \"AVG\", got %s", op, tostring(pooling_type))) end
  local n = x.ndim - 2
  if n < 1 or n > 3 then binding.error(fmt("%s: input must be 3-D to 5-D (1 to 3 spatial dims), got shape %s", op, tostring(x.shape))) end
  if o.data_format ~= nil and not tostring(o.data_format):match("^N.*C$") then
    binding.error(fmt("%s: data_format must be channels last (NWC, NHWC, NDHWC), got %s", op, tostring(o.data_format)))
  end
  local w = spatial(op, "window_shape", window_shape, n)
  if o.dilations ~= nil then
    for _, r in ipairs(spatial(op, "dilations", o.dilations, n)) do
      if r ~= 1 then binding.error(op .. ": dilations other than 1 are not supported yet") end
    end
  end
  local s = o.strides == nil and 1 or spatial(op, "strides", o.strides, n)
  if type(s) == "number" then s = spatial(op, "strides", s, n) end
  local pad = o.padding == nil and "VALID" or o.padding
  if n == 1 then return list[1](x, w[1], s[1], pad) end
  if n == 2 then return list[2](x, w, { strides = s, padding = pad }) end
  return list[3](x, w, s, pad)
end

-- max_pool / avg_pool (input, ksize, strides, padding, data_format): the 1-, 2- or 3-D pool by input's rank.
local function by_rank(op, p12, p3)
  return function(input, ksize, ...)
    local x = convert.arg(input, op .. " (input)")
    if x.ndim == 5 then return p3(x, ksize, ...) end
    if x.ndim == 3 or x.ndim == 4 or x.ndim < 0 then return p12(x, ksize, ...) end
    binding.error(fmt("%s: input must be 3-D to 5-D (1 to 3 spatial dims), got shape %s", op, tostring(x.shape)))
  end
end
M.max_pool = by_rank("max_pool", pool_more.max_pool, M.max_pool3d)
M.avg_pool = by_rank("avg_pool", pool_more.avg_pool, M.avg_pool3d)

-- convolution(input, filters, strides=nil, padding="VALID", data_format=nil, dilations=nil) as tf.nn.convolution:
-- conv1d, conv2d or conv3d by the filters' rank (3, 4 or 5), channels last.
function M.convolution(input, filters, ...)
  local op = "convolution"
  local o = args.parse(op, { "strides", "padding", "data_format", "dilations", "name" }, ...)
  local f = convert.arg(filters, op .. " (filters)")
  local pad = o.padding == nil and "VALID" or o.padding
  local s = o.strides == nil and 1 or o.strides
  local d = o.dilations == nil and 1 or o.dilations
  if f.ndim == 3 then
    local function one(v) return type(v) == "table" and v[1] or v end
    return nn_conv.conv1d(input, f, one(s), pad, o.data_format, one(d))
  elseif f.ndim == 4 then
    return nn_conv.conv2d(input, f, { strides = s, padding = pad, data_format = o.data_format, dilations = d })
  elseif f.ndim == 5 then
    return nn_conv_nd.conv3d(input, f, { strides = s, padding = pad, data_format = o.data_format, dilations = d })
  end
  binding.error(fmt("%s: filters must be 3-D to 5-D (1 to 3 spatial dims), got shape %s", op, tostring(f.shape)))
end

-- conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=nil, dilations=nil) as
-- tf.nn.conv_transpose: conv1d_transpose, conv2d_transpose or conv3d_transpose by the input's rank.
function M.conv_transpose(input, filters, output_shape, strides, ...)
  local op = "conv_transpose"
  local o = args.parse(op, { "padding", "data_format", "dilations", "name" }, ...)
  local x = convert.arg(input, op .. " (input)")
  if strides == nil then binding.error(op .. ": strides is required") end
  local opts = { strides = strides, padding = o.padding == nil and "SAME" or o.padding, data_format = o.data_format,
    dilations = o.dilations }
  if x.ndim == 3 then return nn_conv_nd.conv1d_transpose(x, filters, output_shape, opts) end
  if x.ndim == 4 then return nn_conv.conv2d_transpose(x, filters, output_shape, opts) end
  if x.ndim == 5 then return nn_conv_nd.conv3d_transpose(x, filters, output_shape, opts) end
  binding.error(fmt("%s: input must be 3-D to 5-D (1 to 3 spatial dims), got shape %s", op, tostring(x.shape)))
end

local function rate_arg(op, rate)
  if rate == nil then binding.error(op .. ": rate is required") end
  local r = args.int(op, "rate", rate)
  if r < 1 then binding.error(fmt("%s: rate must be at least 1, got %d", op, r)) end
  return r
end

-- atrous_conv2d(value, filters, rate, padding) as tf.nn.atrous_conv2d: conv2d with dilations = rate, stride 1.
function M.atrous_conv2d(value, filters, rate, padding)
  local r = rate_arg("atrous_conv2d", rate)
  if padding == nil then binding.error("atrous_conv2d: padding is required") end
  return nn_conv.conv2d(value, filters, { strides = 1, padding = padding, dilations = r })
end

-- atrous_conv2d_transpose(value, filters, output_shape, rate, padding) as tf.nn.atrous_conv2d_transpose.
function M.atrous_conv2d_transpose(value, filters, output_shape, rate, padding)
  local r = rate_arg("atrous_conv2d_transpose", rate)
  if padding == nil then binding.error("atrous_conv2d_transpose: padding is required") end
  return nn_conv.conv2d_transpose(value, filters, output_shape, { strides = 1, padding = padding, dilations = r })
end

-- separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=nil, dilations=nil) as
-- tf.nn.separable_conv2d: the depthwise conv (filter [kh, kw, in, multiplier]) then a 1x1 conv (pointwise_filter
-- [1, 1, in * multiplier, out]).
function M.separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, ...)
  local op = "separable_conv2d"
  local o = args.parse(op, { "data_format", "dilations", "name" }, ...)
  local pw = convert.arg(pointwise_filter, op .. " (pointwise_filter)")
  local function not1(i) local d = tonumber(pw.dims[i]); return d >= 0 and d ~= 1 end -- (a None dim: checked by conv2d)
  if pw.ndim ~= 4 or not1(0) or not1(1) then
    binding.error(fmt("%s: pointwise_filter must be [1, 1, in * multiplier, out], got shape %s", op, tostring(pw.shape)))
  end
  if strides == nil or padding == nil then binding.error(op .. ": strides and padding are required") end
  local y = nn_conv.depthwise_conv2d(input, depthwise_filter, { strides = strides, padding = padding,
    data_format = o.data_format, dilations = o.dilations })
  return nn_conv.conv2d(y, pw, { strides = 1, padding = "VALID", data_format = o.data_format })
end

-- space_to_batch(input, block_shape, paddings) as tf.space_to_batch_nd (tf.nn.space_to_batch): the M spatial dims
-- after the batch padded by paddings [M, 2] and split into blocks, which move into the batch (block-major).
function M.space_to_batch(input, block_shape, paddings)
  local op = "space_to_batch"
  local x = convert.arg(input, op .. " (input)")
  local bs = args.int_list(op, "block_shape", binding.istensor(block_shape) and block_shape:totable() or block_shape)
  local p = binding.istensor(paddings) and paddings:totable() or paddings
  local m = #bs
  if m < 1 or x.ndim < m + 1 then
    binding.error(fmt("%s: input of shape %s needs at least %d dims for a block_shape of %d", op, tostring(x.shape), m + 1, m))
  end
  if type(p) ~= "table" or #p ~= m then binding.error(fmt("%s: paddings must be [%d, 2]", op, m)) end
  local pads = { { 0, 0 } }
  for i = 1, m do
    if type(p[i]) ~= "table" or #p[i] ~= 2 or p[i][1] < 0 or p[i][2] < 0 then
      binding.error(fmt("%s: paddings[%d] must be two non-negative numbers", op, i - 1))
    end
    if bs[i] < 1 then binding.error(fmt("%s: block_shape[%d] must be at least 1, got %d", op, i - 1, bs[i])) end
    pads[i + 1] = p[i]
  end
  for i = m + 2, x.ndim do pads[i] = { 0, 0 } end
  local y = shape.pad(x, pads)
  local d = {}
  for i = 0, y.ndim - 1 do
    d[i + 1] = tonumber(y.dims[i])
    if d[i + 1] < 0 and i >= 1 and i <= m then binding.error(op .. ": the padded spatial dims must be known") end
  end
  local split, perm, out = { d[1] }, {}, {}
  for i = 1, m do
    if d[i + 1] % bs[i] ~= 0 then
      binding.error(fmt("%s: padded dim %d (%d) is not divisible by block_shape[%d] = %d", op, i, d[i + 1], i - 1, bs[i]))
    end
    split[#split + 1] = d[i + 1] / bs[i]
    split[#split + 1] = bs[i]
  end
  for i = m + 2, #d do split[#split + 1] = d[i] end
  for i = 1, m do perm[#perm + 1] = 2 * i end -- the block offsets first
  perm[#perm + 1] = 0
  for i = 1, m do perm[#perm + 1] = 2 * i - 1 end
  for i = 2 * m + 1, #split - 1 do perm[#perm + 1] = i end
  local prod = 1
  for i = 1, m do prod = prod * bs[i] end
  local batch = d[1] >= 0 and d[1] * prod or -1
  out[1] = batch
  for i = 1, m do out[#out + 1] = split[2 * i] end
  for i = m + 2, #d do out[#out + 1] = d[i] end
  if d[1] < 0 then split[1] = -1 end
  return shape.reshape(shape.transpose(shape.reshape(y, split), perm), out)
end

return M
