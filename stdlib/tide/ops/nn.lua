-- stdlib/tide/ops/nn.lua — tf.nn's neural-network ops other than convolution
-- and pooling: softmax and its cross-entropies, losses, normalization, dropout,
-- bias_add and embedding_lookup, with TF's argument order and one options table.
-- softmax, log_softmax and the sparse cross-entropy are C ops; the rest are
-- compositions of tide ops, so their gradients come from their primitives.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local format = require "tide.format"
local m = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local shape = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local random = require "tide.random"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local SOFTMAX, LOG_SOFTMAX, SPARSE_XENT = C.TIDE_OP_SOFTMAX, C.TIDE_OP_LOG_SOFTMAX, C.TIDE_OP_SPARSE_SOFTMAX_XENT
local F32, I32, I64 = C.TIDE_FLOAT32, C.TIDE_INT32, C.TIDE_INT64

local fmt = string.format
local sparse_xent_unknown_rank, bias_add_unknown_rank, layer_norm_unknown_rank -- below

---------------------------------------------------------------------------
-- Argument helpers
---------------------------------------------------------------------------

-- "(2, 3)": t's shape for messages.
local function shape_text(t) return format.shape_text(tensor.shape_of(t)) end

-- The dims of t as a Lua list (t's rank must be known).
local function dims(t)
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end

-- A tensor argument (Variables are read, numbers and tables convert); nil is an error.
local function input(op, v, what, pos)
  if istype(Tensor, v) then return v end
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what)) end
  return convert.arg(v, op, pos)
end

-- A second argument taking `like`'s dtype when it is a Lua number or table.
local function input_like(op, v, like, what, pos)
  if istype(Tensor, v) then return v end
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what)) end
  return convert.coerce(v, like, op, pos)
end

-- An error unless t is a float tensor.
local function check_float(op, t, what)
  if not dtype.is_float[t.dt] then
    binding.error(fmt("%s: %s must be a float tensor, got %s (use :cast(\"float32\"))", op, what, dtype.names[t.dt]))
  end
end

-- An error unless a and b have one dtype.
local function check_same_dtype(op, a, an, b, bn)
  if a.dt ~= b.dt then
    binding.error(fmt("%s: %s (%s) and %s (%s) must have the same dtype (use :cast(\"%s\"))", op, an,
      dtype.names[a.dt], bn, dtype.names[b.dt], dtype.names[b.dt]))
  end
end

