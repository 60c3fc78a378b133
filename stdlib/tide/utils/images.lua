-- stdlib/tide/utils/images.lua — keras.utils' image files: load_img, img_to_array, save_img, with tide's decoders
-- and resize (TF's pixels) in place of PIL's; an image is a uint8 [height, width, channels] tensor.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local image = require "tide.image"
local io_files = require "tide.io.files"
local shape_ops = require "tide.ops.shape"

local fmt = string.format
local M = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

local CHANNELS = { rgb = 3, rgba = 4, grayscale = 1 }

-- A float image rounded and clipped to uint8, as an image file holds it.
local function to_uint8(x)
  if x.dtype == "uint8" then return x end
  return x:round():clip_by_value(0, 255):cast("uint8")
end

-- load_img(path, {color_mode="rgb", target_size=nil, interpolation="nearest", keep_aspect_ratio=false}) as
-- keras.utils.load_img: the file decoded (PNG, JPEG, BMP, GIF's first frame, WebP, JPEG XL) to a uint8
-- [h, w, c] tensor (Keras gives a PIL image); target_size={h, w} resizes it ("nearest" or "bilinear"), after
-- cropping the centre to the target's aspect ratio when keep_aspect_ratio.
function M.load_img(path, opts)
  local op = "load_img"
  local o = args.parse(op, { keywords = { "grayscale", "color_mode", "target_size", "interpolation",
    "keep_aspect_ratio" } }, opts or {})
  if type(path) ~= "string" then fail(op, "path must be a string, got %s", type(path)) end
  local mode = o.grayscale and "grayscale" or o.color_mode or "rgb"
  local channels = CHANNELS[mode]
  if not channels then fail(op, "color_mode must be \"rgb\", \"rgba\" or \"grayscale\", got %s", tostring(mode)) end
  local img = image.decode_image(io_files.read_file(path), { channels = channels, expand_animations = false })
  if o.target_size then
    local size = o.target_size
    if type(size) ~= "table" or #size ~= 2 then fail(op, "target_size must be {height, width}") end
    local h, w = args.int(op, "target_size[1]", size[1]), args.int(op, "target_size[2]", size[2])
    local method = o.interpolation or "nearest"
    if method ~= "nearest" and method ~= "bilinear" then
      fail(op, "interpolation \"%s\" is not supported (tide.image.resize has nearest and bilinear)", tostring(method))
    end
    if o.keep_aspect_ratio then
      local ih, iw = img.shape[1], img.shape[2]
      -- Keras's load_img: the largest centred crop of the target's aspect ratio (integer arithmetic)
      local cw, ch = math.min(iw, math.floor((ih * w) / h)), math.min(ih, math.floor((iw * h) / w))
      local h0, w0 = math.floor((ih - ch) / 2), math.floor((iw - cw) / 2)
      img = img:slice { { h0, h0 + ch }, { w0, w0 + cw } }
    end
    img = to_uint8(image.resize(img, { h, w }, { method = method }))
  end
  return img
end

-- img_to_array(img, {dtype="float32", data_format="channels_last"}) as keras.utils.img_to_array.
function M.img_to_array(img, opts)
  local op = "img_to_array"
  local o = args.parse(op, { keywords = { "data_format", "dtype" } }, opts or {})
  local x = binding.istensor(img) and img or convert.tensor(img, nil, op)
  if x.ndim ~= 2 and x.ndim ~= 3 then fail(op, "img must be [height, width] or [height, width, channels], got %s",
    tostring(x.shape)) end
  if x.ndim == 2 then x = shape_ops.expand_dims(x, -1) end
  if (o.data_format or "channels_last") == "channels_first" then x = shape_ops.transpose(x, { 2, 0, 1 }) end
  return x:cast(o.dtype or "float32")
end

-- array_to_img(x, {data_format="channels_last", scale=true, dtype="float32"}) as keras.utils.array_to_img: the
-- image object tide's image functions take (Keras gives a PIL image): a uint8 [h, w, c] tensor (c 1, 3 or 4;
-- int32 for one channel past 255, PIL's mode "I"), x taken as dtype, scaled to 0..255 when scale ((x - min) / max
-- * 255) and cut to integers as NumPy's astype does on this platform (toward zero, then wrapped modulo 256 for
-- uint8, as 300.2 -> 44).
function M.array_to_img(x, opts)
  local op = "array_to_img"
  local o = args.parse(op, { keywords = { "data_format", "scale", "dtype" } }, opts or {})
  local dt = o.dtype or "float32"
  local t = binding.istensor(x) and x:cast(dt) or convert.tensor(x, dt, op)
  if t.ndim ~= 3 then
    fail(op, "expected image array to have rank 3 (single image), got an array with shape %s", tostring(t.shape))
  end
  local df = o.data_format or "channels_last"
  if df ~= "channels_last" and df ~= "channels_first" then
    fail(op, "data_format must be \"channels_last\" or \"channels_first\", got %s", tostring(df))
  end
  if df == "channels_first" then t = shape_ops.transpose(t, { 1, 2, 0 }) end
  local c = t.shape[3]
  if c ~= 1 and c ~= 3 and c ~= 4 then fail(op, "unsupported channel number: %d (1, 3 or 4)", c) end
  if o.scale == nil or o.scale then
    if not t.dtype:match("^float") then t = t:cast("float32") end
    t = t - t:min()
    local m = t:max()
    if m:item() ~= 0 then t = t / m end
    t = t * 255
  end
  if t.dtype:match("^float") then t = (t:sign() * t:abs():floor()):cast("int64") end -- toward zero
  if c == 1 and t.nelem > 0 and t:max():item() > 255 then return t:cast("int32") end
  if t.dtype == "uint8" then return t end
  return (t:cast("int64") % 256):cast("uint8")
