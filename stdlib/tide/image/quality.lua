-- stdlib/tide/image/quality.lua — measures of images and their differences: psnr, ssim,
-- ssim_multiscale, total_variation, image_gradients and sobel_edges, as TF composes
-- them (image_ops_impl.py): differentiable, traceable.
-- Images are [..., H, W, C] (at least 3 dims); integer images count in [0, 1] as
-- convert_image_dtype gives them.
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local nn = require "tide.ops.nn"
local nn_conv = require "tide.ops.nn_conv"
local tensor = require "tide.tensor"
local util = require "tide.image.util"
local conv = require "tide.image.convert"

local M = {}

local fail = util.fail
local add, sub, mul, div = math_ops.add, math_ops.sub, math_ops.mul, math_ops.div

-- Two images of one shape in their last three dims (leading dims broadcast),
-- and at least 3 dims each; the shapes as Lua lists (-1: unknown).
local function image_pair(op, a, b)
  a, b = util.tensor_arg(op, a, "img1"), util.tensor_arg(op, b, "img2")
  if a.ndim < 0 or b.ndim < 0 then fail(op, "the images' ranks must be known while tracing") end
  if a.ndim < 3 or b.ndim < 3 then
    fail(op, "images must have at least 3 dims [..., height, width, channels], got shapes %s and %s",
      tostring(a.shape), tostring(b.shape))
  end
  for k = 1, 3 do
    local da, db = tonumber(a.dims[a.ndim - k]), tonumber(b.dims[b.ndim - k])
    if da >= 0 and db >= 0 and da ~= db then
      fail(op, "the two images' last three dims must agree, got shapes %s and %s", tostring(a.shape), tostring(b.shape))
    end
  end
  return a, b
end

-- max_val as a float32 number or scalar: cast to the images' dtype, then
-- scaled as convert_image_dtype scales it (255 of a uint8 image is 1).
local function max_value(op, max_val, x)
  local code = tonumber(x.dt)
  local v = util.scalar(op, "max_val", max_val, code)
  if type(v) == "number" then
    v = math_ops.cast(convert.tensor(v, "float64", op), dtype.names[code])
  end
  return conv.convert_image_dtype(v, "float32")
end

-- psnr(a, b, max_val) as tf.image.psnr: 20 log10(max_val) - 10 log10(mse)
-- per image (the mean squared difference over its last three dims), float32.
function M.psnr(a, b, max_val)
  a, b = image_pair("psnr", a, b)
  local mv = max_value("psnr", max_val, a)
  a, b = conv.convert_image_dtype(a, "float32"), conv.convert_image_dtype(b, "float32")
  local mse = reduce.reduce_mean(math_ops.squared_difference(a, b), { -3, -2, -1 })
  local head = div(mul(20, math_ops.log(mv)), math_ops.log(convert.tensor(10, "float32", "psnr")))
  return sub(head, mul(10 / math.log(10), math_ops.log(mse)))
end

-- TF's _fspecial_gauss: a size x size Gaussian (softmax of -d^2 / 2 sigma^2), [size, size, 1, 1].
local function gaussian(size, sigma)
  local coords = sub(create.range(0, size, 1, "float32"), (size - 1) / 2)
  local g = mul(math_ops.square(coords), div(-0.5, math_ops.square(convert.tensor(sigma, "float32", "ssim"))))
  g = add(shape_ops.reshape(g, { 1, -1 }), shape_ops.reshape(g, { -1, 1 }))
  g = nn.softmax(shape_ops.reshape(g, { 1, -1 }))
  return shape_ops.reshape(g, { size, size, 1, 1 })
end

-- The shape of x as a list, its unknown dims -1.
local function dims(x)
  local list = {}
  for d = 0, x.ndim - 1 do list[d + 1] = tonumber(x.dims[d]) end
  return list
end

