-- stdlib/tide/models/idx.lua — a private helper for the examples and specs:
-- read an IDX file (MNIST's format, optionally gzipped, through zlib) into
-- a uint8 tensor. tide.io.read_idx will replace it when kernels/io lands.
local binding = require "tide.binding"
local create = require "tide.ops.create"

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

-- The whole content of path (gunzipped when it is gzip data).
local function read_all(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local magic = f:read(2)
  if magic ~= "\031\139" then
    local rest = f:read("*a")
    f:close()
    return (magic or "") .. (rest or "")
  end
  f:close()
  local gz = z().gzopen(path, "rb")
  if gz == nil then return nil, "gzopen failed" end
  local chunks, buf = {}, ffi.new("uint8_t[?]", 1048576)
  while true do
    local n = z().gzread(gz, buf, 1048576)
    if n < 0 then z().gzclose(gz); return nil, "corrupt gzip data" end
    if n == 0 then break end
    chunks[#chunks + 1] = ffi.string(buf, n)
  end
  z().gzclose(gz)
  return table.concat(chunks)
end

-- read_idx(path): the IDX file's data as a uint8 tensor of its shape.
function M.read_idx(path)
  local data, err = read_all(path)
  if not data then binding.error(string.format("read_idx: cannot read '%s': %s", path, tostring(err))) end
  if #data < 4 or data:byte(1) ~= 0 or data:byte(2) ~= 0 or data:byte(3) ~= 8 then
    binding.error(string.format("read_idx: '%s' is not an IDX file of unsigned bytes (its magic number is wrong)", path))
  end
  local ndim = data:byte(4)
  local dims, count = {}, 1
  for i = 1, ndim do
    local p = 4 + (i - 1) * 4
    local b1, b2, b3, b4 = data:byte(p + 1, p + 4)
    if not b4 then binding.error(string.format("read_idx: '%s' is truncated in its header", path)) end
    dims[i] = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    count = count * dims[i]
  end
  local start = 4 + ndim * 4
  if #data - start ~= count then
    binding.error(string.format("read_idx: '%s' holds %d bytes of data, but its header says %d", path, #data - start,
      count))
  end
  return create.from_buffer(data:sub(start + 1), dims, "uint8")
end

return M
