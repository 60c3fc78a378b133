-- stdlib/tide/tracing/keras_ops.lua — the keras.ops names that need tracing or the tape (cond, while_loop,
-- fori_loop, scan, map, switch, associative_scan, custom_gradient, ...) and the "core" helpers (shape, dtype,
-- convert_to_tensor); init.lua adds them to tide.ops, which sits on the ops floor below these.
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local dyn = require "tide.ops.dynamic_shape"
local tensor = require "tide.tensor"
local tape_recorder = require "tide.tape_recorder"
local tape = require "tide.tape"
local control = require "tide.tracing.control"

local M = {}
local fmt = string.format
local unpack = unpack or table.unpack

M.cond = control.cond
M.stop_gradient = tape_recorder.stop_gradient
M.custom_gradient = tape.custom_gradient

-- while_loop(cond, body, loop_vars, maximum_iterations=None)
function M.while_loop(cond_fn, body_fn, loop_vars, ...)
  local o = args.parse("while_loop", { "maximum_iterations" }, ...)
  return control.while_loop(cond_fn, body_fn, loop_vars, { maximum_iterations = o.maximum_iterations })
end

-- fori_loop(lower, upper, body_fun, init_val): val = body_fun(i, val) for i = lower .. upper - 1.
function M.fori_loop(lower, upper, body, init)
  if type(body) ~= "function" then binding.error("fori_loop: body_fun must be a function, got " .. type(body)) end
  if type(lower) == "number" and type(upper) == "number" then
    local val = init
    for i = lower, upper - 1 do val = body(i, val) end
    return val
  end
  local lo = convert.arg(lower, "fori_loop")
  local _, out = control.while_loop(function(i) return math_ops.less(i, upper) end,
    function(i, val) return math_ops.add(i, 1), body(i, val) end, { lo, init })
  return out
end

-- The length of xs' leading dim (known), or an error naming the op.
local function leading(op, xs)
  local n = xs.shape[1]
  if type(n) ~= "number" or n < 0 then
    binding.error(fmt("%s: xs needs a known leading dim (tide unrolls the loop), got shape %s", op,
      tostring(xs.shape)))
  end
  return n
end

-- scan(f, init, xs=None, length=None, reverse=False, unroll=1): carry, ys with (carry, y) = f(carry, x) over
-- xs' leading dim, unrolled (traced functions get one copy of f per step).
function M.scan(f, init, ...)
  local o = args.parse("scan", { "xs", "length", "reverse", "unroll" }, ...)
  if type(f) ~= "function" then binding.error("scan: f must be a function, got " .. type(f)) end
  local xs = o.xs ~= nil and convert.arg(o.xs, "scan") or nil
  local n = xs and leading("scan", xs) or o.length
  if type(n) ~= "number" then binding.error("scan: give xs or a length") end
  local carry, ys = init, {}
  for step = 0, n - 1 do
    local i = o.reverse and n - 1 - step or step
    local y
    carry, y = f(carry, xs and xs[i] or nil)
    ys[i + 1] = y
  end
  if #ys == 0 or ys[1] == nil then return carry, nil end
  return carry, shape_ops.stack(ys, 0)
end

-- map(f, xs): f applied to each slice of xs' leading dim, stacked (unrolled).
function M.map(f, xs)
  if type(f) ~= "function" then binding.error("map: f must be a function, got " .. type(f)) end
  xs = convert.arg(xs, "map")
  local n = leading("map", xs)
  local out = {}
  for i = 0, n - 1 do out[i + 1] = f(xs[i]) end
  if n == 0 then binding.error("map: xs is empty") end
  return shape_ops.stack(out, 0)
end
M.vectorized_map = M.map

-- associative_scan(f, elems, reverse=False, axis=0): the running f-combination along axis (sequential).
function M.associative_scan(f, elems, ...)
  local o = args.parse("associative_scan", { "reverse", "axis" }, ...)
  if type(f) ~= "function" then binding.error("associative_scan: f must be a function, got " .. type(f)) end
  elems = convert.arg(elems, "associative_scan")
  local ax = o.axis or 0
  local parts = shape_ops.unstack(elems, { axis = ax })
  local n = #parts
  local out = {}
  local acc
  for step = 1, n do
    local i = o.reverse and n + 1 - step or step
    acc = acc == nil and parts[i] or (o.reverse and f(parts[i], acc) or f(acc, parts[i]))
    out[i] = acc
  end
  return shape_ops.stack(out, ax)
end

