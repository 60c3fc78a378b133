-- stdlib/tide/regularizers.lua — tide.regularizers (Keras 3's): weight
-- penalties L1, L2, L1L2 as callable objects reg(w) -> scalar tensor.
--   tide.regularizers.l2(0.01)   tide.regularizers.l1_l2{l1 = 1e-5, l2 = 1e-4}
local binding = require "tide.binding"
local class = require "tide.class"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local base = require "tide.initializers.base"
local ikw = base.kwargs

local M = {}

local Regularizer = class("Regularizer")
M.Regularizer = Regularizer

local function define(name)
  local cls = class(name, Regularizer)
  cls.__call = function(self, x)
    if x == nil then binding.error(name .. ": expects a weight (a tensor or Variable), got nil") end
    return self:penalty(x)
  end
  cls.__tostring = function(self) return string.format("<tide.regularizers.%s>", name) end
  return cls
end

-- A non-negative float factor (Keras's validate_float_arg).
local function factor(name, what, v, default)
  if v == nil then return default end
  if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then
    binding.error(string.format("%s: %s must be a non-negative number, got %s", name, what, tostring(v)))
  end
  return v
end

function Regularizer:get_config() return {} end
function Regularizer.from_config(cls, config)
  local copy = {}
  for k, v in pairs(config or {}) do copy[k] = v end
  return cls(copy)
end

-- L1{l1=0.01}: l1 * sum(|w|).
local L1 = define("L1")
M.L1 = L1
function L1:__init(...)
  self.l1 = factor("L1", "l1", ikw("L1", { "l1" }, ...).l1, 0.01)
end
function L1:penalty(x) return reduce.reduce_sum(math_ops.abs(x)) * self.l1 end
function L1:get_config() return { l1 = self.l1 } end

-- L2{l2=0.01}: l2 * sum(w^2) (no 1/2, unlike tf.nn.l2_loss).
local L2 = define("L2")
M.L2 = L2
function L2:__init(...)
  self.l2 = factor("L2", "l2", ikw("L2", { "l2" }, ...).l2, 0.01)
end
function L2:penalty(x) return reduce.reduce_sum(math_ops.square(x)) * self.l2 end
function L2:get_config() return { l2 = self.l2 } end

-- L1L2{l1=0, l2=0}: both penalties summed (the terms whose factor is 0 are left out).
local L1L2 = define("L1L2")
M.L1L2 = L1L2
function L1L2:__init(...)
  local o = ikw("L1L2", { "l1", "l2" }, ...)
  self.l1 = factor("L1L2", "l1", o.l1, 0.0)
  self.l2 = factor("L1L2", "l2", o.l2, 0.0)
end
function L1L2:penalty(x)
  local r = create.zeros({}, x.dtype)
  if self.l1 ~= 0 then r = r + reduce.reduce_sum(math_ops.abs(x)) * self.l1 end
  if self.l2 ~= 0 then r = r + reduce.reduce_sum(math_ops.square(x)) * self.l2 end
  return r
end
function L1L2:get_config() return { l1 = self.l1, l2 = self.l2 } end

-- OrthogonalRegularizer{factor=0.01, mode="rows"}: for a 2-D weight, factor / 2 times the mean |cosine| of
-- its distinct pairs of rows (or columns), each row L2-normalized as keras.ops.normalize does.
local OrthogonalRegularizer = define("OrthogonalRegularizer")
M.OrthogonalRegularizer = OrthogonalRegularizer
function OrthogonalRegularizer:__init(...)
  local o = ikw("OrthogonalRegularizer", { "factor", "mode" }, ...)
  self.factor = factor("OrthogonalRegularizer", "factor", o.factor, 0.01)
  local mode = o.mode == nil and "rows" or o.mode
  if mode ~= "rows" and mode ~= "columns" then
    binding.error(string.format("OrthogonalRegularizer: mode must be \"rows\" or \"columns\", got %s", tostring(mode)))
  end
  self.mode = mode
end
function OrthogonalRegularizer:penalty(x)
  local linalg = require "tide.ops.linalg"
  local convert = require "tide.convert"
  x = convert.arg(x, "OrthogonalRegularizer")
  if x.shape.rank ~= 2 then
    binding.error(string.format("OrthogonalRegularizer: the weight must have rank 2, got shape %s", tostring(x.shape)))
  end
  local rows = self.mode == "rows"
  local axis = rows and 1 or 0
  local inv = math_ops.minimum(math_ops.rsqrt(reduce.reduce_sum(math_ops.square(x), axis, true)), 1 / 1e-7)
  x = x * inv
  local product = rows and linalg.matmul(x, x, { transpose_b = true }) or linalg.matmul(x, x, { transpose_a = true })
  local size = rows and x.shape[1] or x.shape[2]
  if type(size) ~= "number" then
    binding.error("OrthogonalRegularizer: the weight's " .. self.mode .. " must be known")
  end
  local off = product * (1 - create.eye(size, { dtype = x.dtype }))
  return reduce.reduce_sum(math_ops.abs(off)) * (self.factor * 0.5 / (size * (size - 1) / 2))
end
function OrthogonalRegularizer:get_config() return { factor = self.factor, mode = self.mode } end

-- Keras's snake_case names are the classes themselves.
M.l1, M.l2, M.l1_l2, M.orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer
local by_name = { L1 = L1, L2 = L2, L1L2 = L1L2, l1 = L1, l2 = L2, l1_l2 = L1L2,
  OrthogonalRegularizer = OrthogonalRegularizer, orthogonal_regularizer = OrthogonalRegularizer }

function M.is_regularizer(x) return class.is_instance(x, Regularizer) end

-- get(identifier, what): a regularizer from a name (its defaults), a config table
-- {class_name=, config=}, a regularizer, or a function; nil stays nil.
-- serialize(obj): {class_name=, config=}; a function stays itself.
M.get, M.serialize = base.object_lookup("regularizer", by_name, M.is_regularizer, "l1, l2, l1_l2, orthogonal_regularizer")

M.deserialize = M.get

return M
