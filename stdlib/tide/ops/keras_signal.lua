-- stdlib/tide/ops/keras_signal.lua — keras.ops' Fourier names (fft, fft2, ifft2, rfft, irfft, stft, istft,
-- extract_sequences) over tide.signal, with Keras 3's complex values: a (real, imag) pair in, two tensors out.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local signal = require "tide.ops.signal"
local spectral = require "tide.ops.signal_spectral"
local windows = require "tide.ops.signal_windows"
local fmt = string.format

local M = {}

-- Keras's _get_complex_tensor_from_tuple: x is {real, imag} (a Lua list, Keras's tuple; {real =, imag =}, as
-- tide.signal gives, is taken too), both float tensors of one shape and dtype.
local function pair(op, x)
  local re, im
  if type(x) == "table" and not binding.ffi.istype(binding.Tensor, x) then
    if x.real ~= nil then re, im = x.real, x.imag else re, im = x[1], x[2] end
    if x[3] ~= nil then re = nil end
  end
  if re == nil or im == nil then
    binding.error(op .. ": x must be a pair {real, imag} of float tensors (Keras's complex values)")
  end
  re, im = convert.arg(re, op), convert.arg(im, op)
  if not dtype.is_float[re.dt] or not dtype.is_float[im.dt] then
    binding.error(fmt("%s: x's real and imaginary parts must be float tensors, got %s and %s", op, re.dtype, im.dtype))
  end
  if re.dtype ~= im.dtype then
    binding.error(fmt("%s: x's real and imaginary parts must have one dtype, got %s and %s", op, re.dtype, im.dtype))
  end
  local same = re.ndim == im.ndim
  for i = 0, (same and re.ndim or 0) - 1 do
    local a, b = tonumber(re.dims[i]), tonumber(im.dims[i])
    if a >= 0 and b >= 0 and a ~= b then same = false end
  end
  if not same then
    binding.error(fmt("%s: x's real and imaginary parts must have one shape, got %s and %s", op, tostring(re.shape),
      tostring(im.shape)))
  end
  return { real = re, imag = im }
end

-- The innermost k dims of a complex op's input must exist and be known (Keras's compute_output_spec).
local function inner_known(op, z, k)
  local x = z.real
  if x.ndim >= 0 and x.ndim < k then
    binding.error(fmt("%s: input must have rank >= %d, got shape %s", op, k, tostring(x.shape)))
  end
  for i = x.ndim - k, x.ndim - 1 do
    if x.ndim >= 0 and tonumber(x.dims[i]) < 0 then
      binding.error(fmt("%s: the input's last %d dims must be known, got shape %s", op, k, tostring(x.shape)))
    end
  end
end

local function unpair(z) return z.real, z.imag end

-- fft(x), fft2(x), ifft2(x): the DFT over the last axis, the last two, and the inverse over the last two.
function M.fft(x)
  local z = pair("fft", x)
  inner_known("fft", z, 1)
  return unpair(signal.fft(z))
end
function M.fft2(x)
  local z = pair("fft2", x)
  inner_known("fft2", z, 2)
  return unpair(signal.fft2d(z))
end
function M.ifft2(x)
  local z = pair("ifft2", x)
  inner_known("ifft2", z, 2)
  return unpair(signal.ifft2d(z))
end

local function length_opt(op, v)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= math.floor(v) then
    binding.error(fmt("%s: fft_length must be an integer, got %s", op, tostring(v)))
  end
  return { v }
end

-- rfft(x, fft_length=nil): the half spectrum of a real x over its last axis, as real and imaginary parts.
function M.rfft(x, ...)
  local o = args.parse("rfft", { "fft_length" }, ...)
  return unpair(signal.rfft(x, length_opt("rfft", o.fft_length)))
end

-- irfft(x, fft_length=nil): the real signal of a half spectrum {real, imag}.
function M.irfft(x, ...)
  local o = args.parse("irfft", { "fft_length" }, ...)
  local z = pair("irfft", x)
  inner_known("irfft", z, 1)
  return signal.irfft(z, length_opt("irfft", o.fft_length))
end

local function int_arg(op, what, v, min)
  if type(v) ~= "number" or v ~= math.floor(v) or v < min then
    binding.error(fmt("%s: %s must be an integer >= %d, got %s", op, what, min, tostring(v)))
  end
  return v
end

