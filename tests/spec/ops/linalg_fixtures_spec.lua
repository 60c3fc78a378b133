-- tests/spec/ops/linalg_fixtures_spec.lua — tide.linalg against TensorFlow
-- 2.21's results (tests/fixtures/linalg/cases.lua, written by gen.py beside
-- it): outputs, errors and gradients, eagerly and traced. Where TF calls a
-- result non-unique the fixture says how to compare it (gen.py's `compare`).
local tide = require "tide"

local CASES = dofile("tests/fixtures/linalg/cases.lua")
local TOL = { float32 = 2e-5, float64 = 1e-10 }
local GRAD_TOL = { float32 = 1e-4, float64 = 1e-8 }

-- A tide tensor from a fixture entry { dtype, shape, values }; lists of entries map.
local function make(e)
  if type(e) ~= "table" then return e end
  if not e.dtype then
    local out = {}
    for i, x in ipairs(e) do out[i] = make(x) end
    return out
  end
  if #e.values == 0 then return tide.zeros(e.shape, e.dtype) end
  return tide.tensor(e.values, e.dtype):reshape(e.shape)
end

local function flat(t)
  if t.ndim == 0 then return { t:item() } end
  local vals = {}
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end else vals[#vals + 1] = v end
  end
  walk(t:totable())
  return vals
end

-- True when v is want within tol (NaN matches NaN, infinities must match).
local function near(v, want, tol)
  if type(want) == "boolean" then return v == want end
  if want ~= want then return v ~= v end
  if want == math.huge or want == -math.huge then return v == want end
  return math.abs(v - want) <= tol * math.max(1, math.abs(want))
end

-- Assert tensor t holds fixture entry e, compared as `mode` says.
local function matches(what, t, e, tol, mode)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, TF gives %s", what, t.dtype, e.dtype))
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","), string.format("%s: shape (%s), TF gives (%s)", what,
    table.concat(got, ","), table.concat(e.shape, ",")))
  local vals = flat(t)
  tol = (e.dtype == "float32" or e.dtype == "float64") and tol or 0
  if mode == "lower_nan" then -- TF's NaN-filled lower triangle (its upper part is unset memory)
    local n = e.shape[#e.shape]
    for i, v in ipairs(vals) do
      local r, c = math.floor((i - 1) / n) % n, (i - 1) % n
      if c <= r then assert(v ~= v, string.format("%s: value %d is %s, TF gives NaN", what, i, tostring(v))) end
    end
    return
  end
  for i, want in ipairs(e.values) do
    local v = vals[i]
    if mode == "abs" then v, want = math.abs(v), math.abs(want) end
    assert(near(v, want, tol), string.format("%s: value %d is %s, TF gives %s", what, i, tostring(v), tostring(want)))
  end
end

-- Outputs k, k + 1 as a set of (real, imag) pairs, compared with TF's as sets.
local function same_set(what, re, im, ere, eim, tol)
  local function pairs_of(a, b)
    local p = {}
    for i = 1, #a do p[i] = { a[i], b[i] } end
    table.sort(p, function(x, y)
      if math.abs(x[1] - y[1]) > 1e-6 * math.max(1, math.abs(x[1])) then return x[1] < y[1] end
      return x[2] < y[2]
    end)
    return p
  end
  local got, want = pairs_of(flat(re), flat(im)), pairs_of(ere.values, eim.values)
  assert(#got == #want, what .. ": " .. #got .. " values, TF gives " .. #want)
  for i = 1, #got do
    assert(near(got[i][1], want[i][1], tol) and near(got[i][2], want[i][2], tol), string.format(
      "%s: value %d is %s%+gi, TF gives %s%+gi", what, i, got[i][1], got[i][2], want[i][1], want[i][2]))
  end
end

-- The results of tide.linalg[fn] as a flat list (eig's {real, imag} tables as two).
local function results(c, xs)
  local a = {}
  for i = 1, #c.args do a[i] = xs[i] end
  if c.opts then a[#c.args + 1] = c.opts end
  local r = { tide.linalg[c.fn](unpack(a, 1, #c.args + (c.opts and 1 or 0))) }
  local out = {}
  for _, v in ipairs(r) do
    if type(v) == "table" and v.real then out[#out + 1], out[#out + 2] = v.real, v.imag else out[#out + 1] = v end
  end
  return out
end

local function check_outputs(c, what, outs)
  assert(#outs == #c.outputs, what .. ": " .. #outs .. " results, TF gives " .. #c.outputs)
  local compare = c.compare or {}
  local k = 1
  while k <= #c.outputs do
    local e, mode = c.outputs[k], compare[k]
    local tol = c.tol or TOL[e.dtype]
    if mode == "sorted" then
      same_set(what .. ", results " .. k .. ", " .. k + 1, outs[k], outs[k + 1], e, c.outputs[k + 1], tol)
      k = k + 2
    else
      if mode ~= "skip" then matches(what .. ", result " .. k, outs[k], e, tol, mode) end
      k = k + 1
    end
  end
end

-- Weights shaped like t: 1 + (k % 7) / 4, as gen.py makes them.
local function weights(t)
  local w = {}
  for k = 0, t:size() - 1 do w[k + 1] = 1 + (k % 7) * 0.25 end
  if #w == 0 then return tide.zeros(t.shape, t.dtype) end
  return tide.tensor(w, t.dtype):reshape(t.shape)
end

describe("tide.linalg against TensorFlow's values", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has fixtures", function() assert.is_true(#CASES > 120) end)

  for _, c in ipairs(CASES) do
    it(c.name, function()
      local xs = {}
      for i, a in ipairs(c.args) do xs[i] = make(a) end
      if c.error then
        local ok, err = pcall(results, c, xs)
        assert(not ok, c.name .. ": TF raised " .. c.tf_error .. " but tide returned a result")
        assert(tostring(err):find(c.error, 1, true), c.name .. ": the message lacks '" .. c.error .. "': " .. tostring(err))
        return
      end
      check_outputs(c, c.name, results(c, xs))
      -- traced, the tensor arguments symbolic: the same values
      local pos = {}
      for i, x in ipairs(xs) do if tide.is_tensor(x) then pos[#pos + 1] = i end end
      local f = tide.trace(function(...)
        local ts, full = { ... }, {}
        for i = 1, #xs do full[i] = xs[i] end
        for j, i in ipairs(pos) do full[i] = ts[j] end
        return unpack(results(c, full))
      end)
      local targs = {}
      for j, i in ipairs(pos) do targs[j] = xs[i] end
      check_outputs(c, c.name .. " (traced)", { f(unpack(targs)) })
      if c.grads then
        local sources = {}
        for k in pairs(c.grads) do sources[#sources + 1] = k end
        table.sort(sources)
        local tape = tide.GradientTape()
        local loss = tape:run(function()
          for _, k in ipairs(sources) do tape:watch(xs[k]) end
          local outs, total = results(c, xs), nil
          for _, k in ipairs(c.grad_outputs) do
            local s = tide.reduce_sum(outs[k] * weights(outs[k]))
            total = total and total + s or s
          end
          return total
        end)
        local list = {}
        for j, k in ipairs(sources) do list[j] = xs[k] end
        local gs = tape:gradient(loss, list, { unconnected_gradients = "zero" })
        for j, k in ipairs(sources) do
          local e = c.grads[k]
          matches(c.name .. ", gradient of argument " .. k, gs[j], e, (c.tol or 0) * 10 + GRAD_TOL[e.dtype])
        end
      end
    end)
  end
end)
