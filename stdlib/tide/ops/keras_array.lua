-- stdlib/tide/ops/keras_array.lua — tide.ops' numpy array functions (keras.ops.numpy): making arrays (eye, tri,
-- meshgrid, logspace), splitting and stacking, moving values (roll, repeat, rot90, pad, diff), diagonals.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local linalg_ops = require "tide.ops.linalg"
local u = require "tide.ops.keras_util"

local M = {}
local m, s = math_ops, shape_ops
local fmt = string.format

local function int_tensor(list) return convert.tensor(list, "int32") end

-- A [rows, 1] and a [1, cols] int32 grid (row and column numbers) for the triangle and diagonal masks.
local function grid(rows, cols)
  return s.reshape(create_ops.range(0, rows), { rows, 1 }), s.reshape(create_ops.range(0, cols), { 1, cols })
end

-- tri(N, M=None, k=0, dtype=float32): ones at and below the k-th diagonal.
function M.tri(n, ...)
  local o = args.parse("tri", { "M", "k", "dtype" }, ...)
  n = args.int("tri", "N", n)
  local cols = o.M == nil and n or args.int("tri", "M", o.M)
  local i, j = grid(n, cols)
  return m.cast(m.less_equal(j, m.add(i, o.k or 0)), o.dtype or "float32")
end

-- eye(N, M=None, k=0, dtype=float32): ones on the k-th diagonal.
function M.eye(n, ...)
  local o = args.parse("eye", { "M", "k", "dtype" }, ...)
  n = args.int("eye", "N", n)
  local cols = o.M == nil and n or args.int("eye", "M", o.M)
  local i, j = grid(n, cols)
  return m.cast(m.equal(m.sub(j, i), o.k or 0), o.dtype or "float32")
end

-- The [rows, cols] mask of the last two dims of x where keep(i, j) holds.
local function tri_mask(op, x, keep)
  local rank = u.rank(op, x)
  if rank < 2 then binding.error(fmt("%s: x must have rank 2 or more, got shape %s", op, tostring(x.shape))) end
  local i, j = grid(u.dim(op, x, rank - 2), u.dim(op, x, rank - 1))
  return keep(i, j)
end

-- tril(x, k=0) / triu(x, k=0): x below (above) the k-th diagonal of its last two dims, zeros elsewhere.
function M.tril(x, ...)
  local k = args.parse("tril", { "k" }, ...).k or 0
  x = u.arg("tril", x)
  return m.where(tri_mask("tril", x, function(i, j) return m.less_equal(j, m.add(i, k)) end), x,
    create_ops.zeros_like(x))
end
function M.triu(x, ...)
  local k = args.parse("triu", { "k" }, ...).k or 0
  x = u.arg("triu", x)
  return m.where(tri_mask("triu", x, function(i, j) return m.greater_equal(j, m.add(i, k)) end), x,
    create_ops.zeros_like(x))
end

-- diag(x, k=0): a 1-D x as the k-th diagonal of a square matrix, or a 2-D x's k-th diagonal.
function M.diag(x, ...)
  local k = args.parse("diag", { "k" }, ...).k or 0
  x = u.arg("diag", x)
  if x.ndim == 1 then return linalg_ops.diag(x, { k = k }) end
  if x.ndim == 2 then return linalg_ops.diag_part(x, { k = k }) end
  binding.error(fmt("diag: x must be 1-D or 2-D, got shape %s", tostring(x.shape)))
end

-- diagflat(x, k=0): the flattened x as the k-th diagonal.
function M.diagflat(x, ...)
  local k = args.parse("diagflat", { "k" }, ...).k or 0
  return linalg_ops.diag(u.flat(u.arg("diagflat", x)), { k = k })
end

