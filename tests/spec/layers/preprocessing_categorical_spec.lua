-- tests/spec/layers/preprocessing_categorical_spec.lua — CategoryEncoding and Discretization against
-- TF 2.21's tf.keras (tests/fixtures/keras/preprocessing_categorical.lua, from its _gen.py): values,
-- dtypes, configs, Keras's adapt boundaries (tensor, list of batches, tide.data dataset); traced with a
-- None batch, in a tide.data map; errors name the class and the argument.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/preprocessing_categorical.lua")

local function input(name)
  local dt = name:match("^ids") and "int32" or (name:match("^tok") or name:match("^idx")) and "int64"
    or name:match("^str") and "string" or "float32"
  return tide.tensor(F.inputs[name], dt)
end

local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want)
  for k, v in pairs(want) do
    if type(v) == "table" then
      assert(type(got[k]) == "table", where .. "." .. k .. ": expected a table")
      assert(#got[k] == #v, where .. "." .. k .. ": length")
      for i = 1, #v do
        if type(v[i]) == "string" then assert(got[k][i] == v[i], where .. "." .. k .. "[" .. i .. "]")
        else assert(math.abs(got[k][i] - v[i]) <= 1e-6 * math.max(1, math.abs(v[i])), where .. "." .. k) end
      end
    else
      assert(got[k] == v, string.format("%s.%s: expected %s, got %s", where, k, tostring(v), tostring(got[k])))
    end
  end
  for k, v in pairs(got) do
    if not SKIP[k] then assert(want[k] ~= nil or v == nil, where .. ": key '" .. k .. "' is not Keras's") end
  end
end

local function make(cls, opts)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  return L[cls](o)
end

describe("categorical preprocessing layers vs Keras 3", function()
  for key, c in pairs(F.cases) do
    it(key, function()
      local layer = make(c.cls, c.opts)
      local call = nil
      if next(c.call) then
        call = {}
        for k, v in pairs(c.call) do call[k] = input(v) end
      end
      local y = layer(input(c.x), call)
      assert.are.equal(c.y_dtype, y.dtype)
      h.close(y, c.y, 1e-6)
      local want_shape, v = {}, c.y
      while type(v) == "table" do want_shape[#want_shape + 1] = #v; v = v[1] end
      assert.are.same(want_shape, y.shape:as_list())
      same_config(key, layer:get_config(), c.config)
      if c.vocab then assert.are.same(c.vocab, layer:get_vocabulary()) end
    end)
  end

  for key, a in pairs(F.lookups) do
    it(a.cls .. " adapt " .. key, function()
      local o = {}
      for k, v in pairs(a.opts) do o[k] = v end
      local layer = L[a.cls](o)
      local strings = a.cls == "StringLookup"
      local batches = {}
      for i, b in ipairs(a.batches) do batches[i] = tide.tensor(b, strings and "string" or "int64") end
      layer:adapt(#batches == 1 and batches[1] or batches)
      assert.are.same(a.vocab, layer:get_vocabulary())
      h.close(layer(input(strings and "str2" or "tok_oob")), a.y, 0)
      same_config(key, layer:get_config(), a.config)
    end)
  end

  for key, a in pairs(F.adapts) do
    it("Discretization adapt " .. key, function()
      local d = L.Discretization { num_bins = a.num_bins, epsilon = a.epsilon }
      local batches = {}
      for i, b in ipairs(a.batches) do batches[i] = tide.tensor(b, "float32") end
      d:adapt(#batches == 1 and batches[1] or batches)
      assert.are.equal(#a.boundaries, #d.bin_boundaries)
      for i, b in ipairs(a.boundaries) do
        assert(math.abs(d.bin_boundaries[i] - b) <= 1e-6 * math.max(1, math.abs(b)),
          string.format("boundary %d: expected %.9g, got %.9g", i, b, d.bin_boundaries[i]))
      end
      h.close(d(input("reals")), a.y, 0)
      same_config(key, d:get_config(), a.config)
    end)
  end

  it("adapts on a tide.data dataset as on its batches", function()
    local a = F.adapts.batches
    local rows = {}
    for _, b in ipairs(a.batches) do for _, r in ipairs(b) do rows[#rows + 1] = r end end
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor(rows, "float32")):batch(40)
    local d = L.Discretization { num_bins = a.num_bins }
    d:adapt(ds)
    for i, b in ipairs(a.boundaries) do assert(math.abs(d.bin_boundaries[i] - b) <= 1e-6 * math.max(1, math.abs(b))) end
  end)

  it("trace with a None batch and run in a tide.data map", function()
    local ce = L.CategoryEncoding { 4, "count" }
    local f = tide.trace(function(x) return ce(x) end,
      { input_signature = { tide.TensorSpec({ tide.None, 3 }, "int32") } })
    h.close(f(input("ids2")), F.cases.ce_count_ids2.y, 0)
    local inp = L.Input { shape = { 3 }, dtype = "int32" }
    local m = tide.Model { inp, L.Discretization { bin_boundaries = { 0.5, 1.5 } }(inp) }
    h.close(m(tide.tensor({ { 0, 1, 2 } }, "int32")), { { 0, 1, 2 } }, 0)
    local ds = tide.data.Dataset.from_tensor_slices(input("ids2")):map(function(x) return ce(x) end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds), "the encoding map runs on the pipeline's C threads")
    local got = ds:totable()
    h.close(got[1], F.cases.ce_count_ids2.y[1], 0)
    h.close(got[2], F.cases.ce_count_ids2.y[2], 0)
  end)

  it("encodes each sample of a rank-3 input (Keras's TF backend swaps some; see tf_differences)", function()
    for _, mode in ipairs { "multi_hot", "count" } do
      local ce = L.CategoryEncoding { 4, mode }
      local x = input("ids3")
      local y = ce(x)
      assert.are.same({ 2, 2, 4 }, y.shape:as_list())
      h.close(tide.reshape(y, { 4, 4 }), ce(tide.reshape(x, { 4, 2 })), 0)
    end
    h.close(L.CategoryEncoding { 4, "multi_hot" }(input("ids3")),
      { { { 0, 1, 1, 0 }, { 0, 0, 1, 0 } }, { { 1, 0, 0, 1 }, { 1, 1, 0, 0 } } }, 0)
  end)

  it("comes back from its config (adapted boundaries and num_bins together, as Keras's config)", function()
    local a = F.adapts.ten
    local d = L.Discretization { num_bins = a.num_bins }
    d:adapt(tide.tensor(a.batches[1], "float32"))
    local d2 = L.Discretization:from_config(d:get_config())
    h.close(d2(input("reals")), a.y, 0)
    local ce = L.CategoryEncoding:from_config(L.CategoryEncoding { 5, "count" }:get_config())
    h.close(ce(input("ids2"), { count_weights = input("weights2") }), F.cases.ce_count_weights.y, 1e-6)
  end)

  it("IntegerLookup reads a vocabulary file, traces, runs in a data map and comes back from its config", function()
    local tmp = require "tmp"
    local path = tmp.file("12\n36\n1138\n42\n", ".txt")
    local c = F.cases.il_mask
    local lk = L.IntegerLookup { vocabulary = path, mask_token = 0 }
    h.close(lk(input("tok2")), c.y, 0)
    local f2 = tide.trace(function(x) return lk(x) end,
      { input_signature = { tide.TensorSpec({ tide.None, 4 }, "int64") } })
    h.close(f2(input("tok2")), c.y, 0)
    local lds = tide.data.Dataset.from_tensor_slices(input("tok2")):map(function(x) return lk(x) end)
    assert.is_true(require("tide.data.lua_engine").in_c(lds), "the lookup map runs on the pipeline's C threads")
    local got = lds:totable()
    h.close(got[1], c.y[1], 0)
    h.close(got[2], c.y[2], 0)
    local back = L.IntegerLookup:from_config(lk:get_config())
    h.close(back(input("tok2")), c.y, 0)
    assert.are.same(lk:get_vocabulary(), back:get_vocabulary())
    os.remove(path)
  end)

  it("IntegerLookup errors name the layer and the argument", function()
    h.errors("num_oov_indices", function() L.IntegerLookup { num_oov_indices = -1 } end)
    h.errors("output_mode", function() L.IntegerLookup { output_mode = "bag" } end)
    h.errors("invert = true needs", function() L.IntegerLookup { invert = true, output_mode = "count" } end)
    h.errors("repeats 3", function() L.IntegerLookup { vocabulary = { 3, 4, 3 } } end)
    h.errors("oov_token", function() L.IntegerLookup { vocabulary = { -1, 4 } } end)
    h.errors("vocabulary[2] must be an integer", function() L.IntegerLookup { vocabulary = { 1, 2.5 } } end)
    h.errors("cannot read the vocabulary file", function() L.IntegerLookup { vocabulary = "/nonexistent/v.txt" } end)
    h.errors("idf_weights", function() L.IntegerLookup { vocabulary = { 1, 2 }, output_mode = "tf_idf" } end)
    h.errors("max_tokens", function() L.IntegerLookup { vocabulary = { 1, 2, 3 }, max_tokens = 3 } end)
    h.errors("adapt", function() L.IntegerLookup {}(tide.tensor({ 1 }, "int64")) end)
    h.errors("integer inputs", function() L.IntegerLookup { vocabulary = { 1 } }(tide.tensor { 1.5 }) end)
    h.errors("int64", function() L.IntegerLookup { vocabulary_dtype = "int32" } end)
  end)

  it("StringLookup reads a vocabulary file (one token a line, UTF-8 kept) and runs in a C data map", function()
    local tmp = require "tmp"
    local path = tmp.file("a\nb\nc\n\u{e9}t\u{e9}\n", ".txt")
    local c = F.cases.sl_int
    local lk = L.StringLookup { vocabulary = path }
    h.close(lk(input("str2")), c.y, 0)
    assert.are.same(c.vocab, lk:get_vocabulary())
    local ds = tide.data.Dataset.from_tensor_slices(input("str2")):map(function(x) return lk(x) end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local got = ds:totable()
    h.close(got[2], c.y[2], 0)
    os.remove(path)
  end)

  it("StringLookup hashes unknown strings into several OOV slots, traced and in a C data map", function()
    local c = F.cases.sl_oov5_mask
    local lk = make(c.cls, c.opts)
    local f = tide.trace(function(x) return lk(x) end,
      { input_signature = { tide.TensorSpec({ tide.None, tide.None }, "string") } })
    h.close(f(input(c.x)), c.y, 0)
    local ds = tide.data.Dataset.from_tensor_slices(input(c.x)):map(function(x) return lk(x) end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local got = ds:totable()
    for i = 1, #c.y do h.close(got[i], c.y[i], 0) end
  end)

  it("StringLookup errors name the layer and the argument", function()
    h.errors('salt must be an integer or a list of 2 integers', function()
      L.StringLookup { num_oov_indices = 2, salt = { 1, 2, 3 } }
    end)
    h.errors('oov_method must be "floormod" or "farmhash"', function() L.StringLookup { oov_method = "md5" } end)
    h.errors('salt can only be used with oov_method = "farmhash"', function()
      L.IntegerLookup { num_oov_indices = 2, salt = 3 }
    end)
    h.errors("expected string inputs", function() L.StringLookup { vocabulary = { "a" } }(tide.tensor { 1 }) end)
    h.errors("vocabulary[2] must be a string", function() L.StringLookup { vocabulary = { "a", 3 } } end)
    h.errors("holds the oov_token", function() L.StringLookup { vocabulary = { "a", "[UNK]" } } end)
    h.errors("encoding", function() L.StringLookup { encoding = "latin-1" } end)
    h.errors("invert = true expects integer indices", function()
      L.StringLookup { vocabulary = { "a" }, invert = true }(tide.tensor({ "a" }, "string"))
    end)
  end)

  it("errors name the layer and the argument", function()
    h.errors("num_tokens", function() L.CategoryEncoding { 0 } end)
    h.errors("output_mode", function() L.CategoryEncoding { 3, "tf_idf" } end)
    h.errors("integer ids", function() L.CategoryEncoding { 3 }(tide.tensor { 1.5 }) end)
    h.errors("count_weights", function() L.CategoryEncoding { 3, "multi_hot" }(tide.tensor({ 1 }, "int32"),
      { count_weights = tide.tensor { 1 } }) end)
    h.errors("adapt", function() L.Discretization {}(tide.tensor { 1 }) end)
    h.errors("sorted", function() L.Discretization { bin_boundaries = { 2, 1 } } end)
    h.errors("disagree", function() L.Discretization { bin_boundaries = { 1 }, num_bins = 3 } end)
    h.errors("num_bins", function() L.Discretization { bin_boundaries = { 1 } }:adapt(tide.tensor { 1 }) end)
  end)
end)
