-- stdlib/tide/debugging/assertions.lua — tf.debugging's assertions, run eagerly and in traced
-- graphs (one registry op, `assert`; static facts checked while tracing): signs, equality, finiteness, ranks, shapes.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dispatch = require "tide.dispatch"
local args = require "tide.args"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local dynamic_shape = require "tide.ops.dynamic_shape"

local C, ffi = binding.C, binding.ffi
local M = {}

local function is_tensor(v) return ffi.istype(binding.Tensor, v) end
local function is_symbolic(t) return bit.band(t.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0 end

local function describe(x) -- "shape=[None, 3] dtype=float32"
  if x.ndim < 0 then return "shape=<unknown> dtype=" .. dtype.names[x.dt] end
  local d = {}
  for i = 0, x.ndim - 1 do d[#d + 1] = x.dims[i] < 0 and "None" or tostring(x.dims[i]) end
  return "shape=[" .. table.concat(d, ", ") .. "] dtype=" .. dtype.names[x.dt]
end

local function check_summarize(fn, s)
  if s ~= nil and (type(s) ~= "number" or s < 1 or s % 1 ~= 0) then
    binding.error(fn .. ": summarize must be a positive integer, got " .. tostring(s))
  end
  return s
end

local function check_message(fn, m)
  if m ~= nil and type(m) ~= "string" then binding.error(fn .. ": message must be a string, got " .. type(m)) end
  return m
end

-- Run the assert op: fail (now, or when the graph runs) unless every
-- element of cond is true; `data` is a list of strings and tensors shown
-- after the text. A float cond is checked for NaN and Inf instead.
local function run_assert(cond, text, data, summarize)
  local ins = { cond, convert.tensor(text, "string", "assert") }
  for _, d in ipairs(data or {}) do
    ins[#ins + 1] = type(d) == "string" and convert.tensor(d, "string", "assert") or d
  end
  local a = dispatch.attrs()
  a.n = summarize or 0
  return dispatch.run(C.TIDE_OP_ASSERT, a, ins)
end

local function lead(fn, message) return fn .. ": " .. (message and message .. ": " or "") end

local function tensor_arg(fn, x, what)
  if x == nil then binding.error(fn .. ": " .. what .. " must be a tensor, got nil") end
  return convert.arg(x, fn)
end

-- The elementwise assertions: fail unless cmp(x, 0) holds everywhere.
local function sign_assert(fn, cmp, cond_text)
  return function(x, ...)
    local o = args.parse(fn, { "message", "summarize", "name" }, ...)
    x = tensor_arg(fn, x, "x")
    check_message(fn, o.message)
    if x.dt == C.TIDE_STRING or x.dt == C.TIDE_BOOL then
      binding.error(fn .. ": x must be a numeric tensor, got " .. dtype.names[x.dt])
    end
    local cond = cmp(x, convert.tensor(0, dtype.names[x.dt], fn))
    run_assert(cond, lead(fn, o.message) .. "Condition " .. cond_text .. " did not hold element-wise:",
      { "x (" .. describe(x) .. ") =", x }, check_summarize(fn, o.summarize))
  end
end

-- assert_positive(x, {message=, summarize=}): every element of x > 0.
M.assert_positive = sign_assert("assert_positive", math_ops.greater, "x > 0")
-- assert_non_negative(x, {message=, summarize=}): every element of x >= 0.
M.assert_non_negative = sign_assert("assert_non_negative", math_ops.greater_equal, "x >= 0")

-- assert_equal(x, y, {message=, summarize=}): x == y element-wise (broadcast).
function M.assert_equal(x, y, ...)
  local fn = "assert_equal"
  local o = args.parse(fn, { "message", "summarize", "name" }, ...)
  check_message(fn, o.message)
  if x == nil or y == nil then binding.error(fn .. ": expects x and y") end
  if not is_tensor(x) then x = convert.coerce(x, y, fn, 1) end
  if not is_tensor(y) then y = convert.coerce(y, x, fn, 2) end
  local cond = math_ops.equal(x, y)
  run_assert(cond, lead(fn, o.message) .. "Condition x == y did not hold element-wise:",
    { "x (" .. describe(x) .. ") =", x, "y (" .. describe(y) .. ") =", y }, check_summarize(fn, o.summarize))
end

-- The binary comparisons (x, y broadcast): fail unless cmp(x, y) holds everywhere.
local function compare_assert(fn, cmp, cond_text)
  return function(x, y, ...)
    local o = args.parse(fn, { "message", "summarize", "name" }, ...)
    check_message(fn, o.message)
    if x == nil or y == nil then binding.error(fn .. ": expects x and y") end
    if not is_tensor(x) then x = is_tensor(y) and convert.coerce(x, y, fn, 1) or convert.arg(x, fn, 1) end
    if not is_tensor(y) then y = convert.coerce(y, x, fn, 2) end
    for _, t in ipairs { x, y } do
      if t.dt == C.TIDE_STRING or t.dt == C.TIDE_BOOL then
        binding.error(fn .. ": x and y must be numeric tensors, got " .. dtype.names[t.dt])
      end
    end
    local cond = cmp(x, y)
    run_assert(cond, lead(fn, o.message) .. "Condition " .. cond_text .. " did not hold element-wise:",
      { "x (" .. describe(x) .. ") =", x, "y (" .. describe(y) .. ") =", y }, check_summarize(fn, o.summarize))
  end
end

-- assert_greater(x, y, {message=, summarize=}), assert_less, assert_greater_equal, assert_less_equal: the
-- comparison holds element-wise (broadcast), as tf.debugging's.
M.assert_greater = compare_assert("assert_greater", math_ops.greater, "x > y")
M.assert_less = compare_assert("assert_less", math_ops.less, "x < y")
M.assert_greater_equal = compare_assert("assert_greater_equal", math_ops.greater_equal, "x >= y")
M.assert_less_equal = compare_assert("assert_less_equal", math_ops.less_equal, "x <= y")

-- Assert(condition, data, summarize=nil) as tf.debugging.Assert: fail (now, or when the traced graph runs) unless
-- the bool scalar condition is true; the error shows data (a list of strings and tensors).
function M.Assert(condition, data, ...)
  local fn = "Assert"
  local o = args.parse(fn, { "summarize", "name" }, ...)
  local cond = tensor_arg(fn, condition, "condition")
  if cond.dt ~= C.TIDE_BOOL or (cond.ndim >= 0 and cond.ndim ~= 0) then
    binding.error(fn .. ": condition must be a bool scalar, got " .. describe(cond))
  end
  if type(data) ~= "table" or is_tensor(data) then
    binding.error(fn .. ": data must be a Lua list of strings and tensors, got " .. (is_tensor(data) and "a tensor"
      or type(data)))
  end
  local list = {}
  for i = 1, #data do
    local d = data[i]
    if type(d) == "string" or is_tensor(d) then list[i] = d
    elseif convert.is_variable(d) then list[i] = convert.unvariable(d)
    else list[i] = convert.arg(d, fn, i) end
  end
  run_assert(cond, "assertion failed:", list, check_summarize(fn, o.summarize))
end

-- assert_all_finite(x, message): x, after checking it holds no NaN or
-- Inf (tf.debugging.assert_all_finite).
function M.assert_all_finite(x, message, ...)
  return M.check_numerics(x, message, ...)
end

-- check_numerics(x, message): x, after checking that it holds no NaN or
-- infinity; the error reads "<message> : Tensor had NaN values" as TF's.
function M.check_numerics(x, message, ...)
  local fn = "check_numerics"
  x = tensor_arg(fn, x, "x")
  if type(message) ~= "string" then binding.error(fn .. ": message must be a string, got " .. type(message)) end
  if not (x.dt == C.TIDE_FLOAT32 or x.dt == C.TIDE_FLOAT64 or x.dt == C.TIDE_FLOAT16 or x.dt == C.TIDE_BFLOAT16) then
    binding.error(fn .. ": x must be a float tensor, got " .. dtype.names[x.dt])
  end
  run_assert(x, message)
  return x
end

-- The rank of x as a Lua number, or nil when only the graph's run knows it.
local function static_rank(x) return x.ndim >= 0 and x.ndim or nil end

-- assert_rank(x, rank, {message=}): x has rank `rank` (a number or a 0-d int
-- tensor). A known rank is checked now, also while tracing (TF's ValueError);
-- an unknown one when the graph runs.
function M.assert_rank(x, rank, ...)
  local fn = "assert_rank"
  local o = args.parse(fn, { "message", "name" }, ...)
  x = tensor_arg(fn, x, "x")
  check_message(fn, o.message)
  if is_tensor(rank) then
    if rank.ndim ~= 0 or not (rank.dt == C.TIDE_INT32 or rank.dt == C.TIDE_INT64) then
      binding.error(fn .. ": rank must be a 0-d integer tensor or a number")
    end
    if is_symbolic(rank) then
      run_assert(math_ops.equal(dynamic_shape.rank(x), rank:cast("int32")),
        lead(fn, o.message) .. "Condition rank(x) == rank did not hold:", { "rank(x) =", dynamic_shape.rank(x) })
      return
    end
    rank = rank:item()
  end
  if type(rank) ~= "number" or rank < 0 or rank % 1 ~= 0 then
    binding.error(fn .. ": rank must be a non-negative integer, got " .. tostring(rank))
  end
  local r = static_rank(x)
  if r then
    if r ~= rank then
      binding.error(string.format("%sTensor x must have rank %d. Received rank %d, %s", lead(fn, o.message), rank,
        r, describe(x)))
    end
    return
  end
  run_assert(math_ops.equal(dynamic_shape.rank(x), convert.tensor(rank, "int32", fn)),
    string.format("%sTensor x must have rank %d.", lead(fn, o.message), rank),
    { "Received rank", dynamic_shape.rank(x) })
end

-- assert_shapes({{x, {"N", 3}}, {y, {"N"}}}, {message=}): each tensor's
-- shape matches its spec, dims named by the same string agreeing across
-- tensors (tf.debugging.assert_shapes). A spec entry is a number, a name,
-- "." or tide.None (any size); a first entry "*" stands for any leading
-- dims. Known dims are checked now (while tracing too); dims only the
-- graph's run knows are checked then.
function M.assert_shapes(shapes, ...)
  local fn = "assert_shapes"
  local o = args.parse(fn, { "data", "summarize", "message", "name" }, ...)
  check_message(fn, o.message)
  if type(shapes) ~= "table" then binding.error(fn .. ": shapes must be a list of {tensor, shape} pairs") end
  local None = require("tide.tensor_shape").None
  local bound = {} -- name -> { value = number or 0-d tensor, where = text }
  local prefix = lead(fn, o.message)
  for i, pair in ipairs(shapes) do
    if type(pair) ~= "table" or pair[1] == nil or type(pair[2]) ~= "table" then
      binding.error(string.format("%s: entry %d must be {tensor, shape}", fn, i))
    end
    local x = tensor_arg(fn, pair[1], "entry " .. i .. "'s tensor")
    local spec = pair[2]
    local first = 1
    if spec[1] == "*" then first = 2 end
    local want = #spec - first + 1
    local r = static_rank(x)
    if not r then
      binding.error(string.format("%s: entry %d's tensor has an unknown rank: give its rank with assert_rank, "
        .. "or trace with a known rank", fn, i))
    end
    if (first == 1 and r ~= want) or (first == 2 and r < want) then
      binding.error(string.format("%stensor %d must have rank %s%d. Received rank %d, %s", prefix, i,
        first == 2 and "at least " or "", want, r, describe(x)))
    end
    for k = first, #spec do
      local axis = r - (#spec - k) - 1
      local s = spec[k]
      local known = x.dims[axis] >= 0 and tonumber(x.dims[axis]) or nil
      local where = string.format("tensor %d dimension %d", i, axis)
      local function check(value, value_where)
        if type(value) == "number" and known then
          if value ~= known then
            binding.error(string.format("%s%s must have size %d (%s). Received size %d, %s", prefix, where, value,
              value_where, known, describe(x)))
          end
          return
        end
        local have = known and convert.tensor(known, "int32", fn) or dynamic_shape.size_along(x, axis)
        local need = type(value) == "number" and convert.tensor(value, "int32", fn) or value
        run_assert(math_ops.equal(have, need), string.format("%s%s must have size as %s.", prefix, where, value_where),
          { "Received size", have, "expected", need })
      end
      if type(s) == "number" then
        check(s, "as specified")
      elseif type(s) == "string" and s ~= "." then
        local b = bound[s]
        if b then check(b.value, b.where .. ", named '" .. s .. "'")
        else bound[s] = { value = known or dynamic_shape.size_along(x, axis), where = where } end
      elseif not (s == "." or s == None) then
        binding.error(string.format("%s: entry %d's shape: dimension %d is %s (use a number, a name, \".\" or tide.None)",
          fn, i, k, tostring(s)))
      end
    end
  end
end

return M