-- Keras's window: "hann" (its default) or "hamming", periodic, of sequence_length; a tensor or list of that
-- length; false for none (Keras's None: a Lua nil is the default). Padded to fft_length, centred.
local function window_array(op, window, seq, fft_length, dt)
  if window == false then return nil end
  if window == nil then window = "hann" end
  local w
  if type(window) == "string" then
    if window ~= "hann" and window ~= "hamming" then
      binding.error(fmt('%s: window must be "hann", "hamming", a tensor of sequence_length or false, got "%s"', op,
        window))
    end
    w = windows[window .. "_window"](seq, { periodic = true, dtype = dt })
  else
    w = convert.tensor(window, dt)
    if w.ndim ~= 1 or tonumber(w.dims[0]) ~= seq then
      binding.error(fmt("%s: window must have shape [sequence_length] = [%d], got %s", op, seq, tostring(w.shape)))
    end
  end
  local l = math.floor((fft_length - seq) / 2)
  if fft_length == seq then return w end
  return shape.pad(w, { { l, fft_length - seq - l } })
end

local function seq_args(op, sequence_length, sequence_stride, fft_length)
  local seq = int_arg(op, "sequence_length", sequence_length, 1)
  local stride = int_arg(op, "sequence_stride", sequence_stride, 1)
  local n = int_arg(op, "fft_length", fft_length, 1)
  if n < seq then
    binding.error(fmt("%s: fft_length must be >= sequence_length, got fft_length %d and sequence_length %d", op, n,
      seq))
  end
  return seq, stride, n
end

-- stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=true): the short-time Fourier
-- transform of float32/64 x over its last axis, [..., frames, fft_length // 2 + 1] twice. center pads x by
-- fft_length // 2 on each side with its reflection; the window is centred in frames of fft_length.
function M.stft(x, sequence_length, sequence_stride, fft_length, ...)
  local op = "stft"
  local o = args.parse(op, { "window", "center" }, ...)
  x = convert.arg(x, op)
  if x.dtype ~= "float32" and x.dtype ~= "float64" then
    binding.error(fmt("%s: x must be float32 or float64, got %s", op, x.dtype))
  end
  local seq, stride, n = seq_args(op, sequence_length, sequence_stride, fft_length)
  if x.ndim == 0 then binding.error(op .. ": x must have rank >= 1, got a scalar") end
  if args.bool(op, "center", o.center, true) then
    local pads = {}
    for i = 1, x.ndim do pads[i] = { 0, 0 } end
    local h = math.floor(n / 2)
    pads[x.ndim] = { h, h }
    x = shape.pad(x, pads, { mode = "REFLECT" })
  end
  local w = window_array(op, o.window, seq, n, x.dtype)
  local z = spectral.stft(x, n, stride, { fft_length = n, window_fn = w and function() return w end or false })
  return unpair(z)
end

-- istft(x, sequence_length, sequence_stride, fft_length, length=nil, window="hann", center=true): the signal
-- of an stft {real, imag} ([..., frames, bins]), the window's overlapped squares divided out; center drops the
-- fft_length // 2 padded on each side, and length (counted from there) cuts or keeps the result's length.
function M.istft(x, sequence_length, sequence_stride, fft_length, ...)
  local op = "istft"
  local o = args.parse(op, { "length", "window", "center" }, ...)
  local z = pair(op, x)
  local seq, stride, n = seq_args(op, sequence_length, sequence_stride, fft_length)
  if z.real.ndim >= 0 and z.real.ndim < 2 then
    binding.error(fmt("%s: x must have rank >= 2 ([..., frames, bins]), got shape %s", op, tostring(z.real.shape)))
  end
  local length = o.length ~= nil and int_arg(op, "length", o.length, 0) or nil
  local center = args.bool(op, "center", o.center, true)
  local w = window_array(op, o.window, seq, n, z.real.dtype)
  local wfn = w and spectral.inverse_stft_window_fn(stride, function() return w end) or false
  local y = spectral.inverse_stft(z, n, stride, { fft_length = n, window_fn = wfn })
  -- Keras's y[..., start:end], with Python's clamping of slice bounds
  local total = tonumber(y.dims[y.ndim - 1])
  local half = math.floor(n / 2)
  local start = center and half or 0
  local stop
  if length ~= nil then stop = start + length
  elseif center then stop = total - half
  else stop = total end
  start, stop = math.min(start, total), math.max(math.min(stop, total), 0)
  if stop < start then stop = start end
  if start == 0 and stop == total then return y end
  local spec = {}
  for i = 1, y.ndim - 1 do spec[i] = {} end
  spec[y.ndim] = { start, stop }
  return y:slice(spec)
end

-- extract_sequences(x, sequence_length, sequence_stride): frames of the last axis,
-- [..., 1 + (n - sequence_length) // sequence_stride, sequence_length] (tf.signal.frame, no padding).
function M.extract_sequences(x, sequence_length, sequence_stride)
  local op = "extract_sequences"
  int_arg(op, "sequence_length", sequence_length, 1)
  int_arg(op, "sequence_stride", sequence_stride, 1)
  return spectral.frame(x, sequence_length, sequence_stride, { axis = -1 })
end

return M
