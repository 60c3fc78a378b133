-- tests/spec/image/boxes_spec.lua — non_max_suppression (hard, soft, overlaps, padded and
-- batched), combined_non_max_suppression and draw_bounding_boxes against TF 2.21
-- (tests/fixtures/image_ops): flipped, empty and near-duplicate boxes, thresholds at 0 and
-- 1, traces and errors.
local tide = require "tide"
local h = require "helpers"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same
local N = E.nms

-- "-inf" or a number, as gen.py's keys spell them.
local function num(s) return s == "-inf" and -math.huge or tonumber(s) end

describe("tide.image.non_max_suppression", function()
  local boxes, scores = T(N.boxes), T(N.scores)

  it("matches TF's greedy selection, its soft-NMS scores and its padded (tiled) form", function()
    local n = 0
    for key, want in pairs(N) do
      local m, iou, st = key:match("^nms_m(%d+)_iou([%d.]+)_s(.+)$")
      if m then
        local k = key:sub(5)
        local o = { iou_threshold = tonumber(iou), score_threshold = num(st) }
        same(I.non_max_suppression(boxes, scores, tonumber(m), o), want, 0, key)
        o.soft_nms_sigma = 0.5
        local idx, sc = I.non_max_suppression_with_scores(boxes, scores, tonumber(m), o)
        same(idx, N["soft_" .. k].indices, 0, "soft " .. k)
        same(sc, N["soft_" .. k].scores, 1e-6, "soft scores " .. k)
        o.soft_nms_sigma, o.pad_to_max_output_size = nil, true
        local pi, pv = I.non_max_suppression_padded(boxes, scores, tonumber(m), o)
        same(pi, N["padded_" .. k].indices, 0, "padded " .. k)
        same(pv, N["padded_" .. k].valid, 0, "padded valid " .. k)
        o.pad_to_max_output_size = nil
        pi, pv = I.non_max_suppression_padded(boxes, scores, tonumber(m), o)
        same(pi, N["unpadded_" .. k].indices, 0, "unpadded " .. k)
        same(pv, N["unpadded_" .. k].valid, 0, "unpadded valid " .. k)
        n = n + 1
      end
    end
    assert(n == 8, "cases " .. n)
    for _, sigma in ipairs { "0.3", "1.0" } do
      local idx, sc = I.non_max_suppression_with_scores(boxes, scores, 8,
        { iou_threshold = 1.0, score_threshold = 0.05, soft_nms_sigma = tonumber(sigma) })
      same(idx, N["soft_sigma" .. sigma].indices, 0, "sigma " .. sigma)
      same(sc, N["soft_sigma" .. sigma].scores, 1e-6, "sigma scores " .. sigma)
    end
    local pi, pv = I.non_max_suppression_padded(T(N.batch_boxes), T(N.batch_scores), 4,
      { iou_threshold = 0.4, score_threshold = 0.1, pad_to_max_output_size = true })
    same(pi, N.padded_batch.indices, 0, "batched")
    same(pv, N.padded_batch.valid, 0, "batched valid")
    same(I.non_max_suppression(tide.zeros { 0, 4 }, tide.zeros { 0 }, 3), N.empty, 0, "no boxes")
  end)

  it("takes an overlaps matrix", function()
    for _, c in ipairs { { "0.5", "-inf" }, { "0.8", "0.3" }, { "0.2", "-inf" } } do
      local key = "overlaps_t" .. c[1] .. "_s" .. c[2]
      same(I.non_max_suppression_overlaps(T(N.overlaps), scores, 10,
        { overlap_threshold = tonumber(c[1]), score_threshold = num(c[2]) }), N[key], 0, key)
    end
  end)

  it("traces: a count known when the graph runs, padded shapes known", function()
    local f = tide.trace(function(b, s) return I.non_max_suppression(b, s, 5, { iou_threshold = 0.3 }) end,
      { input_signature = { tide.TensorSpec({ tide.None, 4 }), tide.TensorSpec({ tide.None }) } })
    h.close(f(boxes, scores), I.non_max_suppression(boxes, scores, 5, { iou_threshold = 0.3 }), 0)
    local g = tide.trace(function(b, s)
      return I.non_max_suppression_padded(b, s, 6, { iou_threshold = 0.4, pad_to_max_output_size = true })
    end)
    local i, v = g(boxes, scores)
    assert.are.same({ 6 }, i.shape:as_list())
    local ei, ev = I.non_max_suppression_padded(boxes, scores, 6, { iou_threshold = 0.4, pad_to_max_output_size = true })
    h.close(i, ei, 0)
    h.close(v, ev, 0)
  end)

  it("refuses what TF refuses", function()
    h.errors("non_max_suppression: iou_threshold must be in [0, 1], got 1.5", I.non_max_suppression, boxes, scores, 3,
      { iou_threshold = 1.5 })
    h.errors("max_output_size must be non-negative, got -1", I.non_max_suppression, boxes, scores, -1)
    h.errors("non_max_suppression: boxes must have 4 columns, got shape [12, 3]", I.non_max_suppression,
      boxes:slice { {}, { 0, 3 } }, scores, 3)
    h.errors("non_max_suppression: scores [11] do not fit boxes [12, 4]", I.non_max_suppression, boxes,
      scores:slice { { 0, 11 } }, 3)
    h.errors("soft_nms_sigma must be >= 0", I.non_max_suppression_with_scores, boxes, scores, 3, { soft_nms_sigma = -1 })
    h.errors("non_max_suppression_overlaps: overlaps must be square, got shape [12, 11]", I.non_max_suppression_overlaps,
      T(N.overlaps):slice { {}, { 0, 11 } }, scores, 3)
    h.errors("pad_to_max_output_size must be true for batched input", I.non_max_suppression_padded, T(N.batch_boxes),
      T(N.batch_scores), 3)
    h.errors("boxes must be a float tensor, got int32", I.non_max_suppression, tide.zeros({ 2, 4 }, "int32"),
      tide.zeros { 2 }, 1)
  end)
end)

