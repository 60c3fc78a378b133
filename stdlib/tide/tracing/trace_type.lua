-- stdlib/tide/tracing/trace_type.lua — trace types: a call's arguments as
-- templates (tensors as dtype and dims, Lua values kept), how two compare
-- (fits, common supertype, first difference) and how they read in messages.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"
local is_variable = require("tide.variable").is_variable
local spec = require "tide.tracing.spec"
local nest = require "tide.nest"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local band = bit.band
local None = spec.None
local Shape = tensor_shape.Shape
local dims_text = spec.dims_text

-- One instance per Lua state (busted clears package.loaded between spec
-- files): object ids key every Function's call cache, so
-- they must not start over when the module is loaded again.
local REGISTRY_KEY = "tide.tracing.trace_type"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {}
registry[REGISTRY_KEY] = M

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC

-- True when x is a tide.Variable.
M.is_variable = is_variable

---------------------------------------------------------------------------
-- Identity and kinds of objects
---------------------------------------------------------------------------

-- Objects compared by identity get small stable ids (weak: ids die with them).
local ids = setmetatable({}, { __mode = "k" })
local next_id = 0
local function identity(x)
  local id = ids[x]
  if not id then
    next_id = next_id + 1
    id = next_id
    ids[x] = id
  end
  return id
end
M.identity = identity

