-- tests/support/gradcheck.lua — finite-difference gradient checks for specs:
--   local gc = require "gradcheck"
--   gc.check(function(x, y) return x * y end, {x, y})          -- first order
--   gc.check(f, {x}, {second_order = true})                     -- and second
--   gc.gradients(f, {x, y})   -- the tape's gradients of sum(f(x, y)), a Lua list
--   gc.check_layer(layer, x, {training = true})  -- a float64 layer: x and each trainable weight
-- Inputs are float64 tensors (possibly strided views); f returns a tensor.
-- The loss is sum(f(...) * w) with fixed pseudo-random weights w, so every
-- output element counts. Each input element is perturbed by +-eps in place.
-- Each check also runs the tape inside tide.trace with an input_signature of
-- None dims only (every dim of every input unknown while tracing) and wants
-- the eager gradients from it; opts.none = false skips that for an f that
-- needs known dims (a split into a count of them, squeeze without axes).
local lcg_step = require "lcg"
local tide = require "tide"
local h = require "helpers"
local unpack = table.unpack or unpack

local M = {}

-- Deterministic weights in [0.5, 1.5) shaped like t (no global seed touched).
local function weights_like(t)
  local n = t:size()
  local vals = {}
  local s = 12345
  for i = 1, n do
    s = lcg_step(s)
    vals[i] = 0.5 + s / 2147483648
  end
  local w = tide.tensor(vals, t.dtype)
  return w:reshape(t.shape)
end

local function loss_of(f, inputs, w)
  local y = f(unpack(inputs))
  return tide.reduce_sum(y * (w or weights_like(y))), y
end

-- pcall of a new tide.trace of fn with that input_signature on args; the
-- results as a list. Each check traces a new Function on purpose: no
-- retracing advice.
local function traced_call(fn, sig, args)
  local cfg = require("tide.tracing.retracing").settings
  local was = cfg.enabled
  cfg.enabled = false
  local ok, res = pcall(function() return { tide.trace(fn, { input_signature = sig })(unpack(args)) } end)
  cfg.enabled = was
  return ok, res
end

-- The input_signature of tensors ts with every dim None.
local function none_signature(ts)
  local sig = {}
  for i, t in ipairs(ts) do
    local d = {}
    for k = 1, t.ndim do d[k] = tide.None end
    sig[i] = tide.TensorSpec(d, t.dtype)
  end
  return sig
end

-- Position k (0-based, row-major) of t as a list of indices.
local function position(t, k)
  local shape = t.shape
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = k % shape[d]
    k = math.floor(k / shape[d])
  end
  return idx
end

-- A one-element view of t at idx (writes go through to t).
local function element(t, idx)
  local v = t
  for _, i in ipairs(idx) do v = v[i] end
  return v
end

-- Numeric gradient of loss(inputs) w.r.t. inputs[j], as a Lua list.
local function numeric(loss, inputs, j, eps)
  local x = inputs[j]
  local out = {}
  for k = 0, x:size() - 1 do
    local e = element(x, position(x, k))
    local v = e:item()
    e:copy_(v + eps)
    local up = loss(inputs):item()
    e:copy_(v - eps)
    local down = loss(inputs):item()
    e:copy_(v)
    out[k + 1] = (up - down) / (2 * eps)
  end
  return out
end

local flat = h.values

