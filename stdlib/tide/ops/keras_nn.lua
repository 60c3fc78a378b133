-- stdlib/tide/ops/keras_nn.lua — tide.ops' keras.ops.nn and keras.ops.linalg: convolutions and pools in Keras's
-- argument order (channels last), normalizations, the cross-entropies, attention, the newer activations, and
-- the linear-algebra names (mostly tide.linalg's ops under numpy's names).
local binding = require "tide.binding"
local args = require "tide.args"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local shape_ops = require "tide.ops.shape"
local create_ops = require "tide.ops.create"
local linalg_ops = require "tide.ops.linalg"
local decomp = require "tide.ops.linalg_decomp"
local norm_ops = require "tide.ops.linalg_norm"
local nn = require "tide.ops.nn"
local nn_conv = require "tide.ops.nn_conv"
local nn_nd = require "tide.ops.nn_conv_nd"
local pools = require "tide.ops.nn_pool_more"
local more = require "tide.ops.math_more"
local segment = require "tide.ops.segment"
local u = require "tide.ops.keras_util"

local M = {}
local m, r, s = math_ops, reduce_ops, shape_ops
local fmt = string.format

------------------------------------------------------------------------------------------------------------
-- linear algebra (keras.ops.linalg)
------------------------------------------------------------------------------------------------------------
M.cholesky, M.det, M.inv, M.eigh, M.eig = decomp.cholesky, decomp.det, decomp.inv, decomp.eigh, decomp.eig
M.slogdet, M.logdet, M.pinv, M.matrix_rank = decomp.slogdet, decomp.logdet, decomp.pinv, decomp.matrix_rank
M.solve = decomp.solve

-- qr(x, mode="reduced"), svd(x, full_matrices=True, compute_uv=True): numpy's names and order (svd gives
-- u, s, vh as numpy; tf's svd gives s, u, v).
function M.qr(x, ...)
  local o = args.parse("qr", { "mode" }, ...)
  local mode = o.mode or "reduced"
  if mode ~= "reduced" and mode ~= "complete" then
    binding.error("qr: mode must be \"reduced\" or \"complete\", got " .. tostring(mode))
  end
  return decomp.qr(x, { full_matrices = mode == "complete" })
end
function M.svd(x, ...)
  local o = args.parse("svd", { "full_matrices", "compute_uv" }, ...)
  if o.compute_uv == false then return decomp.svd(x, { compute_uv = false }) end
  local sv, uu, v = decomp.svd(x, { full_matrices = o.full_matrices ~= false, compute_uv = true })
  return uu, sv, linalg_ops.matrix_transpose(v)
end

-- cholesky_inverse(x, upper=False): the inverse of the matrix whose Cholesky factor x is.
function M.cholesky_inverse(x, ...)
  local o = args.parse("cholesky_inverse", { "upper" }, ...)
  x = u.arg("cholesky_inverse", x)
  local l = o.upper and linalg_ops.matrix_transpose(x) or x
  local n = u.dim("cholesky_inverse", x, x.ndim - 1)
  local eye = create_ops.eye(n, { dtype = x.dtype })
  return decomp.cholesky_solve(l, s.broadcast_to(eye, x.shape:as_list()))
end

