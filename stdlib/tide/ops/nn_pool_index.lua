-- stdlib/tide/ops/nn_pool_index.lua — tf.nn's pools that also say where they looked: max_pool_with_argmax (TF's
-- flattened indices) and fractional_max_pool / fractional_avg_pool (TF's pooling sequences), composed of gathers.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local segment = require "tide.ops.segment"
local create = require "tide.ops.create"
local dyn = require "tide.ops.dynamic_shape"
local random = require "tide.random"
local fmt = string.format

local M = {}

-- The lowest value of a dtype: what padding holds so that a max never picks it.
local LOWEST = { int8 = -128, uint8 = 0, int16 = -32768, uint16 = 0, int32 = -2147483648, int64 = -2 ^ 63 }

-- A 4-D NHWC input with known H, W (and C: the indices count channels).
local function nhwc(op, value, what)
  local x = convert.arg(value, op)
  if x.ndim ~= 4 then binding.error(fmt("%s: %s must be 4-D [batch, height, width, channels], got shape %s", op,
    what or "input", tostring(x.shape))) end
  if not dtype.is_float[x.dt] and not dtype.is_int[x.dt] then
    binding.error(fmt("%s: %s must be a real number tensor, got %s", op, what or "input", x.dtype))
  end
  for i = 1, 3 do
    if tonumber(x.dims[i]) < 0 then
      binding.error(fmt("%s: the input's height, width and channels must be known, got shape %s", op, tostring(x.shape)))
    end
  end
  return x
end

-- ksize/strides as TF's: a number, {rows, cols}, or [1, rows, cols, 1].
local function window(op, what, v)
  if type(v) == "number" then return { v, v } end
  local l = args.int_list(op, what, binding.istensor(v) and v:totable() or v)
  if #l == 1 then return { l[1], l[1] } end
  if #l == 2 then return l end
  if #l == 4 then
    if l[1] ~= 1 or l[4] ~= 1 then binding.error(fmt("%s: %s in the batch and channel dims must be 1", op, what)) end
    return { l[2], l[3] }
  end
  binding.error(fmt("%s: %s must be a number or a list of 1, 2 or 4, got a list of %d", op, what, #l))
end

-- int32 [n, k] of source positions i * s + j.
local function taps(n, k, s)
  local flat = {}
  for i = 0, n - 1 do for j = 0, k - 1 do flat[#flat + 1] = i * s + j end end
  return shape.reshape(convert.tensor(flat, "int32"), { n, k })
end

-- max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", output_dtype="int64",
-- include_batch_in_index=false) as tf.nn's: the max pool and, for each output, the flattened index of the
-- input element it took, ((b * height + y) * width + x) * channels + c, b counted only with include_batch_in_index.
-- Ties go to the first element in row-major order of the window, as TF's CPU kernel.
function M.max_pool_with_argmax(input, ksize, strides, padding, ...)
  local op = "max_pool_with_argmax"
  local o = args.parse(op, { "data_format", "output_dtype", "include_batch_in_index", "name" }, ...)
  if (o.data_format or "NHWC") ~= "NHWC" then
    binding.error(fmt("%s: data_format must be \"NHWC\", got %s", op, tostring(o.data_format)))
  end
  local out_dt = o.output_dtype or "int64"
  if out_dt ~= "int64" and out_dt ~= "int32" then
    binding.error(fmt("%s: output_dtype must be int32 or int64, got %s", op, tostring(out_dt)))
  end
  local x = nhwc(op, input)
  local k, s = window(op, "ksize", ksize), window(op, "strides", strides)
  for i = 1, 2 do
    if k[i] < 1 or s[i] < 1 then binding.error(fmt("%s: ksize and strides must be >= 1, got %d and %d", op, k[i], s[i])) end
  end
  local mode = type(padding) == "string" and padding:upper() or nil
  if mode ~= "VALID" and mode ~= "SAME" then
    binding.error(fmt("%s: padding must be \"VALID\" or \"SAME\", got %s", op, tostring(padding)))
  end
  local h, w, c = tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  local oh, ow, pt, pl, pb, pr
  if mode == "SAME" then
    oh, ow = math.ceil(h / s[1]), math.ceil(w / s[2])
    local ph, pw = math.max((oh - 1) * s[1] + k[1] - h, 0), math.max((ow - 1) * s[2] + k[2] - w, 0)
    pt, pl = math.floor(ph / 2), math.floor(pw / 2)
    pb, pr = ph - pt, pw - pl
  else
    oh, ow = math.floor((h - k[1]) / s[1]) + 1, math.floor((w - k[2]) / s[2]) + 1
    pt, pl, pb, pr = 0, 0, 0, 0
  end
  if oh < 1 or ow < 1 then
    binding.error(fmt("%s: a %dx%d window does not fit input of shape %s with VALID padding", op, k[1], k[2],
      tostring(x.shape)))
  end
  -- pad with the dtype's lowest value (never the max), gather the windows: [N, oh, ow, kh * kw, C]
  if pt + pb + pl + pr > 0 then
    local low = dtype.is_float[x.dt] and -math.huge or LOWEST[x.dtype]
    x = shape.pad(x, { { 0, 0 }, { pt, pb }, { pl, pr }, { 0, 0 } }, { constant_values = low })
  end
  local rows = shape.gather(x, taps(oh, k[1], s[1]), 1)      -- [N, oh, kh, W', C]
  local cols = shape.gather(rows, taps(ow, k[2], s[2]), 3)   -- [N, oh, kh, ow, kw, C]
  local n = tonumber(x.dims[0])
  local win = shape.reshape(shape.transpose(cols, { 0, 1, 3, 2, 4, 5 }), { n >= 0 and n or -1, oh, ow, k[1] * k[2], c })
  local out = reduce.reduce_max(win, 3)
  -- the window offset j = ky * kw + kx of the first max, then the input position it stands for
  local j = reduce.argmax(win, 3, "int64")                   -- [N, oh, ow, C]
  local ky, kx = math_ops.floordiv(j, k[2]), math_ops.mod(j, k[2])
  local oy, ox = {}, {}
  for i = 0, oh - 1 do oy[i + 1] = i * s[1] - pt end
  for i = 0, ow - 1 do ox[i + 1] = i * s[2] - pl end
  local y = ky + shape.reshape(convert.tensor(oy, "int64"), { 1, oh, 1, 1 })
  local xx = kx + shape.reshape(convert.tensor(ox, "int64"), { 1, 1, ow, 1 })
  local cs = {}
  for i = 0, c - 1 do cs[i + 1] = i end
  local idx = (y * w + xx) * c + shape.reshape(convert.tensor(cs, "int64"), { 1, 1, 1, c })
  if args.bool(op, "include_batch_in_index", o.include_batch_in_index, false) then
    local b = shape.reshape(math_ops.cast(create.range(0, dyn.size_along(x, 0)), "int64"), { -1, 1, 1, 1 })
    idx = idx + b * (h * w * c)
  end
  if out_dt == "int32" then idx = math_ops.cast(idx, "int32") end
  return out, idx
end

-- ---- fractional pools ----

-- pooling_ratio as TF 2's: a number, {rows, cols} or [1, rows, cols, 1]; each >= 1, batch and channels 1.
local function ratios(op, v)
  local l
  if type(v) == "number" then l = { v, v }
  else
    if type(v) ~= "table" then binding.error(fmt("%s: pooling_ratio must be a number or a list, got %s", op, type(v))) end
    l = {}
    for i, r in ipairs(v) do
      if type(r) ~= "number" then binding.error(fmt("%s: pooling_ratio must hold numbers", op)) end
      l[i] = r
    end
    if #l == 1 then l = { l[1], l[1] }
    elseif #l == 4 then
      if l[1] ~= 1 or l[4] ~= 1 then
        binding.error(op .. ": pooling_ratio must be 1 in the batch and channel dims (TF pools neither)")
      end
      l = { l[2], l[3] }
    elseif #l ~= 2 then
      binding.error(fmt("%s: pooling_ratio must be a number or a list of 1, 2 or 4, got a list of %d", op, #l))
    end
  end
  for i = 1, 2 do
    if l[i] < 1 then binding.error(fmt("%s: pooling_ratio must be >= 1, got %s", op, tostring(l[i]))) end
  end
  return l
end

-- TF's GeneratePoolingSequence (fractional_pool_common.cc): the cumulative sequence [0, ..., n_in] of
-- n_out + 1 boundaries, each step k = n_in // n_out or k + 1; `u01` draws a number in [0, 1).
local function pooling_sequence(n_in, n_out, pseudo_random, u01)
  local diff = {}
  local k = math.floor(n_in / n_out)
  if n_in % n_out == 0 then
    for i = 1, n_out do diff[i] = k end
  elseif pseudo_random then
    local alpha = n_in / n_out
    local max_u = math.min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
    local u = u01() * max_u
    local cum = { [0] = 1, [n_out] = n_in + 1 }
    for i = 1, n_out - 1 do cum[i] = math.ceil(alpha * (i + u)) end
    for i = 0, n_out - 1 do diff[i + 1] = cum[i + 1] - cum[i] end
  else
    for i = 1, n_out do diff[i] = k + (i <= n_in % n_out and 1 or 0) end
    for i = n_out, 2, -1 do -- Fisher-Yates, as std::shuffle
      local j = math.floor(u01() * i) + 1
      diff[i], diff[j] = diff[j], diff[i]
    end
  end
  local seq = { 0 }
  for i = 1, n_out do seq[i + 1] = seq[i] + diff[i] end
  return seq
end

-- A given sequence (tide's extension: pool with TF's own): n_out + 1 increasing boundaries from 0 to n_in.
local function given_sequence(op, what, v, n_in, n_out)
  local l = args.int_list(op, what, binding.istensor(v) and v:totable() or v)
  if #l ~= n_out + 1 or l[1] ~= 0 or l[#l] ~= n_in then
    binding.error(fmt("%s: %s must hold %d boundaries from 0 to %d, got %d", op, what, n_out + 1, n_in, #l))
  end
  for i = 2, #l do
    if l[i] <= l[i - 1] then binding.error(fmt("%s: %s must increase, got %d after %d", op, what, l[i], l[i - 1])) end
  end
  return l
end

-- Pool axis `axis` of x through the windows of seq ([seq[i], seq[i + 1]), or up to seq[i + 1] inclusive when
-- overlapping, clipped to the axis), with unsorted segment max or mean over the gathered positions.
local function pool_axis(x, axis, seq, n_in, overlapping, seg_op)
  local idx, ids = {}, {}
  for i = 1, #seq - 1 do
    local last = math.min(overlapping and seq[i + 1] or seq[i + 1] - 1, n_in - 1)
    for p = seq[i], last do idx[#idx + 1], ids[#ids + 1] = p, i - 1 end
  end
  local g = shape.gather(x, convert.tensor(idx, "int32"), axis)
  local perm = { axis }
  for d = 0, 3 do if d ~= axis then perm[#perm + 1] = d end end
  local inv = {}
  for i, d in ipairs(perm) do inv[d + 1] = i - 1 end
  local pooled = seg_op(shape.transpose(g, perm), convert.tensor(ids, "int32"), #seq - 1)
  return shape.transpose(pooled, inv)
end

local function fractional(op, seg_op)
  return function(value, pooling_ratio, ...)
    local o = args.parse(op, { "pseudo_random", "overlapping", "seed", "pooling_sequences", "name" }, ...)
    local x = nhwc(op, value, "value")
    if seg_op == segment.unsorted_segment_mean and not dtype.is_float[x.dt] then
      -- TF's avg pool takes integers too (the mean truncated); tide's segment mean is float only
      binding.error(fmt("%s: value must be a float tensor, got %s", op, x.dtype))
    end
    local r = ratios(op, pooling_ratio)
    local h, w = tonumber(x.dims[1]), tonumber(x.dims[2])
    local oh, ow = math.floor(h / r[1]), math.floor(w / r[2])
    if oh < 1 or ow < 1 then
      binding.error(fmt("%s: pooling_ratio %s x %s leaves no output rows or columns of input shape %s", op,
        tostring(r[1]), tostring(r[2]), tostring(x.shape)))
    end
    local overlapping = args.bool(op, "overlapping", o.overlapping, false)
    local rows, cols
    if o.pooling_sequences ~= nil then
      local ps = o.pooling_sequences
      if type(ps) ~= "table" or #ps ~= 2 then
        binding.error(op .. ": pooling_sequences must be {row_pooling_sequence, col_pooling_sequence}")
      end
      rows = given_sequence(op, "row_pooling_sequence", ps[1], h, oh)
      cols = given_sequence(op, "col_pooling_sequence", ps[2], w, ow)
    else
      local seed = o.seed or 0
      if type(seed) ~= "number" or seed ~= math.floor(seed) then
        binding.error(fmt("%s: seed must be an integer, got %s", op, tostring(seed)))
      end
      -- seed 0 draws from the global generator (TF: nondeterministic); another seed is deterministic
      local draws = seed == 0 and random.uniform({ oh + ow + 2 }, { dtype = "float64" }) or
        random.stateless_uniform({ oh + ow + 2 }, { seed, 27 }, { dtype = "float64" })
      local u, at = draws:totable(), 0
      local function u01() at = at + 1; return u[at] end
      local pr = args.bool(op, "pseudo_random", o.pseudo_random, false)
      rows = pooling_sequence(h, oh, pr, u01)
      cols = pooling_sequence(w, ow, pr, u01)
    end
    local y = pool_axis(pool_axis(x, 1, rows, h, overlapping, seg_op), 2, cols, w, overlapping, seg_op)
    return y, convert.tensor(rows, "int64"), convert.tensor(cols, "int64")
  end
end

-- fractional_max_pool(value, pooling_ratio, pseudo_random=false, overlapping=false, seed=0) and
-- fractional_avg_pool: TF 2's, returning (output, row_pooling_sequence, col_pooling_sequence). The sequences
-- follow TF's algorithm with tide's random numbers (the same seed gives the same sequences, not TF's);
-- {pooling_sequences = {rows, cols}} pools with given ones (TF's, to compare). Drawn when the op is called:
-- a traced function keeps the sequences of its trace.
M.fractional_max_pool = fractional("fractional_max_pool", segment.unsorted_segment_max)
M.fractional_avg_pool = fractional("fractional_avg_pool", segment.unsorted_segment_mean)

return M
