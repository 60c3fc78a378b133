-- stdlib/tide/image/boxes.lua — bounding boxes: non_max_suppression and its
-- with_scores (soft-NMS), overlaps and padded forms, combined_non_max_suppression
-- (registry ops: kernels/cpu/nms.c), draw_bounding_boxes (kernels/cpu/draw_boxes.c).
-- Boxes are [y1, x1, y2, x2], normalized or in pixels; none of these has a gradient (TF's neither).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local util = require "tide.image.util"
local random = require "tide.random"
local C = binding.C

local M = {}

local fail = util.fail
local NMS, OVERLAPS, COMBINED = C.TIDE_OP_NON_MAX_SUPPRESSION, C.TIDE_OP_NON_MAX_SUPPRESSION_OVERLAPS,
  C.TIDE_OP_COMBINED_NON_MAX_SUPPRESSION
local PAD, TILED = 1, 2 -- non_max_suppression's mode bits (ops.def)

-- A float tensor argument as float32 (TF's NMS takes float32 and float16).
local function f32_arg(op, v, what)
  local x = util.tensor_arg(op, v, what)
  if not dtype.is_float[tonumber(x.dt)] then
    fail(op, "%s must be a float tensor, got %s", what, dtype.names[tonumber(x.dt)])
  end
  return x.dt == util.F32 and x or math_ops.cast(x, "float32")
end

-- A number argument, or the value of a one-element tensor known now.
local function num(op, what, v, default)
  if v == nil then return default end
  return args.number(op, what, v)
end

-- Run non_max_suppression (or _overlaps) with mode bits; its three results.
local function run_nms(op, code, first, scores, max_output_size, thr, score_thr, sigma, mode)
  local a = dispatch.attrs()
  local n = args.int(op, "max_output_size", max_output_size)
  if n < 0 then fail(op, "max_output_size must be non-negative, got %d", n) end
  a.n, a.m = n, mode
  a.scalars[0], a.scalars[1], a.scalars[2] = thr, score_thr, sigma
  return dispatch.run(code, a, { first, scores }, 3)
end

-- non_max_suppression(boxes, scores, max_output_size, {iou_threshold=0.5,
-- score_threshold=-inf}) as TF's: the int32 indices of at most max_output_size
-- boxes, by score, each overlapping none chosen before it by more than iou_threshold.
function M.non_max_suppression(boxes, scores, max_output_size, ...)
  local op = "non_max_suppression"
  local o = args.parse(op, { "iou_threshold", "score_threshold" }, ...)
  local idx = run_nms(op, NMS, f32_arg(op, boxes, "boxes"), f32_arg(op, scores, "scores"), max_output_size,
    num(op, "iou_threshold", o.iou_threshold, 0.5), num(op, "score_threshold", o.score_threshold, -math.huge), 0, 0)
  return idx
end

-- non_max_suppression_with_scores(boxes, scores, max_output_size,
-- {iou_threshold=0.5, score_threshold=-inf, soft_nms_sigma=0}) as TF's: the
-- indices and their scores; soft_nms_sigma > 0 decays the scores of
-- overlapping boxes by exp(-iou^2 / (2 sigma)) instead (Bodla et al.'s soft-NMS).
function M.non_max_suppression_with_scores(boxes, scores, max_output_size, ...)
  local op = "non_max_suppression_with_scores"
  local o = args.parse(op, { "iou_threshold", "score_threshold", "soft_nms_sigma" }, ...)
  local s = f32_arg(op, scores, "scores")
  local idx, sc = run_nms(op, NMS, f32_arg(op, boxes, "boxes"), s, max_output_size,
    num(op, "iou_threshold", o.iou_threshold, 0.5), num(op, "score_threshold", o.score_threshold, -math.huge),
    num(op, "soft_nms_sigma", o.soft_nms_sigma, 0), 0)
  return idx, sc
end

-- non_max_suppression_overlaps(overlaps, scores, max_output_size,
-- {overlap_threshold=0.5, score_threshold=-inf}) as TF's: the greedy choice
-- with a given [N, N] overlap matrix in place of the boxes' IOU.
function M.non_max_suppression_overlaps(overlaps, scores, max_output_size, ...)
  local op = "non_max_suppression_overlaps"
  local o = args.parse(op, { "overlap_threshold", "score_threshold" }, ...)
  local idx = run_nms(op, OVERLAPS, f32_arg(op, overlaps, "overlaps"), f32_arg(op, scores, "scores"),
    max_output_size, num(op, "overlap_threshold", o.overlap_threshold, 0.5),
    num(op, "score_threshold", o.score_threshold, -math.huge), 0, 0)
  return idx
end

-- non_max_suppression_padded(boxes, scores, max_output_size, {iou_threshold=0.5,
-- score_threshold=-inf, pad_to_max_output_size=false, sorted_input=false,
-- canonicalized_coordinates=false}) as TF 2's (its tiled algorithm's result):
-- (indices, valid); boxes [..., N, 4] and scores [..., N] may carry batch dims
-- (then pad_to_max_output_size must be true): indices [..., max_output_size],
-- padded with 0, valid [...]. As TF's, a box is suppressed by an IOU >=
-- iou_threshold, scores must exceed score_threshold, and a box none of whose
-- coordinates is positive is never selected.
function M.non_max_suppression_padded(boxes, scores, max_output_size, ...)
  local op = "non_max_suppression_padded"
  local o = args.parse(op, { "iou_threshold", "score_threshold", "pad_to_max_output_size", "sorted_input",
    "canonicalized_coordinates", "tile_size" }, ...)
  local b, s = f32_arg(op, boxes, "boxes"), f32_arg(op, scores, "scores")
  local pad = args.bool(op, "pad_to_max_output_size", o.pad_to_max_output_size, false)
  if b.ndim < 0 or s.ndim < 0 then fail(op, "the ranks of boxes and scores must be known while tracing") end
  if b.ndim < 2 then fail(op, "boxes must be [..., num_boxes, 4], got shape %s", tostring(b.shape)) end
  if b.ndim > 2 and not pad then
    fail(op, "pad_to_max_output_size must be true for batched input (boxes of shape %s)", tostring(b.shape))
  end
  local lead, batch = {}, 1
  for d = 0, b.ndim - 3 do
    local v = tonumber(b.dims[d])
    if v < 0 then fail(op, "the batch dims of boxes must be known while tracing, got shape %s", tostring(b.shape)) end
    lead[#lead + 1] = v
    batch = batch * v
  end
  local bb = shape_ops.reshape(b, { batch, -1, 4 })
  local ss = shape_ops.reshape(s, { batch, -1 })
  local m = args.int(op, "max_output_size", max_output_size)
  local idx, _, valid = run_nms(op, NMS, bb, ss, m, num(op, "iou_threshold", o.iou_threshold, 0.5),
    num(op, "score_threshold", o.score_threshold, -math.huge), 0, PAD + TILED)
  if not pad then
    local k = valid[0]
    return shape_ops.reshape(idx, { -1 }):slice { { 0, k:item() } }, shape_ops.reshape(valid, {})
  end
  local shape = {}
  for i, v in ipairs(lead) do shape[i] = v end
  shape[#shape + 1] = m
  return shape_ops.reshape(idx, shape), shape_ops.reshape(valid, lead)
end

-- combined_non_max_suppression(boxes, scores, max_output_size_per_class,
-- max_total_size, {iou_threshold=0.5, score_threshold=-inf,
-- pad_per_class=false, clip_boxes=true}) as TF's: per image and class the
-- greedy choice, then the best max_total_size of every class. boxes [B, N, q,
-- 4] (q = 1: shared by the classes, or one box per class), scores [B, N, K].
-- Returns a table {nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections}
-- (also at [1] .. [4]).
function M.combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, ...)
  local op = "combined_non_max_suppression"
  local o = args.parse(op, { "iou_threshold", "score_threshold", "pad_per_class", "clip_boxes" }, ...)
  local a = dispatch.attrs()
  a.n = args.int(op, "max_output_size_per_class", max_output_size_per_class)
  a.m = args.int(op, "max_total_size", max_total_size)
  a.scalars[0] = num(op, "iou_threshold", o.iou_threshold, 0.5)
  a.scalars[1] = num(op, "score_threshold", o.score_threshold, -math.huge)
  a.ints[0] = args.bool(op, "pad_per_class", o.pad_per_class, false) and 1 or 0
  a.ints[1] = args.bool(op, "clip_boxes", o.clip_boxes, true) and 1 or 0
  a.nints = 2
  local r = { dispatch.run(COMBINED, a, { f32_arg(op, boxes, "boxes"), f32_arg(op, scores, "scores") }, 4) }
  r.nmsed_boxes, r.nmsed_scores, r.nmsed_classes, r.valid_detections = r[1], r[2], r[3], r[4]
  return r
end

-- The sampler's attributes, checked and in attrs (ops.def's row).
local DISTORTED_OPTS = { "min_object_covered", "aspect_ratio_range", "area_range", "max_attempts",
  "use_image_if_no_bounding_boxes" }

local function range_of(op, what, v, default)
  if v == nil then return default[1], default[2] end
  if type(v) ~= "table" or #v ~= 2 then fail(op, "%s must be a pair {lo, hi}", what) end
  return args.number(op, what .. "[1]", v[1]), args.number(op, what .. "[2]", v[2])
end

local function distorted_box(op, code, image_size, bounding_boxes, o, seed_arg)
  local size = util.tensor_arg(op, image_size, "image_size")
  if size.dt ~= util.I32 and size.dt ~= util.I64 then size = math_ops.cast(size, "int32") end
  local a = dispatch.attrs()
  a.n = o.max_attempts == nil and 100 or args.int(op, "max_attempts", o.max_attempts)
  a.m = args.bool(op, "use_image_if_no_bounding_boxes", o.use_image_if_no_bounding_boxes, false) and 1 or 0
  a.scalars[0], a.scalars[1] = range_of(op, "area_range", o.area_range, { 0.05, 1 })
  a.scalars[2], a.scalars[3] = range_of(op, "aspect_ratio_range", o.aspect_ratio_range, { 0.75, 1.33 })
  local cover = o.min_object_covered == nil and 0.1 or o.min_object_covered
  cover = type(cover) == "number" and convert.tensor(cover, "float32", op) or util.scalar(op, "min_object_covered", cover, util.F32)
  local inputs = { size, f32_arg(op, bounding_boxes, "bounding_boxes"), cover }
  if seed_arg then
    inputs[4] = seed_arg
  else -- TF's seed 0 is no seed
    random.reserve_draws(a, (o.seed ~= nil and o.seed ~= 0) and o.seed or nil, op)
  end
  return dispatch.run(code, a, inputs, 3)
end

-- sample_distorted_bounding_box(image_size, bounding_boxes, {seed=0,
-- min_object_covered=0.1, aspect_ratio_range={0.75, 1.33}, area_range={0.05,
-- 1}, max_attempts=100, use_image_if_no_bounding_boxes=false}) as TF 2's: a
-- random crop of an image of image_size {height, width, channels} (TF's
-- rejection sampler: an aspect ratio, then a height, then a place, until the
-- crop covers min_object_covered of one of bounding_boxes [B, N, 4]; the whole
-- image when max_attempts fail). Returns begin and size (for a slice) and the
-- crop as a box [1, 1, 4]. Draws from tide.random's stream (seed: an op seed).
function M.sample_distorted_bounding_box(image_size, bounding_boxes, ...)
  local op = "sample_distorted_bounding_box"
  local o = args.parse(op, { "seed", unpack(DISTORTED_OPTS) }, ...)
  return distorted_box(op, C.TIDE_OP_SAMPLE_DISTORTED_BOUNDING_BOX, image_size, bounding_boxes, o)
end

-- stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed,
-- {...}) as TF's: TF's crop for the seed pair (its Philox words, read as its sampler reads them).
function M.stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed, ...)
  local op = "stateless_sample_distorted_bounding_box"
  local o = args.parse(op, DISTORTED_OPTS, ...)
  return distorted_box(op, C.TIDE_OP_STATELESS_SAMPLE_DISTORTED_BOUNDING_BOX, image_size, bounding_boxes, o,
    util.seed_pair(op, seed))
