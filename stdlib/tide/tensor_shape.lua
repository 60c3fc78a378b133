-- stdlib/tide/tensor_shape.lua — tide.Shape (TF's TensorShape: a Lua list of
-- dims that prints like TF's and compares by value) and tide.None (a dim
-- unknown until a traced graph runs).
local binding = require "tide.binding"
local format = require "tide.format"

-- One instance per Lua state (busted may clear package.loaded between spec
-- files): tide.None is compared by identity, and shapes by their metatable.
local REGISTRY_KEY = "tide.tensor_shape"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {}
registry[REGISTRY_KEY] = M

-- tide.None: an unknown dimension in a TensorSpec or a symbolic tensor's shape.
M.None = setmetatable({}, { __tostring = function() return "None" end, __name = "tide.None" })

-- A Shape is a list of dims. One of unknown rank (TF's TensorShape(None), the
-- shape of a traced tensor whose rank is known only when its graph runs) has
-- no dims and the field unknown_rank = true: it prints as <unknown>, its
-- rank is nil, and as_list / num_elements are errors, as in TF. (#s is 0:
-- LuaJIT's # on a table takes no metamethod, so code that may meet one reads
-- s.rank.)
local Shape = {}
local methods = {}
Shape.__index = function(s, k)
  if k == "rank" then
    if rawget(s, "unknown_rank") then return nil end
    return #s
  end
  return methods[k]
end
Shape.__tostring = function(s) return format.shape_text(s) end
Shape.__eq = function(a, b)
  if rawget(a, "unknown_rank") or rawget(b, "unknown_rank") then
    return rawget(a, "unknown_rank") == rawget(b, "unknown_rank") -- TF: TensorShape(None) == TensorShape(None)
  end
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function known_rank(s, what)
  if rawget(s, "unknown_rank") then
    binding.error(string.format("Shape:%s: the shape has an unknown rank (<unknown>); use tide.rank(x) and " ..
      "tide.shape(x) for a traced tensor's rank and dims when its graph runs", what))
  end
end

-- Number of elements of a shape.
function methods.num_elements(s)
  known_rank(s, "num_elements")
  local n = 1
  for i = 1, #s do n = n * s[i] end
  return n
end
-- A plain Lua list of the dims.
function methods.as_list(s)
  known_rank(s, "as_list")
  local out = {}
  for i = 1, #s do out[i] = s[i] end
  return out
end
M.Shape = Shape

-- The Shape of unknown rank (a new one each call: callers may keep it);
-- also tide.Shape.unknown(), e.g. as a while_loop shape invariant.
function M.unknown()
  return setmetatable({ unknown_rank = true }, Shape)
end
rawset(Shape, "unknown", M.unknown)

-- True when s (a Shape or a Lua list of dims) has an unknown rank (nil too).
function M.is_unknown_rank(s)
  return s == nil or (type(s) == "table" and rawget(s, "unknown_rank") == true)
end

return M
