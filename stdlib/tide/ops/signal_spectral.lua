-- stdlib/tide/ops/signal_spectral.lua — tf.signal's framing and spectral ops, composed of registry
-- ops (gather, scatter_add, the FFT ops) as TF composes them, so the tape and traces see through:
-- frame, overlap_and_add, stft, inverse_stft, inverse_stft_window_fn, dct, idct, mdct,
-- inverse_mdct, linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms.
local binding = require "tide.binding"
local convert = require "tide.convert"
local args = require "tide.args"
local dtype = require "tide.dtype"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local scatter = require "tide.ops.scatter"
local signal = require "tide.ops.signal"
local windows = require "tide.ops.signal_windows"
local fmt = string.format

local M = {}

local function int_arg(op, what, v, min)
  if type(v) ~= "number" then
    local ok, n = pcall(function() return v:item() end)
    if not ok or type(n) ~= "number" then binding.error(fmt("%s: %s must be an integer", op, what)) end
    v = n
  end
  if v ~= math.floor(v) or v < min then
    binding.error(fmt("%s: %s must be an integer >= %d, got %s", op, what, min, tostring(v)))
  end
  return v
end

local function float_input(op, x, what)
  x = convert.arg(x, op)
  if not dtype.is_float[x.dt] then
    binding.error(fmt("%s: %s must be a float tensor, got %s", op, what or "input", x.dtype))
  end
  return x
end

-- The axis (normalized) and its static length, which these ops need.
local function axis_len(op, x, axis)
  local r = x.ndim
  if r < 0 then binding.error(op .. ": the input's rank must be known") end
  if axis < -r or axis >= r then binding.error(fmt("%s: axis %d is out of range for shape %s", op, axis, tostring(x.shape))) end
  if axis < 0 then axis = axis + r end
  local n = tonumber(x.dims[axis])
  if n < 0 then binding.error(fmt("%s: the length of axis %d must be known (shape %s)", op, axis, tostring(x.shape))) end
  return axis, n
end

