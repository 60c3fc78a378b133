-- tests/spec/utils/directory_datasets_spec.lua — tide.utils.image_dataset_from_directory and
-- text_dataset_from_directory against Keras 3 on the committed folder tree (tests/fixtures/data/dirs_gen.py),
-- NumPy's shuffle (the same split as Keras for a seed), the pipeline running in C, and every error.
local tide = require "tide"
local tmp = require "tmp"
local c_engine = require "tide.data.c_engine"
local numpy_shuffle = require "tide.utils.numpy_shuffle"
local F = dofile("tests/fixtures/data/dirs.lua")
local K = F.cases
local IMAGES = "tests/fixtures/data/dirs/images"
local TEXTS = "tests/fixtures/data/dirs/texts"

local function strip(paths, base)
  local out = {}
  for i, p in ipairs(paths) do
    assert.are.equal(base .. "/", p:sub(1, #base + 1))
    out[i] = p:sub(#base + 2)
  end
  return out
end

local function close(expected, got, tol, what)
  assert.are.equal(type(expected), type(got), what)
  if type(expected) == "table" then
    assert.are.equal(#expected, #got, what)
    for i = 1, #expected do close(expected[i], got[i], tol, what) end
  else
    assert(math.abs(expected - got) <= tol, string.format("%s: %s vs %s", what, tostring(expected), tostring(got)))
  end
end

-- Every element (x, and y when labelled) as Lua values.
local function elements(ds)
  local xs, ys = {}, {}
  for x, y in ds:iter() do
    xs[#xs + 1] = x.dtype == "string" and x:totable() or x:totable()
    if y then ys[#ys + 1] = y:totable() end
  end
  return xs, ys
end

local function img(dir, opts)
  opts.verbose = false
  return tide.utils.image_dataset_from_directory(dir, opts)
end

describe("tide.utils.image_dataset_from_directory", function()
  -- a JPEG's pixels are libjpeg-turbo's, the same as TF's (docs/images.md): resized values agree to float32 rounding
  local TOL = 1e-3

  local function check(name, dir, opts, tol)
    local k = K[name]
    local ds = img(dir, opts)
    if k.class_names then assert.are.same(k.class_names, ds.class_names) else assert.is_nil(ds.class_names) end
    if k.file_paths then assert.are.same(k.file_paths, strip(ds.file_paths, dir)) end
    local xs, ys = elements(ds)
    close(k.x, xs, tol or TOL, name .. " images")
    assert.are.same(k.y, ys)
    return ds
  end

  it("reads a folder per class in Keras's order: classes sorted, hidden folders and other files skipped", function()
    local ds = check("plain", IMAGES, { shuffle = false, image_size = { 4, 6 }, batch_size = false })
    assert.are.same({ "cats", "dogs", "emus", "frogs" }, ds.class_names)
    assert.is_true(c_engine.supports(ds)) -- read_file, decode_image and resize run on the pipeline's threads
    local spec = ds.element_spec
    assert.are.same({ 4, 6, 3 }, { spec[1].shape[1], spec[1].shape[2], spec[1].shape[3] })
    assert.are.equal("float32", spec[1].dtype)
    assert.are.equal("int32", spec[2].dtype)
  end)

  it("batches, and runs the same in the Lua engine", function()
    check("batched", IMAGES, { shuffle = false, image_size = { 3, 3 }, batch_size = 4 })
    local engines = require "data_engines"
    engines.with(true, function()
      check("batched", IMAGES, { shuffle = false, image_size = { 3, 3 }, batch_size = 4 })
    end)
  end)

  it("color modes, label modes, given class names and interpolation as Keras", function()
    check("gray_categorical_nearest", IMAGES, { shuffle = false, image_size = { 5, 4 }, batch_size = false,
      color_mode = "grayscale", label_mode = "categorical", interpolation = "nearest", class_names = { "frogs", "emus" } })
    check("binary_classes", IMAGES, { shuffle = false, image_size = { 4, 4 }, batch_size = false,
      label_mode = "binary", class_names = { "emus", "cats" } })
    check("rgba", IMAGES .. "/emus", { shuffle = false, image_size = { 3, 5 }, batch_size = false, color_mode = "rgba",
      labels = false })
  end)

  it("crop_to_aspect_ratio and pad_to_aspect_ratio as Keras", function()
    check("crop", IMAGES, { shuffle = false, image_size = { 4, 6 }, batch_size = false, crop_to_aspect_ratio = true })
    check("pad", IMAGES, { shuffle = false, image_size = { 4, 6 }, batch_size = false, pad_to_aspect_ratio = true })
  end)

  it("labels=false walks every folder; a label list goes with the files in order; channels_first", function()
    check("no_labels", IMAGES, { shuffle = false, image_size = { 2, 2 }, batch_size = false, labels = false })
    check("given_labels", IMAGES .. "/dogs", { shuffle = false, image_size = { 2, 2 }, batch_size = false,
      labels = { 3, 1, 3, 0, 1 } })
    check("channels_first", IMAGES, { shuffle = false, image_size = { 2, 3 }, batch_size = false,
      data_format = "channels_first" })
  end)

  it("gives each subset of a validation split the same files as Keras for the same seed", function()
    for _, seed in ipairs { 1, 123, 2024 } do
      for _, subset in ipairs { "training", "validation" } do
        local k = K["split_" .. seed .. "_" .. subset]
        local ds = img(IMAGES, { seed = seed, validation_split = 0.3, subset = subset, image_size = { 2, 2 },
          batch_size = false })
        assert.are.same(k.file_paths, strip(ds.file_paths, IMAGES))
        local _, ys = elements(ds)
        table.sort(ys)
        assert.are.same(k.sorted_y, ys)
      end
    end
    local both = img(IMAGES, { seed = 5, validation_split = 0.25, subset = "both", image_size = { 2, 2 },
      batch_size = false })
    assert.are.same(K.split_both.training, strip(both[1].file_paths, IMAGES))
    assert.are.same(K.split_both.validation, strip(both[2].file_paths, IMAGES))
  end)

  it("shuffles the same way for a seed, and each pass anew", function()
    local function order(ds)
      local out = {}
      for _, y in ds:iter() do out[#out + 1] = y:item() end
      return out
    end
    local a = img(IMAGES, { seed = 9, image_size = { 2, 2 }, batch_size = false })
    local b = img(IMAGES, { seed = 9, image_size = { 2, 2 }, batch_size = false })
    assert.are.same(order(a), order(b))
    assert.are.equal(#K.plain.y, #order(a))
  end)

  it("follows linked folders only with follow_links", function()
    local dir = tmp.dir("imgdir")
    local p = io.popen("pwd")
    local cwd = p:read("*l")
    p:close()
    os.execute(string.format("mkdir -p %s/a && cp %s/emus/e1.png %s/a/ && ln -s %s/%s/frogs %s/a/linked", dir, IMAGES,
      dir, cwd, IMAGES, dir))
    assert.are.equal(1, #img(dir, { shuffle = false, batch_size = false }).file_paths)
    assert.are.equal(3, #img(dir, { shuffle = false, batch_size = false, follow_links = true }).file_paths)
    tmp.remove(dir)
  end)

  it("refuses bad arguments, naming them", function()
    local function err(pattern, dir, opts)
      local ok, e = pcall(img, dir or IMAGES, opts or {})
      assert.is_false(ok)
      assert.matches(pattern, tostring(e), 1, true)
    end
    err("does not exist", "tests/fixtures/data/no_such_dir")
    err("no images files found", (function() local d = tmp.dir("empty"); return d end)())
    err("subset must be \"training\", \"validation\" or \"both\"", nil, { validation_split = 0.2, subset = "test", seed = 1 })
    err("needs a seed", nil, { validation_split = 0.2, subset = "training" })
    err("give both or neither", nil, { validation_split = 0.2, seed = 1 })
    err("between 0 and 1", nil, { validation_split = 1.5, subset = "training", seed = 1 })
    err("leaves validation no files", nil, { validation_split = 0.05, subset = "training", seed = 1 })
    err("labels has 2 entries but", IMAGES .. "/dogs", { labels = { 1, 2 } })
    err("label_mode=\"binary\" needs exactly 2 classes, found 4", nil, { label_mode = "binary" })
    err("label_mode must be", nil, { label_mode = "sparse" })
    err("color_mode must be", nil, { color_mode = "cmyk" })
    err("interpolation \"bicubic\" is not supported yet", nil, { interpolation = "bicubic" })
    err("interpolation must be one of", nil, { interpolation = "cubic" })
    err("only one of crop_to_aspect_ratio and pad_to_aspect_ratio", nil,
      { crop_to_aspect_ratio = true, pad_to_aspect_ratio = true })
    err("'wolves' is not one of them", nil, { class_names = { "cats", "wolves" } })
    err("class_names may only be given with labels=\"inferred\"", nil, { labels = false, class_names = { "cats" } })
    err("image_size must be {height, width}", nil, { image_size = { 1, 2, 3 } })
    err("batch_size must be a positive integer", nil, { batch_size = 0 })
    err("unknown option 'size'", nil, { size = 3 })
  end)

  it("a BMP asked for as grayscale, or a JPEG as RGBA, fails at its element, in TF's words", function()
    for mode, msg in pairs { grayscale = "channels must be 0, 3 or 4 for BMP, got 1",
                             rgba = "JPEG does not support 4 channels" } do
      local ds = img(IMAGES, { shuffle = false, color_mode = mode, class_names = { "cats" }, batch_size = false })
      local ok, e = pcall(function() for _ in ds:iter() do end end)
      assert.is_false(ok)
      assert.matches(msg, tostring(e), 1, true)
    end
  end)
end)

describe("tide.utils.text_dataset_from_directory", function()
  local function txt(opts)
    opts.verbose = false
    return tide.utils.text_dataset_from_directory(TEXTS, opts)
  end

  local function same(name, ds)
    local k = K[name]
    local xs, ys = elements(ds)
    assert.are.same(k.x, xs)
    assert.are.same(k.y, ys)
    if k.class_names then assert.are.same(k.class_names, ds.class_names) end
  end

  it("reads each .txt file whole (subfolders too) in Keras's order, in C", function()
    local ds = txt { shuffle = false, batch_size = false }
    assert.is_true(c_engine.supports(ds))
    same("text_plain", ds)
  end)

  it("max_length, batches and label modes as Keras; labels=false", function()
    same("text_max_length", txt { shuffle = false, batch_size = 2, max_length = 5, label_mode = "categorical" })
    same("text_no_labels", txt { shuffle = false, batch_size = false, labels = false })
  end)

  it("refuses bad arguments", function()
    local ok, e = pcall(txt, { max_length = 0 })
    assert.is_false(ok)
    assert.matches("max_length must be a positive integer", tostring(e), 1, true)
    ok, e = pcall(txt, { image_size = { 2, 2 } })
    assert.is_false(ok)
    assert.matches("unknown option 'image_size'", tostring(e), 1, true)
  end)
end)

describe("NumPy's RandomState shuffle (tide.utils.numpy_shuffle)", function()
  it("draws MT19937's words and NumPy's permutations", function()
    assert.are.same(F.raw_5489, numpy_shuffle.raw(5489, #F.raw_5489))
    for name, c in pairs(F.perms) do assert.are.same(c.perm, numpy_shuffle.permutation(c.n, c.seed), name) end
  end)

  it("refuses a seed outside [0, 2^32)", function()
    assert.has_error(function() numpy_shuffle.permutation(3, -1) end)
    assert.has_error(function() numpy_shuffle.permutation(3, 2 ^ 32) end)
  end)
end)
