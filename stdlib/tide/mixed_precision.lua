-- stdlib/tide/mixed_precision.lua — tide.mixed_precision (Keras 3's dtype
-- policies): Policy (a compute and a variable dtype), the global policy, get/serialize.
--
--   tide.mixed_precision.set_global_policy("mixed_bfloat16")
--   local d = tide.layers.Dense{10}     -- float32 kernel, computes in bfloat16
--   d.compute_dtype, d.variable_dtype   -- "bfloat16", "float32"
--   tide.layers.Activation{"softmax", dtype = "float32"} -- a float32 output layer
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"

local fmt = string.format

local M = {}

local Policy = class("DTypePolicy")
M.Policy = Policy
M.DTypePolicy = Policy -- Keras 3's name (keras.DTypePolicy); Policy is its legacy alias

-- name -> compute dtype, variable dtype.
local function parse(name, what)
  if type(name) ~= "string" then
    binding.error(fmt("%s: the policy name must be a string such as \"mixed_float16\", got %s", what, type(name)))
  end
  if name == "mixed_float16" then return "float16", "float32" end
  if name == "mixed_bfloat16" then return "bfloat16", "float32" end
  local code = dtype.codes[name]
  if code == nil or code == dtype.codes.string then
    binding.error(fmt("%s: cannot make a dtype policy from '%s'; valid policies are \"mixed_float16\", " ..
      "\"mixed_bfloat16\" and dtype names such as \"float32\"", what, name))
  end
  local dt = dtype.names[code]
  return dt, dt
end

-- Policy(name): "mixed_float16" (float16 compute, float32 variables),
-- "mixed_bfloat16", or a dtype name (both dtypes that one; aliases such as
-- "float" give "float32"). nil: the global policy's name.
function Policy:__init(name)
  if name == nil then name = M.global_policy().name end
  local compute, variable = parse(name, "Policy")
  if name ~= "mixed_float16" and name ~= "mixed_bfloat16" then name = compute end
  rawset(self, "name", name)
  rawset(self, "compute_dtype", compute)
  rawset(self, "variable_dtype", variable)
end

function Policy:__tostring() return fmt('<DTypePolicy "%s">', self.name) end
function Policy.__eq(a, b) return a.name == b.name end
function Policy:get_config() return { name = self.name } end
function Policy.from_config(a, b) -- Policy.from_config(config) or Policy:from_config(config)
  local config = rawequal(a, Policy) and b or a
  if type(config) ~= "table" then
    binding.error(fmt("DTypePolicy.from_config: expects {name = ...}, got %s", type(config)))
  end
  return Policy(config.name)
end
-- True when computations and variables use two different dtypes.
function Policy:is_mixed() return self.compute_dtype ~= self.variable_dtype end

local function is_policy(x) return class.is_instance(x, Policy) end
M.is_policy = is_policy

local global = nil -- nil until set: float32 (Keras's floatx)

-- The global policy (layers made without dtype= take it): float32 unless set.
function M.global_policy()
  if global == nil then global = Policy("float32") end
  return global
end
M.dtype_policy = M.global_policy -- Keras 3's keras.config.dtype_policy

-- set_global_policy(policy or name); nil goes back to float32. Layers made
-- earlier keep theirs.
function M.set_global_policy(p)
  if p == nil then
    global = nil
    return
  end
  p = dtype.name(p) or p -- a DType constant: its name
  if type(p) == "string" then p = Policy(p) end
  if not is_policy(p) then
    binding.error(fmt("set_global_policy: expects a policy name such as \"mixed_float16\" or a " ..
      "tide.mixed_precision.Policy, got %s", type(p)))
  end
  global = p
end
M.set_dtype_policy = M.set_global_policy -- Keras 3's keras.config.set_dtype_policy

-- Keras's dtype_policies.get: nil -> the global policy; a name; a Policy
-- (as it is); a serialized {class_name = "DTypePolicy", config = {name=}}.
function M.get(identifier, what)
  what = what or "dtype"
  if identifier == nil then return M.global_policy() end
  if is_policy(identifier) then return identifier end
  identifier = dtype.name(identifier) or identifier -- a DType constant: its name
  if type(identifier) == "string" then
    parse(identifier, what) -- its errors name `what`
    return Policy(identifier)
  end
  if type(identifier) == "table" and getmetatable(identifier) == nil then
    local cn = identifier.class_name
    if (cn == "DTypePolicy" or cn == "Policy" or cn == "FloatDTypePolicy") and type(identifier.config) == "table" then
      return Policy(identifier.config.name)
    end
  end
  binding.error(fmt("%s: expected a dtype name, a policy name (\"mixed_float16\", \"mixed_bfloat16\"), a " ..
    "tide.mixed_precision.Policy or {class_name = \"DTypePolicy\", config = {name = ...}}, got %s", what,
    type(identifier) == "table" and "a table without class_name \"DTypePolicy\"" or type(identifier)))
end

-- How a layer's get_config writes its policy: a plain dtype policy as its
-- name (as tf.keras did), a mixed one as {class_name = "DTypePolicy", config = {name=}}.
function M.serialize(p)
  if not is_policy(p) then binding.error(fmt("mixed_precision.serialize: expects a Policy, got %s", type(p))) end
  if not p:is_mixed() then return p.name end
  return { class_name = "DTypePolicy", config = { name = p.name } }
end

-- keras.mixed_precision.LossScaleOptimizer, the same class as tide.optimizers'.
setmetatable(M, {
  __index = function(t, k)
    if k ~= "LossScaleOptimizer" then return nil end
    local cls = require("tide.optimizers.loss_scale").LossScaleOptimizer
    rawset(t, k, cls)
    return cls
  end,
})

return M
