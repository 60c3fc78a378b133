-- tests/spec/ops/index_fixtures_spec.lua — tide's index-driven ops against
-- TensorFlow 2.21's results (tests/fixtures/index/cases.lua, written by gen.py
-- beside it): outputs, errors and gradients, eagerly and traced.
local tide = require "tide"

local CASES = dofile("tests/fixtures/index/cases.lua")
local TOL = { float32 = 1e-6, float64 = 1e-12, float16 = 1e-3, bfloat16 = 8e-3 }

-- A tide tensor from a fixture entry { dtype, shape, values }.
local function make(e)
  if #e.values == 0 then return tide.zeros(e.shape, e.dtype) end
  return tide.tensor(e.values, e.dtype):reshape(e.shape)
end

-- The call's arguments: fixture tensors become tensors; other values pass.
local function arguments(c)
  local out = {}
  for i, a in ipairs(c.args) do
    out[i] = (type(a) == "table" and a.dtype) and make(a) or a
  end
  return out
end

-- Assert tensor t holds fixture entry e (dtype, shape, values; NaN matches
-- NaN, the sign of a zero must match, floats within the dtype's tolerance).
local function matches(what, t, e)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, TF gives %s", what, t.dtype, e.dtype))
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","), string.format("%s: shape (%s), TF gives (%s)", what,
    table.concat(got, ","), table.concat(e.shape, ",")))
  local vals = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else vals[#vals + 1] = v end
  end
  walk(t:totable())
  if #e.shape == 0 then vals = { t:item() } end
  local tol = TOL[e.dtype] or 0
  for i, want in ipairs(e.values) do
    local v = vals[i]
    local ok
    if type(want) == "boolean" or tol == 0 then ok = v == want
    elseif want ~= want then ok = v ~= v
    elseif want == 0 then ok = v == 0 and 1 / v == 1 / want
    else ok = v == want or math.abs(v - want) <= tol * math.max(1, math.abs(want)) end
    assert(ok, string.format("%s: value %d is %s, TF gives %s", what, i, tostring(v), tostring(want)))
  end
end

-- Weights shaped like t: 1 + (k % 7) / 4, as gen.py makes them.
local function weights(t)
  local w = {}
  for k = 0, t:size() - 1 do w[k + 1] = 1 + (k % 7) * 0.25 end
  if #w == 0 then return tide.zeros(t.shape, t.dtype) end
  return tide.tensor(w, t.dtype):reshape(t.shape)
end

local function call(c, xs)
  local a = {}
  for i, x in ipairs(xs) do a[i] = x end
  if c.opts then a[#a + 1] = c.opts end
  return tide[c.fn](unpack(a, 1, #c.args + (c.opts and 1 or 0)))
end

describe("index-driven ops against TensorFlow's values", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has fixtures", function()
    assert.is_true(#CASES > 100)
  end)

  for _, c in ipairs(CASES) do
    it(c.name, function()
      local xs = arguments(c)
      if c.error then
        local ok, err = pcall(call, c, xs)
        assert(not ok, c.name .. ": TF raised " .. c.tf_error .. " but tide returned a result")
        assert(tostring(err):find(c.error, 1, true), c.name .. ": the message lacks '" .. c.error .. "': " .. tostring(err))
        return
      end
      local outs = { call(c, xs) }
      assert(#outs == #c.outputs, c.name .. ": " .. #outs .. " results, TF gives " .. #c.outputs)
      for k, e in ipairs(c.outputs) do matches(c.name .. ", result " .. k, outs[k], e) end
      -- traced, with the tensors as arguments: the same values
      local tensor_pos = {}
      for i, a in ipairs(c.args) do if type(a) == "table" and a.dtype then tensor_pos[#tensor_pos + 1] = i end end
      local f = tide.trace(function(...)
        local args = { ... }
        local full = {}
        for i = 1, #c.args do full[i] = xs[i] end
        for j, i in ipairs(tensor_pos) do full[i] = args[j] end
        return call(c, full)
      end)
      local targs = {}
      for j, i in ipairs(tensor_pos) do targs[j] = xs[i] end
      local touts = { f(unpack(targs)) }
      for k, e in ipairs(c.outputs) do matches(c.name .. ", traced result " .. k, touts[k], e) end
      if c.grads then
        local sources = {}
        for k in pairs(c.grads) do sources[#sources + 1] = k end
        table.sort(sources)
        local tape = tide.GradientTape()
        local loss = tape:run(function()
          for _, k in ipairs(sources) do tape:watch(xs[k]) end
          local y = call(c, xs)
          return tide.reduce_sum(y * weights(y))
        end)
        local list = {}
        for j, k in ipairs(sources) do list[j] = xs[k] end
        local gs = tape:gradient(loss, list, { unconnected_gradients = "zero" })
        for j, k in ipairs(sources) do matches(c.name .. ", gradient of argument " .. k, gs[j], c.grads[k]) end
      end
    end)
  end
end)
