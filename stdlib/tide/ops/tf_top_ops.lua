-- stdlib/tide/ops/tf_top_ops.lua — TF's top-level ops that tide had under other names or not at all, composed of
-- registry ops: slice, strided_slice, realdiv, batch_to_space, required_space_to_batch_paddings,
-- broadcast_dynamic_shape, approx_top_k, conv, conv2d_backprop_*_v2, extract_volume_patches, and the registry ops
-- bitcast and fingerprint (tide.<name>).
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local tensor = require "tide.tensor"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local dispatch = require "tide.dispatch"
local fmt = string.format

local M = {}

local function fail(op, f, ...) binding.error(op .. ": " .. fmt(f, ...)) end

-- A list of integers from a Lua list or a (concrete) tensor; `what` names it in errors.
local function int_list(op, what, v)
  if binding.istensor(v) then
    if bit.band(v.flags, binding.C.TIDE_TENSOR_SYMBOLIC) ~= 0 then
      fail(op, "%s must be known while tracing (a Lua list or a constant tensor), got a traced tensor", what)
    end
    v = v.ndim == 0 and { v:item() } or v:totable()
  elseif type(v) == "number" then
    v = { v }
  end
  if type(v) ~= "table" then fail(op, "%s must be a list of integers, got %s", what, type(v)) end
  return args.int_list(op, what, v)
end

local function known_dims(op, x)
  if x.ndim < 0 then fail(op, "the input's rank must be known while tracing") end
  local d = {}
  for i = 0, x.ndim - 1 do d[i + 1] = tonumber(x.dims[i]) end
  return d
end

-- ---- slicing ------------------------------------------------------------------------------

