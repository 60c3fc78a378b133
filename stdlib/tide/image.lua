-- stdlib/tide/image.lua — tide.image, TF's tf.image and tf.io image codecs:
-- decode/encode (registry ops over libpng and libjpeg-turbo), resize, flips, crops, dtype scaling.
-- Images are [height, width, channels] or [batch, height, width, channels]
-- (channels last). Every function is registry ops or a composition of them,
-- so it runs eagerly and inside traced functions (tide.trace, dataset maps).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local tensor = require "tide.tensor"
local random = require "tide.random"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local U8, I8, I32, I64 = C.TIDE_UINT8, C.TIDE_INT8, C.TIDE_INT32, C.TIDE_INT64
local F32, F64, F16, BF16 = C.TIDE_FLOAT32, C.TIDE_FLOAT64, C.TIDE_FLOAT16, C.TIDE_BFLOAT16

-- Raise "op: <formatted message>" at the user's line.
local function fail(op, fmt, ...) binding.error(op .. ": " .. string.format(fmt, ...)) end

-- An image argument: a tensor (tables convert) of rank 3 or 4 (unknown
-- while tracing passes: the ops check when the graph runs).
local function image_arg(op, v, what)
  if v == nil then fail(op, "%s is required (a [height, width, channels] or [batch, height, width, channels] tensor)",
    what or "image") end
  local x = istype(Tensor, v) and v or convert.arg(v, op)
  if x.ndim >= 0 and x.ndim ~= 3 and x.ndim ~= 4 then
    fail(op, "%s must be [height, width, channels] or [batch, height, width, channels], got shape %s",
      what or "image", tostring(x.shape))
  end
  return x
end

