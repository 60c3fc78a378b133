-- stdlib/tide/layers/attention/multi_head.lua — Keras 3's MultiHeadAttention and
-- GroupQueryAttention (GroupedQueryAttention): EinsumDense projections of query, key and value,
-- scaled dot-product attention over heads (einsum), masks as Keras builds them, the output
-- projection. Called as mha(query, value[, key][, {options}]) or mha({query, value[, key]}, {options}).
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local keras_mask = require "tide.keras_mask"
local convert = require "tide.convert"
local layer = require "tide.layers.layer"
local regularization = require "tide.layers.regularization"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local einsum = require("tide.ops.einsum").einsum
local common = require "tide.layers.attention.common"
local EinsumDense = require("tide.layers.attention.einsum_dense").EinsumDense

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

local LETTERS = "abcdefghijklmnopqrstuvwxyz"
local function letter(i) return LETTERS:sub(i + 1, i + 1) end -- 0 -> 'a'

local function positive_int(name, what, v)
  if type(v) ~= "number" or v <= 0 or v % 1 ~= 0 then
    binding.error(string.format("%s: %s must be a positive integer, got %s", name, what, tostring(v)))
  end
  return v
end

local function rate_arg(name, v)
  if v == nil then return 0.0 end
  if type(v) ~= "number" or v < 0 or v >= 1 then
    binding.error(string.format("%s: dropout must be a number in [0, 1), got %s", name, tostring(v)))
  end
  return v
end

local function bool_arg(name, what, v, default)
  if v == nil then return default end
  if type(v) ~= "boolean" then
    binding.error(string.format("%s: %s must be true or false, got %s", name, what, tostring(v)))
  end
  return v
end

