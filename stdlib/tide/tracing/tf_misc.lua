-- stdlib/tide/tracing/tf_misc.lua — TF's small top-level helpers about the running mode and lists of tensors:
-- executing_eagerly, inside_function, no_op, identity_n, shape_n, broadcast_static_shape, as_dtype,
-- get_static_value (tide.<name>).
local binding = require "tide.binding"
local values = require "tide.tracing.values"
local dyn = require "tide.ops.dynamic_shape"
local shape_ops = require "tide.ops.shape"
local args = require "tide.args"
local None = require("tide.tensor_shape").None
local dtype = require "tide.dtype"
local tensor = require "tide.tensor"
local fmt = string.format

local M = {}

-- executing_eagerly(): false while tide.trace builds a graph (TF's tf.function), true otherwise.
function M.executing_eagerly() return not values.tracing() end

-- inside_function(): true while tide.trace builds a graph.
function M.inside_function() return values.tracing() end

-- no_op(): does nothing (TF's placeholder op; eager TF returns None too).
function M.no_op() return nil end

-- The list argument of identity_n/shape_n: a Lua list of tensors (a Variable stands for its value).
local function tensor_list(op, xs)
  if type(xs) ~= "table" or binding.istensor(xs) then
    local got = binding.istensor(xs) and "a tensor" or type(xs)
    binding.error(fmt("%s: input must be a list of tensors, got %s", op, got))
  end
  local out = {}
  for i = 1, #xs do
    out[i] = values.is_variable(xs[i]) and values.read_variable(xs[i]) or xs[i]
    if not binding.istensor(out[i]) then
      binding.error(fmt("%s: element %d of input is a %s, not a tensor", op, i, type(xs[i])))
    end
  end
  return out
end

-- identity_n(list): a list of the tensors' identities (new tensors, same values; the tape passes through).
function M.identity_n(xs)
  xs = tensor_list("identity_n", xs)
  local out = {}
  for i = 1, #xs do out[i] = shape_ops.identity(xs[i]) end
  return out
end

-- shape_n(list, {out_type="int32"}): a list of the tensors' shapes, each as tide.shape gives it.
function M.shape_n(xs, ...)
  local o = args.parse("shape_n", { "out_type" }, ...)
  xs = tensor_list("shape_n", xs)
  local out = {}
  for i = 1, #xs do out[i] = dyn.shape(xs[i], { out_type = o.out_type }) end
  return out
end

-- A static shape argument: a Lua list of sizes (-1 or tide.None for unknown), a tide.Shape, or a tensor's shape.
local function dims_of(op, what, s)
  if type(s) == "table" and type(s.as_list) == "function" then s = s:as_list() end
  if type(s) ~= "table" then binding.error(fmt("%s: %s must be a list of sizes, got %s", op, what, type(s))) end
  local d = {}
  for i = 1, #s do
    local v = s[i]
    if v == None then v = -1 end
    if type(v) ~= "number" or v % 1 ~= 0 or v < -1 then
      binding.error(fmt("%s: %s[%d] must be a size >= 0 or -1 (unknown), got %s", op, what, i, tostring(s[i])))
    end
    d[i] = v
  end
  return d
end

-- broadcast_static_shape(shape_x, shape_y): the shape both broadcast to (a Lua list, -1 where unknown),
-- as TF's (right-aligned; a 1 takes the other's size; an unknown against a size > 1 is that size).
function M.broadcast_static_shape(x, y)
  local op = "broadcast_static_shape"
  local a, b = dims_of(op, "shape_x", x), dims_of(op, "shape_y", y)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local p, q = a[#a - n + i] or 1, b[#b - n + i] or 1
    local r
    if p == 1 then r = q
    elseif q == 1 then r = p
    elseif p == -1 then r = q
    elseif q == -1 or p == q then r = p
    else
      binding.error(fmt("%s: incompatible shapes [%s] and [%s] (dim %d: %d vs %d)", op,
        table.concat(a, ","), table.concat(b, ","), i - 1, p, q))
    end
    out[i] = r
  end
  return out
end

-- as_dtype(type_value) as tf.as_dtype: the DType constant (tide.float32 ...) for a name, an alias ("double")
-- or a DType; anything else is an error listing the dtypes.
function M.as_dtype(v)
  if dtype.is_dtype(v) then return v end
  if type(v) ~= "string" then binding.error("as_dtype: expected a dtype or its name, got " .. type(v)) end
  return dtype.constants[dtype.names[dtype.code(v, "as_dtype")]]
end

-- get_static_value(tensor) as tf.get_static_value: an eager tensor itself (its value is known), nil for a
-- traced one (TF's constant folding of graph tensors is not tide's: docs/tf_differences.md). Lua values
-- convert to a tensor.
function M.get_static_value(t)
  if values.is_variable(t) then return values.read_variable(t) end
  if not binding.istensor(t) then t = require("tide.convert").tensor(t, nil, "get_static_value") end
  if tensor.is_symbolic(t) then return nil end
  return t
end

return M
