-- tests/spec/saving/text_assets_spec.lua — adapted vocabularies in .keras files as Keras 3 keeps them
-- (assets/<layer path>/vocabulary.txt): tide reads a Keras-written model with an adapted TextVectorization
-- (tests/fixtures/text/keras_text_vectorization.keras, from gen.py) and round-trips its own, StringLookup too.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local zip = require "tide.io.zip"
local L = tide.layers
local F = dofile("tests/fixtures/text/wordpiece.lua").saved

describe(".keras assets", function()
  it("loads Keras's model with an adapted TextVectorization and gives Keras's outputs", function()
    local m = tide.models.load_model("tests/fixtures/text/keras_text_vectorization.keras")
    local out = m(tide.tensor(F.query, "string"))
    h.close(out[2], F.ids, 0)
    h.close(out[1], F.y, 1e-6)
    assert.are.same(F.vocab, m.layers[2]:get_vocabulary())
  end)

  it("writes Keras's layout and reads it back (TextVectorization, StringLookup)", function()
    tide.random.set_seed(7)
    local tv = L.TextVectorization { max_tokens = 20, output_sequence_length = 4 }
    tv:adapt(tide.tensor { "the cat sat", "the dog" })
    local inp = tide.Input { shape = {}, dtype = "string" }
    local x = tv(inp)
    local y = L.Dense { 1 }(L.GlobalAveragePooling1D {}(L.Embedding { 20, 3 }(x)))
    local m = tide.Model { inp, { y, x } }
    local q = tide.tensor { "the dog sat", "cat" }
    local path = tmp.name(".keras")
    m:save(path)
    local z = zip.open(path)
    assert.are.equal("\n[UNK]\nthe\nsat\ndog\ncat", z:read("assets/layers/text_vectorization/vocabulary.txt"))
    assert.is_true(z:has("assets/layers/text_vectorization/_lookup_layer/vocabulary.txt"))
    z:close()
    local m2 = tide.models.load_model(path)
    h.close(m2(q)[2], m(q)[2], 0)
    h.close(m2(q)[1], m(q)[1], 0)
    os.remove(path)

    local sl = L.StringLookup {}
    sl:adapt(tide.tensor { "a", "b", "b" })
    local i2 = tide.Input { shape = { 1 }, dtype = "string" }
    local m3 = tide.Model { i2, L.Embedding { 4, 2 }(sl(i2)) }
    local p2 = tmp.name(".keras")
    m3:save(p2)
    local loaded = tide.models.load_model(p2)
    assert.are.same({ "[UNK]", "b", "a" }, loaded.layers[2]:get_vocabulary())
    local q2 = tide.tensor { { "a" }, { "z" } }
    h.close(loaded(q2), m3(q2), 0)
    os.remove(p2)
  end)

  it("writes no asset for a vocabulary given to the constructor (the config holds it)", function()
    local tv = L.TextVectorization { vocabulary = { "x", "y" }, output_sequence_length = 2 }
    local inp = tide.Input { shape = {}, dtype = "string" }
    local m = tide.Model { inp, L.Embedding { 4, 2 }(tv(inp)) }
    local path = tmp.name(".keras")
    m:save(path)
    local z = zip.open(path)
    for _, n in ipairs(z:names()) do assert.is_nil(n:match("^assets/"), n) end
    z:close()
    local m2 = tide.models.load_model(path)
    h.close(m2(tide.tensor { "y x", "q" }), m(tide.tensor { "y x", "q" }), 0)
    os.remove(path)
  end)
end)