-- diagonal(x, offset=0, axis1=0, axis2=1): the diagonals of the (axis1, axis2) planes, on a last axis.
function M.diagonal(x, ...)
  local o = args.parse("diagonal", { "offset", "axis1", "axis2" }, ...)
  x = u.arg("diagonal", x)
  local rank = u.rank("diagonal", x)
  if rank < 2 then binding.error(fmt("diagonal: x must have rank 2 or more, got shape %s", tostring(x.shape))) end
  local a1 = u.axis("diagonal", o.axis1 or 0, rank, "axis1")
  local a2 = u.axis("diagonal", o.axis2 == nil and 1 or o.axis2, rank, "axis2")
  if a1 == a2 then binding.error("diagonal: axis1 and axis2 cannot be the same axis") end
  local perm = {}
  for i = 0, rank - 1 do if i ~= a1 and i ~= a2 then perm[#perm + 1] = i end end
  perm[#perm + 1], perm[#perm + 2] = a1, a2
  return linalg_ops.diag_part(s.transpose(x, perm), { k = o.offset or 0 })
end

-- trace(x, offset=0, axis1=0, axis2=1): the sums of those diagonals (numpy's trace; tide.trace is tf.function).
function M.trace(x, ...)
  return reduce_ops.reduce_sum(M.diagonal(x, ...), -1)
end

function M.empty(shape, ...)
  local o = args.parse("empty", { "dtype" }, ...)
  return create_ops.zeros(shape, o.dtype or "float32")
end
function M.empty_like(x, ...)
  local o = args.parse("empty_like", { "dtype" }, ...)
  x = u.arg("empty_like", x)
  return create_ops.zeros_like(x, o.dtype or x.dtype)
end

-- meshgrid(x1, x2, ..., indexing="xy"): a list of the coordinate grids (the trailing table may hold indexing).
function M.meshgrid(...)
  local xs, n = { ... }, select("#", ...)
  local indexing = "xy"
  if n > 0 and type(xs[n]) == "table" and args.is_options(xs[n]) then
    indexing = xs[n].indexing or "xy"
    for key in pairs(xs[n]) do
      if key ~= "indexing" then binding.error("meshgrid: unknown option " .. tostring(key)) end
    end
    xs[n] = nil
    n = n - 1
  end
  if indexing ~= "xy" and indexing ~= "ij" then
    binding.error("meshgrid: indexing must be \"xy\" or \"ij\", got " .. tostring(indexing))
  end
  local lens = {}
  for i = 1, n do
    xs[i] = u.flat(u.arg("meshgrid", xs[i]))
    lens[i] = u.dim("meshgrid", xs[i], 0)
  end
  local order = {}
  for i = 1, n do order[i] = i end
  if indexing == "xy" and n >= 2 then order[1], order[2] = 2, 1 end
  local full = {}
  for p, i in ipairs(order) do full[p] = lens[i] end
  local out = {}
  for i = 1, n do
    local shp = {}
    for p, j in ipairs(order) do shp[p] = j == i and lens[i] or 1 end
    out[i] = s.broadcast_to(s.reshape(xs[i], shp), full)
  end
  return out
end

-- keras.ops.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0) (scalar ends)
function M.linspace(start, stop, ...)
  local o = args.parse("linspace", { "num", "endpoint", "retstep", "dtype", "axis" }, ...)
  local num = o.num == nil and 50 or o.num
  if type(num) ~= "number" or num < 0 or num % 1 ~= 0 then
    binding.error("linspace: num must be a whole number >= 0, got " .. tostring(num))
  end
  if o.axis ~= nil and o.axis ~= 0 and o.axis ~= -1 then binding.error("linspace: axis must be 0 for scalar ends") end
  local endpoint = o.endpoint ~= false
  local dtype = o.dtype or "float32"
  local step = endpoint and (num > 1 and (stop - start) / (num - 1) or 0) or (num > 0 and (stop - start) / num or 0)
  local r
  if endpoint then
    r = create_ops.linspace(start, stop, num, { dtype = dtype })
  else
    r = create_ops.linspace(start, start + step * (num - 1), num, { dtype = dtype })
  end
  if o.retstep then return r, step end
  return r
end

-- logspace(start, stop, num=50, endpoint=True, base=10, dtype=None) and geomspace(start, stop, num=50, ...)
function M.logspace(start, stop, ...)
  local o = args.parse("logspace", { "num", "endpoint", "base", "dtype", "axis" }, ...)
  local lin = M.linspace(start, stop, { num = o.num, endpoint = o.endpoint, dtype = "float64" })
  return m.cast(m.pow(o.base or 10, lin), o.dtype or "float32")
end
function M.geomspace(start, stop, ...)
  local o = args.parse("geomspace", { "num", "endpoint", "dtype", "axis" }, ...)
  if type(start) ~= "number" or type(stop) ~= "number" or start == 0 or stop == 0 or (start < 0) ~= (stop < 0) then
    binding.error("geomspace: start and stop must be nonzero numbers of one sign")
  end
  local sign = start < 0 and -1 or 1
  local lin = M.linspace(math.log(math.abs(start)), math.log(math.abs(stop)),
    { num = o.num, endpoint = o.endpoint, dtype = "float64" })
  return m.cast(m.mul(m.exp(lin), sign), o.dtype or "float32")
end

-- split family: numpy's indices_or_sections (a count of equal parts, or the indices to split at).
local function split_at(op, x, spec, axis, uneven)
  x = u.arg(op, x)
  local rank = u.rank(op, x)
  local ax = u.axis(op, axis or 0, rank)
  local n = u.dim(op, x, ax)
  local sizes = {}
  if type(spec) == "number" then
    if spec % 1 ~= 0 or spec <= 0 then binding.error(fmt("%s: sections must be a positive whole number, got %s", op,
      tostring(spec))) end
    if not uneven and n % spec ~= 0 then
      binding.error(fmt("%s: dimension %d of size %d cannot be split into %d equal parts", op, ax, n, spec))
    end
    local base, extra = math.floor(n / spec), n % spec
    for i = 1, spec do sizes[i] = base + (i <= extra and 1 or 0) end
  elseif type(spec) == "table" then
    local at = 0
    for _, idx in ipairs(spec) do
      local e = math.max(at, math.min(idx < 0 and idx + n or idx, n))
      sizes[#sizes + 1] = e - at
      at = e
    end
    sizes[#sizes + 1] = n - at
  else
    binding.error(fmt("%s: indices_or_sections must be a number or a list, got %s", op, type(spec)))
  end
  local out, at = {}, 0
  for i, sz in ipairs(sizes) do
    local spec_t = {}
    for d = 1, rank do spec_t[d] = {} end
    spec_t[ax + 1] = { at, at + sz }
    out[i] = x:slice(spec_t)
    at = at + sz
  end
  return out
end
function M.split(x, spec, ...) return split_at("split", x, spec, args.parse("split", { "axis" }, ...).axis, false) end
function M.array_split(x, spec, ...)
  return split_at("array_split", x, spec, args.parse("array_split", { "axis" }, ...).axis, true)
end
function M.hsplit(x, spec)
  x = u.arg("hsplit", x)
  return split_at("hsplit", x, spec, x.ndim >= 2 and 1 or 0, false)
end
function M.vsplit(x, spec) return split_at("vsplit", x, spec, 0, false) end
function M.dsplit(x, spec) return split_at("dsplit", x, spec, 2, false) end

-- atleast_2d / atleast_3d as numpy's (for vstack and dstack)
local function atleast(x, n)
  local sh = x.shape:as_list()
  if #sh >= n then return x end
  if #sh == 0 then sh = { 1 } end
  if n == 2 or #sh == 2 then
    if #sh == 1 then sh = { 1, sh[1] } end
    if n == 3 then sh[#sh + 1] = 1 end
  else sh = { 1, sh[1], 1 } end
  return s.reshape(x, sh)
end
local function stack_list(op, xs, n, axis_of)
  if type(xs) ~= "table" or binding.istensor(xs) or #xs == 0 then
    binding.error(op .. ": expected a non-empty list of tensors")
  end
  local t = {}
  for i, x in ipairs(xs) do t[i] = atleast(u.arg(op, x), n) end
  return s.concat(t, axis_of(t[1]))
end
function M.hstack(xs) return stack_list("hstack", xs, 1, function(x) return x.ndim == 1 and 0 or 1 end) end
function M.vstack(xs) return stack_list("vstack", xs, 2, function() return 0 end) end
function M.dstack(xs) return stack_list("dstack", xs, 3, function() return 2 end) end

-- append(x1, x2, axis=None): concatenated (flattened first when no axis is given).
function M.append(a, b, ...)
  local o = args.parse("append", { "axis" }, ...)
  a, b = u.arg("append", a, "x1"), u.arg("append", b, "x2")
  if o.axis == nil then return s.concat({ u.flat(a), u.flat(b) }, 0) end
  return s.concat({ a, b }, o.axis)
end

-- roll(x, shift, axis=None): values moved shift places along axis (cyclically; the flattened x without one).
function M.roll(x, shift, ...)
  local o = args.parse("roll", { "axis" }, ...)
  x = u.arg("roll", x)
  if type(shift) ~= "number" or shift % 1 ~= 0 then binding.error("roll: shift must be a whole number") end
  local y, ax = x, nil
  if o.axis == nil then y, ax = u.flat(x), 0 else ax = u.axis("roll", o.axis, u.rank("roll", x)) end
  local n = u.dim("roll", y, ax)
  if n == 0 then return x end
  local idx = {}
  for i = 0, n - 1 do idx[i + 1] = (i - shift) % n end
  local r = s.gather(y, int_tensor(idx), ax)
  if o.axis == nil then return s.reshape(r, x.shape:as_list()) end
  return r
end

-- repeat(x, repeats, axis=None): each element (slice) repeated; repeats a number or one count per element.
M["repeat"] = function(x, repeats, ...)
  local o = args.parse("repeat", { "axis" }, ...)
  x = u.arg("repeat", x)
  local y, ax = x, 0
  if o.axis == nil then y = u.flat(x) else ax = u.axis("repeat", o.axis, u.rank("repeat", x)) end
  local n = u.dim("repeat", y, ax)
  if binding.istensor(repeats) then repeats = repeats.ndim == 0 and repeats:item() or repeats:totable() end
  if type(repeats) == "table" and #repeats ~= n then
    binding.error(fmt("repeat: %d repeats for %d elements", #repeats, n))
  end
  local idx = {}
  for i = 0, n - 1 do
    local k = type(repeats) == "number" and repeats or repeats[i + 1]
    if type(k) ~= "number" or k < 0 or k % 1 ~= 0 then
      binding.error(fmt("repeat: repeats must be whole numbers >= 0 (one per element, %d here)", n))
    end
    for _ = 1, k do idx[#idx + 1] = i end
  end
  return s.gather(y, int_tensor(idx), ax)
end

-- rot90(array, k=1, axes=(0, 1)): rotated by 90 degrees k times in the plane of axes (numpy's direction).
function M.rot90(x, ...)
  local o = args.parse("rot90", { "k", "axes" }, ...)
  x = u.arg("rot90", x)
  local rank = u.rank("rot90", x)
  if rank < 2 then binding.error(fmt("rot90: array must have rank 2 or more, got shape %s", tostring(x.shape))) end
  local axes = o.axes or { 0, 1 }
  local a0, a1 = u.axis("rot90", axes[1], rank), u.axis("rot90", axes[2], rank)
  if a0 == a1 then binding.error("rot90: the two axes must differ") end
  local k = (o.k == nil and 1 or args.int("rot90", "k", o.k)) % 4
  if k == 0 then return m.add(x, 0) end
  if k == 2 then return s.reverse(x, { a0, a1 }) end
  local perm = {}
  for i = 0, rank - 1 do perm[i + 1] = i end
  perm[a0 + 1], perm[a1 + 1] = a1, a0
  if k == 1 then return s.transpose(s.reverse(x, { a1 }), perm) end
  return s.reverse(s.transpose(x, perm), { a1 })
end

function M.fliplr(x)
  x = u.arg("fliplr", x)
  if u.rank("fliplr", x) < 2 then binding.error("fliplr: x must have rank 2 or more") end
  return s.reverse(x, { 1 })
end
function M.flipud(x)
  x = u.arg("flipud", x)
  if u.rank("flipud", x) < 1 then binding.error("flipud: x must have rank 1 or more") end
  return s.reverse(x, { 0 })
end

-- pad(x, pad_width, mode="constant", constant_values=None): numpy's pad_width (a number, a (before, after)
-- pair for every axis, or one pair per axis); modes constant, reflect and symmetric.
function M.pad(x, pad_width, ...)
  local o = args.parse("pad", { "mode", "constant_values" }, ...)
  x = u.arg("pad", x)
  local rank = u.rank("pad", x)
  local pw = pad_width
  if binding.istensor(pw) then pw = pw:totable() end
  local pairs_ = {}
  if type(pw) == "number" then
    for i = 1, rank do pairs_[i] = { pw, pw } end
  elseif type(pw) == "table" and type(pw[1]) == "number" then
    for i = 1, rank do pairs_[i] = { pw[1], pw[2] == nil and pw[1] or pw[2] } end
  elseif type(pw) == "table" and #pw == 1 and rank ~= 1 then
    for i = 1, rank do pairs_[i] = { pw[1][1], pw[1][2] } end
  elseif type(pw) == "table" then
    if #pw ~= rank then binding.error(fmt("pad: pad_width has %d pairs for rank %d", #pw, rank)) end
    pairs_ = pw
  else
    binding.error("pad: pad_width must be a number or a list of (before, after) pairs")
  end
  local mode = (o.mode or "constant"):lower()
  if mode ~= "constant" and mode ~= "reflect" and mode ~= "symmetric" then
    binding.error(fmt("pad: mode must be constant, reflect or symmetric, got %s", tostring(o.mode)))
  end
  if mode ~= "constant" and o.constant_values ~= nil then
    binding.error("pad: constant_values goes with mode \"constant\" only")
  end
  return s.pad(x, pairs_, mode:upper(), o.constant_values)
end

-- diff(a, n=1, axis=-1): the n-th differences along axis.
function M.diff(x, ...)
  local o = args.parse("diff", { "n", "axis" }, ...)
  x = u.arg("diff", x)
  local rank = u.rank("diff", x)
  if rank == 0 then binding.error("diff: a must have rank 1 or more") end
  local ax = u.axis("diff", o.axis == nil and -1 or o.axis, rank)
  local times = o.n == nil and 1 or args.int("diff", "n", o.n)
  if times < 0 then binding.error("diff: n must be >= 0, got " .. times) end
  for _ = 1, times do
    local len = u.dim("diff", x, ax)
    local hi, lo = {}, {}
    for d = 1, rank do hi[d], lo[d] = {}, {} end
    hi[ax + 1], lo[ax + 1] = { math.min(1, len), len }, { 0, math.max(len - 1, 0) }
    x = m.sub(x:slice(hi), x:slice(lo))
  end
  return x
end

-- numpy's windows of x points (symmetric, float32): bartlett, blackman, hamming, hanning, kaiser(x, beta).
local function window(op, n, f)
  if type(n) ~= "number" or n % 1 ~= 0 then binding.error(op .. ": x must be a whole number of points") end
  if n <= 0 then return create_ops.zeros({ 0 }, "float32") end
  if n == 1 then return create_ops.ones({ 1 }, "float32") end
  local vals = {}
  for i = 0, n - 1 do vals[i + 1] = f(i, n - 1) end
  return convert.tensor(vals, "float32")
end
local cos, pi = math.cos, math.pi
function M.bartlett(n) return window("bartlett", n, function(i, d) return 1 - math.abs(2 * i / d - 1) end) end
function M.blackman(n)
  return window("blackman", n, function(i, d) return 0.42 - 0.5 * cos(2 * pi * i / d) + 0.08 * cos(4 * pi * i / d) end)
end
function M.hamming(n) return window("hamming", n, function(i, d) return 0.54 - 0.46 * cos(2 * pi * i / d) end) end
function M.hanning(n) return window("hanning", n, function(i, d) return 0.5 - 0.5 * cos(2 * pi * i / d) end) end
-- I0 by its power series (enough terms for any beta a window uses)
local function i0(x)
  local sum, term, k = 1, 1, 1
  repeat
    term = term * (x / (2 * k)) ^ 2
    sum = sum + term
    k = k + 1
  until term < sum * 1e-17
  return sum
end
function M.kaiser(n, beta)
  if type(beta) ~= "number" then binding.error("kaiser: beta must be a number") end
  return window("kaiser", n, function(i, d)
    local t = 2 * i / d - 1
    return i0(beta * math.sqrt(math.max(0, 1 - t * t))) / i0(beta)
  end)
end

return M
