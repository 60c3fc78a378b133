-- stdlib/tide/ops/keras_linalg.lua — tide.ops' products and statistics of numpy (keras.ops): dot, inner, vdot,
-- kron, tensordot, cross (2- and 3-vectors), correlate, vander, trapezoid, corrcoef, cdist.
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
local m, r, s = math_ops, reduce_ops, shape_ops
local fmt = string.format

local function pair(op, a, b)
  a = u.arg(op, a, "x1")
  if not binding.istensor(b) then b = convert.coerce(b, a, op, 2) end
  return a, b
end

M.tensordot = linalg_ops.tensordot

-- dot(x1, x2): numpy's: a scalar scales, 1-D with 1-D is the inner product, 2-D is matmul, N-D with 1-D
-- sums over the last axis, N-D with M-D contracts x1's last axis with x2's second-last.
function M.dot(a, b)
  a, b = pair("dot", a, b)
  if a.ndim == 0 or b.ndim == 0 then return m.mul(a, b) end
  if a.ndim == 1 and b.ndim == 1 then return r.reduce_sum(m.mul(a, b)) end
  if a.ndim == 2 and b.ndim == 2 then return linalg_ops.matmul(a, b) end
  if b.ndim == 1 then return linalg_ops.tensordot(a, b, { { a.ndim - 1 }, { 0 } }) end
  return linalg_ops.tensordot(a, b, { { a.ndim - 1 }, { b.ndim - 2 } })
end

-- inner(x1, x2): the sums over both last axes (x1's other dims, then x2's).
function M.inner(a, b)
  a, b = pair("inner", a, b)
  if a.ndim == 0 or b.ndim == 0 then return m.mul(a, b) end
  return linalg_ops.tensordot(a, b, { { a.ndim - 1 }, { b.ndim - 1 } })
end

-- vdot(x1, x2): the inner product of the flattened inputs.
function M.vdot(a, b)
  a, b = pair("vdot", a, b)
  return r.reduce_sum(m.mul(u.flat(a), u.flat(b)))
end

-- kron(x1, x2): the Kronecker product (the lower rank padded with leading 1s).
function M.kron(a, b)
  a, b = pair("kron", a, b)
  local ra, rb = u.rank("kron", a), u.rank("kron", b)
  local n = math.max(ra, rb)
  local da, db = {}, {}
  for i = 1, n do
    da[i] = i <= n - ra and 1 or u.dim("kron", a, i - 1 - (n - ra))
    db[i] = i <= n - rb and 1 or u.dim("kron", b, i - 1 - (n - rb))
  end
  -- a as [a0, 1, a1, 1, ...] times b as [1, b0, 1, b1, ...], then the pairs merged
  local sa, sb, out = {}, {}, {}
  for i = 1, n do
    sa[2 * i - 1], sa[2 * i] = da[i], 1
    sb[2 * i - 1], sb[2 * i] = 1, db[i]
    out[i] = da[i] * db[i]
  end
  return s.reshape(m.mul(s.reshape(a, sa), s.reshape(b, sb)), out)
end

-- cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None): cross products of 2- or 3-vectors (a 2-vector has
-- z = 0; two 2-vectors give the z component alone).
function M.cross(a, b, ...)
  local o = args.parse("cross", { "axisa", "axisb", "axisc", "axis" }, ...)
  a, b = pair("cross", a, b)
  local axa, axb, axc = o.axisa or -1, o.axisb or -1, o.axisc or -1
  if o.axis ~= nil then axa, axb, axc = o.axis, o.axis, o.axis end
  a = u.axis_last(a, u.axis("cross", axa, u.rank("cross", a), "axisa"))
  b = u.axis_last(b, u.axis("cross", axb, u.rank("cross", b), "axisb"))
  local na, nb = u.dim("cross", a, a.ndim - 1), u.dim("cross", b, b.ndim - 1)
  if (na ~= 2 and na ~= 3) or (nb ~= 2 and nb ~= 3) then
    binding.error(fmt("cross: the vectors must have 2 or 3 components, got %d and %d", na, nb))
  end
  local function comp(x, i) return s.gather(x, i, x.ndim - 1) end
  if na == 2 and nb == 2 then
    return m.sub(m.mul(comp(a, 0), comp(b, 1)), m.mul(comp(a, 1), comp(b, 0)))
  end
  local function as3(x, n)
    if n == 3 then return x end
    local pads = {}
    for i = 1, x.ndim - 1 do pads[i] = { 0, 0 } end
    pads[x.ndim] = { 0, 1 }
    return s.pad(x, pads)
  end
  a, b = as3(a, na), as3(b, nb)
  -- broadcast the two to one shape (tf.linalg.cross wants equal shapes)
  local zero = m.add(create_ops.zeros_like(a), create_ops.zeros_like(b))
  local c = linalg_ops.cross(m.add(a, zero), m.add(b, zero))
  local rank = c.ndim
  local ax = u.axis("cross", axc, rank, "axisc")
  if ax == rank - 1 then return c end
  local perm = {}
  for i = 0, rank - 2 do perm[#perm + 1] = i end
  table.insert(perm, ax + 1, rank - 1)
  return s.transpose(c, perm)
end

-- correlate(x1, x2, mode="valid"): numpy's cross-correlation of two 1-D tensors, c[k] = sum_n x1[n+k] x2[n],
-- for the k of each mode ("valid", "same", "full").
function M.correlate(a, b, ...)
  local o = args.parse("correlate", { "mode" }, ...)
  a, b = pair("correlate", a, b)
  a, b = u.float_of(a), m.cast(b, u.float_of(a).dtype)
  if a.ndim ~= 1 or b.ndim ~= 1 then
    binding.error(fmt("correlate: x1 and x2 must be 1-D, got %s and %s", tostring(a.shape), tostring(b.shape)))
  end
  local n, k = u.dim("correlate", a, 0), u.dim("correlate", b, 0)
  if n == 0 or k == 0 then binding.error("correlate: x1 and x2 must not be empty") end
  local mode = o.mode or "valid"
  local first, len -- the first k (of -(k-1) .. n-1) and how many
  if mode == "full" then first, len = -(k - 1), n + k - 1
  elseif mode == "valid" then first, len = math.min(0, n - k), math.abs(n - k) + 1
  elseif mode == "same" then
    len = math.max(n, k)
    first = -(k - 1) + (n >= k and math.floor((k - 1) / 2) or (n - 1 - math.floor((n - 1) / 2)))
  else binding.error("correlate: mode must be \"valid\", \"same\" or \"full\", got " .. tostring(mode)) end
  -- windows of x1 padded with k - 1 zeros each side: row j holds x1[first + j + i] for i in 0 .. k-1
  local padded = s.pad(a, { { k - 1, k - 1 } })
  local idx = {}
  for j = 0, len - 1 do
    local row = {}
    for i = 0, k - 1 do row[i + 1] = first + j + i + k - 1 end
    idx[j + 1] = row
  end
  local win = s.gather(padded, convert.tensor(idx, "int32"))
  return r.reduce_sum(m.mul(win, b), -1)
end

-- vander(x, N=None, increasing=False): the columns x^(N-1) .. x^0 (or x^0 .. x^(N-1)).
function M.vander(x, ...)
  local o = args.parse("vander", { "N", "increasing" }, ...)
  x = u.arg("vander", x)
  if x.ndim ~= 1 then binding.error(fmt("vander: x must be 1-D, got shape %s", tostring(x.shape))) end
  local n = o.N == nil and u.dim("vander", x, 0) or args.int("vander", "N", o.N)
  local p = {}
  for i = 1, n do p[i] = o.increasing and i - 1 or n - i end
  return m.pow(s.expand_dims(x, -1), m.cast(convert.tensor(p, "int32"), x.dtype))
end

-- trapezoid(y, x=None, dx=1.0, axis=-1): the trapezoid rule's integral along axis.
function M.trapezoid(y, ...)
  local o = args.parse("trapezoid", { "x", "dx", "axis" }, ...)
  y = u.float_of(u.arg("trapezoid", y))
  local rank = u.rank("trapezoid", y)
  local ax = u.axis("trapezoid", o.axis == nil and -1 or o.axis, rank)
  local n = u.dim("trapezoid", y, ax)
  local function part(t, lo, hi)
    local spec = {}
    for d = 1, t.ndim do spec[d] = {} end
    spec[t.ndim == 1 and 1 or ax + 1] = { lo, hi }
    return t:slice(spec)
  end
  local mid = m.div(m.add(part(y, 1, n), part(y, 0, math.max(n - 1, 0))), 2)
  local d
  if o.x ~= nil then
    local x = m.cast(u.arg("trapezoid", o.x, "x"), y.dtype)
    d = m.sub(part(x, 1, n), part(x, 0, math.max(n - 1, 0)))
  else d = o.dx == nil and 1 or o.dx end
  return r.reduce_sum(m.mul(mid, d), ax)
end

-- corrcoef(x): the correlation coefficients of x's rows (variables), clipped to [-1, 1].
function M.corrcoef(x)
  x = u.float_of(u.arg("corrcoef", x))
  if x.ndim == 1 then x = s.reshape(x, { 1, -1 }) end
  if x.ndim ~= 2 then binding.error(fmt("corrcoef: x must be 1-D or 2-D, got shape %s", tostring(x.shape))) end
  local c = m.sub(x, r.reduce_mean(x, 1, true))
  local cov = linalg_ops.matmul(c, c, { transpose_b = true })
  local d = m.sqrt(linalg_ops.diag_part(cov))
  local corr = m.div(m.div(cov, s.expand_dims(d, 1)), s.expand_dims(d, 0))
  return m.clip_by_value(corr, -1, 1)
end

-- cdist(x, y): the Euclidean distances between the rows of x [..., n, d] and of y [..., m, d].
function M.cdist(x, y)
  x, y = pair("cdist", x, y)
  x = u.float_of(x)
  y = m.cast(y, x.dtype)
  local diff = m.sub(s.expand_dims(x, -2), s.expand_dims(y, -3))
  return m.sqrt(r.reduce_sum(m.square(diff), -1))
end

return M
