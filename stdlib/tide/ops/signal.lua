-- stdlib/tide/ops/signal.lua — tf.signal's Fourier transforms (fft, ifft, rfft, irfft in 1, 2, 3
-- and n dims) and fftshift/ifftshift, over the registry's FFT ops (kernels/cpu/fft.c).
-- Complex values are tables {real = tensor, imag = tensor}, as tide.linalg.eig gives them.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local C, Tensor = binding.C, binding.Tensor
local istype = binding.ffi.istype
local fmt = string.format

local M = {}

local FFT, IFFT, RFFT, IRFFT = C.TIDE_OP_FFT, C.TIDE_OP_IFFT, C.TIDE_OP_RFFT, C.TIDE_OP_IRFFT

-- True when v is a complex value: a table with `real` and `imag`.
local function is_complex(v) return type(v) == "table" and not istype(Tensor, v) and v.real ~= nil end
M.is_complex = is_complex

-- The real and imaginary parts of `op`'s complex input: {real=, imag=}, or a real tensor (or Lua
-- values) whose imaginary part is 0 (TF wants a complex tensor; tide has no complex dtype).
local function complex_in(z, op)
  if z == nil then binding.error(op .. ": input is nil; expected {real = tensor, imag = tensor} or a tensor") end
  if is_complex(z) then
    if z.imag == nil then binding.error(op .. ": a complex input needs both `real` and `imag`") end
    local re = convert.arg(z.real, op)
    local im = istype(Tensor, z.imag) and z.imag or convert.coerce(z.imag, re, op, 2)
    return re, im
  end
  local re = convert.arg(z, op)
  return re, create.zeros_like(re)
end
M.complex_in = complex_in

local function complex(re, im) return { real = re, imag = im } end
M.complex = complex

-- Run FFT op `code` over the innermost #lengths axes (-1: TF's default length from the input).
local function run(code, inputs, lengths, nout)
  local a = dispatch.attrs()
  for i, v in ipairs(lengths) do a.ints[i - 1] = v end
  a.nints = #lengths
  return dispatch.run(code, a, inputs, nout)
end
M.run_op = run

-- fft_length as a Lua list of k lengths (nil: k times -1). A number, a list or a 1-D integer tensor.
local function lengths_of(op, v, k)
  local out = {}
  if v == nil then
    for i = 1, k do out[i] = -1 end
    return out
  end
  if istype(Tensor, v) then
    if v.ndim > 1 or v.ndim < 0 then binding.error(op .. ": fft_length must be a list of lengths (a 1-D tensor)") end
    local ok, t = pcall(function() return v:totable() end)
    if not ok then binding.error(op .. ": fft_length must be known when the op is called (a Lua list or an eager tensor)") end
    v = t
  end
  if type(v) == "number" then v = { v } end
  if type(v) ~= "table" then binding.error(fmt("%s: fft_length must be a list of %d lengths, got %s", op, k, type(v))) end
  if #v ~= k then binding.error(fmt("%s: fft_length must hold %d lengths, got %d", op, k, #v)) end
  for i = 1, k do
    local n = v[i]
    if type(n) ~= "number" or n ~= math.floor(n) then
      binding.error(fmt("%s: fft_length must hold integers, got %s", op, tostring(n)))
    end
    if n < 0 then binding.error(fmt("%s: fft_length must hold lengths >= 0, got %d", op, n)) end
    if n == 0 then binding.error(fmt("%s: fft_length must not hold 0 (TF 2.21 aborts the process on it)", op)) end
    out[i] = n
  end
  return out
end
M.lengths_of = lengths_of

local function rank_at_least(op, x, k)
  if x.ndim >= 0 and x.ndim < k then
    binding.error(fmt("%s: input must have rank >= %d, got shape %s", op, k, tostring(x.shape)))
  end
end

-- ---- 1, 2 and 3 dims, as TF's gen_spectral_ops and its rfft wrappers ----

local function complex_op(name, code, k)
  return function(input)
    local re, im = complex_in(input, name)
    rank_at_least(name, re, k)
    local lengths = lengths_of(name, nil, k)
    return complex(run(code, { re, im }, lengths, 2))
  end
end

