-- tests/spec/ops/signal_fixtures_spec.lua — tide.signal's transforms and spectral ops against
-- TensorFlow 2.21's results (tests/fixtures/signal/ops.lua, written by gen.py/gen_ops.py beside
-- it): outputs, errors and gradients, eagerly and traced. Complex values are {real=, imag=}.
local tide = require "tide"

local CASES = dofile("tests/fixtures/signal/ops.lua")
local TOL = { float32 = 2e-5, float64 = 1e-10 }
local GRAD_TOL = { float32 = 1e-4, float64 = 1e-8 }

-- A tide value from a fixture entry: a tensor { dtype, shape, values }, a complex
-- { complex = true, real, imag }, a list of them, or a plain Lua value.
local function make(e)
  if type(e) ~= "table" then return e end
  if e.complex then return { real = make(e.real), imag = make(e.imag) } end
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

local function near(v, want, tol)
  if want ~= want then return v ~= v end
  if want == math.huge or want == -math.huge then return v == want end
  return math.abs(v - want) <= tol * math.max(1, math.abs(want))
end

-- loose_nan: where TF gives NaN so must tide, and tide may give NaN where TF does not.
local function matches(what, t, e, tol, loose_nan)
  assert(t.dtype == e.dtype, string.format("%s: dtype %s, TF gives %s", what, t.dtype, e.dtype))
  local got = t.shape:as_list()
  assert(table.concat(got, ",") == table.concat(e.shape, ","), string.format("%s: shape (%s), TF gives (%s)", what,
    table.concat(got, ","), table.concat(e.shape, ",")))
  local vals = flat(t)
  -- a long transform's error grows with its length and its largest value: scale by both
  local big = 1
  for _, w in ipairs(e.values) do if w == w and math.abs(w) ~= math.huge then big = math.max(big, math.abs(w)) end end
  for i, want in ipairs(e.values) do
    local v = vals[i]
    assert(near(v, want, tol) or (loose_nan and v ~= v) or math.abs(v - want) <= tol * big,
      string.format("%s: value %d is %s, TF gives %s", what, i, tostring(v), tostring(want)))
  end
end

-- tide.signal[fn]'s results as a flat list (a complex one as two tensors).
local function results(c, xs)
  local a = {}
  for i = 1, #c.args do a[i] = xs[i] end
  if c.opts then a[#c.args + 1] = c.opts end
  local r = { tide.signal[c.fn](unpack(a, 1, #c.args + (c.opts and 1 or 0))) }
  local out = {}
  for _, v in ipairs(r) do
    if type(v) == "table" and v.real then out[#out + 1], out[#out + 2] = v.real, v.imag else out[#out + 1] = v end
  end
  return out
end

local function check_outputs(c, what, outs)
  assert(#outs == #c.outputs, what .. ": " .. #outs .. " results, TF gives " .. #c.outputs)
  for k, e in ipairs(c.outputs) do matches(what .. ", result " .. k, outs[k], e, c.tol or TOL[e.dtype] or 0, c.loose_nan) end
end

local function weights(t)
  local w = {}
  for k = 0, t:size() - 1 do w[k + 1] = 1 + (k % 7) * 0.25 end
  if #w == 0 then return tide.zeros(t.shape, t.dtype) end
  return tide.tensor(w, t.dtype):reshape(t.shape)
end

-- The tensors of argument k (a complex one's two parts), as a list.
local function parts(x)
  if type(x) == "table" and x.real then return { x.real, x.imag } end
  return { x }
end

describe("tide.signal against TensorFlow's values", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has fixtures", function() assert.is_true(#CASES > 60) end)

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
      -- traced, every tensor argument symbolic (a complex one's parts too): the same values
      local flat_in = {} -- { argument, tensor, part of a complex one or nil }
      for i, x in ipairs(xs) do
        if tide.is_tensor(x) then flat_in[#flat_in + 1] = { i, x } end
        if type(x) == "table" and x.real then
          flat_in[#flat_in + 1] = { i, x.real, "real" }
          flat_in[#flat_in + 1] = { i, x.imag, "imag" }
        end
      end
      local f = tide.trace(function(...)
        local ts, full = { ... }, {}
        for i = 1, #xs do full[i] = xs[i] end
        for j, e in ipairs(flat_in) do
          local i, which = e[1], e[3]
          if which then
            if full[i] == xs[i] then full[i] = {} end
            full[i][which] = ts[j]
          else
            full[i] = ts[j]
          end
        end
        return unpack(results(c, full))
      end)
      local targs = {}
      for j, e in ipairs(flat_in) do targs[j] = e[2] end
      check_outputs(c, c.name .. " (traced)", { f(unpack(targs)) })
      if c.grads then
        local sources = {}
        for k in pairs(c.grads) do sources[#sources + 1] = k end
        table.sort(sources)
        local tape = tide.GradientTape()
        local list = {}
        for _, k in ipairs(sources) do for _, p in ipairs(parts(xs[k])) do list[#list + 1] = p end end
        local loss = tape:run(function()
          for _, p in ipairs(list) do tape:watch(p) end
          local total
          for _, o in ipairs(results(c, xs)) do
            local s = tide.reduce_sum(o * weights(o))
            total = total and total + s or s
          end
          return total
        end)
        local gs = tape:gradient(loss, list, { unconnected_gradients = "zero" })
        local j = 0
        for _, k in ipairs(sources) do
          for q, e in ipairs(c.grads[k]) do
            j = j + 1
            matches(c.name .. ", gradient of argument " .. k .. " part " .. q, gs[j], e,
              (c.tol or 0) * 10 + GRAD_TOL[e.dtype])
          end
        end
      end
    end)
  end
end)