-- slice(input, begin, size) as tf.slice: size[i] elements from begin[i] along each dim (-1: all the rest).
function M.slice(input, begin, size)
  local op = "slice"
  local x = convert.arg(input, op)
  local b, s = int_list(op, "begin", begin), int_list(op, "size", size)
  local d = known_dims(op, x)
  if #b ~= #d or #s ~= #d then
    fail(op, "begin and size must have one entry per dim of the input (rank %d), got %d and %d", #d, #b, #s)
  end
  local spec = {}
  for i = 1, #d do
    if b[i] < 0 or (d[i] >= 0 and b[i] > d[i]) then
      fail(op, "begin[%d] = %d is outside [0, %d] for shape %s", i - 1, b[i], d[i], tostring(x.shape))
    end
    local stop
    if s[i] == -1 then stop = nil
    elseif s[i] < 0 or (d[i] >= 0 and b[i] + s[i] > d[i]) then
      fail(op, "expected size[%d] in [0, %d], but got %d", i - 1, d[i] - b[i], s[i])
    else stop = b[i] + s[i] end
    spec[i] = { b[i], stop }
  end
  return tensor.slice(x, spec)
end

local function bit_set(mask, i) return bit.band(mask, bit.lshift(1, i)) ~= 0 end

-- strided_slice(input, begin, end, strides=1s, {begin_mask, end_mask, ellipsis_mask, new_axis_mask,
-- shrink_axis_mask}) as tf.strided_slice (Python's x[b:e:s, ...] written out): entry i of begin/end/strides is a
-- range, or '...' (ellipsis bit), a new axis (new_axis bit), or one index that drops the dim (shrink bit);
-- begin/end bits mean the range's start/stop is open. Runs as x:slice (one strided view).
function M.strided_slice(input, begin, end_, strides, ...)
  local op = "strided_slice"
  local o = args.parse(op, { "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "var",
    "name" }, ...)
  local x = convert.arg(input, op)
  local b, e = int_list(op, "begin", begin), int_list(op, "end", end_)
  local s = strides == nil and {} or int_list(op, "strides", strides)
  if strides == nil then for i = 1, #b do s[i] = 1 end end
  if #b ~= #e or #b ~= #s then
    fail(op, "begin, end and strides must have the same length, got %d, %d and %d", #b, #e, #s)
  end
  local masks = {}
  for _, k in ipairs { "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask" } do
    masks[k] = o[k] == nil and 0 or args.int(op, k, o[k])
  end
  local spec, nd = {}, x.ndim
  local dim = 0 -- the input dim entry i reads (known once '...' is placed)
  local ellipsis_seen = false
  for i = 0, #b - 1 do
    local st = s[i + 1]
    if bit_set(masks.ellipsis_mask, i) then
      if ellipsis_seen then fail(op, "multiple ellipses in slice spec not allowed") end
      ellipsis_seen = true
      spec[#spec + 1] = "..."
      if nd >= 0 then -- the dims the entries after it do not name
        local after = 0
        for j = i + 1, #b - 1 do
          if not bit_set(masks.new_axis_mask, j) then after = after + 1 end
        end
        dim = nd - after
      end
    elseif bit_set(masks.new_axis_mask, i) then
      spec[#spec + 1] = tensor.newaxis
    else
      if st == 0 then fail(op, "strides[%d] must be non-zero", i) end
      if bit_set(masks.shrink_axis_mask, i) then
        local n = nd >= 0 and x.dims[dim] >= 0 and tonumber(x.dims[dim]) or nil
        local at = b[i + 1]
        if n and (at >= n or at < -n) then fail(op, "slice index %d of dimension %d out of bounds", at, dim) end
        spec[#spec + 1] = at
      else
        local start = not bit_set(masks.begin_mask, i) and b[i + 1] or nil
        local stop = not bit_set(masks.end_mask, i) and e[i + 1] or nil
        spec[#spec + 1] = { start, stop, st }
      end
      dim = dim + 1
    end
  end
  if nd >= 0 and dim > nd then fail(op, "the slice spec names %d dims of a rank-%d input", dim, nd) end
  spec.n = #spec
  return tensor.slice(x, spec)
end

-- ---- arithmetic and shapes ----------------------------------------------------------------

-- realdiv(x, y) as tf.realdiv: x / y for floats (TF has no integer kernel: integers are refused).
function M.realdiv(x, y)
  local op = "realdiv"
  local t = binding.istensor(x) and x or (binding.istensor(y) and y) or nil
  local xt = binding.istensor(x) and x or (t and convert.coerce(x, t, op, 1) or convert.arg(x, op))
  local yt = binding.istensor(y) and y or convert.coerce(y, xt, op, 2)
  if not dtype.names[xt.dt]:find("float", 1, true) then
    fail(op, "x must be a float tensor (TF's RealDiv has no %s kernel), got %s", dtype.names[xt.dt], dtype.names[xt.dt])
  end
  return math_ops.div(xt, yt)
end

-- broadcast_dynamic_shape(shape_x, shape_y) as tf.broadcast_dynamic_shape: the broadcast of two shapes given as
-- int32/int64 1-D tensors (or Lua lists), as a tensor of their dtype.
function M.broadcast_dynamic_shape(shape_x, shape_y)
  local op = "broadcast_dynamic_shape"
  local dt = binding.istensor(shape_x) and dtype.names[shape_x.dt] or "int32"
  if dt ~= "int32" and dt ~= "int64" then fail(op, "shape_x must be int32 or int64, got %s", dt) end
  local a, b = int_list(op, "shape_x", shape_x), int_list(op, "shape_y", shape_y)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local p, q = a[#a - n + i] or 1, b[#b - n + i] or 1
    if p == q or q == 1 then out[i] = p
    elseif p == 1 then out[i] = q
    else fail(op, "Incompatible shapes: [%s] vs. [%s]", table.concat(a, ","), table.concat(b, ",")) end
  end
  if n == 0 then return convert.empty(dtype.code(dt, op), { 0 }, op) end
  return convert.tensor(out, dt, op)
end

-- batch_to_space(input, block_shape, crops) as tf.batch_to_space (BatchToSpaceND): space_to_batch's inverse, the
-- batch's blocks moved back into the M dims after the batch, then crops [M, 2] cut off.
function M.batch_to_space(input, block_shape, crops)
  local op = "batch_to_space"
  local x = convert.arg(input, op)
  local bs = int_list(op, "block_shape", block_shape)
  local c = binding.istensor(crops) and crops:totable() or crops
  local m = #bs
  local d = known_dims(op, x)
  if m < 1 or #d < m + 1 then
    fail(op, "input of shape %s needs at least %d dims for a block_shape of %d", tostring(x.shape), m + 1, m)
  end
  if type(c) ~= "table" or #c ~= m then fail(op, "crops must be [%d, 2]", m) end
  local prod = 1
  for i = 1, m do
    if bs[i] < 1 then fail(op, "block_shape[%d] must be at least 1, got %d", i - 1, bs[i]) end
    prod = prod * bs[i]
  end
  if d[1] >= 0 and d[1] % prod ~= 0 then
    fail(op, "Input batch dimension (%d) is not divisible by product of block sizes (%d)", d[1], prod)
  end
  for i = 1, m do
    local r = c[i]
    if type(r) ~= "table" or #r ~= 2 or r[1] < 0 or r[2] < 0 then
      fail(op, "crops[%d] must be two non-negative numbers", i - 1)
    end
    if d[i + 1] >= 0 and r[1] + r[2] > d[i + 1] * bs[i] then
      fail(op, "crops[%d] = {%d, %d} crop more than dim %d's %d", i - 1, r[1], r[2], i, d[i + 1] * bs[i])
    end
  end
  return require("tide.ops.nn_space").internal.batch_to_space(op, x, bs, c)
end

-- required_space_to_batch_paddings(input_shape, block_shape, base_paddings=0s) as TF's: the paddings that make
-- each dim of input_shape plus base_paddings a multiple of block_shape, and the crops that undo the extra.
function M.required_space_to_batch_paddings(input_shape, block_shape, base_paddings)
  local op = "required_space_to_batch_paddings"
  local shp, bs = int_list(op, "input_shape", input_shape), int_list(op, "block_shape", block_shape)
  if #shp ~= #bs then fail(op, "input_shape and block_shape must have the same length, got %d and %d", #shp, #bs) end
  local base = binding.istensor(base_paddings) and base_paddings:totable() or base_paddings
  local pads, crops = {}, {}
  for i = 1, #bs do
    local r = base and base[i] or { 0, 0 }
    if type(r) ~= "table" or #r ~= 2 then fail(op, "base_paddings must be [%d, 2]", #bs) end
    if bs[i] < 1 then fail(op, "block_shape[%d] must be at least 1, got %d", i - 1, bs[i]) end
    local full = shp[i] + r[1] + r[2]
    local extra = (bs[i] - full % bs[i]) % bs[i]
    pads[i] = { r[1], r[2] + extra }
    crops[i] = { 0, extra }
  end
  local function t(rows)
    if #rows == 0 then return convert.empty(binding.C.TIDE_INT32, { 0, 2 }, op) end
    return convert.tensor(rows, "int32", op)
  end
  return t(pads), t(crops)
end

-- approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=true, ...) as tf.approx_top_k: on
-- CPUs TF's search is exact, and so is tide's: the k largest (is_max_k) or smallest values along the axis, and
-- their int32 indices.
function M.approx_top_k(input, k, ...)
  local op = "approx_top_k"
  local o = args.parse(op, { "reduction_dimension", "recall_target", "is_max_k", "reduction_input_size_override",
    "aggregate_to_topk", "name" }, ...)
  local x = convert.arg(input, op)
  if k == nil then fail(op, "k is required") end
  k = args.int(op, "k", k)
  local is_max = args.bool(op, "is_max_k", o.is_max_k, true)
  local more = require "tide.ops.math_more"
  local fn = is_max and more.approx_max_k or more.approx_min_k
  return fn(x, k, { reduction_dimension = o.reduction_dimension, recall_target = o.recall_target,
    reduction_input_size_override = o.reduction_input_size_override, aggregate_to_topk = o.aggregate_to_topk })
end

-- ---- convolutions -------------------------------------------------------------------------

-- The spatial entries of a full-rank list (TF's [1, s..., 1] for channels last), checked.
local function spatial(op, what, v, rank, channels_first, default)
  if v == nil or (type(v) == "table" and #v == 0) then
    local out = {}
    for i = 1, rank - 2 do out[i] = default end
    return out
  end
  local list = int_list(op, what, v)
  if #list ~= rank then fail(op, "%s must have %d entries (one per input dim), got %d", what, rank, #list) end
  local first, last = channels_first and 3 or 2, channels_first and rank or rank - 1
  local out = {}
  for i = first, last do
    if list[i] < 1 then fail(op, "%s must be positive, got %d", what, list[i]) end
    out[#out + 1] = list[i]
  end
  return out
end

-- conv(input, filter, strides, padding, explicit_paddings={}, data_format="CHANNELS_LAST", dilations={},
-- batch_dims=1, groups=1) as tf.conv (TF's generic Conv op): a 2- or 3-D convolution by the filter's rank, with
-- full-rank strides/dilations, "EXPLICIT" pads as a flat list of pairs, leading batch dims and channel groups.
function M.conv(input, filter, strides, padding, ...)
  local op = "conv"
  local o = args.parse(op, { "explicit_paddings", "data_format", "dilations", "batch_dims", "groups", "name" }, ...)
  local x = convert.arg(input, op .. " (input)")
  local f = convert.arg(filter, op .. " (filter)")
  local nb = o.batch_dims == nil and 1 or args.int(op, "batch_dims", o.batch_dims)
  local g = o.groups == nil and 1 or args.int(op, "groups", o.groups)
  local fmt_ = o.data_format == nil and "CHANNELS_LAST" or tostring(o.data_format):upper()
  if fmt_ ~= "CHANNELS_LAST" and fmt_ ~= "CHANNELS_FIRST" then
    fail(op, "data_format must be \"CHANNELS_LAST\" or \"CHANNELS_FIRST\", got %s", tostring(o.data_format))
  end
  if nb < 1 then fail(op, "batch_dims must be at least 1, got %d", nb) end
  local xd = known_dims(op, x)
  local ns = f.ndim - 2
  if f.ndim < 0 or (ns ~= 2 and ns ~= 3) or #xd ~= ns + nb + 1 then
    fail(op, "The input must have 2 or 3 spatial dimensions but got %d (input shape %s, filter shape %s)",
      #xd - nb - 1, tostring(x.shape), tostring(f.shape))
  end
  local first = fmt_ == "CHANNELS_FIRST"
  local rank = ns + 2
  local s = spatial(op, "strides", strides, rank, first, 1)
  local dl = spatial(op, "dilations", o.dilations, rank, first, 1)
  local mode = type(padding) == "string" and padding:upper() or nil
  if mode ~= "SAME" and mode ~= "VALID" and mode ~= "EXPLICIT" then
    fail(op, "padding must be \"SAME\", \"VALID\" or \"EXPLICIT\", got %s", tostring(padding))
  end
  -- leading batch dims into one, channels last
  local lead = {}
  for i = 1, nb do lead[i] = xd[i] end
  if nb > 1 then
    local sh = { -1 }
    for i = nb + 1, #xd do sh[#sh + 1] = xd[i] end
    x = shape_ops.reshape(x, sh)
  end
  if first then
    local perm = { 0 }
    for i = 2, rank - 1 do perm[#perm + 1] = i end
    perm[#perm + 1] = 1
    x = shape_ops.transpose(x, perm)
  end
  if mode == "EXPLICIT" then
    local p = int_list(op, "explicit_paddings", o.explicit_paddings or {})
    if #p ~= 2 * rank then fail(op, "explicit_paddings must have %d entries (a pair per dim), got %d", 2 * rank, #p) end
    local pads = { { 0, 0 } }
    local off = first and 2 or 1
    for i = 1, ns do
      local lo, hi = p[2 * (off + i - 1) + 1], p[2 * (off + i - 1) + 2]
      if lo < 0 or hi < 0 then fail(op, "explicit_paddings must be non-negative") end
      pads[i + 1] = { lo, hi }
    end
    pads[#pads + 1] = { 0, 0 }
    x = shape_ops.pad(x, pads)
    mode = "VALID"
  elseif o.explicit_paddings ~= nil and #int_list(op, "explicit_paddings", o.explicit_paddings) > 0 then
    fail(op, "explicit_paddings needs padding \"EXPLICIT\"")
  end
  local run
  if ns == 2 then
    local nn_conv = require "tide.ops.nn_conv"
    run = function(a, k) return nn_conv.conv2d(a, k, { strides = s, padding = mode, dilations = dl }) end
  else
    local nn_conv_nd = require "tide.ops.nn_conv_nd"
    run = function(a, k) return nn_conv_nd.conv3d(a, k, { strides = s, padding = mode, dilations = dl }) end
  end
  local y
  if g == 1 then
    y = run(x, f)
  else
    local cin, cout = tonumber(x.dims[x.ndim - 1]), tonumber(f.dims[f.ndim - 1])
    if g < 1 or cin % g ~= 0 or cout % g ~= 0 then
      fail(op, "groups = %d must divide the input's %d and the filter's %d output channels", g, cin, cout)
    end
    local xs, fs = shape_ops.split(x, g, -1), shape_ops.split(f, g, -1)
    local ys = {}
    for i = 1, g do ys[i] = run(xs[i], fs[i]) end
    y = shape_ops.concat(ys, -1)
  end
  if first then
    local perm = { 0, rank - 1 }
    for i = 1, rank - 2 do perm[#perm + 1] = i end
    y = shape_ops.transpose(y, perm)
  end
  if nb > 1 then
    local sh = {}
    for i = 1, nb do sh[i] = lead[i] end
    for i = 1, y.ndim - 1 do sh[#sh + 1] = tonumber(y.dims[i]) end
    y = shape_ops.reshape(y, sh)
  end
  return y
end

local function conv_v2_opts(op, strides, padding, o)
  if o.explicit_paddings ~= nil and #int_list(op, "explicit_paddings", o.explicit_paddings) > 0 then
    local p = int_list(op, "explicit_paddings", o.explicit_paddings)
    if #p ~= 8 then fail(op, "explicit_paddings must have 8 entries, got %d", #p) end
    padding = { { p[1], p[2] }, { p[3], p[4] }, { p[5], p[6] }, { p[7], p[8] } }
  end
  return { strides = strides, padding = padding, data_format = o.data_format, dilations = o.dilations }
end

local V2_OPTS = { "use_cudnn_on_gpu", "explicit_paddings", "data_format", "dilations", "name" }

-- conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding, ...) as TF's: conv2d's gradient with
-- respect to its filter, shaped as `filter` (whose values are not read).
function M.conv2d_backprop_filter_v2(input, filter, out_backprop, strides, padding, ...)
  local op = "conv2d_backprop_filter_v2"
  local o = args.parse(op, V2_OPTS, ...)
  local f = convert.arg(filter, op .. " (filter)")
  return require("tide.ops.nn_conv").conv2d_backprop_filter(input, known_dims(op, f), out_backprop,
    conv_v2_opts(op, strides, padding, o))
end

-- conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding, ...) as TF's: conv2d's gradient with
-- respect to its input, shaped as `input` (whose values are not read).
function M.conv2d_backprop_input_v2(input, filter, out_backprop, strides, padding, ...)
  local op = "conv2d_backprop_input_v2"
  local o = args.parse(op, V2_OPTS, ...)
  local x = convert.arg(input, op .. " (input)")
  return require("tide.ops.nn_conv").conv2d_backprop_input(known_dims(op, x), filter, out_backprop,
    conv_v2_opts(op, strides, padding, o))
end

-- Output size and leading pad of one axis (TF's GetWindowedOutputSize, no dilation).
local function out_size(size, k, s, same)
  if same then
    local n = math.ceil(size / s)
    return n, math.floor(math.max((n - 1) * s + k - size, 0) / 2)
  end
  return math.max(math.floor((size - k) / s) + 1, 0), 0
end

-- int32 [n, k] of source positions: i * s + j.
local function taps(n, k, s)
  local flat = {}
  for i = 0, n - 1 do for j = 0, k - 1 do flat[#flat + 1] = i * s + j end end
  return shape_ops.reshape(convert.tensor(flat, "int32", "extract_volume_patches"), { n, k })
end

-- extract_volume_patches(input, ksizes, strides, padding) as TF's: every ksizes window of the [N, D, H, W, C] input,
-- `strides` apart, flattened into the depth: [N, od, oh, ow, kd * kh * kw * C] ("SAME" pads with zeros).
-- ksizes and strides are TF's [1, d, h, w, 1]. Gathers and a transpose, so it traces and differentiates.
function M.extract_volume_patches(input, ksizes, strides, padding)
  local op = "extract_volume_patches"
  local x = convert.arg(input, op)
  local d = known_dims(op, x)
  if #d ~= 5 then fail(op, "input must be 5-D [batch, planes, rows, cols, depth], got shape %s", tostring(x.shape)) end
  local k, s = int_list(op, "ksizes", ksizes), int_list(op, "strides", strides)
  for _, l in ipairs { { "ksizes", k }, { "strides", s } } do
    local v = l[2]
    if #v ~= 5 or v[1] ~= 1 or v[5] ~= 1 then
      fail(op, "%s must be [1, planes, rows, cols, 1], got {%s}", l[1], table.concat(v, ", "))
    end
    for i = 2, 4 do if v[i] < 1 then fail(op, "%s must be positive, got {%s}", l[1], table.concat(v, ", ")) end end
  end
  local mode = type(padding) == "string" and padding:upper() or padding
  if mode ~= "VALID" and mode ~= "SAME" then fail(op, "padding must be \"VALID\" or \"SAME\", got %s", tostring(padding)) end
  for i = 2, 5 do if d[i] < 0 then fail(op, "the input's spatial dims and depth must be known while tracing") end end
  local outs, pads, any = {}, { { 0, 0 } }, false
  for a = 1, 3 do
    local n, lo = out_size(d[a + 1], k[a + 1], s[a + 1], mode == "SAME")
    local last = (n - 1) * s[a + 1] + k[a + 1] - 1 - lo
    local hi = math.max(last - (d[a + 1] - 1), 0)
    outs[a], pads[a + 1] = n, { lo, hi }
    if lo > 0 or hi > 0 then any = true end
  end
  pads[5] = { 0, 0 }
  local depth = k[2] * k[3] * k[4] * d[5]
  if outs[1] == 0 or outs[2] == 0 or outs[3] == 0 then
    if d[1] < 0 then fail(op, "the input's batch must be known while tracing for an empty result") end
    return create.zeros({ d[1], outs[1], outs[2], outs[3], depth }, dtype.names[tonumber(x.dt)])
  end
  if any then x = shape_ops.pad(x, pads) end
  -- [N, D', H', W', C] -> [N, od, kd, H', W', C] -> [N, od, kd, oh, kh, W', C] -> [N, od, kd, oh, kh, ow, kw, C]
  local y = shape_ops.gather(x, taps(outs[1], k[2], s[2]), 1)
  y = shape_ops.gather(y, taps(outs[2], k[3], s[3]), 3)
  y = shape_ops.gather(y, taps(outs[3], k[4], s[4]), 5)
  y = shape_ops.transpose(y, { 0, 1, 3, 5, 2, 4, 6, 7 })
  return shape_ops.reshape(y, { d[1] >= 0 and d[1] or -1, outs[1], outs[2], outs[3], depth })
end

-- ---- bytes ----------------------------------------------------------------------------------

-- bitcast(input, type) as tf.bitcast: input's bytes read as dtype `type` (no conversion, host byte order): the
-- same element size keeps the shape, a smaller one adds a last dim of the size ratio, a larger one takes away a
-- last dim that must be that ratio. Not differentiable (TF's neither).
function M.bitcast(input, type_)
  local op = "bitcast"
  local x = convert.arg(input, op)
  if type_ == nil then fail(op, "type is required (a dtype such as tide.int32)") end
  local a = dispatch.attrs()
  a.dtype = dtype.code(type_, op)
  return dispatch.run(binding.C.TIDE_OP_BITCAST, a, { x })
end

-- fingerprint(data, method="farmhash64") as tf.fingerprint: TF's Fingerprint64 (farmhash) of each row of data (its
-- first dim), as uint8 [rows, 8], the same bytes TF gives: a row's numbers hashed as their bytes; a row of one
-- string as that string, of several as their fingerprints' bytes.
function M.fingerprint(data, method)
  local op = "fingerprint"
  local x = convert.arg(data, op)
  if method ~= nil and method ~= "farmhash64" then
    fail(op, "method must be \"farmhash64\" (TF's only one), got %s", tostring(method))
  end
  local a = dispatch.attrs()
  a.dtype, a.m = binding.C.TIDE_UINT8, 0
  return dispatch.run(binding.C.TIDE_OP_FINGERPRINT, a, { x })
end

return M
