-- tests/spec/mixed_precision/policy_spec.lua — tide.mixed_precision's dtype policies:
-- names and dtypes, the global policy, layers' variable and output dtypes,
-- autocast of inputs and variables (and where it stops), per-layer overrides,
-- BatchNormalization/LayerNormalization in float32, configs, and the errors.
local tide = require "tide"
local h = require "helpers"
local mp = tide.mixed_precision
local L = tide.layers

local function f32(t) return tide.tensor(t, "float32") end

describe("tide.mixed_precision.Policy", function()
  after_each(function() mp.set_global_policy(nil) end)

  it("names a compute and a variable dtype", function()
    local p = mp.Policy("mixed_float16")
    assert.are.same({ "mixed_float16", "float16", "float32" }, { p.name, p.compute_dtype, p.variable_dtype })
    p = mp.Policy("mixed_bfloat16")
    assert.are.same({ "mixed_bfloat16", "bfloat16", "float32" }, { p.name, p.compute_dtype, p.variable_dtype })
    p = mp.Policy("float64")
    assert.are.same({ "float64", "float64", "float64" }, { p.name, p.compute_dtype, p.variable_dtype })
    assert.are.equal("float16", mp.Policy("half").name) -- an alias is named by its dtype
    assert.are.equal('<DTypePolicy "mixed_float16">', tostring(mp.Policy("mixed_float16")))
    assert.is_true(mp.Policy("mixed_float16") == mp.DTypePolicy("mixed_float16"))
    assert.is_false(mp.Policy("mixed_float16") == mp.Policy("float16"))
    assert.are.same({ name = "mixed_bfloat16" }, mp.Policy("mixed_bfloat16"):get_config())
    assert.are.equal("mixed_bfloat16", mp.Policy.from_config { name = "mixed_bfloat16" }.name)
    assert.are.equal("float16", mp.Policy:from_config({ name = "float16" }).name)
  end)

  it("refuses what is not a policy", function()
    h.errors("cannot make a dtype policy from 'mixed_float32'", mp.Policy, "mixed_float32")
    h.errors("cannot make a dtype policy from 'string'", mp.Policy, "string")
    h.errors("the policy name must be a string", mp.Policy, 16)
    h.errors("set_global_policy: expects a policy name", mp.set_global_policy, 3)
    h.errors("Dense: dtype: cannot make a dtype policy from 'mixed_int8'", function() return L.Dense { 2, dtype = "mixed_int8" } end)
    h.errors("expected a dtype name, a policy name", mp.get, { class_name = "Other" })
  end)

  it("has a global policy, float32 until set, that new layers take", function()
    assert.are.equal("float32", mp.global_policy().name)
    mp.set_global_policy("mixed_float16")
    assert.are.equal("mixed_float16", mp.global_policy().name)
    assert.are.equal("mixed_float16", mp.Policy().name) -- Policy() is the global one's name
    local d = L.Dense { 3 }
    mp.set_global_policy(mp.Policy("float32"))
    local e = L.Dense { 3 }
    assert.are.equal("mixed_float16", d.dtype_policy.name) -- made earlier: kept
    assert.are.equal("float32", e.dtype_policy.name)
    assert.are.equal(mp.global_policy, mp.dtype_policy)
    assert.are.equal(mp.set_global_policy, mp.set_dtype_policy)
    assert.are.equal(tide.optimizers.LossScaleOptimizer, mp.LossScaleOptimizer)
  end)
end)

