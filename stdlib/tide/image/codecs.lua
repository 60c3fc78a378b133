-- stdlib/tide/image/codecs.lua — tf.io's image codecs in tide.image: decode_png, decode_jpeg,
-- decode_bmp, decode_gif, decode_webp, decode_jxl, decode_image, encode_png, encode_jpeg (registry ops
-- over libpng, libjpeg-turbo, giflib, libwebp, libjxl and TF's own BMP reading) and what is built on
-- them: adjust_jpeg_quality, is_jpeg, extract_jpeg_shape, decode_and_crop_jpeg.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local create = require "tide.ops.create"
local dtype = require "tide.dtype"
local tensor = require "tide.tensor"
local dynamic_shape = require "tide.ops.dynamic_shape"
local util = require "tide.image.util"
local conv = require "tide.image.convert"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local bit = require "bit"

local M = {}

local fail = util.fail
local U8, I32 = util.U8, util.I32

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

-- decode_bmp(contents, {channels=0}) as tf.io.decode_bmp: uncompressed BMPs of 8, 24 or 32 bits
-- per pixel, read as TF's decoder reads them; a uint8 [H, W, C] tensor (C the file's when channels
-- is 0; 3 drops an alpha, 4 adds an opaque one; 8-bit files repeat their grey).
function M.decode_bmp(contents, ...)
  local o = args.parse("decode_bmp", { "channels" }, ...)
  local a = dispatch.attrs()
  a.n = channels_arg("decode_bmp", o.channels, { [0] = true, [3] = true, [4] = true, words = "0, 3 or 4 for BMP" })
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_DECODE_BMP, a, { contents_arg("decode_bmp", contents) })
end

-- decode_gif(contents) as tf.io.decode_gif: a uint8 [frames, H, W, 3] tensor, TF's compositing (the
-- canvas is the largest frame; each frame drawn over the one before, its transparent pixels kept).
function M.decode_gif(contents, ...)
  args.parse("decode_gif", {}, ...)
  local a = dispatch.attrs()
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_DECODE_GIF, a, { contents_arg("decode_gif", contents) })
end

local function uint8_only(op, dt)
  if dt ~= nil and dt ~= "uint8" then fail(op, "dtype must be \"uint8\" (TF's only one), got %s", tostring(dt)) end
end

-- decode_webp(contents, {channels=0, dtype="uint8"}) as tf.io.decode_webp: a uint8 [frames, H, W, C]
-- tensor (one frame for a still image); C the file's (3, or 4 with alpha; animations are RGBA), and
-- channels, when given, must match it.
function M.decode_webp(contents, ...)
  local o = args.parse("decode_webp", { "channels", "dtype" }, ...)
  uint8_only("decode_webp", o.dtype)
  local a = dispatch.attrs()
  a.n = channels_arg("decode_webp", o.channels, { [0] = true, [3] = true, [4] = true, words = "0, 3 or 4 for WebP" })
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_DECODE_WEBP, a, { contents_arg("decode_webp", contents) })
end

