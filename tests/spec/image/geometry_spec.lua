-- tests/spec/image/geometry_spec.lua — rot90, transpose, the bounding-box crops and pads,
-- resize_with_crop_or_pad and resize_with_pad, crop_and_resize and extract_patches against
-- TF 2.21's results and gradients (tests/fixtures/image_ops), float64 finite differences,
-- eagerly and traced, and their errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same

describe("tide.image.rot90 and transpose", function()
  local G = E.geometry
  it("match TF for every k (negative and past 4 too), on images and batches", function()
    for _, k in ipairs { 0, 1, 2, 3, -1, 5, -6 } do
      same(I.rot90(T(G.img3), k), G["rot90_3_k" .. k], 0, "rot90 3-D k=" .. k)
      same(I.rot90(T(G.img4), k), G["rot90_4_k" .. k], 0, "rot90 4-D k=" .. k)
    end
    same(I.rot90(T(G.img3)), G.rot90_3_k1, 0, "default k")
    same(I.transpose(T(G.img3)), G.transpose3, 0, "transpose 3-D")
    same(I.transpose(T(G.img4)), G.transpose4, 0, "transpose 4-D")
  end)

  it("trace with unknown dims, and differentiate", function()
    local x = T(G.img4)
    ic.eager_and_traced(function(t) return I.rot90(t, 3) end, x)
    ic.eager_and_traced(I.transpose, x)
    local r = gc.random({ 2, 3, 4, 1 }, -1, 1, 3)
    gc.check(function(t) return I.rot90(t, 1) end, { r })
    gc.check(I.transpose, { r })
  end)

  it("refuse what TF refuses", function()
    h.errors("rot90: image must be [height, width, channels] or [batch, height, width, channels]", I.rot90,
      tide.zeros { 2, 2 })
    h.errors("rot90: k must be an integer", I.rot90, tide.zeros { 2, 2, 1 }, 1.5)
    h.errors("must be a number (the result's shape depends on it)",
      tide.trace(function(x, k) return I.rot90(x, k) end), tide.zeros { 2, 2, 1 }, tide.tensor(1))
  end)
end)

describe("tide.image's bounding-box crops and pads", function()
  local G = E.geometry
  it("crop_to_bounding_box and pad_to_bounding_box match TF (uint8 images and float batches)", function()
    local n = 0
    for key, want in pairs(G) do
      local kind, a, b, c, d = key:match("^(%a+)_(%d+)_(%d+)_(%d+)_(%d+)$")
      if kind then
        local f = kind == "crop" and I.crop_to_bounding_box or I.pad_to_bounding_box
        same(f(T(G.src), tonumber(a), tonumber(b), tonumber(c), tonumber(d)), want, 0, key)
        n = n + 1
      end
    end
    assert(n == 6, "cases " .. n)
    same(I.crop_to_bounding_box(T(G.srcb), 1, 0, 4, 5), G.crop_b_1_0_4_5, 0, "crop batch")
    same(I.pad_to_bounding_box(T(G.srcb), 0, 1, 7, 8), G.pad_b_0_1_7_8, 0, "pad batch")
  end)

  it("resize_with_crop_or_pad and resize_with_pad match TF", function()
    local n = 0
    for key, want in pairs(G) do
      local batch, th, tw = key:match("^crop_or_pad_(b?)_?(%d+)x(%d+)$") -- (a digit follows: no ambiguity)
      if th then
        same(I.resize_with_crop_or_pad(batch == "b" and T(G.srcb) or T(G.src), tonumber(th), tonumber(tw)), want, 0, key)
        n = n + 1
      end
      local rest = key:match("^with_pad_(.*)$")
      local b2 = rest and rest:match("^b_") and "b" or ""
      local method, ph, pw = (rest or ""):gsub("^b_", ""):match("^(%a+)_(%d+)x(%d+)$")
      if method then
        local x = b2 == "b" and T(G.srcb) or T(G.src)
        same(I.resize_with_pad(x, tonumber(ph), tonumber(pw), { method = method }), want, 1e-5, key)
        n = n + 1
      end
    end
    assert(n == 28, "cases " .. n)
  end)

  it("trace (height and width known where the result's shape needs them) and differentiate", function()
    local x = T(G.srcb)
    ic.eager_and_traced(function(t) return I.crop_to_bounding_box(t, 1, 1, 3, 2) end, x)
    local sig = ic.spec(x, { 1, 4 })
    ic.eager_and_traced(function(t) return I.pad_to_bounding_box(t, 1, 2, 9, 9) end, x, sig)
    ic.eager_and_traced(function(t) return I.resize_with_crop_or_pad(t, 4, 8) end, x, sig)
    ic.eager_and_traced(function(t) return I.resize_with_pad(t, 5, 9) end, x, sig, 1e-6)
    h.errors("height and width must be known while tracing",
      tide.trace(function(t) return I.pad_to_bounding_box(t, 1, 2, 9, 9) end, { input_signature = ic.spec(x, { 2 }) }), x)
    local r = gc.random({ 1, 4, 5, 2 }, -1, 1, 5)
    gc.check(function(t) return I.resize_with_crop_or_pad(t, 6, 3) end, { r }, { none = false })
    gc.check(function(t) return I.crop_to_bounding_box(t, 1, 2, 2, 2) end, { r })
  end)

  it("refuse boxes outside the image, naming the op and shape", function()
    local x = T(G.src)
    h.errors("crop_to_bounding_box: width must be >= target + offset: the image (5, 7, 2)", I.crop_to_bounding_box,
      x, 0, 5, 2, 3)
    h.errors("crop_to_bounding_box: height must be >= target + offset", I.crop_to_bounding_box, x, 4, 0, 2, 3)
    h.errors("crop_to_bounding_box: target_width must be > 0", I.crop_to_bounding_box, x, 0, 0, 2, 0)
    h.errors("crop_to_bounding_box: offset_height must be >= 0", I.crop_to_bounding_box, x, -1, 0, 2, 2)
    h.errors("pad_to_bounding_box: width must be <= target - offset", I.pad_to_bounding_box, x, 0, 2, 6, 8)
    h.errors("pad_to_bounding_box: height must be <= target - offset", I.pad_to_bounding_box, x, 2, 0, 6, 9)
    h.errors("resize_with_crop_or_pad: target_height must be > 0", I.resize_with_crop_or_pad, x, 0, 3)
    h.errors("resize_with_pad: target_width must be > 0", I.resize_with_pad, x, 3, 0)
  end)
end)

