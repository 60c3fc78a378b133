-- stdlib/tide/layers/input_spec.lua — Keras's input_spec: the rank, axis sizes, shape and dtype a layer
-- declares for its first input, checked at each call; and keras.layers.InputSpec, the object that holds them.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local keras_tensor = require "tide.layers.keras_tensor"

local Tensor, istype = binding.Tensor, binding.ffi.istype
local None = tensor_shape.None

local class = require "tide.class"

local M = {}

local InputSpec = class("InputSpec")
M.InputSpec = InputSpec

local SPEC_NAMES = { "dtype", "shape", "ndim", "max_ndim", "min_ndim", "axes", "allow_last_axis_squeeze", "name",
  "optional" }

local function want_int(what, v)
  if v ~= nil and (type(v) ~= "number" or v ~= math.floor(v) or v < 0) then
    binding.error(string.format("InputSpec: %s must be an integer >= 0, got %s", what, tostring(v)))
  end
  return v
end

-- InputSpec{dtype=, shape=, ndim=, max_ndim=, min_ndim=, axes=, allow_last_axis_squeeze=false, name=,
-- optional=false}, Keras's: a shape sets ndim; axes maps axis indices to sizes ({[-1] = 3}).
function InputSpec:__init(...)
  local o = require("tide.initializers.base").kwargs("InputSpec", SPEC_NAMES, ...)
  if o.dtype ~= nil then
    local dtype = require "tide.dtype"
    local ok, code = pcall(dtype.code, o.dtype, "InputSpec")
    if not ok then binding.error("InputSpec: dtype must be a dtype name, got " .. tostring(o.dtype)) end
    self.dtype = dtype.names[code]
  end
  if o.shape ~= nil then
    local shape = type(o.shape) == "table" and o.shape.as_list and o.shape:as_list() or o.shape
    if type(shape) ~= "table" then
      binding.error("InputSpec: shape must be a list of dims (tide.None for unknown ones), got " .. tostring(o.shape))
    end
    for i, d in ipairs(shape) do
      if d ~= None then want_int("shape[" .. i .. "]", d) end
    end
    self.shape, self.ndim = shape, #shape
  else
    self.ndim = want_int("ndim", o.ndim)
  end
  self.max_ndim, self.min_ndim = want_int("max_ndim", o.max_ndim), want_int("min_ndim", o.min_ndim)
  if o.axes ~= nil then
    if type(o.axes) ~= "table" then binding.error("InputSpec: axes must be a table of axis = size") end
    for axis, size in pairs(o.axes) do
      if type(axis) ~= "number" or axis ~= math.floor(axis) then
        binding.error("InputSpec: axes' keys must be integer axes, got " .. tostring(axis))
      end
      want_int("axes[" .. axis .. "]", size)
      if self.ndim and (axis >= self.ndim or axis < -self.ndim) then
        binding.error(string.format("InputSpec: axis %d is out of range for ndim %d", axis, self.ndim))
      end
    end
    self.axes = o.axes
  end
  self.allow_last_axis_squeeze = o.allow_last_axis_squeeze == true
  self.name, self.optional = o.name, o.optional == true
end

function InputSpec:get_config()
  return { dtype = self.dtype, shape = self.shape, ndim = self.ndim, max_ndim = self.max_ndim,
    min_ndim = self.min_ndim, axes = self.axes }
end

function InputSpec.from_config(cls, config) return cls(config) end

function InputSpec:__tostring()
  local parts = {}
  for _, k in ipairs { "dtype", "ndim", "max_ndim", "min_ndim" } do
    if self[k] ~= nil then parts[#parts + 1] = k .. "=" .. tostring(self[k]) end
  end
  return "InputSpec(" .. table.concat(parts, ", ") .. ")"
end

-- Keras's input_spec: self.input_spec = {ndim=, min_ndim=, max_ndim=,
-- axes = {[-1] = n}} is checked against the first input at each call.
function M.check(self, x)
  local spec = rawget(self, "input_spec")
  if not spec or not (istype(Tensor, x) or keras_tensor.is(x)) then return end
  local nd = x.ndim
  if nd < 0 then return end -- a traced tensor of unknown rank: the ops check at run time
  local name = string.format("%s '%s'", getmetatable(self).__name, tostring(rawget(self, "name")))
  if spec.ndim and nd ~= spec.ndim then
    binding.error(string.format("%s: expected an input of rank %d, got shape %s", name, spec.ndim,
      tostring(x.shape)))
  end
  if spec.min_ndim and nd < spec.min_ndim then
    binding.error(string.format("%s: expected an input of rank >= %d, got shape %s", name, spec.min_ndim,
      tostring(x.shape)))
  end
  if spec.max_ndim and nd > spec.max_ndim then
    binding.error(string.format("%s: expected an input of rank <= %d, got shape %s", name, spec.max_ndim,
      tostring(x.shape)))
  end
  if spec.dtype and x.dtype ~= spec.dtype then
    binding.error(string.format("%s: expected an input of dtype %s, got %s", name, spec.dtype, tostring(x.dtype)))
  end
  if spec.shape then
    for i, want in ipairs(spec.shape) do
      local d = x.shape[i]
      if want ~= None and d ~= None and d ~= want then
        local dims = {}
        for j, dd in ipairs(spec.shape) do dims[j] = tostring(dd) end
        binding.error(string.format("%s: expected an input of shape (%s), got %s", name, table.concat(dims, ", "),
          tostring(x.shape)))
      end
    end
  end
  if spec.axes then
    local shape = x.shape
    for axis, size in pairs(spec.axes) do
      local i = axis < 0 and nd + axis + 1 or axis + 1
      local d = shape[i]
      if d ~= None and d ~= size then
        binding.error(string.format("%s: expected axis %d of the input to have size %d, got shape %s", name, axis,
          size, tostring(x.shape)))
      end
    end
  end
end

return M