-- The encoded bytes: a Lua string (binary-safe) or a 1-D uint8 tensor.
local function contents_arg(op, v)
  if type(v) == "string" then return create.from_buffer(v, { #v }, "uint8") end
  if istype(Tensor, v) then return v end
  fail(op, "contents must be the encoded bytes as a Lua string (io.open(f, \"rb\"):read(\"a\")), a scalar " ..
    "string tensor or a 1-D uint8 tensor, got %s", type(v))
end

local function channels_arg(op, v, allowed)
  if v == nil then return 0 end
  local n = args.int(op, "channels", v)
  if not allowed[n] then fail(op, "channels must be one of %s, got %d", allowed.words, n) end
  return n
end

-- ---- codecs ------------------------------------------------------------------

-- decode_png(contents, {channels=0, dtype="uint8"}) as tf.io.decode_png: a
-- uint8 [H, W, C] tensor (C the file's when channels is 0). dtype="uint16"
-- gives the 16-bit samples (0..65535) in an int32 tensor: tide has no uint16.
function M.decode_png(contents, ...)
  local o = args.parse("decode_png", { "channels", "dtype" }, ...)
  local a = dispatch.attrs()
  a.n = channels_arg("decode_png", o.channels, { [0] = true, [1] = true, [3] = true, [4] = true, words = "0, 1, 3, 4" })
  local dt = o.dtype or "uint8"
  if dt == "uint16" or dt == "int32" then a.dtype = I32
  elseif dt == "uint8" then a.dtype = U8
  else fail("decode_png", "dtype must be \"uint8\" or \"uint16\" (given as int32), got %s", tostring(dt)) end
  return dispatch.run(C.TIDE_OP_DECODE_PNG, a, { contents_arg("decode_png", contents) })
end

-- "" is TF's default: INTEGER_FAST in TF 2.21 (core/lib/jpeg/jpeg_mem.h sets
-- JDCT_IFAST; tests/fixtures/images shows TF's default pixels are IFAST's).
local DCT = { [""] = 1, INTEGER_ACCURATE = 0, INTEGER_FAST = 1 }

-- decode_jpeg(contents, {channels=0, ratio=1, dct_method=""}) as
-- tf.io.decode_jpeg with TF's defaults (fancy upsampling; "" = INTEGER_FAST).
function M.decode_jpeg(contents, ...)
  local o = args.parse("decode_jpeg", { "channels", "ratio", "dct_method" }, ...)
  local a = dispatch.attrs()
  a.n = channels_arg("decode_jpeg", o.channels, { [0] = true, [1] = true, [3] = true, words = "0, 1, 3" })
  a.m = o.ratio == nil and 1 or args.int("decode_jpeg", "ratio", o.ratio)
  if not (a.m == 1 or a.m == 2 or a.m == 4 or a.m == 8) then
    fail("decode_jpeg", "ratio must be 1, 2, 4 or 8, got %d", tonumber(a.m))
  end
  local dct = DCT[o.dct_method or ""]
  if not dct then
    fail("decode_jpeg", "dct_method must be \"\", \"INTEGER_ACCURATE\" or \"INTEGER_FAST\", got %s", tostring(o.dct_method))
  end
  a.axis = dct
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_DECODE_JPEG, a, { contents_arg("decode_jpeg", contents) })
end

-- The format of encoded bytes from their first bytes, or nil.
local function sniff(bytes)
  if bytes:sub(1, 8) == "\137PNG\r\n\26\n" then return "png" end
  if bytes:sub(1, 2) == "\255\216" then return "jpeg" end
end

-- decode_image(contents, {channels=, dtype=}) as tf.io.decode_image for PNG
-- and JPEG (told apart by their signatures); GIF and BMP are not supported.
function M.decode_image(contents, ...)
  local o = args.parse("decode_image", { "channels", "dtype", "expand_animations" }, ...)
  local head
  if type(contents) == "string" then head = contents:sub(1, 8)
  elseif istype(Tensor, contents) and contents.dt == U8 and contents.ndim == 1 then
    local n = math.min(8, tonumber(contents.nelem))
    head = n > 0 and string.char(unpack(contents:slice { { 0, n } }:totable())) or ""
  else
    return M.decode_png(contents) -- its error names the argument
  end
  local kind = sniff(head)
  local dt = o.dtype or "uint8"
  if kind == "png" then return M.decode_png(contents, { channels = o.channels, dtype = dt }) end
  if kind == "jpeg" then
    local img = M.decode_jpeg(contents, { channels = o.channels })
    return dt == "uint8" and img or M.convert_image_dtype(img, dt)
  end
  fail("decode_image", "unknown image format: the bytes start neither with PNG's signature nor with JPEG's " ..
    "SOI marker (GIF and BMP are not supported)")
end

-- encode_png(image, {compression=-1}) as tf.io.encode_png: the PNG file's
-- bytes as a Lua string. image: uint8 [H, W, C] with C 1 to 4 (int32 0..65535
-- gives 16-bit samples). M.encode_png_tensor gives them as a uint8 tensor.
function M.encode_png_tensor(image, ...)
  local o = args.parse("encode_png", { "compression" }, ...)
  local x = istype(Tensor, image) and image or convert.arg(image, "encode_png")
  local a = dispatch.attrs()
  a.n = o.compression == nil and -1 or args.int("encode_png", "compression", o.compression)
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_ENCODE_PNG, a, { x })
end

function M.encode_png(image, ...)
  local bytes = M.encode_png_tensor(image, ...)
  return ffi.string(bytes.data, tonumber(bytes.nelem))
end

-- ---- resize ------------------------------------------------------------------

local RESIZE = { bilinear = C.TIDE_OP_RESIZE_BILINEAR, nearest = C.TIDE_OP_RESIZE_NEAREST }

