-- stdlib/tide/models/safetensors.lua — a small safetensors writer and reader
-- for model weights: 8-byte little-endian header length, a JSON header
-- {name: {dtype, shape, data_offsets}}, then the raw little-endian data.
-- Writes go to a temporary name that is renamed into place, so a failed or
-- interrupted save never leaves a half-written file.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"

local ffi = binding.ffi
local M = {}

local CODES = { float32 = "F32", float64 = "F64", float16 = "F16", bfloat16 = "BF16", int8 = "I8", uint8 = "U8",
  int32 = "I32", int64 = "I64", bool = "BOOL" }
local NAMES = {}
for k, v in pairs(CODES) do NAMES[v] = k end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function u64le(n)
  local bytes = {}
  for i = 1, 8 do
    bytes[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(bytes)
end

-- save(path, tensors, metadata): tensors a list of {name, tensor}; metadata
-- an optional table of strings.
function M.save(path, entries, metadata)
  local parts, header, offset = {}, {}, 0
  for i, e in ipairs(entries) do
    local name, t = e[1], e[2]
    local code = CODES[t.dtype]
    if code == nil then binding.error(string.format("safetensors: cannot save dtype %s ('%s')", t.dtype, name)) end
    t = shape_ops.contiguous(t)
    local n = t.shape:num_elements() * dtype.size[dtype.code(t.dtype)]
    parts[i] = n > 0 and ffi.string(t.data, n) or ""
    local dims = {}
    for k, d in ipairs(t.shape:as_list()) do dims[k] = tostring(d) end
    header[#header + 1] = string.format('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}', json_string(name),
      code, table.concat(dims, ","), offset, offset + n)
    offset = offset + n
  end
  if metadata then
    local keys, meta = {}, {}
    for k in pairs(metadata) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do meta[#meta + 1] = json_string(k) .. ":" .. json_string(tostring(metadata[k])) end
    table.insert(header, 1, '"__metadata__":{' .. table.concat(meta, ",") .. "}")
  end
  local text = "{" .. table.concat(header, ",") .. "}"
  text = text .. string.rep(" ", (8 - #text % 8) % 8)
  local tmp = path .. ".tmp" .. tostring(os.time()) .. tostring(math.random(1e9))
  local f, err = io.open(tmp, "wb")
  if not f then binding.error(string.format("safetensors: cannot write '%s': %s", path, tostring(err))) end
  local ok, werr = pcall(function()
    assert(f:write(u64le(#text), text))
    for _, p in ipairs(parts) do assert(f:write(p)) end
    assert(f:close())
  end)
  if not ok then
    pcall(f.close, f)
    os.remove(tmp)
    binding.error(string.format("safetensors: writing '%s' failed: %s", path, tostring(werr)))
  end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then
    os.remove(tmp)
    binding.error(string.format("safetensors: cannot move the new file into '%s': %s", path, tostring(rerr)))
  end
end

---------------------------------------------------------------------------
-- Reading: a JSON reader for the header's subset (objects, arrays, strings,
-- integers)
---------------------------------------------------------------------------

local function json_decode(s, path)
  local pos = 1
  local function fail(what)
    binding.error(string.format("safetensors: '%s' has a corrupt header (%s at byte %d)", path, what, pos))
  end
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    pos = pos + 1
    local out = {}
    while true do
      local c = s:sub(pos, pos)
      if c == "" then fail("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        if e == "u" then
          out[#out + 1] = string.char(tonumber(s:sub(pos + 2, pos + 5), 16) % 256)
          pos = pos + 6
        else
          out[#out + 1] = ({ n = "\n", t = "\t", r = "\r", b = "\b", f = "\f" })[e] or e
          pos = pos + 2
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
    return table.concat(out)
  end
  value = function()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local obj = {}
      ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return obj end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then fail("expected a key") end
        local k = str()
        ws()
        if s:sub(pos, pos) ~= ":" then fail("expected ':'") end
        pos = pos + 1
        obj[k] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return obj end
        if d ~= "," then fail("expected ',' or '}'") end
      end
    elseif c == "[" then
      pos = pos + 1
      local arr = {}
      ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then fail("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" then fail("unexpected character") end
      pos = pos + #num
      return tonumber(num)
    end
  end
  local v = value()
  return v
end

-- load(path): { name = tensor } and the metadata table.
function M.load(path)
  local f, err = io.open(path, "rb")
  if not f then binding.error(string.format("safetensors: cannot open '%s': %s", path, tostring(err))) end
  local content = f:read("*a")
  f:close()
  if #content < 8 then binding.error(string.format("safetensors: '%s' is too short to be a safetensors file", path)) end
  local n = 0
  for i = 8, 1, -1 do n = n * 256 + content:byte(i) end
  if n > #content - 8 then
    binding.error(string.format("safetensors: '%s' is corrupt: its header length (%d) passes the end of the file", path, n))
  end
  local header = json_decode(content:sub(9, 8 + n), path)
  if type(header) ~= "table" then binding.error(string.format("safetensors: '%s' has a corrupt header", path)) end
  local base = 8 + n
  local out, meta = {}, header.__metadata__ or {}
  for name, e in pairs(header) do
    if name ~= "__metadata__" then
      local dt = type(e) == "table" and NAMES[e.dtype]
      if not dt then binding.error(string.format("safetensors: '%s': tensor '%s' has an unsupported dtype %s", path,
        name, tostring(type(e) == "table" and e.dtype))) end
      local a, b = e.data_offsets[1], e.data_offsets[2]
      local count = 1
      for _, d in ipairs(e.shape) do count = count * d end
      if b - a ~= count * dtype.size[dtype.code(dt)] or base + b > #content then
        binding.error(string.format("safetensors: '%s' is corrupt: tensor '%s' has %d bytes of data for shape [%s] %s",
          path, name, b - a, table.concat(e.shape, ","), dt))
      end
      local dims = {}
      for i, d in ipairs(e.shape) do dims[i] = d end
      out[name] = create.from_buffer(content:sub(base + a + 1, base + b), dims, dt)
    end
  end
  return out, meta
end

return M