-- What a table with a metatable is for tracing, cached per metatable:
-- a Variable (by identity), a tide.Shape (by value), an object that defines
-- __tracing_type (by the result's trace type), a composite value whose
-- metatable sets __tracing_composite (its fields traced as a map's, the
-- metatable kept: tide.RaggedTensor), or any other object (by identity).
local OBJECT, VARIABLE, SHAPE, TYPED, COMPOSITE = 1, 2, 3, 4, 5
local mt_kinds = setmetatable({}, { __mode = "k" })
local function table_kind(x, mt)
  local k = mt_kinds[mt]
  if k then return k end
  if type(mt) ~= "table" then k = OBJECT -- a protected metatable (__metatable)
  elseif mt == Shape then k = SHAPE
  elseif is_variable(x) then k = VARIABLE
  elseif type(mt.__tracing_type) == "function" then k = TYPED
  elseif nest.is_composite(x) then k = COMPOSITE
  else k = OBJECT end
  mt_kinds[mt] = k
  return k
end

-- Tables are walked in tide.nest's key order: a list (keys 1..n) in order,
-- any other table by its keys sorted (numbers, then strings, then the rest),
-- so two maps with the same keys give the same trace type.
local keys_of = nest.keys
M.ids = ids
M.OBJECT, M.VARIABLE, M.SHAPE, M.TYPED, M.COMPOSITE = OBJECT, VARIABLE, SHAPE, TYPED, COMPOSITE
M.table_kind = table_kind

---------------------------------------------------------------------------
-- Trace types (templates)
---------------------------------------------------------------------------
-- A template describes a Lua value for tracing: tensors become slots
-- (with dtype and dims), everything else is kept to compare and rebuild.
--   { kind = "tensor", slot, dtype, dims, name } | { kind = "value", value } |
--   { kind = "variable", var } | { kind = "object", obj, key, typed } |
--   { kind = "table", array, keys, items, n, mt }  (mt: a composite's metatable)
-- dims is a list of sizes and None, or nil for an unknown rank (a TensorSpec
-- of shape nil, a traced tensor of unknown rank, or reduce_retracing over
-- tensors of several ranks). With slots == nil, tensors are described but get no slot.

local function tensor_dims(t)
  if t.ndim < 0 then return nil end -- a symbolic tensor of unknown rank
  local d = {}
  for i = 0, t.ndim - 1 do
    local v = tonumber(t.dims[i])
    d[i + 1] = v < 0 and None or v
  end
  return d
end

local template_of, key_of
local specs_as_tensors = false -- get_concrete_function: a TensorSpec stands for a tensor

local function table_template(x, slots)
  local keys, n, list = keys_of(x)
  local items = {}
  for i = 1, n do items[i] = template_of(x[keys[i]], slots) end
  return { kind = "table", array = list, keys = keys, items = items, n = n }
end

template_of = function(x, slots)
  local tx = type(x)
  if istype(Tensor, x) then
    local t = { kind = "tensor", dtype = dtype.names[x.dt], dims = tensor_dims(x),
                symbolic = band(x.flags, SYMBOLIC) ~= 0 or nil }
    if slots then
      slots[#slots + 1] = x
      t.slot = #slots
    end
    return t
  elseif specs_as_tensors and slots and spec.is_spec(x) then -- get_concrete_function(TensorSpec)
    slots[#slots + 1] = x
    return { kind = "tensor", slot = #slots, dtype = x.dtype, dims = x.shape, name = x.name, from_spec = true }
  elseif tx == "nil" or tx == "number" or tx == "string" or tx == "boolean" then
    return { kind = "value", value = x }
  elseif is_variable(x) then -- a userdata
    return { kind = "variable", var = x }
  elseif tx == "table" then
    local mt = getmetatable(x)
    if mt == nil then return table_template(x, slots) end
    local k = table_kind(x, mt)
    if k == VARIABLE then return { kind = "variable", var = x } end
    if k == TYPED then
      return { kind = "object", obj = x, typed = true, key = "Y" .. key_of(template_of(mt.__tracing_type(x), nil)) }
    end
    if k == SHAPE then return { kind = "object", obj = x, typed = true, key = "P" .. dims_text(x) } end
    if k == COMPOSITE then
      local t = table_template(x, slots)
      t.mt = mt
      return t
    end
    return { kind = "object", obj = x, key = "O" .. identity(x) }
  elseif tx == "cdata" and (istype("int64_t", x) or istype("uint64_t", x)) then
    return { kind = "value", value = x }
  end
  return { kind = "object", obj = x, key = "O" .. identity(x) }
end
M.template_of = template_of

-- A template for an argument (or result) list of n values.
local function list_template(n, slots, ...)
  local items, keys = {}, {}
  for i = 1, n do
    keys[i] = i
    items[i] = template_of((select(i, ...)), slots)
  end
  return { kind = "table", array = true, keys = keys, items = items, n = n }
end
M.list_template = list_template

-- A string naming a template's trace type exactly (for recursion checks and display).
key_of = function(t)
  local k = t.kind
  if k == "tensor" then return "T" .. t.dtype .. dims_text(t.dims) end
  if k == "value" then
    local v = t.value
    if type(v) == "number" then return "N" .. string.format("%.17g", v) end
    if type(v) == "string" then return "S" .. string.format("%q", v) end
    return tostring(v)
  end
  if k == "variable" then return "V" .. identity(t.var) end
  if k == "object" then return t.key end
  local parts = {}
  for i, item in ipairs(t.items) do
    parts[i] = t.array and key_of(item) or (key_of(template_of(t.keys[i], nil)) .. "=" .. key_of(item))
  end
  local text = (t.array and "[" or "{") .. table.concat(parts, ";") .. (t.array and "]" or "}")
  return t.mt and "C" .. identity(t.mt) .. text or text
end
M.key_of = key_of

local function same_value(a, b)
  return a == b or (a ~= a and b ~= b) -- NaN is one trace type
end

-- When `actual` is a subtype of `sig` (a concrete function's template: same
-- structure and values, tensors of the same dtype and rank with equal dims
-- or None), the number of None dims used (lower is more specific); else nil.
-- `baked`: a nil value matches any traced Lua value (a concrete function's
-- omitted argument takes its traced value, as in TF).
local function fits(sig, actual, baked)
  if baked and sig.kind == "value" and actual.kind == "value" and actual.value == nil then return 0 end
  if sig.kind ~= actual.kind then return nil end
  local k = sig.kind
  if k == "tensor" then
    if sig.dtype ~= actual.dtype then return nil end
    if sig.dims == nil then return 100 end
    if actual.dims == nil or #sig.dims ~= #actual.dims then return nil end
    local nones = 0
    for i, d in ipairs(sig.dims) do
      if d == None then nones = nones + 1
      elseif d ~= actual.dims[i] then return nil end
    end
    return nones
  end
  if k == "value" then return same_value(sig.value, actual.value) and 0 or nil end
  if k == "variable" then return rawequal(sig.var, actual.var) and 0 or nil end
  if k == "object" then return sig.key == actual.key and 0 or nil end
  if sig.array ~= actual.array or sig.mt ~= actual.mt or #sig.items ~= #actual.items then return nil end
  local total = 0
  for i, item in ipairs(sig.items) do
    if not sig.array and sig.keys[i] ~= actual.keys[i] then return nil end
    local n = fits(item, actual.items[i], baked)
    if not n then return nil end
    total = total + n
  end
  return total
end
M.fits = fits

-- TF's most specific common supertype of two trace types (reduce_retracing):
-- the same structure and Lua values, tensors of one dtype whose differing
-- dims become None, and whose differing ranks an unknown rank (dims nil);
-- nil when there is none. Slots come from `a`.
local function common_supertype(a, b)
  if a.kind ~= b.kind then return nil end
  local k = a.kind
  if k == "tensor" then
    if a.dtype ~= b.dtype then return nil end
    if a.dims == nil or b.dims == nil or #a.dims ~= #b.dims then
      return { kind = "tensor", slot = a.slot, dtype = a.dtype, dims = nil, name = a.name, from_spec = a.from_spec }
    end
    local dims = {}
    for i, d in ipairs(a.dims) do dims[i] = (d == b.dims[i]) and d or None end
    return { kind = "tensor", slot = a.slot, dtype = a.dtype, dims = dims, name = a.name, from_spec = a.from_spec }
  end
  if k ~= "table" then return fits(a, b) and a or nil end
  if a.array ~= b.array or a.mt ~= b.mt or #a.items ~= #b.items then return nil end
  local items = {}
  for i, item in ipairs(a.items) do
    if not a.array and a.keys[i] ~= b.keys[i] then return nil end
    items[i] = common_supertype(item, b.items[i])
    if not items[i] then return nil end
  end
  return { kind = "table", array = a.array, keys = a.keys, items = items, n = a.n, mt = a.mt }
end
M.common_supertype = common_supertype

-- Rebuild a Lua value from a template, tensors from `tensors[slot]`.
local function rebuild(t, tensors)
  local k = t.kind
  if k == "tensor" then return tensors[t.slot] end
  if k == "value" then return t.value end
  if k == "variable" then return t.var end
  if k == "object" then return t.obj end
  local out = {}
  for i, item in ipairs(t.items) do out[t.keys[i]] = rebuild(item, tensors) end
  return t.mt and setmetatable(out, t.mt) or out
end
M.rebuild = rebuild

-- True when a template holds a tensor somewhere.
local function has_tensor(t)
  if t.kind == "tensor" then return true end
  if t.kind ~= "table" then return false end
  for _, item in ipairs(t.items) do if has_tensor(item) then return true end end
  return false
end

local function safe_tostring(x)
  local ok, s = pcall(tostring, x)
  return ok and s or type(x)
end

-- A Lua value as source-like text (for signatures and messages).
local function lua_repr(v, depth)
  local tv = type(v)
  if tv == "string" then return string.format("%q", v) end
  if is_variable(v) then
    return string.format("<tide.Variable '%s'>", tostring(v.name))
  end
  if tv ~= "table" or getmetatable(v) ~= nil then return safe_tostring(v) end
  depth = (depth or 0) + 1
  if depth > 3 then return "{...}" end
  local keys, n, list = keys_of(v)
  local parts = {}
  if list then
    for i = 1, n do parts[i] = lua_repr(v[i], depth) end
  else
    for i, k in ipairs(keys) do
      local ks = (type(k) == "string" and k:match("^[%a_][%w_]*$")) and k or ("[" .. lua_repr(k, depth) .. "]")
      parts[i] = ks .. " = " .. lua_repr(v[k], depth)
    end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- What a template is, in words: "a float32 tensor of shape (2, 3)", "the Lua number 3".
local function describe(t)
  if t == nil then return "missing" end
  local k = t.kind
  if k == "tensor" then
    local kind = (t.symbolic and "symbolic " or "") .. t.dtype
    return string.format("%s %s tensor of shape %s", kind:match("^[aeio]") and "an" or "a", kind, dims_text(t.dims))
  elseif k == "value" then
    local v = t.value
    if v == nil then return "nil" end
    local tv = type(v)
    if tv == "string" then return "the Lua string " .. string.format("%q", v) end
    if tv == "cdata" then return "the 64-bit integer " .. tostring(v) end
    return "the Lua " .. tv .. " " .. tostring(v)
  elseif k == "variable" then
    return "the Variable '" .. tostring(t.var.name) .. "'"
  elseif k == "object" then
    if t.key:sub(1, 1) == "P" then return "the shape " .. t.key:sub(2) end
    return "the object " .. safe_tostring(t.obj)
  end
  if t.array then return string.format("a Lua list of %d value%s", #t.items, #t.items == 1 and "" or "s") end
  local names = {}
  for i, key in ipairs(t.keys) do names[i] = safe_tostring(key) end
  return "a Lua table with keys " .. table.concat(names, ", ")
end
M.describe = describe

-- A path inside an argument, as Lua code: x.w[2].
local function sub_path(path, key)
  if type(key) == "string" and key:match("^[%a_][%w_]*$") then return path .. "." .. key end
  return path .. "[" .. lua_repr(key) .. "]"
end

-- The first place where templates a and b differ: path, a's part, b's part,
-- and what differs ("kind", "dtype", "rank", "shape", "value", "object",
-- "structure"); nil when they are the same trace type.
local function first_difference(a, b, path)
  if a == nil or b == nil then return path, a, b, "structure" end
  if a.kind ~= b.kind then return path, a, b, "kind" end
  local k = a.kind
  if k == "tensor" then
    if a.dtype ~= b.dtype then return path, a, b, "dtype" end
    if (a.dims == nil) ~= (b.dims == nil) or (a.dims and #a.dims ~= #b.dims) then return path, a, b, "rank" end
    if a.dims then
      for i, d in ipairs(a.dims) do if d ~= b.dims[i] then return path, a, b, "shape" end end
    end
    return nil
  end
  if k == "value" then
    if same_value(a.value, b.value) then return nil end
    return path, a, b, "value"
  end
  if k == "variable" then
    if rawequal(a.var, b.var) then return nil end
    return path, a, b, "object"
  end
  if k == "object" then
    if a.key == b.key then return nil end
    return path, a, b, "object"
  end
  if a.array ~= b.array or #a.items ~= #b.items then return path, a, b, "structure" end
  for i, item in ipairs(a.items) do
    if not a.array and a.keys[i] ~= b.keys[i] then return path, a, b, "structure" end
    local p, x, y, why = first_difference(item, b.items[i], sub_path(path, a.keys[i]))
    if p then return p, x, y, why end
  end
  return nil
end
M.first_difference = first_difference
M.tensor_dims, M.has_tensor, M.safe_tostring, M.lua_repr, M.sub_path =
  tensor_dims, has_tensor, safe_tostring, lua_repr, sub_path

-- Templates of n values where a TensorSpec stands for a tensor of its dtype
-- and shape (get_concrete_function(TensorSpec, ...)).
function M.spec_template(n, slots, ...)
  specs_as_tensors = true
  local ok, t = pcall(list_template, n, slots, ...)
  specs_as_tensors = false
  if not ok then error(t, 0) end
  return t
end

---------------------------------------------------------------------------
-- Arguments by name (for messages)
---------------------------------------------------------------------------

-- dropped and missing ones are nil, as Lua calls do), more for a vararg fn.
local function arg_count(self, n)
  if self._sig then return self._nsig end
  if self._vararg then return n > self._nparams and n or self._nparams end
  return self._nparams
end

-- Argument i's name in fn's parameter list (Lua keeps parameter names).
local function arg_name(fn, i)
  return fn._params[i] or ("arg" .. i)
end

-- "argument 2 (n)" or "argument 1 (x) at x.w[2]".
local function where(fn, path)
  local i, rest = path:match("^#(%d+)(.*)$")
  i = tonumber(i)
  local name = arg_name(fn, i)
  if rest == "" then return string.format("argument %d (%s)", i, name) end
  return string.format("argument %d (%s) at %s%s", i, name, name, rest)
end
M.arg_count, M.arg_name, M.where = arg_count, arg_name, where

return M
