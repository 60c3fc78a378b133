-- stdlib/tide/initializers/constant.lua — Keras 3's deterministic
-- initializers: Zeros, Ones, Constant, Identity.
local binding = require "tide.binding"
local create = require "tide.ops.create"
local base = require "tide.initializers.base"

local define, kwargs = base.define, base.kwargs

local M = {}

-- Zeros(): zeros of any dtype.
local Zeros = define("Zeros")
M.Zeros = Zeros
function Zeros:__init(...) kwargs("Zeros", {}, ...) end
function Zeros:generate(shape, dt) return create.zeros(shape, dt) end

-- Ones(): ones of any dtype.
local Ones = define("Ones")
M.Ones = Ones
function Ones:__init(...) kwargs("Ones", {}, ...) end
function Ones:generate(shape, dt) return create.ones(shape, dt) end

-- Constant{value=0}: every element the number value.
local Constant = define("Constant")
M.Constant = Constant
function Constant:__init(...)
  local o = kwargs("Constant", { "value" }, ...)
  local v = o.value == nil and 0.0 or o.value
  if type(v) ~= "number" and type(v) ~= "boolean" then
    binding.error("Constant: value must be a number (Keras takes only scalars), got " .. type(v))
  end
  self.value = v
end
function Constant:generate(shape, dt) return create.fill(shape, self.value, dt) end
function Constant:get_config() return { value = self.value } end

-- Identity{gain=1}: gain times the identity matrix (2-D shapes only).
local Identity = define("Identity")
M.Identity = Identity
function Identity:__init(...)
  local o = kwargs("Identity", { "gain" }, ...)
  self.gain = o.gain == nil and 1.0 or o.gain
  if type(self.gain) ~= "number" then binding.error("Identity: gain must be a number, got " .. type(self.gain)) end
end
function Identity:generate(shape, dt)
  if #shape ~= 2 then
    binding.error(string.format("Identity: the shape must be two-dimensional, got {%s}", table.concat(shape, ", ")))
  end
  return create.eye(shape[1], shape[2], { dtype = dt }) * self.gain
end
function Identity:get_config() return { gain = self.gain } end

return M
