-- stdlib/tide/ops/tf_array.lua — TF's top-level array ops that tide lacked, as compositions of registry ops:
-- roll, searchsorted, sequence_mask, unravel_index, clip_by_norm(s), reverse_sequence, histograms ... (tide.<name>).
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local m = require "tide.ops.math"
local r = require "tide.ops.reduce"
local s = require "tide.ops.shape"
local create = require "tide.ops.create"
local norm = require "tide.ops.linalg_norm"
local index = require "tide.ops.index"
local segment = require "tide.ops.segment"
local fmt = string.format

local M = {}

local function arg(op, x, what, dt) return convert.tensor(x, dt, op .. " (" .. what .. ")") end

-- A whole number, or a 0-d tensor holding one.
local function whole(op, what, v)
  if binding.istensor(v) and v.ndim == 0 then v = v:item() end
  if type(v) ~= "number" or v % 1 ~= 0 then
    binding.error(fmt("%s: %s must be whole numbers, got %s", op, what, tostring(v)))
  end
  return v
end

-- A number or list of numbers (or a tensor of them) as a Lua list.
local function list_of(op, what, v)
  if binding.istensor(v) then v = v.ndim == 0 and { v:item() } or v:totable() end
  if type(v) ~= "table" then v = { v } end
  local out = {}
  for i = 1, #v do out[i] = whole(op, what, v[i]) end
  return out
end