-- The options every attention layer here shares (initializers, regularizers,
-- constraints, gate, window, seed), checked into self.
-- (in Keras 3's positional order, which tests/spec/keras_signatures_spec.lua checks)
local SHARED = { "sliding_window", "flash_attention", "kernel_initializer", "bias_initializer", "kernel_regularizer",
  "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint", "use_gate", "seed" }

local function shared_init(self, o)
  local name = getmetatable(self).__name
  self._kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", name .. ": kernel_initializer")
  self._bias_initializer = initializers.get(o.bias_initializer or "zeros", name .. ": bias_initializer")
  self._kernel_regularizer = regularizers.get(o.kernel_regularizer, name .. ": kernel_regularizer")
  self._bias_regularizer = regularizers.get(o.bias_regularizer, name .. ": bias_regularizer")
  self._activity_regularizer = regularizers.get(o.activity_regularizer, name .. ": activity_regularizer")
  self._kernel_constraint = constraints.get(o.kernel_constraint, name .. ": kernel_constraint")
  self._bias_constraint = constraints.get(o.bias_constraint, name .. ": bias_constraint")
  self._use_gate = bool_arg(name, "use_gate", o.use_gate, false)
  local w = o.sliding_window
  if w ~= nil and (type(w) ~= "number" or w <= 0 or w % 1 ~= 0) then
    binding.error(string.format("%s: sliding_window must be nil or a positive integer, got %s", name, tostring(w)))
  end
  self._sliding_window = w
  if o.flash_attention then
    binding.error(name .. ": flash_attention is not supported (as on Keras's TensorFlow backend); leave it nil")
  end
  if o.seed ~= nil and (type(o.seed) ~= "number" or o.seed % 1 ~= 0) then
    binding.error(string.format("%s: seed must be an integer, got %s", name, tostring(o.seed)))
  end
  self.seed = o.seed
end

local function shared_config(self, c)
  c.use_gate = self._use_gate
  c.sliding_window = self._sliding_window
  c.kernel_initializer = initializers.serialize(self._kernel_initializer)
  c.bias_initializer = initializers.serialize(self._bias_initializer)
  c.kernel_regularizer = regularizers.serialize(self._kernel_regularizer)
  c.bias_regularizer = regularizers.serialize(self._bias_regularizer)
  c.activity_regularizer = regularizers.serialize(self._activity_regularizer)
  c.kernel_constraint = constraints.serialize(self._kernel_constraint)
  c.bias_constraint = constraints.serialize(self._bias_constraint)
  c.seed = self.seed
  return c
end

-- A fresh copy of an initializer object (Keras gives each projection its own).
local function copy_initializer(init)
  if type(init) == "function" then return init end
  return initializers.deserialize(initializers.serialize(init))
end

-- An EinsumDense projection with the layer's shared options.
local function projection(self, equation, output_shape, bias_axes, name, activation)
  return EinsumDense { equation, output_shape = output_shape, bias_axes = self._use_bias and bias_axes or nil,
    activation = activation, name = name, kernel_initializer = copy_initializer(self._kernel_initializer),
    bias_initializer = copy_initializer(self._bias_initializer), kernel_regularizer = self._kernel_regularizer,
    bias_regularizer = self._bias_regularizer, activity_regularizer = self._activity_regularizer,
    kernel_constraint = self._kernel_constraint, bias_constraint = self._bias_constraint,
    dtype = rawget(self, "_dtype_policy") }
end

---------------------------------------------------------------------------
-- The attention itself (shared)
---------------------------------------------------------------------------

-- Keras's _compute_attention: TF's dot_product_attention for rank-4
-- projections without dropout or returned scores (then `scores` is nil),
-- else the scores einsum, Keras's masked softmax over the attention axes,
-- dropout when training, and the combining einsum. a = the layer's
-- attention description (equations, axes, scale, dropout).
local function attend(self, a, query, key, value, mask, o)
  local use_dot = not (a.dropout > 0 or o.return_attention_scores or query.ndim ~= 4)
  local expand_axis = -a.n_axes * 2 - 1
  if use_dot then
    if o.causal_only and mask == nil then
      return common.dot_product_attention(query, key, value, nil, a.scale, true), nil
    end
    if mask ~= nil then
      for _ = 1, 4 - mask.ndim do mask = shape_ops.expand_dims(mask, expand_axis) end
    end
    return common.dot_product_attention(query, key, value, mask, a.scale, false), nil
  end
  if o.causal_only then mask = common.both(mask, common.causal_mask(query, value)) end
  query = query * convert.tensor(a.scale, query.dtype)
  local scores = a.query_first and einsum(a.dot, query, key) or einsum(a.dot, key, query)
  if mask ~= nil then
    for _ = 1, scores.ndim - mask.ndim do mask = shape_ops.expand_dims(mask, expand_axis) end
  end
  scores = common.masked_softmax(scores, mask, a.norm_axes)
  local dropped = scores
  if a.dropout > 0 then dropped = self._dropout_layer(scores, { training = o.training }) end
  return einsum(a.combine, dropped, value), scores
end

-- The masks and options of a call: Keras's query, value and key masks (the
-- inputs' own, unless given), the attention mask, causal and window masks.
local function call_masks(self, query, value, key, t, opts, query_mask_own)
  local qm -- MultiHeadAttention reads the query's own mask, whatever is given (as Keras's)
  if query_mask_own then qm = keras_mask.get(query) else qm = t.query_mask end
  if qm == nil then qm = keras_mask.get(query) end
  local vm = t.value_mask
  if vm == nil then vm = keras_mask.get(value) end
  local km = t.key_mask
  if km == nil and key ~= nil then km = keras_mask.get(key) end
  local causal = opts.use_causal_mask == true
  local causal_only = causal and qm == nil and vm == nil and km == nil and t.attention_mask == nil
    and self._sliding_window == nil
  local mask = nil
  if not causal_only then
    mask = common.attention_mask(query, value, { query_mask = qm, value_mask = vm, key_mask = km,
      attention_mask = t.attention_mask, use_causal_mask = causal, sliding_window = self._sliding_window })
  end
  return qm, mask, causal_only
end

---------------------------------------------------------------------------
-- MultiHeadAttention
---------------------------------------------------------------------------

-- Keras's _build_proj_equation: "abc,cde->abde"-style equations.
local function proj_equation(free_dims, bound_dims, output_dims)
  local input, kernel, output, bias = "", "", "", ""
  local at = 0
  for i = 0, free_dims - 1 do
    input, output = input .. letter(at + i), output .. letter(at + i)
  end
  at = at + free_dims
  for i = 0, bound_dims - 1 do
    input, kernel = input .. letter(at + i), kernel .. letter(at + i)
  end
  at = at + bound_dims
  for i = 0, output_dims - 1 do
    local c = letter(at + i)
    kernel, output, bias = kernel .. c, output .. c, bias .. c
  end
  return input .. "," .. kernel .. "->" .. output, bias, #output
end

