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
local I32, I64, BOOL, STRING = C.TIDE_INT32, C.TIDE_INT64, C.TIDE_BOOL, C.TIDE_STRING
local ctypes, int_range, is_float = dtype.ctypes, dtype.int_range, dtype.is_float
local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- Variables (tide.variable registers them): a predicate, the reader that
-- gives the tensor an op should use for one, the reader of a value of its
-- own (v:read_value(): later assigns leave it unchanged; tapes track it),
-- and the tensor that holds its values (for its dtype and shape).
local is_variable = function() return false end
local read_variable, read_value, variable_handle

function M.set_variable_reader(predicate, reader, value_reader, handle_of)
  is_variable, read_variable, read_value, variable_handle = predicate, reader, value_reader, handle_of
end

-- True when v is a tide.Variable.
function M.is_variable(v) return is_variable(v) end

-- The tensor holding a Variable's values: its dtype and shape, never an op's input (ops read it).
function M.variable_handle(v) return variable_handle(v) end

-- v read when it is a Variable (the tensor an op uses), else v itself.
function M.unvariable(v)
  if is_variable(v) then return read_variable(v) end
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

local MAX_DIMS = C.TIDE_MAX_DIMS

-- The position of element k (1-based, row-major) of a tensor of Lua-list
-- shape `shape`, as the nested-table index that held it: "[2][1]".
local function flat_path(shape, k)
  local parts, rest = {}, k - 1
  for d = #shape, 1, -1 do
    local n = shape[d]
    parts[d] = "[" .. (rest % n + 1) .. "]"
    rest = floor(rest / n)
  end
  return table.concat(parts)
end

-- " (element [2][1])" for error messages, or "" without a shape.
local function at(shape, k)
  if not shape or #shape == 0 then return "" end
  return " (element " .. flat_path(shape, k) .. ")"
end

-- Check a Lua number fits integer dtype dt; names `what` (and the element,
-- with a shape) in the error.
local function check_int(v, dt, what, shape, k)
  if v ~= floor(v) then
    binding.error(string.format("%s: cannot convert %s to %s%s (cast the tensor to a float dtype first)",
      what, tostring(v), dtype.names[dt], at(shape, k)))
  end
  local r = int_range[dt]
  if v < r[1] or v > r[2] then
    binding.error(string.format("%s: %s is out of range for %s%s", what, tostring(v), dtype.names[dt], at(shape, k)))
  end
end

-- Store Lua value v as element i of the contiguous buffer p of dtype dt.
-- With `shape`, errors name the element (i + 1 in row-major order).
local function store(p, i, v, dt, what, shape)
  local tv = type(v)
  if dt == STRING then -- p is the tensor itself: its elements are counted references
    if tv ~= "string" then
      binding.error(string.format("%s: expected a Lua string for a string tensor, got %s%s%s", what,
        tv == "number" and tostring(v) or tv, at(shape, i + 1),
        tv == "number" and " (tide.strings.as_string converts numbers)" or ""))
    end
    if C.tide_string_set(p, i, v, #v) ~= 0 then binding.raise() end
    return
  end
  if tv == "string" then
    binding.error(string.format("%s: cannot put the string %q in a %s tensor%s (tide.strings.to_number parses " ..
      "numbers)", what, v, dtype.names[dt], at(shape, i + 1)))
  end
  if dt == BOOL then
    if tv ~= "boolean" then
      binding.error(string.format("%s: expected true or false for a bool tensor, got %s%s", what, tostring(v),
        at(shape, i + 1)))
    end
    p[i] = v and 1 or 0
    return
  end
  if tv == "boolean" then
    binding.error(string.format("%s: cannot put a boolean in a %s tensor%s", what, dtype.names[dt], at(shape, i + 1)))
  elseif tv ~= "number" then
    binding.error(string.format("%s: expected a number, got %s%s", what, tv, at(shape, i + 1)))
  end
  if dt == F16 then p[i] = C.tide_float_to_half(v)
  elseif dt == BF16 then p[i] = C.tide_float_to_bfloat16(v)
  elseif is_float[dt] then p[i] = v
  else
    check_int(v, dt, what, shape, i + 1)
    p[i] = v
  end
end

-- A 0-d tensor holding v with dtype code dt (small: no C allocation).
function M.scalar(v, dt, what)
  local t = Tensor()
  if C.tide_tensor_init(t, dt, 0, nil) ~= 0 then binding.raise() end
  if dt == STRING then -- a storage of its own (never inline): it needs the finalizer
    binding.finish(t)
    store(t, 0, v, dt, what or "tensor")
    return t
  end
  store(ffi.cast(ctypes[dt], t.data), 0, v, dt, what or "tensor")
  return t
end

---------------------------------------------------------------------------
-- Lists: a Lua table stands for a tensor's values (or an op's list argument)
-- only when its keys are exactly 1..n. A hole, a sparse key past the end or
-- a key of another kind is an error naming it, never dropped (TF raises too).
---------------------------------------------------------------------------

-- A key's text in messages: 5, "a", 1.5, true.
local function key_text(k)
  if type(k) == "string" then return string.format("%q", k) end
  return tostring(k)
