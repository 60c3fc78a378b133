-- stdlib/tide/initializers/base.lua — the Initializer base class (Keras 3's):
-- callable objects init(shape, dtype) -> tensor, with configs and Keras's fans.
local binding = require "tide.binding"
local class = require "tide.class"
local args = require "tide.args"
local dtype = require "tide.dtype"

local M = {}

local Initializer = class("Initializer")
M.Initializer = Initializer

-- A subclass of parent (Initializer by default) named `name`. Instances are
-- called as functions, and the metamethods Lua looks up on an instance's
-- metatable (its class) are copied down, since Lua reads them raw.
function M.define(name, parent)
  local cls = class(name, parent or Initializer)
  cls.__call = rawget(Initializer, "__call")
  cls.__tostring = rawget(Initializer, "__tostring")
  return cls
end

-- init(shape, dtype="float32") or init(shape, {dtype=}): the initial value.
Initializer.__call = function(self, shape, ...)
  local name = getmetatable(self).__name
  local o = args.parse(name, { "dtype" }, ...)
  if shape == nil then binding.error(name .. ": a shape is required (a list of dims, e.g. {784, 128})") end
  local dims = args.shape(name, shape)
  local dt = o.dtype or "float32"
  dtype.code(dt, name) -- a name the engine knows, or its error
  return self:generate(dims, dtype.names[dtype.code(dt, name)])
end

Initializer.__tostring = function(self)
  return string.format("<tide.initializers.%s>", getmetatable(self).__name)
end

-- The configuration the constructor takes back (Keras's get_config).
function Initializer:get_config() return {} end

-- cls:from_config(config): a new initializer of class cls.
function Initializer.from_config(cls, config)
  local copy = {}
  for k, v in pairs(config or {}) do copy[k] = v end
  return cls(copy)
end

function Initializer:generate()
  binding.error(getmetatable(self).__name .. ": an initializer must define generate(shape, dtype)")
end

-- Keras's compute_fans: (fan_in, fan_out) of a weight shape (a Lua list).
-- Scalars count 1; vectors their length; matrices [in, out]; convolution
-- kernels [..., in, out] multiply both by the receptive field (the product
-- of the leading dims).
function M.compute_fans(shape)
  local n = #shape
  if n < 1 then return 1, 1 end
  if n == 1 then return shape[1], shape[1] end
  if n == 2 then return shape[1], shape[2] end
  local field = 1
  for i = 1, n - 2 do field = field * shape[i] end
  return shape[n - 1] * field, shape[n] * field
end

-- A float dtype name, or an error naming the initializer.
function M.float_dtype(name, dt)
  local code = dtype.code(dt, name)
  if not dtype.is_float[code] then
    binding.error(string.format("%s: a random initializer makes float values; dtype %s is not a float dtype",
      name, dtype.names[code]))
  end
  return dt
end

-- An optional integer seed, checked.
function M.seed(name, seed)
  if seed == nil then return nil end
  if type(seed) ~= "number" or seed ~= math.floor(seed) then
    binding.error(string.format("%s: seed must be an integer or nil, got %s", name, tostring(seed)))
  end
  return seed
end

-- The argument names each class's constructor took (class name -> names),
-- noted at each construction: tests/spec/keras_signatures_spec.lua checks
-- them against Keras's.
M.arg_names = {}

-- Constructor arguments, Keras style: Cls(a, b), Cls{a, b, key=v} and
-- Cls(a, {key=v}) all work. A single plain table is the keyword table (its
-- list part fills the positional names in order); names lists them in
-- Keras's order, names.keywords any more that come by name only. Unknown
-- keys are an error naming the class and the keys it takes. A last argument
-- that is an object (an optimizer, a layer) is a value, not options.
function M.kwargs(name, names, ...)
  -- the first noting of a construction is the class's own: a constructor
  -- that hands on to its parent's (ReversibleEmbedding to Embedding's) keeps its names
  if M.arg_names[name] == nil then M.arg_names[name] = names end
  local n = select("#", ...)
  local first = ...
  if n == 1 and type(first) == "table" and getmetatable(first) == nil then
    local out = {}
    local known = {}
    for i, k in ipairs(names) do known[k] = i end
    for _, k in ipairs(names.keywords or {}) do known[k] = true end
    for k, v in pairs(first) do
      if type(k) == "number" then
        if k < 1 or k > #names or k ~= math.floor(k) then
          binding.error(string.format("%s: too many positional options (it takes %s)", name, table.concat(names, ", ")))
        end
        out[names[k]] = v
      elseif known[k] then
        out[k] = v
      else
        binding.error(string.format("%s: unknown option '%s' (expected: %s)", name, tostring(k),
          args.names_text(names)))
      end
    end
    return out
  end
  local last = n > 0 and select(n, ...) or nil
  if type(last) == "table" and getmetatable(last) ~= nil then
    if n > #names then
      binding.error(string.format("%s: too many positional options (it takes %s)", name, table.concat(names, ", ")))
    end
    local out = {}
    for i = 1, n do out[names[i]] = (select(i, ...)) end
    return out
  end
  return args.parse(name, names, ...)
end

-- get(identifier, what) and serialize(obj) for a family of Keras objects
-- (regularizers, constraints): `kind` names it in errors, by_name maps names
-- (class and snake_case) to classes, is_instance tells its objects, known
-- lists the names an error offers. get: nil stays nil; an object or a Lua
-- function is itself; a name gives an instance with the defaults;
-- {class_name=, config=} an instance with that config. serialize gives
-- {class_name=, config=} (a function stays itself).
function M.object_lookup(kind, by_name, is_instance, known)
  local function get(identifier, what)
    what = what or kind
    if identifier == nil or is_instance(identifier) or type(identifier) == "function" then return identifier end
    if type(identifier) == "string" then
      local cls = by_name[identifier]
      if not cls then binding.error(string.format("%s: unknown %s '%s' (known: %s)", what, kind, identifier, known)) end
      return cls()
    end
    if type(identifier) == "table" and getmetatable(identifier) == nil and identifier.class_name then
      local cls = by_name[identifier.class_name]
      if not cls then
        binding.error(string.format("%s: unknown %s class '%s'", what, kind, tostring(identifier.class_name)))
      end
      return cls:from_config(identifier.config)
    end
    binding.error(string.format("%s: expected a %s name, object, config table or function, got %s", what, kind,
      type(identifier)))
  end
  local function serialize(obj)
    if obj == nil or type(obj) == "function" then return obj end
    return { class_name = getmetatable(obj).__name, config = obj:get_config() }
  end
  return get, serialize
end

return M
