-- stdlib/tide/layers/input_spec.lua — Keras's input_spec: the rank and axis
-- sizes a layer declares for its first input, checked at each call.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local keras_tensor = require "tide.layers.keras_tensor"

local Tensor, istype = binding.Tensor, binding.ffi.istype
local None = tensor_shape.None

local M = {}

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
