-- tests/spec/utils/model_utils_spec.lua — keras.utils' model-side names: PyDataset/Sequence read by fit, evaluate
-- and predict (batches by index, shuffled batch order, on_epoch_begin/end), get_source_inputs; errors.
local tide = require "tide"
local U = tide.utils

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(e), 1, true)
end

local Seq = U.PyDataset:extend("ArraySeq")
function Seq:init(x, y, bs, opts)
  U.PyDataset.init(self, opts)
  self.x, self.y, self.bs = x, y, bs
  self.begins, self.ends, self.seen = 0, 0, {}
end
function Seq:__len__() return math.ceil(self.x.shape[1] / self.bs) end
function Seq:__getitem__(i)
  self.seen[#self.seen + 1] = i
  local a, b = i * self.bs, math.min((i + 1) * self.bs, self.x.shape[1])
  if self.y == nil then return self.x:slice { { a, b } } end
  return self.x:slice { { a, b } }, self.y:slice { { a, b } }
end
function Seq:on_epoch_begin() self.begins = self.begins + 1 end
function Seq:on_epoch_end() self.ends = self.ends + 1 end

local function model()
  tide.random.set_seed(7)
  local m = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 1 } }
  m:compile { optimizer = tide.optimizers.SGD { 0.1 }, loss = "mse" }
  return m
end

local x = tide.random.normal({ 10, 3 }, { seed = 1 })
local y = tide.random.normal({ 10, 1 }, { seed = 2 })

describe("PyDataset (Sequence)", function()
  it("trains as the same arrays do, batch by batch, calling on_epoch_begin and on_epoch_end", function()
    local a, b = model(), model()
    local s = Seq(x, y, 4)
    local ha = a:fit(x, y, { epochs = 3, batch_size = 4, shuffle = false, verbose = 0 })
    local hb = b:fit(s, nil, { epochs = 3, shuffle = false, verbose = 0 })
    assert.are.same({ 0, 1, 2, 0, 1, 2, 0, 1, 2 }, s.seen)
    assert.are.equal(3, s.begins)
    assert.are.equal(3, s.ends)
    for i = 1, 3 do assert.is_true(math.abs(ha.history.loss[i] - hb.history.loss[i]) < 1e-6) end
    assert.is_true(tide.reduce_max(tide.abs(a.layers[1].kernel:value() - b.layers[1].kernel:value())):item() < 1e-6)
  end)

  it("shuffles the batch order each epoch in fit by default, every batch once", function()
    local m = model()
    local s = Seq(x, y, 2)
    m:fit(s, nil, { epochs = 2, verbose = 0 })
    assert.are.equal(10, #s.seen)
    for e = 0, 1 do
      local got = {}
      for i = 1, 5 do got[#got + 1] = s.seen[e * 5 + i] end
      table.sort(got)
      assert.are.same({ 0, 1, 2, 3, 4 }, got)
    end
  end)

  it("is read in order by evaluate and predict, and as validation_data", function()
    local m = model()
    local s = Seq(x, y, 4)
    local want = m:evaluate(x, y, { batch_size = 4, verbose = 0 })
    assert.is_true(math.abs(want - m:evaluate(s, nil, { verbose = 0 })) < 1e-6)
    assert.are.same({ 0, 1, 2 }, s.seen)
    assert.are.equal(1, s.ends)
    local p = m:predict(Seq(x, nil, 3), { verbose = 0 })
    assert.are.same({ 10, 1 }, p.shape)
    assert.is_true(tide.reduce_max(tide.abs(p - m:predict(x, { verbose = 0 }))):item() < 1e-6)
    local h = m:fit(x, y, { epochs = 1, verbose = 0, validation_data = Seq(x, y, 5) })
    assert.is_number(h.history.val_loss[1])
  end)

  it("is the same class under both names and keeps Keras's options (unused: batches are read on one thread)", function()
    assert.are.equal(U.PyDataset, U.Sequence)
    local s = Seq(x, y, 4, { workers = 4, use_multiprocessing = true, max_queue_size = 3 })
    assert.are.equal(4, s.workers)
    assert.is_true(s.use_multiprocessing)
    assert.are.equal(3, s.max_queue_size)
    assert.are.equal(1, Seq(x, y, 4).workers)
  end)

  it("names what is wrong", function()
    err("PyDataset:extend: the class needs a name", function() U.PyDataset:extend() end)
    err("PyDataset: workers must be a positive integer", Seq, x, y, 4, { workers = 0 })
    err("PyDataset: unknown option 'threads'", Seq, x, y, 4, { threads = 2 })
    err("PyDataset: use_multiprocessing must be a boolean", Seq, x, y, 4, { use_multiprocessing = 1 })
    local m = model()
    err("y must be nil when x is a dataset", function() m:fit(Seq(x, y, 4), y, { verbose = 0 }) end)
    err("batch_size cannot be given with a dataset", function() m:fit(Seq(x, y, 4), nil, { batch_size = 2, verbose = 0 }) end)
    local NoLen = U.PyDataset:extend("NoLen")
    err("NoLen: a PyDataset needs __len__()", function() m:fit(NoLen(), nil, { verbose = 0 }) end)
    local NoItem = U.PyDataset:extend("NoItem")
    function NoItem:__len__() return 2 end
    err("NoItem: a PyDataset needs __getitem__(i)", function() m:fit(NoItem(), nil, { verbose = 0 }) end)
    local BadLen = U.PyDataset:extend("BadLen")
    function BadLen:__len__() return 1.5 end
    err("__len__()/num_batches() must be a non-negative integer", function() m:fit(BadLen(), nil, { verbose = 0 }) end)
    local Endless = U.PyDataset:extend("Endless")
    function Endless:num_batches() return nil end
    err("num_batches() is nil (endless); give steps_per_epoch", function() m:fit(Endless(), nil, { verbose = 0 }) end)
    local Empty = U.PyDataset:extend("EmptyItem")
    function Empty:__len__() return 1 end
    function Empty:__getitem__() return nil end
    err("__getitem__(0) returned nothing", function() m:fit(Empty(), nil, { verbose = 0 }) end)
  end)
end)

describe("get_source_inputs", function()
  it("walks a functional tensor back to its Inputs, each once, in Keras's order", function()
    local a = tide.Input { shape = { 3 }, name = "a" }
    local b = tide.Input { shape = { 3 }, name = "b" }
    local c = tide.layers.Add()({ b, a })
    local d = tide.layers.Dense { 2 }(c)
    local e = tide.layers.Concatenate()({ d, a })
    local s = U.get_source_inputs(e)
    assert.are.equal(2, #s)
    assert.are.equal(b, s[1])
    assert.are.equal(a, s[2])
    assert.are.same({ a }, U.get_source_inputs(a))
    assert.are.same({ a }, U.get_source_inputs(tide.layers.Dense { 1 }(a)))
  end)
  it("returns a value that is not a KerasTensor as it is, as Keras", function()
    local t = tide.ones { 2 }
    assert.are.equal(t, U.get_source_inputs(t))
  end)
end)