end

-- save_img(path, x, {file_format=, scale=true, data_format="channels_last"}) as keras.utils.save_img: x
-- (any dtype) scaled to 0..255 when scale (x - min, then * 255 / max), written as PNG or JPEG by the path's
-- suffix or file_format; an RGBA JPEG loses its alpha, as Keras warns.
function M.save_img(path, x, opts)
  local op = "save_img"
  local o = args.parse(op, { keywords = { "data_format", "file_format", "scale" } }, opts or {})
  if type(path) ~= "string" then fail(op, "path must be a string, got %s", type(path)) end
  local t = binding.istensor(x) and x or convert.tensor(x, "float32", op)
  if t.ndim == 2 then t = shape_ops.expand_dims(t, -1) end
  if t.ndim ~= 3 then fail(op, "x must be [height, width, channels], got %s", tostring(t.shape)) end
  if o.data_format == "channels_first" then t = shape_ops.transpose(t, { 1, 2, 0 }) end
  local c = t.shape[3]
  if c ~= 1 and c ~= 3 and c ~= 4 then fail(op, "x must have 1, 3 or 4 channels, got %d", c) end
  local ff = (o.file_format or path:match("%.([^./]+)$") or ""):lower()
  if ff == "jpg" then ff = "jpeg" end
  if ff ~= "png" and ff ~= "jpeg" then fail(op, "file_format must be png or jpeg (from the path or given), got \"%s\"", ff) end
  if o.scale == nil or o.scale then
    t = t:cast("float32")
    t = t - t:min()
    local m = t:max():item()
    if m ~= 0 then t = t * (255 / m) end
  end
  t = to_uint8(t)
  if ff == "jpeg" and c == 4 then t = t:slice { {}, {}, { 0, 3 } } end
  local bytes = ff == "png" and image.encode_png(t) or image.encode_jpeg(t)
  local f, err = binding.open_file(path, "wb")
  if not f then fail(op, "cannot write '%s': %s", path, tostring(err)) end
  f:write(bytes)
  f:close()
end

return M