local function compare(what, got, want, rtol, atol)
  assert(#got == #want, what .. ": expected " .. #want .. " values, got " .. #got)
  for i = 1, #got do
    local g, w = got[i], want[i]
    if math.abs(g - w) > atol + rtol * math.abs(w) then
      error(string.format("%s: element %d: analytic %.10g vs numeric %.10g", what, i, g, w), 3)
    end
  end
end

-- Check f's gradients against finite differences; raises on a mismatch.
function M.check(f, inputs, opts)
  opts = opts or {}
  local eps, rtol, atol = opts.eps or 1e-6, opts.rtol or 1e-5, opts.atol or 1e-7
  for i, x in ipairs(inputs) do
    assert(tide.is_tensor(x) and x.dtype == "float64", "gradcheck: input " .. i .. " must be a float64 tensor")
  end
  local tape = tide.GradientTape { persistent = true }
  local loss = tape:run(function()
    for _, x in ipairs(inputs) do tape:watch(x) end
    return (loss_of(f, inputs))
  end)
  local grads = tape:gradient(loss, inputs)
  if opts.none ~= false then M.check_none_dims(f, inputs, grads) end
  for j = 1, #inputs do
    local want = numeric(function(xs) return (loss_of(f, xs)) end, inputs, j, eps)
    local g = grads[j]
    local got
    if g == nil then
      got = {}
      for k = 1, #want do got[k] = 0 end
    else
      assert(g.shape == inputs[j].shape, "gradcheck: gradient " .. j .. " has shape " .. tostring(g.shape) ..
        " but its input has " .. tostring(inputs[j].shape))
      got = flat(g)
    end
    compare("gradient of input " .. j, got, want, rtol, atol)
  end
  if opts.second_order then M.check_second(f, inputs, opts) end
end

-- The gradients of sum(f(xs) * w) w.r.t. xs by a tape (zeros where unconnected).
local function tape_gradients(f, xs, w)
  local tape = tide.GradientTape()
  local loss = tape:run(function()
    for _, x in ipairs(xs) do tape:watch(x) end
    return (loss_of(f, xs, w))
  end)
  return tape:gradient(loss, xs, { unconnected_gradients = "zero" })
end

-- The first-order gradients traced with None dims only must be the eager
-- tape's `want` (nil: zeros), within float64 rounding (fused or reordered sums).
function M.check_none_dims(f, inputs, want)
  local n = #inputs
  local args = { unpack(inputs) }
  args[n + 1] = weights_like(f(unpack(inputs)))
  local ok, got = traced_call(function(...)
    local xs = { ... }
    local w = table.remove(xs)
    return unpack(tape_gradients(f, xs, w), 1, n)
  end, none_signature(args), args)
  if not ok then error("with None dims: " .. tostring(got), 3) end
  for j = 1, n do
    assert(got[j].shape == inputs[j].shape, "gradcheck: with None dims, gradient " .. j .. " has shape " ..
      tostring(got[j].shape) .. " but its input has " .. tostring(inputs[j].shape))
    local w = want[j] and flat(want[j]) or flat(tide.zeros(inputs[j].shape:as_list(), "float64"))
    compare("gradient of input " .. j .. " with None dims", flat(got[j]), w, 1e-9, 1e-12)
  end
end

-- Second order: differentiate sum(grad(loss) * w) again, compare with finite
-- differences of the first-order analytic gradient (and traced with None dims
-- only, with the eager second-order gradient, unless opts.none is false).
function M.check_second(f, inputs, opts)
  opts = opts or {}
  local eps, rtol, atol = opts.eps or 1e-5, opts.rtol2 or 1e-4, opts.atol2 or 1e-6
  -- weights: the output's, then one per input for its gradient
  local ws = { weights_like(f(unpack(inputs))) }
  for j, x in ipairs(inputs) do ws[j + 1] = weights_like(x) end
  local function first_grad_loss(args, w)
    local gs = tape_gradients(f, args, w[1])
    local total
    for j, g in ipairs(gs) do
      local s = tide.reduce_sum(g * w[j + 1])
      total = total and total + s or s
    end
    return total
  end
  local function second(xs, w)
    local outer = tide.GradientTape()
    local l2 = outer:run(function()
      for _, x in ipairs(xs) do outer:watch(x) end
      return first_grad_loss(xs, w)
    end)
    return outer:gradient(l2, xs, { unconnected_gradients = "zero" })
  end
  local grads = second(inputs, ws)
  if opts.none ~= false then
    local n = #inputs
    local args = { unpack(inputs) }
    for _, w in ipairs(ws) do args[#args + 1] = w end
    local ok, got = traced_call(function(...)
      local all = { ... }
      return unpack(second({ unpack(all, 1, n) }, { unpack(all, n + 1) }), 1, n)
    end, none_signature(args), args)
    if not ok then error("second order with None dims: " .. tostring(got), 2) end
    for j = 1, n do
      compare("second-order gradient of input " .. j .. " with None dims", flat(got[j]), flat(grads[j]), 1e-9, 1e-12)
    end
  end
  for j = 1, #inputs do
    local want = numeric(function(xs) return first_grad_loss(xs, ws) end, inputs, j, eps)
    compare("second-order gradient of input " .. j, flat(grads[j]), want, rtol, atol)
  end
end

-- The gradients of sum(f(...)) with respect to the inputs, as a Lua list.
function M.gradients(f, inputs)
  local tape = tide.GradientTape()
  local y = tape:run(function()
    for _, x in ipairs(inputs) do tape:watch(x) end
    return tide.reduce_sum(f(unpack(inputs)))
  end)
  return tape:gradient(y, inputs)
end

-- A float64 tensor of the given shape with values spread over [lo, hi).
function M.random(shape, lo, hi, seed)
  lo, hi = lo or -1, hi or 1
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local s = seed or 7
  local vals = {}
  for i = 1, n do
    s = lcg_step(s)
    vals[i] = lo + (hi - lo) * s / 2147483648
  end
  local t = tide.tensor(vals, "float64")
  return #shape > 0 and t:reshape(shape) or t:reshape({})
end

-- Fixed weights in [0.5, 1.5) shaped like t (float64).
function M.layer_weights(t)
  local vals, s = {}, 4321
  for i = 1, t:size() do
    s = lcg_step(s)
    vals[i] = 0.5 + s / 2147483648
  end
  return tide.tensor(vals, "float64"):reshape(t.shape)
end

-- check_layer(layer, x, {training=, tol=1e-6}): the tape's gradients of
-- sum(layer(x) * w) with respect to x and every trainable weight of the
-- (float64) layer against central differences; raises on a mismatch.
function M.check_layer(layer, x, opts)
  opts = opts or {}
  local eps, tol = 1e-6, opts.tol or 1e-6
  layer(x, { training = opts.training })
  local w = M.layer_weights(layer(x, { training = opts.training }))
  local function loss() return tide.reduce_sum(layer(x, { training = opts.training }) * w) end
  local vars = layer.trainable_weights
  assert(#vars > 0, "check_layer: " .. layer.name .. " has no trainable weights")
  local tape = tide.GradientTape()
  local l = tape:run(function() tape:watch(x); return loss() end)
  local sources = { x }
  for _, v in ipairs(vars) do sources[#sources + 1] = v end
  local grads = tape:gradient(l, sources)
  for j, src in ipairs(sources) do
    assert(grads[j] ~= nil, "no gradient for source " .. j)
    local analytic = h.values(grads[j])
    local flat = h.values(tide.is_variable(src) and src:read_value() or src)
    local shape = src.shape:as_list()
    local function set(vals)
      local t = tide.tensor(vals, "float64"):reshape(shape)
      if tide.is_variable(src) then src:assign(t) else src:copy_(t) end
    end
    for k = 1, #flat do
      local keep = flat[k]
      flat[k] = keep + eps; set(flat); local up = loss():item()
      flat[k] = keep - eps; set(flat); local down = loss():item()
      flat[k] = keep; set(flat)
      local numeric = (up - down) / (2 * eps)
      assert(math.abs(analytic[k] - numeric) <= tol + tol * math.abs(numeric),
        string.format("%s, source %d, element %d: analytic %.10g vs numeric %.10g", layer.name, j, k, analytic[k],
          numeric))
    end
  end
end

return M
