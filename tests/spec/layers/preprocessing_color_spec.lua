-- tests/spec/layers/preprocessing_color_spec.lua — Keras 3's colour and filter augmentation layers
-- (AutoContrast ... RandomErasing) against TF 2.21's tf.keras (tests/fixtures/keras/preprocessing_color.lua,
-- written by preprocessing_color_gen.py): calls where Keras's result is fixed, transform_images given
-- Keras's drawn parameters, configs; then draws by statistics, seeds, training=false, tracing, tide.data
-- maps, {images=, labels=} tables and the errors (bad value_range, factor, rank).
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/preprocessing_color.lua")

local function input(name)
  return tide.tensor(F.inputs[name], name:match("^int") and "int32" or "float32")
end

local function make(cls, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  return L[cls](o)
end

local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want)
  if type(want) == "table" then
    assert(type(got) == "table", where .. ": expected a table, got " .. tostring(got))
    for k, v in pairs(want) do if not SKIP[k] then same_config(where .. "." .. tostring(k), got[k], v) end end
    for k, v in pairs(got) do
      if not SKIP[k] then assert(want[k] ~= nil or v == nil, where .. ": key '" .. tostring(k) .. "' is not Keras's") end
    end
  elseif type(want) == "number" then
    assert(type(got) == "number" and math.abs(got - want) <= 1e-12 * math.max(1, math.abs(want)),
      string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  else
    assert(got == want, string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  end
end

-- Every key with the given prefixes, sorted, each run through fn (the failing key named).
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
end

-- Keras's result, within tol of the range's size (HSV round trips and filters differ in the last bits).
local function close_scaled(got, want, tol)
  local w = tide.tensor(want, "float32")
  local span = math.max(1, tide.reduce_max(tide.abs(w)):item())
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
  local y = l:transform_images(input(c.x):cast("float32"), t, true)
  close_scaled(y, c.y, 2e-5)
end

local function group(prefixes)
  return function()
    local n = 0
    for _, tbl in ipairs { { F.calls, run_call }, { F.transforms, run_transform } } do
      for k in pairs(tbl[1]) do
        for _, p in ipairs(prefixes) do if k:sub(1, #p) == p then n = n + 1 end end
      end
      if next(tbl[1]) then
        local has = false
        for k in pairs(tbl[1]) do for _, p in ipairs(prefixes) do if k:sub(1, #p) == p then has = true end end end
        if has then each(tbl[1], prefixes, tbl[2]) end
      end
    end
    assert.is_true(n > 0)
  end
end

describe("Keras 3 colour and filter layers against tf.keras", function()
  it("AutoContrast (also when not training; flat images kept; ints give floats)", group { "auto_contrast" })
  it("Equalization (bins, value_range, channels_first, a flat channel kept; idle when not training)",
    group { "equalization" })
  it("Solarization (given draws; thresholds and additions; value_range)", group { "solarization" })
  it("RandomInvert (always, never, given draws, value_range)", group { "random_invert" })
  it("RandomPosterization (fixed bits, given shifts)", group { "random_posterization" })
  it("RandomGrayscale (always, never, channels_first, one channel)", group { "random_grayscale" })
  it("RandomColorDegeneration (fixed factor, given draws)", group { "random_color_degeneration" })
  it("RandomHue and RandomSaturation (given draws, channels_first, value_range)",
    group { "random_hue", "random_saturation" })
  it("RandomColorJitter (fixed draws of each step)", group { "random_color_jitter" })
  it("RandomSharpness and RandomGaussianBlur (fixed and given draws, kernel pairs, channels_first)",
    group { "random_sharpness", "random_gaussian_blur" })
  it("RandomErasing (the whole image erased with a fill, or none)", group { "random_erasing" })
  it("have Keras's configs", function()
    each(F.configs, { "" }, function(key, c)
      local l = make(c.cls, c.opts)
      same_config(key, l:get_config(), c.config)
      same_config(key .. " (from Keras's config)", L[c.cls]:from_config(c.config):get_config(), c.config)
    end)
  end)
end)

describe("the colour and filter layers", function()
  local x = tide.tensor(F.inputs.im4, "float32") -- [2, 5, 6, 3] in 0..255
  local RANDOM = {
    { "Solarization", { threshold_factor = 0.5 } }, { "RandomInvert", {} },
    { "RandomPosterization", { factor = { 1, 8 } } }, { "RandomGrayscale", {} },
    { "RandomColorDegeneration", { factor = 0.5 } }, { "RandomHue", { factor = 0.5 } },
    { "RandomSaturation", { factor = 0.5 } }, { "RandomColorJitter", { brightness_factor = 0.2, hue_factor = 0.2 } },
    { "RandomSharpness", { factor = 0.5 } }, { "RandomGaussianBlur", {} }, { "RandomErasing", {} },
    { "Equalization", {} },
  }

  it("are the identity when not training (predict), and change images when training", function()
    for _, e in ipairs(RANDOM) do
      local l = make(e[1], e[2])
      h.close(l(x, { training = false }), x, 0)
      local m = tide.Sequential { L.Input { shape = { 5, 6, 3 } }, make(e[1], e[2]) }
      h.close(m:predict(x, { verbose = 0 }), x, 0)
    end
    tide.random.set_seed(3)
    local big = tide.concat({ x, x, x, x, x, x, x, x }, 0)
    for _, e in ipairs(RANDOM) do
      local y = make(e[1], e[2])(big)
      assert.is_false(tide.reduce_all(tide.equal(y, big)):item(), e[1] .. " changed nothing")
    end
  end)

  it("draw per image from tide's seeded stream: set_seed repeats an op seed's draws", function()
    for _, e in ipairs(RANDOM) do
      if e[1] == "Equalization" then break end -- (the last one, deterministic)
      local function run()
        tide.random.set_seed(11)
        local o = { seed = 5 }
        for k, v in pairs(e[2]) do o[k] = v end
        return make(e[1], o)(x)
      end
      h.close(run(), run(), 0)
    end
  end)

  it("keep Keras's probabilities and ranges (statistics over many images)", function()
    tide.random.set_seed(4)
    local n = 400
    local ones = tide.ones { n, 2, 2, 3 } * tide.tensor({ 200, 50, 100 }, "float32")
    local inv = L.RandomInvert { factor = { 0.3, 0.3 } }(ones)
    local frac = tide.reduce_mean(tide.cast(tide.less(inv:slice { {}, { 0, 1 }, { 0, 1 }, { 0, 1 } }, 100), "float32"))
    assert.is_true(math.abs(frac:item() - 0.3) < 0.07, "inverted fraction " .. frac:item())
    local g = L.RandomGrayscale { factor = 0.25 }(ones)
    local gfrac = tide.reduce_mean(tide.cast(tide.less(g:slice { {}, { 0, 1 }, { 0, 1 }, { 0, 1 } }, 150), "float32"))
    assert.is_true(math.abs(gfrac:item() - 0.25) < 0.07, "grayscale fraction " .. gfrac:item())
    -- posterization keeps 1..3 bits for factor 3 (Keras's randint excludes the upper bound)
    local levels = tide.linspace(0, 255, 256):reshape { 1, 16, 16, 1 }
    for _ = 1, 10 do
      local p = L.RandomPosterization { factor = 3 }(levels)
      local distinct = {}
      for _, v in ipairs(h.values(p)) do distinct[v] = true end
      local k = 0
      for _ in pairs(distinct) do k = k + 1 end
      assert.is_true(k == 2 or k == 4, "2 or 4 levels, got " .. k)
    end
    -- erasing: the rectangle covers sqrt(s) of each side, s in scale
    local e = L.RandomErasing { factor = { 1, 1 }, scale = { 0.25, 0.25 }, fill_value = 0 }(tide.ones { 50, 20, 20, 1 } * 9)
    local erased = tide.reduce_sum(tide.cast(tide.equal(e, 0), "float32"), { 1, 2, 3 })
    for _, v in ipairs(h.values(erased)) do assert.is_true(v >= 81 and v <= 121, "erased area " .. v) end
    -- hue: the draw is +-f/2 of a turn; a factor of 0 keeps the hue
    h.close(L.RandomHue { factor = 0 }(x), x, 0.05)
  end)

  it("take {images=, labels=} tables and single images; trace with a None batch; run in tide.data maps", function()
    local out = L.RandomGrayscale { factor = 1 } { images = x, labels = tide.tensor({ 1, 0 }, "float32") }
    h.close(out.labels, { 1, 0 }, 0)
    assert.are.same({ 2, 5, 6, 3 }, out.images.shape:as_list())
    local one = L.Solarization {}(x[0])
    h.close(one, tide.tensor(255, "float32") - x[0], 1e-4)
    local all = {}
    for i, e in ipairs(RANDOM) do all[i] = make(e[1], e[2]) end
    local f = tide.trace(function(t)
      local outs = {}
      for i, l in ipairs(all) do outs[i] = l(t, { training = true }) end
      return outs
    end, { input_signature = { tide.TensorSpec({ tide.None, 5, 6, 3 }, "float32") } })
    for i, y in ipairs(f(x)) do assert.are.same({ 2, 5, 6, 3 }, y.shape:as_list(), RANDOM[i][1]) end
    local layers = { L.RandomSharpness { factor = 0.5 }, L.RandomHue { factor = 0.2 }, L.AutoContrast {},
      L.RandomErasing { seed = 1 }, L.RandomPosterization { factor = 4 } }
    local ds = tide.data.Dataset.from_tensor_slices(x):map(function(img)
      for _, l in ipairs(layers) do img = l(img, { training = true }) end
      return img
    end)
    local n = 0
    for img in ds:iter() do
      n = n + 1
      assert.are.same({ 5, 6, 3 }, img.shape:as_list())
    end
    assert.are.equal(2, n)
  end)

  it("refuse bad options and inputs, naming the class", function()
    local bad_range = { "AutoContrast", "Equalization", "Solarization", "RandomInvert", "RandomPosterization",
      "RandomColorDegeneration", "RandomHue", "RandomSaturation", "RandomColorJitter", "RandomSharpness",
      "RandomGaussianBlur", "RandomErasing" }
    for _, cls in ipairs(bad_range) do
      local o = { value_range = 3 }
      if cls ~= "AutoContrast" and cls ~= "Equalization" and cls ~= "RandomColorJitter" and cls ~= "Solarization" then
        o.factor = cls == "RandomPosterization" and 4 or 0.5
      end
      h.errors(cls .. ": value_range must be a list of two numbers", L[cls], o)
    end
    h.errors("RandomInvert: factor must be a number", L.RandomInvert, { factor = 1.5 })
    h.errors("RandomPosterization: factor must be a number", L.RandomPosterization, { factor = 9 })
    h.errors("RandomPosterization: factor is required", L.RandomPosterization, {})
    h.errors("RandomGrayscale: factor must be", L.RandomGrayscale, { factor = -0.1 })
    h.errors("RandomColorDegeneration: factor must be", L.RandomColorDegeneration, { factor = { 2, 3 } })
    h.errors("RandomHue: factor must be", L.RandomHue, { factor = 1.2 })
    h.errors("RandomSaturation: factor must be", L.RandomSaturation, { factor = "x" })
    h.errors("RandomSharpness: factor must be", L.RandomSharpness, { factor = -1 })
    h.errors("Solarization: addition_factor must be", L.Solarization, { addition_factor = 2 })
    h.errors("Solarization: threshold_factor must be", L.Solarization, { threshold_factor = { 0.1 } })
    h.errors("RandomGaussianBlur: kernel_size must be an odd", L.RandomGaussianBlur, { kernel_size = 4 })
    h.errors("RandomGaussianBlur: sigma must be", L.RandomGaussianBlur, { sigma = 2 })
    h.errors("RandomErasing: scale must be", L.RandomErasing, { scale = { 2, 3 } })
    h.errors("RandomErasing: fill_value must be", L.RandomErasing, { fill_value = { 1, 2 } })
    h.errors("RandomColorJitter: hue_factor", L.RandomColorJitter, { hue_factor = 3 })
    h.errors("Equalization: bins must be a positive integer", L.Equalization, { bins = 0 })
    h.errors("AutoContrast: unknown option", L.AutoContrast, { factor = 0.2 })
    for _, e in ipairs(RANDOM) do
      h.errors("expected an image of rank 3", function() return make(e[1], e[2])(tide.zeros { 4, 4 }) end)
    end
    local function named(cls, needle, fn)
      assert.is_truthy(h.errors(needle, fn):find(cls, 1, true), cls .. " named")
    end
    named("AutoContrast", "expected an image of rank 3", function() return L.AutoContrast {}(tide.zeros { 1, 2, 2, 2, 3 }) end)
    named("RandomHue", "expected RGB images (3 channels)", function()
      return L.RandomHue { factor = 0.1 }(tide.zeros { 2, 2, 4 })
    end)
    named("RandomGrayscale", "expected images with 3 (RGB) or 1", function()
      return L.RandomGrayscale { factor = 1 }(tide.zeros { 2, 2, 2 })
    end)
    h.errors("bounding_boxes are not supported", function()
      return L.RandomInvert {} { images = x, bounding_boxes = { boxes = tide.zeros { 2, 1, 4 } } }
    end)
  end)
end)
