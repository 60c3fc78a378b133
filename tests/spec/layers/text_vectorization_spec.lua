-- tests/spec/layers/text_vectorization_spec.lua — TextVectorization against TF 2.21's tf.keras
-- (tests/fixtures/keras/text_vectorization.lua, from its _gen.py): vocabularies learnt by adapt (a tensor, a
-- tide.data dataset), outputs of every mode, ngrams, character split, configs; traced with a None batch, in a
-- tide.data map on C threads; errors name the class and the argument.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/text_vectorization.lua")

local function options(c)
  local o = {}
  for k, v in pairs(c.opts) do o[k] = v end
  for _, k in ipairs(c.none or {}) do o[k] = tide.None end
  return o
end

local function adapted(c)
  local tv = L.TextVectorization(options(c))
  if c.adapt then
    if #c.batches == 1 then
      tv:adapt(tide.tensor(c.batches[1], "string"))
    else
      local all = {}
      for _, b in ipairs(c.batches) do for _, s in ipairs(b) do all[#all + 1] = s end end
      tv:adapt(tide.data.Dataset.from_tensor_slices(tide.tensor(all, "string")):batch(#c.batches[1]))
    end
  end
  return tv
end

local function check_config(key, got, want)
  for k, v in pairs(want) do
    local g = got[k]
    if type(v) == "table" then
      assert(type(g) == "table", key .. "." .. k .. ": expected a list")
      assert.are.equal(#v, #g, key .. "." .. k)
      for i = 1, #v do
        if type(v[i]) == "string" then assert.are.equal(v[i], g[i], key .. "." .. k)
        else assert(math.abs(g[i] - v[i]) <= 1e-6 * math.max(1, math.abs(v[i])), key .. "." .. k) end
      end
    else
      assert(g == v, string.format("%s.%s: expected %s, got %s", key, k, tostring(v), tostring(g)))
    end
  end
end

describe("TextVectorization", function()
  for key, c in pairs(F.cases) do
    it("matches Keras: " .. key, function()
      local tv = adapted(c)
      assert.are.same(c.vocab, tv:get_vocabulary())
      local y = tv(tide.tensor(c.query, "string"))
      if c.opts.ragged then   -- a tide.RaggedTensor of int64 ids
        assert.are.equal(c.y_dtype, tostring(y.values.dtype))
        assert.are.same(c.y, y:totable())
      else
        assert.are.equal(c.y_dtype, tostring(y.dtype))
        h.close(y, c.y, 1e-6)
      end
      check_config(key, tv:get_config(), c.config)
    end)
  end

  it("ragged = true traces with a None batch (rows cut to output_sequence_length) and refuses other modes", function()
    local c = F.cases.ragged_len3
    local tv = adapted(c)
    local f = tide.trace(function(x) local r = tv(x) return r.values, r.row_splits end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    local v, rs = f(tide.tensor(c.query, "string"))
    assert.are.same(c.y, tide.RaggedTensor.from_row_splits(v, rs):totable())
    h.errors('ragged = true needs output_mode "int"', function()
      tide.layers.TextVectorization { ragged = true, output_mode = "count" }
    end)
  end)

  it("traces with a None batch and gives the eager values", function()
    local c = F.cases.int_len6
    local tv = adapted(c)
    local f = tide.trace(function(x) return tv(x) end, { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    h.close(f(tide.tensor(c.query, "string")), c.y, 0)
    local c2 = F.cases.ngrams_list
    local tv2 = adapted(c2)
    local g = tide.trace(function(x) return tv2(x) end)
    h.close(g(tide.tensor(c2.query, "string")), c2.y, 0)
  end)

  it("runs in a tide.data map on C threads, batched, and inside a model", function()
    local c = F.cases.int_len6
    local tv = adapted(c)
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor(c.query, "string")):batch(2)
      :map(function(x) return tv(x) end, { num_parallel_calls = tide.data.AUTOTUNE })
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local rows = {}
    for b in ds:iter() do for _, r in ipairs(b:totable()) do rows[#rows + 1] = r end end
    h.close(tide.tensor(rows, "int64"), c.y, 0)
    -- a subclassed model (tide's functional Input takes no string dtype yet)
    local Net = tide.Model:extend("TVNet")
    function Net:init() self.tv, self.emb = tv, L.Embedding { tv:vocabulary_size(), 3 } end
    function Net:call(x) return self.emb(self.tv(x)) end
    local m = Net()
    assert.are.same({ 5, 6, 3 }, m(tide.tensor(c.query, "string")).shape:as_list())
    local f = tide.trace(function(x) return m(x) end)
    h.close(f(tide.tensor(c.query, "string")), m(tide.tensor(c.query, "string")), 0)
  end)

  it("round-trips through get_config / from_config and reads a vocabulary file", function()
    local c = F.cases.vocab_list
    local tv = adapted(c)
    local tv2 = L.TextVectorization:from_config(tv:get_config())
    h.close(tv2(tide.tensor(c.query, "string")), c.y, 0)
    local tmp = require "tmp"
    local path = tmp.file("\n[UNK]\nthe\ncat\ndog\nbird\nsat\n", ".txt")
    local tv3 = L.TextVectorization { vocabulary = path, output_sequence_length = 5 }
    assert.are.same(c.vocab, tv3:get_vocabulary())
    h.close(tv3(tide.tensor(c.query, "string")), c.y, 0)
    os.remove(path)
    local none = L.TextVectorization { standardize = tide.None, split = false, vocabulary = { "A" } }
    assert.are.equal(tide.None, none:get_config().standardize)
    h.close(none(tide.tensor { "A", "a" }), { 2, 1 }, 0)
  end)

  it("takes a function for standardize and split", function()
    local tv = L.TextVectorization {
      standardize = function(x) return tide.strings.regex_replace(x, "[0-9]", "#") end,
      split = function(x) return tide.strings.split(x, ",") end,
      vocabulary = { "a#", "b" },
    }
    h.close(tv(tide.tensor { "a1,b,c", "b" }), { { 2, 3, 1 }, { 3, 0, 0 } }, 0)
  end)

  it("errors name the class and the argument", function()
    h.errors("standardize must be", function() L.TextVectorization { standardize = "upper" } end)
    h.errors("split must be", function() L.TextVectorization { split = "comma" } end)
    h.errors("output_mode must be", function() L.TextVectorization { output_mode = "bits" } end)
    h.errors("output_sequence_length must not be set", function()
      L.TextVectorization { output_mode = "count", output_sequence_length = 3 }
    end)
    h.errors("output_sequence_length must be nil or an integer", function()
      L.TextVectorization { output_sequence_length = 0 }
    end)
    h.errors("ngrams[2] must be an integer", function() L.TextVectorization { ngrams = { 1, 0 } } end)
    h.errors('ragged = true needs output_mode "int"', function()
      L.TextVectorization { ragged = true, output_mode = "multi_hot" }
    end)
    h.errors("pass vocabulary, or call adapt", function() L.TextVectorization {}(tide.tensor { "a" }) end)
    h.errors("expected string inputs", function() L.TextVectorization { vocabulary = { "a" } }(tide.tensor { 1 }) end)
    h.errors("the last dim 1", function()
      L.TextVectorization { vocabulary = { "a" } }(tide.tensor { { "a", "b" } })
    end)
    h.errors("cannot read the vocabulary file", function() L.TextVectorization { vocabulary = "/nonexistent/v.txt" } end)
  end)
end)
