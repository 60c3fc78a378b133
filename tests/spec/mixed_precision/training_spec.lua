-- tests/spec/mixed_precision/training_spec.lua — a small MLP and a small CNN trained
-- with fit under mixed_bfloat16 and mixed_float16 on the CPU reach about the float32
-- model's accuracy (traced train steps, and run_eagerly), with float32 weights throughout.
local tide = require "tide"
local mp = tide.mixed_precision
local L = tide.layers

-- Three classes of 4-d points around three centres (separable, with noise).
local function points(n, seed)
  local r = tide.random.normal({ n, 4 }, { seed = seed }):totable()
  local xs, ys = {}, {}
  for i = 1, n do
    local c = i % 3
    xs[i] = { r[i][1] * 0.6 + c, r[i][2] * 0.6 - c, r[i][3] * 0.6 + (c == 1 and 2 or 0), r[i][4] }
    ys[i] = c
  end
  return tide.tensor(xs, "float32"), tide.tensor(ys, "int32")
end

local x, y = points(600, 11)
local xv, yv = points(300, 12)

local function mlp()
  return tide.Sequential { tide.Input { shape = { 4 } }, L.Dense { 32, activation = "relu" },
    L.BatchNormalization {}, L.Dense { 3 }, L.Activation { "softmax", dtype = "float32" } }
end

-- Validation accuracy after training the model `make` gives under `policy`.
local function accuracy(policy, make, opts)
  mp.set_global_policy(policy)
  tide.random.set_seed(5)
  local m = make()
  m:compile { optimizer = tide.optimizers.Adam { learning_rate = 0.02 }, loss = "sparse_categorical_crossentropy",
    metrics = { "accuracy" }, run_eagerly = opts and opts.eager }
  m:fit(opts and opts.x or x, opts and opts.y or y, { epochs = opts and opts.epochs or 6, batch_size = 32,
    verbose = 0 })
  mp.set_global_policy(nil)
  for _, v in ipairs(m.weights) do assert.are.equal("float32", v.dtype) end
  local r = m:evaluate(opts and opts.xv or xv, opts and opts.yv or yv, { verbose = 0, return_dict = true })
  return r.accuracy, m
end

describe("training under a mixed policy", function()
  after_each(function() mp.set_global_policy(nil) end)

  it("reaches the float32 MLP's accuracy under mixed_bfloat16 and mixed_float16", function()
    local base = accuracy("float32", mlp)
    assert.is_true(base > 0.9, "float32 accuracy " .. base)
    for _, policy in ipairs { "mixed_bfloat16", "mixed_float16" } do
      local acc, m = accuracy(policy, mlp)
      assert.is_true(acc >= base - 0.03, string.format("%s: accuracy %.3f, float32 %.3f", policy, acc, base))
      assert.are.equal(mp.Policy(policy).compute_dtype, m.layers[1].compute_dtype)
      if policy == "mixed_float16" then
        assert.are.equal("LossScaleOptimizer", m.optimizer.__name)
        assert.is_true(m.optimizer.iterations:item() > 0)
      end
    end
  end)

  it("trains run_eagerly too (the scale's choice as plain Lua)", function()
    local acc = accuracy("mixed_float16", mlp, { eager = true, epochs = 3 })
    assert.is_true(acc > 0.85, "accuracy " .. acc)
  end)

  it("trains a small CNN under mixed_bfloat16 like float32", function()
    -- 8x8 one-channel images: a bright row (class 0), column (1) or diagonal (2), plus noise
    local n = 240
    local noise = tide.random.uniform({ n, 8, 8, 1 }, { seed = 4, maxval = 0.3 }):totable()
    local ys = {}
    for i = 1, n do
      local c = i % 3
      ys[i] = c
      for k = 1, 8 do
        local r, col = 4, 4
        if c == 0 then col = k elseif c == 1 then r = k else r, col = k, k end
        noise[i][r][col][1] = noise[i][r][col][1] + 1
      end
    end
    local imgs, labels = tide.tensor(noise, "float32"), tide.tensor(ys, "int32")
    local function cnn()
      return tide.Sequential { tide.Input { shape = { 8, 8, 1 } }, L.Conv2D { 4, 3, activation = "relu" },
        L.MaxPooling2D { 2 }, L.Flatten {}, L.Dense { 3 }, L.Activation { "softmax", dtype = "float32" } }
    end
    local opts = { x = imgs, y = labels, xv = imgs, yv = labels, epochs = 8 }
    local base = accuracy("float32", cnn, opts)
    local acc = accuracy("mixed_bfloat16", cnn, opts)
    assert.is_true(base > 0.9, "float32 accuracy " .. base)
    assert.is_true(acc >= base - 0.05, string.format("mixed_bfloat16 accuracy %.3f, float32 %.3f", acc, base))
  end)
end)
