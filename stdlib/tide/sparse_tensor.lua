-- stdlib/tide/sparse_tensor.lua — tide.SparseTensor: TF's SparseTensor value
-- (indices [N, rank] int64, values [N], dense_shape [rank] int64) and to_dense.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local create = require "tide.ops.create"
local index_ops = require "tide.ops.index"

local M = {}

local SparseTensor = class("SparseTensor")

local function shape_text(t) return "[" .. table.concat(t.shape, ", ") .. "]" end
M.SparseTensor = SparseTensor

-- A Lua list of strings stands for string values until tide has a string dtype.
local function is_string_list(v)
  if type(v) ~= "table" or binding.istensor(v) then return false end
  for i = 1, #v do
    if type(v[i]) ~= "string" then return false end
  end
  return next(v) == nil or #v > 0
end

local function int64_tensor(v, what)
  if binding.istensor(v) then
    if v.dtype ~= "int64" then
      binding.error(string.format("SparseTensor: %s must be int64, got %s (use :cast(\"int64\"))", what, v.dtype))
    end
    return v
  end
  if type(v) ~= "table" then binding.error(string.format("SparseTensor: %s must be a tensor or a list, got %s", what, type(v))) end
  return convert.tensor(v, "int64", "SparseTensor")
end

-- SparseTensor(indices, values, dense_shape) or SparseTensor{indices=,
-- values=, dense_shape=}: values is a tensor, or a Lua list of strings.
function SparseTensor:__init(indices, values, dense_shape)
  if type(indices) == "table" and not binding.istensor(indices) and values == nil and dense_shape == nil
    and (indices.indices ~= nil or indices.values ~= nil or indices.dense_shape ~= nil) then
    indices, values, dense_shape = indices.indices, indices.values, indices.dense_shape
  end
  if indices == nil or values == nil or dense_shape == nil then
    binding.error("SparseTensor: expects indices, values and dense_shape")
  end
  dense_shape = int64_tensor(dense_shape, "dense_shape")
  if dense_shape.ndim ~= 1 then binding.error("SparseTensor: dense_shape must be 1-D, got shape " ..
    shape_text(dense_shape)) end
  local rank = tonumber(dense_shape.dims[0])
  if type(indices) == "table" and not binding.istensor(indices) and #indices == 0 then
    indices = convert.empty(binding.C.TIDE_INT64, { 0, rank }, "SparseTensor")
  end
  indices = int64_tensor(indices, "indices")
  if indices.ndim ~= 2 or tonumber(indices.dims[1]) ~= rank then
    binding.error(string.format("SparseTensor: indices must be [N, %d] for a dense_shape of %d dims, got shape %s",
      rank, rank, shape_text(indices)))
  end
  local n = tonumber(indices.dims[0])
  if binding.istensor(values) then
    if values.ndim ~= 1 or tonumber(values.dims[0]) ~= n then
      binding.error(string.format("SparseTensor: values must be [%d] (one per index), got shape %s", n,
        shape_text(values)))
    end
  elseif is_string_list(values) then
    if #values ~= n then
      binding.error(string.format("SparseTensor: %d string values for %d indices", #values, n))
    end
  else
    binding.error("SparseTensor: values must be a tensor or a list of strings, got " .. type(values))
  end
  self.indices, self.values, self.dense_shape = indices, values, dense_shape
end

-- The dense shape as a Lua list.
function SparseTensor:shape_list()
  local out = {}
  for i = 0, tonumber(self.dense_shape.dims[0]) - 1 do
    out[i + 1] = tonumber(self.dense_shape:slice { i }:item())
  end
  return out
end

-- The dtype of the values ("string" for a list of strings).
function SparseTensor:value_dtype()
  return binding.istensor(self.values) and self.values.dtype or "string"
end

-- to_dense(default_value): a dense tensor of dense_shape holding the values at
-- their indices and default_value (0, or "" for strings) elsewhere, as
-- tf.sparse.to_dense; string values give nested Lua lists.
function SparseTensor:to_dense(default_value)
  local shape = self:shape_list()
  if binding.istensor(self.values) then
    local dense = create.fill(shape, default_value or 0, { dtype = self.values.dtype })
    if #self.values.shape == 0 or self.values.shape[1] == 0 then return dense end
    return index_ops.tensor_scatter_nd_update(dense, self.indices, self.values)
  end
  if default_value ~= nil and type(default_value) ~= "string" then
    binding.error("SparseTensor.to_dense: the default of string values must be a string, got " .. type(default_value))
  end
  local fill = default_value or ""
  local function build(d)
    local t = {}
    for i = 1, shape[d] do t[i] = d == #shape and fill or build(d + 1) end
    return t
  end
  local dense = #shape == 0 and fill or build(1)
  local idx = self.indices:totable()
  for k = 1, #self.values do
    local node = dense
    local pos = idx[k]
    for d = 1, #shape - 1 do node = node[pos[d] + 1] end
    node[pos[#shape] + 1] = self.values[k]
  end
  return dense
end

function SparseTensor:__tostring()
  return string.format("SparseTensor(indices=%s, values=%s, dense_shape=%s)", tostring(self.indices),
    binding.istensor(self.values) and tostring(self.values) or ("{" .. #self.values .. " strings}"),
    tostring(self.dense_shape))
end

-- True when v is a SparseTensor.
function M.is_sparse(v) return class.is_instance(v, SparseTensor) end

return M
