-- tests/spec/image/random_spec.lua — tide.random.stateless_uniform and tf.image's
-- stateless_random_* forms against TF 2.21's own draws (the same numbers for the same
-- seed: tests/fixtures/image_ops), seeds as tensors and traced; the stateful random_*
-- forms for their ranges, statistics and repeatability; and their errors.
local tide = require "tide"
local h = require "helpers"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same
local S = E.stateless
local SEEDS = { { 1, 2 }, { 0, 0 }, { -5, 123456789012 }, { 2 ^ 31 - 1, -2 ^ 31 } }
local IMAGE_SEEDS = { { 1, 2 }, { 7, 7 }, { 123, -4 }, { 0, 99 } }
local function key(seed) return string.format("%d_%d", seed[1], seed[2]) end

describe("tide.random.stateless_uniform", function()
  local R = tide.random
  it("draws TF's numbers for every dtype, bounds and seed", function()
    for _, seed in ipairs(SEEDS) do
      local k = key(seed)
      same(R.stateless_uniform({ 7 }, seed), S["uniform_f32_" .. k], 0, "float32 " .. k)
      same(R.stateless_uniform({ 5 }, seed, { dtype = "float64" }), S["uniform_f64_" .. k], 0, "float64 " .. k)
      same(R.stateless_uniform({ 5 }, seed, { dtype = "float16" }), S["uniform_f16_" .. k], 0, "float16 " .. k)
      same(R.stateless_uniform({ 5 }, seed, { dtype = "bfloat16" }), S["uniform_bf16_" .. k], 0, "bfloat16 " .. k)
      same(R.stateless_uniform({ 6 }, seed, { minval = -3, maxval = 1000, dtype = "int32" }), S["uniform_i32_" .. k], 0,
        "int32 " .. k)
      same(R.stateless_uniform({ 5 }, seed, { minval = -2 ^ 40, maxval = 7, dtype = "int64" }), S["uniform_i64_" .. k], 0,
        "int64 " .. k)
      same(R.stateless_uniform({ 4 }, seed, { dtype = "int32" }), S["uniform_full_i32_" .. k], 0, "full int32 " .. k)
      same(R.stateless_uniform({ 2, 3 }, seed, { minval = -2, maxval = 5 }), S["uniform_range_" .. k], 0, "range " .. k)
    end
  end)

  it("takes the seed as an int32 or int64 tensor, also traced, and a traced shape", function()
    local want = R.stateless_uniform({ 3, 2 }, { 7, -9 })
    h.close(R.stateless_uniform({ 3, 2 }, tide.tensor { 7, -9 }), want, 0)
    h.close(R.stateless_uniform({ 3, 2 }, tide.tensor({ 7, -9 }, "int64")), want, 0)
    local f = tide.trace(function(s) return R.stateless_uniform({ 3, 2 }, s) end)
    h.close(f(tide.tensor { 7, -9 }), want, 0)
    h.close(f(tide.tensor { 7, -9 }), want, 0) -- stateless: the same again
    assert.is_false(tide.reduce_all(tide.equal(f(tide.tensor { 8, -9 }), want)):item())
    local g = tide.trace(function(x) return R.stateless_uniform(tide.shape(x), { 7, -9 }) end,
      { input_signature = { tide.TensorSpec({ tide.None, 2 }) } })
    h.close(g(tide.zeros { 3, 2 }), want, 0)
  end)

  it("refuses bad seeds and bounds", function()
    h.errors("stateless_uniform: seed must be a pair of integers {a, b}, got 3 values", R.stateless_uniform, { 2 }, { 1, 2, 3 })
    h.errors("stateless_random_uniform: seed must have shape [2], got [3]", R.stateless_uniform, { 2 }, tide.tensor { 1, 2, 3 })
    h.errors("stateless_random_uniform: seed must be int32 or int64, got float32", R.stateless_uniform, { 2 },
      tide.tensor { 1.5, 2 })
    h.errors("minval and maxval must both be given for int32", R.stateless_uniform, { 2 }, { 1, 2 },
      { dtype = "int32", maxval = 5 })
    h.errors("needs minval < maxval", R.stateless_uniform, { 2 }, { 1, 2 }, { dtype = "int32", minval = 5, maxval = 5 })
  end)
end)