-- resize(images, size, {method="bilinear", antialias=false}) as TF2's
-- tf.image.resize (half-pixel centers): bilinear gives float32 (float64 for
-- float64 images, so that gradients check in float64), nearest keeps the dtype.
function M.resize(images, size, ...)
  local o = args.parse("resize", { "method", "antialias", "preserve_aspect_ratio" }, ...)
  local x = image_arg("resize", images, "images")
  local method = o.method or "bilinear"
  local op = RESIZE[method]
  if not op then fail("resize", "method must be \"bilinear\" or \"nearest\", got %s", tostring(method)) end
  if o.antialias then fail("resize", "antialias=true is not supported yet (TF's scale_and_translate)") end
  if o.preserve_aspect_ratio then fail("resize", "preserve_aspect_ratio=true is not supported yet") end
  if type(size) ~= "table" or #size ~= 2 then
    fail("resize", "size must be {height, width}, got %s", type(size) == "table" and (#size .. " numbers") or type(size))
  end
  local h, w = args.int("resize", "size[1]", size[1]), args.int("resize", "size[2]", size[2])
  if h < 1 or w < 1 then fail("resize", "size must be positive, got {%d, %d}", h, w) end
  local a = dispatch.attrs()
  a.ints[0], a.ints[1] = h, w
  a.nints = 2
  a.dtype = x.dt == F64 and F64 or F32
  return dispatch.run(op, a, { x })
end

-- ---- flips and crops -----------------------------------------------------------

-- The height and width axes of an image of x's rank.
local function hw_axes(x) return x.ndim == 4 and 1 or 0, x.ndim == 4 and 2 or 1 end

-- flip_left_right(image) / flip_up_down(image) as TF's.
function M.flip_left_right(image)
  local x = image_arg("flip_left_right", image)
  local _, wa = hw_axes(x)
  return shape_ops.reverse(x, { wa })
end

function M.flip_up_down(image)
  local x = image_arg("flip_up_down", image)
  local ha = hw_axes(x)
  return shape_ops.reverse(x, { ha })
end

-- random_flip_left_right(image, {seed=}) / random_flip_up_down as TF's: each
-- image flipped with probability 1/2 (one draw for [H, W, C], one per image of
-- a batch), from tide.random's Philox stream (op seed `seed`).
local function random_flip(name, axis_of)
  return function(image, ...)
    local o = args.parse(name, { "seed" }, ...)
    local x = image_arg(name, image)
    local flipped = shape_ops.reverse(x, { axis_of(x) })
    local draw_shape
    if x.ndim == 3 then draw_shape = {}
    elseif x.dims[0] >= 0 then draw_shape = { tonumber(x.dims[0]), 1, 1, 1 }
    else -- a traced batch of unknown size: [batch, 1, 1, 1] as a tensor
      local batch = dynamic_shape.shape(x):slice { { 0, 1 } }
      draw_shape = shape_ops.concat({ batch, create.ones({ 3 }, "int32") }, 0)
    end
    local u = random.uniform(draw_shape, { seed = o.seed })
    return math_ops.where(math_ops.less(u, 0.5), flipped, x)
  end
end

M.random_flip_left_right = random_flip("random_flip_left_right", function(x) local _, w = hw_axes(x) return w end)
M.random_flip_up_down = random_flip("random_flip_up_down", function(x) return (hw_axes(x)) end)

-- random_crop(value, size, {seed=}) as tf.image.random_crop: a [size] slice
-- of value (any rank) at offsets drawn uniformly (TF's rule: a random int32 mod
-- the number of valid offsets per dim).
function M.random_crop(value, size, ...)
  local o = args.parse("random_crop", { "seed" }, ...)
  local x = istype(Tensor, value) and value or convert.arg(value, "random_crop")
  if type(size) ~= "table" then fail("random_crop", "size must be a list of %d numbers, got %s", x.ndim, type(size)) end
  if #size ~= x.ndim then fail("random_crop", "size must have one entry per dim of value (%d), got %d", x.ndim, #size) end
  local limits = {}
  local dyn
  for d = 1, x.ndim do
    local s = args.int("random_crop", "size", size[d])
    local n = tonumber(x.dims[d - 1])
    if s < 0 then fail("random_crop", "size must not be negative, got %d", s) end
    if n >= 0 and n < s then
      fail("random_crop", "value's shape %s is smaller than size {%s} in dim %d", tostring(x.shape),
        table.concat(size, ", "), d - 1)
    end
    if n < 0 then dyn = true end
    limits[d] = n >= 0 and n - s + 1 or -1
  end
  local offsets = random.uniform({ x.ndim }, { maxval = 2147483647, dtype = "int32", seed = o.seed })
  local limit
  if dyn then -- shape - size + 1, computed when the graph runs
    limit = math_ops.add(math_ops.sub(dynamic_shape.shape(x), convert.tensor(size, "int32", "random_crop")), 1)
  else
    limit = convert.tensor(limits, "int32", "random_crop")
  end
  offsets = math_ops.mod(offsets, limit)
  local out = x
  for d = 1, x.ndim do
    local n = tonumber(x.dims[d - 1])
    if n ~= size[d] then
      local idx = math_ops.add(create.range(0, size[d], 1, "int32"), offsets[d - 1])
      out = shape_ops.gather(out, idx, { axis = d - 1 })
    end
  end
  return out
end

-- central_crop(image, central_fraction) as tf.image.central_crop: the
-- central fraction of the height and width (TF's rounding: the border is
-- int((size - size * fraction) / 2) on each side). The height and width must
-- be known (also while tracing).
function M.central_crop(image, central_fraction)
  local x = image_arg("central_crop", image)
  local f = args.number("central_crop", "central_fraction", central_fraction)
  if not (f > 0 and f <= 1) then fail("central_crop", "central_fraction must be within (0, 1], got %s", tostring(f)) end
  if f == 1 then return x end
  local ha, wa = hw_axes(x)
  local h, w = tonumber(x.dims[ha]), tonumber(x.dims[wa])
  if h < 0 or w < 0 then
    fail("central_crop", "the image's height and width must be known while tracing, got shape %s", tostring(x.shape))
  end
  local h0 = math.floor((h - h * f) / 2)
  local w0 = math.floor((w - w * f) / 2)
  local spec = {}
  if x.ndim == 4 then spec[1] = {} end
  spec[#spec + 1] = { h0, h - h0 }
  spec[#spec + 1] = { w0, w - w0 }
  spec[#spec + 1] = {}
  return tensor.slice(x, spec)
end

-- ---- values ----------------------------------------------------------------------

-- The largest value of integer dtype code dt (TF's dtype.max), and the smallest.
local INT_MAX = { [U8] = 255, [I8] = 127, [I32] = 2147483647, [I64] = 2 ^ 63 - 1 }
local INT_MIN = { [U8] = 0, [I8] = -128, [I32] = -2147483648, [I64] = -2 ^ 63 }

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

-- per_image_standardization(image) as TF's: each image (the last three dims)
-- less its mean, over max(stddev, 1 / sqrt(pixels)); float32 out.
function M.per_image_standardization(image)
  local x = image_arg("per_image_standardization", image)
  x = math_ops.cast(x, "float32")
  local axes = { -1, -2, -3 }
  local n = 1
  for d = x.ndim - 3, x.ndim - 1 do
    local v = tonumber(x.dims[d])
    if v < 0 then n = nil break end
    n = n * v
  end
  local mean = reduce.reduce_mean(x, axes, true)
  local std = reduce.reduce_std(x, axes, true)
  local min_std
  if n then min_std = 1 / math.sqrt(n)
  else
    local pixels = reduce.reduce_prod(dynamic_shape.shape(x):slice { { -3, nil } })
    min_std = math_ops.rsqrt(math_ops.cast(pixels, "float32"))
  end
  return math_ops.div(math_ops.sub(x, mean), math_ops.maximum(std, min_std))
end

-- adjust_brightness(image, delta) as TF's: delta added in float ([0, 1] for
-- integer images, converted there and back with saturation).
function M.adjust_brightness(image, delta)
  local x = istype(Tensor, image) and image or convert.arg(image, "adjust_brightness")
  local d = args.number("adjust_brightness", "delta", delta)
  local xin = tonumber(x.dt)
  if xin == F16 or xin == F32 then return math_ops.add(x, d) end
  local f = M.convert_image_dtype(x, "float32")
  return M.convert_image_dtype(math_ops.add(f, d), dtype.names[xin], { saturate = true })
end

return M
