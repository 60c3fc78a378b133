-- stdlib/tide/utils/config_dict.lua — keras.utils.Config: a table of named values read and set as fields or by
-- key, which freeze() makes read-only; to_json, as_dict, keys/values/items as Keras's.
local binding = require "tide.binding"
local json = require "tide.json"

local fmt = string.format
local M = {}

-- Each Config's own state, kept off the object so that every field name is the user's (but the methods').
local state = setmetatable({}, { __mode = "k" })
local METHODS = {}

local function fail(...) binding.error("Config: " .. fmt(...)) end

local function check_key(k)
  if type(k) ~= "string" then fail("keys must be strings, got %s", type(k)) end
end

local function raise_if_frozen(self)
  if state[self].frozen then fail("cannot mutate attribute(s) because the config is frozen") end
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- The nearest key to a misspelt one, as Keras's difflib hint: similarity 2 * LCS / (#a + #b) of at least 0.7.
local function lcs(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = 0 end
  for i = 1, #a do
    local cur = { [0] = 0 }
    for j = 1, #b do
      cur[j] = a:byte(i) == b:byte(j) and prev[j - 1] + 1 or math.max(prev[j], cur[j - 1])
    end
    prev = cur
  end
  return prev[#b]
end

local function closest(name, values)
  local best, br = nil, 0.7
  for _, k in ipairs(sorted_keys(values)) do
    local r = 2 * lcs(name, k) / (#name + #k)
    if r >= br and (best == nil or r > br) then best, br = k, r end
  end
  return best
end

local Config = {}
Config.__index = function(self, k)
  if METHODS[k] then return METHODS[k] end
  local s = state[self]
  if k == "frozen" then return s.frozen end
  local v = s.values[k]
  if v ~= nil then return v end
  local hint = type(k) == "string" and closest(k, s.values)
  fail("unknown attribute '%s'.%s", tostring(k), hint and (" Did you mean '" .. hint .. "'?") or "")
end
Config.__newindex = function(self, k, v)
  check_key(k)
  if METHODS[k] or k == "frozen" then fail("'%s' is a method of Config, not a value", k) end
  raise_if_frozen(self)
  state[self].values[k] = v
end
-- LuaJIT (Lua 5.1) reads neither __len nor __pairs on tables: config:len() and config:items() stand in for them.
function METHODS.len(self)
  local n = 0
  for _ in pairs(state[self].values) do n = n + 1 end
  return n
end
Config.__tostring = function(self) return "<Config " .. json.encode(state[self].values) .. ">" end

-- config:freeze() / config:unfreeze(); config.frozen tells which.
function METHODS.freeze(self) state[self].frozen = true end
function METHODS.unfreeze(self) state[self].frozen = false end
-- A copy of the values as a plain table.
function METHODS.as_dict(self)
  local out = {}
  for k, v in pairs(state[self].values) do out[k] = v end
  return out
end
function METHODS.to_json(self) return json.encode(state[self].values) end
-- Keys in sorted order (Keras iterates sorted); values and items in that order.
function METHODS.keys(self) return sorted_keys(state[self].values) end
function METHODS.values(self)
  local out, vals = {}, state[self].values
  for i, k in ipairs(sorted_keys(vals)) do out[i] = vals[k] end
  return out
end
-- for k, v in config:items() do ... end
function METHODS.items(self)
  local ks, vals, i = sorted_keys(state[self].values), state[self].values, 0
  return function()
    i = i + 1
    if ks[i] ~= nil then return ks[i], vals[ks[i]] end
  end
end
function METHODS.get(self, k, default)
  local v = state[self].values[k]
  if v == nil then return default end
  return v
end
function METHODS.contains(self, k) return state[self].values[k] ~= nil end
-- pop(k, default): the value removed; a missing key without a default is an error, as dict.pop.
function METHODS.pop(self, k, ...)
  raise_if_frozen(self)
  local vals = state[self].values
  local v = vals[k]
  if v == nil then
    if select("#", ...) == 0 then fail("pop: no key '%s'", tostring(k)) end
    return (...)
  end
  vals[k] = nil
  return v
end
-- update(table): every key of the table set.
function METHODS.update(self, t)
  raise_if_frozen(self)
  if type(t) ~= "table" then fail("update expects a table of values, got %s", type(t)) end
  for k, v in pairs(t) do
    check_key(k)
    state[self].values[k] = v
  end
end

-- Config{learning_rate = 0.1, momentum = 0.9}: a new config holding those values.
function M.Config(values)
  if values ~= nil and type(values) ~= "table" then fail("expects a table of named values, got %s", type(values)) end
  local self = setmetatable({}, Config)
  state[self] = { values = {}, frozen = false }
  for k, v in pairs(values or {}) do
    check_key(k)
    if METHODS[k] or k == "frozen" then fail("'%s' is a method of Config, not a value", k) end
    state[self].values[k] = v
  end
  return self
end

function M.is_config(v) return type(v) == "table" and getmetatable(v) == Config end

return M
