-- tests/spec/saved_model/tf_spec.lua — TensorFlow SavedModels read by tide (kernels/io/tf_saved_model.c,
-- saved_model/tf.lua): the fixtures TF 2.21 and Keras 3 wrote (tests/fixtures/tf_saved_model/gen.py) give
-- TF's outputs; unmapped ops and broken files give clear errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"

local FIX = "tests/fixtures/tf_saved_model/"
local E = dofile(FIX .. "expected.lua")

local function f32(v) return tide.tensor(v, "float32") end

-- Copy the SavedModel folder `name` into a fresh folder (to break it there).
local function copy(name)
  local dir = tmp.dir("tf_sm") .. "/" .. name
  assert(os.execute(string.format("cp -r '%s%s' '%s'", FIX, name, dir)) == 0 or true)
  return dir
end

describe("tide.saved_model.load of a TF SavedModel", function()
  it("runs a tf.Module's signatures, inputs and outputs by TF's names", function()
    local m = tide.saved_model.load(FIX .. "module")
    assert.are.equal("tensorflow", m.format)
    local y = m.signatures.serving_default { x = f32(E.module_x) }
    assert.are.same({ "y" }, (function() local k = {} for n in pairs(y) do k[#k + 1] = n end return k end)())
    assert.are.same({ 3, 3 }, y.y.shape)
    h.close(y.y, E.module_y, 1e-6)
    -- a second signature with two inputs, one of them a scalar
    local s = m.signatures.scaled { x = f32(E.scaled_x), k = f32(2) }
    h.close(s.out, E.scaled_out, 1e-6)
    -- positional functions take the inputs in the order of their names
    local fn = m.functions.scaled
    assert.are.same({ "k", "x" }, { fn.input_signature[1].name, fn.input_signature[2].name })
    assert.are.same({ "out" }, fn.output_names)
    h.close(fn(f32(2), f32(E.scaled_x)), E.scaled_out, 1e-6)
    -- the batch dim is free: one row works as three
    h.close(m.signatures.serving_default { x = f32({ E.module_x[2] }) }.y, { E.module_y[2] }, 1e-6)
    -- variables by their checkpoint keys
    h.close(m.variables["w/.ATTRIBUTES/VARIABLE_VALUE"], { { 1, -2, 0.5 }, { 3, 4, -1 } }, 0)
    h.close(m.variables["b/.ATTRIBUTES/VARIABLE_VALUE"], { 0.5, -0.5, 0.25 }, 0)
  end)

  it("says what a call got wrong", function()
    local m = tide.saved_model.load(FIX .. "module")
    h.errors("signature 'serving_default': input 'x' is missing", m.signatures.serving_default, { y = f32(E.module_x) })
    h.errors("signature 'serving_default' has no input named 'z'", m.signatures.serving_default,
      { x = f32(E.module_x), z = f32(1) })
    h.errors("signature 'serving_default': input 'x' is float64 (3, 2), but the model takes float32 (None, 2)",
      m.signatures.serving_default, { x = tide.tensor(E.module_x, "float64") })
    h.errors("input 'x' is float32 (2, 3), but the model takes float32 (None, 2)", m.signatures.serving_default,
      { x = f32({ { 1, 2, 3 }, { 4, 5, 6 } }) })
    h.errors("signature 'scaled' takes 2 inputs (k, x), got 1", m.functions.scaled, f32(1))
    h.errors("takes a table of inputs by name", m.signatures.serving_default, f32(E.module_x))
  end)

  it("runs a Keras 3 MLP after model.export", function()
    local m = tide.saved_model.load(FIX .. "keras_mlp")
    local x = f32(E.mlp_x)
    for _, name in ipairs { "serving_default", "serve" } do
      local y = m.signatures[name] { [E.mlp_input] = x }
      h.close(y[E.mlp_output], E.mlp_y, 1e-5)
    end
    -- Keras saves each variable under two keys; tide keeps one of each
    local n = 0
    for _ in pairs(m.variables) do n = n + 1 end
    assert.are.equal(4, n)
  end)

  it("maps the ops a tf.Module uses beyond Dense (shapes, slices, concat, gather, pad, where, reductions)", function()
    local m = tide.saved_model.load(FIX .. "ops")
    local r = m.signatures.serving_default { x = f32(E.ops_x) }
    h.close(r.s, E.ops_s, 1e-5)
    h.close(r.w, E.ops_w, 1e-5)
    h.close(r.sq, E.ops_sq, 1e-5)
    assert.are.equal("int64", r.am.dtype)
    assert.are.same(E.ops_am, r.am:totable())
    h.close(r.sig, E.ops_sig, 1e-5)
    -- the batch dim stays free through Shape/StridedSlice/Pack into Reshape
    local one = m.signatures.serving_default { x = f32({ E.ops_x[2] }) }
    h.close(one.s, { E.ops_s[2] }, 1e-5)
  end)

  it("names every op it does not map, and a node of each, at load time", function()
    local err = h.errors("uses 2 TF ops that tide does not map:", tide.saved_model.load, FIX .. "unmapped")
    assert.truthy(err:find("Cumsum (node 'Cumsum' in function '__inference___call___", 1, true), err)
    assert.truthy(err:find("Cumprod (node 'Cumprod' in function '__inference___call___", 1, true), err)
  end)

  it("refuses broken files with clear errors", function()
    -- a truncated saved_model.pb
    local dir = copy("module")
    local f = assert(io.open(dir .. "/saved_model.pb", "rb"))
    local bytes = f:read("*a")
    f:close()
    f = assert(io.open(dir .. "/saved_model.pb", "wb"))
    f:write(bytes:sub(1, 300))
    f:close()
    h.errors("saved_model.pb is corrupt (not a SavedModel protobuf, or truncated)", tide.saved_model.load, dir)
    -- no variables
    dir = copy("keras_mlp")
    os.remove(dir .. "/variables/variables.index")
    h.errors("its variables: TF checkpoint: cannot open the index", tide.saved_model.load, dir)
    -- a text SavedModel
    dir = copy("unmapped")
    os.rename(dir .. "/saved_model.pb", dir .. "/saved_model.pbtxt")
    h.errors("it holds saved_model.pbtxt (text); tide reads the binary saved_model.pb", tide.saved_model.load, dir)
    tmp.remove(dir:match("^(.*)/unmapped$"))
  end)
end)
