-- stdlib/tide/ops/keras_reduce.lua — tide.ops' numpy reductions (keras.ops.numpy): quantile, percentile and
-- median (numpy's methods), ptp, and the nan* family that skips NaNs (axis None reduces everything).
local binding = require "tide.binding"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local convert = require "tide.convert"
local u = require "tide.ops.keras_util"

local M = {}
local m, r = math_ops, reduce_ops
local fmt = string.format
local AXIS = { "axis", "keepdims", lists = { axis = true } }

-- The axes list of `axis` (nil: all), non-negative and sorted.
local function axes_of(op, x, axis)
  local rank = u.rank(op, x)
  local list = {}
  if axis == nil then
    for i = 0, rank - 1 do list[#list + 1] = i end
  else
    if type(axis) == "number" then axis = { axis } end
    for _, a in ipairs(axis) do list[#list + 1] = u.axis(op, a, rank) end
    table.sort(list)
  end
  return list, rank
end

-- x with the `axes` moved last and merged into one, and the shape the kept result has (keepdims or not).
local function merge_last(op, x, axes, rank, keepdims)
  local is_red, rest, kept = {}, {}, {}
  for _, a in ipairs(axes) do is_red[a] = true end
  local perm, n = {}, 1
  for i = 0, rank - 1 do
    if not is_red[i] then
      perm[#perm + 1] = i
      rest[#rest + 1] = x.shape[i + 1]
      kept[#kept + 1] = x.shape[i + 1]
    elseif keepdims then kept[#kept + 1] = 1 end
  end
  for _, a in ipairs(axes) do perm[#perm + 1] = a; n = n * u.dim(op, x, a) end
  local y = shape_ops.transpose(x, perm)
  local s = {}
  for i, d in ipairs(rest) do s[i] = d end
  s[#s + 1] = n
  return shape_ops.reshape(y, s), kept, n
end

local METHODS = { linear = true, lower = true, higher = true, nearest = true, midpoint = true }

-- The q-quantiles of x along axis; skip_nan counts only the non-NaN values of each slice (nanquantile).
local function quantile(op, x, q, axis, method, keepdims, skip_nan)
  x = u.float_of(u.arg(op, x))
  method = method or "linear"
  if not METHODS[method] then
    binding.error(fmt("%s: method must be linear, lower, higher, nearest or midpoint, got %s", op, tostring(method)))
  end
  local qs, scalar_q = q, false
  if type(q) == "number" then qs, scalar_q = { q }, true
  elseif type(q) == "table" and not binding.istensor(q) then qs = q
  else
    q = u.arg(op, q, "q")
    scalar_q = q.ndim == 0
    qs = scalar_q and { q:item() } or q:totable()
  end
  for _, v in ipairs(qs) do
    if type(v) ~= "number" or v < 0 or v > 1 or v ~= v then
      binding.error(fmt("%s: q must be in [0, 1] (percentiles in [0, 100]), got %s", op, tostring(v)))
    end
  end
  local axes, rank = axes_of(op, x, axis)
  local y, kept, n = merge_last(op, x, axes, rank, keepdims)
  local nan = skip_nan and m.is_nan(y) or nil
  if nan then y = m.where(nan, m.add(create_ops.zeros_like(y), math.huge), y) end
  local sorted = r.sort(y, -1)
  -- the count of values in each slice, [..., 1]
  local cnt
  if nan then cnt = r.reduce_sum(m.cast(m.logical_not(nan), y.dtype), -1, true)
  else cnt = m.add(create_ops.zeros_like(r.reduce_sum(y, -1, true)), n) end
  local last = m.maximum(m.sub(cnt, 1), 0)
  local outs = {}
  for i, qv in ipairs(qs) do
    local pos = m.mul(last, qv)
    local lo, hi = m.floor(pos), m.ceil(pos)
    if method == "lower" then hi = lo
    elseif method == "higher" then lo = hi
    elseif method == "nearest" then lo = m.round(pos); hi = lo end
    local vlo = shape_ops.gather(sorted, m.cast(lo, "int32"), { axis = rank - #axes, batch_dims = rank - #axes })
    local vhi = shape_ops.gather(sorted, m.cast(hi, "int32"), { axis = rank - #axes, batch_dims = rank - #axes })
    local v
    if method == "midpoint" then v = m.div(m.add(vlo, vhi), 2)
    else
      local frac = m.sub(pos, lo)
      v = m.where(m.equal(lo, hi), vlo, m.add(vlo, m.mul(m.sub(vhi, vlo), frac)))
    end
    -- an empty slice (all NaN) has no quantile
    v = m.where(m.equal(cnt, 0), m.add(create_ops.zeros_like(v), 0 / 0), v)
    outs[i] = shape_ops.reshape(v, kept)
  end
  if scalar_q then return outs[1] end
  return shape_ops.stack(outs, 0)
end

-- quantile(x, q, axis=None, method="linear", keepdims=False); percentile's q in [0, 100]; median's 0.5.
local QARGS = { "axis", "method", "keepdims", lists = { axis = true } }
local function percent(q)
  if type(q) == "number" then return q / 100 end
  if type(q) == "table" and not binding.istensor(q) then
    local t = {}
    for i, v in ipairs(q) do t[i] = v / 100 end
    return t
  end
  return m.div(m.cast(q, "float64"), 100)
end
function M.quantile(x, q, ...)
  local o = args.parse("quantile", QARGS, ...)
  return quantile("quantile", x, q, o.axis, o.method, o.keepdims, false)
end
function M.nanquantile(x, q, ...)
  local o = args.parse("nanquantile", QARGS, ...)
  return quantile("nanquantile", x, q, o.axis, o.method, o.keepdims, true)
end
function M.percentile(x, q, ...)
  local o = args.parse("percentile", QARGS, ...)
  return quantile("percentile", x, percent(q), o.axis, o.method, o.keepdims, false)
end
function M.nanpercentile(x, q, ...)
  local o = args.parse("nanpercentile", QARGS, ...)
  return quantile("nanpercentile", x, percent(q), o.axis, o.method, o.keepdims, true)
end
function M.median(x, ...)
  local o = args.parse("median", AXIS, ...)
  return quantile("median", x, 0.5, o.axis, "linear", o.keepdims, false)
end
function M.nanmedian(x, ...)
  local o = args.parse("nanmedian", AXIS, ...)
  return quantile("nanmedian", x, 0.5, o.axis, "linear", o.keepdims, true)
end

-- ptp(x, axis=None, keepdims=False): max - min.
function M.ptp(x, ...)
  local o = args.parse("ptp", AXIS, ...)
  x = u.arg("ptp", x)
  return m.sub(r.reduce_max(x, o.axis, o.keepdims), r.reduce_min(x, o.axis, o.keepdims))
end

-- The nan* reductions: NaNs replaced by the reduction's neutral value; a slice of only NaNs gives NaN where
-- numpy does (max, min, mean, var, std).
local function filled(x, v) return m.where(m.is_nan(x), m.add(create_ops.zeros_like(x), v), x) end
local function all_nan(x, o) return r.reduce_all(m.is_nan(x), o.axis, o.keepdims) end

local function nan_reduce(name, fill, f, empty_nan)
  return function(x, ...)
    local o = args.parse(name, AXIS, ...)
    x = u.arg(name, x)
    if not u.is_float(x) then return f(x, o.axis, o.keepdims) end
    local res = f(filled(x, fill), o.axis, o.keepdims)
    if empty_nan then res = m.where(all_nan(x, o), m.add(create_ops.zeros_like(res), 0 / 0), res) end
    return res
  end
end
M.nanmax = nan_reduce("nanmax", -math.huge, r.reduce_max, true)
M.nanmin = nan_reduce("nanmin", math.huge, r.reduce_min, true)
M.nansum = nan_reduce("nansum", 0, r.reduce_sum, false)
M.nanprod = nan_reduce("nanprod", 1, r.reduce_prod, false)

-- nanmean, nanvar, nanstd: over the non-NaN values (0/0 = NaN for a slice of NaNs only).
local function nan_count(x, o) return r.reduce_sum(m.cast(m.logical_not(m.is_nan(x)), x.dtype), o.axis, o.keepdims) end
function M.nanmean(x, ...)
  local o = args.parse("nanmean", AXIS, ...)
  x = u.float_of(u.arg("nanmean", x))
  return m.div(r.reduce_sum(filled(x, 0), o.axis, o.keepdims), nan_count(x, o))
end
function M.nanvar(x, ...)
  local o = args.parse("nanvar", AXIS, ...)
  x = u.float_of(u.arg("nanvar", x))
  local keep = { axis = o.axis, keepdims = true }
  local mean = m.div(r.reduce_sum(filled(x, 0), o.axis, true), nan_count(x, keep))
  local dev = m.where(m.is_nan(x), create_ops.zeros_like(x), m.square(m.sub(x, mean)))
  return m.div(r.reduce_sum(dev, o.axis, o.keepdims), nan_count(x, o))
end
function M.nanstd(x, ...) return m.sqrt(M.nanvar(x, ...)) end

-- nanargmax/nanargmin(x, axis=None, keepdims=False): NaNs never chosen (int32, axis None flattens).
local function nan_arg(name, fill, f)
  return function(x, ...)
    local o = args.parse(name, { "axis", "keepdims" }, ...)
    x = u.arg(name, x)
    if u.is_float(x) then x = filled(x, fill) end
    return f(x, o.axis, o.keepdims)
  end
end
-- keras.ops.argmax/argmin(x, axis=None, keepdims=False): axis None is over the flattened tensor; int32 as Keras.
local function arg_reduce(name)
  local f = reduce_ops[name]
  return function(x, ...)
    local o = args.parse(name, { "axis", "keepdims" }, ...)
    local r
    if o.axis == nil then
      r = f(u.flat(x), 0)
      if o.keepdims then r = shape_ops.reshape(r, (function()
        local s = {}
        for i = 1, #x.shape do s[i] = 1 end
        return s
      end)()) end
    else
      r = f(x, o.axis)
      if o.keepdims then r = shape_ops.expand_dims(r, o.axis) end
    end
    return math_ops.cast(r, "int32")
  end
end
M.argmax = arg_reduce("argmax")
M.argmin = arg_reduce("argmin")

M.nanargmax = nan_arg("nanargmax", -math.huge, function(x, a, k) return M.argmax(x, { axis = a, keepdims = k }) end)
M.nanargmin = nan_arg("nanargmin", math.huge, function(x, a, k) return M.argmin(x, { axis = a, keepdims = k }) end)

-- nancumsum/nancumprod(x, axis=None, dtype=None): NaNs count as 0 (1); axis None scans the flattened x.
local function nan_scan(name, fill, f)
  return function(x, ...)
    local o = args.parse(name, { "axis", "dtype" }, ...)
    x = u.arg(name, x)
    if o.dtype ~= nil then x = m.cast(x, o.dtype) end
    if u.is_float(x) then x = filled(x, fill) end
    if o.axis == nil then return f(u.flat(x), 0) end
    return f(x, o.axis)
  end
end
M.nancumsum = nan_scan("nancumsum", 0, r.cumsum)
M.nancumprod = nan_scan("nancumprod", 1, r.cumprod)

return M
