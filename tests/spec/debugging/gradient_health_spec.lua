-- tests/spec/debugging/gradient_health_spec.lua — gradient health: per-layer
-- norms, the vanishing/exploding rule on deliberately deep MLPs (sigmoid:
-- vanishing; linear with large weights: exploding; ReLU with He: healthy),
-- TensorBoard logging, the GradientHealth callback in fit, and errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local reader = require "event_reader"
local ffi = require "ffi"

local D = tide.debugging

local function mlp(depth, opts)
  local layers = { tide.Input { shape = { 16 } } }
  for _ = 1, depth do layers[#layers + 1] = tide.layers.Dense { 16, activation = opts.activation,
    kernel_initializer = opts.init } end
  layers[#layers + 1] = tide.layers.Dense { 1, name = "out_" .. depth .. (opts.activation or "linear") }
  local m = tide.Sequential(layers)
  m:compile { optimizer = tide.optimizers.SGD { learning_rate = opts.lr or 1e-9 }, loss = "mse" }
  return m
end

local x = tide.random.normal({ 64, 16 }, { seed = 3 })
local y = tide.random.normal({ 64, 1 }, { seed = 4 })

local function grads_of(m)
  local tape = tide.GradientTape()
  local loss = tape:run(function() return m:compute_loss(x, y, m(x, { training = true })) end)
  return tape:gradient(loss, m.trainable_weights)
end

local stderr_of = h.stderr_of

local function f32(v) return ffi.new("float[1]", v)[0] end

describe("gradient health", function()
  local tmpdir, remove_tmpdirs = tmp.dirs("gradhealth")
  teardown(remove_tmpdirs)
  before_each(function() tide.random.set_seed(11) end) -- the layers' initial weights

  it("finds gradients vanishing through a deep sigmoid MLP and names the layer and remedies", function()
    local m = mlp(12, { activation = "sigmoid" })
    local report
    local said = stderr_of(function() report = D.gradient_health(grads_of(m), m) end)
    assert.are.equal("vanishing", report.status)
    assert.are.equal(13, #report.layers)
    assert.are.equal(m.layers[1].name, report.layers[1].name)
    assert.is_true(report.layers[1].norm < 1e-3 * report.layers[13].norm)
    local msg = report.message
    assert.truthy(msg:find("gradients vanish toward the input: layer '" .. m.layers[1].name .. "'", 1, true), msg)
    assert.truthy(msg:find("last layer 'out_12sigmoid'", 1, true), msg)
    for _, remedy in ipairs { "ReLU", "initializers", "BatchNormalization", "residual" } do
      assert.truthy(msg:find(remedy, 1, true), remedy)
    end
    assert.are.equal(msg .. "\n", said)
  end)

  it("finds gradients exploding through a deep MLP with large weights", function()
    local m = mlp(12, { init = tide.initializers.RandomNormal { stddev = 1.0, seed = 7 } })
    local report = D.gradient_health(grads_of(m), m, { warn = false })
    assert.are.equal("exploding", report.status)
    assert.truthy(report.message:find("gradients explode", 1, true), report.message)
    assert.truthy(report.message:find(m.layers[1].name, 1, true), report.message)
    for _, remedy in ipairs { "clipnorm", "learning rate", "initializers" } do
      assert.truthy(report.message:find(remedy, 1, true), remedy)
    end
    -- a non-finite norm is exploding too, whatever the ratio
    local g = grads_of(m)
    g[1] = g[1] * (1 / 0)
    local r = D.gradient_health(g, m, { warn = false })
    assert.are.equal("exploding", r.status)
    assert.truthy(r.message:find("not finite", 1, true), r.message)
  end)

  it("reports a shallow ReLU MLP with He initialization healthy, and honours the thresholds", function()
    local m = mlp(3, { activation = "relu", init = "he_normal" })
    local g = grads_of(m)
    local said = stderr_of(function()
      local r = D.gradient_health(g, m)
      assert.are.equal("ok", r.status)
      assert.is_nil(r.message)
    end)
    assert.are.equal("", said)
    -- the norms are the layers' gradients' L2 norms (kernel and bias together)
    local r = D.gradient_health(g, m, { warn = false })
    local k, b = g[1], g[2]
    local want = math.sqrt(tide.reduce_sum(k * k):item() + tide.reduce_sum(b * b):item())
    assert.is_true(math.abs(r.layers[1].norm - want) < 1e-4 * want)
    -- thresholds tight enough flag it
    assert.are.equal("exploding", D.gradient_health(g, m, { warn = false, max_norm = 1e-9 }).status)
    assert.are.equal("vanishing", D.gradient_health(g, m, { warn = false, vanish_ratio = 1e9 }).status)
    -- a layer's norm below min_norm while the last layer's is not (the ratio rule kept out of it)
    local tiny = { g[1], g[2], g[3] * 1e-12, g[4] * 1e-12, g[5], g[6], g[7], g[8] }
    local rt = D.gradient_health(tiny, m, { warn = false, vanish_ratio = 1e-30 })
    assert.are.equal("vanishing", rt.status)
    assert.truthy(rt.message:find("layer '" .. m.layers[2].name .. "' has gradient norm", 1, true), rt.message)
    assert.truthy(rt.message:find("below min_norm", 1, true), rt.message)
  end)

  it("groups a custom loop's variables by layer name and logs norms to TensorBoard", function()
    local dir = tmpdir()
    local m = mlp(2, { activation = "tanh" })
    local g = grads_of(m)
    local w = tide.summary.create_file_writer(dir)
    local r = D.gradient_health(g, m.trainable_weights, { writer = w, step = 7, warn = false })
    w:close()
    assert.are.equal(3, #r.layers)
    assert.are.equal(m.layers[1].name, r.layers[1].name)
    local seen = 0
    for _, f in ipairs(reader.files(dir)) do
      for _, e in ipairs(reader.read(f)) do
        for _, v in ipairs(e.values) do
          local name = v.tag:match("^gradient_norm/(.*)$")
          if name then
            seen = seen + 1
            assert.are.equal(7, e.step)
            local l
            for _, cand in ipairs(r.layers) do if cand.name == name then l = cand end end
            assert.is_not_nil(l, v.tag)
            assert.are.equal(f32(l.norm), reader.as_float(v.tensor.content))
          end
        end
      end
    end
    assert.are.equal(3, seen)
  end)

  it("runs as a fit callback every freq batches, warning once and logging to log_dir/train", function()
    local dir = tmpdir()
    local m = mlp(12, { activation = "sigmoid" })
    local cb = tide.callbacks.GradientHealth { data = { x, y }, log_dir = dir, freq = 2 }
    local said = stderr_of(function()
      m:fit(x, y, { epochs = 2, batch_size = 16, verbose = 0, callbacks = { cb } })
    end)
    assert.are.equal(4, #cb.reports) -- 8 batches, every second one
    assert.are.same({ 2, 4, 6, 8 }, { cb.reports[1].step, cb.reports[2].step, cb.reports[3].step, cb.reports[4].step })
    for _, r in ipairs(cb.reports) do assert.are.equal("vanishing", r.status) end
    local _, count = said:gsub("GradientHealth: gradients vanish", "")
    assert.are.equal(1, count)
    local tags = {}
    for _, f in ipairs(reader.files(dir .. "/train")) do
      for _, e in ipairs(reader.read(f)) do
        for _, v in ipairs(e.values) do tags[v.tag] = (tags[v.tag] or 0) + 1 end
      end
    end
    assert.are.equal(4, tags["gradient_norm/" .. m.layers[1].name])
    -- once an epoch by default, with no log_dir nothing written
    local cb2 = tide.callbacks.GradientHealth { data = { x, y }, warn = false }
    m:fit(x, y, { epochs = 2, batch_size = 32, verbose = 0, callbacks = { cb2 } })
    assert.are.equal(2, #cb2.reports)
  end)

  it("without a probe batch judges fit's own step: the traced step records each layer's norm", function()
    for _, scaled in ipairs { false, true } do
      tide.random.set_seed(11)
      local m = mlp(3, { activation = "sigmoid" })
      if scaled then -- the recorded norms are of the unscaled gradients
        m:compile { optimizer = tide.mixed_precision.LossScaleOptimizer(tide.optimizers.SGD { learning_rate = 1e-9 }),
          loss = "mse" }
      end
      local want = D.gradient_health(grads_of(m), m, { writer = false }).layers -- at the initial weights
      local cb = tide.callbacks.GradientHealth { warn = false }
      -- one batch of all 64 rows: the step's gradients are those at the initial weights
      m:fit(x, y, { epochs = 1, batch_size = 64, shuffle = false, verbose = 0, callbacks = { cb } })
      assert.are.equal(1, #cb.reports)
      local got = cb.reports[1].layers
      assert.are.equal(#want, #got)
      for i, l in ipairs(want) do
        assert.are.equal(l.name, got[i].name)
        assert.is_true(math.abs(got[i].norm - l.norm) <= 1e-5 * l.norm, ("%s: %g vs %g"):format(l.name, got[i].norm, l.norm))
      end
      assert.is_nil(rawget(m, "_gradient_norms")) -- fit without the callback records nothing
      local traced = m.train_function
      m:fit(x, y, { epochs = 1, batch_size = 64, verbose = 0 })
      assert.are_not.equal(traced, m.train_function)
    end
  end)

  it("refuses bad arguments", function()
    local m = mlp(1, {})
    local g = grads_of(m)
    h.errors("grads must be a list", D.gradient_health, nil, m)
    h.errors("expects the variables", D.gradient_health, g, 3)
    h.errors("3 gradients for 4 variables", D.gradient_health, { g[1], g[2], g[3] }, m)
    h.errors("unknown option 'treshold'", D.gradient_health, g, m, { treshold = 1 })
    h.errors("max_norm must be a positive number", D.gradient_health, g, m, { max_norm = -1 })
    h.errors("data must be a probe batch", tide.callbacks.GradientHealth, { data = 3 })
    h.errors("freq must be", tide.callbacks.GradientHealth, { data = { x, y }, freq = 0 })
    h.errors("unknown option 'logdir'", tide.callbacks.GradientHealth, { data = { x, y }, logdir = "x" })
    h.errors("expects a table", tide.callbacks.GradientHealth, "x")
  end)
end)
