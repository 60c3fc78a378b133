-- tests/spec/mixed_precision/keras_values_spec.lua — tide against Keras 3's own
-- mixed-precision values (tests/fixtures/mixed_precision/keras_values.lua, made by gen.py
-- there): Dense and BatchNormalization under mixed_float16 and mixed_bfloat16, a float32
-- softmax after a float16 layer, policies, and LossScaleOptimizer's steps.
local tide = require "tide"
local h = require "helpers"
local mp = tide.mixed_precision
local L = tide.layers
local K = dofile("tests/fixtures/mixed_precision/keras_values.lua")

local function f32(t) return tide.tensor(t, "float32") end

-- One unit in the last place of the half dtype, relative (TF's and tide's
-- float32 sums may round to neighbouring half values).
local ULP = { float16 = 2 ^ -10, bfloat16 = 2 ^ -7, float32 = 1e-6 }

describe("mixed precision against Keras 3", function()
  after_each(function() mp.set_global_policy(nil) end)

  it("names the same dtypes for each policy", function()
    for name, want in pairs(K.policies) do
      local p = mp.Policy(name)
      assert.are.same({ want.compute, want.variable }, { p.compute_dtype, p.variable_dtype })
    end
    assert.are.equal(K.dense_config_dtype, L.Dense { 2, dtype = "mixed_bfloat16" }:get_config().dtype.config.name)
  end)

  it("gives Keras's Dense outputs and float32 gradients", function()
    for policy, want in pairs(K.dense) do
      local d = L.Dense { 5, activation = "relu", dtype = policy }
      d(tide.zeros({ 1, 4 }))
      d.kernel:assign(f32(K.kernel))
      d.bias:assign(f32(K.bias))
      local tape = tide.GradientTape()
      local y, loss = tape:run(function()
        local out = d(f32(K.x))
        return out, tide.reduce_sum(out:cast("float32") * f32(K.w))
      end)
      local g = tape:gradient(loss, { d.kernel, d.bias })
      assert.are.equal(want.dtype, y.dtype)
      assert.are.equal(want.kernel_dtype, d.kernel.dtype)
      assert.are.equal(want.grad_dtype, g[1].dtype)
      local tol = ULP[want.dtype]
      h.close(y:cast("float32"), want.y, tol)
      h.close(g[1], want.grad_kernel, 2 * tol)
      h.close(g[2], want.grad_bias, 2 * tol)
    end
  end)

  it("gives Keras's BatchNormalization outputs and moving statistics", function()
    for policy, want in pairs(K.batchnorm) do
      local bn = L.BatchNormalization { dtype = policy }
      local y = bn(f32(K.bn_x), { training = true })
      local z = bn(f32(K.bn_x), { training = false })
      assert.are.equal(want.dtype, y.dtype)
      h.close(y:cast("float32"), want.y, ULP[want.dtype])
      h.close(z:cast("float32"), want.z, ULP[want.dtype])
      h.close(bn.moving_mean:read_value(), want.moving_mean, 1e-6)
      h.close(bn.moving_variance:read_value(), want.moving_variance, 1e-5)
    end
  end)

  it("ends a mixed_float16 stack with Keras's float32 softmax", function()
    mp.set_global_policy("mixed_float16")
    local d = L.Dense { 5 }
    d(tide.zeros({ 1, 4 }))
    d.kernel:assign(f32(K.kernel))
    d.bias:assign(f32(K.bias))
    local hdn = d(f32(K.x))
    local y = L.Activation { "softmax", dtype = "float32" }(hdn)
    assert.are.same({ K.softmax_f32.hidden_dtype, K.softmax_f32.dtype }, { hdn.dtype, y.dtype })
    h.close(y, K.softmax_f32.y, 1e-6)
  end)

  it("scales, skips and grows as Keras's LossScaleOptimizer, step by step", function()
    local w = tide.Variable({ 1, 2 }, { name = "w" })
    local opt = tide.optimizers.LossScaleOptimizer(tide.optimizers.SGD { learning_rate = 0.1, momentum = 0.9 },
      { initial_scale = 64, dynamic_growth_steps = 2 })
    for i, g in ipairs(K.loss_scale.grads) do
      opt:apply({ f32(g) }, { w })
      local want = K.loss_scale.steps[i]
      local what = "step " .. i
      assert(opt.dynamic_scale:item() == want.scale, what .. ": scale " .. opt.dynamic_scale:item())
      assert(opt.step_counter:item() == want.counter, what .. ": counter")
      assert(opt.iterations:item() == want.iterations, what .. ": iterations")
      h.close(w:read_value(), want.w, 1e-6)
    end
  end)
end)