-- solve_triangular(a, b, lower=False): a x = b for a triangular a (numpy/scipy's default is upper).
function M.solve_triangular(a, b, ...)
  local o = args.parse("solve_triangular", { "lower" }, ...)
  a = u.arg("solve_triangular", a, "a")
  b = u.arg("solve_triangular", b, "b")
  local vec = b.ndim == a.ndim - 1
  if vec then b = s.expand_dims(b, -1) end
  local x = decomp.triangular_solve(a, b, { lower = o.lower == true })
  return vec and s.squeeze(x, { -1 }) or x
end

-- lstsq(a, b, rcond=None): the least-squares solution.
function M.lstsq(a, b, ...)
  args.parse("lstsq", { "rcond" }, ...)
  b = u.arg("lstsq", b, "b")
  local vec = b.ndim == 1
  if vec then b = s.expand_dims(b, -1) end
  local x = decomp.lstsq(a, b)
  return vec and s.squeeze(x, { -1 }) or x
end

-- lu_factor(x): (lu, p) as Keras's TF backend: p the inverse of tf.linalg.lu's row permutation (row i of x
-- is row p[i] of L U), not scipy's list of swaps.
function M.lu_factor(x)
  local lu, perm = decomp.lu(x)
  return lu, more.invert_permutation(perm)
end

-- norm(x, ord=None, axis=None, keepdims=False): numpy's (Frobenius / 2-norm without ord).
function M.norm(x, ...)
  local o = args.parse("norm", { "ord", "axis", "keepdims" }, ...)
  x = u.float_of(u.arg("norm", x))
  local ord = o.ord
  if ord == nil then
    return m.sqrt(r.reduce_sum(m.square(x), o.axis, o.keepdims))
  end
  if ord == "fro" then ord = "euclidean" end
  return norm_ops.norm(x, { ord = ord, axis = o.axis, keepdims = o.keepdims })
end

------------------------------------------------------------------------------------------------------------
-- convolutions and pools: keras.ops' order (inputs, kernel, strides=1, padding="valid", data_format,
-- dilation_rate=1), channels last; the rank of the input picks 1-D, 2-D or 3-D.
------------------------------------------------------------------------------------------------------------
local CONV = { "strides", "padding", "data_format", "dilation_rate" }

local function check_format(op, f)
  if f ~= nil and f ~= "channels_last" then
    binding.error(fmt("%s: data_format must be \"channels_last\" (tide is channels last), got %s", op, tostring(f)))
  end
end
local function pad_mode(op, p)
  p = (p or "valid"):upper()
  if p ~= "VALID" and p ~= "SAME" then binding.error(fmt("%s: padding must be \"valid\" or \"same\", got %s", op, p)) end
  return p
end
local function spatial(op, x)
  x = u.arg(op, x, "inputs")
  local nd = u.rank(op, x) - 2
  if nd < 1 or nd > 3 then
    binding.error(fmt("%s: inputs must be 3-D, 4-D or 5-D (batch, spatial..., channels), got shape %s", op,
      tostring(x.shape)))
  end
  return x, nd
end

function M.conv(inputs, kernel, ...)
  local o = args.parse("conv", CONV, ...)
  check_format("conv", o.data_format)
  local x, nd = spatial("conv", inputs)
  local p, st, dl = pad_mode("conv", o.padding), o.strides or 1, o.dilation_rate or 1
  if nd == 1 then return nn_conv.conv1d(x, kernel, { stride = st, padding = p, dilations = dl }) end
  if nd == 2 then return nn_conv.conv2d(x, kernel, { strides = st, padding = p, dilations = dl }) end
  return nn_nd.conv3d(x, kernel, { strides = st, padding = p, dilations = dl })
end

function M.depthwise_conv(inputs, kernel, ...)
  local o = args.parse("depthwise_conv", CONV, ...)
  check_format("depthwise_conv", o.data_format)
  local x, nd = spatial("depthwise_conv", inputs)
  local p, st, dl = pad_mode("depthwise_conv", o.padding), o.strides or 1, o.dilation_rate or 1
  kernel = u.arg("depthwise_conv", kernel, "kernel")
  if nd == 1 then
    local y = nn_conv.depthwise_conv2d(s.expand_dims(x, 1), s.expand_dims(kernel, 0),
      { strides = { 1, st }, padding = p, dilations = { 1, dl } })
    return s.squeeze(y, { 1 })
  end
  if nd == 2 then return nn_conv.depthwise_conv2d(x, kernel, { strides = st, padding = p, dilations = dl }) end
  binding.error("depthwise_conv: 3-D depthwise convolutions are not in tide")
end

function M.separable_conv(inputs, depthwise_kernel, pointwise_kernel, ...)
  local o = args.parse("separable_conv", CONV, ...)
  local y = M.depthwise_conv(inputs, depthwise_kernel, o)
  return M.conv(y, pointwise_kernel)
end

-- conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format, dilation_rate)
-- with kernel (spatial..., out_channels, in_channels), as Keras.
function M.conv_transpose(inputs, kernel, ...)
  local o = args.parse("conv_transpose", { "strides", "padding", "output_padding", "data_format",
    "dilation_rate" }, ...)
  check_format("conv_transpose", o.data_format)
  local x, nd = spatial("conv_transpose", inputs)
  kernel = u.arg("conv_transpose", kernel, "kernel")
  local p = pad_mode("conv_transpose", o.padding)
  if (o.dilation_rate or 1) ~= 1 then binding.error("conv_transpose: dilation_rate must be 1") end
  local st = o.strides or 1
  local out = { u.dim("conv_transpose", x, 0) }
  for i = 1, nd do
    local sti = type(st) == "table" and st[i] or st
    local n, k = u.dim("conv_transpose", x, i), u.dim("conv_transpose", kernel, i - 1)
    local op = o.output_padding and (type(o.output_padding) == "table" and o.output_padding[i] or o.output_padding)
    local len = p == "SAME" and n * sti or (n - 1) * sti + k
    if op then len = (n - 1) * sti + k - (p == "SAME" and 2 * math.floor((k - 1) / 2) or 0) + op end
    out[i + 1] = len
  end
  out[nd + 2] = u.dim("conv_transpose", kernel, nd)
  if nd == 1 then return nn_nd.conv1d_transpose(x, kernel, out, { strides = st, padding = p }) end
  if nd == 2 then return nn_conv.conv2d_transpose(x, kernel, out, { strides = st, padding = p }) end
  return nn_nd.conv3d_transpose(x, kernel, out, { strides = st, padding = p })
end

-- max_pool / average_pool(inputs, pool_size, strides=None, padding="valid", data_format)
local function pool(op, f1, f2)
  return function(inputs, pool_size, ...)
    local o = args.parse(op, { "strides", "padding", "data_format" }, ...)
    check_format(op, o.data_format)
    local x, nd = spatial(op, inputs)
    local p = pad_mode(op, o.padding)
    local st = o.strides or pool_size
    if nd == 1 then return f1(x, pool_size, { strides = st, padding = p }) end
    if nd == 2 then return f2(x, pool_size, { strides = st, padding = p }) end
    binding.error(op .. ": 3-D pools are not in tide")
  end
end
M.max_pool = pool("max_pool", pools.max_pool1d, nn_conv.max_pool2d)
M.average_pool = pool("average_pool", pools.avg_pool1d, nn_conv.avg_pool2d)

M.depth_to_space = function(x, block_size, ...)
  local o = args.parse("depth_to_space", { "data_format" }, ...)
  check_format("depth_to_space", o.data_format)
  return pools.depth_to_space(x, block_size)
end
M.space_to_depth = function(x, block_size, ...)
  local o = args.parse("space_to_depth", { "data_format" }, ...)
  check_format("space_to_depth", o.data_format)
  return pools.space_to_depth(x, block_size)
end

------------------------------------------------------------------------------------------------------------
-- normalizations, losses, encodings
------------------------------------------------------------------------------------------------------------
-- moments(x, axes, keepdims=False): mean and variance.
function M.moments(x, axes, ...)
  local o = args.parse("moments", { "keepdims", "synchronized" }, ...)
  if type(axes) == "number" then axes = { axes } end
  return nn.moments(x, { axes = axes, keepdims = o.keepdims })
end

-- batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3)
function M.batch_normalization(x, mean, variance, axis, ...)
  local o = args.parse("batch_normalization", { "offset", "scale", "epsilon" }, ...)
  x = u.arg("batch_normalization", x)
  local ax = u.axis("batch_normalization", axis, u.rank("batch_normalization", x))
  local shp = {}
  for i = 0, x.ndim - 1 do shp[i + 1] = i == ax and -1 or 1 end
  local function b(t) return t ~= nil and s.reshape(u.arg("batch_normalization", t), shp) or nil end
  return nn.batch_normalization(x, b(mean), b(variance), b(o.offset), b(o.scale), o.epsilon or 1e-3)
end

-- layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None)
function M.layer_normalization(x, ...)
  local o = args.parse("layer_normalization", { "gamma", "beta", "axis", "epsilon", "rms_scaling" }, ...)
  x = u.arg("layer_normalization", x)
  local mean, var = nn.moments(x, { axes = { o.axis or -1 }, keepdims = true })
  local y = m.mul(m.sub(x, mean), m.rsqrt(m.add(var, o.epsilon or 1e-7)))
  if o.gamma ~= nil then y = m.mul(y, o.gamma) end
  if o.beta ~= nil then y = m.add(y, o.beta) end
  return y