local function rfft_op(name, k)
  return function(input, ...)
    local o = args.parse(name, { "fft_length" }, ...)
    local x = convert.arg(input, name)
    rank_at_least(name, x, k)
    return complex(run(RFFT, { x }, lengths_of(name, o.fft_length, k), 2))
  end
end

local function irfft_op(name, k)
  return function(input, ...)
    local o = args.parse(name, { "fft_length" }, ...)
    local re, im = complex_in(input, name)
    rank_at_least(name, re, k)
    return run(IRFFT, { re, im }, lengths_of(name, o.fft_length, k), 1)
  end
end

-- fft(input) / ifft(input) (and 2d, 3d): the DFT of the innermost 1, 2 or 3 axes; ifft scales by 1/N.
M.fft, M.ifft = complex_op("fft", FFT, 1), complex_op("ifft", IFFT, 1)
M.fft2d, M.ifft2d = complex_op("fft2d", FFT, 2), complex_op("ifft2d", IFFT, 2)
M.fft3d, M.ifft3d = complex_op("fft3d", FFT, 3), complex_op("ifft3d", IFFT, 3)
-- rfft(input, fft_length=nil) (and 2d, 3d): the half spectrum (innermost fft_length / 2 + 1) of a
-- real signal cropped or zero-padded to fft_length (default: its own dims).
M.rfft, M.rfft2d, M.rfft3d = rfft_op("rfft", 1), rfft_op("rfft2d", 2), rfft_op("rfft3d", 3)
-- irfft(input, fft_length=nil) (and 2d, 3d): the real signal of a half spectrum; fft_length's
-- default is the input's dims with 2 (m - 1) innermost, as TF.
M.irfft, M.irfft2d, M.irfft3d = irfft_op("irfft", 1), irfft_op("irfft2d", 2), irfft_op("irfft3d", 3)

-- ---- n dims over any axes, with TF 2.21's norm ("backward", "ortho", "forward") ----

