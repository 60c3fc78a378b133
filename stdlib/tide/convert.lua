-- stdlib/tide/convert.lua — Lua values to tensors: nested tables (shape and
-- dtype inferred as TF does: integers -> int32, or int64 if they do not fit;
-- any fraction -> float32; booleans -> bool), scalars, and coercing an op's
-- arguments (a Lua number takes the dtype of the tensor it meets).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local floor = math.floor
local huge = math.huge

-- True for Lua numbers that infer an integer dtype (finite whole numbers).
local function is_whole(v)
  return v == floor(v) and v ~= huge and v ~= -huge
end

local M = {}

local F32, F64, F16, BF16 = C.TIDE_FLOAT32, C.TIDE_FLOAT64, C.TIDE_FLOAT16, C.TIDE_BFLOAT16
local I32, I64, BOOL = C.TIDE_INT32, C.TIDE_INT64, C.TIDE_BOOL
local ctypes, int_range, is_float = dtype.ctypes, dtype.int_range, dtype.is_float
local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- Variables (tide.variable registers them): a predicate, the reader that
-- gives the tensor an op should use for one, and the reader of a value of its
-- own (v:read_value(): later assigns leave it unchanged; tapes track it).
local is_variable = function() return false end
local read_variable, read_value

function M.set_variable_reader(predicate, reader, value_reader)
  is_variable, read_variable, read_value = predicate, reader, value_reader
end

-- True when v is a tide.Variable.
function M.is_variable(v) return type(v) == "table" and is_variable(v) end

-- v read when it is a Variable (the tensor an op uses), else v itself.
function M.unvariable(v)
  if type(v) == "table" and is_variable(v) then return read_variable(v) end
  return v
end

-- A blank tensor of dtype code dt and Lua-list shape (1-based list of dims).
function M.empty(dt, shape, what)
  local nd = #shape
  if nd > C.TIDE_MAX_DIMS then
    binding.error(string.format("%s: rank %d is more than the %d dims tide supports", what or "tensor", nd,
      C.TIDE_MAX_DIMS))
  end
  for i = 1, nd do dims_buf[i - 1] = shape[i] end
  local t = Tensor()
  if C.tide_tensor_init(t, dt, nd, dims_buf) ~= 0 then binding.raise() end
  return binding.finish(t)
end

-- Check a Lua number fits integer dtype dt; names `what` in the error.
local function check_int(v, dt, what)
  if v ~= floor(v) then
    binding.error(string.format("%s: cannot convert %s to %s (cast the tensor to a float dtype first)",
      what, tostring(v), dtype.names[dt]))
  end
  local r = int_range[dt]
  if v < r[1] or v > r[2] then
    binding.error(string.format("%s: %s is out of range for %s", what, tostring(v), dtype.names[dt]))
  end
end

-- Store Lua value v as element i of the contiguous buffer p of dtype dt.
local function store(p, i, v, dt, what)
  local tv = type(v)
  if dt == BOOL then
    if tv ~= "boolean" then
      binding.error(string.format("%s: expected true or false for a bool tensor, got %s", what, tostring(v)))
    end
    p[i] = v and 1 or 0
    return
  end
  if tv == "boolean" then
    binding.error(string.format("%s: cannot put a boolean in a %s tensor", what, dtype.names[dt]))
  elseif tv ~= "number" then
    binding.error(string.format("%s: expected a number, got %s", what, tv))
  end
  if dt == F16 then p[i] = C.tide_float_to_half(v)
  elseif dt == BF16 then p[i] = C.tide_float_to_bfloat16(v)
  elseif is_float[dt] then p[i] = v
  else
    check_int(v, dt, what)
    p[i] = v
  end
end

-- A 0-d tensor holding v with dtype code dt (small: no C allocation).
function M.scalar(v, dt, what)
  local t = Tensor()
  if C.tide_tensor_init(t, dt, 0, nil) ~= 0 then binding.raise() end
  store(ffi.cast(ctypes[dt], t.data), 0, v, dt, what or "tensor")
  return t
end