describe("tide.image's stateless random forms", function()
  local img, batch, u8 = T(S.img), T(S.batch), T(S.img_u8)
  it("give TF's results for the same seed", function()
    for _, seed in ipairs(IMAGE_SEEDS) do
      local k = key(seed)
      same(I.stateless_random_flip_left_right(img, seed), S["flip_lr_" .. k], 0, "flip_left_right " .. k)
      same(I.stateless_random_flip_up_down(img, seed), S["flip_ud_" .. k], 0, "flip_up_down " .. k)
      same(I.stateless_random_flip_left_right(batch, seed), S["flip_lr_batch_" .. k], 0, "flip batch " .. k)
      same(I.stateless_random_flip_up_down(batch, seed), S["flip_ud_batch_" .. k], 0, "flip_up_down batch " .. k)
      same(I.stateless_random_brightness(img, 0.3, seed), S["brightness_" .. k], 0, "brightness " .. k)
      same(I.stateless_random_brightness(u8, 0.3, seed), S["brightness_u8_" .. k], 0, "brightness uint8 " .. k)
      same(I.stateless_random_contrast(img, 0.2, 1.8, seed), S["contrast_" .. k], 1e-6, "contrast " .. k)
      same(I.stateless_random_hue(img, 0.4, seed), S["hue_" .. k], 1e-6, "hue " .. k)
      same(I.stateless_random_saturation(img, 0.3, 2.5, seed), S["saturation_" .. k], 1e-6, "saturation " .. k)
      same(I.stateless_random_jpeg_quality(u8, 20, 90, seed), S["jpeg_quality_" .. k], 0, "jpeg_quality " .. k)
      same(I.stateless_random_crop(u8, { 2, 3, 3 }, seed), S["crop_" .. k], 0, "crop " .. k)
      same(I.stateless_random_crop(batch, { 6, 2, 2, 3 }, seed), S["crop_batch_" .. k], 0, "crop batch " .. k)
    end
  end)

  it("trace with the seed an input (a dataset's seeds), unknown batches included", function()
    local sig = { tide.TensorSpec({ tide.None, 3, 4, 3 }), tide.TensorSpec({ 2 }, "int32") }
    local f = tide.trace(function(x, s) return I.stateless_random_flip_left_right(I.stateless_random_hue(x, 0.3, s), s) end,
      { input_signature = sig })
    for _, seed in ipairs(IMAGE_SEEDS) do
      local want = I.stateless_random_flip_left_right(I.stateless_random_hue(batch, 0.3, seed), seed)
      h.close(f(batch, tide.tensor(seed)), want, 0)
    end
    local c = tide.trace(function(x, s) return I.stateless_random_crop(x, { 2, 3, 3 }, s) end)
    h.close(c(u8, tide.tensor { 1, 2 }), T(S.crop_1_2), 0)
  end)
end)

describe("tide.image's random forms", function()
  local img = tide.range(0, 4 * 5 * 3, 1, "float32"):reshape { 4, 5, 3 } / 60

  it("draw in TF's ranges, repeatably for an op seed after set_seed", function()
    for s = 1, 20 do
      local d = I.random_brightness(img, 0.2, { seed = s }) - img
      local v = d[0][0][0]:item()
      assert(v >= -0.2 and v <= 0.2, "brightness delta " .. v)
      h.close(d, tide.fill({ 4, 5, 3 }, v), 1e-6) -- one delta for the image
      local q = I.random_jpeg_quality(img, 40, 60, { seed = s })
      assert.are.same({ 4, 5, 3 }, q.shape:as_list())
    end
    tide.random.set_seed(5)
    local a = I.random_saturation(img, 0.5, 1.5, { seed = 3 })
    local b = I.random_hue(img, 0.2, { seed = 4 })
    tide.random.set_seed(5)
    h.close(I.random_saturation(img, 0.5, 1.5, { seed = 3 }), a, 0)
    h.close(I.random_hue(img, 0.2, { seed = 4 }), b, 0)
  end)

  it("flip about half the images of a batch, each one whole", function()
    local batch = tide.range(0, 64 * 2 * 3, 1, "float32"):reshape { 64, 2, 3, 1 }
    local y = I.random_flip_up_down(batch, { seed = 9 })
    local flipped = tide.reduce_sum(tide.cast(tide.reduce_all(tide.equal(y, I.flip_up_down(batch)), { 1, 2, 3 }), "int32")):item()
    local kept = tide.reduce_sum(tide.cast(tide.reduce_all(tide.equal(y, batch), { 1, 2, 3 }), "int32")):item()
    assert.are.equal(64, flipped + kept)
    assert(flipped > 16 and kept > 16, string.format("flipped %d, kept %d of 64", flipped, kept))
    local c = I.random_contrast(img, 0.5, 0.6, { seed = 2 })
    local m = tide.reduce_mean(img, { 0, 1 })
    local ratio = ((c - m) / (img - m + 1e-9))[0][0][0]:item()
    assert(ratio >= 0.5 and ratio <= 0.6, "contrast factor " .. ratio)
  end)

  it("refuse what TF refuses", function()
    h.errors("random_brightness: max_delta must be non-negative", I.random_brightness, img, -0.1)
    h.errors("random_hue: max_delta must be <= 0.5", I.random_hue, img, 0.6)
    h.errors("random_contrast: upper must be > lower", I.random_contrast, img, 0.5, 0.5)
    h.errors("stateless_random_saturation: lower must be non-negative", I.stateless_random_saturation, img, -1, 2, { 1, 2 })
    h.errors("random_jpeg_quality: jpeg encoding range must be between 0 and 100", I.random_jpeg_quality, img, 50, 101)
    h.errors("stateless_random_jpeg_quality: min_jpeg_quality must be less than max_jpeg_quality",
      I.stateless_random_jpeg_quality, img, 60, 60, { 1, 2 })
    h.errors("stateless_random_flip_left_right: seed is required", I.stateless_random_flip_left_right, img)
    h.errors("stateless_random_crop: value's shape (4, 5, 3) is smaller than size", I.stateless_random_crop, img,
      { 5, 5, 3 }, { 1, 2 })
  end)
end)
