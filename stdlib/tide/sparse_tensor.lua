-- stdlib/tide/sparse_tensor.lua — tide.SparseTensor: TF's SparseTensor value
-- (indices [N, rank] int64, values [N], dense_shape [rank] int64) and to_dense.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local create = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local shape_ops = require "tide.ops.shape"

local M = {}

local SparseTensor = class("SparseTensor")

local function shape_text(t) return "[" .. table.concat(t.shape, ", ") .. "]" end
M.SparseTensor = SparseTensor

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
-- values=, dense_shape=}: values a 1-D tensor (or a Lua list made one).
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
  if not binding.istensor(values) then
    if type(values) ~= "table" then binding.error("SparseTensor: values must be a tensor or a list, got " .. type(values)) end
    values = convert.tensor(values, nil, "SparseTensor")
  end
  if values.ndim ~= 1 or tonumber(values.dims[0]) ~= n then
    binding.error(string.format("SparseTensor: values must be [%d] (one per index), got shape %s", n,
      shape_text(values)))
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

-- The dtype of the values.
function SparseTensor:value_dtype() return self.values.dtype end

-- to_dense(default_value): a dense tensor of dense_shape holding the values at
-- their indices and default_value (0, or "" for strings) elsewhere, as
-- tf.sparse.to_dense.
function SparseTensor:to_dense(default_value)
  local shape = self:shape_list()
  local n = tonumber(self.values.dims[0])
  if self.values.dtype ~= "string" then
    local dense = create.fill(shape, default_value or 0, { dtype = self.values.dtype })
    if n == 0 then return dense end
    return index_ops.tensor_scatter_nd_update(dense, self.indices, self.values)
  end
  -- strings: no scatter kernel for them; built through Lua lists
  if default_value ~= nil and type(default_value) ~= "string" then
    binding.error("SparseTensor.to_dense: the default of string values must be a string, got " .. type(default_value))
  end
  local fill = default_value or ""
  local count = 1
  for d = 1, #shape do count = count * shape[d] end
  local flat = {}
  for k = 1, count do flat[k] = fill end
  local idx, vals = self.indices:totable(), self.values:totable()
  for k = 1, n do
    local pos = 0
    for d = 1, #shape do pos = pos * shape[d] + idx[k][d] end
    flat[pos + 1] = vals[k]
  end
  return shape_ops.reshape(convert.tensor(count > 0 and flat or {}, "string", "to_dense"), shape)
end

function SparseTensor:__tostring()
  return string.format("SparseTensor(indices=%s, values=%s, dense_shape=%s)", tostring(self.indices),
    tostring(self.values), tostring(self.dense_shape))
end

-- True when v is a SparseTensor.
function M.is_sparse(v) return class.is_instance(v, SparseTensor) end

return M