describe("tide.image.crop_and_resize", function()
  local CR = E.crop_and_resize
  local image, boxes, idx = T(CR.image), T(CR.boxes), T(CR.box_indices)

  it("matches TF for flipped, partly outside and one-point boxes, both methods, any extrapolation value", function()
    local n = 0
    for key, want in pairs(CR) do
      local method, ch, cw, ext = key:match("^(%a+)_(%d+)x(%d+)_e(.+)$")
      if method then
        local got = I.crop_and_resize(image, boxes, idx, { tonumber(ch), tonumber(cw) },
          { method = method, extrapolation_value = tonumber(ext) })
        same(got, want, 1e-6, key)
        n = n + 1
      end
    end
    assert(n == 20, "cases " .. n)
    same(I.crop_and_resize(T(CR.image_u8), boxes, idx, { 3, 4 }), CR.bilinear_u8, 1e-5, "uint8 bilinear")
    same(I.crop_and_resize(T(CR.image_u8), boxes, idx, { 3, 4 }, { method = "nearest" }), CR.nearest_u8, 0, "uint8 nearest")
    same(I.crop_and_resize(image, tide.zeros({ 0, 4 }), tide.zeros({ 0 }, "int32"), { 2, 2 }), CR.no_boxes, 0, "no boxes")
  end)

  it("has TF's gradients in the image and the boxes (nearest's boxes: the bilinear one, as TF)", function()
    for _, method in ipairs { "bilinear", "nearest" } do
      local c = CR[method .. "_grad"]
      local g = ic.gradients(function(x, b) return I.crop_and_resize(x, b, idx, { 3, 4 }, { method = method }) end,
        { image, boxes }, T(c.w))
      same(g[1], c.dimage, 1e-5, method .. " d image")
      same(g[2], c.dboxes, 1e-4, method .. " d boxes")
    end
  end)

  it("checks by float64 finite differences, and traces", function()
    local x = gc.random({ 2, 4, 5, 2 }, -1, 1, 7)
    local b = tide.tensor({ { 0.1, 0.2, 0.7, 0.9 }, { 0.8, 0.15, 0.3, 0.55 }, { -0.2, 0.1, 0.6, 1.3 } }, "float64")
    local bi = tide.tensor { 1, 0, 1 }
    gc.check(function(t, bb) return I.crop_and_resize(t, bb, bi, { 3, 2 }) end, { x, b }, { none = false })
    local f = function(t) return I.crop_and_resize(t, boxes, idx, { 3, 4 }) end
    ic.eager_and_traced(f, image, ic.spec(image, { 1 }))
  end)

  it("refuses bad boxes, indices and sizes", function()
    h.errors("crop_and_resize: box_indices has values outside [0, batch_size) (batch 2, values from 0 to 2)",
      I.crop_and_resize, image, boxes:slice { { 0, 2 } }, tide.tensor { 0, 2 }, { 2, 2 })
    h.errors("crop_and_resize: crop_height must be > 0", I.crop_and_resize, image, boxes, idx, { 0, 2 })
    h.errors("crop_and_resize: boxes must be 2-D [num_boxes, 4]", I.crop_and_resize, image, tide.zeros { 2, 3 },
      tide.tensor { 0, 0 }, { 2, 2 })
    h.errors("must have the same number of boxes", I.crop_and_resize, image, boxes, tide.tensor { 0 }, { 2, 2 })
    h.errors("crop_and_resize: image must be [batch, height, width, channels]", I.crop_and_resize, image[0], boxes,
      idx, { 2, 2 })
    h.errors("method must be \"bilinear\" or \"nearest\"", I.crop_and_resize, image, boxes, idx, { 2, 2 },
      { method = "bicubic" })
  end)
end)

