-- tests/spec/layers/preprocessing_aug_spec.lua — Keras 3's warping, mixing and policy augmentation layers
-- (RandomShear, RandomPerspective, RandomElasticTransform, CutMix, MixUp, RandAugment, AugMix,
-- ContrastLimitedAdaptiveHistogramEqualization, MaxNumBoundingBoxes) against TF 2.21's tf.keras
-- (tests/fixtures/keras/preprocessing_aug.lua, written by preprocessing_aug_gen.py): fixed calls, transforms
-- for given draws, configs; then draws (Beta statistics, seeds, training=false), tracing, tide.data maps,
-- {images=, labels=} tables and errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local mix = require "tide.layers.preprocessing.image_mix"
local F = dofile("tests/fixtures/keras/preprocessing_aug.lua")

local function input(name) return tide.tensor(F.inputs[name], "float32") end

local function make(cls, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  return L[cls](o)
end

local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want, extra)
  if type(want) == "table" then
    assert(type(got) == "table", where .. ": expected a table, got " .. tostring(got))
    for k, v in pairs(want) do if not SKIP[k] then same_config(where .. "." .. tostring(k), got[k], v) end end
    for k, v in pairs(got) do
      if not SKIP[k] and not (extra and extra[k]) then
        assert(want[k] ~= nil or v == nil, where .. ": key '" .. tostring(k) .. "' is not Keras's")
      end
    end
  elseif type(want) == "number" then
    assert(type(got) == "number" and math.abs(got - want) <= 1e-12 * math.max(1, math.abs(want)),
      string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  else
    assert(got == want, string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  end
end

local function each(tbl, prefixes, fn)
  local keys = {}
  for k in pairs(tbl) do
    for _, p in ipairs(prefixes) do if k:sub(1, #p) == p then keys[#keys + 1] = k end end
  end
  table.sort(keys)
  assert.is_true(#keys > 0, "no case for " .. table.concat(prefixes, ", "))
  for _, k in ipairs(keys) do
    local ok, err = pcall(fn, k, tbl[k])
    if not ok then error(k .. ": " .. tostring(err), 0) end
  end
  return #keys
end

local function close_scaled(got, want, tol)
  local span = math.max(1, tide.reduce_max(tide.abs(tide.tensor(want, "float32"))):item())
  h.close(got, want, tol * span)
end

local function run_call(key, c)
  local l = make(c.cls, c.opts)
  local y = l(input(c.x), { training = c.training })
  assert.are.equal(c.y_dtype, y.dtype, key .. ": dtype")
  close_scaled(y, c.y, 2e-5)
  same_config(key .. ": config", l:get_config(), c.config)
  assert.are.same(l:get_config(), L[c.cls]:from_config(l:get_config()):get_config())
end

local function run_transform(key, c)
  local l = make(c.cls, c.opts)
  local t = {}
  for k, v in pairs(c.t) do t[k] = tide.tensor(v, c.t_dtype[k]) end
  close_scaled(l:transform_images(input(c.x), t, true), c.y, 2e-5)
  if c.labels then h.close(l:transform_labels(tide.tensor(c.labels, "float32"), t, true), c.labels_y, 1e-6) end
end

local function group(prefixes)
  return function()
    local n = 0
    for _, p in ipairs { { F.calls, run_call }, { F.transforms, run_transform } } do
      local has = false
      for k in pairs(p[1]) do for _, pre in ipairs(prefixes) do if k:sub(1, #pre) == pre then has = true end end end
      if has then n = n + each(p[1], prefixes, p[2]) end
    end
    assert.is_true(n > 0)
  end
end

describe("Keras 3 warping, mixing and policy layers against tf.keras", function()
  it("RandomShear (given shears: every fill mode, both interpolations, channels_first)", group { "random_shear" })
  it("RandomPerspective (given corners, channels_first; scale 0 and probability 0 keep the image)",
    group { "random_perspective" })
  it("RandomElasticTransform: Keras's blur and map_coordinates for given fields (modes, interpolations)", function()
    local x = input("warp")
    local dx = tide.tensor(F.inputs.field_dx, "float32")
    local dy = tide.tensor(F.inputs.field_dy, "float32")
    local n = each(F.elastic, { "" }, function(_, c)
      local l = L.RandomElasticTransform { fill_mode = c.fill_mode, interpolation = c.interpolation,
        fill_value = c.fill_value }
      local t = { apply_transform = tide.tensor({ true }), distortion_factor = tide.tensor(c.distortion, "float32"),
        dx = dx, dy = dy }
      close_scaled(l:transform_images(x, t, true), c.y, 2e-5)
    end)
    assert.are.equal(9, n)
    group { "random_elastic_transform" }()
  end)
  it("CutMix and MixUp (given permutations and weights; labels mixed)", group { "cut_mix", "mix_up" })
  it("ContrastLimitedAdaptiveHistogramEqualization (grids, clip limits, padding, value_range, channels_first)",
    group { "clahe" })
  it("MaxNumBoundingBoxes (cut and padded boxes and labels)", function()
    each(F.bbox, { "max_" }, function(key, c)
      local l = L.MaxNumBoundingBoxes { max_number = c.max_number, fill_value = -3, bounding_box_format = "xyxy" }
      local out = l { images = input("im4"), bounding_boxes = { boxes = tide.tensor(F.bbox.boxes, "float32"),
        labels = tide.tensor(F.bbox.labels, "float32") } }
      h.close(out.bounding_boxes.boxes, c.boxes, 1e-6)
      h.close(out.bounding_boxes.labels, c.labels, 1e-6)
      h.close(out.images, input("im4"), 0)
      same_config(key, l:get_config(), c.config, { fill_value = true })
    end)
  end)
  it("have Keras's configs", function()
    each(F.configs, { "" }, function(key, c)
      local l = make(c.cls, c.opts)
      local extra = c.cls == "MaxNumBoundingBoxes" and { fill_value = true } or nil
      same_config(key, l:get_config(), c.config, extra)
      same_config(key .. " (from Keras's config)", L[c.cls]:from_config(c.config):get_config(), c.config, extra)
    end)
  end)
end)

describe("the warping, mixing and policy layers", function()
  local x = input("im4") -- [2, 6, 7, 3] in 0..255
  local RANDOM = {
    { "RandomShear", { x_factor = 0.4, y_factor = 0.4 } }, { "RandomPerspective", { factor = { 1, 1 } } },
    { "RandomElasticTransform", { factor = { 1, 1 } } }, { "CutMix", {} }, { "MixUp", {} },
    { "RandAugment", {} }, { "AugMix", {} },
  }

  it("draw Beta(a, a) weights with Beta's moments (Marsaglia-Tsang gamma on tide.random)", function()
    tide.random.set_seed(5)
    for _, a in ipairs { 0.2, 1, 3 } do
      local b = mix.beta(7, { 20000 }, a, "float32")
      local m, v = tide.reduce_mean(b):item(), tide.reduce_variance(b):item()
      assert.is_true(math.abs(m - 0.5) < 0.01, "mean " .. m)
      assert.is_true(math.abs(v - 0.25 / (2 * a + 1)) < 0.01, "variance " .. v .. " for a = " .. a)
      assert.is_true(tide.reduce_min(b):item() >= 0 and tide.reduce_max(b):item() <= 1)
    end
    local d = mix.dirichlet(3, 4, 1, "float32")
    h.close(tide.reduce_sum(d), 1, 1e-6)
  end)

  it("are the identity when not training, change images when training, and repeat under set_seed", function()
    for _, e in ipairs(RANDOM) do
      h.close(make(e[1], e[2])(x, { training = false }), x, 0)
      local function run()
        tide.random.set_seed(21)
        local o = { seed = 3 }
        for k, v in pairs(e[2]) do o[k] = v end
        return make(e[1], o)(x)
      end
      local a = run()
      h.close(a, run(), 0)
      if e[1] ~= "CutMix" then -- (CutMix may draw the identity permutation for two images)
        assert.is_false(tide.reduce_all(tide.equal(a, x)):item(), e[1] .. " changed nothing")
      end
    end
    -- CLAHE and AutoContrast-like layers act when not training too
    local c = L.ContrastLimitedAdaptiveHistogramEqualization { tile_grid_size = { 2, 2 } }
    h.close(c(x, { training = false }), c(x), 0)
  end)

  it("mix labels with the images ({images=, labels=}) and keep their sum", function()
    tide.random.set_seed(8)
    local big = tide.concat({ x, x, x, x }, 0)
    local labels = tide.one_hot(tide.tensor({ 0, 1, 2, 0, 1, 2, 0, 1 }, "int32"), 3)
    for _, cls in ipairs { "CutMix", "MixUp" } do
      local out = L[cls] {} { images = big, labels = labels }
      h.close(tide.reduce_sum(out.labels, { 1 }), tide.ones { 8 }, 1e-5)
      assert.are.same({ 8, 6, 7, 3 }, out.images.shape:as_list())
      h.close(L[cls] {} ({ images = big, labels = labels }, { training = false }).labels, labels, 0)
    end
    -- CutMix: each label keeps the part of its image left in place (Keras's weight is the rectangle's real
    -- area, the pixels are those whose corner lies in it: within a border's width on 20 x 20 images)
    local l = L.CutMix { seed = 2 }
    local marked = tide.concat({ tide.zeros { 1, 20, 20, 1 }, tide.ones { 1, 20, 20, 1 } }, 0)
    local lab = tide.tensor({ { 1, 0 }, { 0, 1 } }, "float32")
    for _ = 1, 8 do
      local out = l { images = marked, labels = lab }
      local ones = tide.reduce_mean(out.images, { 1, 2, 3 })
      h.close(out.labels:slice { {}, { 1, 2 } }:reshape { 2 }, ones, 41 / 400)
    end
  end)

  it("RandAugment and AugMix run the drawn layers eagerly and select them when traced", function()
    tide.random.set_seed(3)
    local ra = L.RandAugment { num_ops = 2, factor = 0.3 }
    local aug = L.AugMix { num_chains = 2, chain_depth = 2 }
    for _, l in ipairs { ra, aug } do
      local y = l(x)
      assert.is_true(tide.reduce_min(y):item() >= 0 and tide.reduce_max(y):item() <= 255, l.name)
    end
    local f = tide.trace(function(t)
      return { ra(t, { training = true }), aug(t, { training = true }),
        L.RandomShear { x_factor = 0.2 }(t, { training = true }), L.CutMix {}(t, { training = true }) }
    end, { input_signature = { tide.TensorSpec({ tide.None, 6, 7, 3 }, "float32") } })
    for _, y in ipairs(f(x)) do assert.are.same({ 2, 6, 7, 3 }, y.shape:as_list()) end
    local layers = { L.RandomShear { x_factor = 0.3 }, L.RandomPerspective {}, L.RandAugment { num_ops = 1 },
      L.ContrastLimitedAdaptiveHistogramEqualization { tile_grid_size = { 2, 2 } } }
    local ds = tide.data.Dataset.from_tensor_slices(x):map(function(img)
      for _, l in ipairs(layers) do img = l(img, { training = true }) end
      return img
    end)
    local n = 0
    for img in ds:iter() do
      n = n + 1
      assert.are.same({ 6, 7, 3 }, img.shape:as_list())
    end
    assert.are.equal(2, n)
  end)

  it("refuse bad options and inputs, naming the class", function()
    h.errors("RandomShear: x_factor must be", L.RandomShear, { x_factor = 1.5 })
    h.errors("RandomShear: y_factor must be", L.RandomShear, { y_factor = { -1.1, 0.2 } })
    h.errors("RandomShear: x_factor must be", L.RandomShear, { x_factor = -0.2 })
    h.errors("RandomShear: unknown fill_mode mirror", L.RandomShear, { fill_mode = "mirror" })
    h.errors("RandomPerspective: factor must be", L.RandomPerspective, { factor = 2 })
    h.errors("RandomPerspective: scale must be", L.RandomPerspective, { scale = 1.5 })
    h.errors("RandomPerspective: unknown interpolation bicubic", L.RandomPerspective, { interpolation = "bicubic" })
    h.errors("RandomElasticTransform: scale must be", L.RandomElasticTransform, { scale = -2 })
    h.errors("RandomElasticTransform: unknown fill_mode edge", L.RandomElasticTransform, { fill_mode = "edge" })
    h.errors("RandomElasticTransform: value_range must be a list of two numbers", L.RandomElasticTransform,
      { value_range = { 1 } })
    h.errors("CutMix: factor must be", L.CutMix, { factor = { 2, 3 } })
    h.errors("MixUp: alpha must be a positive number", L.MixUp, { alpha = 0 })
    h.errors("RandAugment: num_ops must be a positive integer", L.RandAugment, { num_ops = 0 })
    h.errors("RandAugment: factor must be", L.RandAugment, { factor = 1.5 })
    h.errors("RandAugment: value_range must be", L.RandAugment, { value_range = "x" })
    h.errors("AugMix: alpha must be a positive number", L.AugMix, { alpha = -1 })
    h.errors("AugMix: chain_depth must be a positive integer", L.AugMix, { chain_depth = 1.5 })
    h.errors("AugMix: all_ops must be true or false", L.AugMix, { all_ops = 1 })
    h.errors("ContrastLimitedAdaptiveHistogramEqualization: tile_grid_size must be",
      L.ContrastLimitedAdaptiveHistogramEqualization, { tile_grid_size = { 0, 2 } })
    h.errors("ContrastLimitedAdaptiveHistogramEqualization: value_range must be",
      L.ContrastLimitedAdaptiveHistogramEqualization, { value_range = { 1, "x" } })
    h.errors("MaxNumBoundingBoxes: max_number must be a positive integer", L.MaxNumBoundingBoxes, { max_number = 0 })
    h.errors("bounding_boxes must be a table {boxes", function()
      return L.MaxNumBoundingBoxes { 2 } { images = x, bounding_boxes = tide.zeros { 2, 3, 4 } }
    end)
    h.errors("MaxNumBoundingBoxes: expected boxes [B, N, 4] of rank 3", function()
      return L.MaxNumBoundingBoxes { 2 } { images = x, bounding_boxes = { boxes = tide.zeros { 3, 4 },
        labels = tide.zeros { 2, 3 } } }
    end)
    for _, e in ipairs(RANDOM) do
      h.errors("expected an image of rank 3", function() return make(e[1], e[2])(tide.zeros { 4, 4 }) end)
    end
    h.errors("bounding_boxes are not supported", function()
      return L.RandomShear {} { images = x, bounding_boxes = { boxes = tide.zeros { 2, 1, 4 } } }
    end)
    h.errors("segmentation_masks are not supported", function()
      return L.RandomShear {} { images = x, segmentation_masks = tide.zeros { 2, 6, 7, 1 } }
    end)
  end)
end)
