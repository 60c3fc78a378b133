-- stdlib/tide/ops/tf_array.lua — TF's top-level array ops that tide lacked, as compositions of registry ops:
-- roll, searchsorted, sequence_mask, unravel_index, clip_by_norm, clip_by_global_norm (tide.<name>).
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local m = require "tide.ops.math"
local r = require "tide.ops.reduce"
local s = require "tide.ops.shape"
local create = require "tide.ops.create"
local norm = require "tide.ops.linalg_norm"
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

return M