end

-- TF's default colours (draw_bounding_box_op.cc): yellow, blue, red, lime,
-- purple, olive, maroon, navy, aqua, fuchsia.
local DEFAULT_COLORS = {
  { 1, 1, 0, 1 }, { 0, 0, 1, 1 }, { 1, 0, 0, 1 }, { 0, 1, 0, 1 }, { 0.5, 0, 0.5, 1 },
  { 0.5, 0.5, 0, 1 }, { 0.5, 0, 0, 1 }, { 0, 0, 0.5, 1 }, { 0, 1, 1, 1 }, { 1, 0, 1, 1 },
}

-- draw_bounding_boxes(images, boxes, colors=nil) as TF's: each box's outline
-- (one pixel wide, at its corners times height - 1 and width - 1) drawn over
-- the float images [B, H, W, 1|3|4] in colors[i % #colors] ([nc, >= C]), TF's
-- table of ten without colors (its first channel 1 for one-channel images).
function M.draw_bounding_boxes(images, boxes, colors)
  local op = "draw_bounding_boxes"
  local x = util.image_arg(op, images, "images", 4)
  local b = f32_arg(op, boxes, "boxes")
  local c
  if colors == nil then
    local depth = util.channels(x)
    local t = {}
    for i, row in ipairs(DEFAULT_COLORS) do
      t[i] = { row[1], row[2], row[3], row[4] }
      if depth == 1 then t[i][1] = 1 end
    end
    c = convert.tensor(t, "float32", op)
  else
    c = f32_arg(op, colors, "colors")
  end
  return dispatch.run(C.TIDE_OP_DRAW_BOUNDING_BOXES, dispatch.attrs(), { x, b, c })
end

return M
