-- tests/support/trace_ops_cases.lua — the calls tests/spec/tracing/ops_spec.lua makes of
-- every deterministic registry op, each with its eager inputs, so that one
-- spec can run them eagerly, traced, traced with unknown (None) dims, and
-- traced with unknown ranks (values, and a tape's gradients inside the trace).
--
-- M.cases[op name](add) calls add(label, fn, inputs, opts) once per case:
--   fn      a Lua function of the inputs (tensors), returning tensors
--   opts    approx = true    compare with a dtype's tolerance (the summation
--                            order of a reduction, matmul or conv may differ)
--           none = false     skip the None-dims trace (the op needs known dims)
--           signature = {...} the input_signature of the None-dims trace (default:
--                            every dim None), for ops that need some dims known
--           rank_signature = {...} the input_signature of the unknown-rank trace
--                            (default: TensorSpec(nil) for every input)
--           rank_error = "..." the op refuses an unknown rank: the error says this
--           grad_rank_error = "..." its gradient refuses one: the error says this
--           node = "name"    the graph node expected (default: the op's name;
--                            false: none, as creation ops fold to constants)
-- The random ops are checked apart (their draws are not comparable eagerly).
local tide = require "tide"
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local dispatch = require "tide.dispatch"
local ffi, C = binding.ffi, binding.C

local M = {}

