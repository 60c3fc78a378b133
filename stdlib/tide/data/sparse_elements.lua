-- stdlib/tide/data/sparse_elements.lua — SparseTensor components of dataset
-- elements: batching them (TF's rule), unbatching, slicing them into rows.
local binding = require "tide.binding"
local convert = require "tide.convert"
local create = require "tide.ops.create"
local shape_ops = require "tide.ops.shape"
local structure = require "tide.data.structure"
local spec = require "tide.tracing.spec"

local C = binding.C
local M = {}

local function int64_list(list, what)
  if #list == 0 then return convert.empty(C.TIDE_INT64, { 0 }, what) end
  return convert.tensor(list, "int64", what)
end

-- The rows of a sparse value (its three components) along its first dim:
-- a list of {indices, values, dense_shape} with the first dim dropped, as
-- TF slices a SparseTensor (from_tensor_slices, unbatch). Every row keeps
-- the dense shape's other dims, as TF's rows do. Indices in any order are
-- grouped by row (from_tensor_slices cuts its rows in C: kernels/data/sparse_slices.c).
function M.split_rows(indices, values, dense_shape, what)
  local shape = dense_shape:totable()
  local rank = #shape
  if rank < 1 then
    binding.error(what .. ": a SparseTensor of rank 0 has no first dimension to slice")
  end
  if rank == 1 then -- a rank the template did not know (a map's output of unknown rank)
    binding.error(what .. ": a SparseTensor of rank 1 cannot be cut into rows: they would be SparseTensors of rank 0 " ..
      "(TF: \"Rank of input SparseTensor should be > 1\")")
  end
  local rows, n = shape[1], indices.shape[1]
  local rest_dims = {}
  for d = 2, rank do rest_dims[d - 1] = shape[d] end
  local rest_shape = int64_list(rest_dims, what)
  local rest_indices = indices:slice { {}, { 1, nil } }
  local first = n > 0 and indices:slice { {}, 0 }:totable() or {}
  local positions, sorted = {}, true
  for r = 1, rows do positions[r] = {} end
  for k, r in ipairs(first) do
    if r < 0 or r >= rows then
      binding.error(string.format("%s: the SparseTensor's index %d has %d in dim 0, outside its dense shape's %d",
        what, k - 1, r, rows))
    end
    if k > 1 and r < first[k - 1] then sorted = false end
    local p = positions[r + 1]
    p[#p + 1] = k - 1
  end
  local out = {}
  local at = 0
  for r = 1, rows do
    local p = positions[r]
    local ix, vals
    if sorted then -- contiguous: views, made contiguous (a pipeline stage copies rows of them)
      ix = rest_indices:slice { { at, at + #p } }:contiguous()
      vals = values:slice { { at, at + #p } }:contiguous()
      at = at + #p
    else
      local take = int64_list(p, what)
      ix = shape_ops.gather(rest_indices, take)
      vals = shape_ops.gather(values, take)
    end
    out[r] = { ix, vals, rest_shape }
  end
  return out
end

-- One batch of count sparse values (lists {indices, values, dense_shape}):
-- TF's rule: a new first dim of count, each other dim the largest of the
-- elements', indices with the element's position in front. k names the
-- component in errors.
function M.batch_one(parts, what, k)
  local first = parts[1]
  local rank = first[3].shape[1]
  local dt = first[2].dt
  local maxdims = {}
  for d = 1, rank do maxdims[d] = 0 end
  local ix_parts, val_parts = {}, {}
  for i, p in ipairs(parts) do
    local ix, vals, ds = p[1], p[2], p[3]
    if ds.shape[1] ~= rank then
      binding.error(string.format("%s: component %d: element %d is a SparseTensor of rank %d but the first is of " ..
        "rank %d (every element's SparseTensor needs the same rank)", what, k - 1, i - 1, ds.shape[1], rank))
    end
    if vals.dt ~= dt then
      binding.error(string.format("%s: component %d: element %d's SparseTensor holds %s values but the first's " ..
        "hold %s", what, k - 1, i - 1, structure.dtype_name(vals), structure.dtype_name(first[2])))
    end
    local dims = ds:totable()
    for d = 1, rank do if dims[d] > maxdims[d] then maxdims[d] = dims[d] end end
    local n = ix.shape[1]
    ix_parts[i] = shape_ops.concat({ create.fill({ n, 1 }, i - 1, { dtype = "int64" }), ix }, 1)
    val_parts[i] = vals
  end
  local dims = { #parts }
  for d = 1, rank do dims[d + 1] = maxdims[d] end
  return shape_ops.concat(ix_parts, 0), shape_ops.concat(val_parts, 0), int64_list(dims, what)
end

-- The set of component indices that sparse nodes hold, or nil when none.
function M.sparse_components(template)
  local nodes = structure.sparse_nodes(template)
  if #nodes == 0 then return nil end
  local set = {}
  for _, node in ipairs(nodes) do
    local i = node.items[1].index
    set[i], set[i + 1], set[i + 2] = node, "values", "dense_shape"
  end
  return set, nodes
end

-- A batch of elements (flat component lists) whose template has sparse
-- nodes: sparse components batched by batch_one, the others by stack(elems, what).
function M.batch(elems, template, what, stack)
  local set, nodes = M.sparse_components(template)
  local dense_ks = {}
  for k = 1, #elems[1] do if not set[k] then dense_ks[#dense_ks + 1] = k end end
  local out = {}
  if #dense_ks > 0 then
    local sub = {}
    for i, e in ipairs(elems) do
      local s = {}
      for j, k in ipairs(dense_ks) do s[j] = e[k] end
      sub[i] = s
    end
    local stacked = stack(sub, what)
    for j, k in ipairs(dense_ks) do out[k] = stacked[j] end
  end
  for _, node in ipairs(nodes) do
    local i = node.items[1].index
    local parts = {}
    for e = 1, #elems do parts[e] = { elems[e][i], elems[e][i + 1], elems[e][i + 2] } end
    out[i], out[i + 1], out[i + 2] = M.batch_one(parts, what, i)
  end
  return out
end

-- The rows of one element (flat components) whose template has sparse
-- nodes, as flat component lists: dense components by row, sparse ones by
-- split_rows. Every component needs the same number of rows.
function M.unbatch(flat, template, what)
  local set, nodes = M.sparse_components(template)
  local rows
  local split = {}
  for _, node in ipairs(nodes) do
    local i = node.items[1].index
    split[i] = M.split_rows(flat[i], flat[i + 1], flat[i + 2], what)
    if rows and #split[i] ~= rows then
      binding.error(string.format("%s: the components of an element have different first dimensions (%d and %d)",
        what, rows, #split[i]))
    end
    rows = #split[i]
  end
  for k, x in ipairs(flat) do
    if not set[k] then
      if x.ndim < 1 then
        binding.error(string.format("%s: component %d of an element is a scalar; every component needs a first " ..
          "dimension", what, k - 1))
      end
      if rows and x.shape[1] ~= rows then
        binding.error(string.format("%s: the components of an element have different first dimensions (%d and %d)",
          what, rows, x.shape[1]))
      end
      rows = x.shape[1]
    end
  end
  local out = {}
  for r = 1, rows do
    local e = {}
    for k, x in ipairs(flat) do
      if not set[k] then e[k] = x[r - 1] end
    end
    for i, parts in pairs(split) do e[i], e[i + 1], e[i + 2] = parts[r][1], parts[r][2], parts[r][3] end
    out[r] = e
  end
  return out
end

-- from_tensor_slices of an element with SparseTensors (template and leaves
-- from structure.flatten): the rows' template (sparse shapes through
-- drop_first), their specs and the C engine's sparse roles (a list, 1 at
-- each SparseTensor's indices component). The rows themselves are cut in C
-- (tide_dataset_sparse_slices), which checks the values.
function M.slice_specs(template, leaves, drop_first)
  local what = "from_tensor_slices"
  local set = M.sparse_components(template)
  local specs, roles = {}, {}
  for i, t in ipairs(leaves) do
    roles[i] = set[i] and type(set[i]) == "table" and 1 or 0
    if not set[i] then
      if t.ndim < 1 then
        binding.error(what .. ": component " .. i .. " is a scalar; each component needs a first " ..
          "dimension to slice (use from_tensors for one element)")
      end
      local dims = {}
      for d = 2, t.ndim do dims[d - 1] = t.shape[d] end
      specs[i] = spec.TensorSpec(dims, structure.dtype_name(t))
    end
  end
  local row_template = structure.map_sparse_shapes(template, drop_first)
  structure.fix_sparse_specs(row_template, specs)
  return row_template, specs, roles
end

return M
