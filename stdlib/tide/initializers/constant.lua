-- stdlib/tide/initializers/constant.lua — Keras 3's deterministic
-- initializers: Zeros, Ones, Constant, Identity, STFT (STFTSpectrogram's kernels).
local binding = require "tide.binding"
local create = require "tide.ops.create"
local convert = require "tide.convert"
local windows = require "tide.ops.signal_windows"
local fmt = string.format
local base = require "tide.initializers.base"

local define, kwargs = base.define, base.kwargs

local M = {}

-- Zeros(): zeros of any dtype.
local Zeros = define("Zeros")
M.Zeros = Zeros
function Zeros:__init(...) kwargs("Zeros", {}, ...) end
function Zeros:generate(shape, dt) return create.zeros(shape, dt) end

-- Ones(): ones of any dtype.
local Ones = define("Ones")
M.Ones = Ones
function Ones:__init(...) kwargs("Ones", {}, ...) end
function Ones:generate(shape, dt) return create.ones(shape, dt) end

-- Constant{value=0}: every element the number value.
local Constant = define("Constant")
M.Constant = Constant
function Constant:__init(...)
  local o = kwargs("Constant", { "value" }, ...)
  local v = o.value == nil and 0.0 or o.value
  if type(v) ~= "number" and type(v) ~= "boolean" then
    binding.error("Constant: value must be a number (Keras takes only scalars), got " .. type(v))
  end
  self.value = v
end
function Constant:generate(shape, dt) return create.fill(shape, self.value, dt) end
function Constant:get_config() return { value = self.value } end

-- Identity{gain=1}: gain times the identity matrix (2-D shapes only).
local Identity = define("Identity")
M.Identity = Identity
function Identity:__init(...)
  local o = kwargs("Identity", { "gain" }, ...)
  self.gain = o.gain == nil and 1.0 or o.gain
  if type(self.gain) ~= "number" then binding.error("Identity: gain must be a number, got " .. type(self.gain)) end
end
function Identity:generate(shape, dt)
  if #shape ~= 2 then
    binding.error(string.format("Identity: the shape must be two-dimensional, got {%s}", table.concat(shape, ", ")))
  end
  return create.eye(shape[1], shape[2], { dtype = dt }) * self.gain
end
function Identity:get_config() return { gain = self.gain } end

-- STFT{side="real", window="hann", scaling="density", periodic=false} (Keras's STFT, also
-- STFTInitializer): a conv kernel [T, 1, F] whose columns are the real (cos) or imaginary (-sin)
-- parts of the DFT's first F = fft_length / 2 + 1 bins, times a window of T ("hann", "hamming",
-- scipy's forms: symmetric unless periodic; a list or tensor of T values; nil none), over its L2
-- norm ("density"), its L1 norm ("spectrum") or 1 (nil).
local STFT = define("STFT")
M.STFT = STFT
function STFT:__init(...)
  local o = kwargs("STFT", { "side", "window", "scaling", "periodic" }, ...)
  self.side = o.side == nil and "real" or o.side
  if self.side ~= "real" and self.side ~= "imag" then
    binding.error(fmt("STFT: side should be 'real' or 'imag', not %s", tostring(self.side)))
  end
  self.window = o.window
  if o.window == nil then self.window = "hann" end
  if type(self.window) == "string" and self.window ~= "hann" and self.window ~= "hamming" then
    binding.error(fmt("STFT: window must be \"hann\", \"hamming\", a list or tensor of values, or false (none); " ..
      "got %s (tide has no scipy.signal)", self.window))
  end
  self.scaling = o.scaling == nil and "density" or o.scaling
  if self.scaling ~= false and self.scaling ~= "density" and self.scaling ~= "spectrum" then
    binding.error(fmt("STFT: Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received scaling=%s",
      tostring(self.scaling)))
  end
  self.periodic = o.periodic == true
end

-- The window's T values as a Lua list (nil: none).
function STFT:window_values(t)
  local w = self.window
  if w == false or w == nil then return nil end
  if type(w) == "string" then
    local fn = w == "hann" and windows.hann_window or windows.hamming_window
    return fn(t, { periodic = self.periodic, dtype = "float64" }):totable()
  end
  local v = type(w) == "table" and getmetatable(w) == nil and w or convert.arg(w, "STFT"):cast("float64"):totable()
  if #v ~= t then
    binding.error(fmt("STFT: The shape of `window` must be equal to [frame_length]. Received: window shape=[%d] " ..
      "for frame_length %d", #v, t))
  end
  return v
end

function STFT:generate(shape, dt)
  if #shape ~= 3 then
    binding.error(fmt("STFT: the shape must be (frame_length, 1, fft_length // 2 + 1), got {%s}", table.concat(shape, ", ")))
  end
  local t, c, f = shape[1], shape[2], shape[3]
  local win, scale = self:window_values(t), 1
  if win and self.scaling == "density" then
    scale = 0
    for _, v in ipairs(win) do scale = scale + v * v end
    scale = math.sqrt(scale)
  elseif win and self.scaling == "spectrum" then
    scale = 0
    for _, v in ipairs(win) do scale = scale + math.abs(v) end
  end
  local n = (f - 1) * 2
  local rows = {}
  for i = 0, t - 1 do
    local w = win and win[i + 1] / scale or 1
    local chans = {}
    for ch = 1, c do
      local row = {}
      for k = 0, f - 1 do
        local a = -2 * i * (k / n) * math.pi
        row[k + 1] = (self.side == "real" and math.cos(a) or math.sin(a)) * w
      end
      chans[ch] = row
    end
    rows[i + 1] = chans
  end
  if t == 0 or f == 0 then return create.zeros(shape, dt) end
  return convert.tensor(rows, dt)
end
function STFT:get_config()
  return { side = self.side, window = self.window, scaling = self.scaling, periodic = self.periodic }
end

return M
