-- stdlib/tide/layers/attention/common.lua — what the attention layers share: their inputs
-- ({query, value, key} or keyed), the masks Keras 3 builds (padding, causal, sliding window),
-- Keras's masked softmax, and the TF backend's dot_product_attention, whose masked rows differ.
local binding = require "tide.binding"
local convert = require "tide.convert"
local variable = require "tide.variable"
local tensor_shape = require "tide.tensor_shape"
local keras_mask = require "tide.keras_mask"
local keras_tensor = require "tide.layers.keras_tensor"
local layer = require "tide.layers.layer"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local create = require "tide.ops.create"
local nn = require "tide.ops.nn"
local dynamic_shape = require "tide.ops.dynamic_shape"
local einsum = require("tide.ops.einsum").einsum

local who = layer.who
local istensor = binding.istensor
local None = tensor_shape.None

local M = {}

---------------------------------------------------------------------------
-- Arguments
---------------------------------------------------------------------------

local function is_tensorish(x)
  return istensor(x) or keras_tensor.is(x) or variable.is_variable(x)
end
M.is_tensorish = is_tensorish

-- The call options that may hold tensors: a KerasTensor among them (a model
-- being defined) moves into the inputs, so the model's graph sees it.
M.TENSOR_OPTIONS = { "attention_mask", "query_mask", "value_mask", "key_mask" }

-- layer(query, value[, key][, opts]) as Keras writes it, or layer({query,
-- value[, key]}, opts), or layer({query =, value =, key =, attention_mask =},
-- opts): the (inputs, opts) the base layer's call takes. A KerasTensor in
-- opts.attention_mask (or a *_mask) moves into keyed inputs.
function M.normalize_call(self, a, b, c, d)
  local inputs, opts
  if is_tensorish(a) and is_tensorish(b) then
    if is_tensorish(c) then inputs, opts = { a, b, c }, d else inputs, opts = { a, b }, c end
  elseif is_tensorish(a) and b == nil or is_tensorish(a) and type(b) == "table" and not is_tensorish(b) then
    binding.error(string.format("%s: expects a query and a value: layer(query, value[, key][, {options}]) or " ..
      "layer({query, value[, key]}, {options})", who(self)))
  else
    inputs, opts = a, b
    if c ~= nil then
      binding.error(string.format("%s: layer({query, value[, key]}, {options}) takes two arguments", who(self)))
    end
  end
  if type(opts) == "table" then
    local moved = nil
    for _, k in ipairs(M.TENSOR_OPTIONS) do
      if keras_tensor.is(opts[k]) then moved = moved or {}; moved[k] = opts[k] end
    end
    if moved then
      local keyed = {}
      if type(inputs) == "table" and inputs.query == nil then
        keyed.query, keyed.value, keyed.key = inputs[1], inputs[2], inputs[3]
      else
        for k, v in pairs(inputs) do keyed[k] = v end
      end
      local rest = {}
      for k, v in pairs(opts) do if not moved[k] then rest[k] = v end end
      for k, v in pairs(moved) do keyed[k] = v end
      inputs, opts = keyed, rest
    end
  end
  return inputs, opts
end

-- query, value, key (nil when not given) and the tensor options from inputs
-- (a list or a keyed table) and opts.
function M.unpack(self, inputs, opts)
  if type(inputs) ~= "table" or is_tensorish(inputs) then
    binding.error(string.format("%s: expects a query and a value: layer(query, value[, key][, {options}]) or " ..
      "layer({query, value[, key]}, {options})", who(self)))
  end
  local q, v, k = inputs.query, inputs.value, inputs.key
  if q == nil then q, v, k = inputs[1], inputs[2], inputs[3] end
  if q == nil or v == nil then
    binding.error(string.format("%s: expects a query and a value, got %s", who(self),
      q == nil and "no query" or "no value"))
  end
  local t = {}
  for _, name in ipairs(M.TENSOR_OPTIONS) do
    t[name] = inputs[name]
    if t[name] == nil then t[name] = opts[name] end
  end
  return q, v, k, t
end

-- The shapes build gets for inputs of either form: query, value, key.
function M.unpack_shapes(self, shapes)
  if type(shapes) ~= "table" then
    binding.error(string.format("%s: build needs the shapes of query and value", who(self)))
  end
  local q, v, k = shapes.query, shapes.value, shapes.key
  if q == nil then q, v, k = shapes[1], shapes[2], shapes[3] end
  if type(q) ~= "table" or type(v) ~= "table" or (type(q[1]) == "table" and q[1] ~= None) then
    binding.error(string.format("%s: build needs the shapes of query and value, e.g. {{B, T, dim}, {B, S, dim}}",
      who(self)))
  end
  return q, v, k
