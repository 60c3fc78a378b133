-- tests/spec/image/proposals_spec.lua — tide.image.generate_bounding_box_proposals against a float32 NumPy
-- transcription of TF 2.21's GPU kernel (TF has no CPU kernel for it: tests/fixtures/images/proposals_gen.py
-- checks that and writes proposals_expected.lua), its shapes, padding, options and errors.
local tide = require "tide"
local h = require "helpers"
local E = dofile("tests/fixtures/images/proposals_expected.lua")

local function t(v) return tide.tensor(v.values, "float32"):reshape(v.shape) end

describe("tide.image.generate_bounding_box_proposals", function()
  it("gives the kernel's rois and scores (top scores, decoded, clipped, size-filtered, NMS, zero-padded)", function()
    for name, c in pairs(E) do
      local rois, probs = tide.image.generate_bounding_box_proposals(t(c.scores), t(c.deltas), t(c.info),
        t(c.anchors), c.opts)
      local ok, err = pcall(function()
        h.close(rois, t(c.rois), 1e-4)
        h.close(probs, t(c.probs), 1e-6)
      end)
      if not ok then error(name .. ": " .. tostring(err), 0) end
    end
  end)

  it("takes anchors as [H * W * A, 4] too, and runs traced with known shapes", function()
    local c = E.few
    local want = t(c.rois)
    local rois = tide.image.generate_bounding_box_proposals(t(c.scores), t(c.deltas), t(c.info),
      t(c.anchors):reshape { -1, 4 }, c.opts)
    h.close(rois, want, 1e-4)
    local f = tide.trace(function(s, d, i, a)
      return { tide.image.generate_bounding_box_proposals(s, d, i, a, c.opts) }
    end)
    local out = f(t(c.scores), t(c.deltas), t(c.info), t(c.anchors))
    h.close(out[1], want, 1e-4)
    assert.are.same({ 2, 8 }, out[2].shape:as_list())
  end)

  it("refuses bad shapes and options, naming the op", function()
    local c = E.few
    local s, d, i, a = t(c.scores), t(c.deltas), t(c.info), t(c.anchors)
    local g = tide.image.generate_bounding_box_proposals
    h.errors("generate_bounding_box_proposals: scores must have rank 4", g, s[0], d, i, a)
    h.errors("generate_bounding_box_proposals: bbox_deltas must be [N, H, W, 4 * A]", g, s, d:slice { {}, {}, {}, { 0, 4 } },
      i, a)
    h.errors("generate_bounding_box_proposals: image_info must be [N, 5]", g, s, d, i:slice { { 0, 1 } }, a)
    h.errors("generate_bounding_box_proposals: anchors must hold one box per position", g, s, d, i,
      a:slice { { 0, 2 } })
    h.errors("generate_bounding_box_proposals: nms_threshold must be in [0, 1]", g, s, d, i, a, { nms_threshold = 1.5 })
    h.errors("generate_bounding_box_proposals: pre_nms_topn must be positive", g, s, d, i, a, { pre_nms_topn = 0 })
    h.errors("generate_bounding_box_proposals: post_nms_topn must be positive", g, s, d, i, a, { post_nms_topn = -1 })
    h.errors("generate_bounding_box_proposals: scores must be a float tensor", g, tide.ones({ 1, 2, 2, 1 }, "int32"),
      d, i, a)
  end)
end)
