-- tests/spec/layers/bpe_tokenizer_spec.lua — tide.text.BytePairTokenizer against keras_hub 0.32 (TF workflow;
-- tests/fixtures/text/bpe.lua, bpe_vocab.json, bpe_merges.txt from gen_bpe.py): ids, pieces, detokenize, options;
-- the bpe_tokenize op traced and in a C data map.
local tide = require "tide"
local h = require "helpers"
local F = dofile("tests/fixtures/text/bpe.lua")
local VOCAB, MERGES = "tests/fixtures/text/bpe_vocab.json", "tests/fixtures/text/bpe_merges.txt"
local BPE = tide.text.BytePairTokenizer

local function make(opts)
  local o = { vocabulary = VOCAB, merges = MERGES }
  for k, v in pairs(opts or {}) do o[k] = v end
  return BPE(o)
end

-- keras_hub hands back Python strings, decoded dropping bytes that are not UTF-8 (a character cut by
-- sequence_length); tide keeps the bytes, as TF's tensor has them: compare what is valid
local function valid_utf8(s)
  local out, i = {}, 1
  while i <= #s do
    local b = s:byte(i)
    local n = b < 0x80 and 1 or b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC2 and 2 or 0
    local c = n > 0 and s:sub(i, i + n - 1) or ""
    if n > 0 and #c == n and not c:sub(2):find("[^\128-\191]") then out[#out + 1], i = c, i + n else i = i + 1 end
  end
  return table.concat(out)
end

local function tmpfile(text)
  local p = os.tmpname()
  local f = assert(io.open(p, "wb"))
  f:write(text)
  f:close()
  return p
end

