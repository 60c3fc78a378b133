-- stdlib/tide/data/stages/group_by_window.lua — ds:group_by_window and
-- ds:bucket_by_sequence_length, as TF 2.21's (Lua engine only).
--
-- Elements are grouped by an int64 key; a group that reaches its window size
-- goes to reduce_fn(key, window) as a dataset of its elements, and what that
-- dataset gives comes out. At the input's end the groups left go out in
-- ascending key order (TF keeps them in a std::map). The key function is
-- traced when it can be (data/map_fn.lua); reduce_fn runs in Lua per window.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local map_fn = require "tide.data.map_fn"
local stage = require "tide.data.stage"
local windows = require "tide.data.stages.window"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"

local istensor = binding.istensor
local UNKNOWN, INFINITE = stage.UNKNOWN, stage.INFINITE
local TensorSpec, None = spec.TensorSpec, spec.None
local pack = require("tide.varargs").pack

local function check_fn(what, name, fn)
  if type(fn) ~= "function" then
    binding.error(string.format("%s: %s must be a function, got %s", what, name, type(fn)))
  end
end

-- A function of an element giving one integer scalar (of `dtypes`), traced
-- when it can be; returns scalar_of(flat, index) -> Lua number, tensor.
local function scalar_fn(what, name, fn, input, dtypes)
  local compiled, why = map_fn.trace(fn, what, input.template, input.specs)
  local allowed = table.concat(dtypes, " or ")
  local ok_dtype = {}
  for _, d in ipairs(dtypes) do ok_dtype[d] = true end
  if compiled then
    local s = compiled.out_specs
    if #s ~= 1 or not ok_dtype[s[1].dtype] or (s[1].shape and #s[1].shape ~= 0) then
      binding.error(string.format("%s: %s must return one %s scalar, it returns %s", what, name, allowed,
        #s == 1 and tostring(s[1]) or (#s .. " values")))
    end
  elseif not structure.holds_datasets(input.specs) then
    map_fn.note_fallback(what, fn, why)
  end
  return function(flat, index)
    local v
    if compiled then
      local out, err = map_fn.run(compiled, flat)
      if not out then binding.error(string.format("%s: %s failed on element %d: %s", what, name, index, err)) end
      v = out[1]
    else
      local res = pack(pcall(fn, structure.values(input.template, flat)))
      if not res[1] then
        binding.error(string.format("%s: %s failed on element %d: %s", what, name, index, tostring(res[2])))
      end
      v = res[2]
      if not istensor(v) or v.nelem ~= 1 or v.ndim ~= 0 or not ok_dtype[structure.dtype_name(v)] then
        binding.error(string.format("%s: %s must return one %s scalar, got %s (element %d)", what, name, allowed,
          istensor(v) and (structure.dtype_name(v) .. " " .. tostring(v.shape)) or type(v), index))
      end
    end
    return tonumber(v:item()), v
  end
end

-- The node: key_of(flat, index) -> key number, key tensor; size_of(key
-- tensor) -> window size; reduce(key tensor, window dataset) -> dataset.
local function group_node(self, what, key_of, size_of, reduce, template, specs)
  local ds = stage.derive(self, "group_by_window", { what = what, key_of = key_of, size_of = size_of, reduce = reduce })
  ds.template, ds.specs = template, specs
  ds.card = self:cardinality() == INFINITE and INFINITE or UNKNOWN
  return ds
end

-- ds:group_by_window(key_fn, reduce_fn, {window_size=, window_size_func=}):
-- key_fn(element) gives an int64 scalar; reduce_fn(key, window) a Dataset.
-- Exactly one of window_size and window_size_func(key) (an int64 scalar).
local function group_by_window(self, key_fn, reduce_fn, opts)
  local what = "group_by_window"
  check_fn(what, "key_func", key_fn)
  check_fn(what, "reduce_func", reduce_fn)
  opts = stage.options(what, { "window_size", "window_size_func" }, opts)
  stage.no_datasets(what, self)
  local size, size_fn = opts.window_size, opts.window_size_func
  if (size == nil) == (size_fn == nil) then
    binding.error(what .. ": give exactly one of window_size and window_size_func")
  end
  if size ~= nil then size = stage.count_arg(what, "window_size", size, 1) end
  if size_fn ~= nil then check_fn(what, "window_size_func", size_fn) end
  local function size_of(key)
    if size then return size end
    local ok, n = pcall(size_fn, key)
    if not ok then binding.error(string.format("%s: window_size_func failed on key %s: %s", what, tostring(key:item()),
      tostring(n))) end
    if istensor(n) then n = n:item() end
    n = tonumber(n)
    if type(n) ~= "number" or n < 1 or n ~= math.floor(n) then
      binding.error(string.format("%s: window_size_func must give a whole number >= 1, got %s for key %s", what,
        tostring(n), tostring(key:item())))
    end
    return n
  end
  local function reduce(key, window)
    local ok, out = pcall(reduce_fn, key, window)
    if not ok then binding.error(string.format("%s: reduce_func failed on key %s: %s", what, tostring(key:item()),
      tostring(out))) end
    if not stage.is_dataset(out) then
      binding.error(string.format("%s: reduce_func must return a tide.data.Dataset, got %s", what,
        istensor(out) and "a tensor" or type(out)))
    end
    return out
  end
  -- the output's structure: reduce_fn on an empty window of the input's specs (as TF traces it on a DatasetSpec)
  local probe = reduce(convert.tensor(0, "int64", what), windows.elements({}, self.specs, self.template))
  local key_of = scalar_fn(what, "key_func", key_fn, self, { "int64" })
  return group_node(self, what, key_of, size_of, reduce, probe.template, probe.specs)
end

-- Per-component padded shapes from a structure matching the element (a
-- single tensor's: the shape list itself), or nil.
local function shapes_per_component(what, template, v)
  if v == nil then return nil end
  if type(v) ~= "table" then binding.error(what .. ": padded_shapes must match the element's structure") end
  if template.kind == "tensor" then return { v } end
  local out = {}
  local function walk(t, x)
    if t.kind == "tensor" then out[t.index] = x; return end
    if type(x) ~= "table" then binding.error(what .. ": padded_shapes must match the element's structure") end
    for i, item in ipairs(t.items) do walk(item, t.kind == "list" and x[i] or x[t.keys[i]]) end
  end
  walk(template, v)
  return out
end

-- ds:bucket_by_sequence_length(element_length_func, bucket_boundaries,
-- bucket_batch_sizes, {padded_shapes=, padding_values=, pad_to_bucket_boundary=false,
-- no_padding=false, drop_remainder=false}): elements whose lengths fall in
-- the same bucket ([-inf, b1), [b1, b2), ..., [bn, inf)) batched together,
-- padded_batch per bucket (batch with no_padding). With pad_to_bucket_boundary
-- the unknown dims pad to the bucket's boundary - 1 (the last bucket is then an error).
local function bucket_by_sequence_length(self, length_fn, boundaries, batch_sizes, opts)
  local what = "bucket_by_sequence_length"
  check_fn(what, "element_length_func", length_fn)
  opts = stage.options(what, { "padded_shapes", "padding_values", "pad_to_bucket_boundary", "no_padding",
    "drop_remainder" }, opts)
  stage.no_datasets(what, self)
  if type(boundaries) ~= "table" or istensor(boundaries) then
    binding.error(what .. ": bucket_boundaries must be a Lua list of whole numbers, got " .. type(boundaries))
  end
  for i, b in ipairs(boundaries) do
    stage.count_arg(what, "bucket_boundaries[" .. i .. "]", b)
    if i > 1 and b <= boundaries[i - 1] then
      binding.error(string.format("%s: bucket_boundaries must increase, got %d after %d", what, b, boundaries[i - 1]))
    end
  end
  if type(batch_sizes) ~= "table" or istensor(batch_sizes) or #batch_sizes ~= #boundaries + 1 then
    binding.error(string.format("%s: bucket_batch_sizes must be a Lua list of %d sizes (one more than the " ..
      "boundaries), got %s", what, #boundaries + 1, type(batch_sizes) == "table" and (#batch_sizes .. " entries")
      or type(batch_sizes)))
  end
  for i, n in ipairs(batch_sizes) do stage.count_arg(what, "bucket_batch_sizes[" .. i .. "]", n, 1) end
  local function flag(name) return stage.flag(what, name, opts[name], false) end
  local to_boundary, no_padding, drop = flag("pad_to_bucket_boundary"), flag("no_padding"), flag("drop_remainder")
  local given = shapes_per_component(what, self.template, opts.padded_shapes)
  -- each component's padded shape, None where the batch's longest (or the boundary) decides
  local shapes, specs = {}, {}
  for i, s in ipairs(self.specs) do
    local want = given and given[i]
    if want ~= nil and (type(want) ~= "table" or (s.shape and #want ~= #s.shape)) then
      binding.error(string.format("%s: padded_shapes for component %d must be a list of %d sizes", what, i - 1,
        s.shape and #s.shape or 0))
    end
    local dims, out = {}, { None }
    for d = 1, (want and #want) or (s.shape and #s.shape) or 0 do
      local w = want and want[d] or s.shape[d]
      if w == -1 then w = None end
      dims[d] = w
      out[d + 1] = no_padding and (s.shape and s.shape[d]) or w
    end
    shapes[i] = dims
    specs[i] = TensorSpec(s.shape and out or nil, s.dtype)
  end
  local length_of = scalar_fn(what, "element_length_func", length_fn, self, { "int32", "int64" })
  local function key_of(flat, index)
    local len = length_of(flat, index)
    local bucket = #boundaries
    for b, bound in ipairs(boundaries) do
      if len < bound then bucket = b - 1; break end
    end
    return bucket, convert.tensor(bucket, "int64", what)
  end
  local function size_of(key) return batch_sizes[key:item() + 1] end
  local function reduce(key, window)
    local bucket = tonumber(key:item())
    local n = batch_sizes[bucket + 1]
    if no_padding then return window:batch(n, { drop_remainder = drop }) end
    local fill = shapes
    if to_boundary then
      if bucket == #boundaries then
        binding.error(string.format("%s: with pad_to_bucket_boundary, elements must have a length < max(" ..
          "bucket_boundaries) = %d", what, boundaries[#boundaries] or 0))
      end
      fill = {}
      for i, dims in ipairs(shapes) do
        fill[i] = {}
        for d, w in ipairs(dims) do fill[i][d] = (w == None) and boundaries[bucket + 1] - 1 or w end
      end
    end
    local padded = structure.rebuild(self.template, fill)
    if self.template.kind == "tensor" then padded = fill[1] end
    return window:padded_batch(n, { padded_shapes = padded, padding_values = opts.padding_values,
      drop_remainder = drop })
  end
  return group_node(self, what, key_of, size_of, reduce, self.template, specs)
end

-- The reader: groups by key, a window's output drained before the next input element is read.
local group = {}

function group.lua(ds, open)
  local nextf, close = open(ds.input)
  local groups, flush, input_done, index = {}, nil, false, 0
  local cur, cur_close -- the pass over the window being given out
  local function start(g)
    local out = ds.reduce(g.key, windows.elements(g.elems, ds.input.specs, ds.input.template))
    if not structure.same(out.template, ds.template) then
      binding.error(string.format("%s: reduce_func's dataset for key %s has a different structure than for the " ..
        "first window", ds.what, tostring(g.key:item())))
    end
    cur, cur_close = open(out)
  end
  return function()
    while true do
      if cur then
        local flat = cur()
        if flat ~= nil then return flat end
        if cur_close then cur_close() end
        cur, cur_close = nil, nil
      elseif not input_done then
        local flat = nextf()
        if flat == nil then
          input_done = true
          flush = {}
          for k in pairs(groups) do flush[#flush + 1] = k end
          table.sort(flush, function(a, b) return a > b end) -- popped from the end: ascending
        else
          local k, key = ds.key_of(flat, index)
          index = index + 1
          local g = groups[k]
          if not g then
            g = { key = key, elems = {}, size = ds.size_of(key) }
            groups[k] = g
          end
          g.elems[#g.elems + 1] = flat
          if #g.elems >= g.size then
            groups[k] = nil
            start(g)
          end
        end
      else
        local k = table.remove(flush)
        if k == nil then return nil end
        local g = groups[k]
        groups[k] = nil
        start(g)
      end
    end
  end, function()
    if close then close() end
    if cur_close then cur_close() end
  end
end

return {
  methods = { group_by_window = group_by_window, bucket_by_sequence_length = bucket_by_sequence_length },
  stages = { group_by_window = group },
}
