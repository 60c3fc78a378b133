-- stdlib/tide/tracing/structure.lua — the nested Lua values that cond and
-- while_loop carry (leaves: tensors, TensorArrays, numbers, booleans): their
-- shape, comparing two of them leaf by leaf, flattening and rebuilding.
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local values = require "tide.tracing.values"
local tensor_array = require "tide.tracing.tensor_array"
local nest = require "tide.nest"
local is_tensor = values.is_tensor
local is_variable, read_variable = values.is_variable, values.read_variable
local type_text = values.type_text

local M = {}

local is_ta = tensor_array.is_ta

-- The structure of x (tables walked in tide.nest's order): a tree whose leaves are
--   {kind="tensor", t=} | {kind="number", v=} | {kind="ta", ta=} | {kind="value", v=}
-- and whose inner nodes are {kind="table", keys=, items=}.
local function structure(x)
  if is_tensor(x) then return { kind = "tensor", t = x } end
  local tx = type(x)
  if tx == "number" or tx == "boolean" then return { kind = "number", v = x } end
  if is_variable(x) then return { kind = "tensor", t = read_variable(x) } end
  if tx == "table" then
    if is_ta(x) then return { kind = "ta", ta = x } end
    if nest.is_nested(x) then -- tide.nest's leaf rule and key order
      local keys, n = nest.keys(x)
      local items = {}
      for i = 1, n do items[i] = structure(x[keys[i]]) end
      return { kind = "table", keys = keys, items = items }
    end
  end
  return { kind = "value", v = x }
end

-- A list structure from packed values (results of a function, loop variables).
local function list_structure(p)
  local keys, items = {}, {}
  for i = 1, p.n do
    keys[i] = i
    items[i] = structure(p[i])
  end
  return { kind = "table", keys = keys, items = items, list = true }
end

-- "(tensor, {h=tensor, c=tensor})" for messages.
local function describe(s)
  if s.kind == "tensor" then return "tensor " .. type_text(s.t) end
  if s.kind == "number" then return type(s.v) == "boolean" and "boolean" or "number" end
  if s.kind == "ta" then return "TensorArray" end
  if s.kind == "value" then return type(s.v) == "nil" and "nil" or type(s.v) .. " " .. tostring(s.v) end
  local parts = {}
  for i, item in ipairs(s.items) do
    parts[i] = s.list and describe(item) or (tostring(s.keys[i]) .. "=" .. describe(item))
  end
  return (s.list and "(" or "{") .. table.concat(parts, ", ") .. (s.list and ")" or "}")
end

-- Where a leaf sits: "result 2", "loop variable 1[h]".
local function path_text(what, path)
  local parts = { what, " ", tostring(path[1]) }
  for i = 2, #path do parts[#parts + 1] = "[" .. tostring(path[i]) .. "]" end
  return table.concat(parts)
end

-- Visit the leaves of two structures that must agree in shape (same tables
-- and keys, tensors against tensors or numbers, TensorArrays against
-- TensorArrays, other values equal); fail(path, why) otherwise.
local function zip(a, b, path, visit, fail)
  local leaf_a, leaf_b = a.kind ~= "table", b.kind ~= "table"
  if leaf_a ~= leaf_b then return fail(path, "the structure differs") end
  if not leaf_a then
    local same = #a.keys == #b.keys
    for i, k in ipairs(a.keys) do same = same and b.keys[i] == k end
    if not same then
      local ka, kb = {}, {}
      for i, k in ipairs(a.keys) do ka[i] = tostring(k) end
      for i, k in ipairs(b.keys) do kb[i] = tostring(k) end
      return fail(path, string.format("the keys differ (%s and %s)", table.concat(ka, ", "), table.concat(kb, ", ")))
    end
    for i, k in ipairs(a.keys) do
      path[#path + 1] = k
      zip(a.items[i], b.items[i], path, visit, fail)
      path[#path] = nil
    end
    return
  end
  local value_a, value_b = a.kind == "tensor" or a.kind == "number", b.kind == "tensor" or b.kind == "number"
  if (a.kind == "ta") ~= (b.kind == "ta") or (value_a ~= value_b) then return fail(path, "the structure differs") end
  if a.kind == "value" and a.v ~= b.v then return fail(path, "non-tensor values differ (they must be equal)") end
  visit(a, b, path)
end

-- Rebuild a structure, taking its tensor leaves from next_tensor() in order.
local function rebuild(s, next_tensor, next_ta)
  if s.kind == "tensor" or s.kind == "number" then return next_tensor() end
  if s.kind == "ta" then return next_ta(s) end
  if s.kind == "value" then return s.v end
  local out = {}
  for i, k in ipairs(s.keys) do out[k] = rebuild(s.items[i], next_tensor, next_ta) end
  return out
end

-- The tensors of s (a structure zip accepts against ref) in the order of
-- ref's flat slots, as a list with n: a tensor leaf gives its tensor, a
-- number a tensor of the slot's dtype when ref knows it (a loop variable's
-- desc) and nil otherwise, a TensorArray its buffer (nil when it has none)
-- where ref has a slot for it (has_slot(ref leaf)). For gradients: it
-- lines a function's results up with its node's values again.
local function flat_like(ref, s, has_slot, out)
  out = out or { n = 0 }
  if ref.kind == "table" then
    for i, item in ipairs(ref.items) do flat_like(item, s.items[i], has_slot, out) end
  elseif ref.kind == "ta" then
    if has_slot(ref) then
      out.n = out.n + 1
      out[out.n] = s.kind == "ta" and rawget(s.ta, "_buffer") or nil
    end
  elseif ref.kind == "tensor" or ref.kind == "number" then
    out.n = out.n + 1
    if s.kind == "tensor" then out[out.n] = s.t
    elseif ref.desc then out[out.n] = convert.tensor(s.v, dtype.names[ref.desc.dt], "control flow") end
  end
  return out
end

-- A Lua number or boolean as a tensor: of dtype code dt when given, else as
-- tide.tensor infers it (int32 for whole numbers, float32, bool).
local function number_tensor(v, dt)
  return convert.tensor(v, dt and dtype.names[dt] or nil, "control flow")
end

M.structure = structure
M.list_structure = list_structure
M.describe = describe
M.path_text = path_text
M.zip = zip
M.rebuild = rebuild
M.flat_like = flat_like
M.number_tensor = number_tensor

return M