describe("BytePairTokenizer", function()
  for key, c in pairs(F.cases) do
    it("matches keras_hub: " .. key, function()
      local tok = make(c.opts)
      assert.are.equal(F.vocab_size, tok:vocabulary_size())
      local x = tide.tensor(c.texts, "string")
      local y = tok:tokenize(x)
      if c.opts.sequence_length then
        assert.are.equal("int32", tostring(y.dtype))
        assert.are.same({ #c.texts, c.opts.sequence_length }, { y.shape[1], y.shape[2] })
        assert.are.same(c.ids, y:totable())
      else
        assert.are.equal("int32", tostring(y.values.dtype))
        assert.are.same(c.ids, y:totable())
      end
      local back = tok:detokenize(y):totable()
      for i, b in ipairs(back) do back[i] = valid_utf8(b) end
      assert.are.same(c.detok, back)
      local o = { dtype = "string" }
      for k, v in pairs(c.opts) do o[k] = v end
      local p = make(o):tokenize(x)
      assert.are.same(c.pieces, p:totable())
    end)
  end

  it("tokenizes one string to a vector, [N, 1] inputs, int64, and the vocabulary accessors", function()
    local tok = make()
    local y = tok:tokenize(tide.tensor(F.scalar.text))
    assert.are.equal(1, y.ndim)
    assert.are.same(F.scalar.ids, y:totable())
    assert.are.same(F.scalar.ids, tok(tide.tensor(F.scalar.text)):totable())
    assert.are.same(F.cases.plain.ids[1],
      tok:tokenize(tide.tensor({ { F.cases.plain.texts[1] } }, "string")):totable()[1])
    assert.are.equal("int64", tostring(make { dtype = "int64" }:tokenize(tide.tensor "hi").dtype))
    local d = make { sequence_length = 5 }:tokenize(tide.tensor(F.scalar.text))
    assert.are.same({ F.scalar.ids[1], F.scalar.ids[2], F.scalar.ids[3], 0, 0 }, d:totable())
    assert.are.equal(F.scalar.text, tok:detokenize(tide.tensor(F.scalar.ids)):item())
    assert.are.equal(F.scalar.text, tok:detokenize(F.scalar.ids):item())
    assert.are.same({ F.scalar.text, "" }, tok:detokenize({ F.scalar.ids, {} }):totable())
    assert.are.equal(F.ids.hello, tok:token_to_id("hello"))
    assert.are.equal("Ġthe", tok:id_to_token(F.ids["Ġthe"]))
    local v = tok:get_vocabulary()
    assert.are.equal(F.vocab_size, #v)
    assert.are.equal("hello", v[F.ids.hello + 1])
    -- a table vocabulary and a list of merges work as the files do
    local t = BPE { vocabulary = { a = 0, b = 1, ab = 2, ["Ġ"] = 3 }, merges = { "a b" } }
    assert.are.same({ { 2, 3, 0 } }, t:tokenize(tide.tensor({ "ab a" }, "string")):totable())
    -- a piece outside the vocabulary is -1 (keras_hub's), and detokenizes to nothing
    assert.are.same({ 0, -1 }, t:tokenize(tide.tensor "ac"):totable())
    assert.are.equal("a", t:detokenize({ 0, -1 }):item())
  end)

  it("runs traced (None dims, tokenize and detokenize) and in a tide.data map on C threads", function()
    local c = F.cases.sequence_length
    local tok = make(c.opts)
    local f = tide.trace(function(x) return tok(x) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    assert.are.same(c.ids, f(tide.tensor(c.texts, "string")):totable())
    -- the ragged form traced: values and row_splits, then back to text through the same ops
    local u = F.cases.unsplittable
    local tu = make(u.opts)
    local g = tide.trace(function(x)
      local r = tu(x)
      return r.values, r.row_splits, tu:detokenize(r)
    end, { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    local v, rs, back = g(tide.tensor(u.texts, "string"))
    assert.are.same(u.ids, tide.RaggedTensor.from_row_splits(v, rs):totable())
    local want = tu:detokenize(tu(tide.tensor(u.texts, "string"))):totable()
    assert.are.same(want, back:totable())
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor(c.texts, "string")):batch(5)
      :map(function(x) return tok(x) end, { num_parallel_calls = tide.data.AUTOTUNE })
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local rows = {}
    for b in ds:iter() do for _, r in ipairs(b:totable()) do rows[#rows + 1] = r end end
    assert.are.same(c.ids, rows)
  end)

  it("keeps a word's pieces across repeats (the cache), long words, invalid UTF-8 and sparse ids", function()
    local tok = make()
    -- a word seen many times in one call gives the same pieces each time as alone
    local one = tok:tokenize(tide.tensor(F.scalar.text)):totable()
    local many = {}
    for i = 1, 200 do many[i] = F.scalar.text end
    for _, row in ipairs(tok:tokenize(tide.tensor(many, "string")):totable()) do assert.are.same(one, row) end
    -- a long word with no merges left over is byte pieces, and comes back whole
    local long = string.rep("hello", 400)
    local ids = tok:tokenize(tide.tensor(long))
    assert.are.equal(long, tok:detokenize(ids):item())
    -- invalid UTF-8 splits and maps byte by byte (nothing crashes), and comes back as the same bytes
    local bad = "ab\255\254 cd\192"
    assert.are.equal(bad, tok:detokenize(tok:tokenize(tide.tensor(bad))):item())
    -- ids with holes: the missing id is refused eagerly; -1 and known ids decode
    local t = BPE { vocabulary = { a = 0, b = 1, ab = 5 }, merges = { "a b" } }
    assert.are.same({ 5, 0 }, t:tokenize(tide.tensor "aba"):totable())
    assert.are.equal("aba", t:detokenize({ 5, -1, 0 }):item())
    h.errors("id 3 is not in the vocabulary", function() t:detokenize({ 3 }) end)
    h.errors("id -2 is not in the vocabulary", function() t:detokenize({ -2 }) end)
    h.errors("vocabulary ids must be nearly dense", function()
      BPE { vocabulary = { a = 0, b = 2 ^ 30 }, merges = {} }
    end)
  end)

  it("bpe_tokenize refuses inputs that are not its vectors", function()
    local tok = make()
    local C = require("tide.binding").C
    local dispatch = require "tide.dispatch"
    local function run(ins, flags)
      local a = dispatch.attrs()
      a.flags = flags or 0
      return dispatch.run(C.TIDE_OP_BPE_TOKENIZE, a, ins, 2)
    end
    local x = tide.tensor({ "a" }, "string")
    h.errors("the input must be a string vector", function()
      run { tide.tensor "a", tok._vocab_t, tok._table, tok._merges_t, tok._merges_table, tok._unsplittable_t }
    end)
    h.errors("the merges' table must be an int64", function()
      run { x, tok._vocab_t, tok._table, tok._merges_t, tok._merges_t, tok._unsplittable_t }
    end)
    h.errors("the vocabulary's table was not made by lookup_table", function()
      run { x, tok._vocab_t, tide.tensor({ -1, -1 }, "int64"), tok._merges_t, tok._merges_table,
        tok._unsplittable_t }
    end)
    h.errors("unknown flags", function()
      run({ x, tok._vocab_t, tok._table, tok._merges_t, tok._merges_table, tok._unsplittable_t }, 4)
    end)
  end)

  it("errors name the class and the argument", function()
    h.errors("cannot read the vocabulary file", function()
      BPE { vocabulary = "/nonexistent/v.json", merges = MERGES }
    end)
    h.errors("cannot read the merges file", function() BPE { vocabulary = VOCAB, merges = "/nonexistent/m.txt" } end)
    local bad = tmpfile("#version: 0.2\nĠ t\nh e x\n")
    h.errors('merge rule 3 "h e x" must be two tokens', function() BPE { vocabulary = VOCAB, merges = bad } end)
    os.remove(bad)
    h.errors("that is not in the vocabulary", function() BPE { vocabulary = VOCAB, merges = { "zz qq" } } end)
    local badjson = tmpfile("{\"a\": 0,")
    h.errors("vocabulary file", function() BPE { vocabulary = badjson, merges = {} } end)
    os.remove(badjson)
    h.errors("vocabulary entries must be token = integer id", function()
      BPE { vocabulary = { a = 1.5 }, merges = {} }
    end)
    h.errors("pass both vocabulary and merges", function() BPE { vocabulary = VOCAB } end)
    h.errors("sequence_length must be nil or an integer", function() make { sequence_length = 0 } end)
    h.errors("dtype must be", function() make { dtype = "float32" } end)
    h.errors("unsplittable_tokens[1] must be a non-empty string", function() make { unsplittable_tokens = { "" } } end)
    h.errors("no vocabulary", function() BPE {}:tokenize(tide.tensor "a") end)
    h.errors("expected string inputs", function() make():tokenize(tide.tensor { 1 }) end)
    h.errors("the input must be a string, a vector, or [N, 1]", function()
      make():tokenize(tide.tensor { { "a", "b" } })
    end)
    h.errors("detokenize expects integer ids", function() make():detokenize(tide.tensor { 1.5 }) end)
    h.errors("id 100000 is not in the vocabulary", function() make():detokenize({ 100000 }) end)
    h.errors("is not in the vocabulary", function() make():id_to_token(100000) end)
    h.errors("is not in the vocabulary", function() make():token_to_id("nope") end)
  end)
end)
