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

describe("tide.image's box ops and gradients", function()
  -- TF registers no gradient for NonMaxSuppressionV5, CombinedNonMaxSuppression or
  -- DrawBoundingBoxesV2 (its tape raises LookupError); tide's tape gives none (nil).
  it("give no gradient to the boxes, the scores or the image, as TF", function()
    local b = tide.Variable(tide.tensor({ { { { 0, 0, 1, 1 } }, { { 0, 0.1, 1, 1.1 } } } }, "float32"))
    local s = tide.Variable(tide.tensor({ { { 0.9 }, { 0.8 } } }, "float32"))
    local fs = {
      function()
        local r = I.combined_non_max_suppression(b, s, 2, 2)
        return tide.reduce_sum(r.nmsed_boxes) + tide.reduce_sum(r.nmsed_scores)
      end,
      function()
        local _, sc = I.non_max_suppression_with_scores(b:reshape { 2, 4 }, s:reshape { 2 }, 2, { soft_nms_sigma = 0.5 })
        return tide.reduce_sum(sc)
      end,
      function()
        return tide.reduce_sum(I.draw_bounding_boxes(tide.ones { 1, 3, 3, 3 } * tide.reduce_sum(s), b:reshape { 1, 2, 4 },
          tide.tensor({ { 1, 0, 0, 1 } }, "float32")))
      end,
    }
    for i, f in ipairs(fs) do
      local tape = tide.GradientTape()
      local y = tape:run(f)
      assert.are.equal("float32", y.dtype, "case " .. i)
      local g = tape:gradient(y, { b, s })
      assert.is_nil(g[1], "boxes, case " .. i)
      assert.is_nil(g[2], "scores (the image in case 3), case " .. i)
    end
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

describe("tide.image.sample_distorted_bounding_box", function()
  local SD = E.distorted_box

  it("stateless: TF's crop for each seed (options, no boxes, failing attempts, int64 sizes)", function()
    local n = 0
    for name, c in pairs(SD) do
      for k, want in pairs(c) do
        local a, b = k:match("^(-?%d+)_(-?%d+)$")
        if a then
          local bg, sz, bb = I.stateless_sample_distorted_bounding_box(T(c.image_size), T(c.boxes),
            { tonumber(a), tonumber(b) }, c.options)
          same(bg, want.begin, 0, name .. " " .. k .. " begin")
          same(sz, want.size, 0, name .. " " .. k .. " size")
          same(bb, want.bboxes, 0, name .. " " .. k .. " bboxes")
          n = n + 1
        end
      end
    end
    assert(n == 25, "cases " .. n)
  end)

  it("stateful: crops within the constraints, repeatable with an op seed, a slice of the image", function()
    local boxes = tide.tensor({ { { 0.2, 0.1, 0.7, 0.5 } } }, "float32")
    local seen = {}
    for s = 1, 30 do
      local bg, sz, bb = I.sample_distorted_bounding_box({ 60, 90, 3 }, boxes,
        { seed = s, area_range = { 0.2, 0.6 }, aspect_ratio_range = { 0.5, 2 }, min_object_covered = 0.4 })
      local y, x, hh, ww = bg[0]:item(), bg[1]:item(), sz[0]:item(), sz[1]:item()
      assert(y >= 0 and x >= 0 and y + hh <= 60 and x + ww <= 90, "inside the image")
      local area = hh * ww / (60 * 90)
      local whole = hh == 60 and ww == 90
      assert(whole or (area >= 0.2 - 1e-6 and area <= 0.6 + 1e-6), "area " .. area)
      if not whole then
        local ratio = ww / hh
        assert(ratio >= 0.5 - 0.05 and ratio <= 2 + 0.05, "aspect " .. ratio)
        local iy = math.max(0, math.min(y + hh, 42) - math.max(y, 12))
        local ix = math.max(0, math.min(x + ww, 45) - math.max(x, 9))
        assert(iy * ix / (30 * 36) >= 0.4 - 1e-6, "covers the box")
      end
      h.close(bb, { { { y / 60, x / 90, (y + hh) / 60, (x + ww) / 90 } } }, 1e-6)
      seen[y .. "," .. x .. "," .. hh] = true
    end
    local distinct = 0
    for _ in pairs(seen) do distinct = distinct + 1 end
    assert(distinct > 10, "crops vary with the seed: " .. distinct)
    tide.random.set_seed(8)
    local a = { I.sample_distorted_bounding_box({ 60, 90, 3 }, boxes, { seed = 5 }) }
    tide.random.set_seed(8)
    local b = { I.sample_distorted_bounding_box({ 60, 90, 3 }, boxes, { seed = 5 }) }
    h.close(a[1], b[1], 0)
    h.close(a[2], b[2], 0)
    local image = tide.zeros { 60, 90, 3 }
    local crop = image:slice { { a[1][0]:item(), a[1][0]:item() + a[2][0]:item() }, { a[1][1]:item(), a[1][1]:item() + a[2][1]:item() }, {} }
    assert.are.same({ a[2][0]:item(), a[2][1]:item(), 3 }, crop.shape:as_list())
  end)

  it("refuses what TF refuses", function()
    local boxes = tide.tensor({ { { 0.2, 0.1, 0.7, 0.5 } } }, "float32")
    h.errors("all bounding box coordinates must be in [0.0, 1.0], got 1.5", I.sample_distorted_bounding_box,
      { 10, 10, 3 }, tide.tensor({ { { 0.2, 0.1, 1.5, 0.5 } } }, "float32"))
    h.errors("no bounding boxes provided as input", I.sample_distorted_bounding_box, { 10, 10, 3 }, tide.zeros { 1, 0, 4 })
    h.errors("area_range must lie in (0, 1]", I.sample_distorted_bounding_box, { 10, 10, 3 }, boxes, { area_range = { 0, 2 } })
    h.errors("aspect_ratio_range must be positive", I.stateless_sample_distorted_bounding_box, { 10, 10, 3 }, boxes, { 1, 2 },
      { aspect_ratio_range = { -1, 2 } })
    h.errors("max_attempts must be positive", I.sample_distorted_bounding_box, { 10, 10, 3 }, boxes, { max_attempts = 0 })
    h.errors("min_object_covered must be non-negative", I.sample_distorted_bounding_box, { 10, 10, 3 }, boxes,
      { min_object_covered = -0.5 })
    h.errors("image_size must be [height, width, channels]", I.sample_distorted_bounding_box, { 10, 10 }, boxes)
    h.errors("bounding_boxes must be 3-D [batch, num_boxes, 4]", I.sample_distorted_bounding_box, { 10, 10, 3 }, boxes[0])
  end)
end)
