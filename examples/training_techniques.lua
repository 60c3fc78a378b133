-- examples/training_techniques.lua — the training techniques of TF's guides, one
-- section each: gradient accumulation, gradient checkpointing, mixed precision,
-- the profiler, jit_compile, eager debugging, check_numerics and shape asserts.
--   build/tide examples/training_techniques.lua [--fast]
-- Each section asserts what it shows; --fast (tests/sh/test_examples.sh) makes
-- the recompute stack smaller. docs/techniques.md sets TF's code beside each.
local tide = require "tide"
local L = tide.layers

local FAST = false
for _, a in ipairs(arg or {}) do
  if a == "--fast" then FAST = true else error("training_techniques: unknown argument '" .. a .. "' (expected --fast)", 0) end
end

local function check(ok, what)
  if not ok then error("training_techniques: " .. what, 2) end
end

local function max_diff(a, b)
  return tide.reduce_max(tide.abs(tide.cast(a, "float64") - tide.cast(b, "float64"))):item()
end

local function tmpdir(name)
  local d = os.tmpname()
  os.remove(d)
  d = d .. "_" .. name
  assert(os.execute("mkdir -p '" .. d .. "'"))
  return d
end

-- Tiny regression data: 8 rows split in N = 4 micro-batches of 2.
tide.random.set_seed(7)
local X = tide.random.normal { 8, 3 }
local Y = tide.random.normal { 8, 1 }
local N, MICRO = 4, 2

local function linear()
  local m = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 1, kernel_initializer = "ones" } }
  return m
end

----------------------------------------------------------------------------
-- 1. Gradient accumulation
----------------------------------------------------------------------------
print("== 1. gradient accumulation")

-- (a) One SGD step on the whole batch: the reference.
local big = linear()
big:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 }, loss = "mse" }
big:fit(X, Y, { batch_size = 8, epochs = 1, shuffle = false, verbose = 0 })

-- (b) A subclassed Model whose train_step adds each micro-batch's gradients
-- (divided by N: the mean loss of the big batch is the mean of the N means)
-- into Variables and applies them on every N-th step. The branch is a
-- tide.cond, since the step is traced.
local Accum = tide.Model:extend("Accum")
function Accum:init(opts)
  self.steps = opts.steps
  self.d = L.Dense { 1, kernel_initializer = "ones" }
end
function Accum:call(x) return self.d(x) end
function Accum:train_step(data)
  local x, y = data[1], data[2]
  local vars = self.trainable_weights
  if not self.acc then -- made at the first trace, outside the graph
    self.acc = {}
    for i, v in ipairs(vars) do self.acc[i] = tide.Variable(tide.zeros_like(v), { trainable = false }) end
    self.count = tide.Variable(0, { trainable = false })
  end
  local tape = tide.GradientTape()
  local loss = tape:run(function() return tide.reduce_mean(tide.square(self(x) - y)) end)
  local grads = tape:gradient(loss, vars)
  for i, g in ipairs(grads) do self.acc[i]:assign_add(g / self.steps) end
  self.count:assign_add(1)
  tide.cond(tide.equal(self.count % self.steps, 0), function()
    local summed = {}
    for i, a in ipairs(self.acc) do summed[i] = a:read_value() end
    self.optimizer:apply(summed, vars)
    for _, a in ipairs(self.acc) do a:assign(tide.zeros_like(a)) end
    return tide.constant(0)
  end, function() return tide.constant(0) end)
  return { loss = loss }
end
local custom = Accum { steps = N }
custom:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 } }
custom:fit(X, Y, { batch_size = MICRO, epochs = 1, shuffle = false, verbose = 0 })

-- (c) Keras 3's optimizer option: the same, with compile/fit unchanged.
local keras3 = linear()
keras3:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1, gradient_accumulation_steps = N }, loss = "mse" }
keras3:fit(X, Y, { batch_size = MICRO, epochs = 1, shuffle = false, verbose = 0 })

local d_custom = max_diff(custom.d.kernel, big.layers[1].kernel)
local d_keras3 = max_diff(keras3.layers[1].kernel, big.layers[1].kernel)
print(string.format("kernel vs one big-batch step: custom train_step %.2e, gradient_accumulation_steps %.2e",
  d_custom, d_keras3))
check(max_diff(big.layers[1].kernel, tide.ones { 3, 1 }) > 1e-3, "the big-batch step did not move the kernel")
check(d_custom < 1e-6, "the custom train_step's accumulation differs from one big-batch step")
check(d_keras3 < 1e-6, "gradient_accumulation_steps differs from one big-batch step")
check(max_diff(custom.d.bias, big.layers[1].bias) < 1e-6 and max_diff(keras3.layers[1].bias, big.layers[1].bias) < 1e-6,
  "the accumulated biases differ from one big-batch step")
