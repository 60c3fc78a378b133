-- stdlib/tide/data/stages/rebatch.lua — ds:rebatch(batch_size, drop_remainder): the rows of the input's
-- batches regrouped: one size (C: unbatch then batch) or a list of sizes taken in turn (Lua).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local shape_ops = require "tide.ops.shape"

local TensorSpec, None = spec.TensorSpec, spec.None

-- ds:rebatch(batch_size, {drop_remainder=false}): batch_size a number or a list of sizes used in turn.
local function rebatch(self, sizes, opts)
  if type(opts) == "boolean" then opts = { drop_remainder = opts } end
  opts = stage.options("rebatch", { "drop_remainder", "name" }, opts)
  local drop = stage.flag("rebatch", "drop_remainder", opts.drop_remainder, false)
  if structure.has_sparse(self.template) then
    binding.error("rebatch: the elements hold SparseTensors; rebatch dense batches (or unbatch and sparse_batch)")
  end
  local rows = self:unbatch()
  if type(sizes) ~= "table" or binding.istensor(sizes) then
    local n = stage.count_arg("rebatch", "batch_size", sizes, 1)
    return rows:batch(n, { drop_remainder = drop })
  end
  if #sizes == 0 then binding.error("rebatch: batch_size must be a number or a non-empty list of sizes") end
  local list = {}
  for i, n in ipairs(sizes) do list[i] = stage.count_arg("rebatch", "batch_size[" .. i .. "]", n, 1) end
  local ds = stage.derive(rows, "rebatch", { sizes = list, drop = drop })
  ds.specs = {}
  for i, sp in ipairs(rows.specs) do
    local dims = { None }
    for d, v in ipairs(sp.shape or {}) do dims[d + 1] = v end
    ds.specs[i] = TensorSpec(sp.shape and dims or nil, sp.dtype)
  end
  ds.card = rows:cardinality() == stage.INFINITE and stage.INFINITE or stage.UNKNOWN
  return ds
end

local s = {} -- Lua only: the batch sizes change from batch to batch

function s.lua(ds, open)
  local nextf, close = open(ds.input)
  local turn, ended = 0, false
  return function()
    if ended then return nil end
    turn = turn % #ds.sizes + 1
    local want = ds.sizes[turn]
    local rows = {}
    while #rows < want do
      local flat = nextf()
      if flat == nil then ended = true; break end
      rows[#rows + 1] = flat
    end
    if #rows == 0 or (ended and #rows < want and ds.drop) then return nil end
    local out = {}
    for c = 1, #ds.input.specs do
      local parts = {}
      for r, flat in ipairs(rows) do parts[r] = flat[c] end
      out[c] = shape_ops.stack(parts, 0)
    end
    return out
  end, close
end

return { methods = { rebatch = rebatch }, stages = { rebatch = s } }
