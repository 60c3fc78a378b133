-- stdlib/tide/utils/sequences.lua — keras.utils.timeseries_dataset_from_array (windows of an array as a
-- dataset, gathered by a traced map in C) and split_dataset (a dataset or arrays cut in two).
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local shape_ops = require "tide.ops.shape"
local tensor = require "tide.tensor"
local create = require "tide.ops.create"
local random = require "tide.random"
local data = require "tide.data"
local numpy_shuffle = require "tide.utils.numpy_shuffle"

local fmt = string.format
local pack = require("tide.varargs").pack
local Dataset = data.Dataset
local M = {}

local function fail(op, ...) binding.error(op .. ": " .. fmt(...)) end

local function tensor_of(op, what, v)
  local t = binding.istensor(v) and v or convert.tensor(v, nil, op)
  if t.ndim < 1 then fail(op, "%s must have at least one dim, got a scalar", what) end
  return t
end

local function default_seed() return random.uniform({}, { maxval = 1000000, dtype = "int32" }):item() end

-- timeseries_dataset_from_array(data, targets, sequence_length, {sequence_stride=1, sampling_rate=1,
-- batch_size=128, shuffle=false, seed=, start_index=, end_index=}) as Keras 3's: windows
-- data[s + i * sampling_rate] (i < sequence_length) for starts s = 0, stride, ... within [start_index,
-- end_index), each with targets[start_index + s] when targets is given (false: none); the starts shuffled with
-- NumPy's RandomState(seed) as Keras's, then each pass by tide's seeded shuffle; batch_size=false: unbatched.
function M.timeseries_dataset_from_array(values, targets, sequence_length, opts)
  local op = "timeseries_dataset_from_array"
  local o = args.parse(op, { keywords = { "sequence_stride", "sampling_rate", "batch_size", "shuffle", "seed",
    "start_index", "end_index" } }, opts or {})
  local x = tensor_of(op, "data", values)
  local n = x.shape[1]
  local y = (targets ~= nil and targets ~= false) and tensor_of(op, "targets", targets) or nil
  local len = args.int(op, "sequence_length", sequence_length)
  if len < 1 then fail(op, "sequence_length must be positive, got %d", len) end
  local stride = o.sequence_stride == nil and 1 or args.int(op, "sequence_stride", o.sequence_stride)
  local rate = o.sampling_rate == nil and 1 or args.int(op, "sampling_rate", o.sampling_rate)
  if rate <= 0 or rate >= n then fail(op, "sampling_rate must be positive and below len(data) = %d, got %d", n, rate) end
  if stride <= 0 or stride >= n then
    fail(op, "sequence_stride must be positive and below len(data) = %d, got %d", n, stride)
  end
  local start = o.start_index == nil and 0 or args.int(op, "start_index", o.start_index)
  if start < 0 or start >= n then fail(op, "start_index must be in [0, %d), got %d", n, start) end
  local stop = o.end_index == nil and n or args.int(op, "end_index", o.end_index)
  if stop <= start or stop > n then fail(op, "end_index must be in (start_index, %d], got %d", n, stop) end
  local batch_size = o.batch_size
  if batch_size == nil then batch_size = 128 end
  if batch_size ~= false then batch_size = args.int(op, "batch_size", batch_size) end
  local shuffle = o.shuffle or false
  local seed = o.seed
  local count = stop - start - (len - 1) * rate
  if y then count = math.min(count, y.shape[1]) end
  local starts = {}
  for s = 0, count - 1, stride do starts[#starts + 1] = s end
  if shuffle then
    if seed == nil then seed = default_seed() end
    local p, sh = numpy_shuffle.permutation(#starts, seed), {}
    for i, k in ipairs(p) do sh[i] = starts[k] end
    starts = sh
  end
  if #starts == 0 then
    fail(op, "no window of %d steps (sampling_rate %d) fits in data[%d:%d]", len, rate, start, stop)
  end
  local window = tensor.slice(x, { { start, stop } })
  local offsets = create.range(0, len * rate, rate, "int64")
  local ds = Dataset.from_tensor_slices(convert.tensor(starts, "int64", op))
  if y then
    local ty = tensor.slice(y, { { start, math.min(stop, y.shape[1]) } })
    ds = ds:map(function(s) return shape_ops.gather(window, s + offsets), shape_ops.gather(ty, s) end,
      { parallel = data.AUTOTUNE })
  else
    ds = ds:map(function(s) return shape_ops.gather(window, s + offsets) end, { parallel = data.AUTOTUNE })
  end
  if batch_size then
    if shuffle then ds = ds:shuffle(batch_size * 8, { seed = seed }) end
    ds = ds:batch(batch_size)
  elseif shuffle then
    ds = ds:shuffle(1024, { seed = seed })
  end
  return ds:prefetch(data.AUTOTUNE)
end

-- Python's round (half to even), which Keras's split sizes use.
local function round_even(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end

-- A split size: an integer count in [1, total), or a fraction in (0, 1); nil stays nil.
local function size_arg(op, what, v, total)
  if v == nil or v == false then return nil end
  if type(v) ~= "number" then fail(op, "%s must be a number (a count, or a fraction in (0, 1)), got %s", what, type(v)) end
  if v == math.floor(v) then
    if v <= 0 or v >= total then fail(op, "%s must be a positive count smaller than %d, or a fraction in (0, 1), got %s",
      what, total, tostring(v)) end
    return v, false
  end
  if v <= 0 or v >= 1 then fail(op, "%s must be a fraction in (0, 1) or a count, got %s", what, tostring(v)) end
  return round_even(v * total), true
end

-- split_dataset(dataset, {left_size=, right_size=, shuffle=false, seed=}) as keras.utils.split_dataset: the
-- elements of a Dataset (as they come), or the rows of a tensor or of a list of tensors with one first dim,
-- cut into a left and a right Dataset (left_size first ones, right_size last ones; a size is a count, or a
-- fraction rounded half to even as Python's round); shuffled first with NumPy's RandomState(seed) when asked.
-- Returns left, right.
function M.split_dataset(dataset, opts)
  local op = "split_dataset"
  local o = args.parse(op, { keywords = { "left_size", "right_size", "shuffle", "seed" } }, opts or {})
  if o.left_size == nil and o.right_size == nil then fail(op, "give left_size, right_size or both") end
  local columns, n
  if type(dataset) == "table" and getmetatable(dataset) and dataset.iter and dataset.element_spec then
    local rows = {}
    local f, st, ctl = dataset:iter { prefetch = false }
    while true do
      local e = pack(f(st, ctl))
      if e[1] == nil then break end
      ctl = e[1]
      for c = 1, e.n do
        if not binding.istensor(e[c]) then
          fail(op, "a dataset's elements must be tensors or lists of tensors, got a %s in element %d", type(e[c]),
            #rows + 1)
        end
      end
      rows[#rows + 1] = e
    end
    n = #rows
    columns = {}
    for c = 1, n > 0 and rows[1].n or 0 do
      local col = {}
      for i, e in ipairs(rows) do col[i] = e[c] end
      columns[c] = shape_ops.stack(col)
    end
  else
    local list = binding.istensor(dataset) and { dataset } or dataset
    if type(list) ~= "table" or #list == 0 then
      fail(op, "dataset must be a tide.data.Dataset, a tensor or a list of tensors, got %s", type(dataset))
    end
    columns = {}
    for i, t in ipairs(list) do
      columns[i] = tensor_of(op, "dataset[" .. i .. "]", t)
      if columns[i].shape[1] ~= columns[1].shape[1] then
        fail(op, "the arrays must have one first dim: dataset[1] has %d rows, dataset[%d] %d", columns[1].shape[1], i,
          columns[i].shape[1])
      end
    end
    n = columns[1].shape[1]
  end
  if n < 2 then fail(op, "the dataset has %d element(s): nothing to split", n) end
  local left, lfrac = size_arg(op, "left_size", o.left_size, n)
  local right, rfrac = size_arg(op, "right_size", o.right_size, n)
  if lfrac and rfrac and o.left_size + o.right_size > 1 then fail(op, "left_size + right_size must not exceed 1") end
  left = left or n - right
  right = right or n - left
  if left + right > n then fail(op, "left_size + right_size (%d) must not exceed the %d elements", left + right, n) end
  if left == 0 or right == 0 then fail(op, "a split with %d elements on the %s is empty", 0, left == 0 and "left" or "right") end
  local order = {}
  for i = 1, n do order[i] = i - 1 end
  if o.shuffle then
    local p = numpy_shuffle.permutation(n, o.seed == nil and default_seed() or o.seed)
    local sh = {}
    for i, k in ipairs(p) do sh[i] = order[k] end
    order = sh
  end
  local function part(lo, hi)
    local idx = {}
    for i = lo, hi do idx[#idx + 1] = order[i] end
    local it = convert.tensor(idx, "int64", op)
    local cols = {}
    for c, col in ipairs(columns) do cols[c] = shape_ops.gather(col, it) end
    return Dataset.from_tensor_slices(#cols == 1 and cols[1] or cols)
  end
  return part(1, left), part(n - right + 1, n)
end

return M