end

-- rms_normalization(x, scale=None, axis=-1, epsilon=None): x / sqrt(mean(x^2) + eps) * scale.
function M.rms_normalization(x, ...)
  local o = args.parse("rms_normalization", { "scale", "axis", "epsilon" }, ...)
  x = u.arg("rms_normalization", x)
  local eps = o.epsilon or 1.1920928955078125e-07
  local y = m.mul(x, m.rsqrt(m.add(r.reduce_mean(m.square(x), o.axis or -1, true), eps)))
  if o.scale ~= nil then y = m.mul(y, o.scale) end
  return y
end

-- normalize(x, axis=-1, order=2, epsilon=None): x over its order-norm along axis.
function M.normalize(x, ...)
  local o = args.parse("normalize", { "axis", "order", "epsilon" }, ...)
  x = u.float_of(u.arg("normalize", x))
  local order = o.order or 2
  local n = norm_ops.norm(x, { ord = order, axis = o.axis or -1, keepdims = true })
  return m.div(x, m.maximum(n, o.epsilon or 1e-12))
end

-- The cross-entropies (target, output, from_logits=False, axis=-1), per sample (Keras's ops.nn forms).
local EPS = 1e-7
function M.binary_crossentropy(target, output, ...)
  local o = args.parse("binary_crossentropy", { "from_logits" }, ...)
  output = u.arg("binary_crossentropy", output, "output")
  target = m.cast(u.arg("binary_crossentropy", target, "target"), output.dtype)
  if o.from_logits then return nn.sigmoid_cross_entropy_with_logits(target, output) end
  local p = m.clip_by_value(output, EPS, 1 - EPS)
  return m.neg(m.add(m.mul(target, m.log(p)), m.mul(m.sub(1, target), m.log(m.sub(1, p)))))
end
function M.categorical_crossentropy(target, output, ...)
  local o = args.parse("categorical_crossentropy", { "from_logits", "axis" }, ...)
  output = u.arg("categorical_crossentropy", output, "output")
  target = m.cast(u.arg("categorical_crossentropy", target, "target"), output.dtype)
  local ax = o.axis or -1
  local logp
  if o.from_logits then logp = nn.log_softmax(output, ax)
  else
    local p = m.div(output, r.reduce_sum(output, ax, true))
    logp = m.log(m.clip_by_value(p, EPS, 1 - EPS))
  end
  return m.neg(r.reduce_sum(m.mul(target, logp), ax))
end
function M.sparse_categorical_crossentropy(target, output, ...)
  local o = args.parse("sparse_categorical_crossentropy", { "from_logits", "axis" }, ...)
  output = u.arg("sparse_categorical_crossentropy", output, "output")
  local n = u.dim("sparse_categorical_crossentropy", output, output.ndim - 1)
  local t = s.one_hot(m.cast(u.arg("sparse_categorical_crossentropy", target, "target"), "int32"), n,
    { dtype = output.dtype })
  -- Keras takes probabilities' logs as logits (clipped, not renormalized first: unlike the categorical form)
  if not o.from_logits then output = m.log(m.clip_by_value(output, EPS, 1 - EPS)) end
  return M.categorical_crossentropy(t, output, { from_logits = true, axis = o.axis })
end

-- multi_hot(inputs, num_classes, axis=-1, dtype=float32, sparse=False): 1 at each listed class of a sample.
function M.multi_hot(inputs, num_classes, ...)
  local o = args.parse("multi_hot", { "axis", "dtype", "sparse" }, ...)
  if o.sparse then binding.error("multi_hot: sparse = true is not supported") end
  if type(num_classes) ~= "number" then binding.error("multi_hot: num_classes must be a number") end
  inputs = u.arg("multi_hot", inputs, "inputs")
  local scalar = inputs.ndim == 1
  if scalar then inputs = s.expand_dims(inputs, 0) end
  local oh = s.one_hot(m.cast(inputs, "int32"), num_classes, { dtype = "int32" })
  local y = m.cast(m.greater(r.reduce_max(oh, -2), 0), o.dtype or "float32")
  if scalar then y = s.squeeze(y, { 0 }) end
  if o.axis ~= nil and o.axis ~= -1 then y = u.axis_last(y, 0) end
  return y
end

-- in_top_k(targets, predictions, k)
M.in_top_k = more.in_top_k

-- psnr(x1, x2, max_val)
function M.psnr(a, b, max_val)
  a = u.float_of(u.arg("psnr", a, "x1"))
  b = m.cast(u.arg("psnr", b, "x2"), a.dtype)
  if type(max_val) ~= "number" then binding.error("psnr: max_val must be a number") end
  local mse = r.reduce_mean(m.square(m.sub(a, b)))
  return m.sub(20 * math.log(max_val) / math.log(10), m.mul(m.log(mse), 10 / math.log(10)))
end

-- dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False): query
-- [B, T, N, H], key and value [B, S, N, H] (Keras's layout) -> [B, T, N, H].
function M.dot_product_attention(q, k, v, ...)
  local o = args.parse("dot_product_attention", { "bias", "mask", "scale", "is_causal", "flash_attention",
    "attn_logits_soft_cap" }, ...)
  q, k, v = u.arg("dot_product_attention", q, "query"), u.arg("dot_product_attention", k, "key"),
    u.arg("dot_product_attention", v, "value")
  if q.ndim ~= 4 or k.ndim ~= 4 or v.ndim ~= 4 then
    binding.error("dot_product_attention: query, key and value must be 4-D [batch, length, heads, head_dim]")
  end
  local h = u.dim("dot_product_attention", q, 3)
  local scale = o.scale or 1 / math.sqrt(h)
  -- [B, N, T, S]
  local logits = m.mul(linalg_ops.matmul(s.transpose(q, { 0, 2, 1, 3 }), s.transpose(k, { 0, 2, 3, 1 })), scale)
  if o.attn_logits_soft_cap then
    logits = m.mul(m.tanh(m.div(logits, o.attn_logits_soft_cap)), o.attn_logits_soft_cap)
  end
  if o.bias ~= nil then logits = m.add(logits, o.bias) end
  local keep
  if o.mask ~= nil then keep = m.cast(u.arg("dot_product_attention", o.mask, "mask"), "bool") end
  if o.is_causal then
    local t, sl = u.dim("dot_product_attention", q, 1), u.dim("dot_product_attention", k, 1)
    local i = s.reshape(create_ops.range(0, t), { t, 1 })
    local j = s.reshape(create_ops.range(0, sl), { 1, sl })
    local causal = m.less_equal(j, i)
    keep = keep and m.logical_and(keep, causal) or causal
  end
  if keep then
    -- Keras's large negative number: 0.7 of the dtype's lowest (finite, so a fully masked row stays finite)
    local lowest = logits.dtype == "float16" and 65504 or (logits.dtype == "float64" and 1.7976931348623157e308
      or 3.4028234663852886e38)
    logits = m.where(keep, logits, m.add(create_ops.zeros_like(logits), -0.7 * lowest))
  end
  local w = nn.softmax(logits, -1)
  return s.transpose(linalg_ops.matmul(w, s.transpose(v, { 0, 2, 1, 3 })), { 0, 2, 1, 3 })
end

------------------------------------------------------------------------------------------------------------
-- activations newer than tide.nn's (Keras 3's formulas)
------------------------------------------------------------------------------------------------------------
local function act(name, f)
  M[name] = function(x, ...) return f(u.float_of(u.arg(name, x)), ...) end
