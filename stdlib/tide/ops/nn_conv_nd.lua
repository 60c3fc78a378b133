-- stdlib/tide/ops/nn_conv_nd.lua — tf.nn's 1-D transposed and 3-D convolutions
-- (conv1d_transpose, conv3d, conv3d_transpose) composed from the 2-D registry ops.
-- A 1-D op is the 2-D one over a unit height (exact). A 3-D convolution gathers
-- the kernel's depth taps of every output depth into the channels ([B, D', H, W,
-- kd * C], strided slices) and runs one conv2d over [B * D', H, W, kd * C] with
-- the kernel as [kh, kw, kd * C, F]: the same sums, one kernel call. Its
-- transpose runs one conv2d_transpose per input depth for all taps at once and
-- adds each tap's result at its output depths (the inverse of that gather).
-- Gradients come from the ops used (composites: nothing in grad/).
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local shape = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local nn_conv = require "tide.ops.nn_conv"
local tensor = require "tide.tensor"
local ffi = binding.ffi
local Tensor = binding.Tensor
local istype = ffi.istype

local M = {}

local function fail(op, fmt, ...) binding.error(op .. ": " .. string.format(fmt, ...)) end

local function tensor_arg(v, op, what, pos, like)
  if v == nil then fail(op, "%s is required", what) end
  if istype(Tensor, v) then return v end
  return convert.coerce(v, like, op, pos)
end

-- x's dim i (0-based): a number when known, else a 0-d int32 tensor read when the graph runs.
local function dim(x, i)
  local d = tonumber(x.dims[i])
  if d >= 0 then return d end
  return dynamic_shape.size_along(x, i)
end

-- strides/dilations of a rank-`n` op: a number, a list of n, or TF's list of
-- n + 2 with 1 at the batch and channel ends. Positive integers.
local function tuple(op, what, v, n)
  local list = args.int_list(op, what, v == nil and 1 or v)
  if #list == 1 then
    local out = {}
    for i = 1, n do out[i] = list[1] end
    list = out
  elseif #list == n + 2 then
    if list[1] ~= 1 or list[n + 2] ~= 1 then
      fail(op, "%s in the batch and channel dimensions must be 1 (TF's rule), got [%s]", what, table.concat(list, ", "))
    end
    list = { unpack(list, 2, n + 1) }
  elseif #list ~= n then
    fail(op, "%s must be a number or a list of %d or %d, got a list of %d", what, n, n + 2, #list)
  end
  for _, s in ipairs(list) do
    if s < 1 then fail(op, "%s must be positive, got [%s]", what, table.concat(list, ", ")) end
  end
  return list
end

local function padding_arg(op, v)
  local p = v == nil and "SAME" or v
  if type(p) ~= "string" or (p:upper() ~= "SAME" and p:upper() ~= "VALID") then
    fail(op, "padding must be \"SAME\" or \"VALID\", got %s", tostring(v))
  end
  return p:upper()
end

local function check_format(op, v, want)
  if v ~= nil and v ~= want then
    fail(op, "data_format must be \"%s\" (tide's tensors are channels-last), got %s", want, tostring(v))
  end
end

local function check_rank(op, what, t, n, layout)
  if t.ndim ~= n then fail(op, "%s must be %d-D %s, got shape %s", what, n, layout, tostring(t.shape)) end
end

-- A known dim of t (the depth and the kernel's size), named in the error when it is not.
local function known(op, what, t, i)
  local d = tonumber(t.dims[i])
  if d < 0 then
    fail(op, "the %s must be known while tracing (it sets the slices), got shape %s", what, tostring(t.shape))
  end
  return d
end

-- The output length of a convolution along one dim and the padding before it (TF's rules).
local function conv_length(op, n, k, s, d, pad)
  local ke = (k - 1) * d + 1
  if pad == "SAME" then
    local out = math.floor((n + s - 1) / s)
    return out, math.floor(math.max((out - 1) * s + ke - n, 0) / 2)
  end
  if n < ke then
    fail(op, "the input's depth %d is smaller than the dilated kernel's %d (padding \"VALID\")", n, ke)
  end
  return math.floor((n - ke) / s) + 1, 0
end

local CONV3D_OPTS = { "strides", "padding", "data_format", "dilations" }

-- conv3d(input, filters, strides=1, padding="SAME", data_format="NDHWC", dilations=1)
-- as tf.nn.conv3d: input [batch, d, h, w, in], filters [kd, kh, kw, in, out] ->
-- [batch, od, oh, ow, out]. The depth must be known while tracing (h, w and the
-- batch may be None). tide defaults strides and padding as conv2d does.
function M.conv3d(input, filters, ...)
  local op = "conv3d"
  local o = args.parse(op, CONV3D_OPTS, ...)
  check_format(op, o.data_format, "NDHWC")
  input = tensor_arg(input, op, "input", 1)
  filters = tensor_arg(filters, op, "filters", 2, input)
  check_rank(op, "input", input, 5, "[batch, depth, height, width, channels]")
  check_rank(op, "filters", filters, 5, "[depth, height, width, in_channels, out_channels]")
  local s = tuple(op, "strides", o.strides, 3)
  local dl = tuple(op, "dilations", o.dilations, 3)
  local pad = padding_arg(op, o.padding)
  local kd, kh, kw = known(op, "filters' depth", filters, 0), dim(filters, 1), dim(filters, 2)
  local cin, f = tonumber(filters.dims[3]), dim(filters, 4)
  local c = tonumber(input.dims[4])
  if c >= 0 and cin >= 0 and c ~= cin then
    fail(op, "input has %d channel(s) but filters %s expect %d", c, tostring(filters.shape), cin)
  end
  local depth = known(op, "input's depth (dim 1)", input, 1)
  local od, before = conv_length(op, depth, kd, s[1], dl[1], pad)
  local x = input
  if pad == "SAME" then
    local total = (od - 1) * s[1] + (kd - 1) * dl[1] + 1 - depth
    if total > 0 then x = shape.pad(x, { { 0, 0 }, { before, total - before }, { 0, 0 }, { 0, 0 }, { 0, 0 } }) end
  end
  -- tap i of every output depth: x[:, i*dl : i*dl + (od-1)*s + 1 : s], joined along the channels
  local taps = {}
  for i = 0, kd - 1 do
    local start = i * dl[1]
    taps[i + 1] = x:slice { {}, { start, start + (od - 1) * s[1] + 1, s[1] } }
  end
  local gathered = kd == 1 and taps[1] or shape.concat(taps, 4)
  local h, w, cc = dim(input, 2), dim(input, 3), dim(gathered, 4)
  local flat = shape.reshape(gathered, { -1, h, w, cc })
  local k2 = shape.reshape(shape.transpose(filters, { 1, 2, 0, 3, 4 }), { kh, kw, cc, f })
  local y = nn_conv.conv2d(flat, k2, { strides = { s[2], s[3] }, padding = pad, dilations = { dl[2], dl[3] } })
  return shape.reshape(y, { -1, od, dim(y, 1), dim(y, 2), f })
end

-- output_shape of a transposed op: a list of n numbers (the batch may be a 0-d int tensor).
local function output_list(op, v, n)
  if type(v) ~= "table" or istype(Tensor, v) or #v ~= n then
    fail(op, "output_shape must be a list of %d entries (the batch may be a 0-d int tensor), got %s", n,
      istype(Tensor, v) and "a tensor" or tostring(v))
  end
  local out = {}
  for i = 1, n do
    local d = v[i]
    if i == 1 and istype(Tensor, d) then
      out[i] = d
    else
      out[i] = args.int(op, "output_shape entry " .. i, d)
      if out[i] < 0 then fail(op, "output_shape entry %d is negative (%d)", i, out[i]) end
    end
  end
  return out
end

-- conv1d_transpose(input, filters, output_shape, strides=1, padding="SAME", data_format="NWC", dilations=1)
-- as tf.nn.conv1d_transpose: input [batch, w, in], filters [kw, out, in],
-- output_shape {batch, ow, out}: a conv2d_transpose over a unit height.
function M.conv1d_transpose(input, filters, output_shape, ...)
  local op = "conv1d_transpose"
  local o = args.parse(op, CONV3D_OPTS, ...)
  check_format(op, o.data_format, "NWC")
  input = tensor_arg(input, op, "input", 1)
  filters = tensor_arg(filters, op, "filters", 2, input)
  check_rank(op, "input", input, 3, "[batch, width, channels]")
  check_rank(op, "filters", filters, 3, "[width, out_channels, in_channels]")
  local out = output_list(op, output_shape, 3)
  local s = tuple(op, "strides", o.strides, 1)[1]
  local d = tuple(op, "dilations", o.dilations, 1)[1]
  local x4, f4 = shape.expand_dims(input, 1), shape.expand_dims(filters, 0)
  local y = nn_conv.conv2d_transpose(x4, f4, { out[1], 1, out[2], out[3] },
    { strides = { 1, s }, padding = padding_arg(op, o.padding), dilations = { 1, d } })
  return shape.squeeze(y, { 1 })
end

-- conv3d_transpose(input, filters, output_shape, strides=1, padding="SAME", data_format="NDHWC", dilations=1)
-- as tf.nn.conv3d_transpose: input [batch, d, h, w, in], filters [kd, kh, kw,
-- out, in], output_shape {batch, od, oh, ow, out}, which a conv3d with these
-- options maps back to input's size (TF's rule). The depths must be known.
function M.conv3d_transpose(input, filters, output_shape, ...)
  local op = "conv3d_transpose"
  local o = args.parse(op, CONV3D_OPTS, ...)
  check_format(op, o.data_format, "NDHWC")
  input = tensor_arg(input, op, "input", 1)
  filters = tensor_arg(filters, op, "filters", 2, input)
  check_rank(op, "input", input, 5, "[batch, depth, height, width, channels]")
  check_rank(op, "filters", filters, 5, "[depth, height, width, out_channels, in_channels]")
  local out = output_list(op, output_shape, 5)
  local s = tuple(op, "strides", o.strides, 3)
  local dl = tuple(op, "dilations", o.dilations, 3)
  local pad = padding_arg(op, o.padding)
  local kd, kh, kw = known(op, "filters' depth", filters, 0), dim(filters, 1), dim(filters, 2)
  local f, cin, c = tonumber(filters.dims[3]), tonumber(filters.dims[4]), tonumber(input.dims[4])
  if c >= 0 and cin >= 0 and c ~= cin then
    fail(op, "input has %d channel(s) but filters %s expect %d (filters are [depth, height, width, out, in])", c,
      tostring(filters.shape), cin)
  end
  if f >= 0 and f ~= out[5] then
    fail(op, "output_shape has %d channel(s) but filters %s make %d", out[5], tostring(filters.shape), f)
  end
  local depth = known(op, "input's depth (dim 1)", input, 1)
  local od = out[2]
  local fwd, before = conv_length(op, od, kd, s[1], dl[1], pad)
  if fwd ~= depth then
    fail(op, "output_shape's depth %d does not map back to the input's %d (a conv3d with these options gives %d)",
      od, depth, fwd)
  end
  -- every tap of every input depth at once: [B * D, oh, ow, kd * out]
  local batch = out[1]
  if istype(Tensor, batch) then
    batch = tensor.is_symbolic(batch) and shape.reshape(batch, {}) or args.int(op, "output_shape entry 1",
      tensor.item(batch))
  end
  local x = shape.reshape(input, { -1, dim(input, 2), dim(input, 3), dim(input, 4) })
  local k2 = shape.reshape(shape.transpose(filters, { 1, 2, 0, 3, 4 }), { kh, kw, kd * out[5], dim(filters, 4) })
  local z = nn_conv.conv2d_transpose(x, k2, { batch * depth, out[3], out[4], kd * out[5] },
    { strides = { s[2], s[3] }, padding = pad, dilations = { dl[2], dl[3] } })
  z = shape.reshape(z, { -1, depth, out[3], out[4], kd, out[5] })
  -- input depth j's tap i lands at output depth j*s + i*dl - before: spread the
  -- depths s apart (zeros between), then shift each tap to its place and add
  local spread = (depth - 1) * s[1] + 1
  if s[1] > 1 then
    z = shape.pad(shape.expand_dims(z, 2), { { 0, 0 }, { 0, 0 }, { 0, s[1] - 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 },
      { 0, 0 } })
    z = shape.reshape(z, { -1, depth * s[1], out[3], out[4], kd, out[5] }):slice { {}, { 0, spread } }
  end
  local y
  for i = 0, kd - 1 do
    local first = i * dl[1] - before -- where this tap's first row lands
    local tap = z:slice { {}, {}, {}, {}, i }
    local lo, hi = math.max(-first, 0), math.min(spread, od - first) -- the rows inside [0, od)
    if hi > lo then
      if lo > 0 or hi < spread then tap = tap:slice { {}, { lo, hi } } end
      local at = first + lo
      tap = shape.pad(tap, { { 0, 0 }, { at, od - at - (hi - lo) }, { 0, 0 }, { 0, 0 }, { 0, 0 } })
      y = y and y + tap or tap
    end
  end
  if y == nil then -- (no tap reaches the output: zeros of its shape)
    y = shape.pad(z:slice { {}, { 0, 0 }, {}, {}, 0 }, { { 0, 0 }, { 0, od }, { 0, 0 }, { 0, 0 }, { 0, 0 } })
  end
  return y
end

return M
