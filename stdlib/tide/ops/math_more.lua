-- stdlib/tide/ops/math_more.lua — the rest of tf.math as compositions of tide ops (no kernels of
-- their own; the tape differentiates the ops they call): add_n, lbeta, erfcinv, polyval, bincount, ...
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local create = require "tide.ops.create"
local segment = require "tide.ops.segment"

local M = {}
local fmt = string.format

local function arg(op, x, what) return convert.arg(x, op .. " (" .. what .. ")") end

local function check_float(op, x, what)
  if not dtype.is_float[x.dt] then
    binding.error(fmt("%s: %s must be a float tensor, got %s", op, what, dtype.names[x.dt]))
  end
end

local function check_int(op, x, what)
  if not dtype.is_int[x.dt] then
    binding.error(fmt("%s: %s must be an integer tensor, got %s", op, what, dtype.names[x.dt]))
  end
end

-- add_n(inputs): the elementwise sum of a non-empty list of tensors of one shape and dtype (TF's add_n,
-- which does not broadcast). accumulate_n(inputs, shape=, tensor_dtype=) is TF's deprecated twin.
function M.add_n(inputs)
  if type(inputs) ~= "table" or binding.istensor(inputs) then inputs = { inputs } end
  if #inputs == 0 then binding.error("add_n: inputs must be a non-empty list of tensors") end
  local acc = arg("add_n", inputs[1], "inputs[1]")
  for i = 2, #inputs do
    local x = arg("add_n", inputs[i], "inputs[" .. i .. "]")
    if x.dt ~= acc.dt then
      binding.error(fmt("add_n: inputs[%d] is %s but inputs[1] is %s", i, dtype.names[x.dt], dtype.names[acc.dt]))
    end
    if acc.ndim >= 0 and x.ndim >= 0 and acc.shape ~= x.shape then
      binding.error(fmt("add_n: inputs[%d] has shape %s but inputs[1] has %s (add_n does not broadcast)", i,
        tostring(x.shape), tostring(acc.shape)))
    end
    acc = m.add(acc, x)
  end
  return acc
end
function M.accumulate_n(inputs) return M.add_n(inputs) end

-- scalar_mul(scalar, x): x times a scalar (a Lua number or a 0-d tensor).
function M.scalar_mul(scalar, x)
  if binding.istensor(scalar) and scalar.ndim > 0 then
    binding.error(fmt("scalar_mul: scalar must be a 0-d tensor or a number, got shape %s", tostring(scalar.shape)))
  end
  return m.mul(scalar, x)
end

-- reciprocal_no_nan(x): 1 / x, 0 where x is 0.
function M.reciprocal_no_nan(x)
  x = arg("reciprocal_no_nan", x, "x")
  check_float("reciprocal_no_nan", x, "x")
  return m.divide_no_nan(create.ones_like(x), x)
end

