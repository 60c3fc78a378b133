-- stdlib/tide/optimizers/arguments.lua — the constructor arguments of optimizers
-- and schedules: TF's keyword names, positional values in Keras's order, checks
-- with messages that name the class, the argument and what was given.
local binding = require "tide.binding"
local variable = require "tide.variable"

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

-- True for an options table: a table without a metatable (so that a
-- schedule given positionally is a value) that is empty or has a string key
-- (a Lua list, such as PiecewiseConstantDecay's boundaries, is a value).
local function is_options(t)
  if type(t) ~= "table" or getmetatable(t) ~= nil then return false end
  if next(t) == nil then return true end
  for k in pairs(t) do
    if type(k) == "string" then return true end
  end
  return false
end

-- Named values from a call: positional values in the order of `names`, then
-- one options table (whose list entries continue the positional values).
-- Unknown names are an error naming `cls`.
function M.parse(cls, names, ...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  local out, npos = {}, n
  if is_options(last) then npos = n - 1 end
  if npos > #names then
    binding.error(fmt("%s: expected at most %d positional argument(s), got %d", cls, #names, npos))
  end
  for i = 1, npos do out[names[i]] = (select(i, ...)) end
  if npos < n then
    local known = {}
    for _, k in ipairs(names) do known[k] = true end
    for k, v in pairs(last) do
      if type(k) == "number" and k >= 1 and k == math.floor(k) and npos + k <= #names then
        k = names[npos + k] -- Adam{0.01, beta_1 = 0.8}: list entries continue the positional values
      end
      if type(k) ~= "string" or not known[k] then
        binding.error(fmt("%s: unknown option '%s' (expected: %s)", cls, tostring(k), table.concat(names, ", ")))
      end
      out[k] = v
    end
  end
  return out
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
