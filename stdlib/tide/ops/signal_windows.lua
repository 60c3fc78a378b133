-- stdlib/tide/ops/signal_windows.lua — tf.signal's window functions (hann, hamming, vorbis, kaiser,
-- kaiser_bessel_derived) with TF's formulas and options: values of a length alone, made in Lua.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local fmt = string.format

local M = {}

-- The window's length (a Lua integer >= min, or a 0-d integer tensor) and its dtype (a float, TF's default float32).
local function check(op, window_length, dt, min)
  local n = window_length
  if type(n) ~= "number" then
    local ok, v = pcall(function() return n:item() end)
    if not ok or type(v) ~= "number" then binding.error(op .. ": window_length must be an integer or a 0-d integer tensor") end
    n = v
  end
  if n ~= math.floor(n) or n < min then
    binding.error(fmt("%s: window_length must be an integer >= %d, got %s", op, min, tostring(n)))
  end
  dt = dt or "float32"
  if not dtype.is_float[dtype.code(dt, op)] then
    binding.error(fmt("%s: dtype must be a floating point type, got %s", op, tostring(dt)))
  end
  return n, dt
end

local function tensor(values, dt) return convert.tensor(values, dt) end

-- a - b cos(2 pi k / m) for k in [0, n): TF's raised cosine, where m is n - 1, or n when
-- `periodic` and n is even (TF adds one only for an even length); a window of 1 is {1}.
local function raised_cosine(op, a, b, window_length, opts)
  opts = opts or {}
  local n, dt = check(op, window_length, opts.dtype, 0)
  if n == 1 then return tensor({ 1 }, dt) end
  local periodic = opts.periodic ~= false
  local m = n - 1 + ((periodic and n % 2 == 0) and 1 or 0)
  local v = {}
  for k = 0, n - 1 do v[k + 1] = a - b * math.cos(2 * math.pi * k / m) end
  return tensor(v, dt)
end

-- hann_window(window_length, {periodic = true, dtype = "float32"}) as tf.signal.hann_window.
function M.hann_window(window_length, opts) return raised_cosine("hann_window", 0.5, 0.5, window_length, opts) end

-- hamming_window(window_length, {periodic = true, dtype = "float32"}) as tf.signal.hamming_window.
function M.hamming_window(window_length, opts) return raised_cosine("hamming_window", 0.54, 0.46, window_length, opts) end

-- vorbis_window(window_length, {dtype = "float32"}): sin(pi/2 sin^2(pi (k + 1/2) / n)).
function M.vorbis_window(window_length, opts)
  local n, dt = check("vorbis_window", window_length, (opts or {}).dtype, 0)
  local v = {}
  for k = 0, n - 1 do v[k + 1] = math.sin(math.pi / 2 * math.sin(math.pi * (k + 0.5) / n) ^ 2) end
  return tensor(v, dt)
end

-- log I0(x) for x >= 0 (the modified Bessel function of order 0): its series sum_k t_k, t_k =
-- ((x/2)^k / k!)^2, summed outwards from its largest term (k near x/2) taken as 1, so that no
-- term over- or underflows for a large beta.
local function log_i0(x)
  if x == 0 then return 0 end
  local q, top = (x / 2) ^ 2, math.floor(x / 2)
  local lt = top * math.log(q) -- log t_top
  for j = 2, top do lt = lt - 2 * math.log(j) end
  local sum, t = 1, 1
  for k = top, top + 100000 do -- t_(k+1) = t_k q / (k + 1)^2
    t = t * q / ((k + 1) * (k + 1))
    sum = sum + t
    if t < sum * 1e-17 then break end
  end
  t = 1
  for k = top, 1, -1 do -- t_(k-1) = t_k k^2 / q
    t = t * k * k / q
    sum = sum + t
    if t < sum * 1e-17 then break end
  end
  return lt + math.log(sum)
end

local function beta_of(op, opts)
  local beta = opts.beta == nil and 12 or opts.beta
  if type(beta) ~= "number" or beta ~= beta then binding.error(op .. ": beta must be a number") end
  return beta
end

-- kaiser_window(window_length, {beta = 12, dtype = "float32"}): I0(beta sqrt(1 - (2k/(n-1) - 1)^2)) / I0(beta).
-- TF's raises for a length of 0 (its range op): so does this, naming the op.
function M.kaiser_window(window_length, opts)
  opts = opts or {}
  local n, dt = check("kaiser_window", window_length, opts.dtype, 1)
  local beta = beta_of("kaiser_window", opts)
  if n == 1 then return tensor({ 1 }, dt) end
  local half, lb, v = (n - 1) / 2, log_i0(math.abs(beta)), {}
  for k = 0, n - 1 do
    local r = (k - half) / half
    v[k + 1] = math.exp(log_i0(math.abs(beta) * math.sqrt(math.max(0, 1 - r * r))) - lb)
  end
  return tensor(v, dt)
end

-- kaiser_bessel_derived_window(window_length, {beta = 12, dtype = "float32"}) as TF's: from the kaiser
-- window of n // 2 + 1, the square roots of its running sums over its total, then mirrored (length
-- 2 (n // 2): an odd n gives one less, as TF).
function M.kaiser_bessel_derived_window(window_length, opts)
  opts = opts or {}
  local n, dt = check("kaiser_bessel_derived_window", window_length, opts.dtype, 0)
  local half = math.floor(n / 2)
  local kw = M.kaiser_window(half + 1, { beta = beta_of("kaiser_bessel_derived_window", opts), dtype = "float64" })
  local w, sums, s = kw:totable(), {}, 0
  for k = 1, #w do
    s = s + w[k]
    sums[k] = s
  end
  local v = {}
  for k = 1, half do
    v[k] = math.sqrt(sums[k] / s)
    v[2 * half + 1 - k] = v[k]
  end
  return tensor(v, dt)
end

return M