-- roll(input, shift, axis) as tf.roll: shifts and axes are numbers or equal-length lists (shifts of a repeated
-- axis add up); elements leaving one end come back at the other.
function M.roll(x, shift, axis)
  x = arg("roll", x, "input")
  if axis == nil then binding.error("roll: axis is required (TF's tf.roll has no flattening form)") end
  local shifts, axes = list_of("roll", "shift", shift), list_of("roll", "axis", axis)
  if #shifts ~= #axes then
    binding.error(fmt("roll: shift and axis must have the same length, got %d and %d", #shifts, #axes))
  end
  local total, order = {}, {}
  for i, a in ipairs(axes) do
    if a < -x.ndim or a >= x.ndim then
      binding.error(fmt("roll: axis %d is out of range for a rank-%d input", a, x.ndim))
    end
    a = a % x.ndim
    if total[a] == nil then order[#order + 1] = a end
    total[a] = (total[a] or 0) + shifts[i]
  end
  local y = x
  for _, a in ipairs(order) do
    local n = x.shape[a + 1]
    if type(n) ~= "number" or n < 0 then
      binding.error(fmt("roll: dim %d of the input must be known (a traced None dim cannot be rolled yet)", a))
    end
    local k = n > 0 and total[a] % n or 0
    if k ~= 0 then
      local idx = {}
      for i = 0, n - 1 do idx[i + 1] = (i - k) % n end
      y = s.gather(y, convert.tensor(idx, "int32"), a)
    end
  end
  return rawequal(y, x) and s.identity(x) or y
end

-- searchsorted(sorted_sequence, values, side="left", out_type="int32") as tf.searchsorted: along the last
-- dim, each row of values looked up in the matching row of sorted_sequence (leading dims equal).
function M.searchsorted(seq, values, ...)
  local o = args.parse("searchsorted", { "side", "out_type" }, ...)
  seq = arg("searchsorted", seq, "sorted_sequence")
  values = convert.coerce(values, seq, "searchsorted", 2)
  if seq.ndim < 1 or values.ndim < 1 then
    binding.error("searchsorted: sorted_sequence and values must have rank >= 1")
  end
  local sd, vd = seq.shape:as_list(), values.shape:as_list()
  local same = #sd == #vd
  for i = 1, #sd - 1 do same = same and sd[i] == vd[i] end
  if not same then
    binding.error(fmt("searchsorted: leading dims of sorted_sequence %s and values %s must match",
      tostring(seq.shape), tostring(values.shape)))
  end
  local side, out_type = o.side or "left", o.out_type or "int32"
  if side ~= "left" and side ~= "right" then
    binding.error("searchsorted: side must be \"left\" or \"right\", got " .. tostring(side))
  end
  if out_type ~= "int32" and out_type ~= "int64" then
    binding.error("searchsorted: out_type must be int32 or int64, got " .. tostring(out_type))
  end
  local a, v = s.expand_dims(seq, -2), s.expand_dims(values, -1) -- [..., 1, N] against [..., M, 1]
  local before = side == "left" and m.less(a, v) or m.less_equal(a, v)
  return r.reduce_sum(m.cast(before, out_type), -1)
end

-- sequence_mask(lengths, maxlen=max(lengths), dtype="bool") as tf.sequence_mask: [..., maxlen], true where
-- the position is below the length.
function M.sequence_mask(lengths, ...)
  local o = args.parse("sequence_mask", { "maxlen", "dtype" }, ...)
  lengths = arg("sequence_mask", lengths, "lengths")
  if not (lengths.dtype == "int32" or lengths.dtype == "int64") then
    binding.error("sequence_mask: lengths must be int32 or int64, got " .. lengths.dtype)
  end
  local maxlen = o.maxlen
  if maxlen == nil then
    maxlen = lengths.size == 0 and 0 or r.reduce_max(lengths):item()
  else
    maxlen = whole("sequence_mask", "maxlen", maxlen)
  end
  if maxlen < 0 then binding.error(fmt("sequence_mask: maxlen must be >= 0, got %d", maxlen)) end
  local pos = m.cast(create.range(0, maxlen), lengths.dtype)
  local mask = m.less(pos, s.expand_dims(lengths, -1))
  return (o.dtype == nil or o.dtype == "bool") and mask or m.cast(mask, o.dtype)
end

-- unravel_index(indices, dims) as tf.unravel_index: the coordinates of flat indices in an array of shape
-- dims, [len(dims)] for a 0-d index and [len(dims), N] for a 1-D one.
function M.unravel_index(indices, dims)
  indices = arg("unravel_index", indices, "indices")
  if not (indices.dtype == "int32" or indices.dtype == "int64") then
    binding.error("unravel_index: indices must be int32 or int64, got " .. indices.dtype)
  end
  if indices.ndim > 1 then binding.error(fmt("unravel_index: indices must be 0-d or 1-D, got shape %s",
    tostring(indices.shape))) end
  local d = list_of("unravel_index", "dims", dims)
  local total = 1
  for _, v in ipairs(d) do
    if v <= 0 then binding.error(fmt("unravel_index: dims must be > 0, got %d", v)) end
    total = total * v
  end
  local flat = indices.ndim == 0 and { indices:item() } or indices:totable()
  for _, v in ipairs(flat) do
    if v < 0 or v >= total then
      binding.error(fmt("unravel_index: index %d is out of bounds for an array of %d elements", v, total))
    end
  end
  local rest, out = indices, {}
  for i = #d, 1, -1 do
    local n = convert.tensor(d[i], indices.dtype)
    out[i] = m.floormod(rest, n)
    rest = m.floordiv(rest, n)
  end
  return s.stack(out, 0)
end

-- clip_by_norm(t, clip_norm, axes=nil) as tf.clip_by_norm: t scaled so that its l2 norm (over axes, all by
-- default) is at most clip_norm: t * clip_norm / max(norm, clip_norm), a zero norm giving t unchanged.
function M.clip_by_norm(t, clip_norm, axes)
  t = arg("clip_by_norm", t, "t")
  if not t.dtype:find("float") then binding.error("clip_by_norm: t must be a float tensor, got " .. t.dtype) end
  local c = convert.coerce(clip_norm, t, "clip_by_norm", 2)
  if c.ndim ~= 0 then binding.error(fmt("clip_by_norm: clip_norm must be 0-d, got shape %s", tostring(c.shape))) end
  local sq = r.reduce_sum(m.mul(t, t), axes, { keepdims = true })
  local pos = m.greater(sq, 0)
  -- the sqrt sees ones where the sum is 0, so its gradient stays finite (TF's same guard)
  local l2 = m.where(pos, m.sqrt(m.where(pos, sq, create.ones_like(sq))), sq)
  return m.div(m.mul(t, c), m.maximum(l2, c))
end

-- clip_by_global_norm(t_list, clip_norm, use_norm=nil) as tf.clip_by_global_norm: every tensor scaled by
-- clip_norm / max(global_norm, clip_norm); returns (list, global_norm). nil entries stay nil; an infinite
-- or NaN global norm makes every value NaN (as TF).
function M.clip_by_global_norm(list, clip_norm, use_norm)
  if type(list) ~= "table" or binding.istensor(list) then
    binding.error("clip_by_global_norm: t_list must be a Lua list of tensors")
  end
  local n = 0
  for k in pairs(list) do
    if type(k) == "number" and k > n then n = k end
  end
  local present = {}
  for i = 1, n do
    if list[i] ~= nil then
      if not binding.istensor(list[i]) then
        binding.error(fmt("clip_by_global_norm: t_list[%d] is a %s, not a tensor", i, type(list[i])))
      end
      present[#present + 1] = list[i]
    end
  end
  local g = use_norm
  if g == nil then g = #present > 0 and norm.global_norm(present) or convert.tensor(0.0, "float32") end
  g = convert.tensor(g, nil, "clip_by_global_norm (use_norm)")
  local c = convert.coerce(clip_norm, g, "clip_by_global_norm", 2)
  local scale = m.mul(c, m.minimum(m.div(1, g), m.div(1, c)))
  -- a non-finite norm: TF's NaN for every value
  scale = m.where(m.is_finite(g), scale, convert.tensor(0 / 0, scale.dtype))
  local out = {}
  for i = 1, n do
    if list[i] ~= nil then out[i] = m.mul(list[i], m.cast(scale, list[i].dtype)) end
  end
  return out, g
end

-- reverse_sequence(input, seq_lengths, seq_axis, batch_axis=0) as tf.reverse_sequence: in each batch row b,
-- the first seq_lengths[b] slices along seq_axis reversed, the rest kept (a gather per row: differentiable).
function M.reverse_sequence(x, lengths, seq_axis, batch_axis)
  local op = "reverse_sequence"
  x = arg(op, x, "input")
  lengths = arg(op, lengths, "seq_lengths")
  if not (lengths.dtype == "int32" or lengths.dtype == "int64") then
    binding.error(op .. ": seq_lengths must be int32 or int64, got " .. lengths.dtype)
  end
  if seq_axis == nil then binding.error(op .. ": seq_axis is required") end
  local sa, ba = whole(op, "seq_axis", seq_axis), whole(op, "batch_axis", batch_axis or 0)
  for _, a in ipairs { sa, ba } do
    if a < -x.ndim or a >= x.ndim then
      binding.error(fmt("%s: axis %d is out of range for a rank-%d input", op, a, x.ndim))
    end
  end
  sa, ba = sa % x.ndim, ba % x.ndim
  if sa == ba then binding.error(fmt("%s: seq_axis and batch_axis must differ, both are %d", op, sa)) end
  local dims = x.shape:as_list()
  local B, T = dims[ba + 1], dims[sa + 1]
  if type(B) ~= "number" or type(T) ~= "number" then
    binding.error(op .. ": the batch and sequence dims of the input must be known")
  end
  if lengths.ndim ~= 1 or lengths.shape[1] ~= B then
    binding.error(fmt("%s: seq_lengths must have shape (%d,) (the batch dim), got %s", op, B, tostring(lengths.shape)))
  end
  if not require("tide.tensor").is_symbolic(lengths) then
    for b, l in ipairs(lengths:totable()) do
      if l < 0 or l > T then
        binding.error(fmt("%s: seq_lengths[%d] = %d is outside [0, %d] (the sequence dim)", op, b - 1, l, T))
      end
    end
  end
  -- [B, T] source positions: L-1-t for t < L, t itself past the length
  local pos = m.cast(create.range(0, T), lengths.dtype)
  local L = s.expand_dims(lengths, -1)
  local src = m.where(m.less(pos, L), m.sub(m.sub(L, 1), pos), m.add(m.mul(L, 0), pos))
  -- batch axis first, sequence axis second, then the rest in order
  local perm = { ba, sa }
  for i = 0, x.ndim - 1 do
    if i ~= ba and i ~= sa then perm[#perm + 1] = i end
  end
  local inv = {}
  for i, p in ipairs(perm) do inv[p + 1] = i - 1 end
  local y = s.gather(s.transpose(x, perm), src, 1, 1)
  return s.transpose(y, inv)
end

-- The bin of each value for the histograms: floor(nbins * (v - lo) / (hi - lo)), clamped to [0, nbins - 1].
local function bins_of(op, values, range, nbins)
  values = arg(op, values, "values")
  if not (values.dtype:find("float") or values.dtype:find("int")) then
    binding.error(op .. ": values must be a number tensor, got " .. values.dtype)
  end
  range = convert.coerce(range, values, op, 2)
  if range.ndim ~= 1 or range.shape[1] ~= 2 then
    binding.error(fmt("%s: value_range must have shape (2,), got %s", op, tostring(range.shape)))
  end
  nbins = whole(op, "nbins", nbins == nil and 100 or nbins)
  if nbins <= 0 then binding.error(fmt("%s: nbins must be > 0, got %d", op, nbins)) end
  local ft = values.dtype == "float64" and "float64" or (values.dtype:find("float") and values.dtype or "float64")
  local v, rg = m.cast(values, ft), m.cast(range, ft)
  local lo, hi = s.gather(rg, 0), s.gather(rg, 1)
  local scaled = m.div(m.sub(v, lo), m.sub(hi, lo))
  local idx = m.floor(m.mul(scaled, nbins))
  idx = m.minimum(m.maximum(idx, 0), nbins - 1)
  return m.cast(idx, "int32"), nbins
end

-- histogram_fixed_width_bins(values, value_range, nbins=100, dtype="int32") as TF's: each value's bin.
function M.histogram_fixed_width_bins(values, value_range, nbins, dt)
  local b = bins_of("histogram_fixed_width_bins", values, value_range, nbins)
  return (dt == nil or dt == "int32") and b or m.cast(b, dt)
end

-- histogram_fixed_width(values, value_range, nbins=100, dtype="int32") as TF's: the count in each of nbins
-- equal bins over value_range (values below land in the first bin, above in the last).
function M.histogram_fixed_width(values, value_range, nbins, dt)
  local b, n = bins_of("histogram_fixed_width", values, value_range, nbins)
  dt = dt or "int32"
  if dt ~= "int32" and dt ~= "int64" then
    binding.error("histogram_fixed_width: dtype must be int32 or int64, got " .. tostring(dt))
  end
  local flat = s.reshape(b, { -1 })
  return segment.unsorted_segment_sum(create.ones_like(flat, dt), flat, n)
end

-- unique_with_counts(x, out_idx="int32") as tf.unique_with_counts: tide.unique's y and idx, and how often each
-- value of y occurs in x.
function M.unique_with_counts(x, ...)
  local o = args.parse("unique_with_counts", { "out_idx" }, ...)
  local y, idx = index.unique(x, { out_idx = o.out_idx })
  local n = y.shape[1]
  if type(n) ~= "number" then
    binding.error("unique_with_counts: needs y's length (eager, or a trace where it is known)")
  end
  return y, idx, segment.unsorted_segment_sum(create.ones_like(idx), idx, n)
end

return M