-- Keras's _get_output_shape: Nones, then the known last dims.
local function output_shape_of(rank, last)
  local out = {}
  for _ = 1, rank - #last do out[#out + 1] = None end
  for _, d in ipairs(last) do out[#out + 1] = d end
  return out
end

-- Keras's _build_attention_equation for projections of rank `rank` and the
-- attention axes (0-based).
local function attention_equations(rank, axes)
  local is_axis = {}
  for _, a in ipairs(axes) do is_axis[a] = true end
  local target, source = "", ""
  local batch = {}
  for i = 0, rank - 1 do
    target = target .. letter(i)
    if not is_axis[i] and i ~= rank - 1 then batch[#batch + 1] = i end
  end
  local offset = rank
  for i = 0, rank - 1 do
    if is_axis[i] then
      source = source .. letter(offset)
      offset = offset + 1
    else
      source = source .. target:sub(i + 1, i + 1)
    end
  end
  local product = ""
  for _, i in ipairs(batch) do product = product .. target:sub(i + 1, i + 1) end
  for _, i in ipairs(axes) do product = product .. target:sub(i + 1, i + 1) end
  for _, i in ipairs(axes) do product = product .. source:sub(i + 1, i + 1) end
  return source .. "," .. target .. "->" .. product, product .. "," .. source .. "->" .. target, #product
end

local MHA_OPTIONS = { "num_heads", "key_dim", "value_dim", "dropout", "use_bias", "output_shape", "attention_axes" }
for _, k in ipairs(SHARED) do MHA_OPTIONS[#MHA_OPTIONS + 1] = k end

-- MultiHeadAttention{num_heads, key_dim, value_dim=key_dim, dropout=0,
-- use_bias=true, output_shape=nil, attention_axes=nil, sliding_window=nil,
-- kernel_initializer="glorot_uniform", bias_initializer="zeros",
-- kernel_regularizer=, bias_regularizer=, activity_regularizer=,
-- kernel_constraint=, bias_constraint=, use_gate=false, seed=nil}.
-- mha(query, value[, key], {attention_mask=, return_attention_scores=false,
-- training=, use_causal_mask=false, value_mask=, key_mask=}): the output
-- [B, T, output dims], or {output, scores} with return_attention_scores.
local MultiHeadAttention = Layer:extend("MultiHeadAttention")
M.MultiHeadAttention = MultiHeadAttention
MultiHeadAttention.supports_masking = true
MultiHeadAttention._own_options = { activity_regularizer = true } -- the projections' (Keras's), not the layer's

function MultiHeadAttention:init(...)
  local o = self:_kwargs(MHA_OPTIONS, ...)
  local name = getmetatable(self).__name
  self.num_heads = positive_int(name, "num_heads", o.num_heads)
  self.key_dim = positive_int(name, "key_dim", o.key_dim)
  self.value_dim = o.value_dim ~= nil and positive_int(name, "value_dim", o.value_dim) or self.key_dim
  self.dropout = rate_arg(name, o.dropout)
  self._use_bias = bool_arg(name, "use_bias", o.use_bias, true)
  local shape = o.output_shape
  if type(shape) == "number" then shape = { shape } end
  if shape ~= nil and (type(shape) ~= "table" or #shape == 0) then
    binding.error(string.format("%s: output_shape must be a number or a list of dims, got %s", name,
      tostring(o.output_shape)))
  end
  self._output_shape = shape
  local axes = o.attention_axes
  if type(axes) == "number" then axes = { axes } end
  if axes ~= nil and type(axes) ~= "table" then
    binding.error(string.format("%s: attention_axes must be an integer or a list of them, got %s", name, type(axes)))
  end
  self.attention_axes = axes
  shared_init(self, o)
  self.use_bias = self._use_bias
end

-- mha(query, value[, key][, opts]) as Keras writes it, besides the base
-- layer's mha({query, value[, key]}, opts).
function MultiHeadAttention:_call(a, b, c, d)
  local inputs, opts = common.normalize_call(self, a, b, c, d)
  return Layer._call(self, inputs, opts)
end

function MultiHeadAttention:build(shapes)
  local qs, vs, ks = common.unpack_shapes(self, shapes)
  ks = ks or vs
  local same = #vs == #ks
  for i = 2, #vs - 1 do if vs[i] ~= ks[i] then same = false end end
  if not same then
    binding.error(string.format("%s: all dimensions of value and key, except the last one, must be equal; got " ..
      "value %s and key %s", who(self), layer.shape_text(vs), layer.shape_text(ks)))
  end
  local eq, bias, rank = proj_equation(#qs - 1, 1, 2)
  self._query_dense = projection(self, eq, output_shape_of(rank - 1, { self.num_heads, self.key_dim }), bias, "query")
  self._query_dense:build(qs)
  eq, bias, rank = proj_equation(#ks - 1, 1, 2)
  self._key_dense = projection(self, eq, output_shape_of(rank - 1, { self.num_heads, self.key_dim }), bias, "key")
  self._key_dense:build(ks)
  if self._use_gate then
    eq, bias, rank = proj_equation(#qs - 1, 1, 2)
    self._gate_dense = projection(self, eq, output_shape_of(rank - 1, { self.num_heads, self.value_dim }), bias,
      "gate", "sigmoid")
    self._gate_dense:build(qs)
  end
  eq, bias, rank = proj_equation(#vs - 1, 1, 2)
  self._value_dense = projection(self, eq, output_shape_of(rank - 1, { self.num_heads, self.value_dim }), bias,
    "value")
  self._value_dense:build(vs)
  -- the attention over the projections (rank: the value projection's, as Keras's)
  local axes = {} -- normalized, as Keras keeps them (get_config then lists them)
  if self.attention_axes == nil then
    for i = 1, rank - 3 do axes[#axes + 1] = i end
  else
    for i, ax in ipairs(self.attention_axes) do axes[i] = ax >= 0 and ax or (rank - 1) + ax end
  end
  self.attention_axes = axes
  local dot, combine, scores_rank = attention_equations(rank, axes)
  local norm = {}
  for i = scores_rank - #axes, scores_rank - 1 do norm[#norm + 1] = i end
  self._attention = { dot = dot, combine = combine, norm_axes = norm, n_axes = #axes, axes = axes,
    scale = 1.0 / math.sqrt(self.key_dim), dropout = self.dropout, query_first = false }
  self._dropout_layer = regularization.Dropout { self.dropout, seed = self.seed, dtype = rawget(self, "_dtype_policy") }
  local out_shape = self._output_shape or { qs[#qs] }
  eq, bias, rank = proj_equation(#qs - 1, 2, #out_shape)
  self._output_dense = projection(self, eq, output_shape_of(rank - 1, out_shape), bias, "attention_output")
  local dense_in = self._query_dense:compute_output_shape(qs)
  dense_in[#dense_in] = self.value_dim
  self._output_dense:build(dense_in)
end

function MultiHeadAttention:call(inputs, opts)
  local query, value, key, t = common.unpack(self, inputs, opts)
  local qm, mask, causal_only = call_masks(self, query, value, key, t, opts, true)
  key = key or value
  local gate = self._use_gate and self._gate_dense(common.unmasked(query)) or nil
  local q = self._query_dense(common.unmasked(query))
  local k = self._key_dense(common.unmasked(key))
  local v = self._value_dense(common.unmasked(value))
  local out, scores = attend(self, self._attention, q, k, v, mask, { training = opts.training,
    return_attention_scores = opts.return_attention_scores, causal_only = causal_only })
  if gate then out = out * gate end
  out = self._output_dense(out)
  if qm ~= nil then keras_mask.set(out, qm) end
  if opts.return_attention_scores then return { out, scores } end
  return out
end

-- Masks ride with the output from call itself (the query's, as Keras's).
function MultiHeadAttention:compute_mask() return nil end

function MultiHeadAttention:get_config()
  local c = Layer.get_config(self)
  c.num_heads, c.key_dim, c.value_dim = self.num_heads, self.key_dim, self.value_dim
  c.dropout, c.use_bias = self.dropout, self._use_bias
  c.output_shape, c.attention_axes = self._output_shape, self.attention_axes
  return shared_config(self, c)
end

---------------------------------------------------------------------------
-- GroupQueryAttention (Keras 3's GroupedQueryAttention)
---------------------------------------------------------------------------

local GQA_OPTIONS = { "head_dim", "num_query_heads", "num_key_value_heads", "dropout", "use_bias" }
for _, k in ipairs(SHARED) do GQA_OPTIONS[#GQA_OPTIONS + 1] = k end

-- GroupQueryAttention{head_dim, num_query_heads, num_key_value_heads,
-- dropout=0, use_bias=true, ...as MultiHeadAttention}: keys and values have
-- num_key_value_heads heads, each shared by num_query_heads /
-- num_key_value_heads query heads. Called as MultiHeadAttention; scores
-- are [B, num_query_heads, T, S].
local GroupQueryAttention = Layer:extend("GroupQueryAttention")
M.GroupQueryAttention = GroupQueryAttention
M.GroupedQueryAttention = GroupQueryAttention
GroupQueryAttention.supports_masking = true
GroupQueryAttention._own_options = { activity_regularizer = true }
GroupQueryAttention._call = MultiHeadAttention._call

function GroupQueryAttention:init(...)
  local o = self:_kwargs(GQA_OPTIONS, ...)
  local name = getmetatable(self).__name
  self.head_dim = positive_int(name, "head_dim", o.head_dim)
  self.num_query_heads = positive_int(name, "num_query_heads", o.num_query_heads)
  self.num_key_value_heads = positive_int(name, "num_key_value_heads", o.num_key_value_heads)
  if self.num_query_heads % self.num_key_value_heads ~= 0 then
    binding.error(string.format("%s: num_query_heads (%d) must be divisible by num_key_value_heads (%d)", name,
      self.num_query_heads, self.num_key_value_heads))
  end
  self.num_repeats = self.num_query_heads / self.num_key_value_heads
  self.dropout = rate_arg(name, o.dropout)
  self._use_bias = bool_arg(name, "use_bias", o.use_bias, true)
  shared_init(self, o)
end

function GroupQueryAttention:build(shapes)
  local qs, vs, ks = common.unpack_shapes(self, shapes)
  ks = ks or vs
  self.feature_dim = qs[#qs]
  local hq, hkv, hd = self.num_query_heads, self.num_key_value_heads, self.head_dim
  self._query_dense = projection(self, "bqm,muh->bquh", { None, hq, hd }, "uh", "query")
  self._query_dense:build(qs)
  self._key_dense = projection(self, "bkm,mvh->bkvh", { None, hkv, hd }, "vh", "key")
  self._key_dense:build(ks)
  if self._use_gate then
    self._gate_dense = projection(self, "bqm,muh->bquh", { None, hq, hd }, "uh", "gate", "sigmoid")
    self._gate_dense:build(qs)
  end
  self._value_dense = projection(self, "bkm,mvh->bkvh", { None, hkv, hd }, "vh", "value")
  self._value_dense:build(vs)
  self._dropout_layer = regularization.Dropout { self.dropout, seed = self.seed, dtype = rawget(self, "_dtype_policy") }
  self._attention = { dot = "bquh,bkuh->buqk", combine = "buqk,bkuh->bquh", norm_axes = { 3 }, n_axes = 1,
    scale = 1.0 / math.sqrt(hd), dropout = self.dropout, query_first = true }
  self._output_dense = projection(self, "bquh,uhm->bqm", { None, self.feature_dim }, "m", "attention_output")
  self._output_dense:build { None, None, hq, hd }
  -- head h of the query reads key/value head floor(h / repeats) (Keras's ops.repeat on axis 2)
  local idx = {}
  for h = 0, hq - 1 do idx[h + 1] = math.floor(h / self.num_repeats) end
  self._repeat_index = idx
end

-- x [B, S, kv heads, D] with each head repeated for its query heads.
local function repeat_heads(self, x)
  if self.num_repeats == 1 then return x end
  return shape_ops.gather(x, convert.tensor(self._repeat_index, "int32"), { axis = 2 })
end

function GroupQueryAttention:call(inputs, opts)
  local query, value, key, t = common.unpack(self, inputs, opts)
  local _, mask, causal_only = call_masks(self, query, value, key, t, opts, false)
  key = key or value
  local gate = self._use_gate and self._gate_dense(common.unmasked(query)) or nil
  local q = self._query_dense(common.unmasked(query))
  local k = repeat_heads(self, self._key_dense(common.unmasked(key)))
  local v = repeat_heads(self, self._value_dense(common.unmasked(value)))
  local out, scores = attend(self, self._attention, q, k, v, mask, { training = opts.training,
    return_attention_scores = opts.return_attention_scores, causal_only = causal_only })
  if gate then out = math_ops.mul(out, gate) end
  out = self._output_dense(out)
  local own = keras_mask.get(query) -- Keras's default compute_mask: the first input's own mask
  if own ~= nil then keras_mask.set(out, own) end
  if opts.return_attention_scores then return { out, scores } end
  return out
end

GroupQueryAttention.compute_mask = MultiHeadAttention.compute_mask

function GroupQueryAttention:get_config()
  local c = Layer.get_config(self)
  c.head_dim, c.num_query_heads, c.num_key_value_heads = self.head_dim, self.num_query_heads, self.num_key_value_heads
  c.use_bias, c.dropout = self._use_bias, self.dropout
  return shared_config(self, c)
end

return M