end
act("leaky_relu", function(x, ...)
  local o = args.parse("leaky_relu", { "negative_slope" }, ...)
  return m.leaky_relu(x, { alpha = o.negative_slope or 0.2 })
end)
act("celu", function(x, ...)
  local a = args.parse("celu", { "alpha" }, ...).alpha or 1
  return m.add(m.maximum(x, 0), m.mul(m.minimum(m.expm1(m.div(m.minimum(x, 0), a)), 0), a))
end)
act("glu", function(x, ...)
  local ax = args.parse("glu", { "axis" }, ...).axis or -1
  local n = u.dim("glu", x, u.axis("glu", ax, x.ndim))
  if n % 2 ~= 0 then binding.error(fmt("glu: axis %d has odd size %d (it is split in two)", ax, n)) end
  local parts = s.split(x, 2, ax)
  return m.mul(parts[1], m.sigmoid(parts[2]))
end)
act("hard_silu", function(x) return m.mul(x, m.div(m.clip_by_value(m.add(x, 3), 0, 6), 6)) end)
M.hard_swish = M.hard_silu
act("hard_tanh", function(x) return m.clip_by_value(x, -1, 1) end)
act("hard_shrink", function(x, ...)
  local t = args.parse("hard_shrink", { "threshold" }, ...).threshold or 0.5
  return m.where(m.greater(m.abs(x), t), x, create_ops.zeros_like(x))
end)
act("soft_shrink", function(x, ...)
  local t = args.parse("soft_shrink", { "threshold" }, ...).threshold or 0.5
  return m.where(m.greater(x, t), m.sub(x, t), m.where(m.less(x, -t), m.add(x, t), create_ops.zeros_like(x)))
end)
act("tanh_shrink", function(x) return m.sub(x, m.tanh(x)) end)
act("threshold", function(x, threshold, default_value)
  if type(threshold) ~= "number" or type(default_value) ~= "number" then
    binding.error("threshold: threshold and default_value must be numbers")
  end
  return m.where(m.greater(x, threshold), x, m.add(create_ops.zeros_like(x), default_value))
end)
act("squareplus", function(x, ...)
  local b = args.parse("squareplus", { "b" }, ...).b or 4
  return m.div(m.add(x, m.sqrt(m.add(m.square(x), b))), 2)
end)
act("sparse_plus", function(x)
  return m.where(m.less_equal(x, -1), create_ops.zeros_like(x),
    m.where(m.greater_equal(x, 1), x, m.div(m.square(m.add(x, 1)), 4)))
end)
act("sparse_sigmoid", function(x)
  return m.where(m.less_equal(x, -1), create_ops.zeros_like(x),
    m.where(m.greater_equal(x, 1), create_ops.ones_like(x), m.div(m.add(x, 1), 2)))
end)
-- sparsemax(x, axis=-1): the Euclidean projection onto the simplex (Martins & Astudillo).
act("sparsemax", function(x, ...)
  local ax = args.parse("sparsemax", { "axis" }, ...).axis or -1
  local y, back = u.axis_last(x, u.axis("sparsemax", ax, x.ndim))
  local n = u.dim("sparsemax", y, y.ndim - 1)
  local z = r.sort(y, -1, "DESCENDING")
  local ks = m.cast(create_ops.range(1, n + 1), y.dtype)
  local cum = r.cumsum(z, -1)
  local support = m.greater(m.add(m.mul(ks, z), 1), cum) -- 1 + k z_k > sum_{j<=k} z_j
  local kz = r.reduce_sum(m.cast(support, y.dtype), -1, true)
  local tau = m.div(m.sub(s.gather(cum, m.sub(m.cast(kz, "int32"), 1), { axis = y.ndim - 1,
    batch_dims = y.ndim - 1 }), 1), kz)
  return back(m.maximum(m.sub(y, tau), 0))
end)

------------------------------------------------------------------------------------------------------------
-- segments (keras.ops.segment_*: data, segment_ids, num_segments=None, sorted=False)
------------------------------------------------------------------------------------------------------------
for _, kind in ipairs { "sum", "max", "min", "prod" } do
  local sorted_f, unsorted_f = segment["segment_" .. kind], segment["unsorted_segment_" .. kind]
  M["segment_" .. kind] = function(data, ids, ...)
    local o = args.parse("segment_" .. kind, { "num_segments", "sorted" }, ...)
    ids = u.arg("segment_" .. kind, ids, "segment_ids")
    if o.num_segments ~= nil then return unsorted_f(data, ids, o.num_segments) end
    if o.sorted then return sorted_f(data, ids) end
    return unsorted_f(data, ids, r.reduce_max(ids):item() + 1)
  end
end

return M
