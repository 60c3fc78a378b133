-- stdlib/tide/image/proposals.lua — tf.image.generate_bounding_box_proposals (Faster R-CNN's region proposals):
-- the top scores' anchors moved by their deltas, clipped, filtered by size and thinned by NMS, per image.
-- TF 2.21 has only a GPU kernel (generate_box_proposals_op.cu.cc); this is its arithmetic on registry ops.
local dtype = require "tide.dtype"
local args = require "tide.args"
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local index = require "tide.ops.index"
local create = require "tide.ops.create"
local util = require "tide.image.util"
local boxes = require "tide.image.boxes"

local M = {}

local fail = util.fail
local add, sub, mul, minimum, maximum = math_ops.add, math_ops.sub, math_ops.mul, math_ops.minimum, math_ops.maximum
local OP = "generate_bounding_box_proposals"
-- TF's bbox_xform_clip_default_: log(1000 / 16), the most a width or height delta may grow a box by (as float32)
local CLIP = tonumber(binding.ffi.cast("float", math.log(1000 / 16)))

local function f32(v, what, rank)
  local x = util.tensor_arg(OP, v, what)
  if not dtype.is_float[tonumber(x.dt)] then fail(OP, "%s must be a float tensor, got %s", what, x.dtype) end
  if rank and x.ndim ~= rank then fail(OP, "%s must have rank %d, got shape %s", what, rank, tostring(x.shape)) end
  return x.dt == util.F32 and x or math_ops.cast(x, "float32")
end

local function known(x, what)
  local out = {}
  for i = 0, x.ndim - 1 do
    out[i + 1] = tonumber(x.dims[i])
    if out[i + 1] < 0 then fail(OP, "the shape of %s must be known, got %s", what, tostring(x.shape)) end
  end
  return out
end

-- One image: scores [K] (K = H * W * A), deltas [K, 4] as [dy, dx, dh, dw], anchors [K, 4] as [y1, x1, y2, x2],
-- info [3+] (height, width, scale): rois [post, 4] and their scores [post], zero-padded.
local function one_image(scores, deltas, anchors, info, o)
  local k = math.min(tonumber(scores.dims[0]), o.pre_nms_topn)
  local top, idx = reduce.top_k(scores, { k = k })      -- descending; ties by index, as cub's stable radix sort
  local a = shape_ops.unstack(shape_ops.gather(anchors, idx), { axis = 1 })
  local d = shape_ops.unstack(shape_ops.gather(deltas, idx), { axis = 1 })
  local function decode(lo, hi, shift, grow)
    local size = sub(hi, lo)
    local ctr = add(lo, mul(size, 0.5))
    local pred_ctr = add(ctr, mul(size, shift))
    local pred = mul(size, math_ops.exp(minimum(grow, CLIP)))
    return sub(pred_ctr, mul(pred, 0.5)), add(pred_ctr, mul(pred, 0.5))
  end
  local x1, x2 = decode(a[2], a[4], d[2], d[4])
  local y1, y2 = decode(a[1], a[3], d[1], d[3])
  local ih, iw, scale = info[0], info[1], info[2]
  local function clip(v, hi) return maximum(minimum(v, hi), 0) end
  x1, y1, x2, y2 = clip(x1, iw), clip(y1, ih), clip(x2, iw), clip(y2, ih)
  local keep = math_ops.greater_equal(minimum(sub(x2, x1), sub(y2, y1)), mul(scale, o.min_size))
  local kept = index.boolean_mask(shape_ops.stack({ y1, x1, y2, x2 }, 1), keep)
  local kept_scores = index.boolean_mask(top, keep)
  local sel = boxes.non_max_suppression(kept, kept_scores, o.post_nms_topn, { iou_threshold = o.nms_threshold })
  local post = o.post_nms_topn
  local rois = shape_ops.concat({ shape_ops.gather(kept, sel), create.zeros({ post, 4 }, "float32") }, 0)
  local probs = shape_ops.concat({ shape_ops.gather(kept_scores, sel), create.zeros({ post }, "float32") }, 0)
  return rois:slice { { 0, post } }, probs:slice { { 0, post } }
end

-- generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors, {nms_threshold=0.7,
-- pre_nms_topn=6000, min_size=16, post_nms_topn=300}) as tf.image's (its GPU kernel): scores [N, H, W, A];
-- bbox_deltas [N, H, W, 4A] as [dy, dx, dh, dw] per anchor; image_info [N, 5] (height, width, scale, ...);
-- anchors: one [y1, x1, y2, x2] box per position and anchor, [H, W, 4A] as TF's kernel reads them (or
-- [H * W * A, 4]). Per image the pre_nms_topn best scores' anchors are moved by their deltas (dh and dw at
-- most log(1000 / 16)), clipped to the image, kept where both sides are at least min_size * scale, and thinned
-- by NMS at nms_threshold. Returns rois [N, post_nms_topn, 4] ([y1, x1, y2, x2], best first) and
-- roi_probabilities [N, post_nms_topn], zero-padded. The shapes must be known (per-image results differ in size).
function M.generate_bounding_box_proposals(scores, bbox_deltas, image_info, anchors, ...)
  local o = args.parse(OP, { "nms_threshold", "pre_nms_topn", "min_size", "post_nms_topn" }, ...)
  local s = f32(scores, "scores", 4)
  local n, h, w, na = table.unpack(known(s, "scores"))
  local d = f32(bbox_deltas, "bbox_deltas", 4)
  local ds = known(d, "bbox_deltas")
  if ds[1] ~= n or ds[2] ~= h or ds[3] ~= w or ds[4] ~= 4 * na then
    fail(OP, "bbox_deltas must be [N, H, W, 4 * A] = [%d, %d, %d, %d] for scores of shape %s, got %s", n, h, w, 4 * na,
      tostring(s.shape), tostring(d.shape))
  end
  local info = f32(image_info, "image_info", 2)
  local is = known(info, "image_info")
  if is[1] ~= n or is[2] < 3 then
    fail(OP, "image_info must be [N, 5] (height, width, scale, ...) with N = %d, got %s", n, tostring(info.shape))
  end
  local an = f32(anchors, "anchors")
  local as = known(an, "anchors")
  local count = 1
  for _, v in ipairs(as) do count = count * v end
  if as[#as] % 4 ~= 0 or count ~= h * w * na * 4 then
    fail(OP, "anchors must hold one box per position and anchor, [H, W, 4 * A] = [%d, %d, %d], got %s", h, w, 4 * na,
      tostring(an.shape))
  end
  local opts = {
    nms_threshold = o.nms_threshold == nil and 0.7 or args.number(OP, "nms_threshold", o.nms_threshold),
    pre_nms_topn = o.pre_nms_topn == nil and 6000 or args.int(OP, "pre_nms_topn", o.pre_nms_topn),
    min_size = o.min_size == nil and 16 or args.number(OP, "min_size", o.min_size),
    post_nms_topn = o.post_nms_topn == nil and 300 or args.int(OP, "post_nms_topn", o.post_nms_topn),
  }
  if opts.nms_threshold < 0 or opts.nms_threshold > 1 then
    fail(OP, "nms_threshold must be in [0, 1], got %s", tostring(opts.nms_threshold))
  end
  if opts.pre_nms_topn <= 0 then fail(OP, "pre_nms_topn must be positive, got %d", opts.pre_nms_topn) end
  if opts.post_nms_topn <= 0 then fail(OP, "post_nms_topn must be positive, got %d", opts.post_nms_topn) end
  local flat_anchors = shape_ops.reshape(an, { -1, 4 })
  local rois, probs = {}, {}
  for i = 0, n - 1 do
    rois[i + 1], probs[i + 1] = one_image(shape_ops.reshape(s[i], { -1 }), shape_ops.reshape(d[i], { -1, 4 }),
      flat_anchors, info[i], opts)
  end
  if n == 0 then return create.zeros({ 0, opts.post_nms_topn, 4 }, "float32"), create.zeros({ 0, opts.post_nms_topn },
    "float32") end
  return shape_ops.stack(rois, 0), shape_ops.stack(probs, 0)
end

return M
