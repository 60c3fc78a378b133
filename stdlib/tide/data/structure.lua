-- stdlib/tide/data/structure.lua — a dataset element's structure: a tensor,
-- a SparseTensor, a list or a map of them (nested), flattened to components
-- and back, and its element_spec (TensorSpecs in the same structure).
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local spec = require "tide.tracing.spec"
local sparse = require "tide.sparse_tensor"
local trace_context = require "tide.trace_context"
local nest = require "tide.nest"
local Ragged = require("tide.ops.strings").RaggedTensor

local istensor = binding.istensor
local is_nested, is_list, sorted_keys = nest.is_nested, nest.is_list, nest.sorted_keys
local TensorSpec, None = spec.TensorSpec, spec.None
local M = {}

-- True when a plain table holds the values of one tensor (numbers, nested).
local function is_value_table(x)
  local probe = x
  while type(probe) == "table" and getmetatable(probe) == nil do
    local _, v = next(probe)
    if v == nil then return true end -- {} : an empty tensor
    probe = v
  end
  return type(probe) == "number" or type(probe) == "boolean"
end

-- A sparse node: a SparseTensor of static dense shape `shape` (a list with
-- tide.None; nil: any rank) and values dtype `dt`, as three components from
-- `first` on: indices [N, rank] int64, values [N], dense_shape [rank] int64.
local function sparse_node(first, shape, dt)
  return { kind = "sparse", shape = shape, dtype = dt, items = { { kind = "tensor", index = first },
    { kind = "tensor", index = first + 1 }, { kind = "tensor", index = first + 2 } } }
end
M.sparse_node = sparse_node