-- The [frames, frame_length] int32 indices f * step + j, kept for the last few shapes asked for
-- (an stft over a stream of equal batches builds them once: a Lua table of 40k numbers per call
-- cost more than the transform).
local index_cache, index_order = {}, {}
local function frame_indices(frames, fl, fs)
  local key = frames .. ":" .. fl .. ":" .. fs
  local t = index_cache[key]
  if t then return t end
  if frames == 0 or fl == 0 then
    t = create.zeros({ frames, fl }, "int32")
  else
    local idx = {}
    for f = 0, frames - 1 do
      local row = {}
      for j = 0, fl - 1 do row[j + 1] = f * fs + j end
      idx[f + 1] = row
    end
    t = convert.tensor(idx, "int32")
  end
  index_order[#index_order + 1] = key
  index_cache[key] = t
  if #index_order > 16 then index_cache[table.remove(index_order, 1)] = nil end
  return t
end

-- frame(signal, frame_length, frame_step, pad_end=false, pad_value=0, axis=-1) as tf.signal.frame:
-- [..., frames, frame_length, ...] in place of `axis`; frames = 1 + (n - frame_length) // step
-- (0 when the signal is shorter), or with pad_end ceil(n / step), the end padded with pad_value.
function M.frame(sig, frame_length, frame_step, ...)
  local op = "frame"
  local o = args.parse(op, { "pad_end", "pad_value", "axis" }, ...)
  local x = convert.arg(sig, op)
  local fl, fs = int_arg(op, "frame_length", frame_length, 0), int_arg(op, "frame_step", frame_step, 1)
  local axis, n = axis_len(op, x, o.axis == nil and -1 or int_arg(op, "axis", o.axis, -64))
  local pad_end = args.bool(op, "pad_end", o.pad_end, false)
  local frames
  if pad_end then
    frames = math.ceil(n / fs)
    local want = frames > 0 and (frames - 1) * fs + fl or 0
    if want > n then
      local pads = {}
      for i = 1, x.ndim do pads[i] = { 0, 0 } end
      pads[axis + 1][2] = want - n
      x = shape.pad(x, pads, { constant_values = o.pad_value or 0 })
    end
  else
    frames = n >= fl and 1 + math.floor((n - fl) / fs) or 0
  end
  return shape.gather(x, frame_indices(frames, fl, fs), { axis = axis })
end

-- overlap_and_add(signal [..., frames, frame_length], frame_step) as tf.signal.overlap_and_add:
-- the frames added at frame_step apart, [..., (frames - 1) * frame_step + frame_length].
function M.overlap_and_add(sig, frame_step)
  local op = "overlap_and_add"
  local x = convert.arg(sig, op)
  local fs = int_arg(op, "frame_step", frame_step, 1)
  if x.ndim >= 0 and x.ndim < 2 then
    binding.error(fmt("%s: signal must have rank >= 2 ([..., frames, frame_length]), got shape %s", op, tostring(x.shape)))
  end
  local _, frames = axis_len(op, x, -2)
  local _, fl = axis_len(op, x, -1)
  local len = frames > 0 and (frames - 1) * fs + fl or 0
  local outer = {}
  for i = 0, x.ndim - 3 do outer[#outer + 1] = tonumber(x.dims[i]) end
  local flat_shape, out_shape = {}, {}
  for i, d in ipairs(outer) do flat_shape[i], out_shape[i] = d, d end
  flat_shape[#outer + 1], out_shape[#outer + 1] = frames * fl, len
  local zeros = create.zeros(out_shape, x.dtype)
  if frames == 0 or fl == 0 then return zeros end
  local flat = shape.reshape(x, flat_shape)
  local idx = shape.reshape(frame_indices(frames, fl, fs), { frames * fl })
  return scatter.scatter_add(zeros, idx, flat, { axis = #outer })
end

-- The window of frame_length for `op` (window_fn nil: hann_window; false: none).
local function window_of(op, window_fn, fl, dt)
  if window_fn == false then return nil end
  local fn = window_fn or windows.hann_window
  if type(fn) ~= "function" then binding.error(op .. ": window_fn must be a function (frame_length, {dtype=}) or false") end
  return fn(fl, { dtype = dt })
end

local function next_pow2(n)
  local p = 1
  while p < n do p = p * 2 end
  return p
end

-- stft(signals, frame_length, frame_step, fft_length=nil, window_fn=hann_window, pad_end=false)
-- as tf.signal.stft: the rfft of each windowed frame, {real=, imag=} [..., frames, fft_length // 2 + 1];
-- fft_length defaults to the smallest power of 2 >= frame_length; window_fn false: no window.
function M.stft(signals, frame_length, frame_step, ...)
  local op = "stft"
  local o = args.parse(op, { "fft_length", "window_fn", "pad_end" }, ...)
  local x = float_input(op, signals, "signals")
  if x.ndim >= 0 and x.ndim < 1 then binding.error(op .. ": signals must have rank >= 1, got a scalar") end
  local fl = int_arg(op, "frame_length", frame_length, 1)
  local fft_length = o.fft_length == nil and next_pow2(fl) or int_arg(op, "fft_length", o.fft_length, 1)
  local framed = M.frame(x, fl, frame_step, { pad_end = o.pad_end })
  local w = window_of(op, o.window_fn, fl, x.dtype)
  if w then framed = framed * w end
  return signal.rfft(framed, { fft_length })
end

-- inverse_stft(stfts, frame_length, frame_step, fft_length=nil, window_fn=hann_window) as
-- tf.signal.inverse_stft: each frame's irfft cut or padded to frame_length, windowed, overlapped
-- and added. For a perfect reconstruction pass inverse_stft_window_fn(frame_step) as window_fn.
function M.inverse_stft(stfts, frame_length, frame_step, ...)
  local op = "inverse_stft"
  local o = args.parse(op, { "fft_length", "window_fn" }, ...)
  local fl = int_arg(op, "frame_length", frame_length, 1)
  local fft_length = o.fft_length == nil and next_pow2(fl) or int_arg(op, "fft_length", o.fft_length, 1)
  local re = signal.complex_in(stfts, op)
  if re.ndim >= 0 and re.ndim < 2 then
    binding.error(fmt("%s: stfts must have rank >= 2 ([..., frames, bins]), got shape %s", op, tostring(re.shape)))
  end
  local frames = signal.irfft(stfts, { fft_length })
  if fft_length > fl then
    local spec = {}
    for i = 1, frames.ndim - 1 do spec[i] = {} end
    spec[frames.ndim] = { 0, fl }
    frames = frames:slice(spec)
  elseif fft_length < fl then
    local pads = {}
    for i = 1, frames.ndim do pads[i] = { 0, 0 } end
    pads[frames.ndim][2] = fl - fft_length
    frames = shape.pad(frames, pads)
  end
  local w = window_of(op, o.window_fn, fl, frames.dtype)
  if w then frames = frames * w end
  return M.overlap_and_add(frames, frame_step)
end

-- inverse_stft_window_fn(frame_step, forward_window_fn=hann_window) as tf.signal's: a window_fn
-- for inverse_stft that undoes the forward window's overlapped squares.
function M.inverse_stft_window_fn(frame_step, forward_window_fn)
  local op = "inverse_stft_window_fn"
  local fs = int_arg(op, "frame_step", frame_step, 1)
  local fwd = forward_window_fn or windows.hann_window
  return function(frame_length, opts)
    local fl = int_arg(op, "frame_length", frame_length, 1)
    local w = fwd(fl, { dtype = (opts or {}).dtype or "float32" })
    local v = w:totable()
    local overlaps = math.ceil(fl / fs)
    local sums = {}
    for j = 0, fs - 1 do
      local s = 0
      for k = 0, overlaps - 1 do
        local i = k * fs + j
        if i < fl then s = s + v[i + 1] * v[i + 1] end
      end
      sums[j] = s
    end
    local denom = {}
    for i = 0, fl - 1 do denom[i + 1] = sums[i % fs] end
    return w / convert.tensor(denom, w.dtype)
  end
end

-- ---- discrete cosine transforms ----

local function dct_args(op, x, typ, n, axis, norm)
  if axis ~= nil and axis ~= -1 then binding.error(fmt("%s: axis must be -1, got %s (as TF)", op, tostring(axis))) end
  if n ~= nil and (type(n) ~= "number" or n < 1 or n ~= math.floor(n)) then
    binding.error(op .. ": n should be a positive integer or nil")
  end
  if typ ~= 1 and typ ~= 2 and typ ~= 3 and typ ~= 4 then
    binding.error(fmt("%s: Types I, II, III and IV (I)DCT are supported, got type %s", op, tostring(typ)))
  end
  if norm ~= nil and norm ~= "ortho" then
    binding.error(fmt("%s: Unknown normalization. Expected nil or 'ortho', got: %s", op, tostring(norm)))
  end
  if typ == 1 then
    if norm == "ortho" then binding.error(op .. ": Normalization is not supported for the Type-I DCT.") end
    local len = x.ndim > 0 and tonumber(x.dims[x.ndim - 1]) or -1
    if (n or len) >= 0 and (n or len) < 2 then
      binding.error(fmt("%s: Type-I DCT requires the dimension to be greater than one, got shape %s", op,
        tostring(x.shape)))
    end
  end
end

-- A constant vector of the input's float dtype.
local function vec(v, like) return convert.tensor(v, like.dtype) end

local function dct_internal(x, typ, n)
  local _, len = axis_len("dct", x, -1)
  local last = x.ndim
  if n and n ~= len then
    if n < len then
      local spec = {}
      for i = 1, last - 1 do spec[i] = {} end
      spec[last] = { 0, n }
      x = x:slice(spec)
    else
      local pads = {}
      for i = 1, last do pads[i] = { 0, 0 } end
      pads[last][2] = n - len
      x = shape.pad(x, pads)
    end
    len = n
  end
  return x, len
end

local function take(t, from, to, step)
  local spec = {}
  for i = 1, t.ndim - 1 do spec[i] = {} end
  spec[t.ndim] = { from, to, step }
  return t:slice(spec)
end

local dct

-- The DCT of type typ along the last axis, TF's compositions (dct_ops.py's _dct_internal).
function dct(x, typ, n, norm)
  local N
  x, N = dct_internal(x, typ, n)
  if typ == 1 then
    local mirrored = N > 2 and shape.reverse(take(x, 1, N - 1), { x.ndim - 1 }) or nil
    local ext = mirrored and shape.concat({ x, mirrored }, -1) or x
    return signal.rfft(ext).real
  elseif typ == 2 then
    local c, s = {}, {}
    for k = 0, N - 1 do
      local t = -math.pi * k * 0.5 / N
      c[k + 1], s[k + 1] = 2 * math.cos(t), 2 * math.sin(t)
    end
    local y = signal.rfft(x, { 2 * N })
    local yr, yi = take(y.real, 0, N), take(y.imag, 0, N)
    local out = yr * vec(c, x) - yi * vec(s, x) -- Re((yr + i yi)(c + i s))
    if norm == "ortho" then
      local w = {}
      for k = 1, N do w[k] = (k == 1 and 0.5 or 0.5 * math.sqrt(2)) / math.sqrt(N) end
      out = out * vec(w, x)
    end
    return out
  elseif typ == 3 then
    local w = {}
    for k = 1, N do w[k] = norm == "ortho" and (k == 1 and math.sqrt(N) or math.sqrt(N) * math.sqrt(0.5)) or N end
    local xin = x * vec(w, x)
    local c, s = {}, {}
    for k = 0, N - 1 do
      local t = math.pi * k * 0.5 / N
      c[k + 1], s[k + 1] = 2 * math.cos(t), 2 * math.sin(t)
    end
    local y = signal.irfft({ real = xin * vec(c, x), imag = xin * vec(s, x) }, { 2 * N })
    return take(y, 0, N)
  end
  -- type 4: the odd entries of the type-2 DCT of the signal zero-padded to 2N
  local d2 = dct(x, 2, 2 * N, nil)
  local out = take(d2, 1, nil, 2)
  if norm == "ortho" then out = out * (math.sqrt(0.5) / math.sqrt(N)) end
  return out
end

local function dct_public(op, inverse)
  return function(input, ...)
    local o = args.parse(op, { "type", "n", "axis", "norm" }, ...)
    local x = float_input(op, input)
    local typ = o.type == nil and 2 or o.type
    dct_args(op, x, typ, o.n, o.axis, o.norm)
    if inverse then typ = ({ 1, 3, 2, 4 })[typ] end
    return dct(x, typ, o.n, o.norm)
  end
end

-- dct(input, type=2, n=nil, axis=-1, norm=nil) as tf.signal.dct (types 1 to 4, norm nil or
-- "ortho", along the last axis; n crops or zero-pads it); idct is the inverse type's dct, as TF.
M.dct = dct_public("dct", false)
M.idct = dct_public("idct", true)

-- mdct(signals, frame_length, window_fn=vorbis_window, pad_end=false, norm=nil) as tf.signal.mdct:
-- frames of frame_length (a multiple of 4) at half their length, windowed, folded and DCT-IV'd.
function M.mdct(signals, frame_length, ...)
  local op = "mdct"
  local o = args.parse(op, { "window_fn", "pad_end", "norm" }, ...)
  local x = float_input(op, signals, "signals")
  local fl = int_arg(op, "frame_length", frame_length, 4)
  if fl % 4 ~= 0 then binding.error(fmt("%s: The frame length must be a multiple of 4, got %d", op, fl)) end
  local framed = M.frame(x, fl, fl / 2, { pad_end = o.pad_end })
  if o.window_fn == false then framed = framed * (1 / math.sqrt(2))
  else framed = framed * (o.window_fn or windows.vorbis_window)(fl, { dtype = x.dtype }) end
  local q = fl / 4
  local a, b, c, d = take(framed, 0, q), take(framed, q, 2 * q), take(framed, 2 * q, 3 * q), take(framed, 3 * q, fl)
  local last = framed.ndim - 1
  local first = -shape.reverse(c, { last }) - d
  local second = a - shape.reverse(b, { last })
  return dct(shape.concat({ first, second }, -1), 4, nil, o.norm)
end

-- inverse_mdct(mdcts, window_fn=vorbis_window, norm=nil) as tf.signal.inverse_mdct.
function M.inverse_mdct(mdcts, ...)
  local op = "inverse_mdct"
  local o = args.parse(op, { "window_fn", "norm" }, ...)
  local x = float_input(op, mdcts, "mdcts")
  if x.ndim >= 0 and x.ndim < 2 then
    binding.error(fmt("%s: mdcts must have rank >= 2, got shape %s", op, tostring(x.shape)))
  end
  local _, half = axis_len(op, x, -1)
  if o.norm ~= nil and o.norm ~= "ortho" then binding.error(fmt("%s: norm must be nil or 'ortho'", op)) end
  local r = o.norm == "ortho" and dct(x, 4, nil, "ortho") or dct(x, 4, nil, nil) * (0.5 / half)
  local h2 = half / 2
  local s0, s1 = take(r, 0, h2), take(r, h2, half)
  local last = r.ndim - 1
  local frames = shape.concat({ s1, -shape.reverse(s1, { last }), -shape.reverse(s0, { last }), -s0 }, -1)
  if o.window_fn == false then frames = frames * (1 / math.sqrt(2))
  else frames = frames * (o.window_fn or windows.vorbis_window)(2 * half, { dtype = x.dtype }) end
  return M.overlap_and_add(frames, half)
end

-- ---- mel scale ----

local function hz_to_mel(f) return 1127.0 * math.log(1 + f / 700.0) end

-- linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
-- lower_edge_hertz=125, upper_edge_hertz=3800, dtype="float32") as tf.signal's (HTK mel scale):
-- [num_spectrogram_bins, num_mel_bins] triangular filters, the DC row zero.
function M.linear_to_mel_weight_matrix(...)
  local op = "linear_to_mel_weight_matrix"
  local o = args.parse(op, { "num_mel_bins", "num_spectrogram_bins", "sample_rate", "lower_edge_hertz",
    "upper_edge_hertz", "dtype" }, ...)
  local mels = o.num_mel_bins == nil and 20 or o.num_mel_bins
  local bins = o.num_spectrogram_bins == nil and 129 or o.num_spectrogram_bins
  local rate = o.sample_rate == nil and 8000 or o.sample_rate
  local lo = o.lower_edge_hertz == nil and 125.0 or o.lower_edge_hertz
  local hi = o.upper_edge_hertz == nil and 3800.0 or o.upper_edge_hertz
  local dt = o.dtype or "float32"
  if type(rate) ~= "number" then rate = int_arg(op, "sample_rate", rate, 1) end
  if type(mels) ~= "number" or mels <= 0 then binding.error(fmt("%s: num_mel_bins must be positive. Got: %s", op, tostring(mels))) end
  if type(bins) ~= "number" or bins < 1 then binding.error(fmt("%s: num_spectrogram_bins must be positive. Got: %s", op, tostring(bins))) end
  if lo < 0 then binding.error(fmt("%s: lower_edge_hertz must be non-negative. Got: %s", op, tostring(lo))) end
  if lo >= hi then binding.error(fmt("%s: lower_edge_hertz %s >= upper_edge_hertz %s", op, tostring(lo), tostring(hi))) end
  if rate <= 0 then binding.error(fmt("%s: sample_rate must be positive. Got: %s", op, tostring(rate))) end
  if hi > rate / 2 then
    binding.error(fmt("%s: upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). Got %s " ..
      "for sample_rate: %s", op, tostring(hi), tostring(rate)))
  end
  if not dtype.is_float[dtype.code(dt, op)] then binding.error(fmt("%s: dtype must be a floating point type, got %s", op, tostring(dt))) end
  local nyq = rate / 2
  local lm, hm = hz_to_mel(lo), hz_to_mel(hi)
  local edges = {}
  for i = 0, mels + 1 do edges[i] = lm + (hm - lm) * i / (mels + 1) end
  local rows = { }
  local zero = {}
  for m = 1, mels do zero[m] = 0 end
  rows[1] = zero
  for b = 1, bins - 1 do
    local mel = hz_to_mel(bins > 1 and nyq * b / (bins - 1) or 0)
    local row = {}
    for m = 1, mels do
      local l, c, u = edges[m - 1], edges[m], edges[m + 1]
      local v = math.min((mel - l) / (c - l), (u - mel) / (u - c))
      row[m] = v > 0 and v or 0
    end
    rows[b + 1] = row
  end
  return convert.tensor(rows, dt)
end

-- mfccs_from_log_mel_spectrograms(log_mel_spectrograms) as tf.signal's: the orthonormal-scaled
-- DCT-II of each log-mel frame (dct(x, 2) / sqrt(2 num_mel_bins)).
function M.mfccs_from_log_mel_spectrograms(log_mel_spectrograms)
  local op = "mfccs_from_log_mel_spectrograms"
  local x = float_input(op, log_mel_spectrograms, "log_mel_spectrograms")
  local _, bins = axis_len(op, x, -1)
  if bins < 1 then binding.error(fmt("%s: num_mel_bins must be positive, got shape %s", op, tostring(x.shape))) end
  return dct(x, 2, nil, nil) * (1 / math.sqrt(bins * 2.0))
end

return M
