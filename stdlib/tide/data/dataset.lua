-- stdlib/tide/data/dataset.lua — tide.data.Dataset: the stages' methods
-- installed from their modules (data/stages/), cardinality, element_spec and iteration.
--
-- Each stage module holds its methods (sources and transformations, as TF's
-- tf.data), their cardinalities and element specs, and its part of each
-- engine (data/stage.lua says what a stage gives); a pass runs in C
-- (data/c_engine.lua) when every stage of it can, else in Lua (data/lua_engine.lua).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"
local c_engine = require "tide.data.c_engine"
local lua_engine = require "tide.data.lua_engine"

local istensor = binding.istensor

local M = {}
M.INFINITE_CARDINALITY, M.UNKNOWN_CARDINALITY = stage.INFINITE, stage.UNKNOWN
M.AUTOTUNE = stage.AUTOTUNE

local Dataset = stage.Dataset
M.Dataset = Dataset
M.is_dataset = stage.is_dataset

-- The stage modules, one per stage or small family. A new transformation is
-- one module here (and its C stage in kernels/data/, when it has one).
local MODULES = {
  require "tide.data.stages.slices", -- from_tensor_slices, from_tensors
  require "tide.data.stages.range",
  require "tide.data.stages.generator", -- from_generator
  require "tide.data.stages.c_source", -- TFRecordDataset, TextLineDataset, CsvDataset (data/files.lua, csv.lua)
  require "tide.data.stages.zip",
  require "tide.data.stages.concatenate",
  require "tide.data.stages.map",
  require "tide.data.stages.filter",
  require "tide.data.stages.batch", -- batch, padded_batch
  require "tide.data.stages.unbatch",
  require "tide.data.stages.shuffle",
  require "tide.data.stages.repeat", -- repeat_
  require "tide.data.stages.take",
  require "tide.data.stages.skip",
  require "tide.data.stages.cache",
  require "tide.data.stages.prefetch",
  require "tide.data.stages.interleave", -- interleave, flat_map and the template leaves
  require "tide.data.stages.enumerate",
  require "tide.data.stages.shard",
  require "tide.data.stages.scan", -- scan, reduce
  require "tide.data.stages.take_while",
  require "tide.data.stages.unique",
  require "tide.data.stages.window", -- window and the datasets it makes
  require "tide.data.stages.group_by_window", -- group_by_window, bucket_by_sequence_length
  require "tide.data.stages.sampling", -- sample_from_datasets, choose_from_datasets
  require "tide.data.stages.counter", -- counter, random
  require "tide.data.stages.rebatch",
  require "tide.data.stages.ignore_errors",
  require "tide.data.stages.options", -- options, with_options (tide.data.Options: data/options.lua)
  require "tide.data.stages.save", -- save, load, snapshot, fingerprint
  require "tide.data.stages.rejection_resample",
  require "tide.data.stages.ragged_batch",
  require "tide.data.stages.sparse_batch_stage", -- sparse_batch (kernels/data/sparse_batch.c is batch's sparse part)
}

for _, mod in ipairs(MODULES) do
  for name, fn in pairs(mod.methods or {}) do
    if rawget(Dataset, name) ~= nil then error("tide.data: two stage modules give Dataset." .. name) end
    Dataset[name] = fn
  end
  for kind, s in pairs(mod.stages or {}) do stage.register(kind, s) end
end

---------------------------------------------------------------------------
-- Reading
---------------------------------------------------------------------------

-- Elements in one pass: a count, INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2).
function Dataset:cardinality() return self.card end

-- For tests and benches: AUTOTUNE's settings in this dataset's stages as the
-- last pass over it left them (data/c_engine.lua's autotune_state), top down.
function Dataset:_autotune_state() return c_engine.autotune_state(self) end

-- element_spec: a TensorSpec, or a list/map of them as the elements are.
function Dataset:element_spec_value() return structure.spec_value(self.template, self.specs) end

-- ds:apply(fn): fn(ds), which must return a Dataset (TF's apply).
function Dataset:apply(fn)
  stage.check_fn("apply", fn)
  local out = fn(self)
  if not stage.is_dataset(out) then
    binding.error("apply: the function must return a tide.data.Dataset, got " ..
      (istensor(out) and "a tensor" or type(out)))
  end
  return out
end

-- The flat-element reader of a pass over ds: a function giving the next
-- element's components (a list) or nil at the end, and a close function.
M.open = lua_engine.open_input

-- ds:iter({prefetch=true}): an iterator for a generic for; a list element
-- gives its items as separate values, a map one table. Each call starts a
-- new pass. A pass whose stages all run in C prefetches by default.
function Dataset:iter(opts)
  opts = stage.options("iter", { "prefetch" }, opts)
  local top = self
  if opts.prefetch ~= false and self.kind ~= "prefetch" and lua_engine.in_c(self) then
    -- one prefetch stage for every pass: the depth AUTOTUNE grew to carries over to the next epoch
    top = rawget(self, "_auto_prefetch") or self:prefetch(M.AUTOTUNE)
    self._auto_prefetch = top
  end
  local nextf = M.open(top)
  local template = self.template
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    return structure.values(template, flat)
  end
end

-- ds:as_numpy_iterator(): iter's elements with each tensor as Lua values (x:item() for a scalar, x:totable()
-- otherwise; SparseTensors stay): tide has no numpy, so these are Lua tables and numbers.
local function plain(v)
  if istensor(v) then return v.ndim == 0 and v:item() or v:totable() end
  if type(v) == "table" and getmetatable(v) == nil then
    local t = {}
    for k, x in pairs(v) do t[k] = plain(x) end
    return t
  end
  return v
end
function Dataset:as_numpy_iterator()
  local nextf = M.open(self)
  local template = self.template
  return function()
    local flat = nextf()
    if flat == nil then return nil end
    local v = structure.rebuild(template, flat)
    if template.kind == "list" then
      local out = {}
      for i = 1, template.n do out[i] = plain(v[i]) end
      return unpack(out, 1, template.n)
    end
    return plain(v)
  end
end

-- Every element, in a Lua list (list elements as tables).
function Dataset:totable()
  local out = {}
  local nextf = M.open(self)
  while true do
    local flat = nextf()
    if flat == nil then break end
    out[#out + 1] = structure.rebuild(self.template, flat)
  end
  return out
end

-- The one element of a dataset that has exactly one (TF's get_single_element).
function Dataset:get_single_element()
  local nextf, close = M.open(self)
  local first = nextf()
  if first == nil then binding.error("get_single_element: the dataset was empty (it must have exactly one element)") end
  local second = nextf()
  if close then close() end
  if second ~= nil then
    binding.error("get_single_element: the dataset had more than one element (it must have exactly one)")
  end
  return structure.values(self.template, first)
end

-- Lua reads ds.element_spec as TF's property.
local methods_index = Dataset.__index
Dataset.__index = function(self, k)
  if k == "element_spec" then return self:element_spec_value() end
  return methods_index[k]
end

Dataset.__tostring = function(self)
  local parts = {}
  for i, s in ipairs(self.specs) do parts[i] = tostring(s) end
  return string.format("<tide.data.Dataset %s: %s>", self.kind, table.concat(parts, ", "))
end

return M
