-- tests/spec/layers/preprocessing_image_spec.lua — Keras 3's image preprocessing layers against
-- TF 2.21's tf.keras (tests/fixtures/keras/preprocessing.lua, written by preprocessing_gen.py):
-- Rescaling, Resizing, CenterCrop exactly (values, dtype, gradients, configs); the random layers
-- where Keras's draw is fixed (a one-value factor range) and as the identity when not training;
-- then by statistics and invariants: a direct call trains (Keras's default), predict does not,
-- op seeds repeat, they trace with a None batch and run in tide.data maps; errors name the class.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local F = dofile("tests/fixtures/keras/preprocessing.lua")

local function make(cls, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  return L[cls](o)
end

local function input(name)
  return tide.tensor(F.inputs[name], name:match("^int") and "int32" or "float32")
end

local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want)
  if type(want) == "table" then
    assert(type(got) == "table", where .. ": expected a table, got " .. tostring(got))
    for k, v in pairs(want) do if not SKIP[k] then same_config(where .. "." .. tostring(k), got[k], v) end end
    for k, v in pairs(got) do
      if not SKIP[k] then
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

local function run_case(key, c)
  local l = make(c.cls, c.opts)
  local x = input(c.x)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    if x.dtype == "float32" then tape:watch(x) end
    return l(x, { training = c.call.training })
  end)
  assert.are.equal(c.y_dtype, y.dtype, key .. ": dtype")
  assert.are.same(tide.tensor(c.y).shape:as_list(), y.shape:as_list())
  h.close(y, c.y, 2e-5)
  if c.dx then
    local loss = tape:run(function() return tide.reduce_sum(y * tide.tensor(c.g, "float32")) end)
    h.close(tape:gradient(loss, x), c.dx, 1e-4)
  end
  same_config(key .. ": config", l:get_config(), c.config)
  local again = L[c.cls]:from_config(l:get_config())
  assert.are.same(l:get_config(), again:get_config())
end

