-- stdlib/tide/ops/keras_index.lua — tide.ops' numpy indexing, searching and counting (keras.ops): take,
-- searchsorted, digitize, isin, select, nonzero, unique, histogram, bincount, scatter and slice forms, casts.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local update_ops = require "tide.ops.update"
local more = require "tide.ops.math_more"
local segment = require "tide.ops.segment"
local dyn = require "tide.ops.dynamic_shape"
local u = require "tide.ops.keras_util"

local M = {}
local m, r, s = math_ops, reduce_ops, shape_ops
local fmt = string.format

-- take(x, indices, axis=None): slices along axis (of the flattened x without one); negative indices count
-- from the end.
function M.take(x, indices, ...)
  local o = args.parse("take", { "axis" }, ...)
  x = u.arg("take", x)
  indices = u.arg("take", indices, "indices")
  if u.is_float(indices) then indices = m.cast(indices, "int32") end
  local ax = 0
  if o.axis == nil then x = u.flat(x) else ax = u.axis("take", o.axis, u.rank("take", x)) end
  local n = m.cast(dyn.size_along(x, ax), indices.dtype)
  indices = m.where(m.less(indices, 0), m.add(indices, n), indices)
  return s.gather(x, indices, ax)
end

-- searchsorted(sorted_sequence, values, side="left"): where each value would go in the 1-D sequence (int32).
function M.searchsorted(seq, values, ...)
  local o = args.parse("searchsorted", { "side" }, ...)
  seq = u.arg("searchsorted", seq, "sorted_sequence")
  values = convert.coerce(values, seq, "searchsorted", 2)
  if seq.ndim ~= 1 then
    binding.error(fmt("searchsorted: sorted_sequence must be 1-D, got shape %s", tostring(seq.shape)))
  end
  local side = o.side or "left"
  if side ~= "left" and side ~= "right" then
    binding.error("searchsorted: side must be \"left\" or \"right\", got " .. tostring(side))
  end
  local v = s.expand_dims(values, -1)
  local before = side == "left" and m.less(seq, v) or m.less_equal(seq, v)
  return r.reduce_sum(m.cast(before, "int32"), -1)
end

-- digitize(x, bins): the bin of each value (bins increasing): i with bins[i-1] <= x < bins[i] (int32).
function M.digitize(x, bins)
  x = u.arg("digitize", x)
  bins = convert.coerce(bins, x, "digitize", 2)
  if bins.ndim ~= 1 then binding.error(fmt("digitize: bins must be 1-D, got shape %s", tostring(bins.shape))) end
  return r.reduce_sum(m.cast(m.less_equal(bins, s.expand_dims(x, -1)), "int32"), -1)
end

-- isin(x1, x2): whether each element of x1 is among x2's.
function M.isin(a, b)
  a = u.arg("isin", a, "x1")
  b = convert.coerce(b, a, "isin", 2)
  return r.reduce_any(m.equal(s.expand_dims(a, -1), u.flat(b)), -1)
end

-- select(condlist, choicelist, default=0): from the first choice whose condition holds, else default.
function M.select(condlist, choicelist, ...)
  local o = args.parse("select", { "default" }, ...)
  if type(condlist) ~= "table" or type(choicelist) ~= "table" or binding.istensor(condlist) or
      binding.istensor(choicelist) or #condlist ~= #choicelist or #condlist == 0 then
    binding.error("select: condlist and choicelist must be lists of one (nonzero) length")
  end
  local first = u.arg("select", choicelist[1], "choicelist")
  local out = m.add(create_ops.zeros_like(first), o.default or 0)
  for i = #condlist, 1, -1 do
    out = m.where(u.arg("select", condlist[i], "condlist"), convert.coerce(choicelist[i], first, "select", 2), out)
  end
  return out
end