-- switch(index, branches, ...operands): branches[index + 1](...operands) (index clamped, as Keras).
function M.switch(index, branches, ...)
  if type(branches) ~= "table" or #branches == 0 then binding.error("switch: branches must be a non-empty list") end
  local operands = { ... }
  local nops = select("#", ...)
  if type(index) == "number" or not tensor.is_symbolic(index) then
    local i = type(index) == "number" and index or convert.arg(index, "switch"):item()
    i = math.max(0, math.min(#branches - 1, i))
    return branches[i + 1](unpack(operands, 1, nops))
  end
  local function pick(lo)
    if lo == #branches - 1 then return branches[lo + 1](unpack(operands, 1, nops)) end
    return control.cond(math_ops.less_equal(index, lo), function() return branches[lo + 1](unpack(operands, 1, nops)) end,
      function() return pick(lo + 1) end)
  end
  return pick(0)
end

-- jvp(fun, primals, tangents, has_aux=False): fun's outputs at primals and their directional derivative
-- along tangents (forward mode), computed as two reverse passes: J^T u for a watched cotangent u, then the
-- gradient of <J^T u, t> in u, which is J t. primals and tangents are lists of tensors; fun returns a
-- tensor or a list of them (and its aux as a second value with has_aux). Returns outputs, tangents_out[, aux].
function M.jvp(fun, primals, tangents, has_aux)
  if type(fun) ~= "function" then binding.error("jvp: fun must be a function, got " .. type(fun)) end
  if type(primals) ~= "table" or binding.istensor(primals) or type(tangents) ~= "table" or
      binding.istensor(tangents) or #primals ~= #tangents or #primals == 0 then
    binding.error("jvp: primals and tangents must be lists of tensors of one (nonzero) length")
  end
  local ps, ts = {}, {}
  for i = 1, #primals do
    -- a fresh tensor per argument: the same tensor given twice is two arguments (two directions)
    ps[i] = math_ops.add(convert.arg(primals[i], "jvp"), 0)
    ts[i] = convert.arg(tangents[i], "jvp")
    if tostring(ps[i].shape) ~= tostring(ts[i].shape) or ps[i].dtype ~= ts[i].dtype then
      binding.error(string.format("jvp: tangent %d is %s %s but its primal is %s %s", i, ts[i].dtype,
        tostring(ts[i].shape), ps[i].dtype, tostring(ps[i].shape)))
    end
  end
  local outer = tape.GradientTape { persistent = true }
  local outs, aux, us, single
  local total = outer:run(function()
    local inner = tape.GradientTape()
    local res = { inner:run(function()
      for _, p in ipairs(ps) do inner:watch(p) end
      return fun(unpack(ps, 1, #ps))
    end) }
    if has_aux then aux = res[2] end
    outs = res[1]
    single = binding.istensor(outs)
    local list = single and { outs } or outs
    us = {}
    for i, y in ipairs(list) do
      us[i] = math_ops.mul(y, 0)
      outer:watch(us[i])
    end
    local gs = inner:gradient(list, ps, { output_gradients = us, unconnected_gradients = "zero" })
    local acc
    for i, g in ipairs(gs) do
      local term = require("tide.ops.reduce").reduce_sum(math_ops.mul(g, ts[i]))
      acc = acc and math_ops.add(acc, term) or term
    end
    return acc
  end)
  local jt = outer:gradient(total, us, { unconnected_gradients = "zero" })
  local t_out = single and jt[1] or jt
  if has_aux then return outs, t_out, aux end
  return outs, t_out
end

-- vectorize(pyfunc, {excluded=, signature=}): numpy's vectorize: a function that calls pyfunc on each
-- element (no signature: the arguments broadcast to one shape) or on each core slice (signature like
-- "(n),(n)->()": the core dims are the trailing ones; the leading dims must agree), stacking the results.
-- excluded lists argument positions (1-based) passed through whole. The loop is unrolled (known dims).
function M.vectorize(fn, opts)
  if type(fn) ~= "function" then binding.error("vectorize: pyfunc must be a function, got " .. type(fn)) end
  opts = opts or {}
  local excluded = {}
  for _, i in ipairs(opts.excluded or {}) do excluded[i] = true end
  local cores
  if opts.signature ~= nil then
    local ins = type(opts.signature) == "string" and opts.signature:match("^%s*(.-)%s*%->")
    if not ins or not ins:find("(", 1, true) or ins:gsub("%(.-%)", ""):gsub("[,%s]", "") ~= "" then
      binding.error("vectorize: signature must read like \"(n),(n)->()\"")
    end
    cores = {}
    for group in ins:gmatch("%((.-)%)") do
      local n = 0
      for _ in group:gmatch("[%w_]+") do n = n + 1 end
      cores[#cores + 1] = n
    end
  end
  return function(...)
    local a, n = { ... }, select("#", ...)
    local vec, lead = {}, nil
    for i = 1, n do
      if not excluded[i] then
        a[i] = convert.arg(a[i], "vectorize")
        vec[#vec + 1] = i
      end
    end
    if #vec == 0 then return fn(...) end
    if not cores then -- broadcast every vectorized argument to one shape
      local zero = math_ops.mul(a[vec[1]], 0)
      for k = 2, #vec do zero = math_ops.add(zero, math_ops.cast(math_ops.mul(a[vec[k]], 0), zero.dtype)) end
      lead = zero.shape:as_list()
      for _, i in ipairs(vec) do
        a[i] = math_ops.add(a[i], math_ops.cast(zero, a[i].dtype))
      end
    end
    local flat = {}
    local count = 1
    for k, i in ipairs(vec) do
      local sh = a[i].shape:as_list()
      local core = cores and (cores[k] or 0) or 0
      local l = {}
      for d = 1, #sh - core do l[d] = sh[d] end
      if lead and table.concat(lead, ",") ~= table.concat(l, ",") then
        binding.error("vectorize: the arguments' loop dims differ: (" .. table.concat(lead, ", ") .. ") and (" ..
          table.concat(l, ", ") .. ")")
      end
      lead = l
      local rest = { -1 }
      for d = #sh - core + 1, #sh do rest[#rest + 1] = sh[d] end
      flat[i] = shape_ops.reshape(a[i], rest)
    end
    for _, d in ipairs(lead) do count = count * d end
    if count == 0 then binding.error("vectorize: nothing to loop over (a dim of 0)") end
    local outs = {}
    for j = 0, count - 1 do
      local call = {}
      for i = 1, n do call[i] = flat[i] and flat[i][j] or a[i] end
      outs[j + 1] = fn(unpack(call, 1, n))
    end
    local y = shape_ops.stack(outs, 0)
    local shp = {}
    for d, v in ipairs(lead) do shp[d] = v end
    local ysh = y.shape:as_list()
    for d = 2, #ysh do shp[#shp + 1] = ysh[d] end
    return shape_ops.reshape(y, shp)
  end
end

-- shape(x): a Lua list of x's dims (an unknown dim of a traced tensor is a 0-d int32 tensor).
function M.shape(x)
  x = convert.arg(x, "shape")
  local out = {}
  for i, d in ipairs(x.shape:as_list()) do
    out[i] = (type(d) == "number" and d >= 0) and d or dyn.size_along(x, i - 1)
  end
  return out
end
function M.size(x) return math_ops.cast(dyn.num_elements(convert.arg(x, "size")), "int32") end
function M.dtype(x) return convert.arg(x, "dtype").dtype end
function M.is_tensor(x) return binding.istensor(x) end

-- convert_to_tensor(x, dtype=None, sparse=None) and array(x, dtype=None)
function M.convert_to_tensor(x, ...)
  local o = args.parse("convert_to_tensor", { "dtype", "sparse", "ragged" }, ...)
  if x == nil then binding.error("convert_to_tensor: x is nil") end
  local t = binding.istensor(x) and x or convert.tensor(x, o.dtype)
  if o.dtype ~= nil and t.dtype ~= o.dtype then t = math_ops.cast(t, o.dtype) end
  return t
end
function M.array(x, ...)
  local o = args.parse("array", { "dtype" }, ...)
  return M.convert_to_tensor(x, { dtype = o.dtype })
end
-- convert_to_numpy(x): a Lua table of x's values (tide has no numpy; this is x:totable()).
function M.convert_to_numpy(x)
  x = convert.arg(x, "convert_to_numpy")
  if tensor.is_symbolic(x) then binding.error("convert_to_numpy: x is symbolic (inside tide.trace)") end
  return x:totable()
end

-- get_item(x, key): x[key] for a number, x:slice(key) for a slice spec ({0, {1, 3}}, "...", ...).
function M.get_item(x, key)
  x = convert.arg(x, "get_item")
  if type(key) == "number" then return x[key] end
  if type(key) == "table" then return x:slice(key) end
  binding.error("get_item: key must be an index or a slice spec table, got " .. type(key))
end

return M
