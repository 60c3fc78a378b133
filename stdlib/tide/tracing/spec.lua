-- stdlib/tide/tracing/spec.lua — tide.None and tide.TensorSpec: the shapes and
-- dtypes a traced function accepts (TF's tf.TensorSpec, with nil for an unknown rank).
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"

local REGISTRY_KEY = "tide.tracing.spec"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {}
registry[REGISTRY_KEY] = M

-- tide.None: an unknown dimension in a TensorSpec (tensor_shape owns it).
M.None = tensor_shape.None
local None = M.None

local TensorSpec = class("TensorSpec")
M.TensorSpec = TensorSpec

-- A shape (a list of sizes and tide.None or -1, a tide.Shape, or nil for an
-- unknown rank) as a fresh Lua list, or an error naming `what`.
local function normalize_shape(shape, what)
  if tensor_shape.is_unknown_rank(shape) then return nil end -- nil, or x.shape of an unknown rank
  if type(shape) ~= "table" then
    binding.error(string.format("%s: shape must be a list of sizes and tide.None (or nil for any rank), got %s",
      what, type(shape)))
  end
  local dims = {}
  local n = shape.n or #shape
  for i = 1, n do
    local d = shape[i]
    if d == None or d == -1 then dims[i] = None
    elseif type(d) == "number" and d >= 0 and d == math.floor(d) then dims[i] = d
    else binding.error(string.format("%s: dimension %d must be a size or tide.None, got %s", what, i, tostring(d))) end
  end
  if #dims > 8 then binding.error(string.format("%s: rank %d is more than tide supports", what, #dims)) end
  return dims
end
M.normalize_shape = normalize_shape

-- tide.TensorSpec(shape, dtype="float32", name=nil), or
-- tide.TensorSpec{shape=, dtype=, name=}: shape is a list of sizes and
-- tide.None, or nil for any rank (TF's TensorSpec(None)).
function TensorSpec:__init(shape, dt, name)
  if type(shape) == "table" and getmetatable(shape) == nil and
     (shape.shape ~= nil or shape.dtype ~= nil or shape.name ~= nil) then
    for k in pairs(shape) do
      if k ~= "shape" and k ~= "dtype" and k ~= "name" then
        binding.error("TensorSpec: unknown option '" .. tostring(k) .. "' (expected: shape, dtype, name)")
      end
    end
    shape, dt, name = shape.shape, shape.dtype, shape.name
  elseif type(dt) == "table" then -- TensorSpec(shape, {dtype=, name=})
    dt, name = dt.dtype, dt.name
  end
  self.shape = normalize_shape(shape, "TensorSpec")
  self.dtype = dtype.names[dtype.code(dt or "float32", "TensorSpec")]
  if name ~= nil and type(name) ~= "string" then
    binding.error("TensorSpec: name must be a string, got " .. type(name))
  end
  self.name = name
end

-- TF's TensorShape text: "(2, None)", "(3,)", "()", or "<unknown>".
local function dims_text(dims)
  if tensor_shape.is_unknown_rank(dims) then return "<unknown>" end
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = tostring(d) end
  if #parts == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end
M.dims_text = dims_text

TensorSpec.__tostring = function(s)
  return string.format("TensorSpec(shape=%s, dtype=tide.%s, name=%s)", dims_text(s.shape), s.dtype,
    s.name and ("'" .. s.name .. "'") or "None")
end

-- Specs are equal when shape, dtype and name are (TF's TensorSpec.__eq__).
TensorSpec.__eq = function(a, b)
  if a.dtype ~= b.dtype or a.name ~= b.name then return false end
  if (a.shape == nil) ~= (b.shape == nil) then return false end
  if a.shape == nil then return true end
  if #a.shape ~= #b.shape then return false end
  for i, d in ipairs(a.shape) do if b.shape[i] ~= d then return false end end
  return true
end

-- The spec of tensor t (TF's TensorSpec.from_tensor); unknown dims of a
-- symbolic tensor are tide.None.
function TensorSpec.from_tensor(t, name)
  if not binding.istensor(t) then binding.error("TensorSpec.from_tensor: expected a tensor, got " .. type(t)) end
  if t.ndim < 0 then return TensorSpec(nil, dtype.names[t.dt], name) end -- a traced tensor of unknown rank
  local dims = {}
  for i = 0, t.ndim - 1 do
    local d = tonumber(t.dims[i])
    dims[i + 1] = d < 0 and None or d
  end
  return TensorSpec(dims, dtype.names[t.dt], name)
end

-- True when a tensor of dtype dt (name) and dims (a Lua list) fits this spec.
function TensorSpec:accepts(dt, dims)
  if dt ~= self.dtype then return false end
  if self.shape == nil then return true end
  if dims == nil or #dims ~= #self.shape then return false end
  for i, d in ipairs(self.shape) do
    if d ~= None and d ~= dims[i] then return false end
  end
  return true
end

-- True when x (a tensor or a TensorSpec) could be passed where this spec is
-- expected: same dtype, and shapes that agree where both are known (TF's
-- TensorSpec.is_compatible_with).
function TensorSpec:is_compatible_with(x)
  local dt, dims
  if binding.istensor(x) then x = TensorSpec.from_tensor(x) end
  if not class.is_instance(x, TensorSpec) then return false end
  dt, dims = x.dtype, x.shape
  if dt ~= self.dtype then return false end
  if self.shape == nil or dims == nil then return true end
  if #dims ~= #self.shape then return false end
  for i, d in ipairs(self.shape) do
    local e = dims[i]
    if d ~= None and e ~= None and d ~= e then return false end
  end
  return true
end

-- The spec's trace type: a TensorSpec passed as an ordinary argument (not to
-- get_concrete_function) is traced by value.
function TensorSpec:__tracing_type()
  return tostring(self)
end

function M.is_spec(x) return class.is_instance(x, TensorSpec) end

return M