-- TF's _ssim_per_channel: the SSIM map (luminance * contrast-structure) and
-- cs, averaged over height and width unless index_map. img1, img2 float32.
local function ssim_per_channel(op, x, y, max_val, size, sigma, k1, k2, index_map)
  local sx = dims(x)
  local h, w, c = sx[#sx - 2], sx[#sx - 1], sx[#sx]
  if h < 0 or w < 0 or c < 0 then
    fail(op, "the images' height, width and channels must be known while tracing, got shape %s", tostring(x.shape))
  end
  if h < size or w < size then
    fail(op, "the images (shape %s) must be at least filter_size %d high and wide", tostring(x.shape), size)
  end
  local kernel = shape_ops.tile(gaussian(size, sigma), { 1, 1, c, 1 })
  local function reducer(t)
    local st = dims(t)
    local flat = shape_ops.reshape(t, { -1, st[#st - 2], st[#st - 1], st[#st] })
    local r = nn_conv.depthwise_conv2d(flat, kernel, { strides = 1, padding = "VALID" })
    local out = {}
    for i = 1, #st - 3 do out[i] = st[i] end
    local lead = #out
    out[#out + 1], out[#out + 2], out[#out + 3] = st[#st - 2] - size + 1, st[#st - 1] - size + 1, st[#st]
    for i = 1, lead do if out[i] < 0 then out[i] = -1 end end -- one unknown leading dim at most (checked below)
    return shape_ops.reshape(r, out)
  end
  local c1 = math_ops.square(mul(max_val, k1))
  local c2 = math_ops.square(mul(max_val, k2))
  local mean0, mean1 = reducer(x), reducer(y)
  local num0 = mul(mul(mean0, mean1), 2)
  local den0 = add(math_ops.square(mean0), math_ops.square(mean1))
  local luminance = div(add(num0, c1), add(den0, c1))
  local num1 = mul(reducer(mul(x, y)), 2)
  local den1 = reducer(add(math_ops.square(x), math_ops.square(y)))
  local cs = div(add(sub(num1, num0), c2), add(sub(den1, den0), c2))
  if index_map then return mul(luminance, cs), cs end
  return reduce.reduce_mean(mul(luminance, cs), { -3, -2 }), reduce.reduce_mean(cs, { -3, -2 })
end

local SSIM_OPTS = { "filter_size", "filter_sigma", "k1", "k2", "return_index_map" }

local function ssim_options(op, o)
  local size = o.filter_size == nil and 11 or util.count(op, "filter_size", o.filter_size, true)
  local sigma = o.filter_sigma == nil and 1.5 or args.number(op, "filter_sigma", o.filter_sigma)
  local k1 = o.k1 == nil and 0.01 or args.number(op, "k1", o.k1)
  local k2 = o.k2 == nil and 0.03 or args.number(op, "k2", o.k2)
  return size, sigma, k1, k2
end

-- ssim(img1, img2, max_val, {filter_size=11, filter_sigma=1.5, k1=0.01,
-- k2=0.03, return_index_map=false}) as tf.image.ssim: the structural similarity
-- of each image pair (averaged over channels; a map of it with return_index_map), float32.
function M.ssim(img1, img2, max_val, ...)
  local op = "ssim"
  local o = args.parse(op, SSIM_OPTS, ...)
  local x, y = image_pair(op, img1, img2)
  local size, sigma, k1, k2 = ssim_options(op, o)
  local mv = max_value(op, max_val, x)
  x, y = conv.convert_image_dtype(x, "float32"), conv.convert_image_dtype(y, "float32")
  local s = ssim_per_channel(op, x, y, mv, size, sigma, k1, k2, args.bool(op, "return_index_map", o.return_index_map, false))
  return reduce.reduce_mean(s, { -1 })
end

-- TF's multiscale weights (Wang, Simoncelli and Bovik 2003).
local MSSSIM_WEIGHTS = { 0.0448, 0.2856, 0.3001, 0.2363, 0.1333 }

-- Halve x's height and width (TF's step of ssim_multiscale): odd sizes are
-- first padded by one mirrored row or column at the end, then 2 x 2 means.
local function downscale(x)
  local st = dims(x)
  local h, w, c = st[#st - 2], st[#st - 1], st[#st]
  local flat = shape_ops.reshape(x, { -1, h, w, c })
  if h % 2 ~= 0 or w % 2 ~= 0 then
    flat = shape_ops.pad(flat, { { 0, 0 }, { 0, h % 2 }, { 0, w % 2 }, { 0, 0 } }, { mode = "SYMMETRIC" })
  end
  local pooled = nn_conv.avg_pool2d(flat, { 2, 2 }, { strides = { 2, 2 }, padding = "VALID" })
  local out = {}
  for i = 1, #st - 3 do out[i] = st[i] < 0 and -1 or st[i] end
  out[#out + 1], out[#out + 2], out[#out + 3] = math.floor((h + h % 2) / 2), math.floor((w + w % 2) / 2), c
  return shape_ops.reshape(pooled, out)
end

-- ssim_multiscale(img1, img2, max_val, {power_factors=TF's five, filter_size=11,
-- filter_sigma=1.5, k1=0.01, k2=0.03}) as tf.image.ssim_multiscale: the
-- contrast-structure of each coarser scale and the SSIM of the last, each to
-- its power factor, multiplied; float32 per image.
function M.ssim_multiscale(img1, img2, max_val, ...)
  local op = "ssim_multiscale"
  local o = args.parse(op, { "power_factors", "filter_size", "filter_sigma", "k1", "k2" }, ...)
  local x, y = image_pair(op, img1, img2)
  local size, sigma, k1, k2 = ssim_options(op, o)
  local powers = o.power_factors or MSSSIM_WEIGHTS
  if type(powers) ~= "table" or #powers < 1 then fail(op, "power_factors must be a non-empty list of numbers") end
  local mv = max_value(op, max_val, x)
  x, y = conv.convert_image_dtype(x, "float32"), conv.convert_image_dtype(y, "float32")
  local parts, last = {}, nil
  for k = 1, #powers do
    if k > 1 then x, y = downscale(x), downscale(y) end
    local s, cs = ssim_per_channel(op, x, y, mv, size, sigma, k1, k2, false)
    parts[k], last = math_ops.relu(cs), math_ops.relu(s)
  end
  parts[#powers] = last
  local stacked = shape_ops.stack(parts, { axis = -1 })
  local pw = convert.tensor(powers, "float32", op)
  return reduce.reduce_mean(reduce.reduce_prod(math_ops.pow(stacked, pw), { -1 }), { -1 })
end

-- total_variation(images) as TF's: the sum of absolute differences of
-- neighbouring pixels, down and across; a scalar for one image, one per image of a batch.
function M.total_variation(images)
  local x = util.image_arg("total_variation", images, "images")
  if x.ndim < 0 then fail("total_variation", "the images' rank must be known while tracing") end
  local lead = x.ndim == 4 and { {} } or {}
  local function part(spec) local s = {} for i, v in ipairs(lead) do s[i] = v end for _, v in ipairs(spec) do s[#s + 1] = v end return s end
  local d1 = sub(tensor.slice(x, part { { 1, nil }, {}, {} }), tensor.slice(x, part { { 0, -1 }, {}, {} }))
  local d2 = sub(tensor.slice(x, part { {}, { 1, nil }, {} }), tensor.slice(x, part { {}, { 0, -1 }, {} }))
  local axes = x.ndim == 4 and { 1, 2, 3 } or nil
  return add(reduce.reduce_sum(math_ops.abs(d1), axes), reduce.reduce_sum(math_ops.abs(d2), axes))
end

-- image_gradients(image) as TF's: (dy, dx), the forward differences down and
-- across, each zero in its last row or column; [batch, H, W, C] in and out.
function M.image_gradients(image)
  local x = util.image_arg("image_gradients", image, "image", 4)
  if x.ndim ~= 4 then fail("image_gradients", "expects a 4-D tensor [batch, h, w, d], got shape %s", tostring(x.shape)) end
  local dy = sub(tensor.slice(x, { {}, { 1, nil }, {}, {} }), tensor.slice(x, { {}, { 0, -1 }, {}, {} }))
  local dx = sub(tensor.slice(x, { {}, {}, { 1, nil }, {} }), tensor.slice(x, { {}, {}, { 0, -1 }, {} }))
  return shape_ops.pad(dy, { { 0, 0 }, { 0, 1 }, { 0, 0 }, { 0, 0 } }),
    shape_ops.pad(dx, { { 0, 0 }, { 0, 0 }, { 0, 1 }, { 0, 0 } })
end

-- sobel_edges(image) as TF's: the vertical and horizontal Sobel responses of
-- each channel (the image mirrored by one pixel at its borders): [batch, H, W, C, 2].
function M.sobel_edges(image)
  local x = util.image_arg("sobel_edges", image, "image", 4)
  if x.ndim ~= 4 then fail("sobel_edges", "expects a 4-D tensor [batch, h, w, d], got shape %s", tostring(x.shape)) end
  if not dtype.is_float[tonumber(x.dt)] then
    fail("sobel_edges", "image must be a float tensor, got %s (convert it with tide.image.convert_image_dtype)",
      dtype.names[tonumber(x.dt)])
  end
  local c = util.channels(x)
  if c < 0 then fail("sobel_edges", "the image's channels must be known while tracing, got shape %s", tostring(x.shape)) end
  local k = { { { -1, -1 }, { -2, 0 }, { -1, 1 } }, { { 0, -2 }, { 0, 0 }, { 0, 2 } }, { { 1, -1 }, { 2, 0 }, { 1, 1 } } }
  local kernel = shape_ops.reshape(convert.tensor(k, dtype.names[tonumber(x.dt)], "sobel_edges"), { 3, 3, 1, 2 })
  kernel = shape_ops.tile(kernel, { 1, 1, c, 1 })
  local padded = shape_ops.pad(x, { { 0, 0 }, { 1, 1 }, { 1, 1 }, { 0, 0 } }, { mode = "REFLECT" })
  local out = nn_conv.depthwise_conv2d(padded, kernel, { strides = 1, padding = "VALID" })
  local d = dims(x)
  for i = 1, 4 do if d[i] < 0 then d[i] = -1 end end
  d[5] = 2
  return shape_ops.reshape(out, d)
end

return M
