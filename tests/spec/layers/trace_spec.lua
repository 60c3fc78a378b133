-- tests/spec/layers/trace_spec.lua — layers inside tide.trace: built during
-- the first trace (their Variables eager, not symbolic), traced equals
-- eager, None dims, moving statistics and dropout at each run, and the
-- error for weights first made on a later trace.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

local function close_fn(f, g, args, tol)
  h.close(f(unpack(args)), g(unpack(args)):totable(), tol or 1e-6)
end

describe("layers in tide.trace", function()
  before_each(function() tide.random.set_seed(11) end)

  it("a layer first called in a trace builds there with eager Variables", function()
    local d = L.Dense { 3, activation = "relu", bias_initializer = "ones" }
    local f = tide.trace(function(x) return d(x) end)
    local x = tide.random.normal { 4, 5 }
    local y = f(x)
    assert.is_true(d.built)
    for _, v in ipairs(d.weights) do
      assert.is_true(tide.is_variable(v))
      local value = v:read_value()
      assert.is_true(tide.is_tensor(value))
      assert.is_true(value:totable() ~= nil) -- eager: readable outside the trace
    end
    h.close(y, d(x):totable(), 1e-6)
    -- weights are read at each run, not baked in
    d:set_weights({ tide.ones { 5, 3 }, tide.zeros { 3 } })
    h.close(f(x), d(x):totable(), 1e-6)
    assert.are.equal(1, f:trace_count())
  end)

  it("traced equals eager for the core, merge and normalization layers, with None batch dims", function()
    tide.config.set_retracing_warning(false) -- one Function per layer, on purpose
    finally(function() tide.config.set_retracing_warning(true) end)
    local sig = { input_signature = { tide.TensorSpec({ tide.None, 4, 6 }) } }
    local x = tide.random.normal { 3, 4, 6 }
    local layers = {
      L.Dense { 5, activation = "gelu" }, L.LayerNormalization(), L.LayerNormalization { axis = { 1, 2 } },
      L.BatchNormalization(), L.Flatten(), L.Reshape { { 6, -1 } }, L.Permute { { 2, 1 } }, L.Activation { "softmax" },
      L.Dropout { 0.3 }, L.Lambda { function(v) return v * 2 + 1 end },
    }
    for _, layer in ipairs(layers) do
      local f = tide.trace(function(v) return layer(v) end, sig)
      close_fn(f, layer, { x }, 1e-5)
      local g = tide.trace(function(v) return layer(v) end) -- known dims
      close_fn(g, layer, { x }, 1e-5)
    end
    local a, b = tide.random.normal { 3, 4 }, tide.random.normal { 3, 4 }
    for _, layer in ipairs { L.Add(), L.Subtract(), L.Multiply(), L.Average(), L.Maximum(), L.Concatenate() } do
      local f = tide.trace(function(p, q) return layer { p, q } end,
        { input_signature = { tide.TensorSpec { shape = { tide.None, 4 } }, tide.TensorSpec { shape = { tide.None, 4 } } } })
      h.close(f(a, b), layer({ a, b }):totable(), 1e-6)
    end
    local img = tide.random.normal { 2, 6, 6, 3 }
    local isig = { input_signature = { tide.TensorSpec({ tide.None, 6, 6, 3 }) } }
    for _, layer in ipairs { L.Conv2D { 4, 3, padding = "same", activation = "relu" }, L.Conv2D { 2, 2, strides = 2 },
                             L.MaxPooling2D(), L.AveragePooling2D { 3, strides = 1, padding = "same" },
                             L.GlobalAveragePooling2D(), L.GlobalMaxPooling2D(), L.ZeroPadding2D(), L.UpSampling2D() } do
      local f = tide.trace(function(v) return layer(v) end, isig)
      h.close(f(img), layer(img):totable(), 1e-5)
    end
    local c1 = L.Conv1D { 3, 2, padding = "causal" }
    local f1 = tide.trace(function(v) return c1(v) end, { input_signature = { tide.TensorSpec({ tide.None, 5, 2 }) } })
    local seq = tide.random.normal { 3, 5, 2 }
    h.close(f1(seq), c1(seq):totable(), 1e-5)
    local e = L.Embedding { 7, 3 }
    local fe = tide.trace(function(ids) return e(ids) end, { input_signature = { tide.TensorSpec({ tide.None }, "int32") } })
    h.close(fe(tide.tensor { 1, 6, 0 }), e(tide.tensor { 1, 6, 0 }):totable(), 0)
  end)

  it("Flatten and Reshape size an unknown batch when the graph runs", function()
    local f = tide.trace(function(v) return L.Flatten()(v), L.Reshape { { -1 } }(v) end,
      { input_signature = { tide.TensorSpec { shape = { tide.None, tide.None, 3 } } } })
    local a, b = f(tide.ones { 2, 5, 3 })
    assert.are.same({ 2, 15 }, a.shape:as_list())
    assert.are.same({ 2, 15 }, b.shape:as_list())
    h.close(b, a:totable(), 0)
  end)

  it("BatchNormalization updates its moving statistics at each traced training call", function()
    local bn = L.BatchNormalization { momentum = 0.5 }
    local step = tide.trace(function(v) return bn(v, { training = true }) end)
    local x = tide.tensor({ { 1, 2 }, { 3, 6 } }, "float32")
    step(x)
    h.close(bn.moving_mean:read_value(), { 1, 2 }, 1e-6)       -- 0 * 0.5 + 2 * 0.5, 0 + 4 * 0.5
    step(x)
    h.close(bn.moving_mean:read_value(), { 1.5, 3 }, 1e-6)
    h.close(bn.moving_variance:read_value(), { 0.5 * (0.5 + 0.5) + 0.5, 0.5 * (0.5 + 2) + 2 }, 1e-6)
    assert.are.equal(1, step:trace_count())
  end)

  it("Dropout draws a new mask at each traced training call and is the identity when inferring", function()
    local d = L.Dropout { 0.5 }
    local f = tide.trace(function(v) return d(v, { training = true }) end)
    local x = tide.ones { 64 }
    local m1, m2 = f(x):totable(), f(x):totable()
    assert.are_not.same(m1, m2)
    for _, v in ipairs(m1) do assert.is_true(v == 0 or v == 2) end
    local g = tide.trace(function(v) return d(v) end)
    assert.are.same(x:totable(), g(x):totable())
  end)

  it("a whole training step (tape, gradients, updates) traces with a layer built inside", function()
    local d = L.Dense { 1, kernel_initializer = "zeros" }
    local x = tide.random.normal { 32, 2 }
    local y = x:matmul(tide.tensor({ { 2 }, { -3 } }, "float32")) + 1
    local step = tide.trace(function(xb, yb)
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_mean((d(xb) - yb) ^ 2) end)
      local grads = tape:gradient(loss, d.trainable_weights)
      for i, v in ipairs(d.trainable_weights) do v:assign_sub(grads[i] * 0.1) end
      return loss
    end)
    for _ = 1, 200 do step(x, y) end
    h.close(d.kernel:read_value(), { { 2 }, { -3 } }, 1e-3)
    h.close(d.bias:read_value(), { 1 }, 1e-3)
    assert.are.equal(1, step:trace_count())
  end)

  it("weights first made on a later trace of a function are an error naming the fix", function()
    local d = L.Dense { 2 }
    local f = tide.trace(function(x, use) if use then return d(x) end return x end)
    f(tide.ones { 1, 3 }, false)
    h.errors("created while", f, tide.ones { 1, 3 }, true)
    assert.is_false(d.built) -- the failed build left the layer unbuilt, to be built again
    d(tide.ones { 1, 3 })
    assert.is_true(d.built)
    assert.are.equal(2, #d.weights)
    -- a build that fails half way forgets the weights it made
    local Half = L.Layer:extend("Half")
    local fail = true
    function Half:build()
      self.a = self:add_weight { name = "a", shape = { 2 } }
      if fail then error("build failed") end
      self:add_weight { name = "b", shape = { 2 } }
    end
    function Half:call(x) return x end
    local half = Half()
    h.errors("build failed", half, tide.ones { 2 })
    fail = false
    half(tide.ones { 2 })
    assert.are.same({ "half/a", "half/b" }, { half.weights[1].name, half.weights[2].name })
    assert.are.equal(2, #half.weights)
  end)
end)
