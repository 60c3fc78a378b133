-- stdlib/tide/data/lua_engine.lua — the stages that need the Lua state
-- (generators, untraced functions, interleave, cache, zip, ...) and Lua
-- versions of the rest for when an input runs here; C subtrees below run in C.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local shape_ops = require "tide.ops.shape"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local cache_file = require "tide.data.cache_file"
local sparse_elements = require "tide.data.sparse_elements"

local ffi, C = binding.ffi, binding.C
local None = spec.None
local pack = function(...) return { n = select("#", ...), ... } end
local M = {}

local open -- open(ds): nextf, close of a pass over ds (C or Lua)
local function dataset_mod() return require "tide.data.dataset" end
local function c_engine() return require "tide.data.c_engine" end

-- An element of fn's results, checked against a template and specs.
local function results_flat(what, index, template, res)
  local t, leaves = structure.flatten_results(what, res.n, unpack(res, 1, res.n))
  if template and not structure.same(t, template) then
    binding.error(string.format("%s: element %d: the function returned a different structure than it did for " ..
      "the first element", what, index))
  end
  return leaves, t
end

-- Call fn on an element in Lua; its results or an error naming the element.
local function call_eager(what, fn, template, flat, index)
  local res = pack(pcall(fn, structure.values(template, flat)))
  if not res[1] then
    binding.error(string.format("%s: the function failed on element %d: %s", what, index, tostring(res[2])))
  end
  return pack(unpack(res, 2, res.n))
end

-- The template and specs of an untraceable map's results: its result on
-- the first element (dims unknown: later elements may differ).
function M.probe_map(ds)
  local nextf, close = open(ds.input)
  local flat = nextf()
  if close then close() end
  if flat == nil then return ds.input.template, ds.input.specs end
  local leaves, t = results_flat("map", 0, nil, call_eager("map", ds.fn, ds.input.template, flat, 0))
  local specs = {}
  for i, x in ipairs(leaves) do
    local dims = {}
    for d = 1, x.ndim do dims[d] = None end
    specs[i] = spec.TensorSpec(dims, structure.dtype_name(x))
  end
  return t, specs
end

-- The dataset fn makes of an element (checked).
local function inner_dataset(ds, flat, index)
  local what = ds.what or "interleave"
  local res = call_eager(what, ds.fn, ds.input.template, flat, index)
  local inner = res[1]
  if not dataset_mod().is_dataset(inner) then
    binding.error(string.format("%s: the function must return a tide.data.Dataset, got %s (element %d)", what,
      type(inner), index))
  end
  return inner
end

-- interleave's element structure: that of the dataset made from the first element.
function M.probe_interleave(ds)
  local nextf, close = open(ds.input)
  local flat = nextf()
  if close then close() end
  if flat == nil then return ds.input.template, ds.input.specs end
  local inner = inner_dataset(ds, flat, 0)
  return inner.template, inner.specs
end

local readers = {}

function readers.slices(ds)
  local i, n = 0, ds.card
  return function()
    if i >= n then return nil end
    local flat = {}
    for k, t in ipairs(ds.tensors) do flat[k] = t[i] end
    i = i + 1
    return flat
  end
end

function readers.range(ds)
  local v = ds.start
  return function()
    if (ds.step > 0 and v >= ds.stop) or (ds.step < 0 and v <= ds.stop) then return nil end
    local t = convert.tensor(v, "int64", "range")
    v = v + ds.step
    return { t }
  end
end

function readers.generator(ds)
  local it = ds.gen()
  if type(it) ~= "function" then
    binding.error("from_generator: the generator must return an iterator function, got " .. type(it))
  end
  local index = 0
  local dtypes = {}
  for i, s in ipairs(ds.specs) do dtypes[i] = s.dtype end
  return function()
    local v = it()
    if v == nil then return nil end
    local leaves, why = structure.flatten_as(v, ds.template, dtypes, "from_generator")
    if not leaves then
      binding.error(string.format("from_generator: element %d does not fit output_signature: %s", index, why))
    end
    for i, x in ipairs(leaves) do
      local s = ds.specs[i]
      local dims = x.shape
      if not s:accepts(structure.dtype_name(x), dims) then
        binding.error(string.format("from_generator: element %d: component %d is %s %s, but output_signature says %s",
          index, i, structure.dtype_name(x), tostring(x.shape), tostring(s)))
      end
    end
    index = index + 1
    return leaves
  end
