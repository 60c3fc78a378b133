-- stdlib/tide/args.lua — TF-style arguments in Lua: positional values in TF's
-- order, then one trailing options table for the rest:
--   tide.reduce_sum(x, 1, true)   tide.reduce_sum(x, {axis=1, keepdims=true})   x:sum{axis=1}
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"
local convert = require "tide.convert"
local unvariable = convert.unvariable -- a Variable stands for its value (a tensor)

local M = {}

-- True when `t` is an options table: a table with string keys (or empty) that
-- is not a tensor or Variable. A list such as {0, 1} is a positional value, not options.
local function is_options(t)
  if type(t) ~= "table" or convert.is_variable(t) then return false end
  if next(t) == nil then return true end
  for k in pairs(t) do
    if type(k) == "string" then return true end
  end
  return false
end
M.is_options = is_options

-- "a, b, c" for messages: the positional names, then the keyword-only ones.
function M.names_text(names)
  local all = {}
  for i = 1, #names do all[i] = names[i] end
  for _, k in ipairs(names.keywords or {}) do all[#all + 1] = k end
  return table.concat(all, ", ")
end

-- Collect named arguments for `op` from positional values (names[i] for the
-- i-th value after the fixed ones) and a trailing options table. Returns a
-- table name -> value. Unknown option names are an error naming the op.
-- names.lists (a set of names) marks list-valued arguments: an empty `{}` in
-- one's position is the empty list (tide.tile(x, {}), tide.reduce_sum(x, {}),
-- as TF's []), not empty options. names.keywords lists more names that come
-- by name only (after the positional ones, in no order).
function M.parse(op, names, ...)
  local n = select("#", ...)
  local out = {}
  local last = n > 0 and select(n, ...) or nil
  local npos = n
  if is_options(last) then
    local lists = names.lists
    if not (lists and next(last) == nil and n <= #names and lists[names[n]]) then npos = n - 1 end
  end
  if npos > #names then
    binding.error(string.format("%s: expected at most %d argument(s) after the input, got %d", op, #names, npos))
  end
  -- (a DType constant becomes its name: op code compares and keys by names)
  for i = 1, npos do
    local v = select(i, ...)
    out[names[i]] = dtype.is_dtype(v) and dtype.name(v) or v
  end
  if npos < n then
    local known = {}
    for i = 1, #names do known[names[i]] = true end
    for _, k in ipairs(names.keywords or {}) do known[k] = true end
    for k, v in pairs(last) do
      if type(k) == "string" then
        if not known[k] then
          binding.error(string.format("%s: unknown option '%s' (expected: %s)", op, k, M.names_text(names)))
        end
        out[k] = dtype.is_dtype(v) and dtype.name(v) or v
      elseif type(k) == "number" and k >= 1 and k <= #names then
        if npos + k > #names then
          binding.error(string.format("%s: too many positional values", op))
        end
        out[names[npos + k]] = dtype.is_dtype(v) and dtype.name(v) or v -- Dense{64, activation=...}-style positional entries
      end
    end
  end
  return out
end

local TWO63 = 2 ^ 63

-- An integer-valued Lua number that int64 holds (every integer attribute is
-- stored as one), from a number or a one-element tensor, or an error naming
-- the argument.
function M.int(op, what, v)
  v = unvariable(v)
  if binding.istensor(v) then v = M.number(op, what, v) end
  if type(v) ~= "number" or v ~= math.floor(v) or v ~= v or v == math.huge or v == -math.huge then
    binding.error(string.format("%s: %s must be an integer, got %s", op, what, tostring(v)))
  end
  if v >= TWO63 or v < -TWO63 then
    binding.error(string.format("%s: %s must be an integer in the int64 range, got %s", op, what, tostring(v)))
  end
  return v
end

-- A Lua number from a number or a one-element tensor (TF takes either), or an
-- error naming the argument.
function M.number(op, what, v)
  v = unvariable(v)
  if binding.istensor(v) then
    if v.nelem ~= 1 then
      binding.error(string.format("%s: %s must be a scalar, got a tensor of %d elements", op, what, tonumber(v.nelem)))
    end
    v = v:item()
  end
  if type(v) ~= "number" then
    binding.error(string.format("%s: %s must be a number, got %s", op, what, type(v)))
  end
  return v
end

-- A boolean (nil means the default).
function M.bool(op, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", op, what, tostring(v)))
  end
  return v
end

-- A list of integers from a number, a Lua list or an integer tensor, or nil (gives nil).
function M.int_list(op, what, v)
  if v == nil then return nil end
  v = unvariable(v)
  if type(v) == "number" then return { M.int(op, what, v) } end
  local list = v
  if binding.istensor(v) then
    if not dtype.is_int[v.dt] then
      binding.error(string.format("%s: %s must be an integer tensor, got %s", op, what, dtype.names[v.dt]))
    end
    list = v:totable()
    if type(list) == "number" then list = { list } end
  elseif type(v) ~= "table" then
    binding.error(string.format("%s: %s must be an integer or a list of integers, got %s", op, what, type(v)))
  elseif tensor_shape.is_unknown_rank(v) then -- x.shape of a traced tensor of unknown rank: not a list of dims
    binding.error(string.format("%s: %s is a shape of unknown rank (<unknown>), which has no dims until the graph " ..
      "runs; pass tide.shape(x), the shape as a tensor, instead", op, what))
  end
  local out = {}
  local n = binding.istensor(v) and #list or convert.list_length(list, op, what)
  for i = 1, n do out[i] = M.int(op, what, list[i]) end
  return out
end

-- A shape (a number, Lua list or integer tensor; required) as a Lua list of
-- dims, and its element count.
function M.shape(op, v)
  if v == nil then binding.error(op .. ": shape is required") end
  local list = M.int_list(op, "shape", v)
  if #list > binding.C.TIDE_MAX_DIMS then
    binding.error(string.format("%s: shape has rank %d (at most %d)", op, #list, binding.C.TIDE_MAX_DIMS))
  end
  local n = 1
  for i = 1, #list do
    if list[i] < 0 then
      binding.error(string.format("%s: shape has a negative dimension (%d at %d)", op, list[i], i - 1))
    end
    n = n * list[i]
  end
  return list, n
end

return M
