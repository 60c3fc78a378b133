-- stdlib/tide/io/tfrecord.lua — TFRecord files from Lua: TFRecordWriter and a
-- record reader (kernels/io/record.c does the framing); records are Lua strings.
local binding = require "tide.binding"
local class = require "tide.class"

local ffi, C = binding.ffi, binding.C
local M = {}

-- The compression_type of an options argument: a table {compression_type=},
-- TF's bare string, or nil.
local function compression_of(what, opts)
  local c = opts
  if type(opts) == "table" then
    for k in pairs(opts) do
      if k ~= "compression_type" then
        binding.error(string.format("%s: unknown option '%s' (options: compression_type)", what, tostring(k)))
      end
    end
    c = opts.compression_type
  end
  if c == nil then return "" end
  if type(c) ~= "string" then
    binding.error(string.format("%s: compression_type must be \"\", \"GZIP\" or \"ZLIB\", got %s", what, type(c)))
  end
  return c
end

local function check_path(what, path)
  if type(path) ~= "string" then
    binding.error(string.format("%s: path must be a string, got %s", what, type(path)))
  end
end

---------------------------------------------------------------------------
-- Writer
---------------------------------------------------------------------------

local TFRecordWriter = class("TFRecordWriter")
M.TFRecordWriter = TFRecordWriter

-- TFRecordWriter(path, {compression_type = "" | "GZIP" | "ZLIB"}): creates
-- (or truncates) path and writes records into it in place, as TF does. A
-- writer that is collected unclosed is closed then (its errors are lost:
-- close it yourself).
function TFRecordWriter:__init(path, opts)
  check_path("TFRecordWriter", path)
  local w = C.tide_record_writer_open(path, compression_of("TFRecordWriter", opts))
  if w == nil then binding.raise() end
  self._w = binding.owned(w, C.tide_record_writer_close)
  self.path = path
end

local function live(self, what)
  local p = self._w and self._w.p
  if p == nil then
    binding.error(string.format("TFRecordWriter.%s: the writer of '%s' is closed", what, self.path))
  end
  return p
end

-- write(record): appends one record (a Lua string of any bytes).
function TFRecordWriter:write(record)
  local w = live(self, "write")
  if type(record) ~= "string" then
    binding.error(string.format("TFRecordWriter.write: a record must be a string of bytes, got %s", type(record)))
  end
  if C.tide_record_writer_write(w, record, #record) ~= 0 then binding.raise() end
end

-- flush(): what was written so far reaches the file (readable, also for GZIP).
function TFRecordWriter:flush()
  if C.tide_record_writer_flush(live(self, "flush")) ~= 0 then binding.raise() end
end

-- close(): finishes the file; closing twice is allowed.
function TFRecordWriter:close()
  local st = self._w.close()
  if st ~= nil and st ~= 0 then binding.raise() end
end

---------------------------------------------------------------------------
-- Reader
---------------------------------------------------------------------------

local Reader = class("TFRecordReader")
M.Reader = Reader

-- Reader(path, {compression_type=}): the records of a file one by one.
function Reader:__init(path, opts)
  check_path("tf_record_iterator", path)
  local r = C.tide_record_reader_open(path, compression_of("tf_record_iterator", opts))
  if r == nil then binding.raise() end
  self._r = binding.owned(r, C.tide_record_reader_close)
  self.path = path
end

local data_ptr = ffi.new("const uint8_t *[1]")
local len_ptr = ffi.new("size_t[1]")

-- next(): the next record as a Lua string, or nil at the end; a corrupt or
-- truncated record is an error naming the file and its byte offset.
function Reader:next()
  local r = self._r.p
  if r == nil then return nil end
  local rc = C.tide_record_reader_next(r, data_ptr, len_ptr)
  if rc == 1 then return ffi.string(data_ptr[0], len_ptr[0]) end
  if rc == 0 then
    self:close()
    return nil
  end
  binding.raise()
end

-- The byte offset (of the uncompressed data) where the next record starts.
function Reader:offset()
  local r = self._r.p
  return r ~= nil and tonumber(C.tide_record_reader_offset(r)) or nil
end

-- close(): lets the file go (also done at the end and on collection).
function Reader:close()
  self._r.close()
end

-- tf_record_iterator(path, {compression_type=}): an iterator over the records
-- of path as Lua strings, for a generic `for`: `for rec in tf_record_iterator(p) do`.
function M.tf_record_iterator(path, opts)
  local reader = Reader(path, opts)
  return function() return reader:next() end
end

return M