-- The axes (0-based, distinct, in the given order) and lengths of an nd transform of x.
local function nd_args(op, x, fft_length, axes)
  local r = x.ndim
  if r < 0 then binding.error(op .. ": the input's rank must be known") end
  if axes ~= nil then
    if type(axes) == "number" then axes = { axes } end
    axes = args.int_list(op, "axes", axes)
  elseif fft_length ~= nil then
    local n = type(fft_length) == "number" and 1 or istype(Tensor, fft_length) and tonumber(fft_length.dims[0]) or #fft_length
    axes = {}
    for i = 1, n do axes[i] = r - n + i - 1 end
  else
    axes = {}
    for i = 1, r do axes[i] = i - 1 end
  end
  if #axes == 0 then binding.error(op .. ": axes must name at least one axis") end
  local seen = {}
  for i, a in ipairs(axes) do
    if a < -r or a >= r then binding.error(fmt("%s: axis %d is out of range for input of rank %d", op, a, r)) end
    if a < 0 then a = a + r end
    if seen[a] then binding.error(fmt("%s: axes must be distinct, got axis %d twice", op, a)) end
    seen[a], axes[i] = true, a
  end
  return axes, lengths_of(op, fft_length, #axes)
end

-- Move `axes` innermost (in their order) and back: the permutation and its inverse, or nil when in place.
local function perms(r, axes)
  local k, rest, p = #axes, {}, {}
  local inside = {}
  for _, a in ipairs(axes) do inside[a] = true end
  for a = 0, r - 1 do if not inside[a] then rest[#rest + 1] = a end end
  for _, a in ipairs(rest) do p[#p + 1] = a end
  for _, a in ipairs(axes) do p[#p + 1] = a end
  local ident = true
  for i = 1, r do if p[i] ~= i - 1 then ident = false end end
  if ident then return nil end
  local inv = {}
  for i = 1, r do inv[p[i] + 1] = i - 1 end
  return p, inv, k
end

local function permute(t, p) return p and shape.transpose(t, p) or t end

-- The N of a norm: the product of the lengths (from the output's dims where a length is -1).
local function scaled(op, norm, forward, lengths, dims_after, ts)
  norm = norm or "backward"
  if norm == "backward" then return ts end
  if norm ~= "ortho" and norm ~= "forward" then
    binding.error(fmt("%s: norm must be \"backward\", \"ortho\" or \"forward\", got %s", op, tostring(norm)))
  end
  local n = 1
  for i, l in ipairs(lengths) do
    if l < 0 then l = dims_after[i] end
    if l == nil or l < 0 then binding.error(op .. ": norm needs the transform's lengths known") end
    n = n * l
  end
  local f = norm == "ortho" and 1 / math.sqrt(n) or (forward and 1 / n or n)
  for i, t in ipairs(ts) do ts[i] = t * f end
  return ts
end

local function nd_op(name, kind)
  return function(input, ...)
    local o = args.parse(name, { "fft_length", "axes", "norm" }, ...)
    local x, im
    if kind == "r" then x = convert.arg(input, name) else x, im = complex_in(input, name) end
    local axes, lengths = nd_args(name, x, o.fft_length, o.axes)
    local p, inv = perms(x.ndim, axes)
    local ins = { permute(x, p) }
    if im then ins[2] = permute(im, p) end
    local code = kind == "c" and FFT or kind == "ic" and IFFT or kind == "r" and RFFT or IRFFT
    local outs = { run(code, ins, lengths, code == IRFFT and 1 or 2) }
    -- the lengths in the signal's domain: rfftnd's input, the others' outputs (irfftnd's real one)
    local src = kind == "r" and ins[1] or outs[1]
    local d, r, k = {}, src.ndim, #lengths
    for i = 1, k do d[i] = tonumber(src.dims[r - k + i - 1]) end
    outs = scaled(name, o.norm, kind == "c" or kind == "r", lengths, d, outs)
    for i = 1, #outs do outs[i] = permute(outs[i], inv) end
    if code == IRFFT then return outs[1] end
    return complex(outs[1], outs[2])
  end
end

-- fftnd(input, fft_length=nil, axes=nil, norm=nil) and ifftnd, rfftnd, irfftnd: over `axes`
-- (default: the last #fft_length axes, or all), rfftnd's halved axis the last of them.
M.fftnd, M.ifftnd = nd_op("fftnd", "c"), nd_op("ifftnd", "ic")
M.rfftnd, M.irfftnd = nd_op("rfftnd", "r"), nd_op("irfftnd", "ir")

-- ---- fftshift / ifftshift: a roll by half of each axis (numpy's) ----

local function roll_half(op, x, axes, inverse)
  if is_complex(x) then
    return complex(roll_half(op, x.real, axes, inverse), roll_half(op, x.imag, axes, inverse))
  end
  x = convert.arg(x, op)
  local r = x.ndim
  if r < 0 then binding.error(op .. ": the input's rank must be known") end
  if axes == nil then
    axes = {}
    for i = 1, r do axes[i] = i - 1 end
  elseif type(axes) == "number" then
    axes = { axes }
  else
    axes = args.int_list(op, "axes", axes)
  end
  for _, a in ipairs(axes) do
    if a < -r or a >= r then binding.error(fmt("%s: axis %d is out of range for input of rank %d", op, a, r)) end
    if a < 0 then a = a + r end
    local n = tonumber(x.dims[a])
    if n < 0 then binding.error(fmt("%s: axis %d's length must be known while tracing", op, a)) end
    local s = math.floor(n / 2)
    if inverse then s = n - s end -- a roll by -(n // 2)
    if n > 1 and s % n ~= 0 then
      local cut = n - s -- rolled by s: the last s elements come first
      local head, tail = {}, {}
      for i = 1, r do head[i], tail[i] = {}, {} end
      head[a + 1], tail[a + 1] = { cut }, { 0, cut }
      x = shape.concat({ x:slice(head), x:slice(tail) }, a)
    end
  end
  return x
end

-- fftshift(x, axes=nil): the zero frequency to the centre; ifftshift undoes it. x may be complex.
function M.fftshift(x, ...)
  local o = args.parse("fftshift", { "axes" }, ...)
  return roll_half("fftshift", x, o.axes, false)
end
function M.ifftshift(x, ...)
  local o = args.parse("ifftshift", { "axes" }, ...)
  return roll_half("ifftshift", x, o.axes, true)
end

return M
