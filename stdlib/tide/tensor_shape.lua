-- stdlib/tide/tensor_shape.lua — tide.Shape (TF's TensorShape: a Lua list of
-- dims that prints like TF's and compares by value) and tide.None (a dim
-- unknown until a traced graph runs).
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

local Shape = {}
Shape.__index = Shape
Shape.__tostring = function(s) return format.shape_text(s) end
Shape.__eq = function(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
-- Number of elements of a shape.
function Shape:num_elements()
  local n = 1
  for i = 1, #self do n = n * self[i] end
  return n
end
-- A plain Lua list of the dims.
function Shape:as_list()
  local out = {}
  for i = 1, #self do out[i] = self[i] end
  return out
end
M.Shape = Shape

return M
