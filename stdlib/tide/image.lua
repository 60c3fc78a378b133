-- stdlib/tide/image.lua — tide.image, TF's tf.image and tf.io's image codecs: resize
-- (registry ops: their gradients are in grad/image.lua) and resize_with_pad here, and the
-- public table gathered from tide.image.* (codecs, convert, color, geometry, random,
-- boxes, quality, transform, proposals). Images are [height, width, channels] or [batch, height, width,
-- channels] (channels last). Every function is registry ops or a composition of them,
-- so it runs eagerly and inside traced functions (tide.trace, dataset maps).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local args = require "tide.args"
local util = require "tide.image.util"
local geometry = require "tide.image.geometry"
local ffi, C = binding.ffi, binding.C

local M = {}

local fail = util.fail
local F64, F32 = util.F64, util.F32

-- TF's tf.image.ResizeMethod names; tide's resize has the first two.
M.ResizeMethod = {
  BILINEAR = "bilinear", NEAREST_NEIGHBOR = "nearest", BICUBIC = "bicubic", AREA = "area",
  LANCZOS3 = "lanczos3", LANCZOS5 = "lanczos5", GAUSSIAN = "gaussian", MITCHELLCUBIC = "mitchellcubic",
}

-- ---- resize ------------------------------------------------------------------

local RESIZE = { bilinear = C.TIDE_OP_RESIZE_BILINEAR, nearest = C.TIDE_OP_RESIZE_NEAREST }

-- resize(images, size, {method="bilinear", antialias=false}) as TF2's
-- tf.image.resize (half-pixel centers): bilinear gives float32 (float64 for
-- float64 images, so that gradients check in float64), nearest keeps the dtype.
function M.resize(images, size, ...)
  local o = args.parse("resize", { "method", "antialias", "preserve_aspect_ratio" }, ...)
  local x = util.image_arg("resize", images, "images")
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

-- resize_with_pad(image, target_height, target_width, {method="bilinear"}) as
-- TF's: resized keeping the aspect ratio (TF's float32 arithmetic) to fit the
-- target, then zero-padded evenly (the odd pixel at the end) to it.
function M.resize_with_pad(image, target_height, target_width, ...)
  local op = "resize_with_pad"
  local o = args.parse(op, { "method", "antialias" }, ...)
  local x = util.image_arg(op, image)
  local th, tw = util.count(op, "target_height", target_height, true), util.count(op, "target_width", target_width, true)
  local h, w = util.known_hw(op, x)
  local f32 = function(v) return tonumber(ffi.cast("float", v)) end
  local ratio = math.max(f32(f32(w) / f32(tw)), f32(f32(h) / f32(th)))
  local rh, rw = f32(f32(h) / ratio), f32(f32(w) / ratio)
  local ph = math.max(0, math.floor(f32(f32(f32(th) - rh) / 2)))
  local pw = math.max(0, math.floor(f32(f32(f32(tw) - rw) / 2)))
  local resized = M.resize(x, { math.floor(rh), math.floor(rw) }, { method = o.method, antialias = o.antialias })
  return geometry.pad_to_bounding_box(resized, ph, pw, th, tw)
end

-- The rest of the public table, one module per concern (a module's functions named
-- with a leading underscore are its own helpers, shared inside tide.image only).
local PARTS = {
  codecs = require "tide.image.codecs", convert = require "tide.image.convert", color = require "tide.image.color",
  geometry = geometry, random = require "tide.image.random", boxes = require "tide.image.boxes",
  quality = require "tide.image.quality", transform = require "tide.image.transform",
  proposals = require "tide.image.proposals",
}
for _, name in ipairs { "codecs", "convert", "color", "geometry", "random", "boxes", "quality", "transform",
  "proposals" } do
  for k, v in pairs(PARTS[name]) do
    if type(v) == "function" and not k:match("^_") then
      assert(M[k] == nil, "tide.image." .. k .. " is defined twice")
      M[k] = v
    end
  end
end

return M
