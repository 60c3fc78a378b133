-- stdlib/tide/constraints.lua — tide.constraints (Keras 3's): projections an
-- optimizer applies to a weight after each update (MaxNorm, MinMaxNorm, NonNeg, UnitNorm).
--   tide.layers.Dense{64, kernel_constraint = tide.constraints.MaxNorm{max_value = 3}}
local binding = require "tide.binding"
local class = require "tide.class"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local base = require "tide.initializers.base"
local ikw = base.kwargs

local M = {}

-- Keras's backend.epsilon(): keeps a zero column from dividing by zero.
local EPSILON = 1e-7

local Constraint = class("Constraint")
M.Constraint = Constraint

local function define(name)
  local cls = class(name, Constraint)
  cls.__call = function(self, w)
    if w == nil then binding.error(name .. ": expects a weight (a tensor or Variable), got nil") end
    return self:project(w)
  end
  cls.__tostring = function(self) return string.format("<tide.constraints.%s>", name) end
  return cls
end

-- Keras's base Constraint returns the weight unchanged.
function Constraint:project(w) return w end
function Constraint:get_config() return {} end
function Constraint.from_config(cls, config)
  local copy = {}
  for k, v in pairs(config or {}) do copy[k] = v end
  return cls(copy)
end

local function number(name, what, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or v ~= v then
    binding.error(string.format("%s: %s must be a number, got %s", name, what, tostring(v)))
  end
  return v
end

-- An axis or a list of axes (Conv2D's kernel: {0, 1, 2}, a norm per filter).
local function axis_arg(name, v)
  if v == nil then return 0 end
  local list = type(v) == "table" and v or { v }
  for i, a in ipairs(list) do
    if type(a) ~= "number" or a ~= math.floor(a) then
      binding.error(string.format("%s: axis must be an integer or a list of integers, got %s%s", name,
        type(v) == "table" and ("entry " .. i .. " = ") or "", tostring(a)))
    end
  end
  return v
end

-- The L2 norm of w along axis, kept as a size-1 dim so it broadcasts back.
local function norms(w, axis)
  return math_ops.sqrt(reduce.reduce_sum(math_ops.square(w), axis, true))
end

-- MaxNorm{max_value=2, axis=0}: each slice along axis (a unit's incoming
-- weights) scaled down to a norm of at most max_value.
local MaxNorm = define("MaxNorm")
M.MaxNorm = MaxNorm
function MaxNorm:__init(...)
  local o = ikw("MaxNorm", { "max_value", "axis" }, ...)
  self.max_value = number("MaxNorm", "max_value", o.max_value, 2)
  self.axis = axis_arg("MaxNorm", o.axis)
end
function MaxNorm:project(w)
  local n = norms(w, self.axis)
  local desired = math_ops.clip_by_value(n, 0, self.max_value)
  return w * (desired / (n + EPSILON))
end
function MaxNorm:get_config() return { max_value = self.max_value, axis = self.axis } end

-- MinMaxNorm{min_value=0, max_value=1, rate=1, axis=0}: norms moved (by
-- rate; 1 is strict) into [min_value, max_value].
local MinMaxNorm = define("MinMaxNorm")
M.MinMaxNorm = MinMaxNorm
function MinMaxNorm:__init(...)
  local o = ikw("MinMaxNorm", { "min_value", "max_value", "rate", "axis" }, ...)
  self.min_value = number("MinMaxNorm", "min_value", o.min_value, 0.0)
  self.max_value = number("MinMaxNorm", "max_value", o.max_value, 1.0)
  self.rate = number("MinMaxNorm", "rate", o.rate, 1.0)
  self.axis = axis_arg("MinMaxNorm", o.axis)
end
function MinMaxNorm:project(w)
  local n = norms(w, self.axis)
  local desired = math_ops.clip_by_value(n, self.min_value, self.max_value) * self.rate + n * (1 - self.rate)
  return w * (desired / (n + EPSILON))
end
function MinMaxNorm:get_config()
  return { min_value = self.min_value, max_value = self.max_value, rate = self.rate, axis = self.axis }
end

-- NonNeg: negative weights become 0.
local NonNeg = define("NonNeg")
M.NonNeg = NonNeg
function NonNeg:__init(...) ikw("NonNeg", {}, ...) end
function NonNeg:project(w) return math_ops.maximum(w, 0) end

-- UnitNorm{axis=0}: each slice along axis scaled to norm 1.
local UnitNorm = define("UnitNorm")
M.UnitNorm = UnitNorm
function UnitNorm:__init(...)
  self.axis = axis_arg("UnitNorm", ikw("UnitNorm", { "axis" }, ...).axis)
end
function UnitNorm:project(w) return w / (norms(w, self.axis) + EPSILON) end
function UnitNorm:get_config() return { axis = self.axis } end

-- Keras's snake_case names are the classes themselves.
M.max_norm, M.min_max_norm, M.non_neg, M.unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
local by_name = { MaxNorm = MaxNorm, MinMaxNorm = MinMaxNorm, NonNeg = NonNeg, UnitNorm = UnitNorm,
  max_norm = MaxNorm, min_max_norm = MinMaxNorm, non_neg = NonNeg, unit_norm = UnitNorm }

function M.is_constraint(x) return class.is_instance(x, Constraint) end

-- get(identifier, what): a constraint from a name (its defaults), a config table
-- {class_name=, config=}, a constraint, or a function; nil stays nil.
-- serialize(obj): {class_name=, config=}; a function stays itself.
M.get, M.serialize = base.object_lookup("constraint", by_name, M.is_constraint,
  "max_norm, min_max_norm, non_neg, unit_norm")

M.deserialize = M.get

return M
