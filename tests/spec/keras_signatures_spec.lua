-- tests/spec/keras_signatures_spec.lua — every constructor of tide.layers,
-- optimizers, losses, metrics and callbacks (and Model, Sequential, Input)
-- takes Keras 3's positional arguments first, in Keras's order: the names a
-- construction notes (tide.initializers.base.arg_names) against the ones TF
-- 2.21's Keras lists (tests/fixtures/keras/signatures.lua, from signatures_gen.py).
-- tide may take fewer (the rest not supported yet) or more after Keras's.
local tide = require "tide"
local base = require "tide.initializers.base"
local F = dofile("tests/fixtures/keras/signatures.lua")

-- Classes whose construction takes its arguments another way, and why.
local APART = {
  CallbackList = "fit's container, called as CallbackList(callbacks, opts); CallbackList{cb1, cb2} lists callbacks",
}

-- The first place where tide's positional names leave Keras's, or nil.
local function mismatch(got, keras)
  for i = 1, math.min(#got, #keras) do
    if got[i] ~= keras[i] then return i end
  end
end

local function check_family(family, mod)
  local checked, bad = 0, {}
  local names = {}
  for k, cls in pairs(mod) do
    if type(cls) == "table" and k:match("^%u") and rawget(cls, "__name") and getmetatable(cls) then
      names[#names + 1] = k
    end
  end
  table.sort(names)
  for _, k in ipairs(names) do
    local cls = mod[k]
    local keras = F[family][k]
    if keras and not APART[k] then
      local cname = rawget(cls, "__name")
      base.arg_names[cname] = nil
      pcall(cls) -- construction with no arguments notes the names before it checks what is required
      local got = base.arg_names[cname]
      if got == nil and #keras > 0 then
        bad[#bad + 1] = string.format("%s: takes no positional arguments; Keras's are %s", k, table.concat(keras, ", "))
      elseif got ~= nil then
        local at = mismatch(got, keras)
        if at then
          bad[#bad + 1] = string.format("%s: argument %d is %s, Keras's is %s (tide: %s; Keras: %s)", k, at,
            got[at], keras[at], table.concat(got, ", "), table.concat(keras, ", "))
        end
      end
      checked = checked + 1
    end
  end
  return checked, bad
end

describe("constructors take Keras 3's positional arguments first", function()
  for _, family in ipairs { "layers", "optimizers", "losses", "metrics", "callbacks" } do
    it("tide." .. family, function()
      local checked, bad = check_family(family, tide[family])
      assert.is_true(checked >= 5, family .. ": too few classes checked")
      assert.are.same({}, bad)
    end)
  end

  it("Model{inputs, outputs, name}, Sequential{layers}, Input{shape, batch_size, dtype, ...}", function()
    for _, k in ipairs { "Model", "Input" } do
      base.arg_names[k] = nil
      pcall(tide[k])
      assert.are.same(F.models[k], base.arg_names[k], k)
    end
    -- Sequential takes its layers as the list itself (Sequential{l1, l2}) or as layers=
    assert.are.equal("layers", F.models.Sequential[1])
    local L = tide.layers
    local x = tide.Input { { 3 }, 2, "float64", false, false, nil, "feats" }
    assert.are.same({ 2, 3 }, x.shape:as_list())
    assert.are.equal("float64", x.dtype)
    assert.are.equal("feats", x.node.layer.name)
    local m = tide.Model { x, L.Dense { 1 }(x), "mine" }
    assert.are.equal("mine", m.name)
    assert.are.equal(2, #tide.Sequential { layers = { L.Dense { 2 }, L.Dense { 1 } } }.layers)
  end)

  it("by position, as keras.io writes them", function()
    local L = tide.layers
    assert.is_true(math.abs(tide.optimizers.SGD { 0.1 }.learning_rate:item() - 0.1) < 1e-7)
    local sgd = tide.optimizers.SGD { 0.1, 0.9, true }
    assert.are.same({ 0.9, true }, { sgd.momentum, sgd.nesterov })
    local d = L.Dense { 4, "relu", false, "zeros", "zeros", nil, nil, "l2" }
    assert.is_false(d.use_bias)
    assert.is_truthy(d.activity_regularizer)
    assert.are.equal(0.5, L.Dropout { 0.5 }.rate)
    assert.are.equal(3, L.Embedding { 10, 3 }.output_dim)
    assert.is_true(tide.losses.BinaryCrossentropy { true }.from_logits)
    assert.are.equal("val_acc", tide.callbacks.EarlyStopping { "val_acc", 0, 3 }.monitor)
    assert.are.equal(3, tide.callbacks.EarlyStopping { "val_acc", 0, 3 }.patience)
    assert.are.equal("m", tide.metrics.Mean { "m" }.name)
    assert.are.equal("float64", tide.metrics.Metric { "float64" }.dtype)
    -- Lambda(function, output_shape, mask, arguments)
    local lam = L.Lambda { function(t) return t * 2 end, nil, function(_, m) return m end }
    assert.is_true(lam.supports_masking)
  end)
end)
