-- stdlib/tide/losses/common.lua — what tide.losses and tide.metrics share: the
-- ops in one table, inputs made tensors, Keras's rank alignment, shape checks, option tables, names.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local base_init = require "tide.initializers.base"

local M = {}

-- The ops these modules use, gathered from the op modules (the public table is a floor above).
local ops = {}
local function take(mod)
  for k, f in pairs(mod) do
    if type(f) == "function" and ops[k] == nil then ops[k] = f end
  end
end
take(require "tide.ops.math")
take(require "tide.ops.reduce")
take(require "tide.ops.shape")
take(require "tide.ops.create")
take(require "tide.ops.segment")
do
  local dyn = require "tide.ops.dynamic_shape"
  ops.shape, ops.num_elements, ops.size_along = dyn.shape, dyn.num_elements, dyn.size_along
end
ops.nn = require "tide.ops.nn"
M.ops = ops

-- Keras's backend.epsilon(): the fuzz factor of its clips and divisions.
M.EPSILON = 1e-7

M.error = binding.error

local FLOATS = "float32, float64, float16 or bfloat16"

local function is_float_name(dt)
  return dt == "float32" or dt == "float64" or dt == "float16" or dt == "bfloat16"
end
M.is_float_name = is_float_name

-- A float dtype name from a user's `dtype` option (nil stays nil).
function M.float_dtype(op, dt)
  if dt == nil then return nil end
  local ok, code = pcall(dtype.code, dt, op)
  local name = ok and dtype.names[code]
  if not (name and is_float_name(name)) then
    binding.error(string.format("%s: dtype must be a float dtype (%s), got %s", op, FLOATS, tostring(dt)))
  end
  return name
end

-- y_pred (or any value that must hold floats) as a float tensor: a Variable
-- is read, a Lua number or table becomes `dt` (float32 by default: Lua has no
-- 1.0 apart from 1); a tensor must already be float, cast to `dt` when given.
function M.float_input(op, what, v, dt)
  if convert.is_variable(v) then v = convert.unvariable(v) end
  if binding.istensor(v) then
    if not dtype.is_float[v.dt] then
      binding.error(string.format("%s: %s must be a float tensor (%s), got %s (use %s:cast(\"float32\"))",
        op, what, FLOATS, v.dtype, what))
    end
    if dt and v.dtype ~= dt then v = v:cast(dt) end
    return v
  end
  local tv = type(v)
  if tv == "number" or tv == "table" then return convert.tensor(v, dt or "float32", op) end
  binding.error(string.format("%s: %s must be a tensor, a Lua number or a table, got %s", op, what, tv))
end

-- y_true (or a weight) in the dtype `dt` of the predictions: tensors of any
-- numeric or bool dtype are cast (as Keras casts labels), Lua values converted.
function M.like_input(op, what, v, dt)
  if convert.is_variable(v) then v = convert.unvariable(v) end
  if binding.istensor(v) then
    if v.dtype ~= dt then v = v:cast(dt) end
    return v
  end
  local tv = type(v)
  if tv == "number" or tv == "boolean" or tv == "table" then
    if tv == "boolean" then return convert.tensor(v, "bool", op):cast(dt) end
    return convert.tensor(v, dt, op)
  end
  binding.error(string.format("%s: %s must be a tensor, a Lua number or a table, got %s", op, what, tv))
end

-- Integer class labels: int tensors pass, floats are cast to int64 (TF's
-- truncating cast, as Keras does), Lua values become int tensors.
function M.label_input(op, what, v)
  if convert.is_variable(v) then v = convert.unvariable(v) end
  if not binding.istensor(v) then
    local tv = type(v)
    if tv ~= "number" and tv ~= "table" then
      binding.error(string.format("%s: %s must be a tensor of class indices, a Lua number or a table, got %s",
        op, what, tv))
    end
    v = convert.tensor(v, nil, op)
  end
  if v.dtype == "bool" then
    binding.error(string.format("%s: %s must hold class indices (an int or float tensor), got bool", op, what))
  end
  if v.dtype ~= "int32" and v.dtype ~= "int64" then v = v:cast("int64") end
  return v
end

local None = require("tide.tensor_shape").None

-- True when dims a and b can be the same size (None matches anything).
local function dims_agree(a, b) return a == None or b == None or a == b end

