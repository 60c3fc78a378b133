-- stdlib/tide/data/stages/unbatch.lua — ds:unbatch(): each element's rows as
-- elements (C: tide_dataset_unbatch; rows of SparseTensors are sliced in Lua).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local sparse_elements = require "tide.data.sparse_elements"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"

local C = binding.C
local TensorSpec, None = spec.TensorSpec, spec.None
local INFINITE, UNKNOWN = stage.INFINITE, stage.UNKNOWN

-- ds:unbatch(): each element's rows as elements.
local function unbatch(self)
  stage.no_datasets("unbatch", self)
  stage.no_ragged("unbatch", self)
  local specs = {}
  for _, node in ipairs(structure.sparse_nodes(self.template)) do
    if node.shape and #node.shape == 0 then
      binding.error("unbatch: the element holds a SparseTensor of rank 0; every component needs a first dimension")
    end
    if node.shape and #node.shape == 1 then -- as TF 2.21 (its sparse rows go through SerializeManySparse)
      binding.error("unbatch: the element holds a SparseTensor of rank 1, whose rows would be SparseTensors of " ..
        "rank 0 (TF: \"Rank of input SparseTensor should be > 1\")")
    end
  end
  local sparse_set = sparse_elements.sparse_components(self.template) or {}
  for i, s in ipairs(self.specs) do
    if sparse_set[i] then s = TensorSpec({ None, None }, "int64") end -- (its specs are fixed below)
    if s.shape and #s.shape == 0 then
      binding.error(string.format("unbatch: component %d is a scalar; every component needs a first dimension", i))
    end
    local dims = {}
    for d = 2, #(s.shape or {}) do dims[d - 1] = s.shape[d] end
    specs[i] = TensorSpec(s.shape and dims or nil, s.dtype)
  end
  local ds = stage.derive(self, "unbatch")
  ds.specs = specs
  if next(sparse_set) then
    ds.template = structure.map_sparse_shapes(self.template, stage.drop_first)
    structure.fix_sparse_specs(ds.template, specs)
  end
  local c = self:cardinality()
  local lead = self.specs[1].shape and self.specs[1].shape[1]
  ds.card = (c == INFINITE and INFINITE) or ((c >= 0 and type(lead) == "number") and c * lead) or UNKNOWN
  return ds
end

local s = { copyable = true }

-- Only of dense elements: a SparseTensor's rows are sliced in Lua (sparse_elements.unbatch).
function s.in_c(ds) return not structure.has_sparse(ds.input.template) end

function s.c(_, input) return C.tide_dataset_unbatch(input) end

function s.lua(ds, open)
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
  local index = -1 -- (the C stage says the same)
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

return { methods = { unbatch = unbatch }, stages = { unbatch = s } }
