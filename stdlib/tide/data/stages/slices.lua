-- stdlib/tide/data/stages/slices.lua — Dataset.from_tensor_slices and
-- from_tensors: rows of tensors (C: tide_dataset_slices) or of SparseTensors (tide_dataset_sparse_slices).
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local sparse_elements = require "tide.data.sparse_elements"
local interleave_fn = require "tide.data.interleave_fn"
local spec = require "tide.tracing.spec"
local stage = require "tide.data.stage"
local c_engine = require "tide.data.c_engine"

local ffi, C = binding.ffi, binding.C
local TensorSpec, None = spec.TensorSpec, spec.None
local UNKNOWN = stage.UNKNOWN

-- from_tensor_slices of an element with SparseTensors: one C source
-- (kernels/data/sparse_slices.c) that checks the value now and cuts each
-- row as a view; the rows' template and specs come from data/sparse_elements.lua.
local function sparse_slices(template, leaves)
  local row_template, specs, roles = sparse_elements.slice_specs(template, leaves, stage.drop_first)
  local ds = stage.new { kind = "sparse_slices", tensors = leaves, roles = roles, template = row_template,
    specs = specs }
  ds.card = tonumber(C.tide_dataset_cardinality(c_engine.handle(ds))) -- made now: its errors come here
  return ds
end

-- Dataset.from_tensor_slices(x): the rows of a tensor, of each tensor of a
-- list {x, y} or map {image=, label=} (same first dimension).
local function from_tensor_slices(value)
  local template, leaves = structure.flatten(value, "from_tensor_slices")
  if structure.has_sparse(template) then return sparse_slices(template, leaves) end
  local specs = {}
  local traced = interleave_fn.any_symbolic(leaves)
  for i, t in ipairs(leaves) do
    if t.ndim < 1 then
      binding.error("from_tensor_slices: component " .. i .. " is a scalar; each component needs a first " ..
        "dimension to slice (use from_tensors for one element)")
    end
    if t.shape[1] ~= leaves[1].shape[1] and not (traced and (t.shape[1] == None or leaves[1].shape[1] == None)) then
      binding.error(string.format("from_tensor_slices: the components have different first dimensions: %s and %s",
        tostring(leaves[1].shape), tostring(t.shape)))
    end
    local dims = {}
    for d = 2, t.ndim do dims[d - 1] = t.shape[d] end
    specs[i] = TensorSpec(dims, structure.dtype_name(t))
  end
  if traced then -- inside interleave's function: a template leaf fed by the element
    return interleave_fn.leaf("from_tensor_slices", stage.new { kind = "param", source = "slices", args = leaves,
      template = template, specs = specs, card = UNKNOWN })
  end
  return stage.new { kind = "slices", tensors = leaves, template = template, specs = specs, card = leaves[1].shape[1] }
end

-- Dataset.from_tensors(x): one element, x itself.
local function from_tensors(value)
  local template, leaves = structure.flatten(value, "from_tensors")
  local rows, specs = {}, {}
  for i, t in ipairs(leaves) do
    rows[i] = t:expand_dims(0)
    specs[i] = structure.spec_of(t)
  end
  structure.fix_sparse_specs(template, specs)
  if interleave_fn.any_symbolic(leaves) then -- inside interleave's function: a leaf fed by the element
    return interleave_fn.leaf("from_tensors", stage.new { kind = "param", source = "slices", args = rows,
      template = template, specs = specs, card = 1 })
  end
  return stage.new { kind = "slices", tensors = rows, template = template, specs = specs, card = 1 }
end

local slices = { copyable = true }

function slices.c(ds)
  local n = #ds.tensors
  local arr = ffi.new("const tide_tensor *[?]", n)
  for i, t in ipairs(ds.tensors) do arr[i - 1] = t end
  return C.tide_dataset_slices(n, arr)
end

function slices.lua(ds)
  local i, n = 0, ds.card
  return function()
    if i >= n then return nil end
    local flat = {}
    for k, t in ipairs(ds.tensors) do flat[k] = t[i] end
    i = i + 1
    return flat
  end
end

local sparse = { copyable = true }

function sparse.c(ds) -- 1 in roles where a SparseTensor's indices are (kernels/data/sparse_slices.c)
  local n = #ds.tensors
  local arr, roles = ffi.new("const tide_tensor *[?]", n), ffi.new("unsigned char[?]", n)
  for i, t in ipairs(ds.tensors) do arr[i - 1], roles[i - 1] = t, ds.roles[i] end
  return C.tide_dataset_sparse_slices(n, arr, roles)
end

-- SparseTensor rows are cut in C, under the Lua engine too.
function sparse.lua(ds) return c_engine.open(ds) end

return {
  methods = { from_tensor_slices = from_tensor_slices, from_tensors = from_tensors },
  stages = { slices = slices, sparse_slices = sparse },
}
