-- stdlib/tide/data/cache_file.lua — ds:cache(filename)'s file: elements in
-- TFRecord framing (CRC-checked), written atomically, read back (docs/data.md).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local shape_ops = require "tide.ops.shape"
local convert = require "tide.convert"

local ffi, C = binding.ffi, binding.C
local fmt = string.format
local M = {}

-- The file is a TFRecord file (u64 length, masked CRC32C, data, masked CRC32C)
-- of: a header record "tide.data.cache 1\n<n>\n" then one line per component,
-- "<dtype name>\n"; one record per element; an end record
-- "tide.data.cache end <count>". Each element record holds, per component,
-- u32 rank, rank x i64 dims, then the values: raw little-endian bytes for
-- numbers and bools, and for strings, per string a u64 length and its bytes.
local MAGIC = "tide.data.cache 1\n"
local END = "tide.data.cache end "

local u32 = ffi.typeof("uint32_t[1]")
local i64buf = ffi.typeof("int64_t[?]")
local u64 = ffi.typeof("uint64_t[1]")
local len_out = ffi.new("int64_t[1]")
local STRING = C.TIDE_STRING

local function header(specs)
  local parts = { MAGIC, #specs, "\n" }
  for _, s in ipairs(specs) do parts[#parts + 1] = s.dtype .. "\n" end
  return table.concat(parts)
end

-- One element (a flat list of tensors) as the bytes of its record.
local function encode(flat)
  local parts = {}
  for _, x in ipairs(flat) do
    x = shape_ops.contiguous(x)
    local rank = x.ndim
    local dims = i64buf(math.max(rank, 1))
    for d = 0, rank - 1 do dims[d] = x.dims[d] end
    parts[#parts + 1] = ffi.string(u32(rank), 4)
    parts[#parts + 1] = ffi.string(dims, 8 * rank)
    local n = tonumber(x.nelem)
    if x.dt == STRING then
      for i = 0, n - 1 do
        local p = C.tide_string_at(x.data, i, len_out)
        local len = tonumber(len_out[0])
        parts[#parts + 1] = ffi.string(u64(len), 8)
        parts[#parts + 1] = len > 0 and ffi.string(p, len) or ""
      end
    elseif n > 0 then
      parts[#parts + 1] = ffi.string(x.data, n * dtype.size[x.dt])
    end
    binding.keep_alive(x) -- x.data was read above
  end
  return table.concat(parts)
end

-- An owned C handle (record reader or writer) closed exactly once: by
-- close(), or by the collector. At lua_close every finalizer runs in no set
-- order, so a pass's own close (from its __gc) may come after the handle's:
-- both go through `state`, and the second does nothing.
local function owned(ptr, close_c)
  local state = { p = ptr }
  state.holder = ffi.gc(ptr, function(p)
    if state.p ~= nil then state.p = nil; close_c(p) end
  end)
  function state.close()
    local p = state.p
    if p == nil then return 0 end
    state.p = nil
    ffi.gc(state.holder, nil)
    return close_c(p)
  end
  return state
end

-- The message of the error tide's C side just set, without a Lua position.
local function c_error()
  local _, err = pcall(binding.raise)
  return (tostring(err):gsub("^[^\n]-:%d+: ", ""))
end

-- A writer of path: the elements go to a temporary file beside it, renamed
-- into place by finish() only after a complete pass; abort() removes it.
function M.writer(path, specs)
  local tmp = fmt("%s.tmp-%d-%d", path, os.time(), math.random(0, 2 ^ 30))
  local ptr = C.tide_record_writer_open(tmp, "")
  if ptr == nil then binding.error("cache: cannot write the cache file: " .. c_error()) end
  local w = owned(ptr, C.tide_record_writer_close)
  local function put(rec)
    if C.tide_record_writer_write(w.p, rec, #rec) ~= 0 then binding.error("cache: " .. c_error()) end
  end
  local ok, err = pcall(put, header(specs))
  if not ok then
    w.close()
    os.remove(tmp)
    error(err, 0)
  end
  local count, done = 0, false
  local self = {}
  function self.write(flat)
    put(encode(flat))
    count = count + 1
  end
  function self.finish()
    if done then return end
    done = true
    local ok, err = pcall(put, END .. count)
    if ok and w.close() ~= 0 then ok, err = false, "cache: " .. c_error() end
    if not ok then
      w.close()
      os.remove(tmp)
      error(err, 0)
    end
    local renamed, why = os.rename(tmp, path)
    if not renamed then
      os.remove(tmp)
      binding.error(fmt("cache: could not move the finished cache file into place at %s: %s", path, tostring(why)))
    end
  end
  function self.abort()
    if done then return end
    done = true
    w.close()
    os.remove(tmp)
  end
  return self
end

-- True when path names an existing file.
function M.exists(path)
  local f = io.open(path, "rb")
  if f then f:close(); return true end
  return false
end

-- The element (a flat list of tensors) in record `rec`, read at byte offset
-- `at` of the cache file (reader state r); an error names the file and offset.
local function decode(r, rec, at)
  local pos, n = 0, #rec
  local base = ffi.cast("const uint8_t *", rec)
  local function corrupt(why)
    binding.error(fmt("cache: the cache file %s is corrupt: the element record at byte offset %d %s (delete " ..
      "the file to rebuild the cache)", r.path, at, why))
  end
  local function need(k)
    if pos + k > n then corrupt(fmt("ends after %d bytes, but more data is due", n)) end
  end
  local flat = {}
  for k, dt in ipairs(r.dtypes) do
    need(4)
    local rank = ffi.cast("const uint32_t *", base + pos)[0]
    pos = pos + 4
    if rank > C.TIDE_MAX_DIMS then corrupt(fmt("gives component %d rank %d", k - 1, rank)) end
    need(8 * rank)
    local shape, count = {}, 1
    local dp = ffi.cast("const int64_t *", base + pos)
    for d = 1, rank do
      local v = dp[d - 1]
      if v < 0 or v > 2 ^ 40 then corrupt(fmt("gives component %d the dim %s", k - 1, tostring(tonumber(v)))) end
      shape[d] = tonumber(v)
      count = count * shape[d]
    end
    pos = pos + 8 * rank
    -- every value takes at least a byte (a string its 8-byte length): check before allocating
    local least = dt == STRING and 8 or dtype.size[dt]
    if count * least > n - pos then corrupt(fmt("gives component %d %d values, more than it holds", k - 1, count)) end
    local t = convert.empty(dt, shape, "cache")
    if dt == STRING then
      for i = 0, count - 1 do
        need(8)
        local len = ffi.cast("const uint64_t *", base + pos)[0]
        pos = pos + 8
        if len > n - pos then corrupt(fmt("holds a string of %s bytes past its end", tostring(len))) end
        len = tonumber(len)
        if C.tide_string_set(t, i, base + pos, len) ~= 0 then binding.raise() end
        pos = pos + len
      end
    else
      local bytes = count * dtype.size[dt]
      need(bytes)
      if bytes > 0 then ffi.copy(ffi.cast("void *", t.data), base + pos, bytes) end
      pos = pos + bytes
    end
    binding.keep_alive(t)
    flat[k] = t
  end
  if pos ~= n then corrupt(fmt("has %d bytes left over after the element", n - pos)) end
  return flat
end

-- A pass over the cache file at path: nextf, close. Checks that its
-- components have the dtypes of specs; a corrupt file is an error naming
-- the file and the byte offset.
local rec_data = ffi.new("const uint8_t *[1]")
local rec_len = ffi.new("size_t[1]")

function M.reader(path, specs)
  local ptr = C.tide_record_reader_open(path, "")
  if ptr == nil then binding.error("cache: cannot read the cache file: " .. c_error()) end
  local rd = owned(ptr, C.tide_record_reader_close)
  local r = { path = path, dtypes = {} }
  -- the next record as a Lua string, nil at the end; a bad one is an error naming the offset
  local function next_record()
    local rc = C.tide_record_reader_next(rd.p, rec_data, rec_len)
    if rc == 1 then return ffi.string(rec_data[0], rec_len[0]) end
    if rc == 0 then return nil end
    local msg = c_error()
    rd.close()
    binding.error(fmt("cache: the cache file %s cannot be read: %s (delete it to rebuild the cache)", path, msg))
  end
  local head = next_record()
  if head == nil or head:sub(1, #MAGIC) ~= MAGIC then
    rd.close()
    binding.error(fmt("cache: %s is not a tide cache file (its first record at byte offset 0 is not a cache " ..
      "header); delete it or choose another filename", path))
  end
  local lines = {}
  for line in head:sub(#MAGIC + 1):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local ncomp = tonumber(lines[1])
  if ncomp ~= #specs or #lines ~= ncomp + 1 then
    rd.close()
    binding.error(fmt("cache: the cache file %s holds elements of %s components, but the dataset's have %d " ..
      "(a cache of another pipeline? delete the file)", path, tostring(ncomp), #specs))
  end
  for k = 1, ncomp do
    local name = lines[k + 1]
    if name ~= specs[k].dtype then
      rd.close()
      binding.error(fmt("cache: the cache file %s holds %s in component %d, but the dataset has %s " ..
        "(a cache of another pipeline? delete the file)", path, name, k - 1, specs[k].dtype))
    end
    r.dtypes[k] = dtype.code(name, "cache")
  end
  local count, finished = 0, false
  local function nextf()
    if finished then return nil end
    local at = tonumber(C.tide_record_reader_offset(rd.p))
    finished = true -- until this record is read whole
    local rec = next_record()
    if rec == nil then
      rd.close()
      binding.error(fmt("cache: the cache file %s ends at byte offset %d without its end record (it is " ..
        "incomplete; delete it to rebuild the cache)", path, at))
    end
    if rec:sub(1, #END) == END then
      rd.close()
      if tonumber(rec:sub(#END + 1)) ~= count then
        binding.error(fmt("cache: the cache file %s is corrupt: its end record at byte offset %d counts %s " ..
          "elements, but %d came before it", path, at, rec:sub(#END + 1), count))
      end
      return nil
    end
    local ok, flat = pcall(decode, r, rec, at)
    if not ok then rd.close(); error(flat, 0) end
    count = count + 1
    finished = false
    return flat
  end
  return nextf, function() finished = true; rd.close() end
end

return M
