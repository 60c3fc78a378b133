-- stdlib/tide/ops/nn_space.lua — tf.nn.with_space_to_batch (an op run on space_to_batch's blocks, as dilated
-- convolutions are built) and tf.nn.isotonic_regression (pool adjacent violators), as compositions.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local segment = require "tide.ops.segment"
local nn_forms = require "tide.ops.nn_forms"
local context = require "tide.trace_context"
local fmt = string.format

local M = {}

-- tf.batch_to_space's inverse of nn_forms.space_to_batch (block-major batch): [B * prod(bs), e1..eM, rest]
-- -> [B, e1 * b1 - crops, ..., rest].
local function batch_to_space(op, x, bs, crops)
  local m = #bs
  local d = {}
  for i = 0, x.ndim - 1 do d[i + 1] = tonumber(x.dims[i]) end
  for i = 2, m + 1 do
    if d[i] < 0 then binding.error(op .. ": the spatial dims of op's result must be known") end
  end
  local prod = 1
  for i = 1, m do prod = prod * bs[i] end
  local split = {}
  for i = 1, m do split[i] = bs[i] end
  split[m + 1] = d[1] >= 0 and d[1] / prod or -1
  for i = 2, #d do split[#split + 1] = d[i] end
  local perm = { m }
  for i = 1, m do perm[#perm + 1] = m + i; perm[#perm + 1] = i - 1 end
  for i = 2 * m + 1, #split - 1 do perm[#perm + 1] = i end
  local out = { split[m + 1] }
  for i = 1, m do out[i + 1] = d[i + 1] * bs[i] end
  for i = m + 2, #d do out[#out + 1] = d[i] end
  local y = shape.reshape(shape.transpose(shape.reshape(x, split), perm), out)
  local spec, cut = {}, false
  for i = 1, y.ndim do spec[i] = {} end
  for i = 1, m do
    if crops[i][1] > 0 or crops[i][2] > 0 then
      spec[i + 1] = { crops[i][1], out[i + 1] - crops[i][2] }
      cut = true
    end
  end
  return cut and y:slice(spec) or y
end

-- For tide.batch_to_space (ops/tf_top_ops.lua), which checks its arguments first: a table, so tide.nn, which
-- takes this module's functions, does not list it.
M.internal = { batch_to_space = batch_to_space }

-- with_space_to_batch(input, dilation_rate, padding, op, {filter_shape, spatial_dims, data_format}) as tf.nn's:
-- op(converted, num_spatial_dims, "VALID") on the space_to_batch of input by dilation_rate, padded as `padding`
-- ("SAME" needs filter_shape) and to a multiple of the rate, then batch_to_space back with the extra cropped.
-- All rates 1: op(input, num_spatial_dims, padding).
function M.with_space_to_batch(input, dilation_rate, padding, op_fn, ...)
  local op = "with_space_to_batch"
  local o = args.parse(op, { "filter_shape", "spatial_dims", "data_format", "name" }, ...)
  local x = convert.arg(input, op)
  if type(op_fn) ~= "function" then binding.error(op .. ": op must be a function (input, num_spatial_dims, padding)") end
  local rate = args.int_list(op, "dilation_rate", binding.istensor(dilation_rate) and dilation_rate:totable() or
    (type(dilation_rate) == "number" and { dilation_rate } or dilation_rate))
  local m = #rate
  if m < 1 then binding.error(op .. ": dilation_rate must hold at least one rate") end
  for i, r in ipairs(rate) do
    if r < 1 then binding.error(fmt("%s: dilation_rate must be positive, got %d at %d", op, r, i - 1)) end
  end
  local mode = type(padding) == "string" and padding:upper() or nil
  if mode ~= "SAME" and mode ~= "VALID" then
    binding.error(fmt("%s: padding must be \"SAME\" or \"VALID\", got %s", op, tostring(padding)))
  end
  local first = (type(o.data_format) == "string" and o.data_format:sub(1, 2) == "NC") and 2 or 1
  local sd = {}
  if o.spatial_dims ~= nil then
    sd = args.int_list(op, "spatial_dims", o.spatial_dims)
    if #sd ~= m then binding.error(fmt("%s: spatial_dims must hold %d dims (one per rate), got %d", op, m, #sd)) end
    for i = 2, m do
      if sd[i] <= sd[i - 1] then binding.error(op .. ": spatial_dims must be increasing") end
    end
    if sd[1] < 1 then binding.error(op .. ": spatial_dims must be >= 1 (dim 0 is the batch)") end
  else
    for i = 1, m do sd[i] = first + i - 1 end
  end
  if x.ndim >= 0 and x.ndim <= sd[m] then
    binding.error(fmt("%s: input of shape %s has no dim %d (spatial_dims)", op, tostring(x.shape), sd[m]))
  end
  local ones = true
  for _, r in ipairs(rate) do if r ~= 1 then ones = false end end
  if ones then return op_fn(x, m, mode) end
  -- base paddings: SAME pads (filter - 1) * rate, split as TF (the extra at the end)
  local base = {}
  for i = 1, m do base[i] = { 0, 0 } end
  if mode == "SAME" then
    if o.filter_shape == nil then binding.error(op .. ": filter_shape is required for padding \"SAME\"") end
    local fs = args.int_list(op, "filter_shape", binding.istensor(o.filter_shape) and o.filter_shape:totable() or
      o.filter_shape)
    if #fs < m then binding.error(fmt("%s: filter_shape must hold at least %d dims, got %d", op, m, #fs)) end
    for i = 1, m do
      local extra = (fs[i] - 1) * rate[i]
      base[i] = { math.floor(extra / 2), extra - math.floor(extra / 2) }
    end
  end
  -- TF's required_space_to_batch_paddings: pad the end up to a multiple of the rate, crop that off after
  local pads, crops = {}, {}
  for i = 1, m do
    local n = tonumber(x.dims[sd[i]])
    if n < 0 then binding.error(fmt("%s: spatial dim %d of input must be known, got shape %s", op, sd[i], tostring(x.shape))) end
    local full = n + base[i][1] + base[i][2]
    local extra = (rate[i] - full % rate[i]) % rate[i]
    pads[i], crops[i] = { base[i][1], base[i][2] + extra }, { 0, extra }
  end
  -- dims between 1 and the last spatial dim that are not spatial get rate 1, no padding
  local bs, p, c, k = {}, {}, {}, 1
  for dim = 1, sd[m] do
    if sd[k] == dim then bs[dim], p[dim], c[dim], k = rate[k], pads[k], crops[k], k + 1
    else bs[dim], p[dim], c[dim] = 1, { 0, 0 }, { 0, 0 } end
  end
  local y = op_fn(nn_forms.space_to_batch(x, bs, p), m, "VALID")
  y = convert.arg(y, op)
  if y.ndim >= 0 and y.ndim <= sd[m] then
    binding.error(fmt("%s: op's result of shape %s lacks the spatial dims", op, tostring(y.shape)))
  end
  return batch_to_space(op, y, bs, c)
end

-- ---- isotonic regression ----

-- Pool adjacent violators on one row (Lua numbers): the segment id of each value for the non-increasing fit.
-- A value joins the block before it while that block's mean is below its own (TF keeps equal means apart).
local function pav(row)
  local sums, counts, n = {}, {}, 0
  for _, v in ipairs(row) do
    n = n + 1
    sums[n], counts[n] = v, 1
    while n > 1 and sums[n - 1] / counts[n - 1] < sums[n] / counts[n] do
      sums[n - 1], counts[n - 1] = sums[n - 1] + sums[n], counts[n - 1] + counts[n]
      sums[n], counts[n] = nil, nil
      n = n - 1
    end
  end
  local ids = {}
  for s = 1, n do for _ = 1, counts[s] do ids[#ids + 1] = s - 1 end end
  return ids
end

-- isotonic_regression(inputs, {decreasing = true, axis = -1}) as tf.nn's: the closest (least squares)
-- non-increasing (decreasing) or non-decreasing sequence along axis, and the int32 segment ids of its runs.
-- Integer inputs give float32 (8 and 16 bits) or float64. The segments come from the values, so it runs
-- eagerly (inside tide.trace an error says so); the output's gradient is the segment mean's, as TF's.
function M.isotonic_regression(inputs, ...)
  local op = "isotonic_regression"
  local o = args.parse(op, { "decreasing", "axis", "name" }, ...)
  local x = convert.arg(inputs, op)
  if context.is_symbolic(x) then
    binding.error(op .. ": runs eagerly only (its segments come from the values); call it outside tide.trace")
  end
  if not dtype.is_float[x.dt] then
    if not dtype.is_int[x.dt] then binding.error(fmt("%s: inputs must be a real number tensor, got %s", op, x.dtype)) end
    local small = x.dtype == "int8" or x.dtype == "uint8" or x.dtype == "int16" or x.dtype == "uint16"
    x = math_ops.cast(x, small and "float32" or "float64")
  end
  local decreasing = args.bool(op, "decreasing", o.decreasing, true)
  if x.ndim == 0 then binding.error(op .. ": inputs must have rank >= 1, got a scalar") end
  local axis = o.axis == nil and -1 or o.axis
  if type(axis) ~= "number" or axis < -x.ndim or axis >= x.ndim then
    binding.error(fmt("%s: axis %s is out of range for rank %d", op, tostring(axis), x.ndim))
  end
  if axis < 0 then axis = axis + x.ndim end
  -- the axis innermost, as rows [R, n]
  local perm, inv = nil, nil
  if axis ~= x.ndim - 1 then
    perm = {}
    for d = 0, x.ndim - 1 do if d ~= axis then perm[#perm + 1] = d end end
    perm[#perm + 1] = axis
    inv = {}
    for i, d in ipairs(perm) do inv[d + 1] = i - 1 end
    x = shape.transpose(x, perm)
  end
  local moved = {}
  for d = 0, x.ndim - 1 do moved[d + 1] = tonumber(x.dims[d]) end
  local n = moved[#moved]
  local flat = shape.reshape(x, { -1 })
  local total = tonumber(flat.dims[0])
  if total == 0 then return shape.transpose(x, inv or {}), math_ops.cast(shape.transpose(x, inv or {}), "int32") end
  local vals = math_ops.cast(flat, "float64"):totable()
  local gid, seg = {}, {}
  if n > 0 then
    for r = 0, total / n - 1 do
      local row = {}
      for j = 1, n do row[j] = decreasing and vals[r * n + j] or -vals[r * n + j] end
      local ids = pav(row)
      for j = 1, n do gid[r * n + j], seg[r * n + j] = r * n + ids[j], ids[j] end
    end
  end
  local g = convert.tensor(gid, "int32")
  local fit = shape.gather(segment.unsorted_segment_mean(flat, g, total), g)
  local out, segs = shape.reshape(fit, moved), shape.reshape(convert.tensor(seg, "int32"), moved)
  if inv then out, segs = shape.transpose(out, inv), shape.transpose(segs, inv) end
  return out, segs
end

return M
