-- tests/spec/layers/preprocessing_hashing_spec.lua — Hashing, HashedCrossing and tide.sparse.cross_hashed
-- against TF 2.21's tf.keras (tests/fixtures/keras/preprocessing_hashing.lua, from its _gen.py): values,
-- dtypes, configs; traced with a None batch, in a tide.data map, from their config; errors name the class.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/preprocessing_hashing.lua")

-- int64 values come as decimal strings (all 64 bits): parsed by to_number, exactly.
local function input(name)
  local spec = F.inputs[name]
  if spec.dtype == "int64" then
    return tide.strings.to_number(tide.tensor(spec.values, "string"), { out_type = "int64" })
  end
  return tide.tensor(spec.values, spec.dtype)
end

local function arg_of(x)
  if type(x) == "table" then
    local list = {}
    for i, n in ipairs(x) do list[i] = input(n) end
    return list
  end
  return input(x)
end

local function copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = type(v) == "table" and copy(v) or v end
  return o
end

local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want)
  for k, v in pairs(want) do
    assert.are.same(v, got[k], where .. "." .. k)
  end
  for k, v in pairs(got) do
    if not SKIP[k] then assert(want[k] ~= nil or v == nil, where .. ": key '" .. k .. "' is not Keras's") end
  end
end

local function shape_of(v)
  local s = {}
  while type(v) == "table" do s[#s + 1] = #v; v = v[1] end
  return s
end

describe("hashing layers vs Keras 3", function()
  for key, c in pairs(F.cases) do
    it(key, function()
      local layer = L[c.cls](copy(c.opts))
      local y = layer(arg_of(c.x))
      assert.are.equal(c.y_dtype, y.dtype, key)
      assert.are.same(shape_of(c.y), y.shape:as_list(), key)
      h.close(y, c.y, 0)
      same_config(key, layer:get_config(), c.config)
      -- the same layer rebuilt from its config gives the same values
      local again = L[c.cls]:from_config(layer:get_config())
      h.close(again(arg_of(c.x)), c.y, 0)
    end)
  end

  for key, e in pairs(F.errors) do
    it("error: " .. key, function()
      h.errors(e.msg, function()
        local layer = L[e.cls](copy(e.opts))
        if e.x then layer(arg_of(e.x)) end
      end)
    end)
  end
end)

describe("tide.sparse.cross_hashed vs tf.sparse.cross_hashed", function()
  for key, c in pairs(F.crosses) do
    it(key, function()
      local sp = tide.sparse.cross_hashed(arg_of(c.x), copy(c.opts))
      assert.are.same(c.indices, sp.indices:totable())
      assert.are.same(c.dense_shape, sp.dense_shape:totable())
      assert.are.same(c.values, tide.strings.as_string(sp.values):totable()) -- exact: all 64 bits
    end)
  end

  it("refuses sparse inputs and bad options, naming them", function()
    local a = tide.tensor({ { "a" } }, "string")
    h.errors("only dense inputs", tide.sparse.cross_hashed, { tide.sparse.from_dense(a), a })
    h.errors("unknown option depth", tide.sparse.cross_hashed, { a, a }, { depth = 3 })
    h.errors("num_buckets must be 0", tide.sparse.cross_hashed, { a, a }, { num_buckets = -1 })
    h.errors("input 2 must be a string or integer", tide.sparse.cross_hashed, { a, tide.tensor { { 1.5 } } })
    h.errors("input 2 must be 2-D", tide.sparse.cross_hashed, { a, tide.tensor { "a" } })
    h.errors("input 2 has 2 rows", tide.sparse.cross_hashed, { a, tide.tensor({ { "a" }, { "b" } }, "string") })
  end)
end)

describe("hashing layers in traced code and pipelines", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("Hashing traces with a None batch and runs in a tide.data map on the C threads", function()
    local c = F.cases.h_salt_mask
    local layer = L.Hashing(copy(c.opts))
    local f = tide.trace(function(x) return layer(x) end,
      { input_signature = { tide.TensorSpec({ tide.None }, "string") } })
    h.close(f(input(c.x)), c.y, 0)
    local ds = tide.data.Dataset.from_tensor_slices(input(c.x)):map(function(x) return layer(x) end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds), "the hashing map runs on the pipeline's C threads")
    local got = {}
    for y in ds:iter() do got[#got + 1] = y:item() end
    assert.are.same(c.y, got)
  end)

  it("HashedCrossing traces with a None batch and runs in a tide.data map", function()
    local c = F.cases.hc_doc_one_hot
    local layer = L.HashedCrossing(copy(c.opts))
    local f = tide.trace(function(a, b) return layer { a, b } end, { input_signature = {
      tide.TensorSpec({ tide.None }, "string"), tide.TensorSpec({ tide.None }, "int64") } })
    local a, b = input(c.x[1]), input(c.x[2])
    local y = f(a, b)
    assert.are.same({ 5, 5 }, y.shape:as_list())
    h.close(y, c.y, 0)
    local ds = tide.data.Dataset.from_tensor_slices { a, b }:batch(2):map(function(x, z) return layer { x, z } end)
    assert.is_true(require("tide.data.lua_engine").in_c(ds))
    local rows = {}
    for yb in ds:iter() do for _, r in ipairs(yb:totable()) do rows[#rows + 1] = r end end
    assert.are.same(c.y, rows)
  end)

  it("Hashing's int mode keeps the input's shape; encodings refuse sparse", function()
    local y = L.Hashing { 8 } (tide.tensor({ { "a", "b" }, { "c", "d" } }, "string"))
    assert.are.same({ 2, 2 }, y.shape:as_list())
    h.errors("sparse = true is not supported", function() return L.Hashing { 4, output_mode = "multi_hot", sparse = true } end)
    h.errors("expected string, integer or float inputs, got bool", function() return L.Hashing { 4 } (tide.tensor { true }) end)
  end)
end)