end

-- x as a new view without the Keras mask riding with it (Keras removes the
-- masks of the inputs it projects, so the projections do not warn; tide
-- leaves the caller's tensor as it was).
function M.unmasked(x)
  if keras_mask.get(x) == nil then return x end
  local d, known = dynamic_shape.dims_of(x)
  return shape_ops.reshape(x, known and d or dynamic_shape.shape(x))
end

---------------------------------------------------------------------------
-- Masks
---------------------------------------------------------------------------

-- A mask as bool (Keras's defensive cast: nonzero is true).
function M.bool(m)
  if m == nil or m.dtype == "bool" then return m end
  return math_ops.cast(m, "bool")
end

local function both(a, b)
  if a == nil then return b end
  if b == nil then return a end
  return math_ops.logical_and(a, b)
end
M.both = both

-- Row and column positions [1, T, S] (int32, 0-based) for sequences of
-- lengths t and s (numbers, or 0-d tensors when unknown while tracing).
local function positions(t, s)
  local shape = { 1, t, s }
  if type(t) ~= "number" or type(s) ~= "number" then
    local parts = {}
    for i, d in ipairs(shape) do parts[i] = type(d) == "number" and convert.tensor(d, "int32") or d end
    shape = shape_ops.stack(parts)
  end
  local ones = create.ones(shape, { dtype = "int32" })
  return reduce_ops.cumsum(ones, -2), reduce_ops.cumsum(ones, -1)
end

-- The length of x along axis 1 (a number, or a 0-d tensor while unknown).
local function length(x)
  local d = x.shape[2]
  if d ~= None then return d end
  return dynamic_shape.size_along(x, 1)
end

-- Keras's causal mask [1, T, S]: query position i sees value positions j <= i.
function M.causal_mask(query, value)
  local row, col = positions(length(query), length(value or query))
  return math_ops.greater_equal(row, col)
end

-- Keras's sliding-window band [1, T, S]: |i - j| < window.
function M.sliding_window_mask(query, value, window)
  local row, col = positions(length(query), length(value or query))
  return math_ops.less(math_ops.abs(row - col), window)
end

-- Keras's _compute_attention_mask: the query mask [B, T, 1], value and key
-- masks [B, 1, S], the causal and sliding-window masks [1, T, S] and the
-- attention_mask [B, T, S], and-ed (nil when there is none).
function M.attention_mask(query, value, o)
  local auto
  if o.query_mask ~= nil then auto = shape_ops.expand_dims(M.bool(o.query_mask), -1) end
  if o.value_mask ~= nil then auto = both(auto, shape_ops.expand_dims(M.bool(o.value_mask), -2)) end
  if o.key_mask ~= nil then auto = both(auto, shape_ops.expand_dims(M.bool(o.key_mask), -2)) end
  if o.use_causal_mask then auto = both(auto, M.causal_mask(query, value)) end
  if o.sliding_window then auto = both(auto, M.sliding_window_mask(query, value, o.sliding_window)) end
  local mask = o.attention_mask
  if mask ~= nil then mask = M.bool(mask) end
  if auto ~= nil then mask = mask == nil and auto or math_ops.logical_and(mask, auto) end
  return mask
end

---------------------------------------------------------------------------
-- Softmax over the scores
---------------------------------------------------------------------------

-- Keras's Softmax layer with a mask (scores [..], mask bool, axes a list):
-- the Softmax layer's own computation (layers/activation.lua), so a row with
-- nothing to attend to is all zeros.
M.masked_softmax = require("tide.layers.activation").Softmax.masked

-- The TF backend's dot_product_attention (Keras's path for rank-4
-- projections without dropout or returned scores): logits scaled after the
-- product, masked positions at -0.7 * the dtype's largest value, softmax;
-- a row with nothing to attend to averages every value (the masked softmax
-- above gives zeros there, as Keras does on that path).
-- query [B, T, N, H], key and value [B, S, N, H]; mask broadcasts to [B, N, T, S].
function M.dot_product_attention(query, key, value, mask, scale, causal)
  local logits = einsum("BTNH,BSNH->BNTS", query, key) * scale
  if causal then
    local c = M.causal_mask(query, key)               -- [1, T, S]
    mask = both(mask, shape_ops.expand_dims(c, 1))     -- [1, 1, T, S]
  end
  if mask ~= nil then
    local big = logits.dtype == "float16" and -65500.0 * 0.7 or -3.38953e38 * 0.7
    logits = math_ops.where(mask, logits, big)
  end
  return einsum("BNTS,BSNH->BTNH", nn.softmax(logits, -1), value)
end

return M
