-- stdlib/tide/audio.lua — tf.audio in tide.audio: decode_wav (a registry op over kernels/io/wav.c, TF's
-- DecodeWav: 16-bit PCM WAV bytes to float32 [samples, channels] and the sample rate), usable in tide.data maps.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local args = require "tide.args"
local create = require "tide.ops.create"

local C = binding.C
local fmt = string.format
local M = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

local function count_arg(op, name, v)
  if v == nil then return -1 end
  local n = args.int(op, name, v)
  if n < -1 then fail(op, "%s must be -1 (the file's) or a count, got %d", name, n) end
  return n
end

-- decode_wav(contents, {desired_channels=-1, desired_samples=-1}) as tf.audio.decode_wav: the file's 16-bit
-- samples as float32 [samples, channels] in [-1, 1) (value / 32768) and its sample rate (int32 []), as two
-- results. desired_samples cuts or pads with zeros; desired_channels keeps the first channels or repeats the
-- last one (a mono file on every channel). contents: the bytes as a Lua string, a string scalar or uint8 bytes.
function M.decode_wav(contents, ...)
  local op = "decode_wav"
  local o = args.parse(op, { "desired_channels", "desired_samples" }, ...)
  local a = dispatch.attrs()
  a.n = count_arg(op, "desired_channels", o.desired_channels)
  a.m = count_arg(op, "desired_samples", o.desired_samples)
  a.dtype = C.TIDE_FLOAT32
  local input
  if type(contents) == "string" then input = create.from_buffer(contents, { #contents }, "uint8")
  elseif binding.istensor(contents) then input = contents
  else
    fail(op, "contents must be the WAV bytes as a Lua string, a scalar string tensor or a 1-D uint8 tensor, got %s",
      type(contents))
  end
  return dispatch.run(C.TIDE_OP_DECODE_WAV, a, { input }, 2)
end

return M