describe("tide.image.combined_non_max_suppression", function()
  local CB = E.combined
  it("matches TF: shared and per-class boxes, padding per class, clipping", function()
    local n = 0
    for key, want in pairs(CB) do
      local q, pc, tot, iou, st, pad, clip = key:match("^(q%d)_(%d+)_(%d+)_([%d.]+)_([%d.]+)_(%a+)_(%a+)$")
      if q then
        local r = I.combined_non_max_suppression(T(CB["boxes_" .. q]), T(CB.scores), tonumber(pc), tonumber(tot),
          { iou_threshold = tonumber(iou), score_threshold = tonumber(st), pad_per_class = pad == "True",
            clip_boxes = clip == "True" })
        same(r.nmsed_boxes, want.boxes, 0, key .. " boxes")
        same(r.nmsed_scores, want.scores, 0, key .. " scores")
        same(r.nmsed_classes, want.classes, 0, key .. " classes")
        same(r[4], want.valid, 0, key .. " valid")
        n = n + 1
      end
    end
    assert(n == 10, "cases " .. n)
  end)

  it("traces with a known result shape, and refuses what TF refuses", function()
    local b, s = T(CB.boxes_q1), T(CB.scores)
    local f = tide.trace(function(x, y) return I.combined_non_max_suppression(x, y, 3, 5)[1] end)
    h.close(f(b, s), I.combined_non_max_suppression(b, s, 3, 5)[1], 0)
    h.errors("max_output_size_per_class must be positive", I.combined_non_max_suppression, b, s, 0, 5)
    h.errors("max_total_size must be > 0", I.combined_non_max_suppression, b, s, 2, 0)
    h.errors("the third dimension of boxes must be either 1 or num_classes", I.combined_non_max_suppression,
      tide.zeros { 2, 8, 2, 4 }, s, 2, 3)
    h.errors("boxes must be 4-D [batch, num_boxes, q, 4]", I.combined_non_max_suppression, tide.zeros { 2, 8, 4 }, s, 2, 3)
  end)
end)

describe("tide.image.draw_bounding_boxes", function()
  local D = E.draw
  local images, boxes = T(D.images), T(D.boxes)
  it("matches TF: default and given colours, 1, 3 and 4 channels, boxes partly outside, inverted, many", function()
    same(I.draw_bounding_boxes(images, boxes), D.default, 0, "default colours")
    same(I.draw_bounding_boxes(images, boxes, T(D.colors)), D.colored, 0, "given colours")
    same(I.draw_bounding_boxes(images:slice { {}, {}, {}, { 0, 1 } }, boxes), D.gray, 0, "one channel")
    same(I.draw_bounding_boxes(tide.concat({ images, images:slice { {}, {}, {}, { 0, 1 } } }, -1), boxes), D.rgba, 0, "rgba")
    same(I.draw_bounding_boxes(images, T(D.many_boxes)), D.many, 0, "more boxes than colours")
    local half = I.draw_bounding_boxes(images:cast("float16"), boxes)
    assert.are.equal("float16", half.dtype)
    h.close(half:cast("float32"), T(D.default):cast("float16"):cast("float32"), 0)
    ic.eager_and_traced(function(x) return I.draw_bounding_boxes(x, boxes) end, images, ic.spec(images, { 2, 3 }))
  end)

  it("refuses what TF refuses", function()
    h.errors("draw_bounding_boxes: channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)", I.draw_bounding_boxes,
      images:slice { {}, {}, {}, { 0, 2 } }, boxes)
    h.errors("draw_bounding_boxes: images must be [batch, height, width, channels]", I.draw_bounding_boxes, images[0], boxes)
    h.errors("the batch sizes should be the same", I.draw_bounding_boxes, images, boxes:slice { { 0, 1 } })
    h.errors("colors must be a non-empty 2-D matrix with equal or more channels", I.draw_bounding_boxes, images, boxes,
      tide.zeros { 2, 2 })
    h.errors("draw_bounding_boxes: images must be float32 or float16", I.draw_bounding_boxes, images:cast("uint8"), boxes)
  end)
end)
