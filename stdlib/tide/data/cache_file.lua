-- stdlib/tide/data/cache_file.lua — ds:cache(filename)'s file for the Lua
-- engine's cache stage (kernels/data/cache_file.c encodes, frames, fsyncs and
-- checks it; format in tide/data_cache.h), and the once-only partial-pass warning.
local binding = require "tide.binding"
local dtype = require "tide.dtype"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local M = {}

local warned = false

-- Warn once per process that a cache pass stopped early (TF's warning), naming the fix.
function M.warn_partial()
  if warned then return end
  warned = true
  io.stderr:write("tide.data: a pass over a cached dataset stopped before its end, so the cache was discarded " ..
    "(nothing partial is kept). If you meant to cache only some elements, write ds:take(k):cache() " ..
    "instead of ds:cache():take(k).\n")
end

-- Passes of C cache stages that stopped early: warn when the count grew since the last look.
local c_partials_seen = 0
function M.note_c_partials()
  local n = tonumber(C.tide_data_cache_partial_passes())
  if n ~= c_partials_seen then
    c_partials_seen = n
    M.warn_partial()
  end
end

-- True when path names an existing file.
M.exists = require("tide.file").exists

-- Before a pass that may write the cache files `paths`: a lock left by a
-- pass of this program that was dropped (a `break` out of its loop) but not
-- yet collected goes with a full collection, so that the dropped pass does
-- not make the next one an error for a second writer. A pass still in use
-- keeps its lock (and the new pass gets TF's error).
function M.release_dropped(paths)
  for _, p in ipairs(paths) do
    if not M.exists(p) and M.exists(p .. ".lock") then
      -- a JIT trace may hold a dropped pass's closure as a constant: flush
      -- the traces first (rare: only while such a lock exists)
      if jit then jit.flush() end
      collectgarbage(); collectgarbage()
      return
    end
  end
end

-- The specs' dtype codes as an int32_t array.
function M.dtype_codes(specs)
  local codes = ffi.new("int32_t[?]", #specs)
  for i, s in ipairs(specs) do codes[i - 1] = dtype.code(s.dtype, "cache") end
  return codes
end

-- A writer of path: elements go to a temporary file beside it, renamed into
-- place (fsynced) by finish() only after a complete pass; abort() removes it.
function M.writer(path, specs)
  local n = #specs
  local ptr = C.tide_cache_writer_open(path, n, M.dtype_codes(specs))
  if ptr == nil then binding.raise() end
  local w = binding.owned(ptr, C.tide_cache_writer_abort)
  local elem = ffi.new("const tide_tensor *[?]", n)
  local self = {}
  function self.write(flat)
    for i = 1, n do elem[i - 1] = flat[i] end
    local st = C.tide_cache_writer_write(w.p, n, elem)
    for i = 1, n do binding.keep_alive(flat[i]) end -- read through elem above
    if st ~= 0 then binding.raise() end
  end
  function self.finish()
    local p = w.take()
    if p == nil then return end
    if C.tide_cache_writer_finish(p) ~= 0 then binding.raise() end -- frees the writer either way
  end
  self.abort = w.close
  return self
end

-- A pass over the cache file at path: nextf, close. Its components must have
-- the dtypes of specs; a corrupt file is an error naming the file and the byte offset.
function M.reader(path, specs)
  local n = #specs
  local ptr = C.tide_cache_reader_open(path, n, M.dtype_codes(specs))
  if ptr == nil then binding.raise() end
  local rd = binding.owned(ptr, C.tide_cache_reader_close)
  local outs = ffi.new("tide_tensor *[?]", n)
  local endp = ffi.new("int[1]")
  local function nextf()
    if rd.p == nil then return nil end
    local flat = {}
    for i = 1, n do
      flat[i] = Tensor()
      outs[i - 1] = flat[i]
    end
    if C.tide_cache_reader_next(rd.p, n, outs, endp) ~= 0 then
      rd.close()
      binding.raise()
    end
    if endp[0] ~= 0 then
      rd.close()
      return nil
    end
    for i = 1, n do binding.finish_handed(flat[i]) end
    return flat
  end
  return nextf, rd.close
end

return M
