-- stdlib/tide/image/geometry.lua — where pixels go: flips, rot90, transpose, crops and
-- pads (TF's bounding-box forms, central_crop, resize_with_crop_or_pad), crop_and_resize
-- and extract_patches, as views, gathers and elementwise ops (so they trace and differentiate).
-- Images are [H, W, C] or [N, H, W, C] (crop_and_resize and extract_patches: [N, H, W, C]).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local tensor = require "tide.tensor"
local recorder = require "tide.tape_recorder"
local util = require "tide.image.util"
local ffi, Tensor = binding.ffi, binding.Tensor
local istype = ffi.istype

local M = {}

local fail, hw_axes = util.fail, util.hw_axes
local add, sub, mul, where = math_ops.add, math_ops.sub, math_ops.mul, math_ops.where

-- ---- flips, rotations ----------------------------------------------------------------

-- flip_left_right(image) / flip_up_down(image) as TF's.
function M.flip_left_right(image)
  local x = util.image_arg("flip_left_right", image)
  local _, wa = hw_axes(x)
  return shape_ops.reverse(x, { wa })
end

function M.flip_up_down(image)
  local x = util.image_arg("flip_up_down", image)
  local ha = hw_axes(x)
  return shape_ops.reverse(x, { ha })
end

-- transpose(image) as tf.image.transpose: height and width swapped.
function M.transpose(image)
  local x = util.image_arg("transpose", image)
  if x.ndim == 4 then return shape_ops.transpose(x, { 0, 2, 1, 3 }) end
  if x.ndim == 3 then return shape_ops.transpose(x, { 1, 0, 2 }) end
  fail("transpose", "the image's rank must be known while tracing")
end

-- rot90(image, k=1) as TF's: k quarter turns counter-clockwise (negative k
-- turns clockwise). k is a number (or a tensor known now: the result's shape depends on it).
function M.rot90(image, k)
  local x = util.image_arg("rot90", image)
  if x.ndim < 0 then fail("rot90", "the image's rank must be known while tracing") end
  if istype(Tensor, k) and tensor.is_symbolic(k) then
    fail("rot90", "k must be a number (the result's shape depends on it), got a traced tensor")
  end
  k = k == nil and 1 or args.int("rot90", "k", k)
  k = k % 4
  local ha, wa = hw_axes(x)
  local perm = x.ndim == 4 and { 0, 2, 1, 3 } or { 1, 0, 2 }
  if k == 1 then return shape_ops.transpose(shape_ops.reverse(x, { wa }), perm) end
  if k == 2 then return shape_ops.reverse(x, { ha, wa }) end
  if k == 3 then return shape_ops.reverse(shape_ops.transpose(x, perm), { wa }) end
  return x
end

-- ---- crops and pads ----------------------------------------------------------------------

-- A slice of image x: rows [h0, h0 + h), columns [w0, w0 + w).
local function window(x, h0, w0, h, w)
  local spec = {}
  if x.ndim == 4 then spec[1] = {} end
  spec[#spec + 1] = { h0, h0 + h }
  spec[#spec + 1] = { w0, w0 + w }
  spec[#spec + 1] = {}
  return tensor.slice(x, spec)
end

-- central_crop(image, central_fraction) as tf.image.central_crop: the
-- central fraction of the height and width (TF's rounding: the border is
-- int((size - size * fraction) / 2) on each side). The height and width must
-- be known (also while tracing).
function M.central_crop(image, central_fraction)
  local x = util.image_arg("central_crop", image)
  local f = args.number("central_crop", "central_fraction", central_fraction)
  if not (f > 0 and f <= 1) then fail("central_crop", "central_fraction must be within (0, 1], got %s", tostring(f)) end
  if f == 1 then return x end
  local h, w = util.known_hw("central_crop", x)
  local h0 = math.floor((h - h * f) / 2)
  local w0 = math.floor((w - w * f) / 2)
  return window(x, h0, w0, h - 2 * h0, w - 2 * w0)
end

-- crop_to_bounding_box(image, offset_height, offset_width, target_height,
-- target_width) as TF's: the window of that size at that offset. Where the
-- image's height or width is unknown while tracing the window is not checked
-- against it (the slice op clamps it when the graph runs).
function M.crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width)
  local op = "crop_to_bounding_box"
  local x = util.image_arg(op, image)
  local oh, ow = util.count(op, "offset_height", offset_height), util.count(op, "offset_width", offset_width)
  local th, tw = util.count(op, "target_height", target_height, true), util.count(op, "target_width", target_width, true)
  if x.ndim < 0 then fail(op, "the image's rank must be known while tracing") end
  local ha, wa = hw_axes(x)
  local h, w = tonumber(x.dims[ha]), tonumber(x.dims[wa])
  if w >= 0 and w < tw + ow then
    fail(op, "width must be >= target + offset: the image %s is %d wide, target_width %d + offset_width %d",
      tostring(x.shape), w, tw, ow)
  end
  if h >= 0 and h < th + oh then
    fail(op, "height must be >= target + offset: the image %s is %d high, target_height %d + offset_height %d",
      tostring(x.shape), h, th, oh)
  end
  return window(x, oh, ow, th, tw)
end

-- pad_to_bounding_box(image, offset_height, offset_width, target_height,
-- target_width) as TF's: zeros around the image, which sits at the offset of
-- a target-sized canvas. The image's height and width must be known.
function M.pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width)
  local op = "pad_to_bounding_box"
  local x = util.image_arg(op, image)
  local oh, ow = util.count(op, "offset_height", offset_height), util.count(op, "offset_width", offset_width)
  local th, tw = util.count(op, "target_height", target_height), util.count(op, "target_width", target_width)
  local h, w = util.known_hw(op, x)
  local after_h, after_w = th - oh - h, tw - ow - w
  if after_w < 0 then
    fail(op, "width must be <= target - offset: the image %s is %d wide, target_width %d - offset_width %d",
      tostring(x.shape), w, tw, ow)
  end
  if after_h < 0 then
    fail(op, "height must be <= target - offset: the image %s is %d high, target_height %d - offset_height %d",
      tostring(x.shape), h, th, oh)
  end
  local pads = { { oh, after_h }, { ow, after_w }, { 0, 0 } }
  if x.ndim == 4 then table.insert(pads, 1, { 0, 0 }) end
  if oh == 0 and ow == 0 and after_h == 0 and after_w == 0 then return x end
  return shape_ops.pad(x, pads)
end

-- resize_with_crop_or_pad(image, target_height, target_width) as TF's: the
-- centre cropped and/or zero-padded (evenly, the odd pixel at the end) to the target.
function M.resize_with_crop_or_pad(image, target_height, target_width)
  local op = "resize_with_crop_or_pad"
  local x = util.image_arg(op, image)
  local th, tw = util.count(op, "target_height", target_height, true), util.count(op, "target_width", target_width, true)
  local h, w = util.known_hw(op, x)
  local dw, dh = tw - w, th - h
  local crop_w, pad_w = math.max(math.floor(-dw / 2), 0), math.max(math.floor(dw / 2), 0)
  local crop_h, pad_h = math.max(math.floor(-dh / 2), 0), math.max(math.floor(dh / 2), 0)
  local cropped = window(x, crop_h, crop_w, math.min(th, h), math.min(tw, w))
  return M.pad_to_bounding_box(cropped, pad_h, pad_w, th, tw)
end

-- ---- crop_and_resize ---------------------------------------------------------------------

local METHODS = { bilinear = true, nearest = true }

-- One axis of crop_and_resize's sample grid, as TF's kernel computes it in
-- float32: for n > 1, in = lo * (size - 1) + i * ((hi - lo) * (size - 1) / (n - 1));
-- for one sample, the box's centre (computed in double, as TF's 0.5 is).
-- lo, hi: [boxes, 1] (float32, or float64 for float64 images); returns
-- [boxes, n] coordinates and whether each lies inside.
local function grid(lo, hi, size, n)
  local at
  local dt = dtype.names[tonumber(lo.dt)]
  if n > 1 then
    local scale = math_ops.div(mul(sub(hi, lo), size - 1), n - 1)
    local steps = shape_ops.reshape(create.range(0, n, 1, dt), { 1, n })
    at = add(mul(lo, size - 1), mul(steps, scale))
  else
    local mid = mul(mul(math_ops.cast(add(lo, hi), "float64"), 0.5), size - 1)
    at = math_ops.cast(mid, dt)
  end
  local inside = math_ops.logical_and(math_ops.greater_equal(at, 0), math_ops.less_equal(at, size - 1))
  return at, inside
end

-- The int32 index of coordinates c (float), clamped into [0, size) (outside
-- samples are masked afterwards).
local function index_of(c, size)
  return math_ops.cast(math_ops.clip_by_value(c, 0, size - 1), "int32")
end

-- The crops of flat image rows `flat` ([N * H * W, C]) at int32 rows ys
-- [boxes, ch] and columns xs [boxes, cw] of images b [boxes, 1]: [boxes, ch, cw, C].
local function pick(flat, b, ys, xs, h, w)
  local row = add(mul(b, h), ys)                                -- [boxes, ch]
  local idx = add(mul(shape_ops.expand_dims(row, 2), w), shape_ops.expand_dims(xs, 1)) -- [boxes, ch, cw]
  return shape_ops.gather(flat, idx)
end

-- The crops of one method; image float [N, H, W, C], boxes [B, 4] of its dtype,
-- b [B, 1] int32; the samples outside the image left as they fall (masked by the caller).
local function sample(method, image, boxes, b, h, w, ch, cw, c)
  local parts = shape_ops.split(boxes, 4, { axis = 1 })
  local in_y, inside_y = grid(parts[1], parts[3], h, ch)
  local in_x, inside_x = grid(parts[2], parts[4], w, cw)
  local flat = shape_ops.reshape(image, { -1, c })
  local out
  if method == "nearest" then -- TF's roundf: halves away from zero (coordinates here are >= 0)
    local ry = index_of(math_ops.floor(add(in_y, 0.5)), h)
    local rx = index_of(math_ops.floor(add(in_x, 0.5)), w)
    out = pick(flat, b, ry, rx, h, w)
  else
    local top, left = math_ops.floor(in_y), math_ops.floor(in_x)
    local ty, by = index_of(top, h), index_of(math_ops.ceil(in_y), h)
    local lx, rx = index_of(left, w), index_of(math_ops.ceil(in_x), w)
    local yl = shape_ops.reshape(sub(in_y, top), { -1, ch, 1, 1 })
    local xl = shape_ops.reshape(sub(in_x, left), { -1, 1, cw, 1 })
    local tl, tr = pick(flat, b, ty, lx, h, w), pick(flat, b, ty, rx, h, w)
    local bl, br = pick(flat, b, by, lx, h, w), pick(flat, b, by, rx, h, w)
    local t = add(tl, mul(sub(tr, tl), xl))
    local bt = add(bl, mul(sub(br, bl), xl))
    out = add(t, mul(sub(bt, t), yl))
  end
  local inside = math_ops.logical_and(shape_ops.reshape(inside_y, { -1, ch, 1, 1 }),
    shape_ops.reshape(inside_x, { -1, 1, cw, 1 }))
  return out, inside
end

-- crop_and_resize(image, boxes, box_indices, crop_size, {method="bilinear",
-- extrapolation_value=0}) as TF's CropAndResize: for each box (normalized
-- [y1, x1, y2, x2], flipped when y1 > y2 or x1 > x2, may reach outside [0, 1])
-- of image box_indices[i], a crop_size sample grid spanning it, read bilinearly
-- or from the nearest pixel; samples outside the image are extrapolation_value.
-- float32 [boxes, crop_height, crop_width, C] (float64 for float64 images,
-- where TF gives float32: so that gradients check in float64, as resize).
-- Differentiable in the image and the boxes (for "nearest", the boxes'
-- gradient is the bilinear one, as TF's).
function M.crop_and_resize(image, boxes, box_indices, crop_size, ...)
  local op = "crop_and_resize"
  local o = args.parse(op, { "method", "extrapolation_value" }, ...)
  local x = util.image_arg(op, image, "image", 4)
  local bx = util.tensor_arg(op, boxes, "boxes")
  local bi = util.tensor_arg(op, box_indices, "box_indices")
  local method = o.method or "bilinear"
  if not METHODS[method] then fail(op, "method must be \"bilinear\" or \"nearest\", got %s", tostring(method)) end
  local ext = o.extrapolation_value == nil and 0 or args.number(op, "extrapolation_value", o.extrapolation_value)
  if type(crop_size) ~= "table" or istype(Tensor, crop_size) or #crop_size ~= 2 then
    fail(op, "crop_size must be {crop_height, crop_width}")
  end
  local ch, cw = util.count(op, "crop_height", crop_size[1], true), util.count(op, "crop_width", crop_size[2], true)
  if x.ndim < 0 then fail(op, "the image's rank must be known while tracing") end
  local n, h, w, c = tonumber(x.dims[0]), tonumber(x.dims[1]), tonumber(x.dims[2]), tonumber(x.dims[3])
  if h < 0 or w < 0 or c < 0 then
    fail(op, "the image's height, width and channels must be known while tracing, got shape %s", tostring(x.shape))
  end
  if h == 0 or w == 0 then fail(op, "image dimensions must be positive, got shape %s", tostring(x.shape)) end
  if bx.ndim >= 0 and (bx.ndim ~= 2 or (bx.dims[1] >= 0 and bx.dims[1] ~= 4)) then
    fail(op, "boxes must be 2-D [num_boxes, 4], got shape %s", tostring(bx.shape))
  end
  if bi.ndim >= 0 and bi.ndim ~= 1 then fail(op, "box_indices must be 1-D, got shape %s", tostring(bi.shape)) end
  if bx.ndim == 2 and bi.ndim == 1 and bx.dims[0] >= 0 and bi.dims[0] >= 0 and bx.dims[0] ~= bi.dims[0] then
    fail(op, "boxes %s and box_indices %s must have the same number of boxes", tostring(bx.shape), tostring(bi.shape))
  end
  if not dtype.is_int[tonumber(bi.dt)] then
    fail(op, "box_indices must be an int32 tensor, got %s", dtype.names[tonumber(bi.dt)])
  end
  local work = x.dt == util.F64 and "float64" or "float32"
  if not dtype.is_float[tonumber(bx.dt)] then fail(op, "boxes must be a float32 tensor, got %s", dtype.names[tonumber(bx.dt)]) end
  bx = math_ops.cast(bx, work)
  bi = math_ops.cast(bi, "int32")
  if not tensor.is_symbolic(bi) and n >= 0 and bi.nelem > 0 then -- TF's check, where the values are known now
    local lo, hi = require("tide.ops.reduce").reduce_min(bi):item(), require("tide.ops.reduce").reduce_max(bi):item()
    if lo < 0 or hi >= n then
      fail(op, "box_indices has values outside [0, batch_size) (batch %d, values from %d to %d)", n, lo, hi)
    end
  end
  local img = math_ops.cast(x, work)
  local b = shape_ops.expand_dims(bi, 1)
  local out, inside = sample(method, img, bx, b, h, w, ch, cw, c)
  if method == "nearest" and recorder.active then
    -- TF's gradient for the boxes is the bilinear one: a term that is zero
    -- in value (where finite) but carries the bilinear sampling's derivative in the boxes.
    local fixed = recorder.stop_gradient(img)
    local bil = sample("bilinear", fixed, bx, b, h, w, ch, cw, c)
    local still = recorder.stop_gradient(bil)
    out = add(out, where(math_ops.isfinite(still), sub(bil, still), 0))
  end
  return where(inside, out, ext)
end

-- ---- extract_patches -------------------------------------------------------------------

-- A pair from a list of 2 or TF's 4-entry form [1, a, b, 1].
local function pair(op, what, v)
  local list = args.int_list(op, what, v)
  if list and #list == 4 then
    if list[1] ~= 1 or list[4] ~= 1 then fail(op, "%s must be [1, %s_rows, %s_cols, 1], got {%s}", what, what, what,
      table.concat(list, ", ")) end
    list = { list[2], list[3] }
  end
  if not list or #list ~= 2 then fail(op, "%s must be 2 numbers (rows, cols) or TF's 4 [1, rows, cols, 1]", what) end
  for _, k in ipairs(list) do if k < 1 then fail(op, "%s must be positive, got {%s}", what, table.concat(list, ", ")) end end
  return list
end

-- Output size and leading pad of one axis (TF's GetWindowedOutputSize).
local function out_size(size, k, s, r, same)
  local eff = k + (k - 1) * (r - 1)
  if same then
    local n = math.ceil(size / s)
    return n, math.floor(math.max((n - 1) * s + eff - size, 0) / 2)
  end
  return math.max(math.floor((size - eff) / s) + 1, 0), 0
end

-- int32 [n, k] of source rows: i * s + j * r - pad.
local function taps(n, k, s, r)
  local flat = {}
  for i = 0, n - 1 do for j = 0, k - 1 do flat[#flat + 1] = i * s + j * r end end
  return shape_ops.reshape(convert.tensor(flat, "int32", "extract_patches"), { n, k })
end

-- extract_patches(images, sizes, strides, rates, padding) as
-- tf.image.extract_patches: each sizes window (its taps `rates` apart),
-- every `strides` pixels, flattened into the depth: [N, out_rows, out_cols,
-- size_rows * size_cols * C]; "SAME" pads with zeros as TF. sizes, strides and
-- rates are {rows, cols} or TF's [1, rows, cols, 1].
function M.extract_patches(images, sizes, strides, rates, padding)
  local op = "extract_patches"
  local x = util.image_arg(op, images, "images", 4)
  local k, s, r = pair(op, "sizes", sizes), pair(op, "strides", strides), pair(op, "rates", rates)
  local mode = type(padding) == "string" and padding:upper() or padding
  if mode ~= "VALID" and mode ~= "SAME" then fail(op, "padding must be \"VALID\" or \"SAME\", got %s", tostring(padding)) end
  if x.ndim < 0 then fail(op, "the images' rank must be known while tracing") end
  local h, w = util.known_hw(op, x)
  local c = tonumber(x.dims[3])
  local oh, ph = out_size(h, k[1], s[1], r[1], mode == "SAME")
  local ow, pw = out_size(w, k[2], s[2], r[2], mode == "SAME")
  local depth = k[1] * k[2] * c
  if oh == 0 or ow == 0 then
    local shape = { tonumber(x.dims[0]), oh, ow, depth }
    for _, d in ipairs(shape) do if d < 0 then fail(op, "the images' batch and channels must be known while tracing") end end
    return create.zeros(shape, dtype.names[tonumber(x.dt)])
  end
  -- rows and columns past the image (SAME) read the zero padding
  local last_h = (oh - 1) * s[1] + (k[1] - 1) * r[1] - ph
  local last_w = (ow - 1) * s[2] + (k[2] - 1) * r[2] - pw
  local pb, pr = math.max(last_h - (h - 1), 0), math.max(last_w - (w - 1), 0)
  if ph > 0 or pw > 0 or pb > 0 or pr > 0 then x = shape_ops.pad(x, { { 0, 0 }, { ph, pb }, { pw, pr }, { 0, 0 } }) end
  local rows = shape_ops.gather(x, taps(oh, k[1], s[1], r[1]), 1)     -- [N, oh, kh, W', C]
  local cols = shape_ops.gather(rows, taps(ow, k[2], s[2], r[2]), 3)  -- [N, oh, kh, ow, kw, C]
  local patches = shape_ops.transpose(cols, { 0, 1, 3, 2, 4, 5 })     -- [N, oh, ow, kh, kw, C]
  local n = tonumber(x.dims[0])
  return shape_ops.reshape(patches, { n >= 0 and n or -1, oh, ow, c >= 0 and depth or -1 })
end

return M
