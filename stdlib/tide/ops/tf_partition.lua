-- stdlib/tide/ops/tf_partition.lua — TF's data-routing ops at the top level, as compositions: dynamic_partition,
-- dynamic_stitch, tensor_scatter_nd_max/min, parallel_stack (tide.<name>).
local binding = require "tide.binding"
local convert = require "tide.convert"
local m = require "tide.ops.math"
local s = require "tide.ops.shape"
local index = require "tide.ops.index"
local segment = require "tide.ops.segment"
local reduce = require "tide.ops.reduce"
local tensor = require "tide.tensor"
local fmt = string.format

local M = {}

local function arg(op, x, what, dt) return convert.tensor(x, dt, op .. " (" .. what .. ")") end

local function int_tensor(op, x, what)
  x = arg(op, x, what)
  if not (x.dtype == "int32" or x.dtype == "int64") then
    binding.error(fmt("%s: %s must be int32 or int64, got %s", op, what, x.dtype))
  end
  return x
end

local function eager_values(op, x, what)
  if tensor.is_symbolic(x) then
    binding.error(fmt("%s: %s must be known (an eager tensor): it sizes the result", op, what))
  end
  return x.ndim == 0 and { x:item() } or s.reshape(x, { -1 }):totable()
end

-- dynamic_partition(data, partitions, num_partitions) as tf.dynamic_partition: a Lua list of num_partitions
-- tensors, the i-th holding data's slices whose partition is i - 1 (in order). partitions' shape is a prefix of
-- data's.
function M.dynamic_partition(data, partitions, num_partitions)
  local op = "dynamic_partition"
  data = arg(op, data, "data")
  partitions = int_tensor(op, partitions, "partitions")
  if type(num_partitions) ~= "number" or num_partitions % 1 ~= 0 or num_partitions < 1 then
    binding.error(fmt("%s: num_partitions must be a whole number >= 1, got %s", op, tostring(num_partitions)))
  end
  local pd, dd = partitions.shape:as_list(), data.shape:as_list()
  local prefix = #pd <= #dd
  for i = 1, #pd do prefix = prefix and pd[i] == dd[i] end
  if not prefix then
    binding.error(fmt("%s: partitions' shape %s must be a prefix of data's %s", op, tostring(partitions.shape),
      tostring(data.shape)))
  end
  for k, v in ipairs(eager_values(op, partitions, "partitions")) do
    if v < 0 or v >= num_partitions then
      binding.error(fmt("%s: partitions[%d] = %d is not in [0, %d)", op, k - 1, v, num_partitions))
    end
  end
  local flat_p = s.reshape(partitions, { -1 })
  local rest = { -1 }
  for i = #pd + 1, #dd do rest[#rest + 1] = dd[i] end
  local flat_d = s.reshape(data, rest)
  local out = {}
  for p = 0, num_partitions - 1 do
    out[p + 1] = index.boolean_mask(flat_d, m.equal(flat_p, convert.tensor(p, partitions.dtype)))
  end
  return out
end

