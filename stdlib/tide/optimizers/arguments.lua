-- stdlib/tide/optimizers/arguments.lua — the constructor arguments of optimizers
-- and schedules: TF's keyword names, positional values in Keras's order, checks
-- with messages that name the class, the argument and what was given.
local binding = require "tide.binding"
local variable = require "tide.variable"
local base_init = require "tide.initializers.base"

local istensor, is_variable = binding.istensor, variable.is_variable
local fmt = string.format

local M = {}

-- What a value is, for messages: "a tensor", "the string \"x\"", "nil (nil)".
function M.describe(v)
  if istensor(v) then return "a tensor" end
  if is_variable(v) then return "a Variable" end
  if type(v) == "string" then return fmt("the string %q", v) end
  return fmt("%s (%s)", tostring(v), type(v))
end
local describe = M.describe

-- True for a function or a table/userdata whose metatable has __call.
function M.is_callable(v)
  if type(v) == "function" then return true end
  local mt = (type(v) == "table" or type(v) == "userdata") and getmetatable(v)
  return type(mt) == "table" and mt.__call ~= nil
end

-- Named values from a call, Keras style (initializers.base.kwargs): Cls{a,
-- key = v} (list entries fill the names in order: SGD{0.1}), Cls(a, b,
-- {key = v}) or Cls(a, b) (a Lua list, such as PiecewiseConstantDecay's
-- boundaries, given by position is a value). Unknown names are an error
-- naming `cls`.
function M.parse(cls, names, ...)
  return base_init.kwargs(cls, names, ...)
end

-- Checks by kind: each returns the value or raises "<cls>: <k> must be ...".
M.CHECKS = {
  number = function(cls, k, v)
    if type(v) ~= "number" or v ~= v then
      binding.error(fmt("%s: %s must be a number, got %s", cls, k, describe(v)))
    end
    return v
  end,
  unit = function(cls, k, v) -- a number in [0, 1] (SGD's momentum)
    if type(v) ~= "number" or not (v >= 0 and v <= 1) then
      binding.error(fmt("%s: %s must be a number between 0 and 1, got %s", cls, k, describe(v)))
    end
    return v
  end,
  nonneg = function(cls, k, v)
    if type(v) ~= "number" or not (v >= 0) then
      binding.error(fmt("%s: %s must be a number >= 0, got %s", cls, k, describe(v)))
    end
    return v
  end,
  positive = function(cls, k, v)
    if type(v) ~= "number" or not (v > 0) then
      binding.error(fmt("%s: %s must be a number > 0, got %s", cls, k, describe(v)))
    end
    return v
  end,
  accumulation = function(cls, k, v) -- an integer >= 2 (Keras's gradient_accumulation_steps)
    if type(v) ~= "number" or v ~= math.floor(v) or v < 2 then
      binding.error(fmt("%s: %s must be an integer >= 2 or nil, got %s", cls, k, describe(v)))
    end
    return v
  end,
  count = function(cls, k, v) -- an integer >= 1
    if type(v) ~= "number" or v ~= math.floor(v) or v < 1 then
      binding.error(fmt("%s: %s must be an integer >= 1 or nil, got %s", cls, k, describe(v)))
    end
    return v
  end,
  bool = function(cls, k, v)
    if type(v) ~= "boolean" then binding.error(fmt("%s: %s must be true or false, got %s", cls, k, describe(v))) end
    return v
  end,
  string = function(cls, k, v)
    if type(v) ~= "string" then binding.error(fmt("%s: %s must be a string, got %s", cls, k, describe(v))) end
    return v
  end,
  strings = function(cls, k, v) -- a Lua list of strings
    if type(v) ~= "table" or getmetatable(v) ~= nil then
      binding.error(fmt("%s: %s must be a list of strings, got %s", cls, k, describe(v)))
    end
    for i, x in ipairs(v) do
      if type(x) ~= "string" then binding.error(fmt("%s: %s[%d] must be a string, got %s", cls, k, i, describe(x))) end
    end
    return v
  end,
  numbers = function(cls, k, v) -- a Lua list of numbers
    if type(v) ~= "table" or getmetatable(v) ~= nil then
      binding.error(fmt("%s: %s must be a list of numbers, got %s", cls, k, describe(v)))
    end
    for i, x in ipairs(v) do
      if type(x) ~= "number" or x ~= x then
        binding.error(fmt("%s: %s[%d] must be a number, got %s", cls, k, i, describe(x)))
      end
    end
    return v
  end,
}

-- The values of `params` ({ name, default, kind, required }) from a parsed
-- call `o`, checked; a missing required one is an error.
function M.fill(cls, params, o)
  local out = {}
  for _, p in ipairs(params) do
    local k, v = p[1], o[p[1]]
    if v == nil then v = p[2] end
    if v == nil and p.required then binding.error(fmt("%s: %s is required", cls, k)) end
    if v ~= nil and p[3] then v = M.CHECKS[p[3]](cls, k, v) end
    out[k] = v
  end
  return out
end

return M
