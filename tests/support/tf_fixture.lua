-- tests/support/tf_fixture.lua — comparing tide with a fixture file of TF's results
-- (tests/fixtures/math/*.lua, made by the gen*.py there), shared by the specs that read them:
--   local fx = require "tf_fixture"
--   local F = fx.load("tf_special.lua")
--   fx.check_case(c, traced, spec)   -- spec = { calls =, errors =, differs =, any_zero_sign = }
--   for _, op, list in fx.by_op(F) ... -- the cases grouped by op, in file order
-- A case runs spec.calls[c.op](inputs, attrs); where TF refused it, tide must raise an error holding
-- spec.errors[c.op]; a case named in spec.differs is one where tide differs on purpose (its entry says
-- what tide gives, what TF's must still be, or a check of its own). Gradient cases run eagerly only.
local tide = require "tide"
local h = require "helpers"

local M = {}

local inf = math.huge

-- Relative tolerance per dtype: libm and Eigen round transcendentals apart by
-- an ulp or two, and tide computes halves in float32 where TF may not.
M.TOL = { float32 = 2e-6, float64 = 1e-12, float16 = 2e-3, bfloat16 = 1.6e-2 }
-- The smallest normal number: TF's CPU kernels flush subnormal results to 0
-- (docs/tf_differences.md), so a TF zero matches a tide subnormal of its sign.
M.TINY = { float32 = 2 ^ -126, float64 = 2 ^ -1022, float16 = 2 ^ -14, bfloat16 = 2 ^ -126 }

local root = debug.getinfo(1, "S").source:match("^@(.*)tests/") or ""

-- The fixture file tests/fixtures/math/<name>.
function M.load(name) return dofile(root .. "tests/fixtures/math/" .. name) end

-- A tide tensor from a fixture's { dtype, shape, values | fill }.
function M.make(spec)
  if spec.fill ~= nil then return tide.fill(spec.shape, spec.fill, { dtype = spec.dtype }) end
  if #spec.shape == 0 then return tide.tensor(spec.values[1], spec.dtype) end
  return tide.tensor(spec.values, spec.dtype):reshape(spec.shape)
end

local function is_neg_zero(v) return v == 0 and 1 / v < 0 end

-- Whether value g matches TF's w within tol (relative; a zero within tiny, of w's sign when zero_sign).
local function near(g, w, tol, tiny, zero_sign)
  if type(w) == "boolean" or not tol then return g == w end
  if w ~= w then return g ~= g end
  if w == inf or w == -inf then return g == w end
  if w == 0 then return math.abs(g) < tiny and (not zero_sign or is_neg_zero(w) == (g < 0 or is_neg_zero(g))) end
  return math.abs(g - w) <= tol * math.max(math.abs(w), tiny) -- subnormals: ulps of the smallest normal
end

-- Assert tensor `got` matches the fixture output `want`; `what` names it;
-- zero_sign: a zero's sign must match; loose: a tolerance instead of the dtype's.
-- ref (a list, optional): the exact values rounded to want's dtype (TF's float64 at the same
-- inputs), for functions TF computes less accurately in float32 and float16 than tide (which
-- computes in double and rounds once): a value may match ref instead of TF's where TF's is
-- finite and within 100 tolerances (absolute below 1) of ref, so NaN, infinities and zeros
-- TF gives on purpose still have to match.
function M.match(what, got, want, zero_sign, loose, ref)
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
  local tol, tiny = M.TOL[want.dtype] and (loose or M.TOL[want.dtype]), M.TINY[want.dtype] -- (integers stay exact)
  for k = 1, #wv do
    local g, w = gv[k], wv[k]
    local ok = near(g, w, tol, tiny, zero_sign)
    local r = ref and ref[k]
    if not ok and type(r) == "number" and r == r and math.abs(r) < inf and w == w and math.abs(w) < inf then
      ok = near(g, r, tol, tiny, false) and math.abs(w - r) <= 100 * tol * math.max(math.abs(r), 1)
    end
    if not ok then
      error(string.format("%s: value %d is %.17g, TF %.17g%s", what, k, g, w,
        w == 0 and (is_neg_zero(w) and " (-0)" or " (+0)") or ""), 0)
    end
  end
end

-- Run case c's call on tensors `ins`, through `fn` (the call itself or a trace of it).
local function outputs(calls, c, ins, traced)
  local call = calls[c.op]
  assert(call, c.name .. ": no tide call for op " .. c.op)
  local fn = function(...) return call({ ... }, c.attrs) end
  if traced then fn = tide.trace(fn) end
  return { fn(unpack(ins)) }
end

-- The case's gradients by tide's tape, for output gradient c.dy.
local function gradients(calls, c, ins)
  local tape = tide.GradientTape()
  local floats = {}
  for _, x in ipairs(ins) do
    if x.dtype:find("float") then floats[#floats + 1] = x end
  end
  local y = tape:run(function()
    for _, x in ipairs(floats) do tape:watch(x) end
    return calls[c.op](ins, c.attrs)
  end)
  return y, tape:gradient(y, floats, { output_gradients = M.make(c.dy) })
end

-- Check case c once (eagerly or traced) against spec's calls, errors and differs.
function M.check_case(c, traced, spec)
  local ins = {}
  for k, s in ipairs(c.inputs) do ins[k] = M.make(s) end
  local what = c.name .. (traced and " (traced)" or "")
  local zero_sign = not (spec.any_zero_sign and spec.any_zero_sign[c.op])
  if c.error then
    local ok, err = pcall(outputs, spec.calls, c, ins, traced)
    assert(not ok, what .. ": TF refused this call (" .. c.error .. ") but tide gave a result")
    local needle = spec.errors[c.op]
    assert(needle, what .. ": no expected message for op " .. c.op)
    assert(tostring(err):find(needle, 1, true), what .. ": error without '" .. needle .. "': " .. tostring(err))
    return
  end
  local d = spec.differs and spec.differs[c.name]
  if c.dy then
    if traced then return end -- gradients of traced calls: tests/spec/tracing/gradient_spec.lua's concern
    local y, grads = gradients(spec.calls, c, ins)
    local loose = d and d.loose
    M.match(what, y, c.out[1], zero_sign, loose)
    for k, want in ipairs(c.grads) do
      local tag = string.format("%s: gradient %d", what, k)
      if want == false then
        assert(grads[k] == nil, tag .. ": TF has none, tide gave one")
      elseif d and d.grads then
        h.close(grads[k], d.grads[k], M.TOL[want.dtype])
        h.close(want.values, d.tf_grads[k], M.TOL[want.dtype])
      else
        M.match(tag, grads[k], want, false, d and d.grad_loose or loose) -- a zero gradient's sign follows the order of the chain rule's products
      end
    end
    return
  end
  local got = outputs(spec.calls, c, ins, traced)
  assert(#got == #c.out, string.format("%s: %d outputs, TF %d", what, #got, #c.out))
  if d and d.check then return d.check(c, got) end
  if d and d.tide then
    local tol = d.tol or M.TOL[c.out[1].dtype] or 0
    local ok, err = pcall(h.close, got[1], d.tide, tol)
    assert(ok, what .. " (tide's documented answer): " .. tostring(err))
    ok, err = pcall(h.close, c.out[1].values, d.tf, tol)
    assert(ok, what .. " (TF's answer in the fixture no longer what docs/tf_differences.md says): " .. tostring(err))
    return
  end
  for k, want in ipairs(c.out) do
    M.match(what .. (k > 1 and " output " .. k or ""), got[k], want, zero_sign, d and d.loose,
      spec.use_ref and k == 1 and c.ref or nil)
  end
end

-- The cases of F grouped by op: a list of { op, cases } in the order ops first appear.
function M.by_op(F)
  local by, order = {}, {}
  for _, c in ipairs(F.cases) do
    if not by[c.op] then
      by[c.op] = { op = c.op, cases = {} }
      order[#order + 1] = by[c.op]
    end
    table.insert(by[c.op].cases, c)
  end
  return order
end

-- Assert every case of F has a call in spec, no name repeats, and every differs entry names a case.
function M.check_known(F, spec)
  local seen = {}
  for _, c in ipairs(F.cases) do
    assert(spec.calls[c.op], c.name .. ": op " .. c.op .. " has no tide call in this spec")
    assert(not seen[c.name], "duplicate case " .. c.name)
    seen[c.name] = true
  end
  for name in pairs(spec.differs or {}) do assert(seen[name], "differs names a case the fixture lacks: " .. name) end
end

return M
