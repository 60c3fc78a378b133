-- tests/spec/ops/math_tf_fixtures_spec.lua — tide's math ops against TensorFlow's
-- own results (tests/fixtures/math/tf_values.lua, made by gen.py there): the
-- new ops, the fixed edge cases, the scans along every axis, and the places
-- where tide differs on purpose (docs/tf_differences.md), eagerly and traced.
local tide = require "tide"
local h = require "helpers"

local root = debug.getinfo(1, "S").source:match("^@(.*)tests/") or ""
local F = dofile(root .. "tests/fixtures/math/tf_values.lua")

local nan, inf = 0 / 0, math.huge

-- Relative tolerance per dtype: libm and Eigen round transcendentals apart by
-- an ulp or two, and tide computes halves in float32 where TF may not.
local TOL = { float32 = 2e-6, float64 = 1e-12, float16 = 2e-3, bfloat16 = 1.6e-2 }
-- The smallest normal number: TF's CPU kernels flush subnormal results to 0
-- (docs/tf_differences.md), so a TF zero matches a tide subnormal of its sign.
local TINY = { float32 = 2 ^ -126, float64 = 2 ^ -1022, float16 = 2 ^ -14, bfloat16 = 2 ^ -126 }
-- Ops whose zero results have a sign TF's own kernels do not agree on (its
-- vector and scalar paths differ for x = -0): the sign of a zero is not compared.
local ANY_ZERO_SIGN = { xlogy = true, xlog1py = true, xdivy = true }

-- An options table of attrs' values under `keys` (nil when none is set:
-- an empty `{}` in the axis position would mean the empty axis list).
local function opts(a, keys)
  local o
  for _, k in ipairs(keys) do
    if a[k] ~= nil then
      o = o or {}
      o[k] = a[k]
    end
  end
  return o
end

-- The tide call for each op name of the fixtures: inputs (tensors), attrs.
local ones = tide.ones
local CALLS = {
  floormod = function(i) return tide.floormod(i[1], i[2]) end,
  is_inf = function(i) return tide.is_inf(i[1]) end,
  log_sigmoid = function(i) return tide.log_sigmoid(i[1]) end,
  rint = function(i) return tide.rint(i[1]) end,
  reduce_euclidean_norm = function(i, a)
    return tide.reduce_euclidean_norm(i[1], opts(a, { "axis", "keepdims" }))
  end,
  count_nonzero = function(i, a)
    return tide.count_nonzero(i[1], opts(a, { "axis", "keepdims", "dtype" }))
  end,
  cumsum = function(i, a) return tide.cumsum(i[1], a.axis, a.exclusive, a.reverse) end,
  cumprod = function(i, a) return tide.cumprod(i[1], a.axis, a.exclusive, a.reverse) end,
  cumulative_logsumexp = function(i, a) return tide.cumulative_logsumexp(i[1], a.axis, a.exclusive, a.reverse) end,
  gelu = function(i) return tide.nn.gelu(i[1]) end,
  gelu_approximate = function(i) return tide.nn.gelu(i[1], { approximate = true }) end,
  leaky_relu = function(i, a) return tide.nn.leaky_relu(i[1], a.alpha) end,
  conv2d = function(i, a) return tide.nn.conv2d(i[1], ones { a.k, 1, 2, 3 }, { 1, a.s, 1, 1 }, "VALID") end,
  depthwise_conv2d = function(i, a)
    return tide.nn.depthwise_conv2d(i[1], ones { a.k, 1, 2, 2 }, { 1, a.s, a.s, 1 }, "VALID")
  end,
  max_pool2d = function(i, a) return tide.nn.max_pool2d(i[1], { a.k, 1 }, { a.s, 1 }, "VALID") end,
  avg_pool2d = function(i, a) return tide.nn.avg_pool2d(i[1], { a.k, 1 }, { a.s, 1 }, "VALID") end,
  conv1d = function(i, a) return tide.nn.conv1d(i[1], ones { a.k, 2, 3 }, a.s, "VALID") end,
  conv2d_input_grad = function(i) return tide.nn.conv2d(i[1], ones { 3, 3, 1, 2 }, 1, "VALID") end,
  conv2d_transpose = function(i) return tide.nn.conv2d_transpose(i[1], ones { 3, 3, 1, 2 }, { 1, 2, 2, 1 }, 1, "VALID") end,
  avg_pool2d_grad = function(i) return tide.nn.avg_pool2d(i[1], 3, 1, "VALID") end,
  cast = function(i, a) return i[1]:cast(a.dtype) end,
  argmax = function(i, a) return tide.argmax(i[1], a.axis) end,
  argmin = function(i, a) return tide.argmin(i[1], a.axis) end,
  sort = function(i) return tide.sort(i[1]) end,
  sort_descending = function(i) return tide.sort(i[1], -1, "DESCENDING") end,
  reduce_mean = function(i) return tide.reduce_mean(i[1]) end,
  reduce_sum = function(i) return tide.reduce_sum(i[1]) end,
}