describe("tide.image.extract_patches", function()
  local EP = E.extract_patches
  local image = T(EP.image)

  it("matches TF's patches and gradients for sizes, strides, rates and both paddings", function()
    local n = 0
    for key, c in pairs(EP) do
      if type(c) == "table" and c.sizes then
        local f = function(x) return I.extract_patches(x, c.sizes, c.strides, c.rates, c.padding) end
        same(f(image), c.y, 0, key)
        same(ic.gradients(f, { image }, T(c.w))[1], c.dx, 1e-5, key .. " gradient")
        n = n + 1
      end
    end
    assert(n == 6, "cases " .. n)
    same(I.extract_patches(tide.range(0, 40, 1, "uint8"):reshape { 1, 5, 4, 2 }, { 1, 2, 2, 1 }, { 1, 2, 1, 1 },
      { 1, 1, 1, 1 }, "SAME"), EP.u8, 0, "uint8")
  end)

  it("takes {rows, cols} too, gives an empty result for a window larger than the image, and traces", function()
    h.close(I.extract_patches(image, { 3, 3 }, { 2, 2 }, { 1, 1 }, "same"),
      I.extract_patches(image, { 1, 3, 3, 1 }, { 1, 2, 2, 1 }, { 1, 1, 1, 1 }, "SAME"), 0)
    assert.are.same({ 2, 0, 0, 16 * 3 }, I.extract_patches(image, { 4, 4 }, { 1, 1 }, { 3, 3 }, "VALID").shape:as_list())
    ic.eager_and_traced(function(x) return I.extract_patches(x, { 2, 3 }, { 2, 1 }, { 1, 2 }, "SAME") end, image,
      ic.spec(image, { 1 }))
    gc.check(function(x) return I.extract_patches(x, { 2, 2 }, { 1, 2 }, { 2, 1 }, "SAME") end,
      { gc.random({ 1, 4, 5, 2 }, -1, 1, 9) }, { none = false })
  end)

  it("refuses bad sizes and padding", function()
    h.errors("extract_patches: sizes must be [1, sizes_rows, sizes_cols, 1]", I.extract_patches, image,
      { 2, 2, 2, 1 }, { 1, 1 }, { 1, 1 }, "VALID")
    h.errors("extract_patches: strides must be positive", I.extract_patches, image, { 2, 2 }, { 0, 1 }, { 1, 1 }, "VALID")
    h.errors("extract_patches: padding must be \"VALID\" or \"SAME\"", I.extract_patches, image, { 2, 2 }, { 1, 1 },
      { 1, 1 }, "FULL")
    h.errors("extract_patches: images must be [batch, height, width, channels]", I.extract_patches, image[0],
      { 2, 2 }, { 1, 1 }, { 1, 1 }, "VALID")
  end)
end)
