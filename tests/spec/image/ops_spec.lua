-- tests/spec/image/ops_spec.lua — flips, crops, convert_image_dtype,
-- per_image_standardization and adjust_brightness against TF 2.21's results
-- (tests/fixtures/images), the random ones for their rules and seeds, eagerly and traced.
local tide = require "tide"
local h = require "helpers"
local E = dofile("tests/fixtures/images/expected.lua")
local I = tide.image

local function tensor_of(want)
  return tide.tensor(want.values, want.dtype):reshape(want.shape)
end

-- Assert t equals TF's `want` in shape and dtype, values within tol.
local function same(t, want, tol, what)
  assert(t.dtype == want.dtype, string.format("%s: dtype %s, TF's %s", what, t.dtype, want.dtype))
  assert(table.concat(t.shape:as_list(), ",") == table.concat(want.shape, ","),
    string.format("%s: shape %s, TF's {%s}", what, tostring(t.shape), table.concat(want.shape, ",")))
  local ok, err = pcall(h.close, t, tensor_of(want), tol or 0)
  if not ok then error(what .. ": " .. tostring(err), 0) end
end

-- f's result eagerly, and traced (every dim None unless `known`) agrees.
local function eager_and_traced(f, x, known)
  local want = f(x)
  h.close(tide.trace(f)(x), want, 0)
  if not known then
    local dims = {}
    for d = 1, x.ndim do dims[d] = tide.None end
    h.close(tide.trace(f, { input_signature = { tide.TensorSpec(dims, x.dtype) } })(x), want, 0)
  end
  return want
end

describe("tide.image.convert_image_dtype", function()
  it("scales as TF does between every pair of dtypes, with and without saturate", function()
    local C = E.convert
    local n = 0
    for key, want in pairs(C) do
      local src, dt, sat = key:match("^(%w+)_to_(%w+)(_?s?a?t?)$")
      if src then
        local got = I.convert_image_dtype(tensor_of(C[src]), dt, { saturate = sat == "_sat" })
        same(got, want, dt:find("float") and 1e-7 or 0, key)
        n = n + 1
      end
    end
    assert(n >= 30, "cases: " .. n)
  end)

  it("works traced", function()
    local x = tensor_of(E.convert.u8)
    eager_and_traced(function(t) return I.convert_image_dtype(t, "float32") end, x)
    eager_and_traced(function(t) return I.convert_image_dtype(I.convert_image_dtype(t, "float32"), "uint8", { saturate = true }) end, x)
  end)

  it("refuses non-image dtypes", function()
    h.errors("dtype must be a float or integer dtype, got bool", I.convert_image_dtype, tide.zeros({ 1, 1, 1 }), "bool")
    h.errors("image must be a float or integer tensor, got bool", I.convert_image_dtype, tide.zeros({ 1, 1, 1 }, "bool"), "float32")
    h.errors("dtype is required", I.convert_image_dtype, tide.zeros({ 1, 1, 1 }))
  end)
end)

describe("tide.image value adjustments", function()
  local M = E.misc
  it("per_image_standardization matches TF (uint8, a float batch, a constant image)", function()
    same(I.per_image_standardization(tensor_of(M.img)), M.std_u8, 1e-5, "uint8")
    same(I.per_image_standardization(tensor_of(M.imgf)), M.std_f_batch, 1e-5, "batch")
    same(I.per_image_standardization(tide.fill({ 2, 2, 1 }, 7.0)), M.std_const, 0, "constant")
    eager_and_traced(I.per_image_standardization, tensor_of(M.imgf))
  end)

  it("adjust_brightness matches TF (uint8 saturating both ways, float)", function()
    same(I.adjust_brightness(tensor_of(M.img), 0.2), M.bright_u8, 0, "uint8 +0.2")
    same(I.adjust_brightness(tensor_of(M.img), -0.5), M.bright_u8_neg, 0, "uint8 -0.5")
    same(I.adjust_brightness(tensor_of(M.imgf), -0.3), M.bright_f, 1e-6, "float")
    eager_and_traced(function(t) return I.adjust_brightness(t, 0.2) end, tensor_of(M.img))
    h.errors("adjust_brightness: delta", I.adjust_brightness, tensor_of(M.img), "a lot")
  end)
end)