end

function readers.map(ds)
  local nextf, close = open(ds.input)
  local index = 0
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local i = index
    index = index + 1
    if ds.compiled then
      local out, err = map_fn.run(ds.compiled, flat)
      if not out then binding.error(string.format("map: the function failed on element %d: %s", i, err)) end
      return out
    end
    return (results_flat("map", i, ds.template, call_eager("map", ds.fn, ds.input.template, flat, i)))
  end, close
end

-- A predicate's verdict on element i (filter, take_while): its traced graph
-- or, untraced, the Lua function; either must give a bool (a scalar tensor
-- or a Lua boolean). Errors name `what` and the element.
function M.predicate(what, ds, flat, i)
  local keep
  if ds.compiled then
    local out, err = map_fn.run(ds.compiled, flat)
    if not out then binding.error(string.format("%s: the predicate failed on element %d: %s", what, i, err)) end
    keep = out[1]
  else
    local res = pack(pcall(ds.fn, structure.values(ds.input.template, flat)))
    if not res[1] then
      binding.error(string.format("%s: the predicate failed on element %d: %s", what, i, tostring(res[2])))
    end
    keep = res[2]
  end
  if binding.istensor(keep) then
    if keep.nelem ~= 1 or structure.dtype_name(keep) ~= "bool" then
      binding.error(string.format("%s: the predicate must return a bool scalar, got %s %s (element %d)", what,
        structure.dtype_name(keep), tostring(keep.shape), i))
    end
    keep = keep:item()
  end
  if type(keep) ~= "boolean" then
    binding.error(string.format("%s: the predicate must return a bool, got %s (element %d)", what, type(keep), i))
  end
  return keep
end

function readers.filter(ds)
  local nextf, close = open(ds.input)
  local index = 0
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      local i = index
      index = index + 1
      if M.predicate("filter", ds, flat, i) then return flat end
    end
  end, close
end

-- True when two tensors have the same dims.
local function same_dims(a, b)
  if a.ndim ~= b.ndim then return false end
  for d = 0, a.ndim - 1 do if a.dims[d] ~= b.dims[d] then return false end end
  return true
end

-- Stack components of elements (a list of flat lists) along a new dim.
local function stack(elems, what)
  local out = {}
  for k = 1, #elems[1] do
    local parts = {}
    local first = elems[1][k]
    for i, e in ipairs(elems) do
      local x = e[k]
      if x.dt ~= first.dt or not same_dims(x, first) then
        binding.error(string.format("%s: cannot batch tensors with different shapes in component %d: the first " ..
          "element is %s %s and element %d is %s %s; use padded_batch for elements of different shapes", what,
          k - 1, structure.dtype_name(first), tostring(first.shape), i - 1, structure.dtype_name(x),
          tostring(x.shape)))
      end
      parts[i] = x
    end
    out[k] = shape_ops.stack(parts, 0)
  end
  return out
end

