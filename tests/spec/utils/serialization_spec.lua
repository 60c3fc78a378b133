-- tests/spec/utils/serialization_spec.lua — serialize/deserialize_keras_object against Keras 3's dicts
-- (tests/fixtures/keras_utils/gen_serialization.py), the custom object registry, scopes, and a .keras file with a
-- registered custom layer loaded through the same registry; every error.
local tide = require "tide"
local json = require "tide.json"
local U = tide.utils

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local K = json.decode(read("tests/fixtures/keras_utils/serialization.json"), "serialization.json")

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(e), 1, true)
end

-- tide's dict matches Keras's: the same keys and values, where a key tide leaves out holds null in Keras's
-- (a layer's unset regularizers, Keras options tide's classes do not have). tide.json leaves a null member out, so
-- Keras's nulls are absent keys, and tide's tide.None must meet one.
local function like_keras(keras, got, path)
  path = path or "dict"
  if type(keras) == "table" and keras ~= tide.None then
    assert.are.equal("table", type(got), path)
    for k, v in pairs(keras) do
      if got[k] == nil then
        assert(v == tide.None, string.format("%s.%s: tide left out %s", path, tostring(k), json.encode(v)))
      else
        like_keras(v, got[k], path .. "." .. tostring(k))
      end
    end
    for k, v in pairs(got) do
      assert(keras[k] ~= nil or v == tide.None, string.format("%s.%s: not in Keras's dict", path, tostring(k)))
    end
  elseif type(keras) == "number" then
    assert(type(got) == "number" and math.abs(keras - got) < 1e-6, string.format("%s: %s vs %s", path, keras, tostring(got)))
  else
    assert.are.equal(keras, got, path)
  end
end

local Scale = tide.layers.Layer:extend("Scale")
function Scale:init(opts) self.factor = opts.factor or 2.0 end
function Scale:call(x) return x * self.factor end
function Scale:get_config()
  local c = tide.layers.Layer.get_config(self)
  c.factor = self.factor
  return c
end
U.register_keras_serializable("MyPkg")(Scale)
local function my_act(x) return x end
U.register_keras_serializable(my_act, "Custom", "my_act")

