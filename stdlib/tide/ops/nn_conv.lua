-- stdlib/tide/ops/nn_conv.lua — convolutions and pooling as tf.nn has them
-- (NHWC images, HWIO filters): conv1d/2d, conv2d_transpose, depthwise, pools.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local shape = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local math_ops = require "tide.ops.math"
local tensor = require "tide.tensor"
local dtype = require "tide.dtype"
local ffi = binding.ffi
local C, Tensor = binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local CONV2D, CONV2D_BP_INPUT, CONV2D_BP_FILTER = C.TIDE_OP_CONV2D, C.TIDE_OP_CONV2D_BACKPROP_INPUT,
  C.TIDE_OP_CONV2D_BACKPROP_FILTER
local DEPTHWISE, DEPTHWISE_BP_INPUT, DEPTHWISE_BP_FILTER = C.TIDE_OP_DEPTHWISE_CONV2D,
  C.TIDE_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, C.TIDE_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER
local MAX_POOL, MAX_POOL_GRAD, MAX_POOL_GRAD_GRAD = C.TIDE_OP_MAX_POOL2D, C.TIDE_OP_MAX_POOL2D_GRAD,
  C.TIDE_OP_MAX_POOL2D_GRAD_GRAD
local AVG_POOL, AVG_POOL_GRAD = C.TIDE_OP_AVG_POOL2D, C.TIDE_OP_AVG_POOL2D_GRAD
local VALID, SAME, EXPLICIT = 0, 1, 2
local attrs_size = ffi.sizeof("tide_attrs")

-- Raise "op: <formatted message>" at the user's line.
local function fail(op, fmt, ...) binding.error(op .. ": " .. string.format(fmt, ...)) end

-- A required tensor argument (tables and numbers convert; `like` lends its dtype).
local function tensor_arg(v, op, what, pos, like)
  if v == nil then fail(op, "%s is required", what) end
  if istype(Tensor, v) then return v end
  return convert.coerce(v, like, op, pos)
end

-- An error unless data_format v is nil or `want` (tide is channels-last only).
local function check_format(op, v, want)
  if v ~= nil and v ~= want then
    fail(op, "data_format must be \"%s\" (tide's images are channels-last), got %s", want, tostring(v))
  end
end