M.DTYPES = { "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool" }
local FLOATS = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- The dtype names op `name` accepts for its data inputs (from the registry).
function M.dtypes_of(name)
  local mask = C.tide_op_dtypes(C.tide_op_lookup(name))
  local out = {}
  for _, dt in ipairs(M.DTYPES) do
    if bit.band(mask, bit.lshift(1, dtype.codes[dt])) ~= 0 then out[#out + 1] = dt end
  end
  return out
end

-- A deterministic tensor of `shape` and dtype `dt` with distinct values.
-- kind nil: signed (|v| <= 10); "pos": in [1, 10]; "small": 0..3.
function M.data(shape, dt, kind)
  dt = dt or "float32"
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  if n == 0 then return tide.zeros(shape, dt) end
  local flat = {}
  for i = 1, n do
    local v = math.sin(i * 1.7) * 10
    if kind == "pos" then v = 1 + math.abs(v) * 0.9
    elseif kind == "small" then v = (i * 7) % 4 end
    if dt == "bool" then v = math.sin(i * 1.7) > 0
    elseif not FLOATS[dt] then
      v = math.floor(v)
      if dt == "uint8" then v = math.abs(v) end
    end
    flat[i] = v
  end
  return tide.tensor(flat, dt):reshape(shape)
end
local data = M.data

-- A non-contiguous tensor of `shape` (2-D): the transpose of a [c, r] one.
local function strided(shape, dt, kind)
  return data({ shape[2], shape[1] }, dt, kind):transpose()
end

-- Floats that unary ops treat specially: NaN, infinities, zeros, halves.
local function specials(dt)
  return tide.tensor({ 0 / 0, 1 / 0, -1 / 0, 0, -0.0, 0.5, -1.5, 2.5 }, dt)
end

M.cases = {}
local cases = M.cases

---------------------------------------------------------------------------
-- Elementwise
---------------------------------------------------------------------------

-- The plain elementwise ops (tide.ops.plain walks the registry for them): each
-- through its public Lua function, in every dtype the registry gives it.
local plain = require "tide.ops.plain"
local function public(e) return plain.public(tide, e) end

-- The second operand's kind where the op needs one: ints away from zero
-- divisors and huge powers, shift counts in range.
local SECOND = {
  div = "pos", floordiv = "pos", mod = "pos", pow = "small", truncatediv = "pos", truncatemod = "pos",
  xlogy = "pos", xlog1py = "pos", xdivy = "pos", left_shift = "small", right_shift = "small",
}

for _, e in ipairs(plain.list) do
  local name = e.name
  if e.nin == 1 then
    cases[name] = function(add)
      local f = public(e)
      local fn = function(x) return f(x) end
      for _, dt in ipairs(M.dtypes_of(name)) do
        add(dt, fn, { data({ 2, 3 }, dt) })
        add(dt .. " strided", fn, { strided({ 2, 3 }, dt) })
        add(dt .. " 0-d", fn, { data({}, dt) })
        add(dt .. " empty", fn, { data({ 0, 3 }, dt) })
        if FLOATS[dt] then add(dt .. " specials", fn, { specials(dt) }) end
      end
    end
  else
    cases[name] = function(add)
      local f = public(e)
      local fn = function(a, b) return f(a, b) end
      local kind = SECOND[name]
      for _, dt in ipairs(M.dtypes_of(name)) do
        add(dt, fn, { data({ 2, 3 }, dt), data({ 2, 3 }, dt, kind) })
        add(dt .. " broadcast [2,3] [3]", fn, { data({ 2, 3 }, dt), data({ 3 }, dt, kind) })
        add(dt .. " broadcast [2,1] [1,3]", fn, { data({ 2, 1 }, dt), data({ 1, 3 }, dt, kind) })
        add(dt .. " 0-d", fn, { data({ 2, 3 }, dt), data({}, dt, kind) })
        add(dt .. " strided", fn, { strided({ 2, 3 }, dt), data({ 2, 3 }, dt, kind) })
        add(dt .. " empty", fn, { data({ 0, 3 }, dt), data({ 3 }, dt, kind) })
        if dt ~= "bool" then
          add(dt .. " number", function(x) return f(x, 2) end, { data({ 2, 3 }, dt) })
        end
      end
    end
  end
end

cases.gelu = function(add)
  for _, dt in ipairs(M.dtypes_of("gelu")) do
    add(dt, tide.nn.gelu, { strided({ 2, 3 }, dt) })
    add(dt .. " approximate", function(x) return tide.nn.gelu(x, { approximate = true }) end, { data({ 2, 3 }, dt) })
  end
end

-- Keras 3's activation kernels with a parameter (ops/activations.lua)
for name, param in pairs { celu = 0.5, hard_shrink = 1.5, soft_shrink = 1.5, squareplus = 2 } do
  cases[name] = function(add)
    local f = tide.activations[name]
    for _, dt in ipairs(M.dtypes_of(name)) do
      add(dt, f, { data({ 2, 3 }, dt) })
      add(dt .. " parameter, strided", function(x) return f(x, param) end, { strided({ 2, 3 }, dt) })
      if FLOATS[dt] then add(dt .. " specials", f, { specials(dt) }) end
    end
  end
end

cases.leaky_relu = function(add)
  for _, dt in ipairs(M.dtypes_of("leaky_relu")) do
    add(dt, tide.nn.leaky_relu, { data({ 2, 3 }, dt) })
    add(dt .. " alpha", function(x) return tide.nn.leaky_relu(x, { alpha = 0.5 }) end, { strided({ 2, 3 }, dt) })
  end
end

cases.cast = function(add)
  for _, from in ipairs(M.DTYPES) do
    for _, to in ipairs(M.DTYPES) do
      if from ~= to then
        local x = from == "uint8" and data({ 2, 3 }, from) or data({ 2, 3 }, from, from ~= "bool" and "pos" or nil)
        add(from .. "->" .. to, function(t) return t:cast(to) end, { x })
      end
    end
    if FLOATS[from] then add(from .. "->int32 strided", function(t) return t:cast("int32") end, { strided({ 2, 3 }, from) }) end
  end
end

cases.copy = function(add)
  for _, dt in ipairs(M.DTYPES) do
    add(dt, function(x) return tide.contiguous(x:transpose()) end, { data({ 2, 3 }, dt) })
  end
end

cases.where = function(add)
  for _, dt in ipairs(M.dtypes_of("where")) do
    add(dt, tide.where, { data({ 2, 3 }, "bool"), data({ 2, 3 }, dt), data({ 2, 3 }, dt, "pos") })
    add(dt .. " broadcast", tide.where, { data({ 2, 1 }, "bool"), strided({ 2, 3 }, dt), data({ 3 }, dt, "pos") })
  end
end

cases.clip_by_value = function(add)
  for _, dt in ipairs(M.dtypes_of("clip_by_value")) do
    add(dt .. " numbers", function(x) return tide.clip_by_value(x, 2, 5) end, { data({ 2, 3 }, dt) })
    local lo, hi = tide.tensor({ 1, 2, 3 }, dt), tide.tensor(6, dt)
    add(dt .. " tensors", tide.clip_by_value, { strided({ 2, 3 }, dt), lo, hi })
  end
end

---------------------------------------------------------------------------
-- Reductions, scans, ordering, matmul
---------------------------------------------------------------------------

local REDUCE = { sum = "reduce_sum", mean = "reduce_mean", max = "reduce_max", min = "reduce_min",
                 prod = "reduce_prod", any = "reduce_any", all = "reduce_all" }
for name, fname in pairs(REDUCE) do
  cases[name] = function(add)
    local f = tide[fname]
    for _, dt in ipairs(M.dtypes_of(name)) do
      local kind = name == "prod" and "small" or nil
      local x = data({ 3, 4 }, dt, kind)
      -- reduce_prod's gradient moves axes by the rank
      local err = name == "prod" and "reduce_prod's gradient moves the reduced axes to the front" or nil
      local function o() return { approx = true, grad_rank_error = err } end
      add(dt .. " all", function(t) return f(t) end, { x }, o())
      add(dt .. " axis 0", function(t) return f(t, 0) end, { x }, o())
      add(dt .. " axis -1 keepdims", function(t) return f(t, -1, { keepdims = true }) end, { x }, o())
      add(dt .. " strided axis 1", function(t) return f(t, 1) end, { strided({ 3, 4 }, dt, kind) }, o())
      add(dt .. " 3-d axes {0,2}", function(t) return f(t, { 0, 2 }) end, { data({ 2, 3, 2 }, dt, kind) }, o())
      add(dt .. " 3-d axes {-1,0}", function(t) return f(t, { -1, 0 }) end, { data({ 2, 3, 2 }, dt, kind) }, o())
      add(dt .. " empty axis 0", function(t) return f(t, 0) end, { data({ 0, 3 }, dt) }, o())
    end
  end
end

for _, name in ipairs { "argmax", "argmin" } do
  cases[name] = function(add)
    for _, dt in ipairs(M.dtypes_of(name)) do
      add(dt .. " axis 0", function(t) return tide[name](t, 0) end, { data({ 3, 4 }, dt) })
      add(dt .. " axis 1 int32", function(t) return tide[name](t, 1, { output_type = "int32" }) end,
        { strided({ 3, 4 }, dt) })
    end
  end
end

for _, name in ipairs { "cumsum", "cumprod" } do
  cases[name] = function(add)
    for _, dt in ipairs(M.dtypes_of(name)) do
      local x = data({ 3, 4 }, dt, name == "cumprod" and "small" or nil)
      add(dt .. " axis 0", function(t) return tide[name](t, 0) end, { x }, { approx = true })
      add(dt .. " axis 1 exclusive reverse", function(t)
        return tide[name](t, 1, { exclusive = true, reverse = true })
      end, { x }, { approx = true })
      add(dt .. " strided", function(t) return tide[name](t, 1) end, { strided({ 3, 4 }, dt, "small") },
        { approx = true })
    end
  end
end

cases.cumulative_logsumexp = function(add)
  local f = tide.cumulative_logsumexp
  for _, dt in ipairs(M.dtypes_of("cumulative_logsumexp")) do
    local x = data({ 3, 4 }, dt)
    add(dt .. " axis 0", function(t) return f(t, 0) end, { x }, { approx = true })
    add(dt .. " axis 1 exclusive reverse", function(t) return f(t, 1, { exclusive = true, reverse = true }) end,
      { x }, { approx = true })
    add(dt .. " strided 3-d middle axis", function(t) return f(t, -2) end,
      { data({ 2, 4, 3 }, dt):transpose { 0, 2, 1 } }, { approx = true })
    add(dt .. " specials", function(t) return f(t, 0, { reverse = true }) end, { specials(dt) })
    add(dt .. " empty", function(t) return f(t, 1) end, { data({ 0, 3 }, dt) })
  end
end

for _, name in ipairs { "sort", "argsort" } do
  cases[name] = function(add)
    for _, dt in ipairs(M.dtypes_of(name)) do
      add(dt, function(t) return tide[name](t) end, { data({ 3, 4 }, dt, "small") }) -- ties: stable order
      add(dt .. " axis 0 descending", function(t) return tide[name](t, 0, "DESCENDING") end,
        { strided({ 3, 4 }, dt) }, { grad_rank_error = "sort's gradient along an axis other than -1" })
      if FLOATS[dt] then add(dt .. " specials", function(t) return tide[name](t) end, { specials(dt) }) end
    end
  end
end

cases.top_k = function(add)
  for _, dt in ipairs(M.dtypes_of("top_k")) do
    add(dt, function(t) return tide.top_k(t, 2) end, { data({ 3, 4 }, dt, "small") })
    add(dt .. " int64 strided", function(t) return tide.top_k(t, { k = 3, index_type = "int64" }) end,
      { strided({ 3, 4 }, dt) })
  end
end

cases.matmul = function(add)
  for _, dt in ipairs(M.dtypes_of("matmul")) do
    local kind = FLOATS[dt] and nil or "small"
    add(dt, tide.matmul, { data({ 2, 3 }, dt, kind), data({ 3, 4 }, dt, kind) }, { approx = true })
    add(dt .. " transpose_b", function(a, b) return tide.matmul(a, b, { transpose_b = true }) end,
      { data({ 2, 3 }, dt, kind), data({ 4, 3 }, dt, kind) }, { approx = true })
    add(dt .. " batch broadcast", tide.matmul, { data({ 2, 2, 3 }, dt, kind), data({ 3, 4 }, dt, kind) },
      { approx = true })
    add(dt .. " strided", tide.matmul, { strided({ 2, 3 }, dt, kind), strided({ 3, 4 }, dt, kind) },
      { approx = true })
    add(dt .. " vector", tide.matmul, { data({ 2, 3 }, dt, kind), data({ 3 }, dt, kind) }, { approx = true })
    add(dt .. " vector, matrix", tide.matmul, { data({ 2 }, dt, kind), data({ 2, 3 }, dt, kind) }, { approx = true })
    add(dt .. " vectors", tide.matmul, { data({ 3 }, dt, kind), data({ 3 }, dt, kind) }, { approx = true })
  end
end

---------------------------------------------------------------------------
-- Views and shape ops
---------------------------------------------------------------------------

-- Shape ops take every dtype: each case runs for each.
local function every_dtype(name, list)
  cases[name] = function(add)
    for _, dt in ipairs(M.DTYPES) do
      for _, c in ipairs(list) do add(dt .. " " .. c[1], c[2], c[3](dt), c[4]) end
    end
  end
end

local function x23(dt) return { data({ 2, 3 }, dt) } end
local function s23(dt) return { strided({ 2, 3 }, dt) } end

every_dtype("reshape", {
  { "[-1]", function(x) return x:reshape(-1) end, x23 },
  { "[3,2] strided", function(x) return x:reshape { 3, 2 } end, s23 },
  { "[1,-1,2]", function(x) return x:reshape { 1, -1, 2 } end, x23 },
})
every_dtype("transpose", {
  { "default", function(x) return x:transpose() end, x23 },
  { "3-d perm", function(x) return tide.transpose(x, { 1, 2, 0 }) end, function(dt) return { data({ 2, 3, 2 }, dt) } end },
})
every_dtype("slice", {
  { "columns", function(x) return x:slice { {}, { 1, 3 } } end, x23 },
  { "index", function(x) return x[1] end, s23 },
  { "reversed", function(x) return x:slice { { nil, nil, -1 } } end, x23 },
  { "stepped", function(x) return x:slice { {}, { 0, 3, 2 } } end, s23 },
})
every_dtype("broadcast_to", {
  { "[2,2,3]", function(x) return tide.broadcast_to(x, { 2, 2, 3 }) end, x23 },
  { "[1,3]->[4,3]", function(x) return tide.broadcast_to(x, { 4, 3 }) end,
    function(dt) return { data({ 1, 3 }, dt) } end },
})
every_dtype("squeeze", {
  { "axis", function(x) return tide.squeeze(x, 0) end, function(dt) return { data({ 1, 3 }, dt) } end },
  -- without axes and with None dims: an unknown rank until it runs (TF's rule)
  { "all", function(x) return tide.squeeze(x) end, function(dt) return { data({ 1, 3, 1 }, dt) } end },
})
every_dtype("expand_dims", {
  { "0", function(x) return tide.expand_dims(x, 0) end, x23 },
  { "-1 strided", function(x) return tide.expand_dims(x, -1) end, s23 },
})
every_dtype("concat", {
  { "axis 0", function(a, b) return tide.concat({ a, b }, 0) end,
    function(dt) return { data({ 2, 3 }, dt), strided({ 1, 3 }, dt) } end },
  { "axis 1, three", function(a, b, c) return tide.concat({ a, b, c }, 1) end,
    function(dt) return { data({ 2, 1 }, dt), s23(dt)[1], data({ 2, 2 }, dt) } end },
})
every_dtype("tile", {
  { "[2,1]", function(x) return tide.tile(x, { 2, 1 }) end, x23 },
  { "[1,3] strided", function(x) return tide.tile(x, { 1, 3 }) end, s23 },
})
every_dtype("pad", {
  { "constant", function(x) return tide.pad(x, { { 1, 1 }, { 0, 2 } }) end, x23 },
  { "strided", function(x) return tide.pad(x, { { 0, 1 }, { 1, 0 } }) end, s23 },
})
every_dtype("gather", {
  { "axis 0", function(x, i) return tide.gather(x, i) end,
    function(dt) return { data({ 3, 2 }, dt), tide.tensor { 2, 0, 2 } } end },
  { "axis 1 int64", function(x, i) return tide.gather(x, i, { axis = 1 }) end,
    function(dt) return { strided({ 2, 3 }, dt), tide.tensor({ { 1, 0 }, { 2, 2 } }, "int64") } end },
  { "batch_dims 1", function(x, i) return tide.gather(x, i, { batch_dims = 1 }) end,
    function(dt) return { data({ 2, 3 }, dt), tide.tensor { { 2, 0 }, { 1, 1 } } } end },
})
every_dtype("reverse", {
  { "axis 1", function(x) return tide.reverse(x, { 1 }) end, x23 },
  { "both strided", function(x) return tide.reverse(x, { 0, 1 }) end, s23 },
})

-- the target shape as a tensor (an input of the reshape node)
for name, list in pairs {
  reshape = { { "to shape of y", function(x, y) return tide.reshape(x, tide.shape(y)) end,
    function(dt) return { data({ 2, 3 }, dt), data({ 3, 1, 2 }) } end } },
  broadcast_to = { { "to shape of y", function(x, y) return tide.broadcast_to(x, tide.shape(y)) end,
    function(dt) return { data({ 1, 3 }, dt), data({ 2, 4, 3 }) } end } },
} do
  local by_list = cases[name]
  cases[name] = function(add)
    by_list(add)
    for _, dt in ipairs(M.DTYPES) do
      for _, c in ipairs(list) do add(dt .. " " .. c[1], c[2], c[3](dt), c[4]) end
    end
  end
end
-- sum_to (gradients' unbroadcast; no public entry): a target list, or a
-- shape tensor whose values a None-dims trace knows only when it runs.
local function sum_to(x, target)
  local dispatch = require "tide.dispatch"
  local a = ffi.new("tide_attrs")
  if tide.is_tensor(target) then return dispatch.run(C.TIDE_OP_SUM_TO, a, { dispatch.promote(x), target }) end
  for i, d in ipairs(target) do a.ints[i - 1] = d end
  a.nints = #target
  return dispatch.run_view(C.TIDE_OP_SUM_TO, a, x)
end
cases.sum_to = function(add)
  for _, dt in ipairs(M.dtypes_of("sum_to")) do
    add(dt .. " [2,3]->[3]", function(x) return sum_to(x, { 3 }) end, x23(dt), { approx = true })
    add(dt .. " [2,3]->[2,1] strided", function(x) return sum_to(x, { 2, 1 }) end, s23(dt), { approx = true })
    add(dt .. " [2,3]->[2,3]", function(x) return sum_to(x, { 2, 3 }) end, s23(dt))
    add(dt .. " [1,2,3]->[2,3]", function(x) return sum_to(x, { 2, 3 }) end, { data({ 1, 2, 3 }, dt) })
    add(dt .. " [2,3]->[]", function(x) return sum_to(x, {}) end, x23(dt), { approx = true })
    add(dt .. " to shape of y [1,3]", function(x, y) return sum_to(x, tide.shape(y)) end,
      { data({ 2, 3 }, dt), data({ 1, 3 }) }, { approx = true })
    add(dt .. " to shape of y [2,3]", function(x, y) return sum_to(x, tide.shape(y)) end,
      { strided({ 2, 3 }, dt), data({ 2, 3 }) })
    local function like(x, y) return sum_to(x, tide.shape(y)) end -- y's rank too unknown while tracing
    add(dt .. " to shape of y: leading and stretched dims", like, { data({ 2, 3, 4 }, dt), data({ 3, 1 }, dt) },
      { approx = true })
    add(dt .. " to shape of y: leading 1s dropped (a view)", like, { data({ 1, 1, 3 }, dt), data({ 3 }, dt) })
    add(dt .. " to shape of y: a scalar", like, { data({ 2, 3 }, dt), data({}, dt) }, { approx = true })
    add(dt .. " to shape of y: empty", like, { data({ 0, 3 }, dt), data({ 1, 3 }, dt) })
  end
end

-- shapes as tensors: constants when the dims are known (no node), computed with None dims
for name, fn in pairs { shape = tide.shape, size = tide.num_elements } do
  cases[name] = function(add)
    for _, dt in ipairs(M.DTYPES) do
      add(dt .. " 2-d", function(x) return fn(x) end, x23(dt), { node = false })
      add(dt .. " int64 strided", function(x) return fn(x, { out_type = "int64" }) end, s23(dt), { node = false })
    end
    add("0-d", function(x) return fn(x) end, { data({}, "float32") }, { node = false })
    add("empty", function(x) return fn(x) end, { data({ 4, 0, 2 }, "int32") }, { node = false })
  end
end

cases.one_hot = function(add)
  for _, dt in ipairs(M.dtypes_of("one_hot")) do
    local idx = tide.tensor({ 0, 2, 3, 1 }, dt) -- 3 is outside depth 3: a row of off_value
    add(dt, function(i) return tide.one_hot(i, 3) end, { idx })
    add(dt .. " on/off axis 0 int32", function(i)
      return tide.one_hot(i, { depth = 3, on_value = 5, off_value = -1, axis = 0, dtype = "int32" })
    end, { idx:reshape { 2, 2 } })
  end
end

cases.bitcast = function(add)
  add("float32 to int32", function(x) return tide.bitcast(x, "int32") end, { M.data({ 2, 3 }, "float32") })
  add("float32 strided to uint8", function(x) return tide.bitcast(x, "uint8") end, { strided({ 2, 3 }, "float32") })
  add("uint8 to float32", function(x) return tide.bitcast(x, "float32") end, { M.data({ 3, 4 }, "uint8") })
  add("int64 to int32", function(x) return tide.bitcast(x, "int32") end, { M.data({ 5 }, "int64") })
end

cases.slice_update = function(add)
  for _, dt in ipairs(M.DTYPES) do
    add(dt .. " row", function(x, u) return tide.slice_update(x, { 0 }, u) end, { data({ 3, 3 }, dt), data({ 3 }, dt, "pos") })
    add(dt .. " block strided", function(x, u) return tide.slice_update(x, { { 1, 3 }, { 0, 2 } }, u) end,
      { strided({ 3, 3 }, dt), data({ 2, 2 }, dt, "pos") })
  end
end

cases.scatter_add = function(add)
  for _, dt in ipairs(M.dtypes_of("scatter_add")) do
    add(dt, tide.scatter_add, { data({ 4, 3 }, dt), tide.tensor { 1, 1, 3 }, data({ 3, 3 }, dt, "small") },
      { approx = true })
    add(dt .. " axis 1 strided", function(b, i, u) return tide.scatter_add(b, i, u, { axis = 1 }) end,
      { strided({ 2, 3 }, dt), tide.tensor({ 0, 2 }, "int64"), data({ 2, 2 }, dt, "small") }, { approx = true })
  end
end

---------------------------------------------------------------------------
-- Creation (no inputs: folded to constants)
---------------------------------------------------------------------------

local function creation(name, list)
  cases[name] = function(add)
    for _, c in ipairs(list) do add(c[1], c[2], {}, { node = false, none = false }) end
  end
end
local fill_cases = {}
for _, dt in ipairs(M.DTYPES) do
  fill_cases[#fill_cases + 1] = { dt, function() return tide.fill({ 2, 3 }, dt == "bool" or 3, { dtype = dt }) end }
end
creation("fill", fill_cases)
do -- fill from a shape tensor: a constant with known dims (folded), the shape input with None dims
  local by_value = cases.fill
  cases.fill = function(add)
    by_value(add)
    for _, dt in ipairs { "float32", "int64", "bool" } do
      add(dt .. " shape of x", function(x) return tide.fill(tide.shape(x), dt == "bool" or 3, { dtype = dt }) end,
        { data({ 2, 3 }) }, { node = false })
      add(dt .. " zeros of an empty x", function(x) return tide.zeros(tide.shape(x, { out_type = "int64" }), dt) end,
        { data({ 0, 3 }) }, { node = false })
    end
  end
end
creation("range", {
  { "int", function() return tide.range(5) end },
  { "float step", function() return tide.range(1, 2, 0.25) end },
  { "negative delta int64", function() return tide.range(10, 0, -3, { dtype = "int64" }) end },
})
-- range with a bound computed in the trace: range_dynamic (eagerly, the
-- bound is a number and range runs)
cases.range_dynamic = function(add)
  add("int32 limit", function(x) return tide.range(tide.reduce_sum(x)) end, { tide.tensor({ 2, 3 }, "int32") })
  add("float32 start, negative delta", function(x) return tide.range(tide.reduce_max(x), 0.0, -0.5) end,
    { tide.tensor({ 1.5, 2.25 }, "float32") })
  add("int64 bounds", function(a, b) return tide.range(a, b, 3, { dtype = "int64" }) end,
    { tide.tensor(-4, "int64"), tide.tensor(7, "int64") })
end
creation("linspace", {
  { "float32", function() return tide.linspace(0, 1, 5) end },
  { "float64", function() return tide.linspace(-1, 3, 7, { dtype = "float64" }) end },
})
creation("eye", {
  { "square", function() return tide.eye(3) end },
  { "int32 3x4", function() return tide.eye(3, { num_columns = 4, dtype = "int32" }) end },
})

---------------------------------------------------------------------------
-- Neural-network ops
---------------------------------------------------------------------------

local nnc = require "tide.ops.nn_conv"

-- Pool attrs as max_pool2d's gradient records them: k x k windows, stride s, VALID.
local function pool_attrs(k, s)
  local a = ffi.new("tide_attrs")
  a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.nints = k, k, s, s, 4
  return a
end

local CONV = {
  conv2d = function(dt)
    return {
      { "same", function(x, f) return nnc.conv2d(x, f, 1, "SAME") end, { data({ 2, 5, 5, 2 }, dt), data({ 3, 3, 2, 3 }, dt) } },
      { "valid stride 2", function(x, f) return nnc.conv2d(x, f, 2, "VALID") end,
        { data({ 1, 6, 5, 2 }, dt), data({ 3, 2, 2, 4 }, dt) } },
      { "dilated", function(x, f) return nnc.conv2d(x, f, { strides = 1, padding = "SAME", dilations = 2 }) end,
        { data({ 1, 6, 6, 1 }, dt), data({ 2, 2, 1, 2 }, dt) } },
    }
  end,
  conv2d_backprop_input = function(dt)
    return {
      { "same", function(f, dy) return nnc.conv2d_backprop_input({ 2, 5, 5, 2 }, f, dy) end,
        { data({ 3, 3, 2, 3 }, dt), data({ 2, 5, 5, 3 }, dt) } },
      { "valid stride 2", function(f, dy) return nnc.conv2d_backprop_input({ 1, 6, 5, 2 }, f, dy, 2, "VALID") end,
        { data({ 3, 2, 2, 4 }, dt), data({ 1, 2, 2, 4 }, dt) } },
      -- conv2d_transpose whose output_shape is a tensor: with None dims (or an unknown rank) its batch,
      -- or all of it, is read when the graph runs, the op's shape input
      { "transpose, batch from tide.shape", function(x, f)
          return nnc.conv2d_transpose(x, f, { tide.shape(x)[0], 6, 6, 3 }, 2, "SAME")
        end, { data({ 2, 3, 3, 4 }, dt), data({ 3, 3, 3, 4 }, dt) } },
      { "transpose, stacked shape valid", function(x, f)
          return nnc.conv2d_transpose(x, f, tide.stack { tide.shape(x)[0], 5, 4, 2 }, { strides = { 2, 1 },
            padding = "VALID" })
        end, { data({ 1, 2, 3, 4 }, dt), data({ 2, 2, 2, 4 }, dt) } },
    }
  end,
  conv2d_backprop_filter = function(dt)
    return {
      { "same", function(x, dy) return nnc.conv2d_backprop_filter(x, { 3, 3, 2, 3 }, dy) end,
        { data({ 2, 5, 5, 2 }, dt), data({ 2, 5, 5, 3 }, dt) } },
      { "valid stride 2", function(x, dy) return nnc.conv2d_backprop_filter(x, { 3, 2, 2, 4 }, dy, 2, "VALID") end,
        { data({ 1, 6, 5, 2 }, dt), data({ 1, 2, 2, 4 }, dt) } },
    }
  end,
  depthwise_conv2d = function(dt)
    return {
      { "same", function(x, f) return nnc.depthwise_conv2d(x, f) end, { data({ 2, 4, 4, 2 }, dt), data({ 3, 3, 2, 2 }, dt) } },
      { "valid stride 2", function(x, f) return nnc.depthwise_conv2d(x, f, 2, "VALID") end,
        { data({ 1, 5, 5, 3 }, dt), data({ 2, 2, 3, 1 }, dt) } },
    }
  end,
  depthwise_conv2d_backprop_input = function(dt)
    return {
      { "same", function(f, dy) return nnc.depthwise_conv2d_backprop_input({ 2, 4, 4, 2 }, f, dy) end,
        { data({ 3, 3, 2, 2 }, dt), data({ 2, 4, 4, 4 }, dt) } },
    }
  end,
  depthwise_conv2d_backprop_filter = function(dt)
    return {
      { "same", function(x, dy) return nnc.depthwise_conv2d_backprop_filter(x, { 3, 3, 2, 2 }, dy) end,
        { data({ 2, 4, 4, 2 }, dt), data({ 2, 4, 4, 4 }, dt) } },
    }
  end,
  max_pool2d = function(dt)
    return {
      { "2", function(x) return nnc.max_pool2d(x, 2) end, { data({ 2, 4, 4, 2 }, dt) } },
      { "3 stride 2 same", function(x) return nnc.max_pool2d(x, 3, { strides = 2, padding = "SAME" }) end,
        { data({ 1, 5, 5, 3 }, dt) } },
    }
  end,
  avg_pool2d = function(dt)
    return {
      { "2", function(x) return nnc.avg_pool2d(x, 2) end, { data({ 2, 4, 4, 2 }, dt) } },
      { "3 stride 2 same", function(x) return nnc.avg_pool2d(x, 3, { strides = 2, padding = "SAME" }) end,
        { data({ 1, 5, 5, 3 }, dt) } },
    }
  end,
  -- The pool gradients have no public entry: their gradient functions run
  -- them with the forward node's attrs, as here.
  max_pool2d_grad = function(dt)
    return {
      { "2", function(x, y, dy) return nnc.raw.run(C.TIDE_OP_MAX_POOL2D_GRAD, pool_attrs(2, 2), { x, y, dy }) end,
        { data({ 2, 4, 4, 2 }, dt), nnc.max_pool2d(data({ 2, 4, 4, 2 }, dt), 2), data({ 2, 2, 2, 2 }, dt) } },
    }
  end,
  max_pool2d_grad_grad = function(dt)
    local function tied(shape) return tide.round(data(shape, "float32") / 4):cast(dt) end -- ties in windows
    return {
      { "2", function(x, y, g) return nnc.raw.run(C.TIDE_OP_MAX_POOL2D_GRAD_GRAD, pool_attrs(2, 2), { x, y, g }) end,
        { tied({ 2, 4, 4, 2 }), nnc.max_pool2d(tied({ 2, 4, 4, 2 }), 2), data({ 2, 4, 4, 2 }, dt) } },
      { "3 stride 1 same", function(x, y, g)
          local a = pool_attrs(3, 1)
          a.m = 1
          return nnc.raw.run(C.TIDE_OP_MAX_POOL2D_GRAD_GRAD, a, { x, y, g })
        end,
        { tied({ 1, 5, 4, 3 }), nnc.max_pool2d(tied({ 1, 5, 4, 3 }), 3, 1, "SAME"), data({ 1, 5, 4, 3 }, dt) } },
    }
  end,
  avg_pool2d_grad = function(dt)
    return {
      { "2", function(x, dy) return nnc.raw.run(C.TIDE_OP_AVG_POOL2D_GRAD, pool_attrs(2, 2), { x, dy }) end,
        { data({ 2, 4, 4, 2 }, dt), data({ 2, 2, 2, 2 }, dt) } },
    }
  end,
  softmax = function(dt)
    return {
      { "last", tide.nn.softmax, { data({ 2, 3 }, dt) } },
      { "axis 0 strided", function(x) return tide.nn.softmax(x, 0) end, { strided({ 2, 3 }, dt) } },
    }
  end,
  log_softmax = function(dt)
    return {
      { "last", tide.nn.log_softmax, { data({ 2, 3 }, dt) } },
      { "axis 0 strided", function(x) return tide.nn.log_softmax(x, 0) end, { strided({ 2, 3 }, dt) } },
    }
  end,
  sparse_softmax_cross_entropy = function(dt)
    return {
      { "int32", tide.nn.sparse_softmax_cross_entropy_with_logits, { tide.tensor { 2, 0 }, data({ 2, 3 }, dt) } },
      { "int64 strided", tide.nn.sparse_softmax_cross_entropy_with_logits,
        { tide.tensor({ 1, 0, 1 }, "int64"), strided({ 3, 2 }, dt) } },
    }
  end,
}
---------------------------------------------------------------------------
-- Index-driven ops (tide.ops.index, tide.ops.segment): several size their
-- results at run time (where, unique, sorted segments), so traced results
-- have None dims until the graph runs.
---------------------------------------------------------------------------

-- A signature of the inputs' dtypes with every dim None but the listed ones
-- (keep[i] = true: input i keeps its last dim, as an index depth must be known).
local function none_but_last(inputs, keep)
  local sig = {}
  for i, x in ipairs(inputs) do
    local dims = {}
    for d = 1, x.ndim do dims[d] = (keep[i] and d == x.ndim) and x.shape[d] or tide.None end
    sig[i] = tide.TensorSpec(dims, x.dtype)
  end
  return sig
end

-- Add a case whose None-dims trace keeps the index depth (the last dim of
-- input `k`) known.
local function add_nd(add, label, fn, inputs, k, opts)
  opts = opts or {}
  opts.signature = none_but_last(inputs, { [k] = true })
  add(label, fn, inputs, opts)
end

cases.gather_nd = function(add)
  for _, dt in ipairs(M.dtypes_of("gather_nd")) do
    add_nd(add, dt .. " elements", tide.gather_nd, { data({ 3, 2 }, dt), tide.tensor { { 2, 1 }, { 0, 0 }, { 2, 1 } } }, 2)
    add_nd(add, dt .. " rows int64 strided", tide.gather_nd,
      { strided({ 2, 3 }, dt), tide.tensor({ { 1 }, { 0 }, { 1 } }, "int64") }, 2)
    add_nd(add, dt .. " batch_dims 1", function(p, i) return tide.gather_nd(p, i, { batch_dims = 1 }) end,
      { data({ 2, 3, 2 }, dt), tide.tensor { { { 1 }, { 0 } }, { { 2 }, { 2 } } } }, 2)
    add_nd(add, dt .. " K=0", tide.gather_nd, { data({ 2, 2 }, dt), tide.zeros({ 3, 0 }, "int32") }, 2)
    add_nd(add, dt .. " empty indices", tide.gather_nd, { data({ 3, 2 }, dt), tide.zeros({ 0, 2 }, "int32") }, 2)
  end
end

for _, name in ipairs { "tensor_scatter_nd_add", "tensor_scatter_nd_update" } do
  cases[name] = function(add)
    local fn = tide[name]
    for _, dt in ipairs(M.dtypes_of(name)) do
      add_nd(add, dt .. " rows, repeated", fn,
        { data({ 4, 3 }, dt), tide.tensor { { 1 }, { 1 }, { 3 } }, data({ 3, 3 }, dt, "small") }, 2)
      add_nd(add, dt .. " elements int64 strided", fn,
        { strided({ 2, 3 }, dt), tide.tensor({ { 0, 2 }, { 1, 1 } }, "int64"), data({ 2 }, dt, "small") }, 2)
      add_nd(add, dt .. " batch_dims 1", function(t, i, u) return fn(t, i, u, { batch_dims = 1 }) end,
        { data({ 2, 3 }, dt), tide.tensor { { { 2 }, { 0 } }, { { 1 }, { 1 } } }, data({ 2, 2 }, dt, "small") }, 2)
      add_nd(add, dt .. " no indices", fn, { data({ 3 }, dt), tide.zeros({ 0, 1 }, "int32"), data({ 0 }, dt) }, 2)
    end
  end
end

cases.where_indices = function(add)
  local where = function(c) return tide.where(c) end
  for _, dt in ipairs(M.dtypes_of("where_indices")) do
    add(dt, where, { data({ 2, 3 }, dt, "small") }, { node = "where_indices" })
    add(dt .. " strided", where, { strided({ 3, 2 }, dt, "small") }, { node = "where_indices" })
    add(dt .. " 3-d", where, { data({ 2, 1, 3 }, dt) }, { node = "where_indices" })
    add(dt .. " empty", where, { data({ 0, 3 }, dt) }, { node = "where_indices" })
    if FLOATS[dt] then add(dt .. " specials", where, { specials(dt) }, { node = "where_indices" }) end
  end
end

cases.unique = function(add)
  for _, dt in ipairs(M.dtypes_of("unique")) do
    add(dt, function(x) return tide.unique(x) end, { data({ 7 }, dt, "small") })
    add(dt .. " int64 idx, strided", function(x) return tide.unique(x, { out_idx = "int64" }) end,
      { data({ 12 }, dt, "small"):slice { { 0, 12, 2 } } })
    add(dt .. " empty", function(x) return tide.unique(x) end, { data({ 0 }, dt) })
    if FLOATS[dt] then add(dt .. " specials", function(x) return tide.unique(x) end, { specials(dt) }) end
  end
end

for _, kind in ipairs { "sum", "mean", "max", "min", "prod" } do
  local sorted, unsorted = "segment_" .. kind, "unsorted_segment_" .. kind
  cases[sorted] = function(add)
    local fn = tide[sorted]
    for _, dt in ipairs(M.dtypes_of(sorted)) do
      add(dt .. " with an empty segment", fn, { data({ 5, 2 }, dt), tide.tensor { 0, 0, 2, 2, 3 } })
      add(dt .. " int64 ids strided", fn, { strided({ 4, 3 }, dt), tide.tensor({ 1, 1, 1, 4 }, "int64") })
      add(dt .. " 1-d", fn, { data({ 4 }, dt), tide.tensor { 0, 1, 1, 1 } })
      add(dt .. " empty", fn, { data({ 0, 2 }, dt), tide.zeros({ 0 }, "int32") })
    end
  end
  if kind ~= "mean" then
    cases[unsorted] = function(add)
      local fn = tide[unsorted]
      for _, dt in ipairs(M.dtypes_of(unsorted)) do
        add(dt .. " dropped row, empty segment", function(x, i) return fn(x, i, 4) end,
          { data({ 4, 2 }, dt), tide.tensor { 1, -1, 1, 0 } })
        add(dt .. " prefix ids int64, strided", function(x, i) return fn(x, i, 3) end,
          { strided({ 3, 2 }, dt), tide.tensor({ { 2, 0 }, { 0, 2 }, { -1, 1 } }, "int64") })
        add(dt .. " num_segments a traced tensor", fn, { data({ 3 }, dt), tide.tensor { 0, 0, 2 }, tide.tensor(5) })
        add(dt .. " no segments", function(x, i) return fn(x, i, 0) end, { data({ 2 }, dt), tide.tensor { -1, -1 } })
      end
    end
  end
end

-- tide.image: the codecs read a file's bytes (tests/fixtures/images); the
-- resize ops' gradient ops run with the attrs their gradients record.
do
  local function bytes_of(name)
    local f = assert(io.open("tests/fixtures/images/" .. name, "rb"))
    local s = f:read("a")
    f:close()
    return tide.from_buffer(s, { #s }, "uint8")
  end
  cases.decode_png = function(add)
    add("rgba", function(b) return tide.image.decode_png(b) end, { bytes_of("rgba.png") })
    add("16-bit, 3 channels", function(b) return tide.image.decode_png(b, { channels = 3, dtype = "uint16" }) end,
      { bytes_of("gray16.png") })
  end
  cases.decode_jpeg = function(add)
    add("baseline", function(b) return tide.image.decode_jpeg(b) end, { bytes_of("baseline.jpg") })
    add("progressive, gray, ratio 2", function(b) return tide.image.decode_jpeg(b, { channels = 1, ratio = 2 }) end,
      { bytes_of("progressive.jpg") })
  end
  cases.decode_bmp = function(add)
    add("24-bit bottom-up", function(b) return tide.image.decode_bmp(b) end, { bytes_of("rgb24.bmp") })
    add("8-bit as 4 channels", function(b) return tide.image.decode_bmp(b, { channels = 4 }) end,
      { bytes_of("gray8.bmp") })
  end
  cases.decode_wav = function(add)
    local function wav(name)
      local f = assert(io.open("tests/fixtures/keras_utils/audio_decode/" .. name, "rb"))
      local s = f:read("a")
      f:close()
      return tide.from_buffer(s, { #s }, "uint8")
    end
    add("stereo", function(b) return tide.audio.decode_wav(b) end, { wav("stereo.wav") })
    add("mono to 2 channels, 5 samples", function(b)
      return tide.audio.decode_wav(b, { desired_channels = 2, desired_samples = 5 })
    end, { wav("mono8k.wav") })
  end
  cases.decode_image = function(add)
    local function str(name)
      local f = assert(io.open("tests/fixtures/images/" .. name, "rb"))
      local s = f:read("a")
      f:close()
      return tide.tensor(s, "string")
    end
    add("a JPEG as a string", function(b) return tide.image.decode_image(b, { expand_animations = false }) end,
      { str("baseline.jpg") })
    add("a GIF's first frame, from uint8 bytes", function(b)
      return tide.image.decode_image(b, { channels = 3, expand_animations = false })
    end, { bytes_of("anim.gif") })
  end
  cases.read_file = function(add)
    add("a file's bytes", function(p) return tide.io.read_file(p) end,
      { tide.tensor("tests/fixtures/images/rgb24.bmp", "string") })
  end
  cases.decode_gif = function(add)
    add("animation", function(b) return tide.image.decode_gif(b) end, { bytes_of("anim.gif") })
    add("transparency", function(b) return tide.image.decode_gif(b) end, { bytes_of("transparent.gif") })
  end
  cases.decode_webp = function(add)
    add("lossless RGBA", function(b) return tide.image.decode_webp(b, { channels = 4 }) end, { bytes_of("rgba.webp") })
    add("animation", function(b) return tide.image.decode_webp(b) end, { bytes_of("anim.webp") })
  end
  cases.decode_jxl = function(add)
    add("RGB", function(b) return tide.image.decode_jxl(b) end, { bytes_of("rgb.jxl") })
    add("grey", function(b) return tide.image.decode_jxl(b, { channels = 1 }) end, { bytes_of("gray.jxl") })
  end
  cases.encode_png = function(add)
    add("uint8", function(x) return tide.image.encode_png_tensor(x) end, { data({ 3, 4, 3 }, "uint8") })
    add("16-bit", function(x) return tide.image.encode_png_tensor(x) end, { data({ 2, 3, 1 }, "int32", "small") })
  end
  for _, method in ipairs { "bilinear", "nearest" } do
    local fwd, bwd = "resize_" .. method, "resize_" .. method .. "_grad"
    cases[fwd] = function(add)
      for _, dt in ipairs(M.dtypes_of(fwd)) do
        local resize = function(x) return tide.image.resize(x, { 3, 7 }, { method = method }) end
        add(dt, resize, { data({ 2, 4, 5, 2 }, dt) })
        add(dt .. " 3-d strided", function(x) return tide.image.resize(x, { 6, 2 }, { method = method }) end,
          { data({ 2, 4, 3 }, dt):transpose { 1, 0, 2 } })
      end
    end
    local op = C["TIDE_OP_" .. bwd:upper()]
    cases[bwd] = function(add)
      for _, dt in ipairs(M.dtypes_of(bwd)) do
        local grad = function(dy, x)
          local a = dispatch.attrs()
          a.dtype = x.dt
          return dispatch.run(op, a, { dy, x })
        end
        add(dt, grad, { data({ 2, 3, 7, 2 }, dt), data({ 2, 4, 5, 2 }, dt) },
          { approx = true, grad_rank_error = "second-order gradient needs dy's height and width" })
      end
    end
  end
end

-- tide.image's box ops, encode_jpeg, and TF's stateless draws (deterministic:
-- the seed is an input, so the op stays a node).
do
  local I = tide.image
  local boxes = tide.tensor({ { 0, 0, 0.5, 0.5 }, { 0.05, 0, 0.55, 0.5 }, { 0.5, 0.5, 1, 1 }, { 0.9, 0.1, 0.2, 0.3 } },
    "float32")
  local scores = tide.tensor({ 0.6, 0.9, 0.3, 0.5 }, "float32")
  cases.non_max_suppression = function(add)
    add("hard", function(b, s) return I.non_max_suppression(b, s, 3, { iou_threshold = 0.4 }) end, { boxes, scores })
    add("soft", function(b, s)
      return I.non_max_suppression_with_scores(b, s, 4, { soft_nms_sigma = 0.5, score_threshold = 0.1 })
    end, { boxes, scores })
    add("padded", function(b, s)
      return I.non_max_suppression_padded(b, s, 5, { iou_threshold = 0.4, pad_to_max_output_size = true })
    end, { boxes, scores }, { rank_error = "ranks of boxes and scores must be known while tracing" })
    add("padded batch", function(b, s)
      return I.non_max_suppression_padded(b, s, 2, { pad_to_max_output_size = true })
    end, { tide.stack { boxes, boxes }, tide.stack { scores, scores * 0.5 } },
    { rank_error = "ranks of boxes and scores must be known while tracing",
      signature = { tide.TensorSpec({ 2, tide.None, 4 }), tide.TensorSpec({ 2, tide.None }) } })
  end
  cases.non_max_suppression_overlaps = function(add)
    local ov = tide.tensor({ { 1, 0.7, 0.1, 0 }, { 0.7, 1, 0.2, 0 }, { 0.1, 0.2, 1, 0.4 }, { 0, 0, 0.4, 1 } }, "float32")
    add("overlaps", function(o, s) return I.non_max_suppression_overlaps(o, s, 4, { overlap_threshold = 0.5 }) end,
      { ov, scores })
  end
  cases.combined_non_max_suppression = function(add)
    local b = tide.stack { boxes, boxes:reverse { 0 } }:reshape { 2, 4, 1, 4 }
    local s = tide.tensor({ { { 0.9, 0.1 }, { 0.8, 0.4 }, { 0.2, 0.7 }, { 0.5, 0.6 } },
      { { 0.3, 0.2 }, { 0.1, 0.95 }, { 0.6, 0.5 }, { 0.7, 0.05 } } }, "float32")
    add("shared boxes", function(x, y)
      local r = I.combined_non_max_suppression(x, y, 2, 3, { iou_threshold = 0.4 })
      return r[1], r[2], r[3], r[4]
    end, { b, s })
    add("padded per class, unclipped", function(x, y)
      local r = I.combined_non_max_suppression(x, y, 1, 5, { pad_per_class = true, clip_boxes = false })
      return r[1], r[2], r[3], r[4]
    end, { tide.tile(b, { 1, 1, 2, 1 }), s })
  end
  cases.draw_bounding_boxes = function(add)
    local images = data({ 2, 5, 6, 3 }, "float32")
    local b = tide.tensor({ { { 0.1, 0.1, 0.8, 0.6 }, { -0.2, 0.3, 0.5, 1.2 } }, { { 0, 0, 1, 1 }, { 0.6, 0.5, 0.2, 0.9 } } },
      "float32")
    add("default colours", function(x, y) return I.draw_bounding_boxes(x, y) end, { images, b })
    add("given colours, float16", function(x, y, c) return I.draw_bounding_boxes(x, y, c) end,
      { images:cast("float16"), b, tide.tensor({ { 1, 0, 0.5 }, { 0, 1, 0 } }, "float32") })
  end
  cases.encode_jpeg = function(add)
    add("rgb", function(x) return I.encode_jpeg_tensor(x, { quality = 80 }) end, { data({ 5, 7, 3 }, "uint8") })
    add("gray, a quality tensor", function(x, q) return I.encode_jpeg_tensor(x, { quality = q }) end,
      { data({ 4, 4, 1 }, "uint8"), tide.tensor(60) })
  end
  cases.stateless_random_uniform = function(add)
    local R = tide.random
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16" } do
      add(dt, function(s) return R.stateless_uniform({ 3, 5 }, s, { dtype = dt }) end, { tide.tensor { 7, -2 } })
    end
    add("int32 bounds", function(s) return R.stateless_uniform({ 9 }, s, { minval = -4, maxval = 30, dtype = "int32" }) end,
      { tide.tensor({ 1, 2 }, "int64") })
    add("int64, every value", function(s) return R.stateless_uniform({ 4 }, s, { dtype = "int64" }) end,
      { tide.tensor { 3, 3 } })
    add("a shape input", function(s, x) return R.stateless_uniform(tide.shape(x), s) end,
      { tide.tensor { 5, 6 }, data({ 2, 3 }, "float32") })
  end
  cases.stateless_sample_distorted_bounding_box = function(add)
    local b = tide.tensor({ { { 0.1, 0.2, 0.6, 0.7 }, { 0.5, 0.5, 0.9, 0.8 } } }, "float32")
    add("boxes", function(size, bb, s)
      return I.stateless_sample_distorted_bounding_box(size, bb, s, { min_object_covered = 0.3 })
    end, { tide.tensor { 60, 80, 3 }, b, tide.tensor { 4, 9 } })
    add("the whole image, int64", function(size, bb, s)
      return I.stateless_sample_distorted_bounding_box(size, bb, s, { use_image_if_no_bounding_boxes = true,
        aspect_ratio_range = { 0.5, 2 } })
    end, { tide.tensor({ 31, 17, 1 }, "int64"), tide.zeros { 1, 0, 4 }, tide.tensor { -3, 8 } })
  end
end

for name, make in pairs(CONV) do
  -- The convolutions' gradients give the backprop ops an input's or filter's
  -- rank as attributes, known while tracing; an unknown rank has none.
  local grad_error = name:find("conv", 1, true) and "'s gradient needs the rank of its" or nil
  cases[name] = function(add)
    for _, dt in ipairs(M.dtypes_of(name)) do
      for _, c in ipairs(make(dt)) do add(dt .. " " .. c[1], c[2], c[3], { approx = true, grad_rank_error = grad_error }) end
    end
  end
end

-- tide.strings: string tensors in, strings or numbers out (none is differentiable).
do
  local S = tide.strings
  local words = function() return tide.tensor { "Hello World", "  a b\t", "\195\132x", "" } end
  local grid = function() return tide.tensor { { "ab", "Cd", "e" }, { "F", "", "gH" } } end
  local strided_words = function() return grid():transpose() end
  local empty = function() return tide.tensor({}, "string") end
  local function each_input(name, fn, opts)
    cases[name] = function(add)
      add("vector", fn, { words() }, opts)
      add("2-d strided", fn, { strided_words() }, opts)
      add("scalar", fn, { tide.tensor "MiXeD  " }, opts)
      add("empty", fn, { empty() }, opts)
    end
  end
  each_input("string_lower", function(x) return S.lower(x) end)
  each_input("string_upper", function(x) return S.upper(x) end)
  each_input("string_strip", function(x) return S.strip(x) end)
  cases.string_length = function(add)
    add("bytes", function(x) return S.length(x) end, { words() })
    add("utf8 strided", function(x) return S.length(x, { unit = "UTF8_CHAR" }) end, { strided_words() })
    add("empty", function(x) return S.length(x) end, { empty() })
  end
  cases.string_to_number = function(add)
    add("float32", function(x) return S.to_number(x) end, { tide.tensor { " 1.5", "-2e3", "inf" } })
    add("int64 2-d strided", function(x) return S.to_number(x, { out_type = "int64" }) end,
      { tide.tensor({ { "1", "2" }, { "-3", "4" } }):transpose() })
    add("float64 empty", function(x) return S.to_number(x, { out_type = "float64" }) end, { empty() })
  end
  cases.as_string = function(add)
    for _, dt in ipairs { "float32", "float64", "int32", "int64", "bool", "uint8" } do
      add(dt, function(x) return S.as_string(x) end, { data({ 2, 3 }, dt) })
    end
    add("strided", function(x) return S.as_string(x) end, { strided({ 2, 3 }, "float32") })
  end
  cases.string_join = function(add)
    add("two", function(a, b) return S.join({ a, b }, { separator = "-" }) end, { words(), words() })
    add("broadcast", function(a, b) return S.join({ a, b, a }) end, { grid(), tide.tensor { "x", "y", "z" } })
    add("one", function(a) return S.join({ a }) end, { strided_words() })
  end
  cases.string_format = function(add)
    add("two", function(a, b) return S.format("a {} b {}!", { a, b }) end, { words(), data({ 2, 3 }, "float32") })
    add("strided, summarize 1", function(x) return S.format("{}", x, { summarize = 1 }) end,
      { strided({ 4, 3 }, "float32") })
    add("int64 and bool, all", function(a, b) return S.format("{}{}", { a, b }, { summarize = -1 }) end,
      { data({ 9 }, "int64"), data({ 2, 2 }, "bool") })
  end
  cases.reduce_join = function(add)
    add("all", function(x) return S.reduce_join(x, { separator = "," }) end, { grid() })
    add("axis 1 keepdims", function(x) return S.reduce_join(x, { axis = 1, keepdims = true }) end, { grid() })
    add("axis 0 strided", function(x) return S.reduce_join(x, { axis = 0, separator = "+" }) end, { strided_words() })
    add("empty", function(x) return S.reduce_join(x, { axis = 0 }) end, { tide.tensor({}, "string"):reshape { 0, 2 } })
  end
  cases.substr = function(add)
    add("bytes", function(x, p, n) return S.substr(x, p, n) end,
      { tide.tensor { "hello", "world" }, tide.tensor { 1, -2 }, tide.tensor(3) })
    add("utf8 int64", function(x, p, n) return S.substr(x, p, n, { unit = "UTF8_CHAR" }) end,
      { tide.tensor { "\195\132\195\150\195\188", "abc" }, tide.tensor(1, "int64"), tide.tensor(1, "int64") })
  end
  cases.regex_replace = function(add)
    add("global", function(x) return S.regex_replace(x, "(o)|a*", "[\\1]") end, { words() })
    add("first, strided", function(x) return S.regex_replace(x, "[a-z]", "_", { replace_global = false }) end,
      { strided_words() })
  end
  cases.string_hash = function(add)
    add("fast", function(x) return S.to_hash_bucket_fast(x, 1000) end, { words() })
    add("strong strided", function(x) return S.to_hash_bucket_strong(x, 7, { 3, -4 }) end, { strided_words() })
    add("legacy empty", function(x) return S.to_hash_bucket(x, 5) end, { empty() })
  end
  cases.fingerprint = function(add)
    add("strings", function(x) return tide.fingerprint(x) end, { words() })
    add("string rows strided", function(x) return tide.fingerprint(x) end, { strided_words() })
    add("int64 rows", function(x) return tide.fingerprint(x) end, { tide.tensor({ { 3, -1, 7 }, { 0, 9, 2 } }, "int64") })
  end
  cases.cross_hashed = function(add)
    local ids = function() return tide.tensor({ { 3, -1, 7 }, { 0, 9, 2 } }, "int64") end
    add("strings x ints", function(a, b) return S.cross_hashed_dense({ a, b }, 100) end, { grid(), ids() })
    add("strided, no buckets", function(a, b) return S.cross_hashed_dense({ a, b }, 0, 77) end,
      { strided_words(), tide.tensor({ { 1 }, { 2 }, { 3 } }, "int64") })
  end
  local vec_rank = { rank_error = "the rank of the input must be known" }
  cases.unicode_decode = function(add)
    add("vector", function(x) local r = S.unicode_decode(x, "UTF-8") return r.values, r.row_splits end,
      { words() }, vec_rank)
    add("scalar offsets utf-16", function(x) return S.unicode_decode_with_offsets(x, "UTF-16-BE") end,
      { tide.tensor "\0H\216=\222\0\0" }, vec_rank)
    add("bytes_split", function(x) local r = S.bytes_split(x) return r.values, r.row_splits end, { words() }, vec_rank)
  end
  cases.unicode_encode = function(add)
    add("dense 2-d", function(x) return S.unicode_encode(x, "UTF-8") end,
      { tide.tensor({ { 104, 233 }, { 26085, 0x1F600 } }, "int32") })
    add("ragged", function(v, rs) return S.unicode_encode(tide.RaggedTensor.from_row_splits(v, rs), "UTF-32-BE") end,
      { tide.tensor({ 65, 66, 67 }, "int32"), tide.tensor({ 0, 1, 1, 3 }, "int64") },
      { rank_error = "row_splits must be a 1-D int64 tensor" })
    add("transcode strided", function(x) return S.unicode_transcode(x, "UTF-8", "UTF-16-BE") end, { strided_words() })
  end
  cases.unicode_script = function(add)
    add("2-d", function(x) return S.unicode_script(x) end, { tide.tensor({ { 72, 1084 }, { 26085, -1 } }, "int32") })
  end
  cases.regex_full_match = function(add)
    add("vector", function(x) return S.regex_full_match(x, "[A-Za-z ]*") end, { words() })
    add("strided", function(x) return S.regex_full_match(x, "[a-z]+|") end, { strided_words() })
  end
  cases.unsorted_segment_join = function(add)
    add("rows", function(x, ids) return S.unsorted_segment_join(x, ids, 3, { separator = "|" }) end,
      { grid(), tide.tensor { 2, 0 } })
    add("strided prefix", function(x, ids) return S.unsorted_segment_join(x, ids, 2) end,
      { strided_words(), tide.tensor({ { 0, 1 }, { 1, 1 }, { 0, 0 } }, "int64") })
  end
  cases.string_ngrams = function(add)
    -- dense data keeps its rank (the last axis the n-gram count); ragged data gives values and row splits
    add("dense widths pads", function(x) return S.ngrams(x, { 1, 2 }, { pad_values = "#" }) end, { grid() })
    add("dense strided preserve", function(x) return S.ngrams(x, 3, { preserve_short_sequences = true }) end,
      { strided_words() })
    add("ragged", function(v, rs) local r = S.ngrams(tide.RaggedTensor.from_row_splits(v, rs), 2,
        { separator = "+", pad_values = { "<", ">" } }) return r.values, r.row_splits end,
      { tide.tensor { "a", "b", "c", "d" }, tide.tensor({ 0, 3, 3, 4 }, "int64") },
      { rank_error = "row_splits must be a 1-D int64 tensor" }) -- a RaggedTensor needs its splits' rank
  end
  cases.string_split = function(add)
    -- a scalar gives a tensor, a vector a RaggedTensor: the rank must be known
    local vec = { rank_error = "split: the rank of the input" }
    add("scalar whitespace", function(x) return S.split(x) end, { tide.tensor " a  b c " },
      { rank_error = "split: the rank of the input" })
    add("vector sep", function(x) local r = S.split(x, ",") return r.values, r.row_splits end,
      { tide.tensor { "a,b", "", ",c," } }, vec)
    add("vector maxsplit", function(x) local r = S.split(x, nil, 1) return r.values, r.row_splits end,
      { tide.tensor { "a b c", "d", "  " } }, vec)
  end
end

-- tide.lookup's vocabularies and TextVectorization's token ops (kernels/cpu/lookup.c, ragged.c, text_ngrams.c).
do
  local LK = tide.lookup
  local NG = require "tide.layers.preprocessing.text_ngrams"
  local svocab = tide.tensor { "a", "bb", "", "ccc" }
  local ivocab = tide.tensor({ 7, -2, 40 }, "int64")
  cases.lookup_table = function(add)
    add("strings", function(v) return LK.table(v) end, { svocab })
    add("int64", function(v) return LK.table(v) end, { ivocab })
  end
  cases.lookup_find = function(add)
    local st, it = LK.table(svocab), LK.table(ivocab)
    add("strings, one OOV", function(k) return LK.find(k, svocab, st, { first = 2, num_oov = 1 }) end,
      { tide.tensor { { "bb", "x" }, { "", "ccc" } } })
    add("int64, floormod OOV", function(k) return LK.find(k, ivocab, it, { first = 4, num_oov = 3 }) end,
      { tide.tensor({ 40, 5, -7, 7 }, "int64") })
    add("strided keys, no OOV", function(k) return LK.find(k, svocab, st) end,
      { tide.tensor { { "a", "q" }, { "ccc", "bb" } }:transpose() })
  end
  cases.ragged_to_tensor = function(add)
    add("strings, longest", function(v, rs) return LK.ragged_to_tensor(v, rs, "") end,
      { tide.tensor { "a", "b", "c" }, tide.tensor({ 0, 2, 2, 3 }, "int64") })
    add("int64 cut to 1", function(v, rs) return LK.ragged_to_tensor(v, rs, -1, 1) end,
      { tide.tensor({ 4, 5, 6 }, "int64"), tide.tensor({ 0, 0, 3 }, "int64") })
  end
  cases.text_ngrams = function(add)
    add("1 and 2", function(v, rs) return NG.ngrams(v, rs, { 1, 2 }) end,
      { tide.tensor { "a", "b", "c", "d" }, tide.tensor({ 0, 3, 3, 4 }, "int64") })
    add("3 with separator", function(v, rs) return NG.ngrams(v, rs, { 3 }, "_") end,
      { tide.tensor { "x", "y", "z" }, tide.tensor({ 0, 3 }, "int64") })
  end
  cases.wordpiece_tokenize = function(add)
    local tok = tide.text.WordPieceTokenizer { vocabulary = { "[UNK]", "the", "play", "##ing", "##s", ",", "caf",
      "##e" }, lowercase = true, strip_accents = true }
    add("uncased", function(x) local r = tok(x) return r.values, r.row_splits end,
      { tide.tensor { "The playing, plays", "", "Café xyz" } })
    local tok3 = tide.text.WordPieceTokenizer { vocabulary = { "[UNK]", "the", "play", "##s" }, sequence_length = 3 }
    add("sequence_length", function(x) return tok3:tokenize(x) end, { tide.tensor { "the the", "plays" } })
  end
  cases.bpe_tokenize = function(add)
    local V = { a = 0, b = 1, ab = 2, ["\196\160"] = 3, ["\196\160ab"] = 4, ["<s>"] = 5 }
    local tok = tide.text.BytePairTokenizer { vocabulary = V, merges = { "a b", "\196\160 ab" },
      unsplittable_tokens = { "<s>" } }
    add("ragged", function(x) local r = tok(x) return r.values, r.row_splits end,
      { tide.tensor { "ab ab<s>", "", "ba c" } })
    local pieces = tide.text.BytePairTokenizer { vocabulary = V, merges = { "a b" }, dtype = "string",
      sequence_length = 3, add_prefix_space = true }
    add("pieces, prefix space, sequence_length", function(x) return pieces:tokenize(x) end,
      { tide.tensor { "ab", "a b a b" } })
  end
  cases.bpe_bytes_decode = function(add)
    local tok = tide.text.BytePairTokenizer { vocabulary = { a = 0, ["\196\160"] = 1 }, merges = {} }
    add("dense rows", function(ids) return tok:detokenize(ids) end, { tide.tensor({ { 0, 1, 0 }, { 1, -1, 0 } }) },
      { rank_error = "detokenize: the ids have an unknown rank while tracing" })
  end
  cases.text_chars = function(add)
    add("utf-8", function(x) return NG.characters(x) end, { tide.tensor { "ab", "", "\195\132x" } })
  end
end

-- tide.debugging's assertions: passing ones (the graph keeps the node, whose result nothing reads).
do
  local D = tide.debugging
  cases.assert = function(add)
    add("positive", function(x) D.assert_positive(x) return x * 2 end, { data({ 2, 3 }, "float32", "pos") })
    add("equal, broadcast", function(x, y) D.assert_equal(x, y) return x + y end,
      { data({ 2, 3 }, "int32"), data({ 2, 3 }, "int32") })
    add("check_numerics float64", function(x) return D.check_numerics(x, "finite") * 1 end, { data({ 4 }, "float64") })
  end
end

-- tf.train.Example (kernels/io/example_op.c): one op per feature of a spec;
-- a 1-D serialized tensor is a batch, a 0-d one a record, so the rank must be known.
do
  local IO = tide.io
  local F, V = IO.FixedLenFeature, IO.VarLenFeature
  local recs = {
    IO.serialize_example { n = { int64_list = { 3 } }, v = { float_list = { 1.5, -2 } }, w = { "ab", "" },
      t = { int64_list = { 4, 5, 6 } } },
    IO.serialize_example { n = { int64_list = { -1 } }, v = { float_list = { 0, 7 } }, t = { int64_list = {} } },
    IO.serialize_example { n = { int64_list = { 9 } }, v = { float_list = { 2, 3 } }, w = { "x" } },
  }
  local batch = tide.tensor(recs, "string")
  local rank = { rank_error = "the rank of serialized must be known" }
  cases.parse_example_dense = function(add)
    add("int64 batch", function(s) return IO.parse_example(s, { n = F({}, "int64") }).n end, { batch }, rank)
    add("float32 [2] record", function(s) return IO.parse_single_example(s, { v = F({ 2 }, "float32") }).v end,
      { tide.tensor(recs[2], "string") }, rank)
    add("float32 [1, 2] default", function(s)
      return IO.parse_example(s, { q = F({ 1, 2 }, "float32", { default_value = { 8, 9 } }) }).q
    end, { batch }, rank)
    add("string default", function(s)
      return IO.parse_example(s, { u = F({}, "string", { default_value = "none" }) }).u
    end, { batch }, rank)
  end
  cases.parse_example_sparse = function(add)
    add("int64 batch", function(s) local t = IO.parse_example(s, { t = V("int64") }).t
      return t.indices, t.values, t.dense_shape end, { batch }, rank)
    add("string record", function(s) local t = IO.parse_single_example(s, { w = V("string") }).w
      return t.indices, t.values, t.dense_shape end, { tide.tensor(recs[1], "string") }, rank)
    add("float32 batch, strided", function(s) local t = IO.parse_example(s, { v = V("float32") }).v
      return t.indices, t.values, t.dense_shape end, { batch:slice { { 0, 3, 2 } } }, rank)
  end
end

-- tide.distribute's all_reduce_sum: in one process a world of one (each sum
-- is the value); an effect, so the graph keeps the node in order.
cases.all_reduce_sum = function(add)
  local D = tide.distribute
  add("two dtypes, one call", function(x, y)
    local s = D.all_reduce_op { x, y }
    return s[1] * 2, s[2]
  end, { data({ 2, 3 }, "float32"), data({ 4 }, "float64") })
  add("small buckets", function(x) return D.all_reduce_sum(x, { bytes_per_pack = 8 }) + 1 end, { data({ 5 }, "float32") })
end

-- tf.linalg's and tf.signal's cases (tests/support/trace_ops_cases_linalg.lua, _signal.lua).
for _, family in ipairs { "trace_ops_cases_linalg", "trace_ops_cases_signal" } do
  for name, fn in pairs(require(family)(M)) do
    assert(cases[name] == nil, "trace_ops_cases: two entries for op " .. name)
    cases[name] = fn
  end
end
for name, fn in pairs(require("trace_ops_cases_nn")(M)) do
  assert(cases[name] == nil, "trace_ops_cases: two entries for op " .. name)
  cases[name] = fn
end

return M
