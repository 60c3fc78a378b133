-- stdlib/tide/layers/preprocessing/categorical.lua — Keras 3's numeric categorical layers: CategoryEncoding
-- (one_hot, multi_hot, count with count_weights) and Discretization (bin_boundaries, or adapt with num_bins).
-- Compositions of registry ops (one_hot, reductions, comparisons), so they trace and run in tide.data maps.
local binding = require "tide.binding"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local layer = require "tide.layers.layer"
local ffi = binding.ffi

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local ENCODE_MODES = { one_hot = true, multi_hot = true, count = true }

-- Keras's encode_categorical_inputs: integer ids -> one_hot (a trailing axis of 1 dropped), or
-- multi_hot / count over the last axis (a rank-1 input is one sample). Ids outside [0, depth) count
-- for nothing, as Keras's TF backend (one_hot's zero row, bincount's maxlength).
local function encode(x, mode, depth, dt, count_weights)
  if x.ndim == 0 then x = shape_ops.expand_dims(x, -1) end
  if mode == "one_hot" then
    if x.ndim > 1 and x.shape[x.ndim] == 1 then x = shape_ops.squeeze(x, { x.ndim - 1 }) end
    return shape_ops.one_hot(x, depth, { dtype = dt })
  end
  local oh = shape_ops.one_hot(x, depth, { dtype = dt })
  if mode == "multi_hot" then return reduce_ops.reduce_max(oh, -2) end
  if count_weights ~= nil then
    oh = math_ops.mul(oh, shape_ops.expand_dims(math_ops.cast(count_weights, dt), -1))
  end
  return reduce_ops.reduce_sum(oh, -2)
end
M.encode = encode

local function check_mode(self, mode, allowed)
  if not allowed[mode] then
    local names = {}
    for k in pairs(allowed) do names[#names + 1] = '"' .. k .. '"' end
    table.sort(names)
    binding.error(fmt("%s: output_mode must be one of %s, got %s", who(self), table.concat(names, ", "),
      tostring(mode)))
  end
end

local function int_ids(self, x)
  x = convert.tensor(x)
  local name = tostring(x.dtype)
  if not name:match("int") then
    binding.error(fmt("%s: expected integer ids, got dtype %s", who(self), name))
  end
  return x
end

-- CategoryEncoding{num_tokens, output_mode="multi_hot", sparse=false}; call(ids, {count_weights=}).
local CategoryEncoding = Layer:extend("CategoryEncoding")
M.CategoryEncoding = CategoryEncoding
function CategoryEncoding:init(...)
  local o = self:_kwargs({ "num_tokens", "output_mode", "sparse" }, ...)
  if type(o.num_tokens) ~= "number" or o.num_tokens < 1 or o.num_tokens % 1 ~= 0 then
    binding.error(fmt("%s: num_tokens must be a positive integer, got %s", who(self), tostring(o.num_tokens)))
  end
  self.num_tokens = o.num_tokens
  self.output_mode = o.output_mode or "multi_hot"
  check_mode(self, self.output_mode, ENCODE_MODES)
  if o.sparse then binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self))) end
  self.sparse = false
end
function CategoryEncoding:call(x, opts)
  local w = type(opts) == "table" and opts.count_weights or nil
  if w ~= nil and self.output_mode ~= "count" then
    binding.error(fmt('%s: count_weights is only for output_mode "count", not "%s"', who(self), self.output_mode))
  end
  return encode(int_ids(self, x), self.output_mode, self.num_tokens, self.compute_dtype, w)
end
function CategoryEncoding:get_config()
  local c = Layer.get_config(self)
  c.num_tokens, c.output_mode, c.sparse = self.num_tokens, self.output_mode, nil
  return c
end

---------------------------------------------------------------------------
-- Discretization, and Keras's quantile summaries for its adapt
---------------------------------------------------------------------------

local function f32(v) return tonumber(ffi.cast("float", v)) end