-- strides/dilations/ksize as {h, w}: a number, a pair, or TF's 4-list [1, h, w, 1].
local function pair(op, what, v, default)
  if v == nil then v = default end
  local list = args.int_list(op, what, v)
  if #list == 1 then return { list[1], list[1] } end
  if #list == 2 then return { list[1], list[2] } end
  if #list == 4 then
    if list[1] ~= 1 or list[4] ~= 1 then
      fail(op, "%s in the batch and channel dimensions must be 1 (TF's rule), got [%s]", what,
        table.concat(list, ", "))
    end
    return { list[2], list[3] }
  end
  fail(op, "%s must be a number, a pair or a list of 4, got a list of %d", what, #list)
end

-- A positive {h, w} pair.
local function positive_pair(op, what, v, default)
  local p = pair(op, what, v, default)
  if p[1] < 1 or p[2] < 1 then fail(op, "%s must be positive, got [%d, %d]", what, p[1], p[2]) end
  return p
end

-- padding: "SAME" / "VALID" (any case), or explicit pads [[0,0],[t,b],[l,r],[0,0]]
-- (or [[t,b],[l,r]]). Returns the mode and {t, b, l, r}.
local function padding(op, v, default, allow_explicit)
  if v == nil then v = default end
  if type(v) == "string" then
    local u = v:upper()
    if u == "SAME" then return SAME, { 0, 0, 0, 0 } end
    if u == "VALID" then return VALID, { 0, 0, 0, 0 } end
    fail(op, "padding must be \"SAME\" or \"VALID\"%s, got \"%s\"",
      allow_explicit and " or a list of explicit paddings" or "", v)
  end
  if type(v) ~= "table" or istype(Tensor, v) or not allow_explicit then
    fail(op, "padding must be \"SAME\" or \"VALID\"%s, got %s",
      allow_explicit and " or a list of explicit paddings" or "", type(v))
  end
  local rows = {}
  for i = 1, #v do
    local r = v[i]
    if type(r) ~= "table" or #r ~= 2 then fail(op, "explicit padding entry %d must be a pair {before, after}", i) end
    rows[i] = { args.int(op, "padding", r[1]), args.int(op, "padding", r[2]) }
  end
  if #rows == 4 then
    if rows[1][1] ~= 0 or rows[1][2] ~= 0 or rows[4][1] ~= 0 or rows[4][2] ~= 0 then
      fail(op, "explicit padding of the batch and channel dimensions must be 0")
    end
    rows = { rows[2], rows[3] }
  elseif #rows ~= 2 then
    fail(op, "explicit padding must list 4 pairs (NHWC) or 2 (height, width), got %d", #rows)
  end
  local pads = { rows[1][1], rows[1][2], rows[2][1], rows[2][2] }
  for i = 1, 4 do
    if pads[i] < 0 then fail(op, "explicit paddings must be non-negative, got %d", pads[i]) end
  end
  return EXPLICIT, pads
end

-- The conv attrs (ops.def): strides, dilations, pads, mode, and the shape a backprop op makes.
local function conv_attrs(strides, dilations, mode, pads, dims)
  local a = dispatch.attrs()
  a.ints[0], a.ints[1], a.ints[2], a.ints[3] = strides[1], strides[2], dilations[1], dilations[2]
  for i = 1, 4 do a.ints[3 + i] = pads[i] end
  if dims then
    for i = 1, 4 do a.ints[7 + i] = dims[i] end
  end
  a.nints = 12
  a.m = mode
  return a
end

-- Parse a conv's options into attrs.
local function conv_options(op, o, dims, default_padding)
  check_format(op, o.data_format, "NHWC")
  local strides = positive_pair(op, "strides", o.strides, 1)
  local dilations = positive_pair(op, "dilations", o.dilations, 1)
  local mode, pads = padding(op, o.padding, default_padding or "SAME", true)
  return conv_attrs(strides, dilations, mode, pads, dims)
end

-- A shape argument (input_sizes, filter_sizes, output_shape): 4 integers.
local function shape4(op, what, v)
  if v == nil then fail(op, "%s is required", what) end
  local list = args.int_list(op, what, v)
  if #list ~= 4 then fail(op, "%s must have 4 entries, got %d", what, #list) end
  return list
end

local CONV_OPTS = { "strides", "padding", "data_format", "dilations" }

-- conv2d(input, filters, strides=1, padding="SAME", data_format="NHWC", dilations=1)
-- as tf.nn.conv2d: input [batch, h, w, in], filters [kh, kw, in, out] -> [batch, oh, ow, out].
-- strides/dilations: a number, a pair, or [1, h, w, 1]; padding "SAME", "VALID" or
-- explicit [[0,0],[top,bottom],[left,right],[0,0]]. TF requires strides and padding;
-- tide defaults them to 1 and "SAME".
function M.conv2d(input, filters, ...)
  local o = args.parse("conv2d", CONV_OPTS, ...)
  input = tensor_arg(input, "conv2d", "input", 1)
  filters = tensor_arg(filters, "conv2d", "filters", 2, input)
  return dispatch.run(CONV2D, conv_options("conv2d", o), { input, filters })
end

-- conv1d(input, filters, stride=1, padding="SAME", data_format="NWC", dilations=1)
-- as tf.nn.conv1d: input [batch, w, in], filters [kw, in, out], run as a conv2d of height 1.
function M.conv1d(input, filters, ...)
  local op = "conv1d"
  local o = args.parse(op, { "stride", "padding", "data_format", "dilations" }, ...)
  check_format(op, o.data_format, "NWC")
  input = tensor_arg(input, op, "input", 1)
  filters = tensor_arg(filters, op, "filters", 2, input)
  -- (an unknown rank passes: the conv2d it becomes checks 3-D + 1 = 4-D when the graph runs)
  if input.ndim >= 0 and input.ndim ~= 3 then
    fail(op, "input must be 3-D [batch, width, channels], got shape %s", tostring(input.shape))
  end
  if filters.ndim >= 0 and filters.ndim ~= 3 then
    fail(op, "filters must be 3-D [width, in_channels, out_channels], got shape %s", tostring(filters.shape))
  end
  local function one(what, v)
    local list = args.int_list(op, what, v == nil and 1 or v)
    if #list == 3 then
      if list[1] ~= 1 or list[3] ~= 1 then fail(op, "%s in the batch and channel dimensions must be 1", what) end
      return list[2]
    end
    if #list ~= 1 then fail(op, "%s must be a number or a list of 3, got a list of %d", what, #list) end
    return list[1]
  end
  local s, d = one("stride", o.stride), one("dilations", o.dilations)
  if s < 1 then fail(op, "stride must be positive, got %d", s) end
  if d < 1 then fail(op, "dilations must be positive, got %d", d) end
  local pad = o.padding
  if type(pad) == "table" then -- explicit: [[0,0],[l,r],[0,0]] or [[l,r]]
    local function zero(p) return type(p) == "table" and p[1] == 0 and p[2] == 0 end
    local lr = #pad == 1 and pad[1] or #pad == 3 and zero(pad[1]) and zero(pad[3]) and pad[2] or nil
    if lr == nil then fail(op, "explicit padding must be [[0,0],[left,right],[0,0]] or [[left,right]]") end
    pad = { { 0, 0 }, lr }
  end
  local mode, pads = padding(op, pad, "SAME", true)
  -- The views first: every op call rewrites the shared attrs block.
  local x4, f4 = shape.expand_dims(input, 1), shape.expand_dims(filters, 0)
  local y = dispatch.run(CONV2D, conv_attrs({ 1, s }, { 1, d }, mode, pads), { x4, f4 })
  return shape.squeeze(y, { 1 })
end

-- A backprop-input op: fn(input_sizes, filters, out_backprop, options) -> the
-- gradient with respect to the input, of shape input_sizes. `fname` names the
-- filters argument as TF does.
local function backprop_input_op(op, code, fname)
  return function(input_sizes, filters, out_backprop, ...)
    local o = args.parse(op, CONV_OPTS, ...)
    local sizes = shape4(op, "input_sizes", input_sizes)
    out_backprop = tensor_arg(out_backprop, op, "out_backprop", 3)
    filters = tensor_arg(filters, op, fname, 2, out_backprop)
    return dispatch.run(code, conv_options(op, o, sizes), { out_backprop, filters })
  end
end

-- A backprop-filter op: fn(input, filter_sizes, out_backprop, options) -> the
-- gradient with respect to the filters, of shape filter_sizes.
local function backprop_filter_op(op, code)
  return function(input, filter_sizes, out_backprop, ...)
    local o = args.parse(op, CONV_OPTS, ...)
    local sizes = shape4(op, "filter_sizes", filter_sizes)
    input = tensor_arg(input, op, "input", 1)
    out_backprop = tensor_arg(out_backprop, op, "out_backprop", 3, input)
    return dispatch.run(code, conv_options(op, o, sizes), { input, out_backprop })
  end
end

-- conv2d_backprop_input(input_sizes, filters, out_backprop, strides=1, padding="SAME", data_format, dilations)
-- as tf.compat.v1.nn.conv2d_backprop_input: the gradient of conv2d with respect to its input.
M.conv2d_backprop_input = backprop_input_op("conv2d_backprop_input", CONV2D_BP_INPUT, "filters")

-- conv2d_backprop_filter(input, filter_sizes, out_backprop, strides=1, padding="SAME", data_format, dilations)
-- as tf.compat.v1.nn.conv2d_backprop_filter: the gradient of conv2d with respect to its filters.
M.conv2d_backprop_filter = backprop_filter_op("conv2d_backprop_filter", CONV2D_BP_FILTER)

-- conv2d_transpose's output_shape: 4 numbers, a 1-D int tensor of 4 (traced:
-- read when the graph runs), or a list of 4 numbers and int scalar tensors
-- (TF's [tf.shape(x)[0], h, w, c]; its numbers stay known while tracing).
-- Gives the dims known now (-1 where not) and, when some are not, the shape
-- tensor the op takes as its third input.
local function output_shape_arg(op, v)
  if v == nil then fail(op, "output_shape is required") end
  if istype(Tensor, v) then
    if not tensor.is_symbolic(v) then return shape4(op, "output_shape", v), nil end
    if v.dt ~= C.TIDE_INT32 and v.dt ~= C.TIDE_INT64 then
      fail(op, "output_shape must be an int32 or int64 tensor, got %s %s", dtype.names[v.dt], tostring(v.shape))
    end
    if v.ndim == 0 or v.ndim > 1 or (v.ndim == 1 and v.dims[0] >= 0 and v.dims[0] ~= 4) then
      fail(op, "output_shape must be a 1-D tensor of 4 entries, got shape %s", tostring(v.shape))
    end
    return { -1, -1, -1, -1 }, v
  end
  if type(v) ~= "table" then return shape4(op, "output_shape", v), nil end
  local any_symbolic = false
  for i = 1, #v do any_symbolic = any_symbolic or (istype(Tensor, v[i]) and tensor.is_symbolic(v[i])) end
  if not any_symbolic then return shape4(op, "output_shape", v), nil end
  if #v ~= 4 then fail(op, "output_shape must have 4 entries, got %d", #v) end
  local dims, parts = {}, {}
  for i = 1, 4 do
    local d = v[i]
    if istype(Tensor, d) and tensor.is_symbolic(d) then
      if (d.dt ~= C.TIDE_INT32 and d.dt ~= C.TIDE_INT64) or d.ndim > 0 then
        fail(op, "output_shape entry %d must be an int32 or int64 scalar, got %s %s", i, dtype.names[d.dt],
          tostring(d.shape))
      end
      dims[i], parts[i] = -1, d.dt == C.TIDE_INT32 and d or math_ops.cast(d, "int32")
    else
      dims[i] = args.int(op, "output_shape entry " .. i, d)
      if dims[i] < 0 then fail(op, "output_shape entry %d is negative (%d)", i, dims[i]) end
      parts[i] = convert.tensor(dims[i], "int32")
    end
  end
  return dims, shape.stack(parts)
end

-- conv2d_transpose(input, filters, output_shape, strides=1, padding="SAME", data_format, dilations)
-- as tf.nn.conv2d_transpose: filters [kh, kw, out_channels, in_channels]; the
-- result has output_shape (it picks among the sizes a strided conv2d maps to
-- input's), which may be a tensor (output_shape_arg).
function M.conv2d_transpose(input, filters, output_shape, ...)
  local op = "conv2d_transpose"
  local o = args.parse(op, CONV_OPTS, ...)
  input = tensor_arg(input, op, "input", 1)
  filters = tensor_arg(filters, op, "filters", 2, input)
  local sizes, dyn = output_shape_arg(op, output_shape)
  if filters.ndim == 4 and input.ndim == 4 then -- (None dims, -1 here, are checked when the graph runs)
    local fs = filters.shape
    local f_in, f_out, in_c = tonumber(filters.dims[3]), tonumber(filters.dims[2]), tonumber(input.dims[3])
    if f_in >= 0 and in_c >= 0 and f_in ~= in_c then
      fail(op, "input has %d channel(s) but filters %s expect %d (filters are [height, width, out, in])",
        in_c, tostring(fs), f_in)
    end
    if f_out >= 0 and sizes[4] >= 0 and sizes[4] ~= f_out then
      fail(op, "output_shape has %d channel(s) but filters %s make %d", sizes[4], tostring(fs), f_out)
    end
    -- what the trace knows of a shape read at run time: the batch is input's, the channels the filters'
    if dyn then
      if sizes[1] < 0 then sizes[1] = tonumber(input.dims[0]) end
      if sizes[4] < 0 then sizes[4] = f_out end
    end
  end
  -- (conv_options last: every op call rewrites the shared attrs block)
  return dispatch.run(CONV2D_BP_INPUT, conv_options(op, o, sizes), dyn and { input, filters, dyn } or { input, filters })
end

-- depthwise_conv2d(input, filter, strides=1, padding="SAME", data_format, dilations)
-- as tf.nn.depthwise_conv2d: filter [kh, kw, in, multiplier] -> [batch, oh, ow, in * multiplier];
-- output channel c * multiplier + m is channel c convolved with filter[:, :, c, m].
function M.depthwise_conv2d(input, filter, ...)
  local op = "depthwise_conv2d"
  local o = args.parse(op, CONV_OPTS, ...)
  input = tensor_arg(input, op, "input", 1)
  filter = tensor_arg(filter, op, "filter", 2, input)
  return dispatch.run(DEPTHWISE, conv_options(op, o), { input, filter })
end

-- depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding, ...)
-- as tf.nn.depthwise_conv2d_backprop_input.
M.depthwise_conv2d_backprop_input = backprop_input_op("depthwise_conv2d_backprop_input", DEPTHWISE_BP_INPUT,
  "filter")

-- depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, ...)
-- as tf.nn.depthwise_conv2d_backprop_filter.
M.depthwise_conv2d_backprop_filter = backprop_filter_op("depthwise_conv2d_backprop_filter", DEPTHWISE_BP_FILTER)

-- Pool attrs (ops.def): ksize, strides, mode.
local function pool_attrs(op, ksize, o)
  check_format(op, o.data_format, "NHWC")
  if ksize == nil then fail(op, "ksize is required") end
  local k = positive_pair(op, "ksize", ksize)
  local s = positive_pair(op, "strides", o.strides, { k[1], k[2] })
  local mode = padding(op, o.padding, "VALID", false)
  local a = dispatch.attrs()
  a.ints[0], a.ints[1], a.ints[2], a.ints[3] = k[1], k[2], s[1], s[2]
  a.nints = 4
  a.m = mode
  return a
end

local POOL_OPTS = { "strides", "padding", "data_format" }

-- max_pool2d(input, ksize, strides=ksize, padding="VALID", data_format="NHWC") as
-- tf.nn.max_pool2d (TF requires strides and padding; tide defaults them as Keras's MaxPool2D).
function M.max_pool2d(input, ksize, ...)
  local o = args.parse("max_pool2d", POOL_OPTS, ...)
  input = tensor_arg(input, "max_pool2d", "input", 1)
  return dispatch.run(MAX_POOL, pool_attrs("max_pool2d", ksize, o), { input })
end

-- avg_pool2d(input, ksize, strides=ksize, padding="VALID", data_format="NHWC") as
-- tf.nn.avg_pool2d: with SAME, each mean counts only the window's elements inside the image.
function M.avg_pool2d(input, ksize, ...)
  local o = args.parse("avg_pool2d", POOL_OPTS, ...)
  input = tensor_arg(input, "avg_pool2d", "input", 1)
  return dispatch.run(AVG_POOL, pool_attrs("avg_pool2d", ksize, o), { input })
end

-- A global pool: fn (reduce_mean or reduce_max) over height and width of a 4-D input.
local function global_pool(op, fn, input, ...)
  local o = args.parse(op, { "keepdims", "data_format" }, ...)
  check_format(op, o.data_format, "NHWC")
  input = tensor_arg(input, op, "input", 1)
  if input.ndim >= 0 and input.ndim ~= 4 then -- an unknown rank: the reduction checks axes 1, 2 when the graph runs
    fail(op, "input must be 4-D [batch, height, width, channels], got shape %s", tostring(input.shape))
  end
  return fn(input, { 1, 2 }, args.bool(op, "keepdims", o.keepdims, false))
end

-- global_avg_pool2d(input, keepdims=false) as tf.keras.layers.GlobalAveragePooling2D:
-- the mean over height and width, [batch, channels] (or [batch, 1, 1, channels]).
function M.global_avg_pool2d(input, ...) return global_pool("global_avg_pool2d", reduce.reduce_mean, input, ...) end

-- global_max_pool2d(input, keepdims=false) as tf.keras.layers.GlobalMaxPooling2D.
function M.global_max_pool2d(input, ...) return global_pool("global_max_pool2d", reduce.reduce_max, input, ...) end

-- ---- for gradients (not exported): ops run with a recorded node's attrs ----

local raw = {}
M.raw = raw

-- Run `op` on inputs with attrs copied from `src` (a node's attrs); `like`,
-- when given, is the tensor whose shape a backprop op produces: its dims, and
-- with None dims also tide.shape(like) as a third input, read when the graph runs.
function raw.run(op, src, inputs, like)
  local shape_of
  if like then
    for i = 0, 3 do
      if like.dims[i] < 0 then
        local sa = dispatch.attrs()
        sa.dtype = C.TIDE_INT64
        shape_of = dispatch.run1(C.TIDE_OP_SHAPE, sa, like)
        inputs = { inputs[1], inputs[2], shape_of }
        break
      end
    end
  end
  local a = dispatch.attrs()
  ffi.copy(a, src, attrs_size)
  if like then
    for i = 0, 3 do a.ints[8 + i] = like.dims[i] end
    a.nints = 12
  end
  return dispatch.run(op, a, inputs)
end

raw.ops = {
  conv2d = CONV2D, conv2d_backprop_input = CONV2D_BP_INPUT, conv2d_backprop_filter = CONV2D_BP_FILTER,
  depthwise_conv2d = DEPTHWISE, depthwise_conv2d_backprop_input = DEPTHWISE_BP_INPUT,
  depthwise_conv2d_backprop_filter = DEPTHWISE_BP_FILTER, max_pool2d = MAX_POOL, max_pool2d_grad = MAX_POOL_GRAD,
  max_pool2d_grad_grad = MAX_POOL_GRAD_GRAD, avg_pool2d = AVG_POOL, avg_pool2d_grad = AVG_POOL_GRAD,
}

return M