end

-- Raise the error for the list `node` (#node == n) whose keys are not
-- exactly 1..n; `where` names it ("the list", "the list at [2]").
local function bad_list(node, n, what, where)
  for k in pairs(node) do
    if type(k) ~= "number" or k ~= floor(k) or k < 1 then
      binding.error(string.format("%s: %s has the key %s; only list entries 1..n can make a tensor " ..
        "(keys of other kinds are not values)", what, where, key_text(k)))
    elseif k > n then -- # stopped at n: entry n + 1 is the first hole
      binding.error(string.format("%s: %s has a hole at [%d] (nil) before its entry [%d]; every entry 1..n " ..
        "must be set", what, where, n + 1, k))
    end
  end
  for i = 1, n do
    if node[i] == nil then
      binding.error(string.format("%s: %s has a hole at [%d] (nil); every entry 1..n must be set", what, where, i))
    end
  end
end

-- The length n of `node` after checking that its keys are exactly 1..n (no
-- holes, no other keys); an error naming `what` and `where` otherwise.
function M.list_length(node, what, where)
  local n = #node
  local count = 0
  for _ in pairs(node) do count = count + 1 end
  if count ~= n then bad_list(node, n, what, where or "the list") end
  for i = 1, n do -- as many keys as the length, yet a hole: then another key fills the count
    if node[i] == nil then bad_list(node, n, what, where or "the list") end
  end
  return n
end

-- The text naming a nested table by its position: idx[1..depth].
local function list_where(idx, depth)
  if depth == 0 then return "the table" end
  local parts = {}
  for d = 1, depth do parts[d] = "[" .. idx[d] .. "]" end
  return "the table at " .. table.concat(parts)
end

local function element_where(idx, depth)
  local parts = {}
  for d = 1, depth do parts[d] = "[" .. idx[d] .. "]" end
  return "element " .. table.concat(parts)
end

local function is_tensor_like(v)
  return istype(Tensor, v) or is_variable(v)
end

-- The error for a table nested deeper than a tensor's rank allows; says so
-- when the chain of first entries comes back to a table already on it.
local function too_deep(chain, what)
  local seen = {}
  for i = 1, #chain do
    if seen[chain[i]] then
      binding.error(string.format("%s: the table contains itself (its entry %s leads back to it); a tensor is " ..
        "made from a tree of lists", what, string.rep("[1]", i - seen[chain[i]])))
    end
    seen[chain[i]] = i
  end
  binding.error(string.format("%s: the table is nested more than %d levels deep; a tensor has at most %d dims",
    what, MAX_DIMS, MAX_DIMS))
end

-- Walk a nested table: its shape, its leaves in row-major order, and the
-- dtype TF would infer for them. When a tensor or Variable sits in it,
-- returns only that (the first one met): the table is packed instead.
local function flatten(v, what)
  -- The shape, from the chain of first entries (at most MAX_DIMS tables deep:
  -- this also stops a table that contains itself).
  local shape, nd = {}, 0
  local chain = {}
  local t = v
  while type(t) == "table" and not is_variable(t) do
    if nd == MAX_DIMS then
      chain[nd + 1] = t
      too_deep(chain, what)
    end
    nd = nd + 1
    chain[nd] = t
    local n = #t
    shape[nd] = n
    if n == 0 then break end
    t = t[1]
  end
  local flat, n = {}, 0
  local has_bool, has_number, all_int, big, has_string = false, false, true, false, false
  local first_bool, first_number, first_string
  local idx = {}
  local found -- a tensor or Variable in the table
  local function walk(node, depth)
    local len = #node
    if len ~= shape[depth] then
      binding.error(string.format("%s: ragged nested table: %s has %d entries, expected %d", what,
        list_where(idx, depth - 1), len, shape[depth]))
    end
    local count = 0
    for _ in pairs(node) do count = count + 1 end
    if count ~= len then bad_list(node, len, what, list_where(idx, depth - 1)) end
    if depth == nd then -- the leaves
      for i = 1, len do
        local e = node[i]
        local te = type(e)
        if te == "number" then
          if not has_number then has_number, first_number = true, n + 1 end
          if e ~= floor(e) or e == huge or e == -huge then all_int = false
          elseif e < -2147483648 or e > 2147483647 then big = true end
        elseif te == "boolean" then
          if not has_bool then has_bool, first_bool = true, n + 1 end
        elseif te == "string" then
          if not has_string then has_string, first_string = true, n + 1 end
        elseif is_tensor_like(e) then
          found = e
          return
        else
          idx[depth] = i
          if e == nil then
            binding.error(string.format("%s: %s has a hole at [%d] (nil); every entry 1..n must be set", what,
              list_where(idx, depth - 1), i))
          end
          binding.error(string.format("%s: %s is a %s, expected a number, a boolean or a string", what,
            element_where(idx, depth), te))
        end
        n = n + 1
        flat[n] = e
      end
      return
    end
    for i = 1, len do
      local e = node[i]
      idx[depth] = i
      if type(e) ~= "table" or is_variable(e) then
        if is_tensor_like(e) then found = e; return end
        if e == nil then
          binding.error(string.format("%s: %s has a hole at [%d] (nil); every entry 1..n must be set", what,
            list_where(idx, depth - 1), i))
        end
        binding.error(string.format("%s: ragged nested table: %s should be a list of %d, got a %s", what,
          element_where(idx, depth), shape[depth + 1], type(e)))
      end
      walk(e, depth + 1)
      if found then return end
    end
  end
  if nd > 0 then walk(v, 1) end
  if found then return nil, nil, nil, nil, found end
  if has_bool and has_number then
    binding.error(string.format("%s: cannot mix booleans and numbers in one tensor (a number at %s, a boolean " ..
      "at %s)", what, flat_path(shape, first_number), flat_path(shape, first_bool)))
  end
  if has_string and (has_bool or has_number) then
    local other = has_number and first_number or first_bool
    binding.error(string.format("%s: cannot mix strings and %s in one tensor (a string at %s, a %s at %s)", what,
      has_number and "numbers" or "booleans", flat_path(shape, first_string), has_number and "number" or "boolean",
      flat_path(shape, other)))
  end
  local dt = has_string and STRING or has_bool and BOOL or (has_number and all_int and (big and I64 or I32)) or F32
  return shape, flat, n, dt
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
local function pack(node, like, dt_name, what, path, depth)
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
  if depth >= MAX_DIMS then
    binding.error(string.format("%s: the table is nested more than %d levels deep (or contains itself); a tensor " ..
      "has at most %d dims", what, MAX_DIMS, MAX_DIMS))
  end
  local n = M.list_length(node, what, path == "" and "the table" or "the table at " .. path)
  if n == 0 then
    binding.error(string.format("%s: element %s is an empty list in a table of tensors", what, path == "" and "" or path))
  end
  local parts = {}
  for i = 1, n do parts[i] = pack(node[i], like, dt_name, what, path .. "[" .. i .. "]", depth + 1) end
  local ok, r = pcall(stack, parts)
  if not ok then
    binding.error(string.format("%s: cannot pack element%s of the nested table: %s", what,
      path == "" and "s" or " " .. path, tostring(r):gsub("^.-stack: ", "")))
  end
  return r
end

-- Conversion functions (tide.register_tensor_conversion_function, TF's): class table -> list of
-- { fn, priority }, lowest priority first. Only tables with a metatable are looked up (plain lists have none).
local conversions = {}
local any_conversion = false

function M.register_conversion(cls, fn, priority)
  local list = conversions[cls] or {}
  conversions[cls] = list
  list[#list + 1] = { fn = fn, priority = priority }
  table.sort(list, function(a, b) return a.priority < b.priority end)
  any_conversion = true
end

-- The tensor a registered conversion function makes of `value` (walking its class and parents), or nil.
local function converted(value, dt_name, what)
  local mt = getmetatable(value)
  while type(mt) == "table" do
    local list = rawget(conversions, mt)
    if list then
      for _, c in ipairs(list) do
        local t = c.fn(value, dt_name)
        if t ~= nil then
          if is_variable(t) then t = read_value(t) end
          if not istype(Tensor, t) then
            binding.error(string.format("%s: the conversion function for %s returned a %s, not a tensor", what,
              tostring(rawget(mt, "__name") or "a class"), type(t)))
          end
          return t
        end
      end
    end
    mt = rawget(mt, "super")
  end
  return nil
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
  if tv == "string" then return M.scalar(value, dt or STRING, what) end
  if tv == "number" or tv == "boolean" then
    local auto = tv == "boolean" and BOOL
      or (is_whole(value) and ((value >= -2147483648 and value <= 2147483647) and I32 or I64))
      or F32
    return M.scalar(value, dt or auto, what)
  end
  if tv ~= "table" then
    binding.error(string.format("%s: cannot make a tensor from a %s", what, tv))
  end
  if any_conversion and getmetatable(value) ~= nil then
    local t = converted(value, dt_name, what)
    if t then return (dt and dt ~= t.dt) and t:cast(dt_name) or t end
  end
  local shape, flat, n, auto, like = flatten(value, what)
  if like ~= nil then
    if dt and is_variable(like) then like = read_variable(like) end
    return pack(value, dt and M.scalar(dt == BOOL and false or 0, dt) or like, dt_name, what, "", 0)
  end
  dt = dt or auto
  local t = M.empty(dt, shape, what)
  local p = dt == STRING and t or ffi.cast(ctypes[dt], t.data)
  for i = 1, n do store(p, i - 1, flat[i], dt, what, shape) end
  return t
end

-- An op's argument as a tensor: tensors pass; a Variable is read; a Lua
-- number or boolean takes the dtype of `like` (a tensor or Variable, or nil);
-- a table becomes a tensor of that dtype.
function M.coerce(v, like, op, pos)
  local tv = type(v)
  if is_variable(v) then return read_variable(v) end
  if is_variable(like) then like = variable_handle(like) end
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
  elseif tv == "string" then
    if dt and dt ~= STRING then
      binding.error(string.format("%s: argument %d is the string %q but the other operand is %s", op, pos, v,
        dtype.names[dt]))
    end
    return M.scalar(v, STRING, op)
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
