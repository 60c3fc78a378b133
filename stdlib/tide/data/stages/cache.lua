-- stdlib/tide/data/stages/cache.lua — ds:cache(filename): the first complete
-- pass kept in memory or a file, later passes replay it (C: tide_dataset_cache).
local binding = require "tide.binding"
local cache_file = require "tide.data.cache_file"
local stage = require "tide.data.stage"

local C = binding.C

-- ds:cache(filename): the first complete pass is kept (in memory, or with a
-- filename in that file, written atomically) and later passes replay it; an
-- existing cache file is read without running the input. A pass that stops
-- early keeps nothing and warns once, naming the fix.
local function cache(self, filename)
  stage.no_datasets("cache", self)
  if filename ~= nil and type(filename) ~= "string" then
    binding.error("cache: the filename must be a string (or nothing, for a memory cache), got " .. type(filename))
  end
  if filename == "" then filename = nil end
  local ds = stage.derive(self, "cache", { store = {}, filename = filename })
  ds.card = self:cardinality()
  return ds
end

local s = { copyable = false } -- (kernels/data/template.c copies no cache stage for each element)

-- The memory store or file lives with the description (kernels/data/cache.c).
function s.c(ds, input)
  return C.tide_dataset_cache(input, ds.filename, #ds.specs, cache_file.dtype_codes(ds.specs))
end

function s.lua(ds, open)
  local file = ds.filename
  if file and cache_file.exists(file) then return cache_file.reader(file, ds.specs) end
  if not file and ds.store.complete then
    local i = 0
    local elems = ds.store.elems
    return function()
      i = i + 1
      return elems[i]
    end
  end
  if file then cache_file.release_dropped { file } end
  local writer = file and cache_file.writer(file, ds.specs)
  local ok, nextf, close = pcall(open, ds.input)
  if not ok then
    if writer then writer.abort() end
    error(nextf, 0)
  end
  local elems, finished = {}, false
  local function partial()
    if finished then return end
    finished = true
    if writer then writer.abort() end
    if close then close() end
    cache_file.warn_partial()
  end
  local dropped = false -- a file cache whose pass hit an error keeps nothing
  return function()
    if finished then return nil end
    local okf, flat = pcall(nextf)
    if okf and flat ~= nil and writer then
      local okw, err = pcall(writer.write, flat)
      if not okw then okf, flat = false, err end
    end
    if not okf then
      if writer then writer.abort(); writer, dropped = nil, true end
      error(flat, 0)
    end
    if flat == nil then
      finished = true
      if writer then writer.finish()
      elseif not dropped and not ds.store.complete then ds.store.elems, ds.store.complete = elems, true end -- the first to end wins (TF)
      return nil
    end
    if not file then elems[#elems + 1] = flat end
    return flat
  end, partial
end

return { methods = { cache = cache }, stages = { cache = s } }
