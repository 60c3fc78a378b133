-- stdlib/tide/data/stages/ragged_batch.lua — ds:ragged_batch(batch_size, drop_remainder): batches whose
-- components of varying first dim become tide.RaggedTensors (values + int64 row_splits, ragged rank 1), the
-- components of fixed shape dense batches, as TF's (Lua: row lengths are data).
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"

local TensorSpec, None = spec.TensorSpec, spec.None
local fmt = string.format

-- The template with each ragged component's tensor node replaced by a ragged node (indices from `first`).
local function rebuild_template(t, ragged, counter)
  if t.kind == "tensor" then
    local i = t.index
    counter.n = counter.n + 1
    local first = counter.n
    if ragged[i] then
      counter.n = counter.n + 1
      return structure.ragged_node(first, ragged[i].shape, ragged[i].dtype)
    end
    return { kind = "tensor", index = first }
  end
  local items = {}
  for k, item in ipairs(t.items) do items[k] = rebuild_template(item, ragged, counter) end
  return { kind = t.kind, n = t.n, keys = t.keys, items = items }
end

-- ds:ragged_batch(batch_size, {drop_remainder=false, row_splits_dtype="int64"})
local function ragged_batch(self, n, opts)
  if type(opts) == "boolean" then opts = { drop_remainder = opts } end
  opts = stage.options("ragged_batch", { "drop_remainder", "row_splits_dtype", "name" }, opts)
  n = stage.count_arg("ragged_batch", "batch_size", n, 1)
  local drop = stage.flag("ragged_batch", "drop_remainder", opts.drop_remainder, false)
  if opts.row_splits_dtype ~= nil and opts.row_splits_dtype ~= "int64" then
    binding.error("ragged_batch: row_splits_dtype must be int64 (tide.RaggedTensor's)")
  end
  stage.no_datasets("ragged_batch", self)
  stage.no_ragged("ragged_batch", self)
  if structure.has_sparse(self.template) then
    binding.error("ragged_batch: the elements hold SparseTensors; sparse elements batch with batch")
  end
  local lead = drop and n or None
  local ragged, kinds, specs = {}, {}, {}
  for i, s in ipairs(self.specs) do
    if s.shape == nil then binding.error(fmt("ragged_batch: component %d has an unknown rank", i)) end
    for d = 2, #s.shape do
      if s.shape[d] == None then
        binding.error(fmt("ragged_batch: component %d has shape %s; only the first dim may vary", i,
          spec.dims_text(s.shape)))
      end
    end
    if #s.shape >= 1 and s.shape[1] == None then
      local shape = { lead, None }
      local vdims = { None }
      for d = 2, #s.shape do shape[d + 1] = s.shape[d]; vdims[d] = s.shape[d] end
      ragged[i] = { shape = shape, dtype = s.dtype }
      kinds[i] = "ragged"
      specs[#specs + 1] = TensorSpec(vdims, s.dtype)
      specs[#specs + 1] = TensorSpec({ None }, "int64")
    else
      kinds[i] = "dense"
      local dims = { lead }
      for d = 1, #s.shape do dims[d + 1] = s.shape[d] end
      specs[#specs + 1] = TensorSpec(dims, s.dtype)
    end
  end
  local ds = stage.derive(self, "ragged_batch", { n = n, drop = drop, kinds = kinds })
  ds.template = rebuild_template(self.template, ragged, { n = 0 })
  ds.specs = specs
  local c = self:cardinality()
  ds.card = c < 0 and c or (drop and math.floor(c / n) or math.ceil(c / n))
  return ds
end

local st = {} -- Lua: the row lengths are the data's

function st.lua(ds, open)
  local nextf, close = open(ds.input)
  local ended = false
  return function()
    if ended then return nil end
    local rows = {}
    while #rows < ds.n do
      local flat = nextf()
      if flat == nil then ended = true; break end
      rows[#rows + 1] = flat
    end
    if #rows == 0 or (ds.drop and #rows < ds.n) then return nil end
    local out = {}
    for c, kind in ipairs(ds.kinds) do
      local parts = {}
      for r, flat in ipairs(rows) do parts[r] = flat[c] end
      if kind == "dense" then out[#out + 1] = shape_ops.stack(parts, 0)
      else
        local splits, at = { 0 }, 0
        for r, p in ipairs(parts) do
          at = at + p.shape[1]
          splits[r + 1] = at
        end
        out[#out + 1] = shape_ops.concat(parts, 0)
        out[#out + 1] = convert.tensor(splits, "int64")
      end
    end
    return out
  end, close
end

return { methods = { ragged_batch = ragged_batch }, stages = { ragged_batch = st } }