-- The next batch's elements (up to ds.n) from nextf, or nil when none are
-- left (or, with drop_remainder, too few); st.done notes the input's end.
local function next_elements(ds, nextf, st)
  if st.done then return nil end
  local elems = {}
  while #elems < ds.n do
    local flat = nextf()
    if flat == nil then st.done = true; break end
    elems[#elems + 1] = flat
  end
  if #elems == 0 or (ds.drop and #elems < ds.n) then return nil end
  return elems
end

function readers.batch(ds)
  local nextf, close = open(ds.input)
  local sparse = structure.has_sparse(ds.input.template)
  local st = {}
  return function()
    local elems = next_elements(ds, nextf, st)
    if elems and sparse then return sparse_elements.batch(elems, ds.input.template, "batch", stack) end
    return elems and stack(elems, "batch")
  end, close
end

-- String tensor x padded at the end of each dim to the Lua-list shape
-- target with the string pv (the pad kernel pads numbers only).
local len_out = ffi.new("int64_t[1]")
local function pad_strings(x, target, pv)
  x = shape_ops.contiguous(x)
  local out = convert.empty(C.TIDE_STRING, target, "padded_batch")
  local rank, total = #target, 1
  for d = 1, rank do total = total * target[d] end
  if pv ~= "" then
    for i = 0, total - 1 do if C.tide_string_set(out, i, pv, #pv) ~= 0 then binding.raise() end end
  end
  local strides = {}
  local st = 1
  for d = rank, 1, -1 do strides[d] = st; st = st * target[d] end
  local idx = {}
  for d = 1, rank do idx[d] = 0 end
  local shape = x.shape
  for i = 0, tonumber(x.nelem) - 1 do
    local off = 0
    for d = 1, rank do off = off + idx[d] * strides[d] end
    local p = C.tide_string_at(x.data, i, len_out)
    if len_out[0] == 0 then p = "" end -- "" is stored as NULL
    if C.tide_string_set(out, off, p, len_out[0]) ~= 0 then binding.raise() end
    for d = rank, 1, -1 do -- the next index of x, row-major
      idx[d] = idx[d] + 1
      if idx[d] < shape[d] then break end
      idx[d] = 0
    end
  end
  binding.keep_alive(x) -- x.data was read above
  return out
end

function readers.padded_batch(ds)
  local nextf, close = open(ds.input)
  local st = {}
  return function()
    local elems = next_elements(ds, nextf, st)
    if not elems then return nil end
    local out = {}
    for k = 1, #elems[1] do
      local first = elems[1][k]
      local rank = first.ndim
      local target = {}
      for d = 1, rank do
        local want = ds.shapes[k] and ds.shapes[k][d]
        if want == -1 then want = None end
        if want ~= nil and want ~= None then target[d] = want
        else
          local m = 0
          for _, e in ipairs(elems) do m = math.max(m, e[k].shape[d] or 0) end
          target[d] = m
        end
      end
      local is_string = first.dt == C.TIDE_STRING
      local pv = ds.values[k] or (is_string and "" or 0)
      local parts = {}
      for i, e in ipairs(elems) do
        local x = e[k]
        if x.ndim ~= rank or x.dt ~= first.dt then
          binding.error(string.format("padded_batch: element %d component %d is %s %s but the first is %s %s", i - 1,
            k - 1, structure.dtype_name(x), tostring(x.shape), structure.dtype_name(first), tostring(first.shape)))
        end
        local pads, need = {}, false
        for d = 1, rank do
          local extra = target[d] - x.shape[d]
          if extra < 0 then
            binding.error(string.format("padded_batch: element %d component %d has %d in dim %d, more than the " ..
              "padded shape's %d", i - 1, k - 1, x.shape[d], d - 1, target[d]))
          end
          pads[d] = { 0, extra }
          need = need or extra > 0
        end
        if need then
          x = is_string and pad_strings(x, target, pv) or shape_ops.pad(x, pads, "CONSTANT", pv)
        end
        parts[i] = x
      end
      out[k] = shape_ops.stack(parts, 0)
    end
    return out
  end, close
end

function readers.unbatch(ds)
  local nextf, close = open(ds.input)
  local cur, row, rows = nil, 0, 0
  if structure.has_sparse(ds.input.template) then -- rows of SparseTensors are sliced, not indexed
    return function()
      while cur == nil or row >= rows do
        local flat = nextf()
        if flat == nil then return nil end
        cur = sparse_elements.unbatch(flat, ds.input.template, "unbatch")
        row, rows = 0, #cur
      end
      row = row + 1
      return cur[row]
    end, close
  end
  local index = -1 -- (the C stage, kernels/data/split.c, says the same)
  return function()
    while cur == nil or row >= rows do
      cur = nextf()
      if cur == nil then return nil end
      index = index + 1
      local firsts = {}
      for k, x in ipairs(cur) do
        if x.ndim < 1 then
          binding.error(string.format("unbatch: component %d of element %d is a scalar; every component needs a " ..
            "first dimension", k - 1, index))
        end
        firsts[k] = x.shape[1]
      end
      rows = firsts[1]
      for k = 2, #firsts do
        if firsts[k] ~= rows then
          binding.error(string.format("unbatch: the components of element %d have different first dimensions (%s); " ..
            "each must have the same number of rows", index, table.concat(firsts, ", ")))
        end
      end
      row = 0
    end
    local flat = {}
    for k, x in ipairs(cur) do flat[k] = x[row] end
    row = row + 1
    return flat
  end, close
end

-- TF's shuffle, drawn as kernels/data/transform.c draws (the same order).
function readers.shuffle(ds)
  local nextf, close = open(ds.input)
  local pass = ds.passes
  ds.passes = ds.passes + 1
  local key = C.tide_random_derive_key(ds.seed, ds.reshuffle and pass or 0)
  local counter = 0ULL
  local r = ffi.new("uint32_t[4]")
  local buf, count, filled, in_done = {}, 0, false, false
  return function()
    while not filled do
      local flat = nextf()
      if flat == nil then in_done = true else count = count + 1; buf[count] = flat end
      if flat == nil or count == ds.buffer then filled = true end
    end
    if count == 0 then return nil end
    C.tide_philox4x32(key, counter, 0, r)
    counter = counter + 1
    local x = ffi.cast("uint64_t", r[1]) * 4294967296ULL + r[0]
    local i = tonumber(x % count) + 1
    local out = buf[i]
    if not in_done then
      local flat = nextf()
      if flat ~= nil then buf[i] = flat; return out end
      in_done = true
    end
    buf[i] = buf[count]
    buf[count] = nil
    count = count - 1
    return out
  end, close
end

function readers.take(ds)
  local nextf, close = open(ds.input)
  local seen = 0
  return function()
    if ds.count >= 0 and seen >= ds.count then
      if close then close(); close = nil end -- stop reading the input (a cache above learns it was partial)
      return nil
    end
    local flat = nextf()
    if flat ~= nil then seen = seen + 1 end
    return flat
  end, function() if close then close() end end
end

function readers.skip(ds)
  local nextf, close = open(ds.input)
  local skipped = false
  return function()
    if not skipped then
      skipped = true
      local n = ds.count
      local i = 0
      while n < 0 or i < n do
        if nextf() == nil then return nil end
        i = i + 1
      end
    end
    return nextf()
  end, close
end

readers["repeat"] = function(ds)
  local nextf, close, epoch, in_epoch = nil, nil, 0, 0
  return function()
    while true do
      if nextf == nil then
        if ds.count >= 0 and epoch >= ds.count then return nil end
        nextf, close = open(ds.input)
        epoch, in_epoch = epoch + 1, 0
      end
      local flat = nextf()
      if flat ~= nil then in_epoch = in_epoch + 1; return flat end
      nextf = nil
      if in_epoch == 0 then return nil end
    end
  end, function() if close then close() end end
end

-- Above a Lua stage there is no thread to run ahead: prefetch passes through.
function readers.prefetch(ds) return open(ds.input) end

function readers.cache(ds)
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

function readers.zip(ds)
  local its = {}
  for i, d in ipairs(ds.inputs) do
    local nextf, close = open(d)
    its[i] = { nextf = nextf, close = close }
  end
  local function close_all() for _, it in ipairs(its) do if it.close then it.close() end end end
  return function()
    local flat = {}
    for _, it in ipairs(its) do
      local e = it.nextf()
      if e == nil then close_all(); return nil end
      for _, x in ipairs(e) do flat[#flat + 1] = x end
    end
    return flat
  end, close_all
end

function readers.concatenate(ds)
  local which = 1
  local nextf, close = open(ds.inputs[1])
  return function()
    while true do
      local flat = nextf()
      if flat ~= nil then return flat end
      if which == 2 then return nil end
      which = 2
      nextf, close = open(ds.inputs[2])
    end
  end, function() if close then close() end end
end

function readers.enumerate(ds)
  local nextf, close = open(ds.input)
  local i = ds.start
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local out = { convert.tensor(i, "int64", "enumerate") }
    i = i + 1
    for _, x in ipairs(flat) do out[#out + 1] = x end
    return out
  end, close
end

function readers.shard(ds)
  local nextf, close = open(ds.input)
  local i = -1
  return function()
    while true do
      local flat = nextf()
      if flat == nil then return nil end
      i = i + 1
      if i % ds.num == ds.index then return flat end
    end
  end, close
end

-- TF's InterleaveDataset (sequential; the parallel one keeps this order).
function readers.interleave(ds)
  local nextf, close = open(ds.input)
  local cycle, block = ds.cycle, ds.block
  local current = {}   -- position -> { nextf, close } of an open inner pass
  local cycle_index, block_index, num_open, end_of_input, index = 1, 0, 0, false, 0
  local num_ahead = 0 -- open inner passes with a prefetch thread (at most ds.parallel)
  local function advance_cycle()
    block_index = 0
    cycle_index = cycle_index % cycle + 1
  end
  return function()
    while not end_of_input or num_open > 0 do
      local cur = current[cycle_index]
      if cur then
        local flat = cur.nextf()
        if flat ~= nil then
          block_index = block_index + 1
          if block_index == block then advance_cycle() end
          return flat
        end
        current[cycle_index] = nil
        num_open = num_open - 1
        if cur.ahead then num_ahead = num_ahead - 1 end
        if cur.close then cur.close() end -- its thread goes now, not at the collector's pace
        advance_cycle()
      elseif not end_of_input then
        local flat = nextf()
        if flat == nil then
          end_of_input = true
        else
          local inner = inner_dataset(ds, flat, index)
          index = index + 1
          if not structure.same(inner.template, ds.template) then
            binding.error(string.format("%s: the dataset made from element %d has a different structure " ..
              "than the first one's", ds.what or "interleave", index - 1))
          end
          -- parallel: this inner pass runs ahead on a C prefetch thread of its own (when it runs in C)
          local ahead = ds.parallel > 1 and num_ahead < ds.parallel and c_engine().supports(inner)
          local f, c = open(ahead and inner:prefetch(math.max(16, 2 * ds.block)) or inner)
          current[cycle_index] = { nextf = f, close = c, ahead = ahead }
          num_open = num_open + 1
          if ahead then num_ahead = num_ahead + 1 end
        end
      else
        advance_cycle()
      end
    end
    return nil
  end, function()
    if close then close() end
    for _, c in pairs(current) do if c.close then c.close() end end
  end
end

readers.param = function()
  binding.error("tide.data: this dataset was made from an interleave function's traced element; only that " ..
    "interleave can read it")
end

readers.c_source = function(ds) return open(ds) end -- a C source runs in C (dataset.open routes it there)
readers.sparse_slices = readers.c_source -- SparseTensor rows are cut in C

-- Register the reader of a dataset kind that another module adds
-- (data/functional.lua, sampling.lua, windows.lua, grouping.lua): reader(ds) gives nextf, close.
function M.add_reader(kind, reader) readers[kind] = reader end

-- A pass over ds run here (inputs that run in C are opened there).
function M.open_lua(ds)
  local reader = readers[ds.kind]
  if not reader then binding.error("tide.data: no reader for a '" .. tostring(ds.kind) .. "' dataset") end
  local nextf, close = reader(ds)
  return nextf, close
end

open = function(ds) return dataset_mod().open(ds) end

-- A pass at the top: a forgotten iterator ends (a cache learns it was
-- partial) when it is collected. Closed exactly once: by hand, at its end or
-- by the collector (closing it again from the finalizer, during a full
-- collection, hung LuaJIT about once in 30 runs of interleave_parallel_spec).
function M.open(ds)
  local nextf, close = M.open_lua(ds)
  if close then
    local finished = false
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = function() if not finished then finished = true; close() end end
    return function()
      if finished then return nil end
      local _ = proxy
      local flat = nextf()
      if flat == nil then finished = true; close() end
      return flat
    end, function() if not finished then finished = true; close() end end
  end
  return nextf, close
end

return M
