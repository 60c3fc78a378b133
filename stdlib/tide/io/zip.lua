-- stdlib/tide/io/zip.lua — tide.io.zip: zip archives (Keras's .keras files)
-- over kernels/io/zip_file.c: the directory checked at open, entries read
-- with their CRC checked; archives of stored entries saved atomically.
local binding = require "tide.binding"

local ffi, C = binding.ffi, binding.C
local fmt = string.format

local M = {}

local function check_string(what, s, name)
  if type(s) ~= "string" then binding.error(fmt("zip.%s: %s must be a string, got %s", what, name, type(s))) end
  if s:find("\0", 1, true) then binding.error(fmt("zip.%s: %s contains a NUL byte", what, name)) end
end

local Archive = {}
Archive.__index = Archive

local function close_handle(h) C.tide_zip_close(h) end

-- open(path): the archive at path (through the file policy).
function M.open(path)
  check_string("open", path, "the path")
  if path == "" then binding.error("zip.open: the path is empty") end
  local h = C.tide_zip_open(path)
  if h == nil then binding.raise() end
  return setmetatable({ _h = ffi.gc(h, close_handle), name = path }, Archive)
end

-- open_bytes(bytes, name): the same over a Lua string's bytes.
function M.open_bytes(bytes, name)
  if type(bytes) ~= "string" then binding.error("zip.open_bytes: bytes must be a string, got " .. type(bytes)) end
  name = name or "(memory)"
  check_string("open_bytes", name, "the name")
  local h = C.tide_zip_open_memory(bytes, #bytes, name)
  if h == nil then binding.raise() end
  return setmetatable({ _h = ffi.gc(h, close_handle), name = name }, Archive)
end

local function handle(self)
  local h = rawget(self, "_h")
  if h == nil then binding.error(fmt("zip: '%s' is closed", self.name)) end
  return h
end

-- The entry names in the archive's order.
function Archive:names()
  local h = handle(self)
  local out = {}
  for i = 0, tonumber(C.tide_zip_count(h)) - 1 do out[i + 1] = ffi.string(C.tide_zip_name(h, i)) end
  return out
end

-- Whether the archive has an entry called name.
function Archive:has(name)
  check_string("has", name, "the entry name")
  return C.tide_zip_find(handle(self), name) >= 0
end

-- The bytes of the entry called name (a Lua string).
function Archive:read(name)
  local h = handle(self)
  check_string("read", name, "the entry name")
  local i = C.tide_zip_find(h, name)
  if i < 0 then binding.error(fmt("zip: '%s' has no entry '%s' (entries: %s)", self.name, name,
    table.concat(self:names(), ", "))) end
  local n = ffi.new("size_t[1]")
  local p = C.tide_zip_read(h, i, n)
  if p == nil then binding.raise() end
  return ffi.string(p, n[0])
end

function Archive:close()
  local h = rawget(self, "_h")
  if h ~= nil then
    ffi.gc(h, nil)
    C.tide_zip_close(h)
    self._h = nil
  end
end

local Writer = {}
Writer.__index = Writer

local function free_writer(w) C.tide_zip_writer_free(w) end

-- writer(): an archive being made in memory; w:add(name, bytes), w:save(path).
function M.writer()
  local w = C.tide_zip_writer_new()
  if w == nil then binding.raise() end
  return setmetatable({ _w = ffi.gc(w, free_writer) }, Writer)
end

-- Add the entry name holding bytes (a Lua string), stored as Keras stores it.
function Writer:add(name, bytes)
  check_string("add", name, "the entry name")
  if type(bytes) ~= "string" then binding.error(fmt("zip.add: '%s': bytes must be a string, got %s", name,
    type(bytes))) end
  if C.tide_zip_writer_add(self._w, name, bytes, #bytes) ~= 0 then binding.raise() end
  return self
end

-- Finish the archive and write it to path atomically.
function Writer:save(path)
  check_string("save", path, "the path")
  if C.tide_zip_writer_save(self._w, path) ~= 0 then binding.raise() end
end

return M