-- decode_jxl(contents, {channels=0, dtype="uint8"}) as tf.image.decode_jxl: the first frame of a JPEG XL
-- file as a uint8 [H, W, C] tensor (C the file's: 1 grey, 3 RGB, 4 RGBA; channels, when given, must match).
function M.decode_jxl(contents, ...)
  local o = args.parse("decode_jxl", { "channels", "dtype" }, ...)
  uint8_only("decode_jxl", o.dtype)
  local a = dispatch.attrs()
  a.n = channels_arg("decode_jxl", o.channels, { [0] = true, [1] = true, [3] = true, [4] = true,
    words = "0, 1, 3 or 4" })
  a.dtype = U8
  return dispatch.run(C.TIDE_OP_DECODE_JXL, a, { contents_arg("decode_jxl", contents) })
end

-- The format of encoded bytes from their first bytes, or nil.
local function sniff(bytes)
  if bytes:sub(1, 8) == "\137PNG\r\n\26\n" then return "png" end
  if bytes:sub(1, 2) == "\255\216" then return "jpeg" end
  if bytes:sub(1, 2) == "BM" then return "bmp" end
  if bytes:sub(1, 3) == "GIF" then return "gif" end
  if bytes:sub(1, 4) == "RIFF" and bytes:sub(9, 12) == "WEBP" then return "webp" end
  if bytes:sub(1, 2) == "\255\10" or bytes:sub(1, 12) == "\0\0\0\12JXL \r\n\135\n" then return "jxl" end
end

-- decode_image(contents, {channels=, dtype="uint8", expand_animations=true}) as tf.io.decode_image for
-- PNG, JPEG, BMP, GIF, WebP and JPEG XL (told apart by their signatures): GIFs and WebPs give [frames, H,
-- W, C] (the first frame [H, W, C] with expand_animations=false); WebP and JPEG XL take only uint8, as TF.
function M.decode_image(contents, ...)
  local o = args.parse("decode_image", { "channels", "dtype", "expand_animations" }, ...)
  local head
  local symbolic = istype(Tensor, contents) and bit.band(contents.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0
  if istype(Tensor, contents) and (contents.dt == C.TIDE_STRING or symbolic) then
    if o.expand_animations == false then
      -- one op sniffs the bytes in C: what a dataset map's read_file gives decodes on the pipeline's threads
      local a = dispatch.attrs()
      a.n = channels_arg("decode_image", o.channels, { [0] = true, [1] = true, [3] = true, [4] = true,
        words = "0, 1, 3 or 4" })
      a.dtype = U8
      local img = dispatch.run(C.TIDE_OP_DECODE_IMAGE, a, { contents })
      local dt = o.dtype or "uint8"
      return dt == "uint8" and img or conv.convert_image_dtype(img, dt)
    end
    if symbolic then
      fail("decode_image", "with expand_animations=true the result's rank (3, or 4 for an animation) depends on the " ..
        "bytes, which a traced function does not have: pass expand_animations=false (a GIF's first frame)")
    end
    if contents.dt == C.TIDE_STRING and contents.ndim == 0 then contents = contents:item() end
  end
  if type(contents) == "string" then head = contents:sub(1, 12)
  elseif istype(Tensor, contents) and contents.dt == U8 and contents.ndim == 1 then
    local n = math.min(12, tonumber(contents.nelem))
    head = n > 0 and string.char(unpack(contents:slice { { 0, n } }:totable())) or ""
  else
    return M.decode_png(contents) -- its error names the argument
  end
  local kind = sniff(head)
  local dt = o.dtype or "uint8"
  local expand = o.expand_animations == nil or args.bool("decode_image", "expand_animations", o.expand_animations)
  if kind == "png" then return M.decode_png(contents, { channels = o.channels, dtype = dt }) end
  local img
  if kind == "jpeg" then img = M.decode_jpeg(contents, { channels = o.channels })
  elseif kind == "bmp" then img = M.decode_bmp(contents, { channels = o.channels })
  elseif kind == "gif" then
    if o.channels ~= nil and o.channels ~= 0 and o.channels ~= 3 then
      fail("decode_image", "channels must be 0 or 3 for GIF, got %s", tostring(o.channels))
    end
    img = M.decode_gif(contents)
    if not expand then img = img[0] end
  elseif kind == "webp" or kind == "jxl" then
    if dt ~= "uint8" then
      fail("decode_image", "%s only supports uint8 for dtype, got %s", kind == "webp" and "WebP" or "JPEG XL", dt)
    end
    if kind == "jxl" then return M.decode_jxl(contents, { channels = o.channels }) end
    img = M.decode_webp(contents, { channels = o.channels })
    return expand and img or img[0]
  else
    fail("decode_image", "unknown image format: the bytes start with none of PNG's, JPEG's, BMP's, GIF's, WebP's " ..
      "or JPEG XL's signatures")
  end
  return dt == "uint8" and img or conv.convert_image_dtype(img, dt)
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

-- The JPEG density units TF's encode_jpeg takes.
local DENSITY = { ["in"] = 0, cm = 1 }
local FORMAT = { [""] = 0, grayscale = 1, rgb = 3 }

-- encode_jpeg(image, {format="", quality=95, progressive=false,
-- optimize_size=false, chroma_downsampling=true, density_unit="in",
-- x_density=300, y_density=300}) as tf.io.encode_jpeg: the JPEG file's bytes
-- of a uint8 [H, W, 1 or 3] image as a Lua string (libjpeg-turbo with TF's
-- settings); M.encode_jpeg_tensor gives them as a uint8 tensor. quality may be
-- an int32 tensor (a traced or drawn one: TF's encode_jpeg_variable_quality).
local JPEG_OPTS = { "format", "quality", "progressive", "optimize_size", "chroma_downsampling", "density_unit",
  "x_density", "y_density", "xmp_metadata" }
function M.encode_jpeg_tensor(image, ...)
  local op = "encode_jpeg"
  local o = args.parse(op, JPEG_OPTS, ...)
  local x = util.tensor_arg(op, image, "image")
  local a = dispatch.attrs()
  a.n = FORMAT[o.format or ""] or fail(op, "format must be \"\", \"grayscale\" or \"rgb\", got %s", tostring(o.format))
  if o.xmp_metadata ~= nil and o.xmp_metadata ~= "" then fail(op, "xmp_metadata is not supported") end
  local flags = 0
  if args.bool(op, "progressive", o.progressive, false) then flags = flags + 1 end
  if args.bool(op, "optimize_size", o.optimize_size, false) then flags = flags + 2 end
  if args.bool(op, "chroma_downsampling", o.chroma_downsampling, true) then flags = flags + 4 end
  a.m = flags
  a.ints[0] = DENSITY[o.density_unit or "in"] or fail(op, "density_unit must be \"in\" or \"cm\", got %s",
    tostring(o.density_unit))
  a.ints[1] = o.x_density == nil and 300 or args.int(op, "x_density", o.x_density)
  a.ints[2] = o.y_density == nil and 300 or args.int(op, "y_density", o.y_density)
  a.nints = 3
  a.dtype = U8
  local q = o.quality == nil and 95 or o.quality
  if type(q) == "number" then
    q = args.int(op, "quality", q)
    if q < 0 or q > 100 then fail(op, "quality must be in [0, 100], got %d", q) end
    q = convert.tensor(q, "int32", op)
  else
    q = util.scalar(op, "quality", q, I32)
  end
  return dispatch.run(C.TIDE_OP_ENCODE_JPEG, a, { x, q })
end

function M.encode_jpeg(image, ...)
  local bytes = M.encode_jpeg_tensor(image, ...)
  return ffi.string(bytes.data, tonumber(bytes.nelem))
end

-- adjust_jpeg_quality(image, jpeg_quality, {dct_method=""}) as TF's: the
-- image as uint8 (saturated), JPEG-encoded at that quality (a number or an
-- int32 tensor) and decoded again, in the image's dtype.
function M.adjust_jpeg_quality(image, jpeg_quality, ...)
  local op = "adjust_jpeg_quality"
  local o = args.parse(op, { "dct_method" }, ...)
  local x = util.image_arg(op, image, "image")
  if x.ndim ~= 3 then fail(op, "image must be [height, width, channels], got shape %s", tostring(x.shape)) end
  local c = util.channels(x)
  local u8 = conv.convert_image_dtype(x, "uint8", { saturate = true })
  local bytes = M.encode_jpeg_tensor(u8, { quality = jpeg_quality })
  local back = M.decode_jpeg(bytes, { channels = c > 0 and c or nil, dct_method = o.dct_method })
  return conv.convert_image_dtype(back, dtype.names[tonumber(x.dt)], { saturate = true })
end

-- The first bytes of contents, as a Lua string (tensors: their bytes), or nil
-- for a traced tensor.
local function head_of(contents, n)
  if type(contents) == "string" then return contents:sub(1, n) end
  if istype(Tensor, contents) and not tensor.is_symbolic(contents) then
    if contents.dt == U8 and contents.ndim == 1 then
      local k = math.min(n, tonumber(contents.nelem))
      return k > 0 and string.char(unpack(contents:slice { { 0, k } }:totable())) or ""
    end
    if contents.ndim == 0 and contents.dtype == "string" then return contents:item():sub(1, n) end
  end
end

-- is_jpeg(contents) as tf.io.is_jpeg: whether the bytes start with JPEG's
-- SOI marker and a segment marker (a Lua boolean; known only eagerly).
function M.is_jpeg(contents)
  local head = head_of(contents, 3)
  if head == nil then fail("is_jpeg", "contents must be bytes known now (a Lua string, a string or uint8 tensor)") end
  return head == "\255\216\255"
end

-- extract_jpeg_shape(contents, {output_type="int32"}) as
-- tf.io.extract_jpeg_shape: {height, width, channels} of the file, as a
-- tensor (read by decoding it).
function M.extract_jpeg_shape(contents, ...)
  local o = args.parse("extract_jpeg_shape", { "output_type" }, ...)
  local img = M.decode_jpeg(contents)
  return dynamic_shape.shape(img, { out_type = o.output_type or "int32" })
end

-- decode_and_crop_jpeg(contents, crop_window, {channels=0, ratio=1,
-- dct_method=""}) as tf.io.decode_and_crop_jpeg: the window {y, x, height,
-- width} of the decoded image (TF's pixels: it decodes only the window, with
-- the same result).
function M.decode_and_crop_jpeg(contents, crop_window, ...)
  local op = "decode_and_crop_jpeg"
  local o = args.parse(op, { "channels", "ratio", "dct_method" }, ...)
  local w = args.int_list(op, "crop_window", crop_window)
  if not w or #w ~= 4 then fail(op, "crop_window must be {y, x, height, width}") end
  local img = M.decode_jpeg(contents, { channels = o.channels, ratio = o.ratio, dct_method = o.dct_method })
  local h, wd = tonumber(img.dims[0]), tonumber(img.dims[1])
  if w[1] < 0 or w[2] < 0 or w[3] <= 0 or w[4] <= 0 or (h >= 0 and w[1] + w[3] > h) or (wd >= 0 and w[2] + w[4] > wd) then
    fail(op, "crop window {%d, %d, %d, %d} is not valid for an image of %dx%d", w[1], w[2], w[3], w[4], h, wd)
  end
  return img:slice { { w[1], w[1] + w[3] }, { w[2], w[2] + w[4] }, {} }
end

return M