-- Walk a nested table: its shape, its leaves in row-major order, and the
-- dtype TF would infer for them.
local function flatten(v, what)
  local shape = {}
  local t = v
  while type(t) == "table" and not istype(Tensor, t) and not is_variable(t) do
    shape[#shape + 1] = #t
    if #t == 0 then break end
    t = t[1]
  end
  local flat, n = {}, 0
  local has_bool, has_number, all_int, big = false, false, true, false
  local function walk(node, depth, path)
    if depth > #shape then
      local tn = type(node)
      if tn == "number" then
        has_number = true
        if not is_whole(node) then all_int = false
        elseif node < -2147483648 or node > 2147483647 then big = true end
      elseif tn == "boolean" then
        has_bool = true
      else
        binding.error(string.format("%s: element %s is a %s, expected a number or a boolean", what, path, tn))
      end
      n = n + 1
      flat[n] = node
      return
    end
    if type(node) ~= "table" or istype(Tensor, node) or is_variable(node) then
      binding.error(string.format("%s: ragged nested table: element %s should be a list of %d", what, path,
        shape[depth]))
    end
    if #node ~= shape[depth] then
      binding.error(string.format("%s: ragged nested table: element %s has %d entries, expected %d", what, path,
        #node, shape[depth]))
    end
    for i = 1, #node do walk(node[i], depth + 1, path .. "[" .. i .. "]") end
  end
  walk(v, 1, "")
  if has_bool and has_number then
    binding.error(string.format("%s: cannot mix booleans and numbers in one tensor", what))
  end
  local dt = has_bool and BOOL or (has_number and all_int and (big and I64 or I32)) or F32
  return shape, flat, n, dt
end

-- The first tensor or Variable in a nested table, or nil.
local function find_tensor(v, depth)
  if istype(Tensor, v) or is_variable(v) then return v end
  if type(v) ~= "table" or depth > 64 then return nil end
  for i = 1, #v do
    local t = find_tensor(v[i], depth + 1)
    if t ~= nil then return t end
  end
  return nil
end

-- tide.stack, which packs nested tables of tensors: tide.ops.shape, a floor
-- above, sets it when loaded (convert runs no ops of its own).
local stack = function()
  error("tide.convert: tide.stack is not set (tide.ops.shape was not loaded)", 2)
end

function M.set_stack(fn) stack = fn end

-- A nested table holding tensors or Variables packed into one tensor, as TF
-- packs a list of tensors: each level is tide.stack of its entries; Lua
-- numbers take the dtype of `like` (the first tensor in the table).
local function pack(node, like, dt_name, what, path)
  if is_variable(node) then node = read_variable(node) end
  if istype(Tensor, node) then
    if dt_name and dtype.code(dt_name, what) ~= node.dt then return node:cast(dt_name) end
    return node
  end
  if type(node) ~= "table" then
    if type(node) ~= "number" and type(node) ~= "boolean" then
      binding.error(string.format("%s: element %s is a %s, expected a number, a boolean or a tensor", what, path,
        type(node)))
    end
    return M.coerce(node, like, what, 1)
  end
  if #node == 0 then
    binding.error(string.format("%s: element %s is an empty list in a table of tensors", what, path == "" and "" or path))
  end
  local parts = {}
  for i = 1, #node do parts[i] = pack(node[i], like, dt_name, what, path .. "[" .. i .. "]") end
  local ok, r = pcall(stack, parts)
  if not ok then
    binding.error(string.format("%s: cannot pack element%s of the nested table: %s", what,
      path == "" and "s" or " " .. path, tostring(r):gsub("^.-stack: ", "")))
  end
  return r
end

-- tide.tensor(value, dtype): a new tensor from a number, boolean, nested
-- table or tensor (cast when dtype differs). A Variable gives its current
-- value (a read: later assigns leave it unchanged); a nested table holding
-- tensors or Variables is packed (stacked) as TF's tf.convert_to_tensor does.
function M.tensor(value, dt_name, what)
  what = what or "tensor"
  local dt = dt_name and dtype.code(dt_name, what)
  if is_variable(value) then value = read_value(value) end
  if istype(Tensor, value) then
    if dt and dt ~= value.dt then return value:cast(dt_name) end
    return value
  end
  local tv = type(value)
  if tv == "number" or tv == "boolean" then
    local auto = tv == "boolean" and BOOL
      or (is_whole(value) and ((value >= -2147483648 and value <= 2147483647) and I32 or I64))
      or F32
    return M.scalar(value, dt or auto, what)
  end
  if tv ~= "table" then
    binding.error(string.format("%s: cannot make a tensor from a %s", what, tv))
  end
  local like = find_tensor(value, 0)
  if like ~= nil then
    if dt and is_variable(like) then like = read_variable(like) end
    return pack(value, dt and M.scalar(dt == BOOL and false or 0, dt) or like, dt_name, what, "")
  end
  local shape, flat, n, auto = flatten(value, what)
  dt = dt or auto
  local t = M.empty(dt, shape, what)
  local p = ffi.cast(ctypes[dt], t.data)
  for i = 1, n do store(p, i - 1, flat[i], dt, what) end
  return t
end

-- An op's argument as a tensor: tensors pass; a Variable is read; a Lua
-- number or boolean takes the dtype of `like` (a tensor or Variable, or nil);
-- a table becomes a tensor of that dtype.
function M.coerce(v, like, op, pos)
  local tv = type(v)
  if tv == "table" and is_variable(v) then return read_variable(v) end
  if is_variable(like) then like = rawget(like, "_handle") end
  local dt = istype(Tensor, like) and like.dt or nil
  if tv == "number" then
    if dt then
      if dt == BOOL then
        binding.error(string.format("%s: argument %d is the number %s but the other operand is bool", op, pos,
          tostring(v)))
      end
      return M.scalar(v, dt, op)
    end
    return M.tensor(v, nil, op)
  elseif tv == "boolean" then
    return M.scalar(v, BOOL, op)
  elseif tv == "table" and not istype(Tensor, v) then
    return M.tensor(v, dt and dtype.names[dt] or nil, op)
  end
  if istype(Tensor, v) then return v end
  binding.error(string.format("%s: argument %d must be a tensor or a number, got %s", op, pos, tv))
end

-- The argument as a tensor (numbers and tables convert with inferred dtype).
function M.arg(v, op, pos)
  if istype(Tensor, v) then return v end
  return M.coerce(v, nil, op, pos or 1)
end

return M