-- dynamic_stitch(indices, data) as tf.dynamic_stitch: merged[indices[m][i]] = data[m][i] over the lists, a later
-- entry winning; merged has max(index) + 1 rows (a gather of the winners: differentiable in data).
function M.dynamic_stitch(indices, data)
  local op = "dynamic_stitch"
  if type(indices) ~= "table" or type(data) ~= "table" or binding.istensor(indices) or binding.istensor(data) then
    binding.error(op .. ": indices and data must be Lua lists of tensors")
  end
  if #indices ~= #data or #indices == 0 then
    binding.error(fmt("%s: indices and data must be non-empty lists of one length, got %d and %d", op, #indices, #data))
  end
  local flat_i, flat_d, inner = {}, {}, nil
  for k = 1, #indices do
    local ix = int_tensor(op, indices[k], fmt("indices[%d]", k))
    local d = arg(op, data[k], fmt("data[%d]", k))
    local id, dd = ix.shape:as_list(), d.shape:as_list()
    local ok = #id <= #dd
    for i = 1, #id do ok = ok and id[i] == dd[i] end
    if not ok then
      binding.error(fmt("%s: data[%d]'s shape %s must start with indices[%d]'s %s", op, k, tostring(d.shape), k,
        tostring(ix.shape)))
    end
    local rest = {}
    for i = #id + 1, #dd do rest[#rest + 1] = dd[i] end
    local key = table.concat(rest, ",")
    if inner and inner ~= key then
      binding.error(fmt("%s: data[%d]'s inner shape [%s] differs from data[1]'s [%s]", op, k, key, inner))
    end
    inner = key
    local r = { -1 }
    for _, v in ipairs(rest) do r[#r + 1] = v end
    flat_d[k] = s.reshape(d, r)
    flat_i[k] = eager_values(op, ix, fmt("indices[%d]", k))
  end
  local winner, n, pos = {}, 0, 0
  for k = 1, #flat_i do
    for _, v in ipairs(flat_i[k]) do
      if v < 0 then binding.error(fmt("%s: indices[%d] holds %d, below 0", op, k, v)) end
      winner[v] = pos
      pos = pos + 1
      if v + 1 > n then n = v + 1 end
    end
  end
  local src = {}
  for j = 0, n - 1 do
    if winner[j] == nil then
      binding.error(fmt("%s: no entry gives row %d of the result (below the largest index)", op, j))
    end
    src[j + 1] = winner[j]
  end
  local all = s.concat(flat_d, 0)
  if n == 0 then return all end -- every indices list empty: all has 0 rows
  return s.gather(all, convert.tensor(src, "int32"), 0)
end

-- tensor_scatter_nd_max/min(tensor, indices, updates) as TF's: tensor with each indexed slice replaced by its
-- max (min) with the updates for it (duplicates combine).
local function scatter_nd_extreme(op, seg, pick, ignore)
  return function(t, indices, updates)
    t = arg(op, t, "tensor")
    indices = int_tensor(op, indices, "indices")
    updates = convert.coerce(updates, t, op, 3)
    if indices.ndim < 1 then binding.error(op .. ": indices must have rank >= 1") end
    local k = indices.shape[indices.ndim]
    if type(k) ~= "number" or k < 1 or k > t.ndim then
      binding.error(fmt("%s: indices' last dim %s must be in [1, %d] (tensor's rank)", op, tostring(k), t.ndim))
    end
    local td = t.shape:as_list()
    local lead, strides, count = {}, {}, 1
    for i = k, 1, -1 do strides[i] = count; count = count * td[i] end
    for i = 1, k do lead[i] = td[i] end
    local want = {}
    for i = 1, indices.ndim - 1 do want[#want + 1] = indices.shape[i] end
    for i = k + 1, t.ndim do want[#want + 1] = td[i] end
    if table.concat(updates.shape:as_list(), ",") ~= table.concat(want, ",") then
      binding.error(fmt("%s: updates must have shape [%s], got %s", op, table.concat(want, ", "),
        tostring(updates.shape)))
    end
    if not tensor.is_symbolic(indices) then
      local v = s.reshape(indices, { -1, k }):totable()
      for r, row in ipairs(v) do
        for i = 1, k do
          if row[i] < 0 or row[i] >= td[i] then
            binding.error(fmt("%s: indices row %d has %d at position %d, not in [0, %d)", op, r - 1, row[i], i - 1,
              td[i]))
          end
        end
      end
    end
    local flat_ix = s.reshape(indices, { -1, k })
    -- each index row as one linear position over the indexed leading dims
    local lin = reduce.reduce_sum(m.mul(m.cast(flat_ix, "int64"), convert.tensor(strides, "int64")), -1)
    local rest = { -1 }
    for i = k + 1, t.ndim do rest[#rest + 1] = td[i] end
    local u = s.reshape(updates, rest)
    -- a NaN update changes nothing in TF (its max/min keeps the old value): the reduction's identity instead
    if u.dtype:find("float") then u = m.where(m.is_nan(u), convert.tensor(ignore, u.dtype), u) end
    local red = seg(u, lin, count)
    local out = pick(s.reshape(t, rest), red)
    return s.reshape(out, td)
  end
end
M.tensor_scatter_nd_max =
  scatter_nd_extreme("tensor_scatter_nd_max", segment.unsorted_segment_max, m.maximum, -math.huge)
M.tensor_scatter_nd_min =
  scatter_nd_extreme("tensor_scatter_nd_min", segment.unsorted_segment_min, m.minimum, math.huge)

-- parallel_stack(values) as tf.parallel_stack: tide.stack(values, 0) (TF's copies in parallel; tide's stack
-- is one kernel already).
function M.parallel_stack(values)
  if type(values) ~= "table" or binding.istensor(values) or #values == 0 then
    binding.error("parallel_stack: values must be a non-empty Lua list of tensors")
  end
  return s.stack(values, 0)
end

return M