-- The plain elementwise ops (tide.ops.plain) need no entry: under their Lua
-- names, their public function on the inputs.
for _, e in ipairs(require("tide.ops.plain").list) do
  local f = (e.family == "math" and tide or tide[e.family])[e.lua]
  CALLS[e.lua] = CALLS[e.lua] or function(i) return f(unpack(i, 1, e.nin)) end
end

-- What tide says where TF refused the call.
local ERRORS = {
  truncatediv = "integer division by zero", truncatemod = "integer division by zero",
  floordiv = "integer division by zero", leaky_relu = "must be",
  conv2d = "output size would be negative", depthwise_conv2d = "output size would be negative",
  max_pool2d = "output size would be negative", avg_pool2d = "output size would be negative",
  conv1d = "output size would be negative",
}

-- A tide tensor from a fixture's { dtype, shape, values | fill }.
local function make(spec)
  if spec.fill ~= nil then return tide.fill(spec.shape, spec.fill, { dtype = spec.dtype }) end
  if #spec.shape == 0 then return tide.tensor(spec.values[1], spec.dtype) end
  return tide.tensor(spec.values, spec.dtype):reshape(spec.shape)
end

local function is_neg_zero(v) return v == 0 and 1 / v < 0 end

-- Assert tensor `got` matches the fixture output `want`; `what` names it.
local function match(what, got, want, zero_sign, loose)
  assert(tide.is_tensor(got), what .. ": no tensor")
  assert(got.dtype == want.dtype, string.format("%s: dtype %s, TF %s", what, got.dtype, want.dtype))
  local gs = got.shape:as_list()
  assert(table.concat(gs, ",") == table.concat(want.shape, ","),
    string.format("%s: shape (%s), TF (%s)", what, table.concat(gs, ","), table.concat(want.shape, ",")))
  local gv = h.values(got)
  local wv = want.values
  if want.fill ~= nil then
    wv = {}
    for k = 1, #gv do wv[k] = want.fill end
  end
  assert(#gv == #wv, string.format("%s: %d values, TF %d", what, #gv, #wv))
  local tol, tiny = loose or TOL[want.dtype], TINY[want.dtype]
  for k = 1, #wv do
    local g, w = gv[k], wv[k]
    local ok
    if type(w) == "boolean" or not tol then ok = g == w
    elseif w ~= w then ok = g ~= g
    elseif w == inf or w == -inf then ok = g == w
    elseif w == 0 then
      ok = math.abs(g) < tiny and (not zero_sign or is_neg_zero(w) == (g < 0 or is_neg_zero(g)))
    else ok = math.abs(g - w) <= tol * math.max(math.abs(w), tiny) end -- subnormals: ulps of the smallest normal
    if not ok then
      error(string.format("%s: value %d is %.17g, TF %.17g%s", what, k, g, w,
        w == 0 and (is_neg_zero(w) and " (-0)" or " (+0)") or ""), 0)
    end
  end
end

-- gelu's tanh form, accurately: x * sigmoid(2u), in doubles.
local function gelu_tanh(x)
  if x ~= x or x == -inf then return nan end
  if x == inf then return inf end
  local z = 2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
  return x * (z >= 0 and 1 / (1 + math.exp(-z)) or math.exp(z) / (1 + math.exp(z)))
end

-- Cases where tide differs from TF on purpose: `tide` is what tide gives, `tf`
-- what the fixture must still hold (each row of docs/tf_differences.md that a
-- value shows); `check` replaces both for cases judged by a formula.
local DIFFERS = {
  ["cast float32 to int8"] = { tide = { 127, -128, 0, 127, -128, 127, -1, 2 }, tf = { -24, 24, 0, 0, 0, 0, -1, 2 } },
  ["cast float32 to uint8"] = { tide = { 255, 0, 0, 255, 0, 255, 0, 2 }, tf = { 232, 24, 0, 0, 0, 0, 255, 2 } },
  ["cast float32 to int32"] = { tide = { 1000, -1000, 0, 2 ^ 31 - 1, -2 ^ 31, 2 ^ 31 - 1, -1, 2 },
                                tf = { 1000, -1000, -2 ^ 31, -2 ^ 31, -2 ^ 31, -2 ^ 31, -1, 2 } },
  ["cast float32 to int64"] = { tide = { 1000, -1000, 0, 2 ^ 63, -2 ^ 63, 1e10, -1, 2 },
                                tf = { 1000, -1000, -2 ^ 63, -2 ^ 63, -2 ^ 63, 1e10, -1, 2 } },
  ["argmax with NaN"] = { tide = { 1, 2 }, tf = { 2, 1 } },
  ["argmin with NaN"] = { tide = { 1, 2 }, tf = { 0, 0 } },
  ["sort with NaN descending"] = { tide = { nan, 3, 1, -inf }, tf = { 3, nan, 1, -inf } },
  ["reduce_mean float16 of 100000 ones"] = { tide = { 1 }, tf = { nan } },
  ["reduce_sum float16 of 4096 x 0.1"] = { tide = { 409.5 }, tf = { 408.5 } },
  ["exp float32 subnormal result"] = { tide = { 3.783505853e-44, 6.0546018954e-39 }, tf = { 0, 0 }, tol = 1e-6 },
  ["cumulative_logsumexp nan reverse=False"] = { tide = { 0, nan, nan }, tf = { 0, 0.6931471824645996, 1.5514447689056396 } },
  ["cumulative_logsumexp nan reverse=True"] = { tide = { nan, nan, 1 }, tf = { 1.861994743347168, 1.6931471824645996, 1 } },
  ["cumulative_logsumexp two +inf reverse=False"] = { tide = { 0, inf, inf, inf }, tf = { 0, inf, inf, nan } },
  ["cumulative_logsumexp two +inf reverse=True"] = { tide = { inf, inf, inf, inf }, tf = { nan, nan, inf, inf } },
  ["leaky_relu float64 alpha 0.1"] = { tide = { -0.1, 2 }, tf = { -0.10000000149011612, 2 }, tol = 1e-15 },
  ["reduce_euclidean_norm int64 wraps and truncates"] = { tide = { 5, 1, 0 }, tf = { 5, 1, -2 ^ 63 } },
  ["cumulative_logsumexp grad -inf"] = { grads = { { 0, 1.2689414213699951, 0.7310585786300049 } },
                                         tf_grads = { { nan, 1.2689414213699951, 0.7310585786300049 } } },
}
-- gelu(approximate=true): TF computes 0.5x(1 + tanh(u)), which rounds to -0
-- (or loses digits) in the negative tail; tide gives x * sigmoid(2u) there.
for _, dt in ipairs { "float32", "float64", "float16", "bfloat16" } do
  DIFFERS["gelu approximate " .. dt] = {
    check = function(c, got)
      local xs = c.inputs[1].values
      local want = {}
      for k, x in ipairs(xs) do want[k] = gelu_tanh(x) end
      h.close(got[1], want, TOL[dt])
      local tf = c.out[1].values
      assert(tf[3] == 0 and 1 / tf[3] < 0, "TF's gelu_approximate(-10) is no longer -0: update the docs")
      if dt == "float32" or dt == "float64" then
        assert(h.values(got[1])[3] < 0, "tide's gelu_approximate(-10) should be a negative number")
      end
    end,
  }
end
-- TF 2.21's gelu is accurate to about 1e-7 relative in float64 and loses a
-- few more digits near x = -3 in float32 (both forms); tide's is within an
-- ulp or two of the exact value. The fixture's `ref` is Python's math.erfc.
DIFFERS["gelu approximate grad float32"] = { loose = 3e-5 }
DIFFERS["gelu approximate grad float64"] = { loose = 1e-6 }
DIFFERS["gelu grad float64"] = { loose = 2e-5 }
DIFFERS["gelu grad float32"] = { loose = 1e-5 }
DIFFERS["gelu float64"] = {
  check = function(c, got)
    h.close(got[1], c.ref, 1e-13)
    h.close(c.out[1].values, c.ref, 2e-6)
    local x = c.inputs[1].values
    assert(x[6] == -3 and math.abs(c.out[1].values[6] / c.ref[6] - 1) > 1e-8, "TF's float64 gelu(-3) is now exact")
  end,
}
-- Halves: tide rounds the float32 result once; TF computes in the half type
-- and rounds every step (gelu(-10) in bfloat16: TF -8.6e-23, exact -7.62e-23).
for _, dt in ipairs { "float16", "bfloat16" } do
  DIFFERS["gelu " .. dt] = { check = function(c, got) match(c.name, got[1], { dtype = dt, shape = c.out[1].shape,
    values = c.ref }, true) end }
end

-- Run case c's call on tensors `ins`, through `fn` (the call itself or a trace of it).
local function outputs(c, ins, traced)
  local call = CALLS[c.op]
  assert(call, c.name .. ": no tide call for op " .. c.op)
  local fn = function(...) return call({ ... }, c.attrs) end
  if traced then fn = tide.trace(fn) end
  return { fn(unpack(ins)) }
end

-- The case's gradients by tide's tape, for output gradient c.dy.
local function gradients(c, ins)
  local tape = tide.GradientTape()
  local floats = {}
  for _, x in ipairs(ins) do
    if x.dtype:find("float") then floats[#floats + 1] = x end
  end
  local y = tape:run(function()
    for _, x in ipairs(floats) do tape:watch(x) end
    return CALLS[c.op](ins, c.attrs)
  end)
  return y, tape:gradient(y, floats, { output_gradients = make(c.dy) })
end

-- Check case c once (eagerly or traced).
local function check_case(c, traced)
  local ins = {}
  for k, spec in ipairs(c.inputs) do ins[k] = make(spec) end
  local what = c.name .. (traced and " (traced)" or "")
  local zero_sign = not ANY_ZERO_SIGN[c.op]
  if c.error then
    local ok, err = pcall(outputs, c, ins, traced)
    assert(not ok, what .. ": TF refused this call (" .. c.error .. ") but tide gave a result")
    local needle = ERRORS[c.op]
    assert(needle, what .. ": no expected message for op " .. c.op)
    assert(tostring(err):find(needle, 1, true), what .. ": error without '" .. needle .. "': " .. tostring(err))
    return
  end
  local d = DIFFERS[c.name]
  if c.dy then
    if traced then return end -- gradients of traced calls: tests/spec/tracing/gradient_spec.lua's concern
    local y, grads = gradients(c, ins)
    local loose = d and d.loose
    match(what, y, c.out[1], zero_sign, loose)
    for k, want in ipairs(c.grads) do
      local tag = string.format("%s: gradient %d", what, k)
      if want == false then
        assert(grads[k] == nil, tag .. ": TF has none, tide gave one")
      elseif d and d.grads then
        h.close(grads[k], d.grads[k], TOL[want.dtype])
        h.close(want.values, d.tf_grads[k], TOL[want.dtype])
      else
        match(tag, grads[k], want, false, loose) -- a zero gradient's sign follows the order of the chain rule's products
      end
    end
    return
  end
  local got = outputs(c, ins, traced)
  assert(#got == #c.out, string.format("%s: %d outputs, TF %d", what, #got, #c.out))
  if d and d.check then return d.check(c, got) end
  if d then
    local tol = d.tol or TOL[c.out[1].dtype] or 0
    local ok, err = pcall(h.close, got[1], d.tide, tol)
    assert(ok, what .. " (tide's documented answer): " .. tostring(err))
    ok, err = pcall(h.close, c.out[1].values, d.tf, tol)
    assert(ok, what .. " (TF's answer in the fixture no longer what docs/tf_differences.md says): " .. tostring(err))
    return
  end
  for k, want in ipairs(c.out) do match(what .. (k > 1 and " output " .. k or ""), got[k], want, zero_sign) end
end

describe("tide against TensorFlow " .. F.tf_version .. " (tests/fixtures/math)", function()
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has the fixture's cases, each known to the spec", function()
    assert.is_true(#F.cases > 250)
    local seen = {}
    for _, c in ipairs(F.cases) do
      assert(CALLS[c.op], c.name .. ": op " .. c.op .. " has no tide call in this spec")
      assert(not seen[c.name], "duplicate case " .. c.name)
      seen[c.name] = true
    end
    for name in pairs(DIFFERS) do assert(seen[name], "DIFFERS names a case the fixture lacks: " .. name) end
  end)

  -- One test per op, so a failure names it; every case runs eagerly and traced.
  local by_op, order = {}, {}
  for _, c in ipairs(F.cases) do
    if not by_op[c.op] then
      by_op[c.op] = {}
      order[#order + 1] = c.op
    end
    table.insert(by_op[c.op], c)
  end
  for _, op in ipairs(order) do
    it(op .. " (" .. #by_op[op] .. " cases)", function()
      for _, c in ipairs(by_op[op]) do
        check_case(c, false)
        check_case(c, true)
      end
    end)
  end
end)
