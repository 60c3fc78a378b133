-- stdlib/tide/image/convert.lua — tf.image.convert_image_dtype: TF's scaling
-- between integer ([0, max]) and float ([0, 1]) images, and its saturate_cast.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local util = require "tide.image.util"
local ffi, Tensor = binding.ffi, binding.Tensor
local istype = ffi.istype

local M = {}

local fail = util.fail
local U8, I8, I32, I64 = util.U8, util.I8, util.I32, util.I64
local F32, F64, F16, BF16 = util.F32, util.F64, util.F16, util.BF16

-- The largest value of integer dtype code dt (TF's dtype.max), and the smallest.
local INT_MAX = { [U8] = 255, [I8] = 127, [I32] = 2147483647, [I64] = 2 ^ 63 - 1 }
local INT_MIN = { [U8] = 0, [I8] = -128, [I32] = -2147483648, [I64] = -2 ^ 63 }
M.INT_MAX = INT_MAX

-- Significant bits of each float dtype, and float16's largest finite value.
local MANTISSA = { [F64] = 53, [F32] = 24, [F16] = 11, [BF16] = 8 }
local F16_MAX = 65504

-- Integer limit v as float dtype dt holds it (TF's in_dtype.as_numpy_dtype(v),
-- round to nearest), stepped toward zero once when that lies outside [lo, hi]
-- (np.nextafter, as TF's saturate_cast does).
local function float_limit(v, dt, lo, hi)
  local bits = MANTISSA[dt]
  local m, e = math.frexp(v)
  local r = math.floor(m * 2 ^ bits + 0.5) / 2 ^ bits * 2 ^ e
  if dt == F16 and math.abs(r) > F16_MAX then return r > 0 and F16_MAX or -F16_MAX end -- inf, stepped
  if r > hi or r < lo then
    local _, re = math.frexp(r)
    local ulp = 2 ^ (re - bits - (math.abs(r) == 2 ^ (re - 1) and 1 or 0)) -- the gap below a power of two is half
    r = r > 0 and r - ulp or r + ulp
  end
  return r
end

-- saturate_cast(x, dt) as TF's: clip to the range both dtypes hold, then cast.
local function saturate_cast(x, code)
  local xin = tonumber(x.dt)
  if dtype.is_int[code] then
    local lo, hi = INT_MIN[code], INT_MAX[code]
    if dtype.is_float[xin] then
      lo, hi = float_limit(lo, xin, lo, hi), float_limit(hi, xin, lo, hi)
      x = math_ops.clip_by_value(x, lo, hi)
    else
      local ilo, ihi = math.max(lo, INT_MIN[xin]), math.min(hi, INT_MAX[xin])
      if ilo > INT_MIN[xin] or ihi < INT_MAX[xin] then x = math_ops.clip_by_value(x, ilo, ihi) end
    end
  end
  return math_ops.cast(x, dtype.names[code])
end

-- convert_image_dtype(image, dtype, {saturate=false}) as TF's: integers span
-- [0, max], floats [0, 1]; int -> int shifts the range (floordiv or multiply
-- by the ratio of the maxima + 1), int -> float multiplies by 1 / max, float
-- -> int multiplies by max + 0.5 then casts, float -> float casts.
function M.convert_image_dtype(image, dt, ...)
  local o = args.parse("convert_image_dtype", { "saturate" }, ...)
  local x = istype(Tensor, image) and image or convert.arg(image, "convert_image_dtype")
  if dt == nil then fail("convert_image_dtype", "dtype is required") end
  local code = dtype.code(dt, "convert_image_dtype")
  local xin = tonumber(x.dt)
  local saturate = args.bool("convert_image_dtype", "saturate", o.saturate, false)
  if not (dtype.is_float[code] or INT_MAX[code]) then
    fail("convert_image_dtype", "dtype must be a float or integer dtype, got %s", dtype.names[code])
  end
  if not (dtype.is_float[xin] or INT_MAX[xin]) then
    fail("convert_image_dtype", "image must be a float or integer tensor, got %s", dtype.names[xin])
  end
  if code == xin then return x end
  local cast = saturate and saturate_cast or function(t, c) return math_ops.cast(t, dtype.names[c]) end
  if INT_MAX[xin] and INT_MAX[code] then
    local sin, sout = INT_MAX[xin], INT_MAX[code]
    if sin > sout then
      local scale = math.floor((sin + 1) / (sout + 1))
      return cast(math_ops.floordiv(x, scale), code)
    end
    return math_ops.mul(cast(x, code), math.floor((sout + 1) / (sin + 1)))
  elseif dtype.is_float[xin] and dtype.is_float[code] then
    return math_ops.cast(x, dtype.names[code])
  elseif INT_MAX[xin] then
    return math_ops.mul(math_ops.cast(x, dtype.names[code]), 1 / INT_MAX[xin])
  end
  return cast(math_ops.mul(x, INT_MAX[code] + 0.5), code)
end

-- TF's pattern for the value adjustments: float16 and float32 images are
-- used as they are, others converted to float32; `back` converts a result to
-- the image's dtype again (with saturation when `saturate`).
function M._to_float(x)
  local xin = tonumber(x.dt)
  local f = (xin == F16 or xin == F32) and x or M.convert_image_dtype(x, "float32")
  return f, function(y, saturate)
    if y.dt == x.dt then return y end
    return M.convert_image_dtype(y, dtype.names[xin], { saturate = saturate })
  end
end

return M
