-- stdlib/tide/io/idx.lua — tide.io.read_idx: an IDX file (MNIST's format,
-- plain or gzipped, read through zlib) into a uint8 tensor of its shape.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"

local ffi = binding.ffi
local M = {}

pcall(ffi.cdef, [[
  typedef struct gzFile_s *gzFile;
  gzFile gzopen(const char *path, const char *mode);
  int gzread(gzFile file, void *buf, unsigned int len);
  int gzclose(gzFile file);
]])

local zlib
local function z()
  if zlib == nil then
    local ok, lib = pcall(ffi.load, "z")
    if not ok then ok, lib = pcall(ffi.load, "libz.so.1") end
    if not ok then binding.error("read_idx: zlib (libz.so.1) is needed to read .gz files; install zlib1g") end
    zlib = lib
  end
  return zlib
end

-- gzread until `len` bytes are in buf or the data ends; the count read.
local function read_into(gz, buf, len)
  local got = 0
  while got < len do
    local n = z().gzread(gz, buf + got, math.min(len - got, 1073741824))
    if n < 0 then return nil end
    if n == 0 then break end
    got = got + n
  end
  return got
end

-- read_idx(path): the IDX file's data as a uint8 tensor of its shape. zlib
-- reads plain and gzipped files alike, straight into the tensor's buffer
-- (Fashion-MNIST's training images are 47 MB: no Lua string copies of them).
function M.read_idx(path)
  local f, err = io.open(path, "rb")
  if not f then binding.error(string.format("read_idx: cannot read '%s': %s", path, tostring(err))) end
  f:close()
  local gz = z().gzopen(path, "rb")
  if gz == nil then binding.error(string.format("read_idx: cannot read '%s': gzopen failed", path)) end
  local ok, result = pcall(function()
    local head = ffi.new("uint8_t[4]")
    local n = read_into(gz, head, 4)
    if n == nil then binding.error(string.format("read_idx: '%s' holds corrupt gzip data", path)) end
    if n < 4 or head[0] ~= 0 or head[1] ~= 0 or head[2] ~= 8 then
      binding.error(string.format("read_idx: '%s' is not an IDX file of unsigned bytes (its magic number is wrong)",
        path))
    end
    local ndim = head[3]
    local dims, count = {}, 1
    local b = ffi.new("uint8_t[4]")
    for i = 1, ndim do
      if read_into(gz, b, 4) ~= 4 then binding.error(string.format("read_idx: '%s' is truncated in its header", path)) end
      dims[i] = ((b[0] * 256 + b[1]) * 256 + b[2]) * 256 + b[3]
      count = count * dims[i]
    end
    local t = convert.empty(dtype.code("uint8"), dims, "read_idx")
    local got = count > 0 and read_into(gz, ffi.cast("uint8_t *", t.data), count) or 0
    if got == nil then binding.error(string.format("read_idx: '%s' holds corrupt gzip data", path)) end
    local extra = read_into(gz, b, 4) or 0
    if got ~= count or extra > 0 then
      binding.error(string.format("read_idx: '%s' holds %s bytes of data, but its header says %d", path,
        got ~= count and tostring(got) or "more", count))
    end
    return t
  end)
  z().gzclose(gz)
  if not ok then error(result, 0) end
  return result
end

return M
