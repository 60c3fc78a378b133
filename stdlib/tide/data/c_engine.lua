-- stdlib/tide/data/c_engine.lua — datasets whose stages all run in C
-- (kernels/data): building their descriptions (each stage its own part) and reading passes.
local binding = require "tide.binding"
local stage = require "tide.data.stage"
local cache_file = require "tide.data.cache_file"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local M = {}

-- True when ds's own stage (not its inputs) runs in C (its stage module says).
local function stage_ok(ds) return stage.of(ds).in_c(ds) end
M.supports_stage = stage_ok

-- True when every stage of ds runs in C (memoized). The Lua engine runs ds
-- otherwise (data/lua_engine.lua's open_input makes that choice).
function M.supports(ds)
  local s = rawget(ds, "_c_ok")
  if s ~= nil then return s end
  s = stage_ok(ds)
  if s and ds.input then s = M.supports(ds.input) end
  for _, d in ipairs(s and ds.inputs or {}) do s = s and M.supports(d) end
  ds._c_ok = s
  return s
end

-- ds's C description (made once, freed with ds): its stage makes it over
-- its input's.
local function handle(ds)
  local h = rawget(ds, "_c")
  if h then return h end
  local s = stage.of(ds)
  if not s.c then binding.error("tide.data: a '" .. ds.kind .. "' stage has no C description (it runs in Lua)") end
  h = s.c(ds, ds.input and handle(ds.input), handle)
  if h == nil then binding.raise() end
  h = ffi.gc(h, C.tide_dataset_free)
  -- in an interleave's template: the graph's captures of the function's element (data/interleave_fn.lua)
  if ds.cap_first and C.tide_dataset_bind_captures(h, ds.cap_first) ~= 0 then binding.raise() end
  ds._c = h
  return h
end
M.handle = handle

-- AUTOTUNE's settings in ds's stages as the last pass left them (the next
-- pass starts there), top down: {stage = "map", parallel = n} (0: the map
-- runs in its caller's thread) and {stage = "prefetch", depth = n}, for each
-- stage given AUTOTUNE whose C description exists (a pass has been made).
function M.autotune_state(ds)
  local out = {}
  local function walk(d)
    local h = rawget(d, "_c")
    local v = h and tonumber(C.tide_dataset_autotuned(h)) or -1
    if v >= 0 then
      out[#out + 1] = d.kind == "map" and { stage = "map", parallel = v } or { stage = "prefetch", depth = v }
    end
    if d.input then walk(d.input) end
    for _, i in ipairs(d.inputs or {}) do walk(i) end
  end
  local auto = rawget(ds, "_auto_prefetch")
  walk(auto or ds)
  return out
end

-- Passes whose threads may still run a map graph keep their dataset (and
-- through it the traced functions, graphs and variables they read) here
-- until the pass is freed: the collector may otherwise free a graph in the
-- same cycle as the iterator whose threads run it.
local live = {}

-- The file names of ds's file caches (memoized).
local function cache_files(ds, out)
  local top = out == nil
  if top and rawget(ds, "_cache_files") then return ds._cache_files end
  out = out or {}
  if ds.kind == "cache" and ds.filename then out[#out + 1] = ds.filename end
  if ds.input then cache_files(ds.input, out) end
  for _, d in ipairs(ds.inputs or {}) do cache_files(d, out) end
  if top then ds._cache_files = out end
  return out
end

-- A pass over ds: next() gives the next element's components or nil; close()
-- ends it early (the collector ends a forgotten one).
function M.open(ds)
  local files = cache_files(ds)
  if files[1] then cache_file.release_dropped(files) end
  local h = handle(ds)
  local it = C.tide_dataset_iterate(h)
  if it == nil then binding.raise() end
  local token = {}
  live[token] = ds
  local freed = false
  local function free(p) -- once: the finalizer and close() may both come (lua_close runs every finalizer)
    if freed then return end
    freed = true
    C.tide_data_iterator_free(p)
    live[token] = nil
    cache_file.note_c_partials() -- a cache stage that stopped early warns (once)
  end
  it = ffi.gc(it, free)
  local n = #ds.specs
  local outs = ffi.new("tide_tensor *[?]", n)
  local endp = ffi.new("int[1]")
  local function close()
    if it ~= nil and not freed then
      ffi.gc(it, nil)
      free(it)
      it = nil
    end
  end
  local function nextf()
    if it == nil or freed then return nil end
    local flat = {}
    for i = 1, n do
      flat[i] = Tensor()
      outs[i - 1] = flat[i]
    end
    if C.tide_data_iterator_next(it, n, outs, endp) ~= 0 then binding.raise() end
    if endp[0] ~= 0 then
      close()
      return nil
    end
    for i = 1, n do binding.finish_handed(flat[i]) end -- a collection it is due goes to the consumer's work
    return flat
  end
  return nextf, close
end

return M
