-- tests/spec/layers/layer_spec.lua — the Layer base: lazy build, add_weight,
-- tracking of Variables and sub-layers (fields, Lua tables), weights'
-- order, trainable, losses, names, configs, get/set_weights, training
-- propagation, subclassing, and the errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

local function names(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = v.name end
  return out
end

describe("tide.layers.Layer", function()
  before_each(function() L.clear_session() end)

  it("builds on the first call with the input's shape, once", function()
    local builds = {}
    local Probe = L.Layer:extend("Probe")
    function Probe:build(shape) builds[#builds + 1] = shape end
    function Probe:call(x) return x end
    local p = Probe()
    assert.is_false(p.built)
    p(tide.ones { 2, 3 })
    p(tide.ones { 5, 3 })
    assert.is_true(p.built)
    assert.are.same({ { 2, 3 } }, builds)
    local q = Probe()
    q { tide.ones { 1, 2 }, tide.ones { 4 } } -- a list of inputs: a list of shapes
    assert.are.same({ 1, 2 }, builds[2][1])
    assert.are.same({ 4 }, builds[2][2])
  end)


  it("build(input_shape) called directly marks the layer built, so its first call keeps those weights", function()
    local d = L.Dense { 3 }
    d:build { -1, 4 }
    assert.is_true(d.built)
    local kernel = d.kernel:read_value():totable()
    d(tide.ones { 2, 4 })
    assert.are.equal(2, #d.weights)
    h.close(d.kernel:read_value(), kernel, 0)
    local failing = L.Layer:extend("FailingBuild")
    function failing:build() error("no shape for me") end
    local f = failing()
    assert.has_error(function() f:build { 2 } end)
    assert.is_false(f.built) -- a build that failed leaves it unbuilt
  end)
  it("gives unique snake_case names per class, as Keras", function()
    assert.are.equal("dense", L.Dense { 1 }.name)
    assert.are.equal("dense_1", L.Dense { 1 }.name)
    assert.are.equal("batch_normalization", L.BatchNormalization().name)
    assert.are.equal("max_my_layer2d", L.Layer:extend("MaxMyLayer2D")().name)
    assert.are.equal("conv2d", L.snake_case and L.snake_case("Conv2D") or require("tide.layers.layer").snake_case("Conv2D"))
    assert.are.equal("mine", L.Dense { 1, name = "mine" }.name)
    assert.are.equal("<Dense name=mine, built=false>", tostring(L.Dense { 1, name = "mine" }))
    L.clear_session()
    assert.are.equal("dense", L.Dense { 1 }.name)
  end)

  it("tracks Variables and layers in fields and Lua tables, in Keras's order", function()
    local Block = L.Layer:extend("Block")
    function Block:init(opts)
      self.first = L.Dense { opts.units, name = "first" }
      self.free = tide.Variable(1.0, { name = "free" })
      self.stack = {}
    end
    function Block:build(shape)
      self.scale = self:add_weight { name = "scale", shape = {}, initializer = "ones", trainable = false }
      self.gain = self:add_weight { name = "gain", shape = { 2 }, initializer = "ones" }
      self.stack[#self.stack + 1] = L.Dense { 2, name = "second" } -- a table filled after it was assigned
      self.stack.named = { inner = L.Dense { 2, name = "third" } }
    end
    function Block:call(x)
      return self.stack.named.inner(self.stack[1](self.first(x))) * self.scale * self.free * self.gain
    end
    local b = Block { units = 3 }
    assert.are.equal(1, #b.weights) -- the free Variable, before build
    b(tide.ones { 4, 5 })
    -- own: the trainable store (free, gain) then the other (scale); then sub-layers in sighting order
    assert.are.same({ "free", "block/gain", "block/scale", "first/kernel", "first/bias", "second/kernel",
      "second/bias", "third/kernel", "third/bias" }, names(b.weights))
    assert.are.same(names(b.weights), names(b.variables))
    assert.are.same({ "free", "block/gain", "first/kernel", "first/bias", "second/kernel", "second/bias",
      "third/kernel", "third/bias" }, names(b.trainable_weights))
    assert.are.same({ "block/scale" }, names(b.non_trainable_weights))
    -- reassigning or clearing a field changes what is tracked
    b.stack.named = nil
    assert.are.equal(7, #b.weights)
    b.free = nil
    assert.are.equal(6, #b.weights)
    -- a Variable shared by two fields counts once
    b.alias = b.gain
    assert.are.equal(6, #b.weights)
  end)

  it("a custom layer made with trainable = false keeps the Variables of its plain fields out of its parent's " ..
    "trainable_weights (as a frozen built-in layer's)", function()
    local Scale = L.Layer:extend("Scale")
    function Scale:init() self.w = tide.Variable(tide.ones { 2, 2 }, { name = "w" }) end
    function Scale:call(x) return tide.matmul(x, self.w) end
    local Net = tide.Model:extend("Net")
    function Net:init(c)
      self.c = c
      self.d = L.Dense { 2, name = "head" }
    end
    function Net:call(x) return self.d(self.c(x)) end
    local frozen = Scale { trainable = false }
    local m = Net(frozen)
    m(tide.ones { 1, 2 })
    assert.are.same({ "head/kernel", "head/bias" }, names(m.trainable_weights))
    assert.are.same({ "w" }, names(m.non_trainable_weights))
    assert.are.same({}, frozen.trainable_weights)
    local tape = tide.GradientTape()
    tape:run(function() return tide.reduce_sum(m(tide.ones { 1, 2 })) end)
    assert.are.equal(2, #tape:watched_variables())
    frozen.trainable = true -- unfreezing gives it back, as for add_weight's
    assert.are.same({ "w", "head/kernel", "head/bias" }, names(m.trainable_weights))
    -- a Variable made trainable = false stays so
    local Fixed = L.Layer:extend("Fixed")
    function Fixed:init() self.v = tide.Variable(1, { name = "v", trainable = false }) end
    local f = Fixed { trainable = false }
    assert.are.same({ "v" }, names(f.non_trainable_weights))
    f.trainable = true
    assert.are.same({}, f.trainable_weights)
  end)

  it("trainable = false freezes the layer and its sub-layers (and tapes stop watching)", function()
    local outer = L.Layer:extend("Outer")
    function outer:init() self.inner = L.Dense { 2 } end
    function outer:call(x) return self.inner(x) end
    local o = outer()
    o(tide.ones { 1, 3 })
    assert.are.equal(2, #o.trainable_weights)
    o.trainable = false
    assert.is_false(o.trainable)
    assert.is_false(o.inner.trainable)
    assert.are.same({}, o.trainable_weights)
    assert.are.equal(2, #o.non_trainable_weights)
    assert.is_false(o.inner.kernel.trainable)
    local tape = tide.GradientTape()
    local y = tape:run(function() return tide.reduce_sum(o(tide.ones { 1, 3 })) end)
    assert.are.equal(0, #tape:watched_variables())
    o.trainable = true
    assert.are.equal(2, #o.trainable_weights)
    assert.is_true(o.inner.bias.trainable)
    -- a layer made non-trainable keeps its non-trainable weights so
    local bn = L.BatchNormalization { trainable = false }
    bn(tide.ones { 2, 3 })
    assert.are.equal(0, #bn.trainable_weights)
    bn.trainable = true
    assert.are.same({ "batch_normalization/gamma", "batch_normalization/beta" }, names(bn.trainable_weights))
    h.errors("trainable must be true or false", function() bn.trainable = 1 end)
    h.errors("'weights' is read-only", function() bn.weights = {} end)
    assert.is_nil(y and nil)
  end)

  it("add_weight: defaults, dtype, regularizer, and clear errors", function()
    local W = L.Layer:extend("W")
    function W:build()
      self.a = self:add_weight { name = "a", shape = { 3, 4 } }             -- glorot_uniform, float32, trainable
      self.b = self:add_weight { name = "b", shape = { 2 }, dtype = "int32" } -- zeros for non-floats
      self.c = self:add_weight({ 2 }, "ones", "float64")                    -- Keras's positional order
    end
    function W:call(x) return x end
    local w = W { dtype = "float64" }
    w(tide.ones { 1 })
    assert.are.equal("float64", w.a.dtype) -- the layer's dtype
    assert.are.same({ 0, 0 }, w.b:numpy())
    assert.are.equal("int32", w.b.dtype)
    assert.are.same({ 1, 1 }, w.c:numpy())
    local Bad = L.Layer:extend("Bad")
    function Bad:build() self:add_weight { name = "k", shape = { tide.None, 2 } } end
    h.errors("Bad 'bad': add_weight 'k': shape must be fully known", function() Bad()(tide.ones { 1 }) end)
    local Bad2 = L.Layer:extend("Bad2")
    function Bad2:build() self:add_weight { name = "k", shape = { 2 }, initializer = "nope" } end
    h.errors("Bad2 'bad2': add_weight 'k': unknown initializer 'nope'", function() Bad2()(tide.ones { 1 }) end)
  end)

  it("losses: regularization recomputed at each reading, add_loss cleared at each top-level call", function()
    local d = L.Dense { 2, kernel_regularizer = tide.regularizers.l2(0.5), kernel_initializer = "ones" }
    d(tide.ones { 1, 3 })
    assert.are.equal(1, #d.losses)
    h.close(d.losses[1], { 0.5 * 6 }, 1e-6)
    d.kernel:assign(tide.fill({ 3, 2 }, 2, "float32"))
    h.close(d.losses[1], { 0.5 * 24 }, 1e-6) -- the current value
    local Adder = L.Layer:extend("Adder")
    function Adder:init() self.inner = L.Dense { 1, activity_regularizer = "l1", kernel_initializer = "ones" } end
    function Adder:call(x)
      self:add_loss(tide.reduce_sum(x))
      return self.inner(x)
    end
    local a = Adder()
    a(tide.ones { 2, 3 })
    assert.are.equal(2, #a.losses)
    h.close(a.losses[1], { 6 }, 1e-6)
    h.close(a.losses[2], { 0.01 * 6 / 2 }, 1e-6) -- activity: l1 of the output over the batch size
    a(tide.ones { 4, 3 })
    assert.are.equal(2, #a.losses) -- not 4: the call cleared the previous ones
    h.close(a.losses[1], { 12 }, 1e-6)
    h.errors("add_loss expects a tensor", function() a:add_loss(3) end)
  end)

  it("get_weights / set_weights in Keras's order, with shape checks naming the layer and weight", function()
    local d = L.Dense { 2 }
    h.errors("the layer has 0", function() d:set_weights({ tide.ones { 3, 2 } }) end)
    d(tide.ones { 1, 3 })
    d:set_weights({ { { 1, 2 }, { 3, 4 }, { 5, 6 } }, tide.tensor({ 10, 20 }, "float64") })
    assert.are.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, d:get_weights()[1]:totable())
    assert.are.same({ 10, 20 }, d:get_weights()[2]:totable())
    assert.are.same({ { 19, 32 } }, d(tide.ones { 1, 3 }):totable())
    h.errors("Dense 'dense': weight 'dense/kernel' has shape (3, 2), which is not compatible with the value's " ..
      "shape (2, 3)", function() d:set_weights({ tide.ones { 2, 3 }, tide.ones { 2 } }) end)
    h.errors("set_weights was given a list of 1 weight(s), but the layer has 2",
      function() d:set_weights({ tide.ones { 3, 2 } }) end)
    assert.are.same({ 10, 20 }, d.bias:numpy()) -- nothing was set by the failed calls
    assert.are.equal(8, d:count_params())
    h.errors("count_params needs a built layer", function() L.Dense { 1 }:count_params() end)
  end)

  it("get_config / from_config round-trip, also for a subclass without get_config", function()
    local d = L.Dense { 4, activation = "tanh", use_bias = false, kernel_regularizer = tide.regularizers.l1(0.2),
      name = "d", trainable = false, dtype = "float64" }
    local c = d:get_config()
    assert.are.same({ "d", 4, "tanh", false, false, "float64" }, { c.name, c.units, c.activation, c.use_bias,
      c.trainable, c.dtype })
    assert.are.same({ class_name = "L1", config = { l1 = 0.2 } }, c.kernel_regularizer)
    local d2 = L.Dense:from_config(c)
    assert.are.same(c, d2:get_config())
    local S = L.Layer:extend("S")
    function S:init(opts) self.k = opts.k end
    function S:call(x) return x * self.k end
    local s = S { k = 3, name = "s0" }
    assert.are.same({ k = 3, name = "s0", trainable = true, dtype = "float32" }, s:get_config())
    assert.are.equal(3, S:from_config(s:get_config()).k)
  end)

  it("training reaches nested calls unless a call sets its own; a direct call infers", function()
    local seen = {}
    local Probe = L.Layer:extend("Probe")
    function Probe:call(x, opts) seen[#seen + 1] = tostring(opts.training); return x end
    local Outer = L.Layer:extend("Outer")
    function Outer:init() self.a, self.b = Probe(), Probe() end
    function Outer:call(x) return self.b(self.a(x), { training = false }) end
    local o = Outer()
    o(tide.ones { 1 }, { training = true })
    o(tide.ones { 1 })
    assert.are.same({ "true", "false", "nil", "false" }, seen)
  end)

  it("inputs: Lua tables, Variables and other float dtypes become the layer's dtype", function()
    local d = L.Dense { 1, kernel_initializer = "ones" }
    assert.are.equal("float32", d({ { 1, 2 } }).dtype)
    assert.are.equal("float32", d(tide.tensor({ { 1, 2 } }, "float64")).dtype)
    assert.are.equal("float32", d(tide.Variable({ { 1, 2 } })).dtype)
    local d64 = L.Dense { 1, dtype = "float64" }
    assert.are.equal("float64", d64({ { 1, 2 } }).dtype)
  end)

  it("errors: nil input, stray arguments, bad options, bad names", function()
    local d = L.Dense { 2 }
    h.errors("Dense 'dense': called with nil", d, nil)
    h.errors("a layer takes (inputs, {options})", d, tide.ones { 1, 2 }, tide.ones { 1, 2 })
    h.errors("a layer takes (inputs, {options})", d, tide.ones { 1, 2 }, {}, tide.ones { 1, 2 })
    h.errors("must be an options table such as {training = true}", d, tide.ones { 1, 2 }, true)
    h.errors("expected an input of rank >= 2, got shape (3,)", d, tide.ones { 3 })
    d(tide.ones { 1, 2 })
    h.errors("expected axis -1 of the input to have size 2, got shape (1, 4)", d, tide.ones { 1, 4 })
    h.errors("Dense: unknown option 'unit'", L.Dense, { unit = 3 })
    h.errors("Dense: units must be a positive integer, got nil", L.Dense, {})
    h.errors("Dense: activation: unknown activation 'relux'", L.Dense, { 2, activation = "relux" })
    h.errors("name must be a non-empty string without '/'", L.Dense, { 2, name = "a/b" })
    h.errors("Dense: trainable must be true or false", L.Dense, { 2, trainable = "yes" })
    h.errors("Layer:extend: the class needs a name", function() L.Layer:extend() end)
    local NoCall = L.Layer:extend("NoCall")
    h.errors("defines no call", NoCall(), tide.ones { 1 })
    h.errors("unrecognized arguments (units)", function() L.Layer:extend("P")({ units = 2 }) end)
  end)
end)
