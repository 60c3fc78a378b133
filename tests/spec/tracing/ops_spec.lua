-- tests/spec/tracing/ops_spec.lua — every registry op gives the same result
-- traced as eager: each case of tests/support/trace_ops_cases.lua runs eagerly, then
-- through tide.trace with its tensors as arguments (symbolic, not constants),
-- then again under an input_signature of None dims; dtypes, shapes and values
-- must agree (exactly, or within a dtype's tolerance where summation order may
-- differ). The random ops are checked for shapes, dtypes and seeded repeats.
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"
local T = require "trace_ops_cases"
local ffi, C = binding.ffi, binding.C
local None = tide.None

local TOL = { float32 = 1e-5, float64 = 1e-12, float16 = 2e-3, bfloat16 = 1e-2 }
local RANDOM = { random_uniform = true, random_normal = true, truncated_normal = true, random_shuffle = true,
  sample_distorted_bounding_box = true }

local function pack(...) return { n = select("#", ...), ... } end

-- The registry's op names, in code order.
local function op_names()
  local names = {}
  for op = 0, tonumber(C.TIDE_NUM_OPS) - 1 do names[#names + 1] = ffi.string(C.tide_op_name(op)) end
  return names
end

-- Assert results `got` equal `want` (lists of tensors); `what` names the case.
local function same(what, want, got, approx)
  assert(want.n == got.n, string.format("%s: %d results eagerly, %d traced", what, want.n, got.n))
  for i = 1, want.n do
    local e, g = want[i], got[i]
    local tag = string.format("%s, result %d", what, i)
    assert(g.dtype == e.dtype, string.format("%s: dtype %s traced, %s eager", tag, g.dtype, e.dtype))
    local es, gs = e.shape:as_list(), g.shape:as_list()
    assert(table.concat(es, ",") == table.concat(gs, ","), string.format("%s: shape (%s) traced, (%s) eager",
      tag, table.concat(gs, ","), table.concat(es, ",")))
    local ok, err = pcall(h.close, g, e, approx and TOL[e.dtype] or 0)
    if not ok then error(tag .. ": " .. tostring(err), 0) end
  end
end

-- A signature of the inputs' dtypes with every dim None.
local function none_signature(inputs)
  local sig = {}
  for i, x in ipairs(inputs) do
    local dims = {}
    for d = 1, x.ndim do dims[d] = None end
    sig[i] = tide.TensorSpec(dims, x.dtype)
  end
  return sig
end

-- A signature of the inputs' dtypes with every rank unknown (TensorSpec(nil)).
local function unknown_rank_signature(inputs)
  local sig = {}
  for i, x in ipairs(inputs) do sig[i] = tide.TensorSpec(nil, x.dtype) end
  return sig
end

-- The unknown-rank run of a case: a case whose op refuses an unknown rank
-- names the error (opts.rank_error); the others give the eager results.
local function check_unknown_rank(what, fn, inputs, want, opts)
  local sig = opts.rank_signature or unknown_rank_signature(inputs)
  local tr = tide.trace(fn, { input_signature = sig })
  local ok, got = pcall(function() return pack(tr(unpack(inputs))) end)
  if opts.rank_error then
    assert(not ok, what .. " (unknown rank): expected an error containing '" .. opts.rank_error .. "', but it ran")
    assert(tostring(got):find(opts.rank_error, 1, true), string.format(
      "%s (unknown rank): expected an error containing '%s', got: %s", what, opts.rank_error, tostring(got)))
    return
  end
  if not ok then error(what .. " (unknown rank): traced call failed: " .. tostring(got), 0) end
  same(what .. " (unknown rank)", want, got, opts.approx)
  same(what .. " (unknown rank, second run)", want, pack(tr(unpack(inputs))), opts.approx)
end

local FLOATS = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- The tape's gradients of sum(y * y + y) over fn's float results y, with
-- respect to its float inputs: a table (index i: input i's gradient, or false).
local function tape_gradients(fn, inputs)
  local tape = tide.GradientTape { persistent = true }
  local loss = tape:run(function()
    for _, x in ipairs(inputs) do if FLOATS[x.dtype] then tape:watch(x) end end
    local r = pack(fn(unpack(inputs)))
    local total
    for i = 1, r.n do
      if FLOATS[r[i].dtype] then
        local s = tide.reduce_sum(r[i] * r[i] + r[i])
        total = total and total + tide.cast(s, total.dtype) or s
      end
    end
    return total
  end)
  if loss == nil then return nil end
  local out = {}
  for i, x in ipairs(inputs) do
    if FLOATS[x.dtype] then out[i] = tape:gradient(loss, x) or false else out[i] = false end
  end
  return out
end

-- The gradient run of a case whose op is differentiable: a tape inside a
-- function traced with unknown ranks gives the eager tape's gradients (an op
-- whose gradient needs a rank names the error: opts.grad_rank_error).
local function check_unknown_rank_gradients(what, fn, inputs, opts)
  local ok0, want = pcall(tape_gradients, fn, inputs)
  if not ok0 or want == nil then return end -- no eager gradient to compare with (checked in tests/spec/grad)
  local sig = opts.rank_signature or unknown_rank_signature(inputs)
  local tr = tide.trace(function(...) return tape_gradients(fn, { ... }) end, { input_signature = sig })
  local ok, got = pcall(tr, unpack(inputs))
  if opts.grad_rank_error then
    assert(not ok, what .. " (gradients, unknown rank): expected an error containing '" .. opts.grad_rank_error ..
      "', but it ran")
    assert(tostring(got):find(opts.grad_rank_error, 1, true), string.format(
      "%s (gradients, unknown rank): expected an error containing '%s', got: %s", what, opts.grad_rank_error,
      tostring(got)))
    return
  end
  if not ok then error(what .. " (gradients, unknown rank): traced call failed: " .. tostring(got), 0) end
  for i = 1, #inputs do
    local e, g = want[i], got[i]
    if e then
      assert(g, string.format("%s (gradients, unknown rank): input %d has a gradient eagerly, none traced", what, i))
      same(string.format("%s (gradient %d, unknown rank)", what, i), pack(e), pack(g), true)
    end
  end
end

-- Run one case: eager, traced, traced with None dims, and with unknown ranks
-- (values, and gradients where the op has them).
local function check(name, label, fn, inputs, opts)
  opts = opts or {}
  local what = name .. " [" .. label .. "]"
  local want = pack(fn(unpack(inputs)))
  local tf = tide.trace(fn)
  local ok, got = pcall(function() return pack(tf(unpack(inputs))) end)
  if not ok then error(what .. ": traced call failed: " .. tostring(got), 0) end
  same(what, want, got, opts.approx)
  -- a second run must not overwrite the first run's results (the memory plan)
  same(what .. " (second run)", want, pack(tf(unpack(inputs))), opts.approx)
  same(what .. " (first run, after the second)", want, got, opts.approx)
  local node = opts.node == nil and name or opts.node
  if node then -- the op ran in the graph, not eagerly while tracing
    local text = tf:get_concrete_function(unpack(inputs)):graph_text()
    assert(text:find("= " .. node .. "(", 1, true), what .. ": no " .. node .. " node in the graph:\n" .. text)
  end
  if #inputs == 0 then return end
  if opts.none ~= false then
    local tn = tide.trace(fn, { input_signature = opts.signature or none_signature(inputs) })
    ok, got = pcall(function() return pack(tn(unpack(inputs))) end)
    if not ok then error(what .. " (None dims): traced call failed: " .. tostring(got), 0) end
    same(what .. " (None dims)", want, got, opts.approx)
    same(what .. " (None dims, second run)", want, pack(tn(unpack(inputs))), opts.approx)
    same(what .. " (None dims, first run, after the second)", want, got, opts.approx)
  end
  if opts.rank ~= false then
    check_unknown_rank(what, fn, inputs, want, opts)
    local differentiable = bit.band(C.tide_op_flags(C.tide_op_lookup(name)), C.TIDE_OPF_NO_GRAD) == 0
    if differentiable and opts.grad ~= false then check_unknown_rank_gradients(what, fn, inputs, opts) end
  end
end

describe("every registry op, traced and eager", function()
  -- each case traces a new Function on purpose: no retracing advice
  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("has a case for every op", function()
    for _, name in ipairs(op_names()) do
      assert(T.cases[name] or RANDOM[name],
        "registry op '" .. name .. "' has no case in tests/support/trace_ops_cases.lua")
    end
  end)

  for _, name in ipairs(op_names()) do
    if T.cases[name] then
      it(name, function()
        local n = 0
        T.cases[name](function(label, fn, inputs, opts)
          check(name, label, fn, inputs, opts)
          n = n + 1
        end)
        assert(n > 0, name .. ": no cases ran")
      end)
    end
  end
end)

-- The random ops: eager and traced draws are the same op on the same
-- streams, so after set_seed a traced call draws what an eager call would.
describe("random registry ops, traced and eager", function()
  local R = tide.random
  local rows = T.data({ 5, 2 }, "int32")
  -- op name -> list of { label, fn(x, seed), inputs }
  local DRAWS = {
    random_uniform = {
      { "float32", function(s) return R.uniform({ 2, 3 }, { seed = s }) end },
      { "float64 bounds", function(s) return R.uniform({ 4 }, { minval = -2, maxval = 3, dtype = "float64", seed = s }) end },
      { "int32", function(s) return R.uniform({ 3, 2 }, { maxval = 10, dtype = "int32", seed = s }) end },
      { "shape of x", function(s, x) return R.uniform(tide.shape(x), { seed = s }) end, { T.data({ 2, 3 }) } },
    },
    random_normal = {
      { "float32", function(s) return R.normal({ 2, 3 }, { seed = s }) end },
      { "float64", function(s) return R.normal({ 5 }, { mean = 1, stddev = 2, dtype = "float64", seed = s }) end },
      { "shape of x", function(s, x) return R.normal(tide.shape(x), { seed = s }) end, { T.data({ 3, 1 }) } },
    },
    truncated_normal = {
      { "float32", function(s) return R.truncated_normal({ 2, 3 }, { seed = s }) end },
      { "float16", function(s) return R.truncated_normal({ 7 }, { dtype = "float16", seed = s }) end },
      { "shape of x", function(s, x) return R.truncated_normal(tide.shape(x), { seed = s }) end, { T.data({ 4 }) } },
    },
    random_shuffle = {
      { "rows", function(s, x) return R.shuffle(x, { seed = s }) end, { rows } },
      { "strided", function(s, x) return R.shuffle(x, { seed = s }) end, { T.data({ 2, 5 }, "float32"):transpose() } },
    },
    sample_distorted_bounding_box = { -- (its crop as a box: one attempt draws one block)
      { "a box", function(s, b)
        return select(3, tide.image.sample_distorted_bounding_box({ 400, 500, 3 }, b, { seed = s, area_range = { 0.1, 0.9 } }))
      end, { tide.tensor({ { { 0.1, 0.2, 0.6, 0.7 } } }, "float32") } },
    },
  }

  local function each(f)
    for name, list in pairs(DRAWS) do
      for _, c in ipairs(list) do f(name .. " [" .. c[1] .. "]", name, c[2], c[3] or {}) end
    end
  end

  -- `fn` with its seed fixed (nil: the global stream), traced; inputs are arguments.
  local function traced(fn, seed, sig)
    return tide.trace(function(...) return fn(seed, ...) end, sig and { input_signature = sig } or nil)
  end

  setup(function() tide.config.set_retracing_warning { enabled = false } end)
  teardown(function() tide.config.set_retracing_warning { enabled = true } end)

  it("covers every random op of the registry", function()
    for _, name in ipairs(op_names()) do
      if RANDOM[name] then assert(DRAWS[name], "random op '" .. name .. "' has no case") end
    end
  end)

  it("draw the same numbers traced as eager after set_seed, from the global stream", function()
    each(function(what, name, fn, inputs)
      R.set_seed(11)
      local want = pack(fn(nil, unpack(inputs)), fn(nil, unpack(inputs)))
      local tf = traced(fn, nil)
      R.set_seed(11) -- tracing (on the first call) draws nothing: the graph draws when it runs
      local got = pack(tf(unpack(inputs)), tf(unpack(inputs)))
      same(what, want, got)
      local text = tf:get_concrete_function(unpack(inputs)):graph_text()
      assert(text:find("= " .. name .. "(", 1, true), what .. ": no " .. name .. " node:\n" .. text)
      R.set_seed(11)
      same(what .. " (set_seed again)", want, pack(tf(unpack(inputs)), tf(unpack(inputs))))
      -- without set_seed, each call draws new numbers
      local a, b = tf(unpack(inputs)), tf(unpack(inputs))
      if name ~= "random_shuffle" then
        assert(not pcall(h.close, a, b, 0), what .. ": two calls drew the same numbers")
      end
    end)
  end)

  it("share an op seed's stream between eager and traced draws", function()
    each(function(what, _, fn, inputs)
      R.set_seed(5)
      local e1, e2, e3 = fn(42, unpack(inputs)), fn(42, unpack(inputs)), fn(42, unpack(inputs))
      local tf = traced(fn, 42)
      R.set_seed(5)
      same(what, pack(e1, e2), pack(tf(unpack(inputs)), tf(unpack(inputs))))
      same(what .. " (eager after traced)", pack(e3), pack(fn(42, unpack(inputs))))
      R.set_seed(5) -- restarts the stream for the graph too
      same(what .. " (set_seed again)", pack(e1), pack(tf(unpack(inputs))))
      -- another op seed is another stream
      R.set_seed(5)
      if #inputs == 0 then assert(not pcall(h.close, fn(43), e1, 0), what .. ": op seeds 42 and 43 drew alike") end
    end)
  end)

  it("keep shapes and dtypes with None dims, and shuffle only reorders rows", function()
    local x = T.data({ 6, 2 }, "float32")
    local tf = traced(function(s, v) return R.shuffle(v, { seed = s }) end, 3,
      { tide.TensorSpec({ None, None }, "float32") })
    R.set_seed(2)
    local want = R.shuffle(x, { seed = 3 })
    R.set_seed(2)
    same("random_shuffle (None dims)", pack(want), pack(tf(x)))
    local seen = {}
    for _, row in ipairs(want:totable()) do seen[row[1] .. "," .. row[2]] = true end
    for _, row in ipairs(x:totable()) do assert(seen[row[1] .. "," .. row[2]], "shuffle lost a row") end
    local y = tf(T.data({ 3, 2 }, "float32"))
    assert.are.same({ 3, 2 }, y.shape:as_list())
  end)
end)