-- nonzero(x): a list, one int32 tensor per dim, of the nonzero elements' indices (eager: the count is data).
function M.nonzero(x)
  x = u.arg("nonzero", x)
  local idx = m.cast(m.where(m.not_equal(x, create_ops.zeros_like(x))), "int32")
  local out = {}
  for d = 0, x.ndim - 1 do out[d + 1] = s.gather(idx, d, 1) end
  return out
end

-- unravel_index(indices, shape): a list of each flat index's coordinates (int32, C order).
function M.unravel_index(indices, shape)
  indices = u.arg("unravel_index", indices, "indices")
  if type(shape) ~= "table" or #shape == 0 then binding.error("unravel_index: shape must be a non-empty list") end
  local out, stride = {}, 1
  for d = #shape, 1, -1 do
    out[d] = m.floormod(m.floor_divide(indices, stride), shape[d])
    stride = stride * shape[d]
  end
  return out
end

-- argpartition(x, kth, axis=-1): indices that put the kth smallest in place, the smaller ones before it
-- (the smallest kth + 1 ascending, then the rest descending: Keras's TF order).
function M.argpartition(x, kth, ...)
  local o = args.parse("argpartition", { "axis" }, ...)
  x = u.arg("argpartition", x)
  local rank = u.rank("argpartition", x)
  local ax = u.axis("argpartition", o.axis == nil and -1 or o.axis, rank)
  local n = u.dim("argpartition", x, ax)
  kth = args.int("argpartition", "kth", kth)
  if kth < -n or kth >= n then binding.error(fmt("argpartition: kth %d out of range for size %d", kth, n)) end
  if kth < 0 then kth = kth + n end
  local y, back = u.axis_last(x, ax)
  local _, low = r.top_k(m.neg(y), kth + 1)
  if kth + 1 == n then return back(low) end
  local taken = r.reduce_sum(s.one_hot(low, n, { dtype = "int32" }), -2)
  local lowest = u.is_float(y) and -math.huge or (y.dtype:match("^u") and 0 or -2 ^ 31)
  if y.dtype == "int64" then lowest = -2 ^ 62 end
  local masked = m.where(m.cast(taken, "bool"), m.add(create_ops.zeros_like(y), lowest), y)
  local _, high = r.top_k(masked, n - kth - 1)
  return back(s.concat({ low, high }, -1))
end

-- scatter(indices, values, shape): zeros of shape with values added at indices (tf.scatter_nd).
function M.scatter(indices, values, shape) return index_ops.scatter_nd(indices, values, shape) end

-- scatter_update(inputs, indices, updates, reduction=None): inputs with the updates written (or added,
-- reduction "add") at indices.
function M.scatter_update(x, indices, updates, ...)
  local o = args.parse("scatter_update", { "reduction" }, ...)
  if o.reduction == nil then return index_ops.tensor_scatter_nd_update(x, indices, updates) end
  if o.reduction == "add" then return index_ops.tensor_scatter_nd_add(x, indices, updates) end
  binding.error("scatter_update: reduction must be nil or \"add\", got " .. tostring(o.reduction))
end

-- The slice spec {start, start + size} per dim (slice's shape entries of -1 run to the end).
local function box(op, x, start, sizes)
  local rank = u.rank(op, x)
  if binding.istensor(start) then start = start:totable() end
  if type(start) ~= "table" or #start ~= rank then
    binding.error(fmt("%s: start_indices needs %d entries for shape %s", op, rank, tostring(x.shape)))
  end
  local spec = {}
  for d = 1, rank do
    local n = sizes[d] == -1 and u.dim(op, x, d - 1) - start[d] or sizes[d]
    spec[d] = { start[d], start[d] + n }
  end
  return spec
end

-- slice(inputs, start_indices, shape) and slice_update(inputs, start_indices, updates)
function M.slice(x, start, shape)
  x = u.arg("slice", x)
  if binding.istensor(shape) then shape = shape:totable() end
  if type(shape) ~= "table" then binding.error("slice: shape must be a list of sizes") end
  return x:slice(box("slice", x, start, shape))
end
function M.slice_update(x, start, updates)
  x = u.arg("slice_update", x)
  updates = convert.coerce(updates, x, "slice_update", 3)
  return update_ops.slice_update(x, box("slice_update", x, start, updates.shape:as_list()), updates)
end

-- unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False, axis=None, size=None,
-- fill_value=None): the distinct values of the flattened x (sorted), then the asked-for extras in numpy's
-- order (first index, inverse of x's shape, counts), as separate results. Eager: the count is data.
function M.unique(x, ...)
  local o = args.parse("unique", { "sorted", "return_index", "return_inverse", "return_counts", "axis", "size",
    "fill_value" }, ...)
  x = u.arg("unique", x)
  if o.axis ~= nil then binding.error("unique: axis is not supported (unique values of the flattened x only)") end
  local flat = u.flat(x)
  local y, idx = index_ops.unique(flat)
  local k = y.shape[1]
  if o.sorted ~= false then
    local perm = r.argsort(y)
    y = s.gather(y, perm)
    idx = s.gather(more.invert_permutation(perm), idx)
  end
  local outs = { y }
  if o.return_index then
    local pos = create_ops.range(0, flat.shape[1])
    outs[#outs + 1] = segment.unsorted_segment_min(pos, idx, k)
  end
  if o.return_inverse then outs[#outs + 1] = s.reshape(idx, x.shape:as_list()) end
  if o.return_counts then
    outs[#outs + 1] = segment.unsorted_segment_sum(create_ops.ones_like(idx), idx, k)
  end
  if o.size ~= nil then
    local size = args.int("unique", "size", o.size)
    for i, t in ipairs(outs) do
      if i ~= (o.return_inverse and (o.return_index and 3 or 2) or -1) then
        if size <= k then outs[i] = t:slice { { 0, size } }
        else
          local fill = i == 1 and (o.fill_value or 0) or 0
          outs[i] = s.pad(t, { { 0, size - k } }, "CONSTANT", fill)
        end
      end
    end
  end
  return unpack(outs)
end

-- histogram(x, bins=10, range=None): counts (float32, as Keras) of the flattened x in equal bins, and the
-- bin edges; the last bin includes its right edge; values outside range are left out.
function M.histogram(x, ...)
  local o = args.parse("histogram", { "bins", "range" }, ...)
  x = u.float_of(u.flat(u.arg("histogram", x)))
  local bins = o.bins == nil and 10 or args.int("histogram", "bins", o.bins)
  if bins <= 0 then binding.error("histogram: bins must be a positive whole number, got " .. bins) end
  local lo, hi
  if o.range ~= nil then
    if type(o.range) ~= "table" or #o.range ~= 2 then binding.error("histogram: range must be a (min, max) pair") end
    lo, hi = o.range[1], o.range[2]
  else
    lo, hi = r.reduce_min(x):item(), r.reduce_max(x):item()
  end
  if lo > hi then binding.error("histogram: range's min must not exceed its max") end
  if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
  local edges = create_ops.linspace(lo, hi, bins + 1, { dtype = x.dtype })
  local inside = m.logical_and(m.greater_equal(x, lo), m.less_equal(x, hi))
  local b = m.cast(m.floor(m.mul(m.sub(x, lo), bins / (hi - lo))), "int32")
  b = m.minimum(m.maximum(b, 0), bins - 1)
  b = m.where(inside, b, create_ops.zeros_like(b) - 1)
  local counts = segment.unsorted_segment_sum(m.cast(inside, x.dtype), m.maximum(b, 0), bins)
  return counts, edges
end

-- bincount(x, weights=None, minlength=0, sparse=False): counts of 0 .. n-1 in a 1-D x, or in each row of a
-- 2-D x (n = max + 1, at least minlength).
function M.bincount(x, ...)
  local o = args.parse("bincount", { "weights", "minlength", "sparse" }, ...)
  if o.sparse then binding.error("bincount: sparse = true is not supported (tide.sparse.bincount gives one)") end
  x = u.arg("bincount", x)
  if x.ndim == 1 then return more.bincount(x, { weights = o.weights, minlength = o.minlength }) end
  if x.ndim ~= 2 then binding.error(fmt("bincount: x must be 1-D or 2-D, got shape %s", tostring(x.shape))) end
  local rows = u.dim("bincount", x, 0)
  local n = math.max(r.reduce_max(x):item() + 1, o.minlength or 0)
  local off = s.reshape(m.mul(create_ops.range(0, rows, 1, x.dtype), n), { rows, 1 })
  local c = more.bincount(m.add(x, off), { weights = o.weights, minlength = rows * n })
  return s.reshape(c, { rows, n })
end

-- The range of each dtype (saturate_cast's bounds), and the largest float32 below 2^31 and 2^63.
local RANGE = { int8 = { -128, 127 }, uint8 = { 0, 255 }, int16 = { -32768, 32767 }, uint16 = { 0, 65535 },
  int32 = { -2 ^ 31, 2 ^ 31 - 1 }, int64 = { -2 ^ 63, 2 ^ 63 - 1 }, float16 = { -65504, 65504 },
  bfloat16 = { -3.3895313892515355e38, 3.3895313892515355e38 } }
local F32_BELOW = { int32 = 2147483520, int64 = 9223371487098961920 }
local F64_BELOW = { int64 = 9223372036854774784 }

-- saturate_cast(x, dtype): cast with values clipped to dtype's range first.
function M.saturate_cast(x, dtype)
  x = u.arg("saturate_cast", x)
  if type(dtype) ~= "string" then binding.error("saturate_cast: dtype must be a dtype name") end
  local rg = RANGE[dtype]
  if rg then
    local lo, hi = rg[1], rg[2]
    if x.dtype == "float32" and F32_BELOW[dtype] then hi = F32_BELOW[dtype]
    elseif x.dtype == "float64" and F64_BELOW[dtype] then hi = F64_BELOW[dtype] end
    local src = RANGE[x.dtype]
    if not (src and src[1] >= lo and src[2] <= hi) and x.dtype ~= "bool" then
      if not u.is_float(x) then
        lo, hi = math.max(lo, src and src[1] or lo), math.min(hi, src and src[2] or hi)
      end
      x = m.clip_by_value(x, lo, hi)
    end
  end
  return m.cast(x, dtype)
end

-- view(x, dtype=None): x's bytes read as another dtype (numpy's view: the last dim scales by the itemsizes'
-- ratio). Eager: a copy of the bytes (tide's tensors own typed storage).
local DT = require "tide.dtype"
function M.view(x, dtype)
  x = u.arg("view", x)
  if dtype == nil or dtype == x.dtype then return x end
  if type(dtype) ~= "string" or not DT.codes[dtype] then binding.error("view: dtype must be a dtype name") end
  if x.dtype == "string" or dtype == "string" then binding.error("view: string tensors have no fixed-size bytes") end
  if require("tide.tensor").is_symbolic(x) then binding.error("view: works eagerly only (it reads x's bytes)") end
  local from, to = DT.size[DT.codes[x.dtype]], DT.size[DT.codes[dtype]]
  local shape = x.shape:as_list()
  if #shape == 0 and from ~= to then
    binding.error(fmt("view: a scalar of %s cannot be viewed as %s (the itemsizes differ)", x.dtype, dtype))
  end
  if #shape > 0 then
    local bytes = shape[#shape] * from
    if bytes % to ~= 0 then
      binding.error(fmt("view: the last dim holds %d bytes, not a multiple of %s's %d", bytes, dtype, to))
    end
    shape[#shape] = bytes / to
  end
  local c = s.contiguous(x)
  local n = 1
  for _, d in ipairs(x.shape:as_list()) do n = n * d end
  local raw = n > 0 and require("ffi").string(c.data, n * from) or ""
  binding.keep_alive(c)
  return create_ops.from_buffer(raw, shape, { dtype = dtype })
end

return M
