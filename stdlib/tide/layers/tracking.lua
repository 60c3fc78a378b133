-- stdlib/tide/layers/tracking.lua — what a layer owns: the Variables and
-- sub-layers reachable from its fields and Lua tables (as tf.Module tracks).
--
-- How: a __newindex hook on layers notes each field's name the first time it
-- is assigned (Lua calls __newindex only for a key the table lacks, so this
-- costs nothing on reads or on later writes), and every query walks those
-- fields then, in that order, into plain Lua tables (list part in order,
-- then the other keys sorted). Walking at query time sees the current
-- values: a field reassigned or cleared, a table filled after it was
-- assigned (self.blocks[#self.blocks + 1] = Dense{...}), which a hook alone
-- would miss. Each object gets a sequence number when first seen (made by
-- add_weight, assigned to a field, or met by a walk), and results come in
-- that order: Keras's order, where tracking follows assignment order.
local variable = require "tide.variable"

local M = {}

local is_variable = variable.is_variable
local next_seq = 0

-- A new tracking record for a layer (kept in its raw field _tracking).
function M.new()
  return {
    keys = {},        -- field names in first-assignment order
    key_seen = {},    -- name -> true
    seq = setmetatable({}, { __mode = "k" }),    -- Variable or layer -> first-sighting number
    store = setmetatable({}, { __mode = "k" }),  -- Variable -> true (trainable store) / false, as Keras files it
    created = {},     -- Variables made by add_weight, in order
  }
end

-- Note obj as seen now (the first time only).
function M.sight(t, obj)
  if t.seq[obj] == nil then
    next_seq = next_seq + 1
    t.seq[obj] = next_seq
  end
end

-- Hook for a field assigned for the first time: remember its name and
-- sight what it holds now.
function M.note_field(t, key, value, is_layer)
  if not t.key_seen[key] then
    t.key_seen[key] = true
    t.keys[#t.keys + 1] = key
  end
  if value ~= nil then
    M.walk_value(value, is_layer, function(obj) M.sight(t, obj) end, {})
  end
end

-- Call found(obj) for each Variable and layer in value, depth first; plain
-- tables (no metatable) are walked, anything else is left alone. A layer
-- is reported, not entered: its own weights are its business.
function M.walk_value(value, is_layer, found, visited)
  if is_variable(value) then return found(value) end
  if type(value) ~= "table" then return end
  if is_layer(value) then return found(value) end
  if getmetatable(value) ~= nil or visited[value] then return end
  visited[value] = true
  local n = #value
  for i = 1, n do M.walk_value(value[i], is_layer, found, visited) end
  local others = {}
  for k in pairs(value) do
    if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then others[#others + 1] = k end
  end
  if #others > 0 then
    table.sort(others, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      if ta == "number" or ta == "string" then return a < b end
      return tostring(a) < tostring(b)
    end)
    for _, k in ipairs(others) do M.walk_value(value[k], is_layer, found, visited) end
  end
end

-- The Variables and sub-layers layer owns directly, each a list in Keras's
-- order: variables of the trainable store, then of the other (each by first
-- sighting), and sub-layers by first sighting.
function M.owned(layer, t, is_layer)
  local vars, layers, seen = {}, {}, {}
  local function found(obj)
    if seen[obj] or obj == layer then return end
    seen[obj] = true
    M.sight(t, obj)
    if is_variable(obj) then
      if t.store[obj] == nil then
        t.store[obj] = obj.trainable
        -- a frozen layer's own Variables are frozen with it, as add_weight's
        -- are (Keras 3 leaks a plain field's into its parent's trainable_weights)
        if obj.trainable and rawget(layer, "_trainable") == false then obj.trainable = false end
      end
      vars[#vars + 1] = obj
    else
      layers[#layers + 1] = obj
    end
  end
  for _, v in ipairs(t.created) do found(v) end
  local visited = {}
  for _, k in ipairs(t.keys) do
    local value = rawget(layer, k)
    if value ~= nil then M.walk_value(value, is_layer, found, visited) end
  end
  local seq = t.seq
  local function by_seq(a, b) return seq[a] < seq[b] end
  table.sort(vars, by_seq)
  table.sort(layers, by_seq)
  local ordered = {}
  for _, v in ipairs(vars) do if t.store[v] then ordered[#ordered + 1] = v end end
  for _, v in ipairs(vars) do if not t.store[v] then ordered[#ordered + 1] = v end end
  return ordered, layers
end

return M
