-- stdlib/tide/data/c_engine.lua — datasets whose stages all run in C
-- (kernels/data): building their tide_dataset descriptions and reading passes.
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local cache_file = require "tide.data.cache_file"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local M = {}

local DTYPE_INT64 = require("tide.dtype").codes.int64

-- Stages the engine runs; a map or filter only when traced; unbatch only of
-- dense elements (a SparseTensor's rows are sliced in Lua: sparse_elements.unbatch).
local KINDS = { slices = true, sparse_slices = true, range = true, map = true, filter = true, batch = true,
  shuffle = true, take = true,
  skip = true, ["repeat"] = true, prefetch = true, c_source = true, zip = true, concatenate = true, enumerate = true,
  padded_batch = true, param = true, interleave = true, cache = true, shard = true, unbatch = true }

-- True when ds's own stage (not its inputs) runs in C.
local function stage_ok(ds)
  local s = KINDS[ds.kind] == true
  if s and (ds.kind == "map" or ds.kind == "filter") and not ds.compiled then s = false end
  if s and ds.kind == "interleave" and not ds.captured then s = false end
  if s and ds.kind == "unbatch" and structure.has_sparse(ds.input.template) then s = false end
  if s and ds.kind == "padded_batch" then -- numbers and bools (a padding string stays in Lua)
    for _, sp in ipairs(ds.specs) do if sp.dtype == "string" then s = false end end
  end
  return s
end
M.supports_stage = stage_ok

-- True when every stage of ds runs in C (memoized).
function M.supports(ds)
  local s = rawget(ds, "_c_ok")
  if s ~= nil then return s end
  s = stage_ok(ds)
  if s and ds.input then s = M.supports(ds.input) end
  for _, d in ipairs(s and ds.inputs or {}) do s = s and M.supports(d) end
  ds._c_ok = s
  return s
end

local PARAM_KINDS = { slices = C.TIDE_DATA_PARAM_SLICES, range = C.TIDE_DATA_PARAM_RANGE, files = C.TIDE_DATA_PARAM_FILES }

-- ds's C description (made once, freed with ds).
local function handle(ds)
  local h = rawget(ds, "_c")
  if h then return h end
  local k = ds.kind
  local input = ds.input and handle(ds.input)
  if k == "slices" then
    local n = #ds.tensors
    local arr = ffi.new("const tide_tensor *[?]", n)
    for i, t in ipairs(ds.tensors) do arr[i - 1] = t end
    h = C.tide_dataset_slices(n, arr)
  elseif k == "sparse_slices" then -- 1 in roles where a SparseTensor's indices are (kernels/data/sparse_slices.c)
    local n = #ds.tensors
    local arr, roles = ffi.new("const tide_tensor *[?]", n), ffi.new("unsigned char[?]", n)
    for i, t in ipairs(ds.tensors) do arr[i - 1], roles[i - 1] = t, ds.roles[i] end
    h = C.tide_dataset_sparse_slices(n, arr, roles)
  elseif k == "range" then
    h = C.tide_dataset_range(ds.start, ds.stop, ds.step, DTYPE_INT64)
  elseif k == "param" then -- a template leaf: interleave's node makes its source of each element
    local proto = ds.make_proto and ds.make_proto()
    if ds.make_proto and proto == nil then binding.raise() end
    h = C.tide_dataset_param(PARAM_KINDS[ds.source], ds.first, #ds.args, proto)
    if proto ~= nil then C.tide_dataset_free(proto) end -- the leaf holds it
  elseif k == "interleave" then
    local cap = ds.captured
    h = C.tide_dataset_interleave(input, cap.graph, handle(cap.inner), ds.cycle, ds.block,
      ds.parallel > 1 and ds.parallel or 0, ds.deterministic and 1 or 0)
  elseif k == "c_source" then
    h = ds.make_source()
  elseif k == "map" then
    local p = ds.parallel
    h = C.tide_dataset_map(input, ds.compiled.graph, p == nil and 0 or p, ds.deterministic and 1 or 0)
  elseif k == "filter" then
    h = C.tide_dataset_filter(input, ds.compiled.graph)
  elseif k == "zip" or k == "concatenate" then
    local n = #ds.inputs
    local arr = ffi.new("tide_dataset *[?]", n)
    for i, d in ipairs(ds.inputs) do arr[i - 1] = handle(d) end
    h = (k == "zip" and C.tide_dataset_zip or C.tide_dataset_concatenate)(n, arr)
  elseif k == "padded_batch" then
    local nc, MAX = #ds.specs, C.TIDE_MAX_DIMS
    local shapes, values = ffi.new("int64_t[?]", nc * MAX, -1), ffi.new("uint64_t[?]", nc)
    for c = 1, nc do
      for d, w in ipairs(ds.shapes[c] or {}) do
        if type(w) == "number" and w >= 0 then shapes[(c - 1) * MAX + d - 1] = w end
      end
      local v = ds.values[c]
      if v ~= nil then
        local t = convert.tensor(v, ds.input.specs[c].dtype, "padded_batch")
        if tonumber(t.nelem) ~= 1 then
          binding.error(string.format("padded_batch: padding_values for component %d must be a scalar, got %d values",
            c, tonumber(t.nelem)))
        end
        t = t:contiguous()
        ffi.copy(values + (c - 1), t.data, tonumber(C.tide_dtype_size(t.dt)))
      end
    end
    h = C.tide_dataset_padded_batch(input, ds.n, ds.drop and 1 or 0, shapes, values)
  elseif k == "enumerate" then -- TF's own form: zip{range(start, int64 max), ds}
    local counter = C.tide_dataset_range(ds.start, 9223372036854775807LL, 1, DTYPE_INT64)
    if counter == nil then binding.raise() end
    h = C.tide_dataset_zip(2, ffi.new("tide_dataset *[2]", counter, input))
    C.tide_dataset_free(counter) -- the zip holds it
  elseif k == "cache" then -- the memory store or file lives with h (kernels/data/cache.c)
    h = C.tide_dataset_cache(input, ds.filename, #ds.specs, cache_file.dtype_codes(ds.specs))
  elseif k == "batch" then
    local sparse = structure.sparse_nodes(ds.input.template)
    if #sparse == 0 then
      h = C.tide_dataset_batch(input, ds.n, ds.drop and 1 or 0)
    else -- where each SparseTensor's indices are (kernels/data/sparse_batch.c)
      local roles = ffi.new("unsigned char[?]", #ds.input.specs)
      for _, node in ipairs(sparse) do roles[node.items[1].index - 1] = 1 end
      h = C.tide_dataset_sparse_batch(input, ds.n, ds.drop and 1 or 0, roles)
    end
  elseif k == "shuffle" then
    h = C.tide_dataset_shuffle(input, ds.buffer, ds.seed, ds.reshuffle and 1 or 0)
  elseif k == "take" then
    h = C.tide_dataset_take(input, ds.count)
  elseif k == "skip" then
    h = C.tide_dataset_skip(input, ds.count)
  elseif k == "repeat" then
    h = C.tide_dataset_repeat(input, ds.count)
  elseif k == "prefetch" then
    h = C.tide_dataset_prefetch(input, ds.n)
  elseif k == "shard" then
    h = C.tide_dataset_shard(input, ds.num, ds.index)
  elseif k == "unbatch" then
    h = C.tide_dataset_unbatch(input)
  end
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

-- A pass over ds: next() gives the next element's components or nil; close()
-- ends it early (the collector ends a forgotten one).
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
