-- tests/support/event_reader.lua — reads TensorBoard event files for the
-- specs: framing through tide's TFRecord reader (CRCs checked), the Event,
-- Summary and TensorProto messages by a protobuf wire decoder of its own.
local tide = require "tide"
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C
local band, rshift, lshift = bit.band, bit.rshift, bit.lshift

local M = {}

-- The fields of one message: a list of {num =, wire =, value =} in file
-- order; varints are uint64 cdata, fixed64/32 raw 8/4-byte strings,
-- length-delimited fields Lua strings.
function M.fields(s)
  local out, i, n = {}, 1, #s
  local function varint()
    local v, shift = 0ULL, 0
    while true do
      if i > n then error("protobuf: truncated varint") end
      local b = s:byte(i)
      i = i + 1
      v = v + lshift(ffi.cast("uint64_t", band(b, 0x7f)), shift)
      if b < 0x80 then return v end
      shift = shift + 7
      if shift > 63 then error("protobuf: varint too long") end
    end
  end
  while i <= n do
    local key = tonumber(varint())
    local num, wire = rshift(key, 3), band(key, 7)
    local value
    if wire == 0 then
      value = varint()
    elseif wire == 1 then
      value = s:sub(i, i + 7); i = i + 8
    elseif wire == 5 then
      value = s:sub(i, i + 3); i = i + 4
    elseif wire == 2 then
      local len = tonumber(varint())
      value = s:sub(i, i + len - 1)
      if #value ~= len then error("protobuf: truncated field") end
      i = i + len
    else
      error("protobuf: unsupported wire type " .. wire)
    end
    if i > n + 1 then error("protobuf: truncated field") end
    out[#out + 1] = { num = num, wire = wire, value = value }
  end
  return out
end

local function as_double(bytes)
  local d = ffi.new("double[1]")
  ffi.copy(d, bytes, 8)
  return d[0]
end
local function as_float(bytes)
  local f = ffi.new("float[1]")
  ffi.copy(f, bytes, 4)
  return f[0]
end
local function as_int64(v) return tonumber(ffi.cast("int64_t", v)) end
M.as_double, M.as_float = as_double, as_float

-- TensorProto -> {dtype =, shape = {...}, content = bytes, strings = {...}}.
function M.tensor(bytes)
  local t = { dtype = 0, shape = {}, content = "", strings = {} }
  for _, f in ipairs(M.fields(bytes)) do
    if f.num == 1 then t.dtype = tonumber(f.value)
    elseif f.num == 2 then
      t.has_shape = true
      for _, d in ipairs(M.fields(f.value)) do
        if d.num == 2 then
          local size = 0
          for _, df in ipairs(M.fields(d.value)) do if df.num == 1 then size = as_int64(df.value) end end
          t.shape[#t.shape + 1] = size
        end
      end
    elseif f.num == 4 then t.content = f.value
    elseif f.num == 8 then t.strings[#t.strings + 1] = f.value
    end
  end
  return t
end

-- The float64 values of a tensor_content.
function M.doubles(content)
  local out = {}
  for k = 1, #content, 8 do out[#out + 1] = as_double(content:sub(k, k + 7)) end
  return out
end

-- Summary.Value -> {tag =, plugin_name =, content =, description =, tensor = {...}, raw = bytes}.
function M.value(bytes)
  local v = { raw = bytes, plugin_name = "", content = "", description = "", display_name = "" }
  for _, f in ipairs(M.fields(bytes)) do
    if f.num == 1 then v.tag = f.value
    elseif f.num == 8 then v.tensor = M.tensor(f.value)
    elseif f.num == 2 then v.simple_value = as_float(f.value)
    elseif f.num == 9 then
      for _, m in ipairs(M.fields(f.value)) do
        if m.num == 1 then
          for _, p in ipairs(M.fields(m.value)) do
            if p.num == 1 then v.plugin_name = p.value elseif p.num == 2 then v.content = p.value end
          end
        elseif m.num == 2 then v.display_name = m.value
        elseif m.num == 3 then v.description = m.value
        end
      end
    end
  end
  return v
end

-- GraphDef -> list of nodes {name =, op =, inputs = {...}, attrs = {key = AttrValue bytes}}.
function M.graph_def(bytes)
  local nodes = {}
  for _, f in ipairs(M.fields(bytes)) do
    if f.num == 1 then
      local n = { inputs = {}, attrs = {} }
      for _, nf in ipairs(M.fields(f.value)) do
        if nf.num == 1 then n.name = nf.value
        elseif nf.num == 2 then n.op = nf.value
        elseif nf.num == 3 then n.inputs[#n.inputs + 1] = nf.value
        elseif nf.num == 5 then
          local key, value
          for _, af in ipairs(M.fields(nf.value)) do
            if af.num == 1 then key = af.value elseif af.num == 2 then value = af.value end
          end
          n.attrs[key] = value or ""
        end
      end
      nodes[#nodes + 1] = n
    end
  end
  return nodes
end

-- Event -> {wall_time =, step =, file_version =, graph_def = bytes, writer =, values = {...}, summary_raw = bytes}.
function M.event(bytes)
  local e = { wall_time = 0, step = 0, values = {} }
  for _, f in ipairs(M.fields(bytes)) do
    if f.num == 1 then e.wall_time = as_double(f.value)
    elseif f.num == 2 then e.step = as_int64(f.value)
    elseif f.num == 3 then e.file_version = f.value
    elseif f.num == 4 then e.graph_def = f.value
    elseif f.num == 5 then
      e.summary_raw = f.value
      for _, vf in ipairs(M.fields(f.value)) do
        if vf.num == 1 then e.values[#e.values + 1] = M.value(vf.value) end
      end
    elseif f.num == 10 then
      for _, s in ipairs(M.fields(f.value)) do if s.num == 1 then e.writer = s.value end end
    end
  end
  return e
end

-- Every record of a file (Lua strings), or raises the reader's error
-- (naming the file and byte offset) on a bad CRC or a truncated record.
function M.records(path)
  local r = C.tide_record_reader_open(path, "")
  if r == nil then error(ffi.string(C.tide_last_error()), 2) end
  local out = {}
  local data, len = ffi.new("const uint8_t *[1]"), ffi.new("size_t[1]")
  while true do
    local rc = C.tide_record_reader_next(r, data, len)
    if rc == 0 then break end
    if rc < 0 then
      local msg = ffi.string(C.tide_last_error())
      C.tide_record_reader_close(r)
      error(msg, 2)
    end
    out[#out + 1] = ffi.string(data[0], len[0])
  end
  C.tide_record_reader_close(r)
  return out
end

-- Every Event of an event file.
function M.read(path)
  local out = {}
  for _, rec in ipairs(M.records(path)) do out[#out + 1] = M.event(rec) end
  return out
end

-- The event files in a folder (ls sorted).
function M.files(dir)
  local p = io.popen("ls -1 '" .. dir .. "' 2>/dev/null")
  local out = {}
  for name in p:lines() do
    if name:find("tfevents", 1, true) then out[#out + 1] = dir .. "/" .. name end
  end
  p:close()
  return out
end

local _ = tide
return M