-- Keras's squeeze_or_expand_to_same_rank: when ranks differ by one and the
-- longer ends in 1, squeeze that 1 (or, with expand_rank_1, expand a rank-1 other).
function M.squeeze_or_expand(x1, x2, expand_rank_1)
  if expand_rank_1 == nil then expand_rank_1 = true end
  local s1, s2 = x1.shape, x2.shape
  local r1, r2 = s1.rank, s2.rank
  if r1 == nil or r2 == nil or r1 == r2 then return x1, x2 end
  if r1 == r2 + 1 and s1[r1] == 1 then
    if r2 == 1 and expand_rank_1 then x2 = ops.expand_dims(x2, -1) else x1 = ops.squeeze(x1, { -1 }) end
  end
  if r2 == r1 + 1 and s2[r2] == 1 then
    if r1 == 1 and expand_rank_1 then x1 = ops.expand_dims(x1, -1) else x2 = ops.squeeze(x2, { -1 }) end
  end
  return x1, x2
end

-- An error unless a and b have the same shape (unknown dims and ranks pass: the graph checks them).
function M.check_same_shape(op, an, a, bn, b, hint)
  local sa, sb = a.shape, b.shape
  if sa.rank == nil or sb.rank == nil then return end
  local ok = sa.rank == sb.rank
  for i = 1, ok and sa.rank or 0 do ok = ok and dims_agree(sa[i], sb[i]) end
  if not ok then
    binding.error(string.format("%s: %s has shape %s but %s has shape %s; they must be the same%s",
      op, an, tostring(sa), bn, tostring(sb), hint or ""))
  end
end

-- An error unless b broadcasts against a (numpy's rule, from the last dim).
function M.check_broadcast(op, an, a, bn, b)
  local sa, sb = a.shape, b.shape
  if sa.rank == nil or sb.rank == nil then return end
  for k = 0, math.min(sa.rank, sb.rank) - 1 do
    local da, db = sa[sa.rank - k], sb[sb.rank - k]
    if not (dims_agree(da, db) or da == 1 or db == 1) then
      binding.error(string.format("%s: %s of shape %s does not broadcast against %s of shape %s",
        op, bn, tostring(sb), an, tostring(sa)))
    end
  end
end

-- A 0-d float tensor of x's element count (a constant when known, else computed when the graph runs).
function M.count(x, dt)
  return ops.cast(ops.num_elements(x), dt)
end

-- A constructor's arguments, Keras style (initializers.base.kwargs): Cls{a,
-- key = v} (list entries by position in `names`, Keras's argument order),
-- Cls(a, {key = v}) or Cls(a); unknown names are errors.
function M.options(op, names, ...)
  local n, t = select("#", ...), ...
  if n == 0 or (n == 1 and t == nil) then
    base_init.arg_names[op] = names
    return {}
  end
  if n == 1 and (binding.istensor(t) or convert.is_variable(t)) then
    binding.error(string.format("%s: expects a table of options (%s), got %s", op, table.concat(names, ", "), type(t)))
  end
  return base_init.kwargs(op, names, ...)
end

-- Checks for option values, naming the option.
function M.want_bool(op, name, v)
  if type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", op, name, tostring(v)))
  end
  return v
end
function M.want_number(op, name, v, lo, hi)
  if type(v) ~= "number" or v ~= v or (lo and v < lo) or (hi and v > hi) then
    local range = lo and hi and string.format(" in [%s, %s]", lo, hi) or lo and string.format(" >= %s", lo) or ""
    binding.error(string.format("%s: %s must be a number%s, got %s", op, name, range, tostring(v)))
  end
  return v
end
function M.want_int(op, name, v, lo)
  if type(v) ~= "number" or v ~= math.floor(v) or (lo and v < lo) then
    binding.error(string.format("%s: %s must be an integer%s, got %s", op, name,
      lo and string.format(" >= %d", lo) or "", tostring(v)))
  end
  return v
end
function M.want_name(op, name, v)
  if v ~= nil and type(v) ~= "string" then
    binding.error(string.format("%s: %s must be a string, got %s", op, name, type(v)))
  end
  return v
end

-- Keras's to_snake_case: "SparseCategoricalAccuracy" -> "sparse_categorical_accuracy".
function M.snake_case(name)
  name = name:gsub("[^%w_]", "")
  name = name:gsub("(.)(%u%l+)", "%1_%2")
  name = name:gsub("(%l)(%u)", "%1_%2")
  name = name:gsub("(%d)(%u)", "%1_%2")
  return name:lower()
end

-- Keras's auto_name: the snake-case class name, then name_1, name_2, ... for later ones.
local uids = {}
function M.auto_name(class_name)
  local base = M.snake_case(class_name)
  local n = uids[base]
  uids[base] = (n or 0) + 1
  return n and (base .. "_" .. n) or base
end

-- A class whose instances keep the parent's metamethods (tide.class does not
-- copy them: Lua reads __call and __tostring from the metatable itself).
function M.class(name, parent)
  local cls = class(name, parent)
  if parent then
    for _, mm in ipairs { "__call", "__tostring" } do cls[mm] = rawget(parent, mm) end
  end
  return cls
end
M.is_instance = class.is_instance

return M
