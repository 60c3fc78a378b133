-- stdlib/tide/sparse_tensor.lua — tide.SparseTensor: TF's SparseTensor value
-- (indices [N, rank] int64, values [N], dense_shape [rank] int64), its
-- SparseTensorSpec, and tide.sparse's to_dense/from_dense.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local create = require "tide.ops.create"
local index_ops = require "tide.ops.index"
local shape_ops = require "tide.ops.shape"
local spec = require "tide.tracing.spec"
local trace_context = require "tide.trace_context"
local math_ops = require "tide.ops.math"
local dtype = require "tide.dtype"

local None = spec.None

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

-- The static dense shape (TF's sp.shape) as a Lua list, tide.None where
-- unknown: the values of an eager dense_shape; inside a trace, what the
-- dataset knew of the sparse input whose dense_shape this is (a map that
-- passes it through keeps it, as TF's constant folding does), else unknown.
local static_hint = setmetatable({}, { __mode = "k" })
function SparseTensor:static_shape()
  local ds = self.dense_shape
  if trace_context.is_symbolic(ds) then
    local hint = static_hint[ds]
    if hint then return hint end
    local rank = tonumber(ds.dims[0])
    if rank < 0 then return nil end
    local out = {}
    for i = 1, rank do out[i] = None end
    return out
  end
  return self:shape_list()
end

-- Record that the (symbolic) dense_shape tensor stands for a sparse of the
-- static shape `shape` (tide.data does this for a traced map's inputs).
function M.hint_static_shape(dense_shape, shape) static_hint[dense_shape] = shape end

-- The dtype of the values.
function SparseTensor:value_dtype() return self.values.dtype end

-- to_dense(default_value): a dense tensor of dense_shape holding the values at
-- their indices and default_value (0, or "" for strings) elsewhere, as
-- tf.sparse.to_dense.
function SparseTensor:to_dense(default_value)
  if trace_context.is_symbolic(self.dense_shape) or trace_context.is_symbolic(self.values) then
    -- traced (a dataset map): the shape is known when the graph runs
    if self.values.dtype == "string" then
      binding.error("SparseTensor.to_dense: string values work eagerly only (no scatter kernel for strings)")
    end
    local dense = create.fill(self.dense_shape, default_value or 0, { dtype = self.values.dtype })
    return index_ops.tensor_scatter_nd_update(dense, self.indices, self.values)
  end
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
local is_sparse = M.is_sparse

---------------------------------------------------------------------------
-- SparseTensorSpec
---------------------------------------------------------------------------

local SparseTensorSpec = class("SparseTensorSpec")
M.SparseTensorSpec = SparseTensorSpec

-- SparseTensorSpec(shape, dtype): TF's tf.SparseTensorSpec: the dense shape
-- (sizes and tide.None; nil: any rank) and the values' dtype ("float32").
function SparseTensorSpec:__init(shape, dt)
  local probe = spec.TensorSpec(shape, dt or "float32") -- checks and normalizes both
  self.shape, self.dtype = probe.shape, probe.dtype
end

function SparseTensorSpec:__tostring()
  local dims = {}
  for i, d in ipairs(self.shape or {}) do dims[i] = d == None and "None" or tostring(d) end
  local text = self.shape == nil and "<unknown>" or
    ("(" .. table.concat(dims, ", ") .. ((#dims == 1) and ",)" or ")"))
  return string.format("SparseTensorSpec(shape=%s, dtype=%s)", text, self.dtype)
end

function SparseTensorSpec.__eq(a, b)
  if a.dtype ~= b.dtype or (a.shape == nil) ~= (b.shape == nil) then return false end
  if a.shape == nil then return true end
  if #a.shape ~= #b.shape then return false end
  for i, d in ipairs(a.shape) do if b.shape[i] ~= d then return false end end
  return true
end

-- True when x is a SparseTensorSpec.
function M.is_sparse_spec(x) return class.is_instance(x, SparseTensorSpec) end

-- The spec of a SparseTensor (its static shape, its values' dtype).
function SparseTensorSpec.from_value(sp)
  if not is_sparse(sp) then binding.error("SparseTensorSpec.from_value: expected a tide.SparseTensor, got " .. type(sp)) end
  return SparseTensorSpec(sp:static_shape(), sp.values.dtype)
end

---------------------------------------------------------------------------
-- tide.sparse: to_dense / from_dense
---------------------------------------------------------------------------

-- to_dense(sp, default_value): as tf.sparse.to_dense (sp:to_dense(d)).
function M.to_dense(sp, default_value)
  if not is_sparse(sp) then
    binding.error("tide.sparse.to_dense: expected a tide.SparseTensor, got " ..
      (binding.istensor(sp) and "a dense tensor" or type(sp)))
  end
  return sp:to_dense(default_value)
end

-- reorder(sp): as tf.sparse.reorder: the same SparseTensor with its index
-- tuples (and values) in row-major order. Eager only.
function M.reorder(sp)
  if not is_sparse(sp) then
    binding.error("tide.sparse.reorder: expected a tide.SparseTensor, got " ..
      (binding.istensor(sp) and "a dense tensor" or type(sp)))
  end
  if trace_context.is_symbolic(sp.indices) then
    binding.error("tide.sparse.reorder: works eagerly only")
  end
  local rows = sp.indices:totable()
  local n = #rows
  if n < 2 then return sp end
  local order = {}
  for k = 1, n do order[k] = k end
  table.sort(order, function(a, b)
    local ra, rb = rows[a], rows[b]
    for d = 1, #ra do
      if ra[d] ~= rb[d] then return ra[d] < rb[d] end
    end
    return a < b -- stable for repeated tuples
  end)
  local take = {}
  for k = 1, n do take[k] = order[k] - 1 end
  take = convert.tensor(take, "int64", "tide.sparse.reorder")
  return SparseTensor(shape_ops.gather(sp.indices, take), shape_ops.gather(sp.values, take), sp.dense_shape)
end

-- cross_hashed(inputs, {num_buckets=0, hash_key=nil}): as tf.sparse.cross_hashed
-- on dense [batch, k] inputs (string or integer): a SparseTensor holding every
-- combination of one feature per input in each row, hashed (tide.strings'
-- cross_hashed_dense says how). Sparse inputs are not taken. The batch and
-- feature counts must be known (eagerly they are).
function M.cross_hashed(inputs, opts)
  if opts ~= nil and type(opts) ~= "table" then
    binding.error("tide.sparse.cross_hashed: options must be a table {num_buckets=, hash_key=}")
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "num_buckets" and k ~= "hash_key" then
      binding.error("tide.sparse.cross_hashed: unknown option " .. tostring(k) .. " (num_buckets, hash_key)")
    end
  end
  if type(inputs) == "table" then
    for i, t in ipairs(inputs) do
      if is_sparse(t) then
        binding.error(("tide.sparse.cross_hashed: input %d is a SparseTensor; only dense inputs are supported " ..
          "(to_dense it first)"):format(i))
      end
    end
  end
  local dense = require("tide.ops.strings").cross_hashed_dense(inputs, opts.num_buckets, opts.hash_key,
    "tide.sparse.cross_hashed")
  local b, k = dense.shape[1], dense.shape[2]
  if type(b) ~= "number" or type(k) ~= "number" then
    binding.error("tide.sparse.cross_hashed: the batch size and feature counts must be known (give the " ..
      "TensorSpec a shape)")
  end
  local idx = {}
  for r = 0, b - 1 do for c = 0, k - 1 do idx[#idx + 1] = { r, c } end end
  local indices = #idx > 0 and convert.tensor(idx, "int64", "cross_hashed")
    or convert.empty(binding.C.TIDE_INT64, { 0, 2 }, "cross_hashed")
  return SparseTensor(indices, shape_ops.reshape(dense, { -1 }), convert.tensor({ b, k }, "int64", "cross_hashed"))
end

-- from_dense(t): as tf.sparse.from_dense: a SparseTensor of t's entries that
-- are not zero ("" for strings, false for bools), indices in row-major order.
function M.from_dense(t)
  if not binding.istensor(t) then
    if type(t) ~= "table" and type(t) ~= "number" and type(t) ~= "boolean" then
      binding.error("tide.sparse.from_dense: expected a tensor, got " .. type(t))
    end
    t = convert.tensor(t, nil, "tide.sparse.from_dense")
  end
  if trace_context.is_symbolic(t) then
    binding.error("tide.sparse.from_dense: works eagerly only (its number of values depends on the data)")
  end
  local shape = t.shape
  local dense_shape = convert.tensor(#shape > 0 and shape or {}, "int64", "from_dense")
  if #shape == 0 then dense_shape = convert.empty(binding.C.TIDE_INT64, { 0 }, "from_dense") end
  if t.dtype == "string" then -- no comparison kernel for strings: through Lua lists
    local flat = shape_ops.reshape(t, { -1 }):totable()
    local idx, vals = {}, {}
    for k, v in ipairs(flat) do
      if v ~= "" then
        local coord, rest = {}, k - 1
        for d = #shape, 1, -1 do coord[d] = rest % shape[d]; rest = math.floor(rest / shape[d]) end
        idx[#idx + 1] = coord
        vals[#vals + 1] = v
      end
    end
    local indices = #idx > 0 and convert.tensor(idx, "int64", "from_dense")
      or convert.empty(binding.C.TIDE_INT64, { 0, #shape }, "from_dense")
    local values = #vals > 0 and convert.tensor(vals, "string", "from_dense")
      or convert.empty(dtype.codes.string, { 0 }, "from_dense")
    return SparseTensor(indices, values, dense_shape)
  end
  local mask = t.dtype == "bool" and t or math_ops.not_equal(t, 0)
  local indices = math_ops.where(mask)
  local values = index_ops.gather_nd(t, indices)
  return SparseTensor(indices, values, dense_shape)
end

return M
