-- stdlib/tide/layers/preprocessing/audio.lua — Keras 3's spectrogram layers: STFTSpectrogram (a
-- strided conv1d with STFT-initialized, trainable kernels) and MelSpectrogram (tide.signal.stft).
-- B = batch, T = samples, C = channels, F = frequency bins, N = frames.
local binding = require "tide.binding"
local convert = require "tide.convert"
local Layer = require("tide.layers.layer").Layer
local options = require "tide.layers.options"
local ldims = require "tide.layers.dims"
local initializers = require "tide.initializers"
local shape = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local nn_conv = require "tide.ops.nn_conv"
local signal = require "tide.ops.signal"
local spectral = require "tide.ops.signal_spectral"
local windows = require "tide.ops.signal_windows"
local fmt = string.format

local M = {}
local EPSILON = 1e-7 -- keras.backend.epsilon()

local MODES = { log = true, magnitude = true, psd = true, real = true, imag = true, angle = true, stft = true }

local function check_float(cls, x)
  local dt = x.dtype
  if dt ~= "float16" and dt ~= "float32" and dt ~= "float64" then
    binding.error(fmt("%s: Invalid input type. Expected `float16`, `float32` or `float64`. Received: input type=%s",
      cls, dt))
  end
end

-- STFTSpectrogram{mode="log", frame_length=256, frame_step=frame_length // 2, fft_length=next power
-- of 2, window="hann", periodic=false, scaling="density", padding="valid", expand_dims=false,
-- data_format}: input [B, T, C] (channels_last) or [B, C, T]; output [B, N, C * F] (or [B, N, F, C]
-- with expand_dims; channels_first [B, C * F, N] / [B, C, N, F]); F = fft_length // 2 + 1, twice
-- that for mode "stft" (real parts, then imaginary). window false: none (Keras's None).
local STFTSpectrogram = Layer:extend("STFTSpectrogram")
M.STFTSpectrogram = STFTSpectrogram
function STFTSpectrogram:init(...)
  local cls = "STFTSpectrogram"
  local o = self:_kwargs({ "mode", "frame_length", "frame_step", "fft_length", "window", "periodic", "scaling",
    "padding", "expand_dims", "data_format" }, ...)
  self.mode = o.mode or "log"
  if not MODES[self.mode] then
    binding.error(fmt("%s: Output mode is invalid, it must be one of log, magnitude, psd, real, imag, angle, stft. " ..
      "Received: mode=%s", cls, tostring(self.mode)))
  end
  self.frame_length = o.frame_length == nil and 256 or options.positive_int(cls, "frame_length", o.frame_length)
  self.frame_step = o.frame_step
  if o.frame_step ~= nil then
    options.positive_int(cls, "frame_step", o.frame_step)
    if o.frame_step > self.frame_length then
      binding.error(fmt("%s: `frame_step` should be a positive integer not greater than `frame_length`. Received " ..
        "frame_step=%d, frame_length=%d", cls, o.frame_step, self.frame_length))
    end
  end
  self._frame_step = o.frame_step or math.floor(self.frame_length / 2)
  self.fft_length = o.fft_length
  if o.fft_length ~= nil then
    options.positive_int(cls, "fft_length", o.fft_length)
    if o.fft_length < self.frame_length then
      binding.error(fmt("%s: `fft_length` should be not less than `frame_length`. Received fft_length=%d, " ..
        "frame_length=%d", cls, o.fft_length, self.frame_length))
    end
  end
  self._fft_length = o.fft_length or 2 ^ math.ceil(math.log(self.frame_length) / math.log(2) - 1e-12)
  if o.window == nil then self.window = "hann" else self.window = o.window end
  self.periodic = options.boolean(cls, "periodic", o.periodic, false)
  if o.scaling == nil then self.scaling = "density" else self.scaling = o.scaling end
  self.padding = o.padding or "valid"
  if self.padding ~= "valid" and self.padding ~= "same" then
    binding.error(fmt("%s: Padding is invalid, it should be 'valid', 'same'. Received: padding=%s", cls,
      tostring(self.padding)))
  end
  self.expand_dims = options.boolean(cls, "expand_dims", o.expand_dims, false)
  self.data_format = options.data_format(cls, o.data_format)
  -- the initializer checks window and scaling now, as Keras's constructor does
  self._init_real = initializers.STFT("real", self.window, self.scaling, self.periodic)
  self._init_imag = initializers.STFT("imag", self.window, self.scaling, self.periodic)
end
function STFTSpectrogram:build(input_shape)
  if #input_shape ~= 3 then
    binding.error(fmt("STFTSpectrogram: expected input of rank 3 ([batch, time, channels]), got rank %d", #input_shape))
  end
  local s = { self.frame_length, 1, math.floor(self._fft_length / 2) + 1 }
  if self.mode ~= "imag" then self.real_kernel = self:add_weight { name = "real_kernel", shape = s, initializer = self._init_real } end
  if self.mode ~= "real" then self.imag_kernel = self:add_weight { name = "imag_kernel", shape = s, initializer = self._init_imag } end
end

-- The kernel's conv over every channel: [B, C, F, N].
function STFTSpectrogram:_apply_conv(x, kernel)
  local last = self.data_format == "channels_last"
  local t = ldims.dim(x, last and 1 or 2)
  local c = ldims.dim(x, last and 2 or 1)
  if last then x = shape.transpose(x, { 0, 2, 1 }) end
  x = shape.reshape(x, { -1, t, 1 })
  local y = nn_conv.conv1d(x, math_ops.cast(kernel, x.dtype), self._frame_step, self.padding:upper())
  local f = ldims.dim(y, 2)
  y = shape.transpose(y, { 0, 2, 1 })
  return shape.reshape(y, { -1, c, f, ldims.dim(y, 2) })
end

function STFTSpectrogram:_adjust(y)
  local c, f, n = ldims.dim(y, 1), ldims.dim(y, 2), ldims.dim(y, 3)
  if self.data_format == "channels_last" then
    if self.expand_dims then return shape.transpose(y, { 0, 3, 2, 1 }) end
    return shape.transpose(shape.reshape(y, { -1, c * f, n }), { 0, 2, 1 })
  end
  if self.expand_dims then return shape.transpose(y, { 0, 1, 3, 2 }) end
  return shape.reshape(y, { -1, c * f, n })
end

function STFTSpectrogram:call(x)
  x = convert.arg(x, "STFTSpectrogram")
  check_float("STFTSpectrogram", x)
  local re = self.mode ~= "imag" and self:_apply_conv(x, self.real_kernel) or nil
  local im = self.mode ~= "real" and self:_apply_conv(x, self.imag_kernel) or nil
  if self.mode == "real" then return self:_adjust(re) end
  if self.mode == "imag" then return self:_adjust(im) end
  if self.mode == "angle" then return self:_adjust(math_ops.atan2(im, re)) end
  if self.mode == "stft" then return self:_adjust(shape.concat({ re, im }, 2)) end
  local power = re * re + im * im
  if self.mode == "psd" then
    local f = tonumber(power.dims[2])
    local inner = power:slice { {}, {}, { 1, f - 1 } }
    return self:_adjust(power + shape.pad(inner, { { 0, 0 }, { 0, 0 }, { 1, 1 }, { 0, 0 } }))
  end
  local lin = self:_adjust(math_ops.sqrt(math_ops.maximum(power, EPSILON)))
  if self.mode == "magnitude" then return lin end
  return math_ops.log(math_ops.maximum(lin, EPSILON))
end
function STFTSpectrogram:get_config()
  local c = Layer.get_config(self)
  c.mode, c.frame_length, c.frame_step, c.fft_length = self.mode, self.frame_length, self.frame_step, self.fft_length
  c.window, c.periodic, c.scaling, c.padding = self.window, self.periodic, self.scaling, self.padding
  c.data_format, c.expand_dims = self.data_format, self.expand_dims
  return c
end

-- MelSpectrogram{fft_length=2048, sequence_stride=512, sequence_length=fft_length, window="hann",
-- sampling_rate=16000, num_mel_bins=128, min_freq=20, max_freq=sampling_rate // 2,
-- power_to_db=true, top_db=80, mag_exp=2, min_power=1e-10, ref_power=1}: input [T] or [B, T];
-- output [num_mel_bins, N] or [B, num_mel_bins, N], N = 1 + T // sequence_stride (centred frames,
-- reflect-padded by fft_length // 2, as Keras's TF backend); stateless (no weights).
local MelSpectrogram = Layer:extend("MelSpectrogram")
M.MelSpectrogram = MelSpectrogram
function MelSpectrogram:init(...)
  local cls = "MelSpectrogram"
  local o = self:_kwargs({ "fft_length", "sequence_stride", "sequence_length", "window", "sampling_rate",
    "num_mel_bins", "min_freq", "max_freq", "power_to_db", "top_db", "mag_exp", "min_power", "ref_power" }, ...)
  self.fft_length = o.fft_length == nil and 2048 or options.positive_int(cls, "fft_length", o.fft_length)
  self.sequence_stride = o.sequence_stride == nil and 512 or options.positive_int(cls, "sequence_stride", o.sequence_stride)
  self.sequence_length = o.sequence_length == nil and self.fft_length
    or options.positive_int(cls, "sequence_length", o.sequence_length)
  if self.fft_length < self.sequence_length then
    binding.error(fmt("%s: `fft_length` must be greater than or equal to `sequence_length`. Received: " ..
      "`sequence_length`=%d, `fft_length`=%d.", cls, self.sequence_length, self.fft_length))
  end
  if o.window == nil then self.window = "hann" else self.window = o.window end
  if type(self.window) == "string" and self.window ~= "hann" and self.window ~= "hamming" then
    binding.error(fmt("%s: If a string is passed to `window`, it must be one of \"hann\", \"hamming\". Received: " ..
      "window=%s", cls, self.window))
  end
  self.sampling_rate = o.sampling_rate == nil and 16000 or options.positive_int(cls, "sampling_rate", o.sampling_rate)
  self.num_mel_bins = o.num_mel_bins == nil and 128 or options.positive_int(cls, "num_mel_bins", o.num_mel_bins)
  self.min_freq = options.number(cls, "min_freq", o.min_freq, 20.0)
  self.max_freq = o.max_freq == nil and math.floor(self.sampling_rate / 2) or options.number(cls, "max_freq", o.max_freq)
  self.power_to_db = options.boolean(cls, "power_to_db", o.power_to_db, true)
  self.top_db = options.number(cls, "top_db", o.top_db, 80.0)
  self.mag_exp = options.number(cls, "mag_exp", o.mag_exp, 2.0)
  self.min_power = options.number(cls, "min_power", o.min_power, 1e-10)
  self.ref_power = options.number(cls, "ref_power", o.ref_power, 1.0)
end

-- The window of sequence_length, zero-padded to fft_length in the middle (Keras's l_pad, r_pad).
function MelSpectrogram:_window(dt)
  local n, f = self.sequence_length, self.fft_length
  local w = self.window
  if w == false then return false end
  if type(w) == "string" then
    w = (w == "hann" and windows.hann_window or windows.hamming_window)(n, { periodic = true, dtype = dt })
  else
    w = convert.tensor(type(w) == "table" and w or convert.arg(w, "MelSpectrogram"):totable(), dt)
    if w.ndim ~= 1 or tonumber(w.dims[0]) ~= n then
      binding.error(fmt("MelSpectrogram: The shape of `window` must be equal to [sequence_length]. Received: window " ..
        "shape=%s", tostring(w.shape)))
    end
  end
  local l = math.floor((f - n) / 2)
  if f > n then w = shape.pad(w, { { l, f - n - l } }) end
  return w
end

function MelSpectrogram:call(x)
  local cdt = self.compute_dtype
  local dt = (cdt == "float32" or cdt == "float64") and cdt or "float32"
  x = math_ops.cast(convert.arg(x, "MelSpectrogram"), dt)
  local r = x.ndim
  if r ~= 1 and r ~= 2 then
    binding.error(fmt("MelSpectrogram: expected input [time] or [batch, time], got shape %s", tostring(x.shape)))
  end
  local half = math.floor(self.fft_length / 2)
  local pads = {}
  for i = 1, r do pads[i] = { 0, 0 } end
  pads[r] = { half, half }
  x = shape.pad(x, pads, { mode = "REFLECT" })
  local w = self:_window(dt)
  local z = spectral.stft(x, self.fft_length, self.sequence_stride, { fft_length = self.fft_length,
    window_fn = w and function() return w end or false })
  local spec = math_ops.sqrt(z.real * z.real + z.imag * z.imag)
  spec = math_ops.pow(spec, math_ops.cast(self.mag_exp, dt))
  local bins = tonumber(spec.dims[spec.ndim - 1])
  local mel = spectral.linear_to_mel_weight_matrix(self.num_mel_bins, bins, self.sampling_rate, self.min_freq,
    self.max_freq, "float32")
  local out = shape.reshape(
    require("tide.ops.linalg").matmul(shape.reshape(spec, { -1, bins }), math_ops.cast(mel, dt)),
    r == 1 and { -1, self.num_mel_bins } or { ldims.dim(spec, 0), -1, self.num_mel_bins })
  if self.power_to_db then
    local log10 = function(v) return math_ops.log(v) * (1 / math.log(10)) end
    local db = log10(math_ops.maximum(out, math_ops.cast(self.min_power, dt))) * 10
    db = db - 10 * math.log10(math.max(math.abs(self.ref_power), self.min_power))
    out = math_ops.maximum(db, reduce.reduce_max(db) - self.top_db)
  end
  local perm = r == 1 and { 1, 0 } or { 0, 2, 1 }
  return math_ops.cast(shape.transpose(out, perm), cdt)
end
function MelSpectrogram:get_config()
  local c = Layer.get_config(self)
  for _, k in ipairs { "fft_length", "sequence_stride", "sequence_length", "window", "sampling_rate", "num_mel_bins",
    "min_freq", "max_freq", "power_to_db", "top_db", "mag_exp", "min_power", "ref_power" } do c[k] = self[k] end
  return c
end

return M