-- np.interp(xs, xp, fp) for increasing xp (ties: numpy takes the last equal point's right side).
local function interp(x, xp, fp)
  local n = #xp
  if x <= xp[1] then return fp[1] end
  if x >= xp[n] then return fp[n] end
  local lo, hi = 1, n
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if xp[mid] <= x then lo = mid else hi = mid end
  end
  local dx = xp[hi] - xp[lo]
  if dx == 0 then return fp[lo] end
  return fp[lo] + (x - xp[lo]) * (fp[hi] - fp[lo]) / dx
end

-- Keras's compress_summary: a summary {values, weights} down to 1/epsilon bins (float32 results).
local function compress(s, epsilon)
  local n = #s[1]
  if n * epsilon < 1 then return s end
  local percents, p = {}, 0.0
  local count = 0
  while p < 1.0 do   -- np.arange(0.0, 1.0, epsilon): ceil(1/epsilon) points i*epsilon
    count = count + 1
    p = count * epsilon
  end
  for i = 0, count - 1 do percents[#percents + 1] = epsilon + i * epsilon end
  local cum, total = {}, 0
  for i = 1, n do total = total + s[2][i]; cum[i] = total end
  local pct = {}
  for i = 1, n do pct[i] = cum[i] / cum[n] end
  local vals, ws, prev = {}, {}, 0
  for i, q in ipairs(percents) do
    vals[i] = f32(interp(q, pct, s[1]))
    local c = interp(q, pct, cum)
    ws[i] = f32(c - prev)
    prev = c
  end
  return { vals, ws }
end

-- Keras's summarize: every step-th sorted value (from step - 1), each weighing step.
local function summarize(values, epsilon)
  table.sort(values)
  local n = #values
  local step = math.max(n / (1.0 / epsilon), 1)
  local istep = math.floor(step)
  local vals, ws = {}, {}
  for i = math.floor(step - 1) + 1, n, istep do
    vals[#vals + 1] = values[i]
    ws[#ws + 1] = step
  end
  return { vals, ws }
end

-- merge_summaries: concatenated, sorted by value (stable, as numpy's argsort on these small arrays
-- is not guaranteed to be: ties keep the new summary's first, as np.concatenate's order), compressed.
local function merge(a, b, epsilon)
  local items = {}
  for i = 1, #a[1] do items[#items + 1] = { a[1][i], a[2][i], #items } end
  for i = 1, #b[1] do items[#items + 1] = { b[1][i], b[2][i], #items } end
  table.sort(items, function(p, q) if p[1] ~= q[1] then return p[1] < q[1] end return p[3] < q[3] end)
  local s = { {}, {} }
  for i, it in ipairs(items) do s[1][i], s[2][i] = it[1], it[2] end
  return compress(s, epsilon)
end

-- The float32 values of one adapt batch, flattened.
local function batch_values(self, b)
  local t = convert.tensor(b)
  t = math_ops.cast(t, "float32")
  local flat = tensor.totable(shape_ops.reshape(t, { -1 }))
  for i, v in ipairs(flat) do
    if v ~= v then binding.error(fmt("%s: adapt: the data holds NaN", who(self))) end
    flat[i] = v
  end
  return flat
end

-- The batches of adapt's data: a tide.data dataset (its elements), a list of batches
-- ({tensor, tensor, ...}), or one tensor / nested list of numbers.
local function each_batch(data, steps, fn)
  if type(data) == "table" and type(data.iter) == "function" and data.kind ~= nil then
    local i = 0
    for b in data:iter() do
      i = i + 1
      if steps and i > steps then break end
      fn(b)
    end
  elseif type(data) == "table" and #data > 0 and type(data[1]) ~= "number" and type(data[1]) ~= "table" then
    for i, b in ipairs(data) do
      if steps and i > steps then break end
      fn(b)
    end
  else
    fn(data)
  end
end
M.each_batch = each_batch

local DISC_MODES = { int = true, one_hot = true, multi_hot = true, count = true }

-- Discretization{bin_boundaries, num_bins, epsilon=0.01, output_mode="int", sparse=false, dtype}:
-- the bucket of each value (np.digitize: how many boundaries are <= it), then encoded.
local Discretization = Layer:extend("Discretization")
M.Discretization = Discretization
function Discretization:init(...)
  local o = self:_kwargs({ "bin_boundaries", "num_bins", "epsilon", "output_mode", "sparse" }, ...)
  self.output_mode = o.output_mode or "int"
  check_mode(self, self.output_mode, DISC_MODES)
  if o.sparse then binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self))) end
  -- both come back in an adapted layer's config: Keras accepts them when they agree
  if o.bin_boundaries ~= nil and o.num_bins ~= nil and type(o.bin_boundaries) == "table"
      and #o.bin_boundaries ~= o.num_bins - 1 then
    binding.error(fmt("%s: bin_boundaries (%d values) and num_bins (%s) disagree: num_bins - 1 boundaries expected",
      who(self), #o.bin_boundaries, tostring(o.num_bins)))
  end
  if o.bin_boundaries ~= nil then
    if type(o.bin_boundaries) ~= "table" then
      binding.error(fmt("%s: bin_boundaries must be a list of numbers, got %s", who(self), tostring(o.bin_boundaries)))
    end
    for i, b in ipairs(o.bin_boundaries) do
      if type(b) ~= "number" then
        binding.error(fmt("%s: bin_boundaries[%d] must be a number, got %s", who(self), i, tostring(b)))
      end
      if i > 1 and b < o.bin_boundaries[i - 1] then
        binding.error(fmt("%s: bin_boundaries must be sorted, got %s after %s", who(self), b, o.bin_boundaries[i - 1]))
      end
    end
  end
  if o.num_bins ~= nil and (type(o.num_bins) ~= "number" or o.num_bins < 1 or o.num_bins % 1 ~= 0) then
    binding.error(fmt("%s: num_bins must be a positive integer, got %s", who(self), tostring(o.num_bins)))
  end
  self.bin_boundaries, self.num_bins = o.bin_boundaries, o.num_bins
  self.epsilon = o.epsilon or 0.01
  if type(self.epsilon) ~= "number" or self.epsilon <= 0 or self.epsilon > 1 then
    binding.error(fmt("%s: epsilon must be a number in (0, 1], got %s", who(self), tostring(self.epsilon)))
  end
  self.sparse = false
  -- Keras: int32 ids in "int" mode, the layer's float dtype otherwise
  self.output_dtype = self.output_mode == "int" and "int32" or "float32"
end

-- adapt(data, {steps=}): Keras's quantile summary over every batch, then num_bins - 1 boundaries.
function Discretization:adapt(data, opts)
  if self.num_bins == nil then
    binding.error(fmt("%s: adapt needs num_bins (the layer was made with bin_boundaries)", who(self)))
  end
  local steps = type(opts) == "table" and opts.steps or nil
  local summary = { {}, {} }
  local eps = self.epsilon
  each_batch(data, steps, function(b)
    summary = merge(summarize(batch_values(self, b), eps), summary, eps)
  end)
  if #summary[1] == 0 then binding.error(fmt("%s: adapt: the data is empty", who(self))) end
  local s = compress(summary, 1.0 / self.num_bins)
  local bounds = {}
  for i = 1, #s[1] - 1 do bounds[i] = s[1][i] end
  self.bin_boundaries = bounds
end

function Discretization:call(x)
  if self.bin_boundaries == nil then
    binding.error(fmt("%s: pass bin_boundaries, or call adapt, before calling the layer", who(self)))
  end
  x = convert.tensor(x)
  local bounds = self.bin_boundaries
  local ids
  if #bounds == 0 then
    ids = math_ops.cast(math_ops.mul(x, 0), "int32")
  else
    local b = convert.tensor(bounds, tostring(x.dtype):match("float") and tostring(x.dtype) or "float32")
    local xf = math_ops.cast(x, tostring(b.dtype))
    ids = reduce_ops.reduce_sum(math_ops.cast(math_ops.greater_equal(shape_ops.expand_dims(xf, -1), b), "int32"), -1)
  end
  if self.output_mode == "int" then return ids end
  return encode(ids, self.output_mode, #bounds + 1, "float32")
end
function Discretization:get_config()
  local c = Layer.get_config(self)
  c.bin_boundaries, c.num_bins, c.epsilon = self.bin_boundaries, self.num_bins, self.epsilon
  c.output_mode, c.sparse = self.output_mode, false
  return c
end

return M
