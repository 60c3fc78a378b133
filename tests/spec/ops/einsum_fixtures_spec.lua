-- tests/spec/ops/einsum_fixtures_spec.lua — tide.einsum against TensorFlow 2.21's tf.einsum
-- (tests/fixtures/einsum/cases.lua, written by gen.py beside it): outputs, errors and
-- gradients, eagerly, traced, and traced with every dim unknown (None).
local tide = require "tide"

local CASES = dofile("tests/fixtures/einsum/cases.lua")
local TOL = { float32 = 1e-5, float64 = 1e-12, float16 = 1e-3, bfloat16 = 8e-3 }

-- A tide tensor from a fixture entry { dtype, shape, values }.
local function make(e)
  if #e.values == 0 then return tide.zeros(e.shape, e.dtype) end
  return tide.tensor(e.values, e.dtype):reshape(e.shape)
end

-- Assert tensor t holds fixture entry e (dtype, shape, values within the dtype's tolerance).
local function matches(what, t, e)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, TF gives %s", what, t.dtype, e.dtype))
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","), string.format("%s: shape (%s), TF gives (%s)", what,
    table.concat(got, ","), table.concat(e.shape, ",")))
  local flat = t:reshape { -1 }:cast("float64"):totable()
  local tol = TOL[e.dtype] or 0
  assert(#flat == #e.values, what .. ": element count")
  for i, want in ipairs(e.values) do
    local v = flat[i]
    local ok = v == want or math.abs(v - want) <= tol * math.max(1, math.abs(want))
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

local function none_signature(xs)
  local sig = {}
  for i, x in ipairs(xs) do
    local d = {}
    for k = 1, x.ndim do d[k] = tide.None end
    sig[i] = tide.TensorSpec(d, x.dtype)
  end
  return sig
end

describe("einsum against TensorFlow's values", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has fixtures", function()
    assert.is_true(#CASES >= 40)
  end)

  for _, c in ipairs(CASES) do
    it(c.name .. ": " .. c.equation, function()
      local xs = {}
      for i, e in ipairs(c.operands) do xs[i] = make(e) end
      if c.error then
        local ok, err = pcall(tide.einsum, c.equation, unpack(xs))
        assert(not ok, c.name .. ": TF raised " .. c.tf_error .. " but tide returned a result")
        assert(tostring(err):find(c.error, 1, true), c.name .. ": the message lacks '" .. c.error .. "': " .. tostring(err))
        assert(tostring(err):find("einsum", 1, true), c.name .. ": the message does not name einsum: " .. tostring(err))
        return
      end
      matches(c.name, tide.einsum(c.equation, unpack(xs)), c.output)
      local f = function(...) return tide.einsum(c.equation, ...) end
      matches(c.name .. ", traced", tide.trace(f)(unpack(xs)), c.output)
      matches(c.name .. ", traced with None dims", tide.trace(f, { input_signature = none_signature(xs) })(unpack(xs)),
        c.output)
      if c.grads then
        local tape = tide.GradientTape()
        local loss = tape:run(function()
          for _, x in ipairs(xs) do tape:watch(x) end
          local y = tide.einsum(c.equation, unpack(xs))
          return tide.reduce_sum(y * weights(y))
        end)
        local gs = tape:gradient(loss, xs, { unconnected_gradients = "zero" })
        for k, e in ipairs(c.grads) do matches(c.name .. ", gradient of operand " .. (k - 1), gs[k], e) end
      end
    end)
  end
end)
