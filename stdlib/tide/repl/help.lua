-- stdlib/tide/repl/help.lua — help(x) at the REPL: a function's signature and
-- doc comment, a class's doc and constructor, a module's members, a value's type.
-- Docs are the `--` comment block right above a definition (docs/repl.md).
local binding = require "tide.binding"

local M = {}

local source_cache = {}

-- The lines of a Lua source file (nil when it cannot be read).
local function source_lines(path)
  if source_cache[path] ~= nil then return source_cache[path] or nil end
  local f = io.open(path, "r")
  if not f then
    source_cache[path] = false
    return nil
  end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  source_cache[path] = lines
  return lines
end

-- The comment block that ends on the line above `line` (its `--` stripped),
-- or nil; a block of only dashes (a section rule) is no doc.
local function comment_above(lines, line)
  local doc, i = {}, line - 1
  while i >= 1 do
    local text = lines[i]:match("^%s*%-%-(.*)$")
    if not text or text:match("^%-+%s*$") then break end
    table.insert(doc, 1, (text:gsub("^ ", "")))
    i = i - 1
  end
  if #doc == 0 then return nil end
  return table.concat(doc, "\n")
end

-- The parameter list of a Lua function from its debug info: "(x, shape, ...)".
local function params(f)
  local info = debug.getinfo(f, "u")
  local names = {}
  for i = 1, info.nparams or 0 do names[i] = debug.getlocal(f, i) or ("arg" .. i) end
  if info.isvararg then names[#names + 1] = "..." end
  return "(" .. table.concat(names, ", ") .. ")"
end

-- What help says about a function: signature line, where, doc.
local function function_help(f, name)
  local info = debug.getinfo(f, "S")
  if info.what == "C" then return (name or "function") .. ": a built-in (C) function" end
  local out = {}
  local path = info.source:sub(1, 1) == "@" and info.source:sub(2) or nil
  local lines = path and source_lines(path)
  local def = lines and lines[info.linedefined]
  if def and def:find("function", 1, true) then
    out[1] = def:gsub("^%s+", "")
  else
    out[1] = (name or "function") .. params(f)
  end
  if path then out[#out + 1] = "  (" .. path .. ":" .. info.linedefined .. ")" end
  local doc = lines and comment_above(lines, info.linedefined)
  out[#out + 1] = doc or "(no doc comment above its definition)"
  return table.concat(out, "\n")
end

-- A class made by tide.class or Layer:extend: a table with __name and methods.
local function class_help(cls)
  local name = rawget(cls, "__name")
  local ctor = rawget(cls, "init") or rawget(cls, "__init")
  local out = { "class " .. name }
  if type(ctor) == "function" then
    local info = debug.getinfo(ctor, "S")
    local path = info.source:sub(1, 1) == "@" and info.source:sub(2) or nil
    local lines = path and source_lines(path)
    local doc
    if lines then -- the comment above the line that makes the class, else above its constructor
      for i, line in ipairs(lines) do
        if line:find('"' .. name .. '"', 1, true) and (line:find("extend", 1, true) or line:find("class", 1, true))
            and line:match("^%s*[%w_%.]+%s*=") or line:match("^%s*local%s+" .. name .. "%s*=") then
          doc = comment_above(lines, i)
          if doc then
            out[#out + 1] = "  (" .. path .. ":" .. i .. ")"
            break
          end
        end
      end
      doc = doc or comment_above(lines, info.linedefined)
    end
    out[#out + 1] = doc or "(no doc comment above its definition)"
  end
  local methods = {}
  for k, v in pairs(cls) do
    if type(k) == "string" and type(v) == "function" and not k:match("^_") then methods[#methods + 1] = k end
  end
  table.sort(methods)
  if #methods > 0 then out[#out + 1] = "methods: " .. table.concat(methods, ", ") end
  return table.concat(out, "\n")
end

-- A table of functions and values (a module): its members, sorted.
local function module_help(t, name)
  local members = {}
  for k, v in pairs(t) do
    if type(k) == "string" then members[#members + 1] = k .. (type(v) == "function" and "()" or "") end
  end
  local mt = getmetatable(t)
  if type(mt) == "table" and type(rawget(mt, "__lazy")) == "table" then
    for k in pairs(rawget(mt, "__lazy")) do
      if rawget(t, k) == nil then members[#members + 1] = k end
    end
  end
  table.sort(members)
  return (name or tostring(t)) .. ": a table of " .. #members .. " members\n" .. table.concat(members, "  ")
end

-- help_text(x, name) -> what help(x) prints.
function M.help_text(x, name)
  local tx = type(x)
  if tx == "function" then return function_help(x, name) end
  if tx == "table" then
    if type(rawget(x, "__name")) == "string" and (rawget(x, "init") or rawget(x, "__init")) then return class_help(x) end
    local mt = getmetatable(x)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" and mt ~= x then
      return "an instance of " .. class_help(mt)
    end
    return module_help(x, name)
  end
  if tx == "cdata" and binding.istensor(x) then
    local names = {}
    for k in pairs(binding.methods) do names[#names + 1] = k end
    table.sort(names)
    return tostring(x) .. "\ntensor methods: " .. table.concat(names, ", ")
  end
  if x == nil then
    return "help(x) shows a function's signature and doc comment, a class's doc and methods, "
      .. "a module's members; e.g. help(tide.reshape), help(tide.layers.Dense), help(tide)"
  end
  return tx .. ": " .. tostring(x)
end

-- help(x): print help_text(x).
function M.help(x) print(M.help_text(x)) end

return M
