-- stdlib/tide/repl/show.lua — how the REPL prints a result: tensors and
-- objects with __tostring as tostring gives them (tensors summarized past
-- 1000 elements, as TF), tables pretty-printed to a depth with a cap on entries.
local M = {}

M.MAX_DEPTH = 2     -- nested tables deeper than this print as {...}
M.MAX_ENTRIES = 20  -- entries printed per table before "... (N more)"
M.MAX_WIDTH = 78    -- a table that fits on one line this wide prints on one line

local function has_tostring(v)
  local mt = getmetatable(v)
  return (type(mt) == "table" and rawget(mt, "__tostring") ~= nil) or type(v) == "cdata"
end

local function is_identifier(k)
  return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil
end

-- Keys in a stable order: 1..n first, then numbers, then strings, then the rest by tostring.
local function sorted_keys(t)
  local n = #t
  local keys = {}
  for k in pairs(t) do
    if not (type(k) == "number" and k >= 1 and k <= n and k % 1 == 0) then keys[#keys + 1] = k end
  end
  local rank = { number = 1, string = 2 }
  table.sort(keys, function(a, b)
    local ra, rb = rank[type(a)] or 3, rank[type(b)] or 3
    if ra ~= rb then return ra < rb end
    if ra < 3 then return a < b end
    return tostring(a) < tostring(b)
  end)
  return n, keys
end

local render

local function render_key(k, seen)
  if is_identifier(k) then return k end
  return "[" .. render(k, 99, seen, "") .. "]"
end

-- The text of v at nesting `depth`, `indent` the current line's indent.
render = function(v, depth, seen, indent)
  local tv = type(v)
  if tv == "string" then return (string.format("%q", v):gsub("\\\n", "\\n")) end
  if tv ~= "table" or has_tostring(v) then
    local ok, s = pcall(tostring, v)
    s = ok and s or ("<" .. tv .. ": __tostring failed>")
    return (s:gsub("\n", "\n" .. indent))
  end
  if seen[v] then return "<cycle: " .. tostring(v) .. ">" end
  if next(v) == nil then return "{}" end
  if depth > M.MAX_DEPTH then return "{...}" end
  seen[v] = true
  local n, keys = sorted_keys(v)
  local items, shown, total = {}, 0, n + #keys
  local inner = indent .. "  "
  for i = 1, n do
    if shown >= M.MAX_ENTRIES then break end
    items[#items + 1] = render(v[i], depth + 1, seen, inner)
    shown = shown + 1
  end
  for _, k in ipairs(keys) do
    if shown >= M.MAX_ENTRIES then break end
    items[#items + 1] = render_key(k, seen) .. " = " .. render(v[k], depth + 1, seen, inner)
    shown = shown + 1
  end
  seen[v] = nil
  if total > shown then items[#items + 1] = "... (" .. (total - shown) .. " more)" end
  local line = "{" .. table.concat(items, ", ") .. "}"
  if #line + #indent <= M.MAX_WIDTH and not line:find("\n", 1, true) then return line end
  return "{\n" .. inner .. table.concat(items, ",\n" .. inner) .. "\n" .. indent .. "}"
end

-- show(v) -> the text the REPL prints for one result: strings as they are,
-- tables pretty-printed, everything else as tostring.
function M.show(v)
  if type(v) == "string" then return v end
  return render(v, 1, {}, "")
end

-- show_all(...) -> the results' texts joined by tabs (as print joins them).
function M.show_all(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = M.show((select(i, ...))) end
  return table.concat(out, "\t")
end

return M