describe("a layer under a mixed policy", function()
  after_each(function() mp.set_global_policy(nil) end)

  it("keeps float32 variables and computes in the half dtype", function()
    for _, name in ipairs { "mixed_float16", "mixed_bfloat16" } do
      local half = mp.Policy(name).compute_dtype
      local d = L.Dense { 4, activation = "relu", dtype = name }
      assert.are.same({ "float32", half, "float32" }, { d.dtype, d.compute_dtype, d.variable_dtype })
      local y = d(f32 { { 1, 2, 3 } })
      assert.are.equal(half, y.dtype)
      assert.are.equal("float32", d.kernel.dtype)
      assert.are.equal("float32", d.bias.dtype)
      -- the value is the float32 layer's, rounded through the half dtype
      local want = tide.relu(tide.matmul(f32 { { 1, 2, 3 } }:cast(half), d.kernel:read_value():cast(half))
        + d.bias:read_value():cast(half))
      h.close(y, want, 0)
      -- variables read outside call are float32
      assert.are.equal("float32", d.kernel:read_value().dtype)
      assert.is_nil(require("tide.variable").autocast_dtype())
    end
  end)

  it("gives float32 gradients for its float32 variables", function()
    local d = L.Dense { 2, dtype = "mixed_bfloat16" }
    local x = f32 { { 1, -2 }, { 0.5, 3 } }
    d(x)
    local tape = tide.GradientTape()
    local loss = tape:run(function() return tide.reduce_sum(d(x):cast("float32")) end)
    local g = tape:gradient(loss, d.trainable_weights)
    assert.are.equal("float32", g[1].dtype)
    assert.are.equal("float32", g[2].dtype)
    -- d(sum(x @ k + b))/dk = column sums of x (exact in bfloat16 here)
    h.close(g[1], { { 1.5, 1.5 }, { 1, 1 } }, 0)
    h.close(g[2], { 2, 2 }, 0)
  end)

  it("casts float inputs to the compute dtype, and leaves ints alone", function()
    local d = L.Dense { 2, dtype = "mixed_float16" }
    assert.are.equal("float16", d(tide.tensor({ { 1, 2 } }, "float64")).dtype)
    assert.are.equal("float16", d({ { 1, 2 } }).dtype) -- a Lua table
    local e = L.Embedding { 5, 2, dtype = "mixed_float16" }
    local y = e(tide.tensor { { 1, 4 } })
    assert.are.equal("float16", y.dtype)
    assert.are.equal("float32", e.embeddings.dtype)
    local off = L.Dense { 2, dtype = "mixed_float16", autocast = false } -- no casting at all
    assert.are.equal("float32", off(f32 { { 1, 2 } }).dtype)
  end)

  it("reads autocast = false variables in their own dtype inside call", function()
    local Probe = L.Layer:extend("AutocastProbe")
    function Probe:build()
      self.a = self:add_weight { name = "a", shape = { 2 }, initializer = "ones" }
      self.b = self:add_weight { name = "b", shape = { 2 }, initializer = "ones", autocast = false }
      self.n = self:add_weight { name = "n", shape = { 2 }, dtype = "int32", initializer = "zeros" }
    end
    function Probe:call(x)
      self.seen = { tide.identity(self.a).dtype, tide.identity(self.b).dtype, tide.identity(self.n).dtype }
      return x
    end
    local p = Probe { dtype = "mixed_bfloat16" }
    p(f32 { { 1, 2 } })
    assert.are.same({ "bfloat16", "float32", "int32" }, p.seen)
    assert.is_false(p.b.autocast)
    assert.is_true(p.a.autocast)
    -- a layer of another compute dtype inside it reads in its own
    local Outer = L.Layer:extend("AutocastOuter")
    function Outer:init() self.inner = Probe { dtype = "float32" } end
    function Outer:call(x) return self.inner(x) end
    local o = Outer { dtype = "mixed_float16" }
    o(f32 { { 1, 2 } })
    assert.are.same({ "float32", "float32", "int32" }, o.inner.seen)
  end)

  it("lets a float32 output layer end a mixed model (Keras's softmax advice)", function()
    mp.set_global_policy("mixed_float16")
    local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 8, activation = "relu" }, L.Dense { 2 },
      L.Activation { "softmax", dtype = "float32" } }
    local y = m(f32 { { 1, 2, 3 }, { -1, 0, 1 } })
    assert.are.equal("float32", y.dtype)
    h.close(tide.reduce_sum(y, 1), { 1, 1 }, 1e-6)
    assert.are.equal("mixed_float16", m.dtype_policy.name)
    assert.are.equal("float16", m.layers[1].compute_dtype)
    assert.are.equal("float32", m.layers[3].compute_dtype)
    -- the functional form: KerasTensors carry the dtypes a call gives
    local inp = tide.Input { shape = { 3 } }
    assert.are.equal("float32", inp.dtype) -- inputs stay float32
    local hdn = L.Dense { 4 }(inp)
    assert.are.equal("float16", hdn.dtype)
    local out = L.Activation { "softmax", dtype = "float32" }(L.Dense { 2 }(hdn))
    assert.are.equal("float32", out.dtype)
    local fm = tide.Model { inputs = inp, outputs = out }
    assert.are.equal("float32", fm(f32 { { 1, 2, 3 } }).dtype)
  end)

  it("normalizes half inputs in float32 in BatchNormalization and LayerNormalization", function()
    local x = tide.tensor({ { 1000, 1 }, { 1010, 2 }, { 1020, 3 }, { 1030, 4 } }, "float32")
    for _, name in ipairs { "mixed_float16", "mixed_bfloat16" } do
      local half = mp.Policy(name).compute_dtype
      local bn = L.BatchNormalization { dtype = name }
      local ref = L.BatchNormalization {}
      local y, want = bn(x, { training = true }), ref(x:cast(half):cast("float32"), { training = true })
      assert.are.equal(half, y.dtype)
      for _, v in ipairs(bn.weights) do assert.are.equal("float32", v.dtype) end
      h.close(y:cast("float32"), want:cast(half):cast("float32"), 0)
      h.close(bn.moving_mean:read_value(), ref.moving_mean:read_value(), 1e-6)
      h.close(bn.moving_variance:read_value(), ref.moving_variance:read_value(), 1e-6)
      assert.are.equal(half, bn(x).dtype) -- inference too
      local ln, lref = L.LayerNormalization { dtype = name }, L.LayerNormalization {}
      local z = ln(x)
      assert.are.equal(half, z.dtype)
      h.close(z:cast("float32"), lref(x:cast(half):cast("float32")):cast(half):cast("float32"), 0)
    end
  end)

  it("runs recurrent layers in the compute dtype, stateful ones keeping float32 states", function()
    for _, cls in ipairs { "SimpleRNN", "LSTM", "GRU" } do
      local r = L[cls] { 4, stateful = true, dtype = "mixed_bfloat16" }
      local x = tide.random.normal({ 2, 5, 3 }, { seed = 1 })
      local y1 = r(x)
      local s1 = r.states[1]:read_value()
      local y2 = r(x)
      assert.are.same({ "bfloat16", "bfloat16", "float32" }, { y1.dtype, y2.dtype, r.states[1].dtype })
      assert.is_false(pcall(h.close, s1, r.states[1]:read_value(), 0)) -- the second call moved on from the first's state
      local cell = L[cls .. "Cell"] { 4, dtype = "mixed_float16" }
      assert.are.equal("float16", cell:get_initial_state(2)[1].dtype)
    end
  end)

  it("is written in get_config and read back by from_config", function()
    local d = L.Dense { 2, dtype = "mixed_bfloat16" }
    local c = d:get_config()
    assert.are.same({ class_name = "DTypePolicy", config = { name = "mixed_bfloat16" } }, c.dtype)
    local back = L.Dense:from_config(c)
    assert.are.equal("mixed_bfloat16", back.dtype_policy.name)
    assert.are.equal("float64", L.Dense { 2, dtype = "float64" }:get_config().dtype) -- a plain dtype: its name
    assert.are.equal("float32", L.Dense { 2 }:get_config().dtype)
    -- a policy object, and setting one
    local e = L.Dense { 2, dtype = mp.Policy("mixed_float16") }
    assert.are.equal("float16", e.compute_dtype)
    e.dtype_policy = "float64"
    assert.are.same({ "float64", "float64" }, { e.dtype, e.compute_dtype })
    -- a whole model round trip keeps each layer's policy
    mp.set_global_policy("mixed_float16")
    local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 4 }, L.Dense { 2, dtype = "float32" } }
    mp.set_global_policy(nil)
    local m2 = tide.Sequential:from_config(m:get_config())
    assert.are.equal("mixed_float16", m2.layers[1].dtype_policy.name)
    assert.are.equal("float32", m2.layers[2].dtype_policy.name)
    assert.are.equal("float16", m2.layers[1](f32 { { 1, 2, 3 } }).dtype)
  end)

  it("works in a traced call", function()
    local d = L.Dense { 3, dtype = "mixed_bfloat16" }
    local x = f32 { { 1, 2 }, { 3, 4 } }
    local eager = d(x)
    local f = tide.trace(function(v) return d(v) end)
    local traced = f(x)
    assert.are.equal("bfloat16", traced.dtype)
    h.close(traced, eager, 0)
    assert.truthy(f:get_concrete_function(x):graph_text():find("cast(", 1, true))
  end)
end)