describe("serialize_keras_object", function()
  it("writes Keras 3's dicts for layers, built layers and registered custom layers", function()
    like_keras(K.dense, U.serialize_keras_object(tide.layers.Dense { 3, activation = "relu", name = "d" }))
    local b = tide.layers.Dense { 2, name = "b", use_bias = false }
    b:build { tide.None, 4 }
    like_keras(K.dense_built, U.serialize_keras_object(b))
    like_keras(K.scale, U.serialize_keras_object(Scale { factor = 3.0, name = "sc" }))
  end)

  it("writes functions, losses, optimizers, initializers, regularizers, tensors and plain values", function()
    like_keras(K.relu, U.serialize_keras_object(tide.activations.relu))
    like_keras(K.my_act, U.serialize_keras_object(my_act))
    like_keras(K.mse, U.serialize_keras_object(tide.losses.MeanSquaredError()))
    like_keras(K.mse_fn, U.serialize_keras_object(tide.losses.mean_squared_error))
    like_keras(K.sgd, U.serialize_keras_object(tide.optimizers.SGD { 0.5 }))
    like_keras(K.glorot, U.serialize_keras_object(tide.initializers.GlorotUniform { seed = 1 }))
    like_keras(K.l2, U.serialize_keras_object(tide.regularizers.L2(0.25)))
    like_keras(K.plain, U.serialize_keras_object { 1, "a", { k = 2.5 }, true })
    like_keras(K.tensor, U.serialize_keras_object(tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")))
    assert.is_nil(U.serialize_keras_object(nil))
    assert.are.equal("int8", U.serialize_keras_object(tide.int8))
  end)

  it("names what it cannot serialize", function()
    err("serialize_keras_object: this function is neither one of Keras's", U.serialize_keras_object, function() end)
    err("serialize_keras_object: cannot serialize a thread", U.serialize_keras_object, coroutine.create(print))
    local Plain = tide.layers.Layer:extend("NoConfigHolder")
    local obj = setmetatable({}, { __name = "Thing" })
    err("to be serializable, a class must implement get_config()", U.serialize_keras_object, obj)
    assert.truthy(Plain)
  end)
end)

describe("deserialize_keras_object", function()
  it("reads Keras's layer dicts, builds from build_config, finds registered classes", function()
    local d = U.deserialize_keras_object(K.dense)
    assert.are.equal("Dense", getmetatable(d).__name)
    assert.are.equal(3, d.units)
    assert.are.equal("d", d.name)
    local b = U.deserialize_keras_object(K.dense_built)
    assert.is_true(b.built)
    assert.are.same({ 4, 2 }, b.kernel.shape)
    local s = U.deserialize_keras_object(K.scale)
    assert.are.equal(Scale, getmetatable(s))
    assert.are.equal(3, s.factor)
  end)

  it("reads functions, losses, optimizers, initializers, regularizers and tensors", function()
    assert.are.equal(tide.activations.relu, U.deserialize_keras_object(K.relu))
    assert.are.equal(my_act, U.deserialize_keras_object(K.my_act))
    assert.are.equal("MeanSquaredError", getmetatable(U.deserialize_keras_object(K.mse)).__name)
    assert.are.equal(tide.losses.mean_squared_error, U.deserialize_keras_object(K.mse_fn))
    local sgd = U.deserialize_keras_object(K.sgd)
    assert.is_true(tide.optimizers.is_optimizer(sgd))
    assert.is_true(math.abs(sgd:get_config().learning_rate - 0.5) < 1e-7)
    assert.are.equal(1, U.deserialize_keras_object(K.glorot):get_config().seed)
    assert.are.equal(0.25, U.deserialize_keras_object(K.l2):get_config().l2)
    local t = U.deserialize_keras_object(K.tensor)
    assert.are.equal("float32", t.dtype)
    assert.are.same({ { 1, 2 }, { 3, 4 } }, t:totable())
    local n = U.deserialize_keras_object(K.numpy)
    assert.are.equal("int32", n.dtype)
    assert.are.same({ 1, 2, 3 }, n:totable())
    assert.are.same({ 1, "a", { k = 2.5 }, true }, U.deserialize_keras_object(K.plain))
  end)

  it("rebuilds a Sequential holding a registered custom layer", function()
    local m = U.deserialize_keras_object(K.model)
    assert.are.equal(Scale, getmetatable(m.layers[1]))
    assert.are.same({ 1, 1 }, m(tide.ones { 1, 4 }).shape)
  end)

  it("round-trips what serialize_keras_object wrote", function()
    local d = tide.layers.Dense { 5, activation = "tanh", name = "rt" }
    local back = U.deserialize_keras_object(json.decode(json.encode(U.serialize_keras_object(d)), "rt"))
    assert.are.equal(5, back.units)
    assert.are.equal("rt", back.name)
  end)

  it("names what it cannot find", function()
    err("deserialize_keras_object: unknown class 'Nope' (registered name 'Pkg>Nope')", U.deserialize_keras_object,
      { module = tide.None, class_name = "Nope", config = {}, registered_name = "Pkg>Nope" })
    err("deserialize_keras_object: unknown function 'Custom>gone'", U.deserialize_keras_object,
      { module = "builtins", class_name = "function", config = "Custom>gone", registered_name = "function" })
    err("deserialize_keras_object: custom_objects must be a table", U.deserialize_keras_object, K.dense,
      { custom_objects = 3 })
    err("deserialize_keras_object: unknown option 'safe'", U.deserialize_keras_object, K.dense, { safe = 1 })
    err("deserialize_keras_object: a __tensor__ needs config", U.deserialize_keras_object,
      { class_name = "__tensor__", config = {} })
  end)
end)

describe("the custom object registry", function()
  it("names and finds registered objects as Keras", function()
    assert.are.equal("MyPkg>Scale", U.get_registered_name(Scale))
    assert.are.equal("Custom>my_act", U.get_registered_name(my_act))
    assert.are.equal("Dense", U.get_registered_name(tide.layers.Dense))
    assert.are.same(K.registered_names, { U.get_registered_name(Scale), U.get_registered_name(my_act),
      U.get_registered_name(tide.layers.Dense) })
    assert.are.equal(Scale, U.get_registered_object("MyPkg>Scale"))
    assert.is_nil(U.get_registered_object("MyPkg>Other"))
    assert.are.equal(print, U.get_registered_object("p", { p = print }))
    assert.are.equal(Scale, U.get_custom_objects()["MyPkg>Scale"])
    assert.are.equal(U.custom_object_scope, U.CustomObjectScope)
    assert.are.equal(U.register_keras_serializable, tide.saving.register_keras_serializable)
  end)

  it("get_custom_objects is live: an entry put there is found by deserialize and layers.deserialize", function()
    local Twice = tide.layers.Layer:extend("TwiceLive")
    function Twice:call(x) return x * 2 end
    U.get_custom_objects()["TwiceAlias"] = Twice
    local l = tide.layers.deserialize { class_name = "TwiceAlias", config = { name = "t" } }
    assert.are.equal(Twice, getmetatable(l))
    U.get_custom_objects()["TwiceAlias"] = nil
    err("unknown layer class 'TwiceAlias'", tide.layers.deserialize, { class_name = "TwiceAlias", config = {} })
  end)

  it("custom_object_scope puts objects in force and restores the previous scope, also on errors", function()
    local Half = tide.layers.Layer:extend("HalfScoped")
    local spec = { class_name = "Halver", config = { name = "h" } }
    local l = U.custom_object_scope({ Halver = Half }, function() return tide.layers.deserialize(spec) end)
    assert.are.equal(Half, getmetatable(l))
    err("unknown layer class 'Halver'", tide.layers.deserialize, spec)
    local ok = pcall(U.custom_object_scope, { Halver = Half }, function() error("inside") end)
    assert.is_false(ok)
    assert.is_nil(U.get_registered_object("Halver"))
    local s = U.CustomObjectScope { Halver = Half }
    s:enter()
    assert.are.equal(Half, U.get_registered_object("Halver"))
    s:exit()
    assert.is_nil(U.get_registered_object("Halver"))
    err("CustomObjectScope: exit without enter", function() s:exit() end)
    err("custom_object_scope: expects a table", U.custom_object_scope, "x")
    err("custom_object_scope: names must be strings", U.custom_object_scope, { [1] = Half })
  end)

  it("register_keras_serializable checks what it is given", function()
    err("register_keras_serializable: package must be a string", U.register_keras_serializable, 5)
    err("register_keras_serializable: cannot register a class that does not have a get_config()",
      U.register_keras_serializable("P"), {})
    err("register_keras_serializable: a function needs its name", U.register_keras_serializable("P"), print)
    err("register_keras_serializable: package must not contain '>'", U.register_keras_serializable, print, "a>b", "p")
    err("register_keras_serializable: expects a class", U.register_keras_serializable("P"), 7)
  end)
end)

describe("a .keras file with a registered custom layer", function()
  local want = json.decode(read("tests/fixtures/keras_utils/scale_model.json"), "scale_model.json")
  it("loads through the registry, without custom_objects", function()
    local m = tide.saving.load_model("tests/fixtures/keras_utils/scale_model.keras")
    assert.are.equal(Scale, getmetatable(m.layers[1]))
    local y = m:predict(tide.tensor(want.x, "float32"), { verbose = 0 })
    assert.is_true(math.abs(y:totable()[1][1] - want.y[1][1]) < 1e-5)
  end)

  it("is written back with Keras's registered_name and no module", function()
    local tmp = os.tmpname()
    os.remove(tmp)
    local path = tmp .. ".keras"
    local m = tide.saving.load_model("tests/fixtures/keras_utils/scale_model.keras")
    m:save(path)
    local z = require("tide.io.zip").open(path)
    local cfg = json.decode(z:read("config.json"), "config.json")
    z:close()
    os.remove(path)
    local scale = cfg.config.layers[2]
    assert.are.equal("Scale", scale.class_name)
    assert.are.equal("MyPkg>Scale", scale.registered_name)
    assert.is_nil(scale.module) -- null in the file
  end)
end)
