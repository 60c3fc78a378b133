-- tests/spec/layers/wordpiece_spec.lua — tide.text.WordPieceTokenizer against keras_hub 0.32 (tensorflow-text
-- 2.21; tests/fixtures/text/wordpiece.lua and bert_vocab.txt, from gen.py): ids for cased/uncased/accents/no split/
-- CJK settings, sequence_length, detokenize; traced, in a C data map; errors name the class and the argument.
local tide = require "tide"
local h = require "helpers"
local F = dofile("tests/fixtures/text/wordpiece.lua")
local VOCAB = "tests/fixtures/text/bert_vocab.txt"
local WP = tide.text.WordPieceTokenizer

local function make(opts)
  local o = { vocabulary = VOCAB }
  for k, v in pairs(opts) do o[k] = v end
  return WP(o)
end

describe("WordPieceTokenizer", function()
  for key, c in pairs(F.cases) do
    it("matches keras_hub: " .. key, function()
      local tok = make(c.opts)
      assert.are.equal(F.vocab_size, tok:vocabulary_size())
      local y = tok:tokenize(tide.tensor(c.texts, "string"))
      if c.opts.sequence_length then
        assert.are.equal("int32", tostring(y.dtype))
        h.close(y, c.ids, 0)
      elseif key == "no_split" then
        -- keras_hub 0.32 with split = false returns every row's ids run together (and detokenizes them to
        -- characters): tide keeps one row a string; the ids agree once joined
        local flat = {}
        for _, r in ipairs(y:totable()) do for _, v in ipairs(r) do flat[#flat + 1] = v end end
        assert.are.same(c.ids, flat)
        assert.are.same({ "hello", "playing", "[UNK]", "unaffable" }, tok:detokenize(y):totable())
        return
      else
        assert.are.equal("int32", tostring(y.values.dtype))
        assert.are.same(c.ids, y:totable())
      end
      assert.are.same(c.detok, tok:detokenize(y):totable())
    end)
  end

  it("tokenizes one string to a vector, and gives pieces with dtype string", function()
    local c = F.cases.uncased
    local tok = make(c.opts)
    assert.are.same(c.ids[1], tok:tokenize(tide.tensor(c.texts[1])):totable())
    assert.are.same(c.ids[1], tok(tide.tensor(c.texts[1])):totable())
    local s = make { lowercase = true, dtype = "string" }
    assert.are.same({ "tensor", "##fl", "##ow" }, s:tokenize(tide.tensor "TensorFlow"):totable())
    assert.are.equal("the quick", tok:detokenize(tide.tensor { 5, 6 }):item())
    assert.are.equal(5, tok:token_to_id("the"))
    assert.are.equal("##s", tok:id_to_token(tok:token_to_id("##s")))
  end)

  it("keeps special tokens whole and cased, traced too, and in its config", function()
    local c = F.cases.special_in_strings
    local tok = make(c.opts)
    local f = tide.trace(function(x) local r = tok(x) return r.values, r.row_splits end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    local v, rs = f(tide.tensor(c.texts, "string"))
    assert.are.same(c.ids, tide.RaggedTensor.from_row_splits(v, rs):totable())
    local cfg = tok:get_config()
    assert.are.same({ "[CLS]", "[SEP]", "[MASK]" }, cfg.special_tokens)
    assert.is_true(cfg.special_tokens_in_strings)
    local back = WP:from_config(cfg)
    back:set_vocabulary(VOCAB)
    assert.are.same(c.ids, back:tokenize(tide.tensor(c.texts, "string")):totable())
    -- with split = false the special tokens split nothing (keras_hub's _special_tokens_for_splitting)
    local texts = tide.tensor({ "[CLS]a", "x[SEP]" }, "string")
    local ns = make { split = false, special_tokens = { "[CLS]", "[SEP]" }, special_tokens_in_strings = true }
    assert.are.same(make({ split = false }):tokenize(texts):totable(), ns:tokenize(texts):totable())
  end)

  it("runs traced and in a tide.data map on C threads", function()
    local c = F.cases.sequence_length
    local tok = make(c.opts)
    local f = tide.trace(function(x) return tok(x) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    h.close(f(tide.tensor(c.texts, "string")), c.ids, 0)
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor(c.texts, "string")):batch(5)
      :map(function(x) return tok(x) end, { num_parallel_calls = tide.data.AUTOTUNE })
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local rows = {}
    for b in ds:iter() do for _, r in ipairs(b:totable()) do rows[#rows + 1] = r end end
    assert.are.same(c.ids, rows)
  end)

  it("errors name the class and the argument", function()
    h.errors("cannot read the vocabulary file", function() WP { vocabulary = "/nonexistent/vocab.txt" } end)
    h.errors("the oov_token \"[UNK]\" is not in the vocabulary", function() WP { vocabulary = { "a", "b" } } end)
    h.errors("vocabulary[2] must be a string", function() WP { vocabulary = { "[UNK]", 3 } } end)
    h.errors("sequence_length must be nil or an integer", function() make { sequence_length = 0 } end)
    h.errors("special_tokens must be a list of strings", function() make { special_tokens = "[CLS]" } end)
    h.errors("special_tokens[2] must be a non-empty string", function() make { special_tokens = { "[CLS]", "" } } end)
    h.errors("special_tokens_in_strings must be a boolean", function()
      make { special_tokens = { "[CLS]" }, special_tokens_in_strings = 1 }
    end)
    h.errors("dtype must be", function() make { dtype = "float32" } end)
    h.errors("no vocabulary", function() WP {}:tokenize(tide.tensor "a") end)
    h.errors("expected string inputs", function() make {}:tokenize(tide.tensor { 1 }) end)
    h.errors("the input must be a string, a vector, or [N, 1]", function()
      make {}:tokenize(tide.tensor { { "a", "b" } })
    end)
    h.errors("detokenize expects integer ids", function() make {}:detokenize(tide.tensor { 1.5 }) end)
    h.errors("is outside the vocabulary", function() make {}:id_to_token(1000) end)
    h.errors("is not in the vocabulary", function() make {}:token_to_id("nope") end)
  end)
end)
