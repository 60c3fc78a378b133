-- stdlib/tide/json.lua — JSON for configs and metadata: decode through
-- libtide's cJSON reader (tide/json.h), encode plain Lua data (strings,
-- finite numbers, booleans, tide.None as null, lists and string-keyed tables).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"

local ffi, C = binding.ffi, binding.C
local None = tensor_shape.None
local fmt = string.format
local M = {}

---------------------------------------------------------------------------
-- Decoding
---------------------------------------------------------------------------

-- A node as Lua data: objects become tables by key (a null member is left
-- out), arrays lists (a null element is tide.None, so a shape keeps its
-- place), numbers Lua numbers.
local function value(node)
  local kind = C.tide_json_kind(node)
  if kind == C.TIDE_JSON_NULL then return None end
  if kind == C.TIDE_JSON_FALSE then return false end
  if kind == C.TIDE_JSON_TRUE then return true end
  if kind == C.TIDE_JSON_NUMBER then return C.tide_json_number(node) end
  if kind == C.TIDE_JSON_STRING then return ffi.string(C.tide_json_string(node)) end
  local out, i = {}, 0
  local child = C.tide_json_first(node)
  while child ~= nil do
    local v = value(child)
    if kind == C.TIDE_JSON_ARRAY then
      i = i + 1
      out[i] = v
    elseif v ~= None then
      out[ffi.string(C.tide_json_key(child))] = v
    end
    child = C.tide_json_next(child)
  end
  return out
end

-- decode(text[, what]): the value the JSON text holds; an error names the
-- byte where the text stops being JSON, after `what` (who read it, and from
-- which file) when given.
function M.decode(text, what)
  if type(text) ~= "string" then
    binding.error(fmt("%s: expects JSON text (a string), got %s", what or "json.decode", type(text)))
  end
  local doc = C.tide_json_parse(text, #text)
  if doc == nil then
    if what then binding.error(what .. ": " .. ffi.string(C.tide_last_error())) end
    binding.raise()
  end
  local ok, result = pcall(value, C.tide_json_root(doc))
  C.tide_json_free(doc)
  if not ok then error(result, 0) end
  return result
end

---------------------------------------------------------------------------
-- Encoding
---------------------------------------------------------------------------

local ESCAPES = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return ESCAPES[c] or fmt("\\u%04x", c:byte()) end) .. '"'
end

local function encode(v, out, path, depth)
  local t = type(v)
  if v == None then
    out[#out + 1] = "null"
  elseif t == "string" then
    out[#out + 1] = quote(v)
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then
      binding.error(fmt("json.encode: %s is %s, which JSON cannot hold", path, tostring(v)))
    end
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      out[#out + 1] = fmt("%d", v)
    else -- the shortest text that reads back as the same double
      local text = fmt("%.15g", v)
      if tonumber(text) ~= v then text = fmt("%.16g", v) end
      if tonumber(text) ~= v then text = fmt("%.17g", v) end
      out[#out + 1] = text
    end
  elseif t == "table" and getmetatable(v) == nil then
    if depth > 200 then binding.error(fmt("json.encode: %s is nested too deep (a cycle?)", path)) end
    local n, keys = #v, {}
    for k in pairs(v) do
      if not (type(k) == "number" and k >= 1 and k <= n and k == math.floor(k)) then
        if type(k) ~= "string" then
          binding.error(fmt("json.encode: %s has a %s key (%s); JSON objects take string keys", path, type(k),
            tostring(k)))
        end
        keys[#keys + 1] = k
      end
    end
    if n > 0 and #keys > 0 then
      binding.error(fmt("json.encode: %s mixes list entries and named fields (%s)", path, keys[1]))
    end
    if n > 0 then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out, fmt("%s[%d]", path, i), depth + 1)
      end
      out[#out + 1] = "]"
    else
      table.sort(keys) -- the same data gives the same text
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = quote(k)
        out[#out + 1] = ":"
        encode(v[k], out, path .. "." .. k, depth + 1)
      end
      out[#out + 1] = "}"
    end
  else
    binding.error(fmt("json.encode: %s is %s, which JSON cannot hold", path,
      t == "table" and "an object with a metatable" or "a " .. t))
  end
end

-- encode(value): compact JSON text for plain data (sorted keys).
function M.encode(v)
  local out = {}
  encode(v, out, "the value", 0)
  return table.concat(out)
end

return M
