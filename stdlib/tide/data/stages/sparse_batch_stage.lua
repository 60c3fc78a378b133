-- stdlib/tide/data/stages/sparse_batch_stage.lua — ds:sparse_batch(batch_size, row_shape): dense elements of
-- varying shapes batched into one SparseTensor per batch (TF's; every entry of an element, zeros included).
local binding = require "tide.binding"
local convert = require "tide.convert"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"

local None = spec.None
local fmt = string.format

-- ds:sparse_batch(batch_size, row_shape): elements of one dense component, each no larger than row_shape
-- in every dim (and of its rank), gathered batch_size at a time into SparseTensors of dense shape
-- [k, row_shape...] (k: the batch's count).
local function sparse_batch(self, batch_size, row_shape)
  local n = stage.count_arg("sparse_batch", "batch_size", batch_size, 1)
  if binding.istensor(row_shape) then row_shape = row_shape:totable() end
  if type(row_shape) ~= "table" then binding.error("sparse_batch: row_shape must be a list of sizes") end
  for i, d in ipairs(row_shape) do stage.count_arg("sparse_batch", "row_shape[" .. i .. "]", d, 0) end
  if self.template.kind ~= "tensor" then
    binding.error("sparse_batch: the elements must be single dense tensors")
  end
  local s = self.specs[1]
  if s.shape and #s.shape ~= #row_shape then
    binding.error(fmt("sparse_batch: the elements have rank %d but row_shape has %d dims", #s.shape, #row_shape))
  end
  local shape = { None }
  for i, d in ipairs(row_shape) do shape[i + 1] = d end
  local ds = stage.derive(self, "sparse_batch", { n = n, row_shape = row_shape })
  ds.template = structure.sparse_node(1, shape, s.dtype)
  ds.specs = { structure.sparse_component_specs(shape, s.dtype) }
  local c = self:cardinality()
  ds.card = c < 0 and c or math.ceil(c / n)
  return ds
end

local st = {} -- Lua: each batch's indices are built from its elements' shapes

function st.lua(ds, open)
  local nextf, close = open(ds.input)
  local rank = #ds.row_shape
  return function()
    local idx, vals, k = {}, {}, 0
    while k < ds.n do
      local flat = nextf()
      if flat == nil then break end
      local x = flat[1]
      local dims = x.shape:as_list()
      if #dims ~= rank then
        binding.error(fmt("sparse_batch: an element has shape %s, of another rank than row_shape's %d",
          tostring(x.shape), rank))
      end
      for d = 1, rank do
        if dims[d] > ds.row_shape[d] then
          binding.error(fmt("sparse_batch: an element has shape %s, larger than row_shape (%s) in dim %d",
            tostring(x.shape), table.concat(ds.row_shape, ", "), d - 1))
        end
      end
      -- every position of x, in C order, as [k, i1, ..., ir]
      local count = 1
      for d = 1, rank do count = count * dims[d] end
      for p = 0, count - 1 do
        local row, rest = { k }, p
        for d = rank, 1, -1 do
          row[d + 1] = rest % dims[d]
          rest = math.floor(rest / dims[d])
        end
        idx[#idx + 1] = row
      end
      vals[#vals + 1] = shape_ops.reshape(x, { -1 })
      k = k + 1
    end
    if k == 0 then return nil end
    local dense = { k }
    for d = 1, rank do dense[d + 1] = ds.row_shape[d] end
    local values = shape_ops.concat(vals, 0)
    local indices = #idx > 0 and convert.tensor(idx, "int64") or create_ops.zeros({ 0, rank + 1 }, "int64")
    return { indices, values, convert.tensor(dense, "int64") }
  end, close
end

return { methods = { sparse_batch = sparse_batch }, stages = { sparse_batch = st } }