describe("tide.image flips and crops", function()
  local M = E.misc
  it("flip_left_right and flip_up_down match TF on images and batches", function()
    same(I.flip_left_right(tensor_of(M.img)), M.flip_lr, 0, "lr")
    same(I.flip_up_down(tensor_of(M.img)), M.flip_ud, 0, "ud")
    same(I.flip_left_right(tensor_of(M.imgf)), M.flip_lr_batch, 0, "lr batch")
    same(I.flip_up_down(tensor_of(M.imgf)), M.flip_ud_batch, 0, "ud batch")
    eager_and_traced(I.flip_left_right, tensor_of(M.imgf))
    h.errors("flip_left_right: image must be [height, width, channels]", I.flip_left_right, tide.zeros { 2, 2 })
  end)

  it("central_crop matches TF's rounding", function()
    for key, frac in pairs { ["0.5"] = 0.5, ["0.34"] = 0.34, ["1.0"] = 1.0, ["0.9"] = 0.9 } do
      same(I.central_crop(tensor_of(M.central_src), frac), M["central_" .. key], 0, "fraction " .. key)
      same(I.central_crop(tensor_of(M.imgf), frac), M["central_batch_" .. key], 0, "batch fraction " .. key)
    end
    eager_and_traced(function(t) return I.central_crop(t, 0.5) end, tensor_of(M.imgf), true)
    h.errors("central_fraction must be within (0, 1]", I.central_crop, tensor_of(M.img), 0)
    h.errors("central_fraction must be within (0, 1]", I.central_crop, tensor_of(M.img), 1.5)
    local sig = { tide.TensorSpec({ tide.None, tide.None, 3 }, "uint8") }
    h.errors("height and width must be known while tracing",
      tide.trace(function(t) return I.central_crop(t, 0.5) end, { input_signature = sig }), tensor_of(M.img))
  end)

  it("random_flip_left_right flips each image or not, repeatably with a seed", function()
    local x = tide.range(0, 2 * 8 * 3, 1, "float32"):reshape { 2, 8, 3, 1 }
    local lr = I.flip_left_right(x)
    local flipped, kept = 0, 0
    for s = 1, 20 do
      local y = I.random_flip_left_right(x, { seed = s })
      for b = 0, 1 do
        local yb = y[b]
        if tide.reduce_all(tide.equal(yb, lr[b])):item() then flipped = flipped + 1
        else
          assert(tide.reduce_all(tide.equal(yb, x[b])):item(), "each image is either flipped or kept")
          kept = kept + 1
        end
      end
    end
    assert(flipped > 5 and kept > 5, string.format("flipped %d, kept %d of 40", flipped, kept))
    tide.random.set_seed(3)
    local a = I.random_flip_left_right(x, { seed = 9 })
    tide.random.set_seed(3)
    h.close(I.random_flip_left_right(x, { seed = 9 }), a, 0)
    local single = I.random_flip_up_down(x[0], { seed = 1 })
    assert(tide.reduce_all(tide.equal(single, x[0])):item() or tide.reduce_all(tide.equal(single, I.flip_up_down(x[0]))):item())
  end)

  it("random_flip_left_right works traced, a batch of unknown size drawing per image", function()
    local sig = { tide.TensorSpec({ tide.None, 4, 3, 1 }, "float32") }
    local f = tide.trace(function(t) return I.random_flip_left_right(t) end, { input_signature = sig })
    local x = tide.range(0, 6 * 12, 1, "float32"):reshape { 6, 4, 3, 1 }
    local y = f(x)
    assert.are.same({ 6, 4, 3, 1 }, y.shape:as_list())
    h.close(tide.reduce_sum(y, { 1, 2, 3 }), tide.reduce_sum(x, { 1, 2, 3 }), 0) -- each image's pixels kept
  end)

  it("random_crop takes a window of the given size at a seeded offset", function()
    local x = tide.range(0, 6 * 5 * 2, 1, "int32"):reshape { 6, 5, 2 }
    local seen = {}
    for s = 1, 30 do
      local c = I.random_crop(x, { 3, 2, 2 }, { seed = s })
      assert.are.same({ 3, 2, 2 }, c.shape:as_list())
      local first = c[0][0][0]:item()
      local r, col = math.floor(first / 10), (first % 10) / 2
      assert(r <= 3 and col <= 3, "offset in range")
      h.close(c, x:slice { { r, r + 3 }, { col, col + 2 }, {} }, 0)
      seen[first] = true
    end
    local distinct = 0
    for _ in pairs(seen) do distinct = distinct + 1 end
    assert(distinct > 4, "offsets vary with the seed: " .. distinct)
    local f = tide.trace(function(t) return I.random_crop(t, { 3, 2, 2 }, { seed = 4 }) end,
      { input_signature = { tide.TensorSpec({ tide.None, tide.None, 2 }, "int32") } })
    assert.are.same({ 3, 2, 2 }, f(x).shape:as_list())
    h.errors("random_crop: value's shape (6, 5, 2) is smaller than size", I.random_crop, x, { 7, 2, 2 })
    h.errors("random_crop: size must have one entry per dim", I.random_crop, x, { 2, 2 })
  end)
end)