-- A ragged node (ragged_batch's RaggedTensors: values and int64 row_splits, ragged rank 1) of static shape
-- `shape` ({rows, None, values' other dims...}) and values dtype `dt`, two components from `first` on.
function M.ragged_node(first, shape, dt)
  return { kind = "ragged", shape = shape, dtype = dt, items = { { kind = "tensor", index = first },
    { kind = "tensor", index = first + 1 } } }
end

-- element_spec's entry for a ragged node (TF's RaggedTensorSpec, ragged rank 1).
local RaggedSpec = {}
RaggedSpec.__index = RaggedSpec
RaggedSpec.__tostring = function(self)
  local dims = {}
  for i, d in ipairs(self.shape) do dims[i] = d == None and "None" or tostring(d) end
  return string.format("RaggedTensorSpec(shape=(%s), dtype=%s, ragged_rank=1)", table.concat(dims, ", "), self.dtype)
end
function M.is_ragged_spec(x) return getmetatable(x) == RaggedSpec end

-- True when the template holds a ragged node.
function M.has_ragged(template)
  if template.kind == "ragged" then return true end
  for _, item in ipairs(template.kind ~= "tensor" and template.items or {}) do
    if M.has_ragged(item) then return true end
  end
  return false
end

-- The TensorSpecs of a sparse node's three components.
function M.sparse_component_specs(shape, dt)
  local rank = shape and #shape or None
  return TensorSpec({ None, rank }, "int64"), TensorSpec({ None }, dt), TensorSpec({ rank }, "int64")
end

-- flatten(value, what, dtypes): the template and the list of component
-- tensors. A tensor is one component, a SparseTensor three; a Lua list
-- (1..n) or a map with string keys a structure, walked as tide.nest walks
-- (its leaf rule; a map's keys sorted, as TF sorts dict keys); Lua numbers,
-- booleans and tables of numbers become tensors (of dtypes[i] when given).
-- tf.data asks more of a structure than tide.nest: no empty table, no list
-- with other keys beside its items, no map with keys that are not strings.
function M.flatten(value, what, dtypes)
  local leaves = {}
  local function leaf(t)
    leaves[#leaves + 1] = t
    return { kind = "tensor", index = #leaves }
  end
  local function walk(v, depth)
    if depth > 32 then binding.error(what .. ": the element's structure nests too deeply (a cycle?)") end
    if istensor(v) then return leaf(v) end
    if sparse.is_sparse(v) then
      local node = sparse_node(#leaves + 1, v:static_shape(), v.values.dtype)
      leaves[#leaves + 1], leaves[#leaves + 2], leaves[#leaves + 3] = v.indices, v.values, v.dense_shape
      return node
    end
    if getmetatable(v) == Ragged then
      local vd = v.values.shape:as_list()
      local shape = { None, None }
      for d = 2, #vd do shape[d + 1] = vd[d] end
      local node = M.ragged_node(#leaves + 1, shape, v.values.dtype)
      leaves[#leaves + 1], leaves[#leaves + 2] = v.values, v.row_splits
      return node
    end
    if convert.is_variable(v) then return leaf(convert.unvariable(v)) end
    local tv = type(v)
    local nested = is_nested(v)
    if tv == "number" or tv == "boolean" or (nested and #v > 0 and is_value_table(v)) then
      local dt = dtypes and dtypes[#leaves + 1]
      return leaf(convert.tensor(v, dt, what))
    end
    if nested then
      local list, n = is_list(v)
      local keys, nk
      if not list then keys, nk = sorted_keys(v) end
      if n > 0 then
        local items = {}
        for i = 1, n do items[i] = walk(v[i], depth + 1) end
        for i = 1, list and 0 or nk do
          local k = keys[i]
          if type(k) ~= "number" or k < 1 or k > n or k % 1 ~= 0 then
            binding.error(string.format("%s: an element is either a list or a map, not both (key '%s' next to " ..
              "list items)", what, tostring(k)))
          end
        end
        return { kind = "list", n = n, items = items }
      end
      if list then nk = 0 end
      local strings = nk > 0
      for i = 1, nk do strings = strings and type(keys[i]) == "string" end
      if not strings then
        binding.error(string.format("%s: expected a tensor, a list of tensors or a map with string keys, got %s",
          what, nk == 0 and "an empty table" or "a table with non-string keys"))
      end
      local items = {}
      for i, k in ipairs(keys) do items[i] = walk(v[k], depth + 1) end
      return { kind = "map", keys = keys, items = items }
    end
    binding.error(string.format("%s: expected a tensor, a list or a map of tensors, got %s", what,
      tv == "nil" and "nil" or tv))
  end
  local template = walk(value, 0)
  return template, leaves
end

-- flatten_as(value, template, dtypes, what): the components of value read
-- by a known structure (from_generator's output_signature), so that
-- {1, {2, 3}} is a scalar and a vector, not one ragged tensor. nil and a
-- reason when value does not have that structure.
function M.flatten_as(value, template, dtypes, what)
  local leaves = {}
  local function walk(t, v, path)
    if t.kind == "sparse" then
      if not sparse.is_sparse(v) then
        return path .. " is " .. (istensor(v) and "a dense tensor" or type(v)) .. ", expected a tide.SparseTensor"
      end
      if t.shape then -- the signature's static shape: its rank and known dims
        local got = v:static_shape()
        local fits = got and #got == #t.shape
        for d = 1, fits and #got or 0 do fits = fits and (t.shape[d] == None or t.shape[d] == got[d]) end
        if not fits then
          local dims = {}
          for d, x in ipairs(got or {}) do dims[d] = tostring(x) end
          return string.format("%s is a SparseTensor of dense shape [%s], not %s", path, table.concat(dims, ", "),
            tostring(sparse.SparseTensorSpec(t.shape, t.dtype)))
        end
      end
      leaves[t.items[1].index], leaves[t.items[2].index], leaves[t.items[3].index] = v.indices, v.values, v.dense_shape
      return nil
    end
    if t.kind == "tensor" then
      if sparse.is_sparse(v) then return path .. " is a tide.SparseTensor, expected a dense tensor" end
      if istensor(v) then leaves[t.index] = v
      elseif convert.is_variable(v) then leaves[t.index] = convert.unvariable(v)
      elseif type(v) == "number" or type(v) == "boolean" or (type(v) == "table" and getmetatable(v) == nil) then
        leaves[t.index] = convert.tensor(v, dtypes[t.index], what)
      else
        return path .. " is " .. type(v) .. ", expected a tensor"
      end
      return nil
    end
    if type(v) ~= "table" or getmetatable(v) ~= nil then return path .. " is " .. type(v) .. ", expected a table" end
    for i, item in ipairs(t.items) do
      local key = t.kind == "list" and i or t.keys[i]
      local why = walk(item, v[key], path .. "[" .. (type(key) == "string" and ("'" .. key .. "'") or key) .. "]")
      if why then return why end
    end
    if t.kind == "list" and #v ~= t.n then return path .. " has " .. #v .. " items, expected " .. t.n end
    return nil
  end
  local why = walk(template, value, "the element")
  if why then return nil, why end
  return leaves
end

-- The value of template with its components from flat[offset + i].
function M.rebuild(template, flat)
  local k = template.kind
  if k == "tensor" then return flat[template.index] end
  if k == "sparse" then
    local i = template.items[1].index
    local dense_shape = flat[i + 2]
    -- inside a trace (a map function) the static shape is known only here
    if template.shape and trace_context.is_symbolic(dense_shape) then
      sparse.hint_static_shape(dense_shape, template.shape)
    end
    return sparse.SparseTensor(flat[i], flat[i + 1], dense_shape)
  end
  if k == "ragged" then
    local i = template.items[1].index
    return Ragged.from_row_splits(flat[i], flat[i + 1])
  end
  local out = {}
  if k == "list" then
    for i, item in ipairs(template.items) do out[i] = M.rebuild(item, flat) end
  else
    for i, key in ipairs(template.keys) do out[key] = M.rebuild(template.items[i], flat) end
  end
  return out
end

-- What a map function or an iterator gets: a list element's items as
-- separate values (TF unpacks tuples), anything else as one value.
function M.values(template, flat)
  if template.kind == "list" then
    local v = M.rebuild(template, flat)
    return unpack(v, 1, template.n)
  end
  return M.rebuild(template, flat)
end

-- The template of several values returned by a function (one value: itself;
-- several: a list), and their components.
function M.flatten_results(what, n, ...)
  if n == 0 or (n == 1 and select(1, ...) == nil) then
    binding.error(what .. ": the function returned nothing; it must return the new element")
  end
  if n == 1 then return M.flatten((...), what) end
  return M.flatten({ ... }, what)
end

-- The number of components.
function M.count(template)
  if template.kind == "tensor" then return 1 end
  local n = 0
  for _, item in ipairs(template.items) do n = n + M.count(item) end
  return n
end

-- A copy of template with component indices moved by `offset`.
function M.shift(template, offset)
  if template.kind == "tensor" then return { kind = "tensor", index = template.index + offset } end
  local items = {}
  for i, item in ipairs(template.items) do items[i] = M.shift(item, offset) end
  return { kind = template.kind, n = template.n, keys = template.keys, items = items, shape = template.shape,
    dtype = template.dtype }
end

-- A list template of several templates (zip, enumerate), components in order.
function M.list_of(templates)
  local items, offset = {}, 0
  for i, t in ipairs(templates) do
    items[i] = M.shift(t, offset)
    offset = offset + M.count(t)
  end
  return { kind = "list", n = #items, items = items }
end

-- True when two templates have the same structure.
function M.same(a, b)
  if a.kind ~= b.kind then return false end
  if a.kind == "tensor" then return true end
  if a.kind == "sparse" and (a.dtype ~= b.dtype or (a.shape and #a.shape) ~= (b.shape and #b.shape)) then
    return false
  end
  if #a.items ~= #b.items then return false end
  for i, item in ipairs(a.items) do
    if a.keys and a.keys[i] ~= b.keys[i] then return false end
    if not M.same(item, b.items[i]) then return false end
  end
  return true
end

-- The TensorSpec of a tensor's dtype and dims (unknown dims as tide.None).
function M.spec_of(t)
  return TensorSpec.from_tensor(t)
end

-- A spec with dims unknown along `unknown` (a set of positions), or a new
-- leading dim.
function M.spec_dims(s, dims)
  return TensorSpec(dims, s.dtype)
end

-- The template of a concatenation of a and b (the same structure): sparse
-- nodes' static dims that differ become None, as TF's most specific
-- compatible spec.
function M.common_template(a, b)
  if a.kind == "tensor" then return a end
  local items = {}
  for i, item in ipairs(a.items) do items[i] = M.common_template(item, b.items[i]) end
  local shape = a.shape
  if a.kind == "sparse" and shape then
    if b.shape == nil then shape = nil
    else
      shape = {}
      for d, x in ipairs(a.shape) do shape[d] = (x == b.shape[d]) and x or None end
    end
  end
  return { kind = a.kind, n = a.n, keys = a.keys, items = items, shape = shape, dtype = a.dtype }
end

-- The most specific spec both fit (concatenate): dims that differ become None.
function M.common_spec(a, b, what)
  if a.dtype ~= b.dtype then
    binding.error(string.format("%s: the datasets' elements have different dtypes (%s and %s)", what, a.dtype,
      b.dtype))
  end
  if a.shape == nil or b.shape == nil or #a.shape ~= #b.shape then return TensorSpec(nil, a.dtype) end
  local dims = {}
  for i, d in ipairs(a.shape) do dims[i] = (d == b.shape[i]) and d or None end
  return TensorSpec(dims, a.dtype)
end

-- element_spec: the specs in the element's structure (a sparse node: a
-- tide.SparseTensorSpec).
function M.spec_value(template, specs)
  local k = template.kind
  if k == "tensor" then return specs[template.index] end
  if k == "sparse" then return sparse.SparseTensorSpec(template.shape, template.dtype) end
  if k == "ragged" then return setmetatable({ shape = template.shape, dtype = template.dtype }, RaggedSpec) end
  local out = {}
  for i, item in ipairs(template.items) do out[k == "list" and i or template.keys[i]] = M.spec_value(item, specs) end
  return out
end

-- True when the template holds a sparse node.
function M.has_sparse(template)
  if template.kind == "sparse" then return true end
  for _, item in ipairs(template.kind ~= "tensor" and template.items or {}) do
    if M.has_sparse(item) then return true end
  end
  return false
end

-- A copy of the template whose sparse nodes' static shapes are f(shape)
-- (batch, unbatch, slices change them as they change dense specs).
function M.map_sparse_shapes(template, f)
  local k = template.kind
  if k == "tensor" then return template end
  local items = {}
  for i, item in ipairs(template.items) do items[i] = M.map_sparse_shapes(item, f) end
  local shape = template.shape
  if k == "sparse" then shape = f(shape) end
  return { kind = k, n = template.n, keys = template.keys, items = items, shape = shape, dtype = template.dtype }
end

-- specs with the components of the template's sparse nodes set to what
-- they are for any value of the node: indices [None, rank], values [None],
-- dense_shape [rank]. Returns specs.
function M.fix_sparse_specs(template, specs)
  for _, node in ipairs(M.sparse_nodes(template)) do
    local i = node.items[1].index
    specs[i], specs[i + 1], specs[i + 2] = M.sparse_component_specs(node.shape, node.dtype)
  end
  return specs
end

-- The sparse nodes of a template, in component order.
function M.sparse_nodes(template, out)
  out = out or {}
  if template.kind == "sparse" then out[#out + 1] = template
  elseif template.kind ~= "tensor" then
    for _, item in ipairs(template.items) do M.sparse_nodes(item, out) end
  end
  return out
end

-- dtype name of a component tensor.
function M.dtype_name(t) return dtype.names[t.dt] end

-- TF's DatasetSpec: the spec of a component that is itself a dataset
-- (window's elements), with the spec of that dataset's elements.
local DatasetSpec = class("DatasetSpec")
M.DatasetSpec = DatasetSpec
function DatasetSpec:__init(element_spec) self.element_spec, self.shape = element_spec, {} end
DatasetSpec.__tostring = function(s) return "DatasetSpec(" .. tostring(s.element_spec) .. ", shape=[])" end
DatasetSpec.__eq = function(a, b) return a.element_spec == b.element_spec end
function M.is_dataset_spec(s) return class.is_instance(s, DatasetSpec) end

-- True when some component of the specs is a dataset (a DatasetSpec).
function M.holds_datasets(specs)
  for _, s in ipairs(specs) do if M.is_dataset_spec(s) then return true end end
  return false
end

M.None = None
M.TensorSpec = TensorSpec
return M