-- lbeta(x): log|B(x)| over the last dim: sum(lgamma(x)) - lgamma(sum(x)) (TF's; 0-d x is an error).
function M.lbeta(x)
  x = arg("lbeta", x, "x")
  check_float("lbeta", x, "x")
  if x.ndim == 0 then binding.error("lbeta: x must have at least one dim (the last is reduced)") end
  return m.sub(reduce.reduce_sum(m.lgamma(x), -1), m.lgamma(reduce.reduce_sum(x, -1)))
end

-- erfcinv(x): the inverse of erfc, -ndtri(x / 2) / sqrt 2 (TF's).
function M.erfcinv(x)
  x = arg("erfcinv", x, "x")
  check_float("erfcinv", x, "x")
  return m.mul(m.ndtri(m.mul(x, 0.5)), -math.sqrt(0.5))
end

-- polyval(coeffs, x): coeffs[1] x^(n-1) + ... + coeffs[n] by Horner's rule; no coefficients give zeros.
function M.polyval(coeffs, x)
  if type(coeffs) ~= "table" or binding.istensor(coeffs) then
    binding.error("polyval: coeffs must be a list of tensors or numbers (highest power first)")
  end
  x = arg("polyval", x, "x")
  if #coeffs == 0 then return create.zeros_like(x) end
  local p = m.add(create.zeros_like(x), coeffs[1])
  for i = 2, #coeffs do p = m.add(m.mul(p, x), coeffs[i]) end
  return p
end

-- is_non_decreasing(x), is_strictly_increasing(x): over x's elements in row-major order (a bool scalar;
-- true for fewer than two elements).
local function monotone(op, x, strict)
  x = arg(op, x, "x")
  if x.ndim >= 0 and tonumber(x.nelem) < 2 then return convert.tensor(true, "bool", op) end
  local flat = shape.reshape(x, { -1 })
  local a, b = flat:slice { { 1, nil } }, flat:slice { { nil, -1 } }
  return reduce.reduce_all(strict and m.greater(a, b) or m.greater_equal(a, b))
end
function M.is_non_decreasing(x) return monotone("is_non_decreasing", x, false) end
function M.is_strictly_increasing(x) return monotone("is_strictly_increasing", x, true) end

-- zero_fraction(value): the fraction of zeros, a float32 scalar (TF's; NaN for an empty tensor).
function M.zero_fraction(value)
  value = arg("zero_fraction", value, "value")
  return reduce.reduce_mean(m.cast(m.equal(value, 0), "float32"))
end

-- invert_permutation(x): y with y[x[i]] = i, for a 1-D int32/int64 permutation of 0 .. n-1.
function M.invert_permutation(x)
  local op = "invert_permutation"
  x = arg(op, x, "x")
  if x.dt ~= binding.C.TIDE_INT32 and x.dt ~= binding.C.TIDE_INT64 then
    binding.error(fmt("%s: x must be int32 or int64, got %s", op, dtype.names[x.dt]))
  end
  if x.ndim ~= 1 and x.ndim >= 0 then binding.error(fmt("%s: x must be 1-D, got shape %s", op, tostring(x.shape))) end
  if not tensor.is_symbolic(x) then -- TF's check: each of 0 .. n-1 once
    local v, n, seen = x:totable(), #x:totable(), {}
    for i = 1, n do
      local e = v[i]
      if e < 0 or e >= n then binding.error(fmt("%s: %d is not between 0 and %d", op, e, n)) end
      if seen[e] then binding.error(fmt("%s: %d is duplicated in the input", op, e)) end
      seen[e] = true
    end
  end
  if tensor.is_symbolic(x) or x.ndim < 0 then
    binding.error(op .. ": needs an eager x (its size is the result's)")
  end
  local n = tonumber(x.dims[0])
  return segment.unsorted_segment_sum(create.range(n, { dtype = dtype.names[x.dt] }), x, n)
end

-- in_top_k(targets, predictions, k): whether predictions[i, targets[i]] is among row i's k largest
-- (TF's rule: fewer than k entries are strictly larger, so ties count in; a non-finite prediction or a
-- target out of range is false).
function M.in_top_k(targets, predictions, k)
  local op = "in_top_k"
  targets, predictions = arg(op, targets, "targets"), arg(op, predictions, "predictions")
  check_int(op, targets, "targets")
  check_float(op, predictions, "predictions")
  if predictions.ndim >= 0 and predictions.ndim ~= 2 then
    binding.error(fmt("%s: predictions must be 2-D [batch, classes], got shape %s", op, tostring(predictions.shape)))
  end
  if targets.ndim >= 0 and targets.ndim ~= 1 then
    binding.error(fmt("%s: targets must be 1-D [batch], got shape %s", op, tostring(targets.shape)))
  end
  k = args.int(op, "k", k)
  local classes = predictions.dims[1]
  local inside = m.logical_and(m.greater_equal(targets, 0), m.less(targets, classes))
  local safe = m.where(inside, targets, 0)
  local p = shape.gather(predictions, shape.expand_dims(safe, 1), { axis = 1, batch_dims = 1 }) -- [batch, 1]
  local larger = reduce.reduce_sum(m.cast(m.greater(predictions, p), "int32"), 1)
  local finite = m.isfinite(shape.squeeze(p, 1))
  return m.logical_and(m.logical_and(m.less(larger, k), finite), inside)
end

-- bincount(arr, weights=nil, minlength=nil, maxlength=nil, dtype="int32"): the count of each value
-- 0 .. n-1 in arr (n = max(arr) + 1, at least minlength, at most maxlength; larger values dropped), or the
-- sum of their weights (of weights' dtype). Negative values are an error, as TF's.
function M.bincount(arr, ...)
  local op = "bincount"
  local o = args.parse(op, { "weights", "minlength", "maxlength", "dtype", "name", "axis", "binary_output" }, ...)
  arr = arg(op, arr, "arr")
  check_int(op, arr, "arr")
  if o.axis ~= nil and o.axis ~= -1 and o.axis ~= 0 then binding.error(op .. ": axis must be nil, 0 or -1") end
  local flat = arr
  if o.axis == -1 and arr.ndim == 2 then binding.error(op .. ": axis=-1 (per row) is not supported; count each row") end
  flat = shape.reshape(arr, { -1 })
  local vals = flat:totable()
  local n = 0
  for _, v in ipairs(vals) do
    if v < 0 then binding.error(fmt("%s: arr must be non-negative, got %d", op, v)) end
    if v + 1 > n then n = v + 1 end
  end
  if o.minlength ~= nil then n = math.max(n, args.int(op, "minlength", o.minlength)) end
  if o.maxlength ~= nil then n = math.min(n, args.int(op, "maxlength", o.maxlength)) end
  local ids = m.cast(flat, "int32")
  if o.maxlength ~= nil then ids = m.where(m.less(ids, n), ids, -1) end -- dropped
  local w
  if o.weights ~= nil then
    local wt = arg(op, o.weights, "weights")
    if not tensor.is_symbolic(wt) and tostring(wt.shape) ~= tostring(arr.shape) then
      binding.error(fmt("%s: weights must have arr's shape %s, got %s", op, tostring(arr.shape), tostring(wt.shape)))
    end
    w = shape.reshape(wt, { -1 })
  else
    w = create.ones_like(ids, o.dtype or "int32")
  end
  local counts = segment.unsorted_segment_sum(w, ids, n)
  if o.binary_output then counts = m.cast(m.greater(counts, 0), dtype.names[counts.dt]) end
  return counts
end

-- confusion_matrix(labels, predictions, num_classes=nil, weights=nil, dtype="int32"): [n, n], entry
-- [i, j] counting (or weighing) the examples with label i predicted j.
function M.confusion_matrix(labels, predictions, ...)
  local op = "confusion_matrix"
  local o = args.parse(op, { "num_classes", "weights", "dtype", "name" }, ...)
  labels, predictions = arg(op, labels, "labels"), arg(op, predictions, "predictions")
  check_int(op, labels, "labels")
  check_int(op, predictions, "predictions")
  labels, predictions = shape.reshape(m.cast(labels, "int32"), { -1 }), shape.reshape(m.cast(predictions, "int32"), { -1 })
  local lv, pv = labels:totable(), predictions:totable()
  if #lv ~= #pv then binding.error(fmt("%s: labels has %d values but predictions %d", op, #lv, #pv)) end
  local n
  if o.num_classes ~= nil then
    n = args.int(op, "num_classes", o.num_classes)
  else
    n = 0
    for i = 1, #lv do n = math.max(n, lv[i] + 1, pv[i] + 1) end
  end
  for i = 1, #lv do
    if lv[i] < 0 or pv[i] < 0 then binding.error(fmt("%s: labels and predictions must be non-negative", op)) end
    if lv[i] >= n or pv[i] >= n then
      binding.error(fmt("%s: labels and predictions must be below num_classes %d, got %d and %d", op, n, lv[i], pv[i]))
    end
  end
  local w = o.weights ~= nil and shape.reshape(m.cast(arg(op, o.weights, "weights"), o.dtype or "int32"), { -1 })
    or create.ones_like(labels, o.dtype or "int32")
  local cells = segment.unsorted_segment_sum(w, m.add(m.mul(labels, n), predictions), n * n)
  return shape.reshape(cells, { n, n })
end

-- real(x), imag(x), conj(x) of a real tensor (tide has no complex dtypes): x, zeros and x, as TF's.
function M.real(x) return arg("real", x, "x") end
function M.conj(x) return arg("conj", x, "x") end
function M.imag(x) return create.zeros_like(arg("imag", x, "x")) end

-- angle(x) of a real tensor: pi where x < 0, else 0 (TF's for real inputs).
function M.angle(x)
  x = arg("angle", x, "x")
  check_float("angle", x, "x")
  return m.where(m.less(x, 0), m.add(create.zeros_like(x), math.pi), create.zeros_like(x))
end

-- approx_max_k(operand, k, reduction_dimension=-1, ...), approx_min_k: the exact k largest (smallest)
-- values along reduction_dimension and their int32 indices (TF's approximate search on TPUs; on CPUs
-- TF computes them exactly too). recall_target and the rest are accepted and have nothing to tune.
local function approx_k(op, largest)
  return function(operand, k, ...)
    local o = args.parse(op, { "reduction_dimension", "recall_target", "reduction_input_size_override",
      "aggregate_to_topk" }, ...)
    local x = arg(op, operand, "operand")
    k = args.int(op, "k", k)
    if x.ndim < 1 then binding.error(fmt("%s: operand must have at least one dim, got shape %s", op, tostring(x.shape))) end
    local dim = o.reduction_dimension == nil and -1 or args.int(op, "reduction_dimension", o.reduction_dimension)
    if dim < -x.ndim or dim >= x.ndim then
      binding.error(fmt("%s: reduction_dimension %d is out of range for rank %d", op, dim, x.ndim))
    end
    if dim < 0 then dim = dim + x.ndim end
    local perm = {}
    for i = 0, x.ndim - 1 do perm[#perm + 1] = i end
    perm[dim + 1], perm[x.ndim] = x.ndim - 1, dim -- swap dim and the last: its own inverse
    local t = dim == x.ndim - 1 and x or shape.transpose(x, perm)
    local v, i
    if largest then v, i = reduce.top_k(t, k) else
      v, i = reduce.top_k(m.neg(t), k)
      v = m.neg(v)
    end
    if dim ~= x.ndim - 1 then v, i = shape.transpose(v, perm), shape.transpose(i, perm) end
    return v, i
  end
end
M.approx_max_k = approx_k("approx_max_k", true)
M.approx_min_k = approx_k("approx_min_k", false)

return M
