-- stdlib/tide/repl/complete.lua — tab completion for the REPL: the names that
-- complete a word (globals and keywords, `a.b.` fields, `x:` methods).
-- Tensors' methods come from the binding's method tables; tide's lazily
-- loaded members (tide.layers, ...) are listed without loading them.
local binding = require "tide.binding"

local M = {}

local KEYWORDS = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
  "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }

-- Follow a dotted path from _G without running __index functions that may
-- load or compute (rawget first; a table's __index table chain next; a
-- function __index only for a name the table's metatable lists in __lazy,
-- which loads that one module, as typing the name would).
local function field(obj, name)
  if type(obj) == "table" then
    local v = rawget(obj, name)
    if v ~= nil then return v end
    local mt = getmetatable(obj)
    local depth = 0
    while type(mt) == "table" and depth < 16 do
      local index = rawget(mt, "__index")
      if type(index) == "table" then
        v = rawget(index, name)
        if v ~= nil then return v end
        mt = getmetatable(index)
      elseif type(index) == "function" then
        local lazy = rawget(mt, "__lazy")
        if type(lazy) == "table" and lazy[name] ~= nil then
          local ok, got = pcall(index, obj, name)
          if ok then return got end
        end
        return nil
      else
        return nil
      end
      depth = depth + 1
    end
    return nil
  end
  if binding.istensor(obj) then
    return binding.methods[name] or nil
  end
  return nil
end

-- Every name a value offers after `.` (or `:` when method is true).
local function names_of(obj, method, add)
  local function add_table(t, depth)
    if type(t) ~= "table" or depth > 16 then return end
    for k in pairs(t) do add(k) end
    local mt = getmetatable(t)
    if type(mt) == "table" then
      local lazy = rawget(mt, "__lazy")
      if type(lazy) == "table" then
        for k in pairs(lazy) do add(k) end
      end
      local index = rawget(mt, "__index")
      if type(index) == "table" then
        add_table(index, depth + 1)
      elseif type(rawget(mt, "__name")) == "string" then
        add_table(mt, depth + 1) -- a class whose __index is a function: its methods are its fields
      end
    end
  end
  if type(obj) == "table" then
    add_table(obj, 0)
  elseif type(obj) == "cdata" and binding.istensor(obj) then
    add_table(binding.methods, 0)
    if not method then add_table(binding.properties, 0) end
  elseif type(obj) == "string" and method then
    add_table(string, 0)
  end
end

-- complete(word) -> sorted list of whole words that complete `word`:
-- "tide.la" -> {"tide.layers"}, "x:resh" -> {"x:reshape"}, "pri" -> {"print"}.
-- Nothing is loaded or run beyond reading fields (and one lazy module of
-- tide when the path names it).
function M.complete(word)
  local path, sep, part = word:match("^([%a_][%w_%.:]-)([%.:])([%w_]*)$")
  if not path then
    path, sep, part = nil, "", word:match("^[%a_][%w_]*$") or (word == "" and "" or nil)
  end
  if not part or (path and path:find(":", 1, true)) then return {} end
  local found, seen = {}, {}
  local function add(k)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and k:sub(1, #part) == part and not seen[k]
        and (k:sub(1, 2) ~= "__" or part:sub(1, 2) == "__") then -- metamethods only when asked for
      seen[k] = true
      found[#found + 1] = k
    end
  end
  local obj = _G
  if path then
    for name in path:gmatch("[^%.]+") do
      obj = field(obj, name)
      if obj == nil then return {} end
    end
    names_of(obj, sep == ":", add)
  else
    for _, k in ipairs(KEYWORDS) do add(k) end
    names_of(_G, false, add)
  end
  table.sort(found)
  local prefix = path and (path .. sep) or ""
  for i = 1, #found do found[i] = prefix .. found[i] end
  return found
end

return M