-- An error unless a and b have one shape (an unknown dim of a traced tensor,
-- -1, matches any, and an unknown rank any shape: TF's is_compatible_with).
local function check_same_shape(op, a, an, b, bn)
  if a.ndim < 0 or b.ndim < 0 then return end
  local same = a.ndim == b.ndim
  for i = 0, a.ndim - 1 do
    if not same then break end
    same = a.dims[i] == b.dims[i] or a.dims[i] < 0 or b.dims[i] < 0
  end
  if not same then
    binding.error(fmt("%s: %s and %s must have the same shape, got %s and %s", op, an, bn, shape_text(a), shape_text(b)))
  end
end

-- The error for `op`, which needs the rank of `what` while tracing, when it
-- is unknown until the graph runs (a TensorSpec of shape nil).
local function needs_rank(op, what, why)
  binding.error(fmt("%s: %s has an unknown rank (shape <unknown>) until the traced function runs, and %s; give " ..
    "the input_signature a shape with this rank (tide.None for unknown dims)", op, what, why))
end

-- An integer (a Lua number or a one-element tensor), or `default` when nil.
local function int_arg(op, what, v, default)
  if v == nil then return default end
  if istype(Tensor, v) then v = tensor.item(v) end
  return args.int(op, what, v)
end

-- A Lua number (or one-element tensor), or `default` when nil.
local function number_arg(op, what, v, default)
  if v == nil then
    if default == nil then binding.error(fmt("%s: %s is required", op, what)) end
    return default
  end
  if istype(Tensor, v) then v = tensor.item(v) end
  if type(v) ~= "number" then binding.error(fmt("%s: %s must be a number, got %s", op, what, type(v))) end
  return v
end

-- Axes (a number or list) normalized against rank n, sorted, without repeats.
local function norm_axes(op, what, v, n)
  local list = args.int_list(op, what, v)
  local seen, out = {}, {}
  for _, a in ipairs(list) do
    if a < -n or a >= n then
      binding.error(fmt("%s: %s %d is out of range for rank %d (valid: %d to %d)", op, what, a, n, -n, n - 1))
    end
    if a < 0 then a = a + n end
    if seen[a] then binding.error(fmt("%s: %s %d is repeated", op, what, a)) end
    seen[a] = true
    out[#out + 1] = a
  end
  table.sort(out)
  return out, seen
end

-- The shape a parameter over `axes` of x takes to broadcast against x:
-- x's dims on those axes, 1 elsewhere.
local function param_shape(x, seen)
  local d = dims(x)
  for i = 1, #d do
    if not seen[i - 1] then d[i] = 1 end
  end
  return d
end

-- A parameter (offset, scale, gamma, beta, statistics) reshaped to broadcast
-- over x's `axes`: one of x's rank passes as is; otherwise its element count
-- must match the axes' (a [C] vector for a channel axis anywhere).
local function as_param(op, what, v, x, seen, pos)
  if v == nil then return nil end
  v = input_like(op, v, x, what, pos)
  check_same_dtype(op, v, what, x, "x")
  if v.ndim == x.ndim or v.ndim == 0 then return v end
  local ps = param_shape(x, seen)
  local want, unknown = 1, 0
  for _, d in ipairs(ps) do
    if d < 0 then unknown = unknown + 1 else want = want * d end
  end
  if unknown > 1 then -- (a traced x's None dims) reshape could not tell them apart
    binding.error(fmt("%s: %s has shape %s but x (shape %s) has %d normalized axes of unknown (None) size; " ..
      "give all but one of them a size in the input_signature, or pass %s with x's rank", op, what,
      shape_text(v), shape_text(x), unknown, what))
  end
  if unknown == 0 and tonumber(v.nelem) ~= want or unknown == 1 and (want == 0 or tonumber(v.nelem) % want ~= 0) then
    binding.error(fmt("%s: %s has shape %s but the normalized axes of x (shape %s) hold %s values", op, what,
      shape_text(v), shape_text(x), unknown == 0 and tostring(want) or "a multiple of " .. want))
  end
  return shape.reshape(v, ps) -- one None: reshape's -1 takes the rest
end

---------------------------------------------------------------------------
-- Softmax family (C ops)
---------------------------------------------------------------------------

-- fn(logits, axis=-1) running the C op `op` (softmax or log_softmax).
local function softmax_like(name, op)
  return function(logits, ...)
    local o = args.parse(name, { "axis" }, ...)
    logits = input(name, logits, "logits", 1)
    local axis = int_arg(name, "axis", o.axis, -1)
    local a = dispatch.attrs()
    a.axis = axis
    return dispatch.run1(op, a, logits)
  end
end

-- softmax(logits, axis=-1) as tf.nn.softmax: exp(x - max) / sum(exp(x - max)).
M.softmax = softmax_like("softmax", SOFTMAX)
-- log_softmax(logits, axis=-1) as tf.nn.log_softmax: (x - max) - log(sum(exp(x - max))).
M.log_softmax = softmax_like("log_softmax", LOG_SOFTMAX)

---------------------------------------------------------------------------
-- Cross-entropies
---------------------------------------------------------------------------

-- sigmoid_cross_entropy_with_logits(labels, logits) (or {labels=, logits=}):
-- TF's stable form max(x, 0) - x * z + log(1 + exp(-|x|)), elementwise.
function M.sigmoid_cross_entropy_with_logits(...)
  local op = "sigmoid_cross_entropy_with_logits"
  local o = args.parse(op, { "labels", "logits" }, ...)
  local logits = input(op, o.logits, "logits", 2)
  check_float(op, logits, "logits")
  local labels = input_like(op, o.labels, logits, "labels", 1)
  check_same_dtype(op, labels, "labels", logits, "logits")
  check_same_shape(op, labels, "labels", logits, "logits")
  return m.add(m.sub(m.relu(logits), m.mul(logits, labels)), m.log1p(m.exp(m.neg(m.abs(logits)))))
end

-- softmax_cross_entropy_with_logits(labels, logits, axis=-1) as TF 2's (v2):
-- -sum(labels * log_softmax(logits), axis). Labels (a distribution per row)
-- get gradients too. The gradient on logits is the exact one,
-- softmax * sum(labels) - labels: TF's fused kernel returns softmax - labels,
-- the same whenever each row of labels sums to 1.
function M.softmax_cross_entropy_with_logits(...)
  local op = "softmax_cross_entropy_with_logits"
  local o = args.parse(op, { "labels", "logits", "axis" }, ...)
  local logits = input(op, o.logits, "logits", 2)
  check_float(op, logits, "logits")
  if logits.ndim == 0 then binding.error(op .. ": logits must have at least 1 dimension, got a scalar") end
  local labels = input_like(op, o.labels, logits, "labels", 1)
  check_same_dtype(op, labels, "labels", logits, "logits")
  check_same_shape(op, labels, "labels", logits, "logits")
  local axis = int_arg(op, "axis", o.axis, -1)
  return m.neg(reduce.reduce_sum(m.mul(labels, M.log_softmax(logits, axis)), axis))
end

-- The sparse cross-entropy when a rank is unknown until the graph runs: the
-- shapes are checked then, as TF's runtime assertion does, by broadcasting
-- each input to the shape the other implies (views; both fit only when
-- labels' shape is logits' without its last dim), then flattened to [B, K].
sparse_xent_unknown_rank = function(labels, logits)
  local ls, gs = dynamic_shape.shape(labels), dynamic_shape.shape(logits)
  local classes = gs:slice { { -1, nil } }
  logits = shape.broadcast_to(logits, shape.concat({ ls, classes }, 0))
  labels = shape.broadcast_to(labels, gs:slice { { 0, -1 } })
  local flat_labels = shape.reshape(labels, { -1 })
  local flat_logits = shape.reshape(logits, shape.concat({ dynamic_shape.shape(flat_labels), classes }, 0))
  local loss = dispatch.run(SPARSE_XENT, nil, { flat_labels, flat_logits }, 2)
  return shape.reshape(loss, ls)
end

-- sparse_softmax_cross_entropy_with_logits(labels, logits) as TF: labels
-- int32/int64 of shape [d0, ..., dn-1], each in [0, K) (0-based; others are an
-- error, as TF on CPU), logits [d0, ..., dn-1, K]; the loss has labels' shape.
-- One fused C op on [B, K] gives the loss and its gradient together.
function M.sparse_softmax_cross_entropy_with_logits(...)
  local op = "sparse_softmax_cross_entropy_with_logits"
  local o = args.parse(op, { "labels", "logits" }, ...)
  local logits = input(op, o.logits, "logits", 2)
  check_float(op, logits, "logits")
  local labels = input(op, o.labels, "labels", 1)
  if labels.dt ~= I32 and labels.dt ~= I64 then
    binding.error(fmt("%s: labels must be int32 or int64 class indices, got %s", op, dtype.names[labels.dt]))
  end
  if logits.ndim == 0 then binding.error(op .. ": logits must have at least 1 dimension (the classes), got a scalar") end
  if labels.ndim < 0 or logits.ndim < 0 then return sparse_xent_unknown_rank(labels, logits) end
  local ok = labels.ndim == logits.ndim - 1
  for i = 0, labels.ndim - 1 do   -- an unknown (-1) dim of a traced tensor matches any
    if not ok then break end
    ok = labels.dims[i] == logits.dims[i] or labels.dims[i] < 0 or logits.dims[i] < 0
  end
  if not ok then
    binding.error(fmt("%s: the shape of labels (%s) should equal the shape of logits except for the last " ..
      "dimension (logits have %s)", op, shape_text(labels), shape_text(logits)))
  end
  if labels.ndim == 1 then return (dispatch.run(SPARSE_XENT, nil, { labels, logits }, 2)) end
  local k = tonumber(logits.dims[logits.ndim - 1])
  local ld = dims(labels)
  local flat_labels = shape.reshape(labels, { -1 })
  local flat_logits
  if k >= 0 then flat_logits = shape.reshape(logits, { -1, k })
  else -- the classes are a None dim: [-1, classes] when the graph runs
    local classes = dynamic_shape.shape(logits, { out_type = "int64" })[logits.ndim - 1]
    flat_logits = shape.reshape(logits, shape.stack { convert.tensor(-1, "int64"), classes })
  end
  local loss = dispatch.run(SPARSE_XENT, nil, { flat_labels, flat_logits }, 2)
  local known = true
  for _, d in ipairs(ld) do known = known and d >= 0 end
  return shape.reshape(loss, known and ld or dynamic_shape.shape(labels))
end

---------------------------------------------------------------------------
-- Losses, bias, statistics and normalization
---------------------------------------------------------------------------

-- l2_loss(t) as tf.nn.l2_loss: sum(t ^ 2) / 2, a scalar.
function M.l2_loss(t)
  t = input("l2_loss", t, "t", 1)
  check_float("l2_loss", t, "t")
  return m.div(reduce.reduce_sum(m.square(t)), 2)
end

-- bias_add on a value of unknown rank (channels last): bias is added along
-- the last dim, which must have bias's length: value is reshaped to its own
-- shape with that length last (a view), so another length fails when the
-- graph runs instead of broadcasting; reading its dim -2 there fails for a
-- value of rank < 2, as TF's kernel refuses one.
bias_add_unknown_rank = function(op, value, bias, first)
  if first then
    needs_rank(op, "value", "a channels-first data_format puts bias on dim 1, which needs it")
  end
  if bias.ndim ~= 1 then binding.error(fmt("%s: bias must be 1-D, got shape %s", op, shape_text(bias))) end
  local s = dynamic_shape.shape(value)
  local c = dynamic_shape.shape(bias)
  value = shape.reshape(value, shape.concat({ s:slice { { 0, -2 } }, shape.reshape(s[-2], { 1 }), c }, 0))
  return m.add(value, bias)
end

-- bias_add(value, bias, data_format="NHWC") as tf.nn.bias_add: bias [C] added
-- along the channel dim, the last one ("N...C") or dim 1 ("NC..." formats).
function M.bias_add(value, bias, ...)
  local op = "bias_add"
  local o = args.parse(op, { "data_format" }, ...)
  value = input(op, value, "value", 1)
  bias = input_like(op, bias, value, "bias", 2)
  check_same_dtype(op, bias, "bias", value, "value")
  local df = o.data_format or "NHWC"
  if type(df) ~= "string" or not df:match("^N") or not (df:match("C$") or df:match("^NC")) then
    binding.error(fmt("%s: data_format must be like \"NHWC\" (channels last) or \"NCHW\", got %s", op, tostring(df)))
  end
  local first = df:match("^NC") and #df > 2
  if value.ndim < 0 then return bias_add_unknown_rank(op, value, bias, first) end
  if value.ndim < 2 then
    binding.error(fmt("%s: value must be at least 2-D, got shape %s", op, shape_text(value)))
  end
  if bias.ndim ~= 1 then
    binding.error(fmt("%s: bias must be 1-D, got shape %s", op, shape_text(bias)))
  end
  local cdim = first and 1 or value.ndim - 1
  if bias.dims[0] ~= value.dims[cdim] and value.dims[cdim] >= 0 then   -- unknown (-1): checked at run
    binding.error(fmt("%s: bias has %d values but the channel dim (%d) of value (shape %s) has %d", op,
      tonumber(bias.dims[0]), cdim, shape_text(value), tonumber(value.dims[cdim])))
  end
  if first then
    local bs = { tonumber(bias.dims[0]) }
    for i = 2, value.ndim - 1 do bs[i] = 1 end
    bias = shape.reshape(bias, bs)
  end
  return m.add(value, bias)
end

-- moments(x, axes, shift=nil, keepdims=false) as tf.nn.moments: the mean and
-- the (biased) variance over axes. float16/bfloat16 compute in float32, as TF.
-- TF stops the gradient through the mean inside the variance; that changes
-- nothing at first order and is not done here, so higher orders stay exact.
function M.moments(x, ...)
  local op = "moments"
  local o = args.parse(op, { "axes", "shift", "keepdims" }, ...)
  x = input(op, x, "x", 1)
  check_float(op, x, "x")
  if o.axes == nil then binding.error(op .. ": axes is required (a list of axes to reduce)") end
  -- an unknown rank: the axes as given (normalized, and checked, when the graph runs)
  local axes = x.ndim < 0 and args.int_list(op, "axes", o.axes) or norm_axes(op, "axes", o.axes, x.ndim)
  local keep = args.bool(op, "keepdims", o.keepdims, false)
  local half = x.dt ~= F32 and x.dt ~= C.TIDE_FLOAT64
  local xc = half and m.cast(x, "float32") or x
  local mean = reduce.reduce_mean(xc, axes, true)
  local var = reduce.reduce_mean(m.square(m.sub(xc, mean)), axes, keep)
  if not keep and x.ndim < 0 then
    mean = reduce.reduce_sum(mean, axes, false) -- summing the kept size-1 dims away: the shape without them
  elseif not keep then
    local d, drop = dims(x), {}
    for _, a in ipairs(axes) do drop[a + 1] = true end
    local kept = {}
    for i = 1, #d do
      if not drop[i] then kept[#kept + 1] = d[i] end
    end
    mean = shape.reshape(mean, kept)
  end
  if half then
    local name = dtype.names[x.dt]
    mean, var = m.cast(mean, name), m.cast(var, name)
  end
  return mean, var
end

-- batch_normalization(x, mean, variance, offset, scale, variance_epsilon) as
-- tf.nn.batch_normalization: (x - mean) * scale / sqrt(variance + eps) + offset,
-- computed as TF does (x * inv + (offset - mean * inv)); offset and scale may be nil.
function M.batch_normalization(x, mean, variance, offset, scale, variance_epsilon)
  local op = "batch_normalization"
  x = input(op, x, "x", 1)
  check_float(op, x, "x")
  mean = input_like(op, mean, x, "mean", 2)
  variance = input_like(op, variance, x, "variance", 3)
  local eps = number_arg(op, "variance_epsilon", variance_epsilon)
  local inv = m.rsqrt(m.add(variance, eps))
  if scale ~= nil then inv = m.mul(inv, input_like(op, scale, x, "scale", 5)) end
  local shift = m.mul(mean, inv)
  if offset ~= nil then shift = m.sub(input_like(op, offset, x, "offset", 4), shift) else shift = m.neg(shift) end
  return m.add(m.mul(x, inv), shift)
end

-- batch_norm(x, {training=false, moving_mean=, moving_variance=, offset=,
-- scale=, epsilon=1e-3, axis=-1}): normalize each channel (the axis, or list
-- of axes, kept) over the other axes. training=true uses the batch statistics
-- and returns y, batch_mean, batch_variance (the biased variance, as Keras
-- feeds its moving averages); training=false (the default, as Keras layers
-- called directly) uses moving_mean/moving_variance, which are then required.
function M.batch_norm(x, ...)
  local op = "batch_norm"
  local o = args.parse(op, { "training", "moving_mean", "moving_variance", "offset", "scale", "epsilon", "axis" }, ...)
  x = input(op, x, "x", 1)
  check_float(op, x, "x")
  if x.ndim == 0 then binding.error(op .. ": x must have at least 1 dimension, got a scalar") end
  if x.ndim < 0 then needs_rank(op, "x", "the statistics are reduced over every axis but the channel axes") end
  local training = args.bool(op, "training", o.training, false)
  local eps = number_arg(op, "epsilon", o.epsilon, 1e-3)
  local keep, seen = norm_axes(op, "axis", o.axis == nil and -1 or o.axis, x.ndim)
  local red = {}
  for i = 0, x.ndim - 1 do
    if not seen[i] then red[#red + 1] = i end
  end
  local offset = as_param(op, "offset", o.offset, x, seen)
  local scale = as_param(op, "scale", o.scale, x, seen)
  if training then
    local mean, var = M.moments(x, { axes = red, keepdims = true })
    local y = M.batch_normalization(x, mean, var, offset, scale, eps)
    local ps = {}
    for _, a in ipairs(keep) do ps[#ps + 1] = tonumber(x.dims[a]) end
    return y, shape.reshape(mean, ps), shape.reshape(var, ps)
  end
  if o.moving_mean == nil or o.moving_variance == nil then
    binding.error(op .. ": inference (training=false, the default) needs moving_mean and moving_variance; " ..
      "pass training=true to normalize with the batch statistics")
  end
  local mean = as_param(op, "moving_mean", o.moving_mean, x, seen)
  local var = as_param(op, "moving_variance", o.moving_variance, x, seen)
  return M.batch_normalization(x, mean, var, offset, scale, eps)
end

-- layer_norm of x of unknown rank: axes counted from the end, the last k of
-- them (-k .. -1), so that gamma and beta of rank k (or scalars) broadcast
-- over them as they are.
layer_norm_unknown_rank = function(op, x, o)
  local axes = args.int_list(op, "axis", o.axis == nil and -1 or o.axis)
  table.sort(axes)
  for i, a in ipairs(axes) do
    if a ~= i - 1 - #axes then
      needs_rank(op, "x", "the axes must then be the last ones counted from the end ({-1}, {-2, -1}, ...) for " ..
        "gamma and beta to line up with them")
    end
  end
  local eps = number_arg(op, "epsilon", o.epsilon, 1e-3)
  local function param(v, what, pos)
    if v == nil then return nil end
    v = input_like(op, v, x, what, pos)
    check_same_dtype(op, v, what, x, "x")
    if v.ndim ~= 0 and v.ndim ~= #axes then
      binding.error(fmt("%s: %s has shape %s; with x of unknown rank it must have one dim per normalized axis (%d)",
        op, what, shape_text(v), #axes))
    end
    return v
  end
  local gamma, beta = param(o.gamma, "gamma", 2), param(o.beta, "beta", 3)
  local mean, var = M.moments(x, { axes = axes, keepdims = true })
  return M.batch_normalization(x, mean, var, beta, gamma, eps)
end

-- layer_norm(x, {axis=-1, gamma=, beta=, epsilon=1e-3}) as Keras'
-- LayerNormalization: each sample normalized over `axis` (a number or list),
-- then scaled by gamma and shifted by beta (shaped like those axes' dims).
function M.layer_norm(x, ...)
  local op = "layer_norm"
  local o = args.parse(op, { "axis", "gamma", "beta", "epsilon" }, ...)
  x = input(op, x, "x", 1)
  check_float(op, x, "x")
  if x.ndim == 0 then binding.error(op .. ": x must have at least 1 dimension, got a scalar") end
  if x.ndim < 0 then return layer_norm_unknown_rank(op, x, o) end
  local axes, seen = norm_axes(op, "axis", o.axis == nil and -1 or o.axis, x.ndim)
  local eps = number_arg(op, "epsilon", o.epsilon, 1e-3)
  local gamma = as_param(op, "gamma", o.gamma, x, seen)
  local beta = as_param(op, "beta", o.beta, x, seen)
  local mean, var = M.moments(x, { axes = axes, keepdims = true })
  return M.batch_normalization(x, mean, var, beta, gamma, eps)
end

---------------------------------------------------------------------------
-- Dropout and embeddings
---------------------------------------------------------------------------

-- dropout(x, rate, {noise_shape=, seed=, training=true}) as tf.nn.dropout:
-- each element (or each noise_shape slice, broadcast) is zeroed with
-- probability rate, the kept ones scaled by 1 / (1 - rate). The draw goes
-- through tide.random, so seeds follow TF's rule (tide.random.set_seed plus
-- seed= repeat). training=false or rate 0 give x itself.
function M.dropout(x, ...)
  local op = "dropout"
  local o = args.parse(op, { "rate", "noise_shape", "seed", "training" }, ...)
  x = input(op, x, "x", 1)
  if not dtype.is_float[x.dt] then
    binding.error(fmt("%s: x has to be a float tensor since it is going to be scaled, got %s", op, dtype.names[x.dt]))
  end
  local rate = o.rate
  if istype(Tensor, rate) then rate = tensor.item(rate) end
  if type(rate) ~= "number" or not (rate >= 0 and rate < 1) then
    binding.error(fmt("%s: rate must be a number in the range [0, 1), got %s", op, tostring(rate)))
  end
  local training = args.bool(op, "training", o.training, true)
  if not training or rate == 0 then return x end
  if x.ndim < 0 then -- an unknown rank: the noise has x's shape (or noise_shape's, broadcast) when the graph runs
    local ns = o.noise_shape ~= nil and args.int_list(op, "noise_shape", o.noise_shape) or dynamic_shape.shape(x)
    local udt = x.dt == C.TIDE_FLOAT64 and "float64" or "float32"
    local keep = m.cast(m.greater_equal(random.uniform(ns, { dtype = udt, seed = o.seed }), rate), dtype.names[x.dt])
    return m.mul(m.mul(x, 1 / (1 - rate)), keep)
  end
  local ns = o.noise_shape ~= nil and args.int_list(op, "noise_shape", o.noise_shape) or dims(x)
  local xd = dims(x)
  local ok, known = #ns == #xd, true
  for i = 1, #ns do
    if not ok then break end
    ok = ns[i] == xd[i] or ns[i] == 1 or xd[i] < 0 -- a None dim of x: checked when the graph runs
    known = known and ns[i] >= 0
  end
  if not ok then
    binding.error(fmt("%s: noise_shape %s must have x's rank with each dim equal to x's or 1 (x has shape %s)", op,
      format.shape_text(ns), shape_text(x)))
  end
  local udt = x.dt == C.TIDE_FLOAT64 and "float64" or "float32"
  -- without noise_shape, x's None dims make the draw's shape x's when the graph runs
  local u = random.uniform(known and ns or dynamic_shape.shape(x), { dtype = udt, seed = o.seed })
  local keep = m.cast(m.greater_equal(u, rate), dtype.names[x.dt])
  return m.mul(m.mul(x, 1 / (1 - rate)), keep)
end

-- embedding_lookup(params, ids, {max_norm=}) as tf.nn.embedding_lookup: rows
-- of params (dim 0) picked by integer ids of any shape -> ids.shape .. params.shape[1:].
-- With max_norm, each embedding whose l2 norm exceeds it is scaled down to it
-- (TF's clip_by_norm). A list of several shards is not supported.
function M.embedding_lookup(params, ids, ...)
  local op = "embedding_lookup"
  local o = args.parse(op, { "max_norm" }, ...)
  -- A plain list whose first entry is a tensor or a Variable is a list of shards
  -- (a nested table of numbers is one tensor's values).
  local first = type(params) == "table" and getmetatable(params) == nil and params[1]
  if first ~= nil and (istype(Tensor, first) or convert.is_variable(first)) then
    if #params == 1 then
      params = params[1]
    elseif #params > 1 then
      binding.error(op .. ": sharded params (a list of several tensors) are not supported; concat them first")
    end
  end
  params = input(op, params, "params", 1)
  if params.ndim == 0 then binding.error(op .. ": params must have at least 1 dimension, got a scalar") end
  ids = input(op, ids, "ids", 2)
  if not dtype.is_int[ids.dt] then
    binding.error(fmt("%s: ids must be an integer tensor, got %s", op, dtype.names[ids.dt]))
  end
  local out = shape.gather(params, ids, 0)
  if o.max_norm == nil then return out end
  local max_norm = number_arg(op, "max_norm", o.max_norm)
  -- the embedding dims are params' after the first, the last ones of out
  if params.ndim < 0 then needs_rank(op, "params", "max_norm normalizes over its embedding dims") end
  local axes = {}
  for i = 1 - params.ndim, -1 do axes[#axes + 1] = i end
  if #axes == 0 then return out end
  -- TF's clip_by_norm: x * max_norm / maximum(norm, max_norm), with a zero norm kept finite.
  local l2sum = reduce.reduce_sum(m.square(out), axes, true)
  local pos = m.greater(l2sum, 0)
  local norm = m.where(pos, m.sqrt(m.where(pos, l2sum, 1)), l2sum)
  return m.div(m.mul(out, max_norm), m.maximum(norm, max_norm))
end

return M
