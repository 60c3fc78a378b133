-- tests/spec/utils/utils_spec.lua — tide.utils' small functions against Keras 3 (tests/fixtures/data/utils_gen.py):
-- to_categorical, normalize, pad_sequences, timeseries_dataset_from_array, split_dataset; set_random_seed,
-- get_file without a network; every error.
local tide = require "tide"
local tmp = require "tmp"
local K = dofile("tests/fixtures/data/utils.lua")
local U = tide.utils

local function close(expected, got, tol, what)
  assert.are.equal(type(expected), type(got), what)
  if type(expected) == "table" then
    assert.are.equal(#expected, #got, what)
    for i = 1, #expected do close(expected[i], got[i], tol, what) end
  else
    assert(math.abs(expected - got) <= tol, string.format("%s: %s vs %s", what, tostring(expected), tostring(got)))
  end
end

local function elements(ds)
  local out = {}
  for a, b in ds:iter() do
    out[#out + 1] = b and { a:totable(), b:totable() } or (a.ndim == 0 and a:item() or a:totable())
  end
  return out
end

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok)
  assert.matches(pattern, tostring(e), 1, true)
end

describe("tide.utils.to_categorical and normalize", function()
  it("give Keras's one-hot rows (float32) and norms", function()
    local c = U.to_categorical(tide.tensor { { 1 }, { 0 }, { 3 } })
    assert.are.equal("float32", c.dtype)
    assert.are.same(K.cat_col, c:totable())
    assert.are.same(K.cat_n5, U.to_categorical({ 2, 0, 4, 1 }, 5):totable())
    assert.are.same(K.cat_2d, U.to_categorical(tide.tensor { { 0, 2 }, { 1, 1 } }):totable())
    close(K.normalize, U.normalize(tide.tensor({ { 3, 4 }, { 0, 0 }, { 1, -1 } }, "float32")):totable(), 1e-6, "l2")
    close(K.normalize_axis0_l1, U.normalize(tide.tensor({ { 3, 4 }, { 1, 2 } }, "float32"), 0, 1):totable(), 1e-6, "l1")
  end)

  it("refuse indices out of range and non-integer classes", function()
    err("class indices must lie in [0, 3), got values from 0 to 3", U.to_categorical, { 0, 3 }, 3)
    err("x must hold integer class indices, got string", U.to_categorical, tide.tensor({ "a" }))
    err("num_classes must be positive", U.to_categorical, { 0 }, 0)
  end)
end)

describe("tide.utils.pad_sequences", function()
  local seqs = { { 1, 2, 3 }, { 4 }, {}, { 5, 6, 7, 8, 9 } }
  it("pads and truncates as Keras", function()
    local t = U.pad_sequences(seqs)
    assert.are.equal("int32", t.dtype)
    assert.are.same(K.pad_default, t:totable())
    assert.are.same(K.pad_post_trunc_post, U.pad_sequences(seqs, { maxlen = 2, padding = "post", truncating = "post" }):totable())
    assert.are.same(K.pad_pre_trunc_pre_value, U.pad_sequences(seqs, { maxlen = 3, value = -1 }):totable())
    local f = U.pad_sequences({ { 1.5, 2.5 }, { 3.25 } }, { dtype = "float32", value = 0.5 })
    assert.are.equal("float32", f.dtype)
    assert.are.same(K.pad_float, f:totable())
    assert.are.same({ 2, 0 }, U.pad_sequences({ {}, {} }).shape)
  end)

  it("refuses bad arguments", function()
    err("padding must be \"pre\" or \"post\", got middle", U.pad_sequences, seqs, { padding = "middle" })
    err("truncating must be \"pre\" or \"post\"", U.pad_sequences, seqs, { truncating = "both" })
    err("sequences[2] must be a list of numbers, got number", U.pad_sequences, { { 1 }, 2 })
    err("sequences[1][2] must be a number, got string", U.pad_sequences, { { 1, "x" } })
    err("maxlen must be >= 0", U.pad_sequences, seqs, { maxlen = -1 })
  end)
end)

describe("tide.utils.timeseries_dataset_from_array", function()
  local data = tide.reshape(tide.range(20), { 10, 2 }):cast("float32")
  local targets = tide.range(10) * 10

  it("makes Keras's windows and targets", function()
    local ds = U.timeseries_dataset_from_array(data, targets, 3, { sampling_rate = 2, batch_size = 2 })
    assert.are.same(K.ts_batched, elements(ds))
    assert.are.same(K.ts_range, elements(U.timeseries_dataset_from_array(data, false, 2,
      { sequence_stride = 2, start_index = 2, end_index = 9, batch_size = false })))
  end)

  it("shuffles the windows with a seed (the same windows as Keras, tide's order)", function()
    local ds = U.timeseries_dataset_from_array(data, targets, 3, { shuffle = true, seed = 4, batch_size = false })
    local ys = {}
    for _, y in ds:iter() do ys[#ys + 1] = y:item() end
    table.sort(ys)
    assert.are.same(K.ts_shuffled_sorted_targets, ys)
  end)

  it("refuses bad arguments", function()
    local f = U.timeseries_dataset_from_array
    err("sequence_length must be positive", f, data, false, 0)
    err("sampling_rate must be positive and below len(data) = 10", f, data, false, 2, { sampling_rate = 10 })
    err("sequence_stride must be positive", f, data, false, 2, { sequence_stride = 0 })
    err("start_index must be in [0, 10)", f, data, false, 2, { start_index = 10 })
    err("end_index must be in (start_index, 10]", f, data, false, 2, { end_index = 11 })
    err("no window of 20 steps", f, data, false, 20)
    err("unknown option 'stride'", f, data, false, 2, { stride = 1 })
  end)
end)

describe("tide.utils.split_dataset", function()
  local x = tide.reshape(tide.range(12), { 6, 2 })
  local y = tide.range(6) * 3

  it("cuts arrays and datasets as Keras (sizes as counts or fractions rounded half to even)", function()
    local left, right = U.split_dataset({ x, y }, { left_size = 0.6 })
    assert.are.same(K.split_frac.left, elements(left))
    assert.are.same(K.split_frac.right, elements(right))
    left, right = U.split_dataset(x, { right_size = 2 })
    assert.are.same(K.split_count.left, elements(left))
    assert.are.same(K.split_count.right, elements(right))
    left, right = U.split_dataset(tide.data.Dataset.range(7), { left_size = 0.5 })
    assert.are.same(K.split_ds_half.left, elements(left))
    assert.are.same(K.split_ds_half.right, elements(right))
  end)

  it("shuffles with a seed: every element once, the same for the same seed", function()
    local a1, b1 = U.split_dataset(y, { left_size = 4, shuffle = true, seed = 3 })
    local a2 = U.split_dataset(y, { left_size = 4, shuffle = true, seed = 3 })
    assert.are.same(elements(a1), elements(a2))
    local all = elements(a1)
    for _, v in ipairs(elements(b1)) do all[#all + 1] = v end
    table.sort(all)
    assert.are.same({ 0, 3, 6, 9, 12, 15 }, all)
  end)

  it("refuses bad sizes", function()
    err("give left_size, right_size or both", U.split_dataset, x, {})
    err("left_size must be a positive count smaller than 6", U.split_dataset, x, { left_size = 6 })
    err("right_size must be a fraction in (0, 1) or a count, got 1.5", U.split_dataset, x, { right_size = 1.5 })
    err("left_size + right_size must not exceed 1", U.split_dataset, x, { left_size = 0.7, right_size = 0.5 })
    err("left_size + right_size (7) must not exceed the 6 elements", U.split_dataset, x, { left_size = 4, right_size = 3 })
    err("the arrays must have one first dim", U.split_dataset, { x, tide.range(5) }, { left_size = 2 })
  end)
end)

describe("tide.utils.set_random_seed and get_file", function()
  it("set_random_seed makes tide's draws repeat", function()
    U.set_random_seed(42)
    local a = tide.random.uniform({ 3 }):totable()
    U.set_random_seed(42)
    assert.are.same(a, tide.random.uniform({ 3 }):totable())
    err("seed must be an integer, got 1.5", U.set_random_seed, 1.5)
  end)

  it("get_file finds a cached file and otherwise says where to put it (no network)", function()
    local dir = tmp.dir("keras_cache")
    os.execute("mkdir -p " .. dir .. "/datasets && echo hi > " .. dir .. "/datasets/data.csv")
    assert.are.equal(dir .. "/datasets/data.csv", U.get_file("data.csv", "https://example.com/data.csv",
      { cache_dir = dir }))
    assert.are.equal(dir .. "/datasets/data.csv", U.get_file(nil, "https://example.com/x/data.csv", { cache_dir = dir }))
    err("tide does not download files: other.csv is not in the cache; put the file from https://example.com/other.csv at "
      .. dir .. "/datasets/other.csv", U.get_file, "other.csv", "https://example.com/other.csv", { cache_dir = dir })
    err("tide does not download or extract archives", U.get_file, "a.tar.gz", "https://e.com/a.tar.gz",
      { cache_dir = dir, extract = true })
    err("unknown option 'cachedir'", U.get_file, "a", "b", { cachedir = dir })
    tmp.remove(dir)
  end)
end)

describe("tide.utils.load_img, img_to_array, save_img", function()
  local IMG = "tests/fixtures/data/dirs/images/"
  it("load an image file as uint8 pixels (tide's decoders), resized and cropped as Keras's load_img", function()
    local raw = tide.image.decode_png(io.open(IMG .. "cats/c1.png", "rb"):read("a"))
    local img = U.load_img(IMG .. "cats/c1.png")
    assert.are.same(raw:totable(), img:totable())
    assert.are.same({ 5, 7, 1 }, U.load_img(IMG .. "cats/c1.png", { color_mode = "grayscale" }).shape)
    local small = U.load_img(IMG .. "cats/c1.png", { target_size = { 2, 3 } })
    assert.are.same(tide.image.resize(raw, { 2, 3 }, { method = "nearest" }):totable(), small:totable())
    -- keep_aspect_ratio: the 5x7 image's centred 5x5 window (7 * 2 // 2 = 7 > 5 rows: all 5; 5 * 2 // 2 = 5 columns)
    local sq = U.load_img(IMG .. "cats/c1.png", { target_size = { 2, 2 }, keep_aspect_ratio = true })
    assert.are.same(tide.image.resize(raw:slice { {}, { 1, 6 } }, { 2, 2 }, { method = "nearest" }):totable(), sq:totable())
    local arr = U.img_to_array(img)
    assert.are.equal("float32", arr.dtype)
    assert.are.same({ 3, 5, 7 }, U.img_to_array(img, { data_format = "channels_first" }).shape)
  end)

  it("save_img writes PNG (exact) or JPEG by the suffix, scaling to 0..255 by default", function()
    local dir = tmp.dir("save_img")
    local x = tide.tensor({ { { 0 }, { 1 } }, { { 2 }, { 4 } } }, "float32")
    U.save_img(dir .. "/a.png", x)
    assert.are.same({ { { 0 }, { 64 } }, { { 128 }, { 255 } } }, U.load_img(dir .. "/a.png", { color_mode = "grayscale" }):totable())
    U.save_img(dir .. "/b.jpg", tide.ones({ 4, 4, 4 }, "uint8") * 200, { scale = false })
    assert.are.same({ 4, 4, 3 }, U.load_img(dir .. "/b.jpg").shape)
    err("file_format must be png or jpeg", U.save_img, dir .. "/c.tiff", x)
    err("x must have 1, 3 or 4 channels, got 2", U.save_img, dir .. "/c.png", tide.ones { 2, 2, 2 })
    err("read_file: cannot open '" .. dir .. "/missing.png': No such file", U.load_img, dir .. "/missing.png")
    err("color_mode must be", U.load_img, dir .. "/a.png", { color_mode = "cmyk" })
    err("interpolation \"bicubic\" is not supported", U.load_img, dir .. "/a.png", { target_size = { 2, 2 },
      interpolation = "bicubic" })
    tmp.remove(dir)
  end)
end)

describe("tide.utils' other names", function()
  it("pack and unpack (x, y, sample_weight) as Keras", function()
    local x, y, w = tide.ones { 2 }, tide.zeros { 2 }, tide.ones { 2 }
    assert.are.equal(x, U.pack_x_y_sample_weight(x))
    assert.are.same({ { 1, 2 } }, U.pack_x_y_sample_weight({ 1, 2 }))
    assert.are.same({ x, y }, U.pack_x_y_sample_weight(x, y))
    local a, b, c = U.unpack_x_y_sample_weight(U.pack_x_y_sample_weight(x, y, w))
    assert.are.equal(x, a); assert.are.equal(y, b); assert.are.equal(w, c)
    a, b, c = U.unpack_x_y_sample_weight(x)
    assert.are.equal(x, a); assert.is_nil(b); assert.is_nil(c)
    err("a list of 1, 2 or 3 items", U.unpack_x_y_sample_weight, { 1, 2, 3, 4 })
  end)

  it("clear_session and is_keras_tensor are the layers' (loaded when read)", function()
    assert.are.equal(require("tide.layers").clear_session, U.clear_session)
    assert.are.equal(require("tide.layers").is_keras_tensor, U.is_keras_tensor)
    assert.is_nil(U.no_such_name)
  end)
end)
