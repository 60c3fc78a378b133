-- tests/spec/image/transform_spec.lua — tide.image.affine_transform against Keras 3's
-- keras.ops.image.affine_transform (TF's ImageProjectiveTransformV3) from
-- tests/fixtures/keras/preprocessing.lua: every fill mode and interpolation, rotations, zooms,
-- far translations (several periods of reflect and wrap), projective terms, one shared transform,
-- one-row images and channels_first; extract_glimpse against TF 2.21 (tests/fixtures/image_ops); gradients
-- by float64 finite differences; traces; errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local F = dofile("tests/fixtures/keras/preprocessing.lua").affine
local I = tide.image

describe("tide.image.affine_transform", function()
  it("matches Keras 3 / TF for every fill mode, interpolation and kind of transform", function()
    local keys = {}
    for k in pairs(F.cases) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.is_true(#keys >= 40)
    for _, k in ipairs(keys) do
      local c = F.cases[k]
      local x = tide.tensor(c.image and F[c.image] or F.images, "float32")
      if c.channels_first then x = tide.transpose(x, { 0, 3, 1, 2 }) end
      -- (the generator gave fill_value 0.5 to the cases of F.images, Keras's default 0 to the others)
      local fill = (c.image or c.channels_first) and 0 or 0.5
      local y = I.affine_transform(x, tide.tensor(c.transform, "float32"), { interpolation = c.interpolation,
        fill_mode = c.fill_mode, fill_value = fill, data_format = c.channels_first and "channels_first" or nil })
      local ok, err = pcall(h.close, y, c.y, 2e-5)
      if not ok then error(k .. ": " .. tostring(err), 0) end
    end
  end)

  it("takes a single image and a transform of [8]; traces with an unknown batch", function()
    local x = tide.tensor(F.images, "float32")
    local c = F.cases.shared_reflect_bilinear
    local one = I.affine_transform(x[0], c.transform, { fill_mode = "reflect" })
    h.close(one, c.y[1], 2e-5)
    local f = tide.trace(function(t, m)
      return I.affine_transform(t, m, { fill_mode = "wrap", interpolation = "nearest" })
    end, { input_signature = { tide.TensorSpec({ tide.None, 5, 6, 2 }, "float32"),
      tide.TensorSpec({ tide.None, 8 }, "float32") } })
    local r = F.cases.rotate_wrap_nearest
    local y = f(x, tide.tensor(r.transform, "float32"))
    assert.are.same({ 2, 5, 6, 2 }, y.shape:as_list())
    h.close(y, r.y, 2e-5)
  end)

  it("differentiates in the images (float64 finite differences), not in the transform", function()
    local m = tide.tensor({ { 0.9, -0.3, 0.7, 0.25, 1.1, -0.4, 0.01, -0.02 }, { 1.2, 0.1, -0.6, 0, 0.8, 0.9, 0, 0 } },
      "float32")
    for _, mode in ipairs { "constant", "reflect", "wrap", "nearest" } do
      for _, interp in ipairs { "bilinear", "nearest" } do
        gc.check(function(t)
          return I.affine_transform(t, m, { fill_mode = mode, interpolation = interp, fill_value = 0.3 })
        end, { gc.random({ 2, 4, 5, 2 }, -1, 1, 41) }, { none = false })
      end
    end
    local v = tide.Variable(m)
    local x = tide.ones { 2, 4, 5, 1 }
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(I.affine_transform(x, v)) end)
    assert.is_nil(tape:gradient(y, { v })[1])
  end)

  it("refuses bad arguments, naming the op", function()
    local x = tide.zeros { 1, 3, 3, 1 }
    local m = { 1, 0, 0, 0, 1, 0, 0, 0 }
    h.errors("affine_transform: interpolation must be", I.affine_transform, x, m, { interpolation = "bicubic" })
    h.errors("affine_transform: fill_mode must be", I.affine_transform, x, m, { fill_mode = "mirror" })
    h.errors("affine_transform: transform must be [8] or [batch, 8]", I.affine_transform, x, tide.zeros { 1, 1, 8 })
    h.errors("affine_transform: transform must have 8 values", I.affine_transform, x, tide.zeros { 1, 6 })
    h.errors("affine_transform: images must be a float tensor", I.affine_transform,
      tide.zeros({ 1, 3, 3, 1 }, "int32"), m)
    h.errors("affine_transform: images must be [height, width, channels]", I.affine_transform, tide.zeros { 3, 3 }, m)
    h.errors("must have one row or one per image", I.affine_transform, tide.zeros { 2, 3, 3, 1 },
      tide.zeros { 3, 8 })
    h.errors("affine_transform: data_format must be", I.affine_transform, x, m, { data_format = "nhwc" })
  end)
end)

describe("tide.image.extract_glimpse", function()
  local ic = require "image_cases"
  local G = dofile("tests/fixtures/image_ops/expected.lua").glimpse
  local x = ic.tensor_of(G.image)

  it("matches TF's windows (ExtractGlimpseV2, noise \"zero\"): centered, normalized, pixels, partly and wholly outside",
    function()
      local n = 0
      for _, name in ipairs { "centered_normalized", "normalized", "centered_pixels", "pixels", "large", "outside" } do
        local c = G[name]
        local opts = { noise = "zero" }
        for k, v in pairs(c.options) do opts[k] = v end
        local y = I.extract_glimpse(x, c.size, ic.tensor_of(c.offsets), opts)
        local ok, err = pcall(ic.same, y, c.y)
        if not ok then error(name .. ": " .. tostring(err), 0) end
        n = n + 1
      end
      assert.are.equal(6, n)
    end)

  it("fills outside with noise drawn as TF's (uniform in the image's range, gaussian clipped to each channel's)",
    function()
      tide.random.set_seed(3)
      local far = tide.tensor({ { 40, 40 }, { -40, 0 }, { 0, 40 } }, "float32")
      local u = I.extract_glimpse(x, { 8, 8 }, far, { normalized = false, centered = false })
      assert.are.same({ 3, 8, 8, 2 }, u.shape:as_list())
      for i = 0, 2 do
        local img, win = x[i], u[i]
        assert.is_true(tide.reduce_min(win):item() >= tide.reduce_min(img):item())
        assert.is_true(tide.reduce_max(win):item() <= tide.reduce_max(img):item())
        assert.is_true(tide.reduce_max(win):item() - tide.reduce_min(win):item() > 0.5, "spread over the range")
      end
      local gs = I.extract_glimpse(x, { 8, 8 }, far, { normalized = false, centered = false, noise = "gaussian" })
      local lo = tide.reduce_min(x, { 1, 2 }, { keepdims = true })
      local hi = tide.reduce_max(x, { 1, 2 }, { keepdims = true })
      assert.is_true(tide.reduce_all(tide.logical_and(tide.greater_equal(gs, lo), tide.less_equal(gs, hi))):item())
      -- the part inside is the image's, whatever the noise
      local part = I.extract_glimpse(x, { 3, 4 }, tide.tensor({ { -1, 5 }, { -1, 5 }, { -1, 5 } }, "float32"),
        { normalized = false, centered = false })
      h.close(part:slice { {}, { 1, 3 }, { 0, 2 }, {} }, x:slice { {}, { 0, 2 }, { 5, 7 }, {} }, 0)
    end)

  it("traces with an unknown batch and differentiates in the input", function()
    local c = G.centered_normalized
    local f = tide.trace(function(t, o) return I.extract_glimpse(t, { 3, 4 }, o, { noise = "zero" }) end,
      { input_signature = { tide.TensorSpec({ tide.None, 5, 7, 2 }, "float32"),
        tide.TensorSpec({ tide.None, 2 }, "float32") } })
    ic.same(f(x, ic.tensor_of(c.offsets)), c.y)
    local o = tide.tensor({ { 0.3, -0.9 }, { 0.1, 0.2 } }, "float32")
    gc.check(function(t) return I.extract_glimpse(t, { 3, 4 }, o, { noise = "zero" }) end,
      { gc.random({ 2, 4, 5, 2 }, -1, 1, 43) }, { none = false })
  end)

  it("refuses bad arguments, naming the op", function()
    local o = tide.zeros { 3, 2 }
    h.errors("extract_glimpse: noise must be", I.extract_glimpse, x, { 2, 2 }, o, { noise = "pink" })
    h.errors("extract_glimpse: offsets must be [batch, 2]", I.extract_glimpse, x, { 2, 2 }, tide.zeros { 3, 3 })
    h.errors("must have one row per image", I.extract_glimpse, x, { 2, 2 }, tide.zeros { 2, 2 })
    h.errors("extract_glimpse: glimpse_height must be > 0", I.extract_glimpse, x, { 0, 2 }, o)
    h.errors("extract_glimpse: size must be {glimpse_height, glimpse_width}", I.extract_glimpse, x, 3, o)
    h.errors("extract_glimpse: input must be a float tensor", I.extract_glimpse, tide.zeros({ 3, 5, 7, 2 }, "int32"),
      { 2, 2 }, o)
    h.errors("extract_glimpse: input must be [batch, height, width, channels]", I.extract_glimpse, tide.zeros { 5, 7, 2 },
      { 2, 2 }, o)
  end)
end)