-- (Keras 3's iterations counts the updates made: 4 micro-batches, 1 update)
check(keras3.optimizer.iterations:item() == 1, "gradient_accumulation_steps: iterations should count the updates made")

----------------------------------------------------------------------------
-- 2. Gradient checkpointing (tide.recompute_grad)
----------------------------------------------------------------------------
print("== 2. gradient checkpointing")
-- SEGMENTS checkpointed segments of PER Dense layers each: a segment keeps
-- only its input for the backward pass, and reruns its layers there. (One
-- layer per segment would save nothing: the layer's input is what its own
-- gradient needs anyway.)
local SEGMENTS, PER, WIDTH, ROWS = 4, 4, FAST and 256 or 1024, FAST and 1024 or 4096
local DEPTH = SEGMENTS * PER
local blocks = {}
for i = 1, SEGMENTS do
  local layers = { tide.Input { shape = { WIDTH } } }
  for j = 1, PER do layers[j + 1] = L.Dense { WIDTH, activation = "tanh" } end
  blocks[i] = tide.Sequential(layers)
end
local checkpointed = {}
for i, b in ipairs(blocks) do checkpointed[i] = tide.recompute_grad(b) end
local xw = tide.random.normal { ROWS, WIDTH }
local vars = {}
for _, b in ipairs(blocks) do for _, v in ipairs(b.trainable_weights) do vars[#vars + 1] = v end end

-- The gradient step is traced: tide plans a graph's memory, so the
-- intermediates recompute_grad does not keep are never allocated at once.
-- (Eagerly, freed tensors wait for Lua's collector and the peak says little.)
local function traced_grads(stack)
  return tide.trace(function(x)
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      local h = x
      for _, f in ipairs(stack) do h = f(h) end
      return tide.reduce_mean(tide.square(h))
    end)
    return tape:gradient(loss, vars)
  end)
end
local function grads_and_peak(stack)
  local f = traced_grads(stack)
  collectgarbage()
  collectgarbage()
  tide.config.release_memory()
  tide.config.reset_memory_peak()
  local base = tide.config.memory_info().current
  local g = f(xw)
  local peak = tide.config.memory_info().peak - base
  return g, peak, f:get_concrete_function(xw).graph:planned_bytes()
end
local g_plain, peak_plain, plan_plain = grads_and_peak(blocks)
local g_recompute, peak_recompute, plan_recompute = grads_and_peak(checkpointed)
print(string.format("%d Dense(%d) on %d rows, in %d segments: peak memory of a gradient step " ..
  "%.1f MiB plain, %.1f MiB with recompute_grad (graph's planned buffers %.1f and %.1f MiB)",
  DEPTH, WIDTH, ROWS, SEGMENTS, peak_plain / 2 ^ 20, peak_recompute / 2 ^ 20, plan_plain / 2 ^ 20, plan_recompute / 2 ^ 20))
local worst = 0
for i = 1, #vars do worst = math.max(worst, max_diff(g_plain[i], g_recompute[i])) end
print(string.format("largest gradient difference: %.2e", worst))
check(worst < 1e-5, "recompute_grad changed the gradients")
check(peak_recompute < peak_plain, "recompute_grad did not lower the peak memory")

----------------------------------------------------------------------------
-- 3. Mixed precision
----------------------------------------------------------------------------
print("== 3. mixed precision")
tide.mixed_precision.set_global_policy("mixed_float16")
local mp = tide.Sequential {
  tide.Input { shape = { 3 } },
  L.Dense { 16, activation = "relu" },
  L.Dense { 1, dtype = "float32" }, -- the last layer in float32, as Keras advises
}
tide.mixed_precision.set_global_policy("float32")
check(mp.layers[1].compute_dtype == "float16" and mp.layers[1].kernel.dtype == "float32",
  "mixed_float16: the first Dense should compute in float16 with float32 weights")
local lso = tide.optimizers.LossScaleOptimizer(tide.optimizers.SGD { learning_rate = 0.01 },
  { initial_scale = 2 ^ 8, dynamic_growth_steps = 2 })
mp:compile { optimizer = lso, loss = "mse" }
local hist = mp:fit(X, Y, { batch_size = 4, epochs = 2, shuffle = false, verbose = 0 })
local last = hist.history.loss[#hist.history.loss]
print(string.format("loss %.4f after 4 steps, loss scale %g (started at 2^8, doubles every 2 finite steps)",
  last, lso.dynamic_scale:item()))
check(last == last and math.abs(last) < math.huge, "mixed precision: the loss is not finite")
check(lso.dynamic_scale:item() == 2 ^ 10, "mixed precision: 4 finite steps should double the scale twice")
-- A non-finite gradient skips the step and halves the scale.
local before = mp.layers[2].kernel:numpy()[1][1]
lso:apply({ tide.fill({ 16, 1 }, 0 / 0), tide.zeros { 1 } }, mp.layers[2].trainable_weights)
print(string.format("after a NaN gradient: scale %g, weights unchanged", lso.dynamic_scale:item()))
check(lso.dynamic_scale:item() == 2 ^ 9, "mixed precision: a NaN gradient should halve the scale")
check(mp.layers[2].kernel:numpy()[1][1] == before, "mixed precision: a NaN gradient should skip the step")

----------------------------------------------------------------------------
-- 4. The profiler, every N steps
----------------------------------------------------------------------------
print("== 4. profiler and graph traces every N steps")
local logdir = tmpdir("techniques_logs")
local model = linear()
local opt = tide.optimizers.SGD { learning_rate = 0.05 }
opt:build(model.trainable_weights)
local step = tide.trace(function(x, y)
  local tape = tide.GradientTape()
  local loss = tape:run(function() return tide.reduce_mean(tide.square(model(x) - y)) end)
  opt:apply(tape:gradient(loss, model.trainable_weights), model.trainable_weights)
  return loss
end)
local writer = tide.summary.create_file_writer(logdir)
local EVERY, profiled = 3, 0
writer:as_default(function()
  for s = 1, 6 do
    local on = s % EVERY == 0
    if on then
      tide.summary.trace_on { graph = true }
      tide.profiler.start(logdir)
    end
    step(X, Y)
    if on then
      tide.profiler.stop()
      tide.summary.trace_export { name = "train_step", step = s }
      profiled = profiled + 1
    end
  end
end)
writer:close()
local function files(pattern)
  local p = io.popen("find '" .. logdir .. "' -name '" .. pattern .. "' | sort")
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end
local traces, events = files("*.trace.json.gz"), files("events.out.tfevents.*")
print(string.format("%d profiler traces and %d event file(s) under %s", #traces, #events, logdir))
check(#traces == profiled and profiled == 2, "the profiler should write one trace per profiled step")
check(#events >= 1, "trace_export wrote no event file")
local prof = tide.profiler.read_trace(traces[#traces])
check(#prof.traceEvents > 0, "the profiler trace is empty")
os.execute("rm -rf '" .. logdir .. "'")

----------------------------------------------------------------------------
-- 5. jit_compile, running eagerly, check_numerics, shape asserts
----------------------------------------------------------------------------
print("== 5. jit_compile, eager debugging, check_numerics, shape asserts")
-- jit_compile: accepted; tide fuses and plans every traced graph anyway.
local fused = tide.trace(function(x) return tide.tanh(x * 2 + 1) end, { jit_compile = true })
check(max_diff(fused(X), tide.tanh(X * 2 + 1)) < 1e-6, "jit_compile = true changed the result")

-- run_functions_eagerly: the Lua body (and its print) runs at every call.
local calls = 0
local noisy = tide.trace(function(x)
  calls = calls + 1
  print("  inside the function, x.shape[1] =", x.shape[1])
  return x + 1
end)
noisy(X); noisy(X); noisy(X)
check(calls == 1, "a traced function should run its Lua body once (at the trace)")
tide.config.run_functions_eagerly(true)
calls = 0
noisy(X); noisy(X); noisy(X)
tide.config.run_functions_eagerly(false)
check(calls == 3, "run_functions_eagerly(true) should run the body at every call")

-- check_numerics: the first op making a NaN or Inf raises, naming it.
tide.debugging.enable_check_numerics()
local ok, err = pcall(function() return tide.log(X - 100) end)
tide.debugging.disable_check_numerics()
print("  check_numerics: " .. tostring(err):match("[^\n]*"))
check(not ok and tostring(err):find("check_numerics: log produced NaN", 1, true) and tostring(err):find("float32[8, 3]", 1, true), "enable_check_numerics did not name the op making a NaN")

-- Shape asserts.
tide.debugging.assert_shapes { { X, { "N", 3 } }, { Y, { "N", 1 } } }
local ok2, err2 = pcall(tide.debugging.assert_shapes, { { X, { "N", 3 } }, { tide.zeros { 5, 1 }, { "N", 1 } } })
print("  assert_shapes: " .. tostring(err2):match("[^\n]*"))
check(not ok2, "assert_shapes accepted a mismatched N")
local ensured = tide.trace(function(x) return tide.ensure_shape(x, { tide.None, 3 }) end)
check(ensured(X).shape[2] == 3, "ensure_shape")
check(not pcall(ensured, tide.zeros { 2, 4 }), "ensure_shape accepted a wrong width")

print("all techniques checked")