local function run_group(prefixes)
  local keys = {}
  for k in pairs(F.cases) do
    for _, p in ipairs(prefixes) do if k:sub(1, #p) == p then keys[#keys + 1] = k end end
  end
  table.sort(keys)
  assert.is_true(#keys > 0)
  for _, k in ipairs(keys) do
    local ok, err = pcall(run_case, k, F.cases[k])
    if not ok then error(k .. ": " .. tostring(err), 0) end
  end
end

describe("Keras 3 image preprocessing layers against tf.keras", function()
  it("Rescaling, Resizing (crop/pad to aspect ratio, nearest, ints, channels_first), CenterCrop (and up)", function()
    run_group { "rescaling", "resizing", "center_crop" }
  end)
  it("RandomRotation, RandomZoom, RandomTranslation with a fixed draw: every fill mode, both interpolations", function()
    run_group { "random_rotation", "random_zoom", "random_translation" }
  end)
  it("RandomContrast, RandomBrightness, RandomCrop with a fixed draw (and a crop that must resize)", function()
    run_group { "random_contrast", "random_brightness", "random_crop" }
  end)
  it("every random layer is the identity when not training (ints kept where Keras keeps them)", function()
    run_group { "inference_" }
  end)
  it("have Keras's configs", function()
    for key, c in pairs(F.configs) do
      local l = make(c.cls, c.opts)
      same_config(key, l:get_config(), c.config)
      same_config(key .. " (from Keras's config)", L[c.cls]:from_config(c.config):get_config(), c.config)
    end
  end)
end)

describe("the random image layers", function()
  local x = tide.tensor(F.inputs.im4, "float32") -- [2, 7, 9, 3]

  it("train in a direct call (Keras's default), and not under predict", function()
    tide.random.set_seed(1)
    local flip = L.RandomFlip { mode = "horizontal", seed = 3 }
    local batch = tide.concat({ x, x, x, x, x, x, x, x }, 0)       -- 16 images
    local flipped = 0
    local y = flip(batch)
    local mirror = tide.reverse(batch, { 2 })
    for i = 0, 15 do
      local same = tide.reduce_all(tide.equal(y[i], batch[i])):item()
      local fl = tide.reduce_all(tide.equal(y[i], mirror[i])):item()
      assert.is_true(same or fl, "image " .. i .. " is either kept or mirrored")
      if fl then flipped = flipped + 1 end
    end
    assert.is_true(flipped > 0 and flipped < 16, "some flipped, some kept: " .. flipped)
    local m = tide.Sequential { L.Input { shape = { 7, 9, 3 } }, L.RandomRotation { factor = 0.3 } }
    h.close(m:predict(x, { verbose = 0 }), x, 0)
    assert.is_false(tide.reduce_all(tide.equal(m(x), x)):item())
  end)

  it("draw from tide's seeded streams: the same op seed after set_seed gives the same augmentation", function()
    local function run()
      tide.random.set_seed(7)
      local l = L.RandomZoom { height_factor = 0.3, seed = 5 }
      return l(x)
    end
    h.close(run(), run(), 0)
  end)

  it("keep Keras's ranges: statistics over many draws", function()
    tide.random.set_seed(2)
    local ones = tide.ones { 400, 1, 1, 1 } * 100
    local b = L.RandomBrightness { factor = { -0.2, 0.1 } }(ones)
    local d = (b - 100) / 255
    assert.is_true(tide.reduce_min(d):item() >= -0.2 - 1e-6 and tide.reduce_max(d):item() <= 0.1 + 1e-6)
    assert.is_true(math.abs(tide.reduce_mean(d):item() - (-0.05)) < 0.02)
    -- contrast: a number f draws in [1, 1 + f] (Keras 3's rule); a 2-pixel image shows the factor
    local two = tide.tensor({ 100, 140 }, "float32"):reshape { 1, 1, 2, 1 }
    local many = tide.concat((function() local t = {} for i = 1, 300 do t[i] = two end return t end)(), 0)
    local c = L.RandomContrast { factor = 0.5 }(many)
    local c2 = c:reshape { 300, 2 }
    local f = (c2:slice { {}, { 1, 2 } } - c2:slice { {}, { 0, 1 } }) / 40
    assert.is_true(tide.reduce_min(f):item() >= 1 - 1e-5 and tide.reduce_max(f):item() <= 1.5 + 1e-5)
    assert.is_true(math.abs(tide.reduce_mean(f):item() - 1.25) < 0.04)
    -- translation by whole pixels with nearest keeps the pixel values
    local t = L.RandomTranslation { height_factor = 0.3, width_factor = 0.3, interpolation = "nearest" }(x)
    assert.is_true(tide.reduce_min(t):item() >= tide.reduce_min(x):item())
    -- crop windows come from the image
    local crop = L.RandomCrop { height = 4, width = 5 }(x)
    assert.are.same({ 2, 4, 5, 3 }, crop.shape:as_list())
  end)

  it("trace with a None batch and run in a tide.data map", function()
    local rot = L.RandomRotation { factor = 0.2, seed = 1 }
    local f = tide.trace(function(t) return rot(t, { training = true }) end,
      { input_signature = { tide.TensorSpec({ tide.None, 7, 9, 3 }, "float32") } })
    local y = f(x)
    assert.are.same({ 2, 7, 9, 3 }, y.shape:as_list())
    assert.is_false(tide.reduce_all(tide.equal(y, x)):item())
    local layers = { L.RandomFlip { seed = 1 }, L.RandomZoom { height_factor = 0.2 }, L.RandomContrast { factor = 0.3 },
      L.RandomCrop { height = 5, width = 6, seed = 2 }, L.Rescaling { scale = 1 / 255 } }
    local ds = tide.data.Dataset.from_tensor_slices(x):map(function(img)
      for _, l in ipairs(layers) do img = l(img, { training = true }) end
      return img
    end)
    local n = 0
    for img in ds:iter() do
      n = n + 1
      assert.are.same({ 5, 6, 3 }, img.shape:as_list())
      assert.is_true(tide.reduce_max(img):item() <= 1 + 1e-6)
    end
    assert.are.equal(2, n)
  end)

  it("differentiate (float64 finite differences; fixed draws), as compositions of ops", function()
    local x64 = gc.random({ 2, 5, 6, 2 }, 0.1, 0.9, 51)
    local cases = {
      L.Rescaling { scale = 0.5, offset = 0.1, dtype = "float64" },
      L.Resizing { height = 3, width = 4, crop_to_aspect_ratio = true, dtype = "float64" },
      L.Resizing { height = 4, width = 4, pad_to_aspect_ratio = true, fill_value = 0.2, dtype = "float64" },
      L.CenterCrop { height = 3, width = 8, dtype = "float64" },
      L.RandomRotation { factor = { 0.1, 0.1 }, fill_mode = "constant", dtype = "float64" },
      L.RandomZoom { height_factor = { 0.3, 0.3 }, width_factor = { -0.2, -0.2 }, dtype = "float64" },
      L.RandomTranslation { height_factor = { 0.1, 0.1 }, width_factor = { 0.3, 0.3 }, fill_mode = "wrap",
        dtype = "float64" },
      L.RandomContrast { factor = { -0.4, 0.4 }, value_range = { 0, 1 }, dtype = "float64" },
      L.RandomBrightness { factor = { 0.05, 0.05 }, value_range = { 0, 1 }, dtype = "float64" },
      L.RandomCrop { height = 3, width = 4, seed = 4, dtype = "float64" }, -- (set_seed repeats its window)
    }
    for _, l in ipairs(cases) do
      local y = l(x64, { training = true })
      assert.are.equal("float64", y.dtype, l.name)
      local ok, err = pcall(gc.check, function(t)
        tide.random.set_seed(9)
        return l(t, { training = true })
      end, { x64 }, { none = false })
      if not ok then error(l.name .. ": " .. tostring(err), 0) end
    end
  end)

  it("refuse bad options, naming the class", function()
    h.errors("RandomFlip: unknown mode diagonal", L.RandomFlip, { mode = "diagonal" })
    h.errors("RandomRotation: factor must be a number", L.RandomRotation, { factor = 1.5 })
    h.errors("RandomRotation: unknown fill_mode mirror", L.RandomRotation, { factor = 0.1, fill_mode = "mirror" })
    h.errors("RandomZoom: height_factor must be", L.RandomZoom, { height_factor = -1 })
    h.errors("RandomTranslation: width_factor must be", L.RandomTranslation, { height_factor = 0.1, width_factor = 2 })
    h.errors("RandomContrast: factor must be", L.RandomContrast, { factor = { 1.5, 2 } })
    h.errors("RandomBrightness: value_range must be", L.RandomBrightness, { factor = 0.1, value_range = 3 })
    h.errors("RandomCrop: height must be a positive integer", L.RandomCrop, { height = 0, width = 2 })
    h.errors("Resizing: interpolation \"bicubic\" is not supported yet", L.Resizing,
      { height = 2, width = 2, interpolation = "bicubic" })
    h.errors("Resizing: only one of", L.Resizing,
      { height = 2, width = 2, crop_to_aspect_ratio = true, pad_to_aspect_ratio = true })
    h.errors("Rescaling: scale must be", L.Rescaling, { scale = "x" })
    h.errors("expected an image of rank 3", function() return L.RandomFlip {}(tide.zeros { 2, 3 }) end)
    h.errors("the input's height and width must be known", function()
      local c = L.CenterCrop { height = 2, width = 2 }
      return tide.trace(function(t) return c(t) end,
        { input_signature = { tide.TensorSpec({ 1, tide.None, 4, 1 }, "float32") } })(tide.zeros { 1, 3, 4, 1 })
    end)
  end)
end)
