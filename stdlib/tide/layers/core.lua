-- stdlib/tide/layers/core.lua — Keras's core layers: Input/InputLayer,
-- Dense, Activation, Identity, Flatten, Reshape, Permute, Lambda, Masking, Embedding.
-- B = batch; shapes are NHWC-style, the batch dim first.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local tensor_shape = require "tide.tensor_shape"
local linalg = require "tide.ops.linalg"
local shape_ops = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local keras_mask = require "tide.keras_mask"
local initializers = require "tide.initializers"
local regularizers = require "tide.regularizers"
local constraints = require "tide.constraints"
local activations = require "tide.activations"
local layer = require "tide.layers.layer"
local options = require "tide.layers.options"
local keras_tensor = require "tide.layers.keras_tensor"
local kwargs = require("tide.initializers.base").kwargs

local Layer, who = layer.Layer, layer.who
local None = tensor_shape.None

local M = {}

-- Option checks (layers/options.lua) naming the layer's class.
local function positive_int(self, what, v) return options.positive_int(getmetatable(self).__name, what, v) end
local function boolean(self, what, v, default) return options.boolean(getmetatable(self).__name, what, v, default) end

---------------------------------------------------------------------------
-- InputLayer and Input
---------------------------------------------------------------------------

-- InputLayer{shape, batch_size, dtype, sparse, ragged, batch_shape,
-- input_tensor, optional, name} (Keras 3's order): the layer a model's
-- inputs come from; its `output` is the KerasTensor Input returns. Sparse,
-- ragged and optional inputs and an input_tensor are not supported yet.
local unpack = unpack or table.unpack
local InputLayer = Layer:extend("InputLayer")
M.InputLayer = InputLayer
InputLayer._default_dtype = "float32" -- not the global policy: inputs stay float32, as Keras's
-- dtype "string" (a text model's input, as keras.Input(dtype="string")) is no dtype policy: taken out before the
-- base reads the options.
function InputLayer:__init(...)
  local n = select("#", ...)
  local argv = { ... }
  local last = argv[n]
  if type(last) == "table" and getmetatable(last) == nil and last.dtype == "string" then
    local copy = {}
    for k, v in pairs(last) do copy[k] = v end
    copy.dtype = nil
    argv[n] = copy
    rawset(self, "_string_input", true)
  end
  return Layer.__init(self, unpack(argv, 1, n))
end
function InputLayer:init(...)
  local o = self:_kwargs({ "shape", "batch_size", "dtype", "sparse", "ragged", "batch_shape", "input_tensor",
    "optional", "name" }, ...)
  for _, k in ipairs { "sparse", "ragged", "optional" } do
    if o[k] then binding.error(string.format("InputLayer: %s inputs are not supported yet", k)) end
  end
  if o.input_tensor ~= nil then
    binding.error("InputLayer: input_tensor is not supported yet; call the model on the tensor instead")
  end
  local dims
  if o.batch_shape ~= nil then
    dims = {}
    for i, d in ipairs(o.batch_shape) do dims[i] = d end
  else
    local shape = o.shape
    if type(shape) == "number" then shape = { shape } end
    if type(shape) ~= "table" then
      binding.error("InputLayer: shape is required, a list of dims without the batch (e.g. {784}), got " ..
        type(shape))
    end
    dims = { o.batch_size == nil and None or o.batch_size }
    for i = 1, #shape do dims[i + 1] = shape[i] end
  end
  for i, d in ipairs(dims) do
    if d == -1 or d == nil then dims[i] = None end
    if dims[i] ~= None and (type(dims[i]) ~= "number" or dims[i] < 0 or dims[i] ~= math.floor(dims[i])) then
      binding.error(string.format("InputLayer: dims must be non-negative integers or tide.None, got %s at %d",
        tostring(dims[i]), i - 1))
    end
  end
  self.batch_shape = dims
  self.built = true
  self.output = keras_tensor.KerasTensor(dims, rawget(self, "_string_input") and "string" or self.dtype, self.name,
    { layer = self })
end
function InputLayer:call(x) return x end
function InputLayer:get_config()
  local c = Layer.get_config(self)
  c.batch_shape = self.batch_shape
  if rawget(self, "_string_input") then c.dtype = "string" end
  return c
end

-- tide.layers.Input{shape, batch_size, dtype, sparse, ragged, batch_shape,
-- name, tensor, optional} (Keras's keras.Input, by position or name;
-- tide.Input{shape = {784}}): a KerasTensor of shape (None, 784) whose
-- node.layer is the InputLayer.
local INPUT_ARGS = { "shape", "batch_size", "dtype", "sparse", "ragged", "batch_shape", "name", "tensor", "optional" }
function M.Input(...)
  local o = kwargs("Input", INPUT_ARGS, ...)
  o.input_tensor, o.tensor = o.tensor, nil
  return InputLayer(o).output
end

---------------------------------------------------------------------------
-- Dense
---------------------------------------------------------------------------

-- Dense{units, activation=nil, use_bias=true, kernel_initializer=
-- "glorot_uniform", bias_initializer="zeros", kernel_regularizer=nil,
-- bias_regularizer=nil}: activation(inputs @ kernel + bias), kernel [in, units]
-- over the last axis of an input of rank >= 2 ([B, ..., in] -> [B, ..., units]).
local Dense = Layer:extend("Dense")
M.Dense = Dense
Dense.supports_masking = true
function Dense:init(...)
  local o = self:_kwargs({ "units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
    "kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint" }, ...)
  self.units = positive_int(self, "units", o.units)
  self.activation = activations.get(o.activation, "Dense: activation")
  self.use_bias = boolean(self, "use_bias", o.use_bias, true)
  self.kernel_initializer = initializers.get(o.kernel_initializer or "glorot_uniform", "Dense: kernel_initializer")
  self.bias_initializer = initializers.get(o.bias_initializer or "zeros", "Dense: bias_initializer")
  self.kernel_regularizer = regularizers.get(o.kernel_regularizer, "Dense: kernel_regularizer")
  self.kernel_constraint = constraints.get(o.kernel_constraint, "Dense: kernel_constraint")
  self.bias_regularizer = regularizers.get(o.bias_regularizer, "Dense: bias_regularizer")
  self.bias_constraint = constraints.get(o.bias_constraint, "Dense: bias_constraint")
  self.input_spec = { min_ndim = 2 }
end
function Dense:build(input_shape)
  local in_dim = input_shape and input_shape[#input_shape]
  if type(in_dim) ~= "number" then
    binding.error(string.format("%s: the last dimension of the input must be known to build the kernel, got shape %s",
      who(self), input_shape and layer.shape_text(input_shape) or "of unknown rank"))
  end
  self.kernel = self:add_weight { name = "kernel", shape = { in_dim, self.units },
    initializer = self.kernel_initializer, regularizer = self.kernel_regularizer, constraint = self.kernel_constraint }
  if self.use_bias then
    self.bias = self:add_weight { name = "bias", shape = { self.units }, initializer = self.bias_initializer,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint }
  end
  self.input_spec = { min_ndim = 2, axes = { [-1] = in_dim } }
end
function Dense:call(x)
  local y = linalg.matmul(x, self.kernel)
  if self.bias then y = y + self.bias end
  return self.activation(y)
end
function Dense:get_config()
  local c = Layer.get_config(self)
  c.units = self.units
  c.activation = activations.serialize(self.activation)
  c.use_bias = self.use_bias
  c.kernel_initializer = initializers.serialize(self.kernel_initializer)
  c.bias_initializer = initializers.serialize(self.bias_initializer)
  c.kernel_regularizer = regularizers.serialize(self.kernel_regularizer)
  c.kernel_constraint = constraints.serialize(self.kernel_constraint)
  c.bias_regularizer = regularizers.serialize(self.bias_regularizer)
  c.bias_constraint = constraints.serialize(self.bias_constraint)
  return c
end

---------------------------------------------------------------------------
-- Activation
---------------------------------------------------------------------------

-- Activation{activation}: the activation (a name or a function) applied.
local Activation = Layer:extend("Activation")
M.Activation = Activation
Activation.supports_masking = true
function Activation:init(...)
  local o = self:_kwargs({ "activation" }, ...)
  if o.activation == nil then binding.error("Activation: activation is required (a name such as \"relu\", or a function)") end
  self.activation = activations.get(o.activation, "Activation: activation")
end
function Activation:call(x) return self.activation(x) end
function Activation:get_config()
  local c = Layer.get_config(self)
  c.activation = activations.serialize(self.activation)
  return c
end

---------------------------------------------------------------------------
-- Identity
---------------------------------------------------------------------------

-- Identity{}: its input (a tensor or a structure of them), mask included.
local Identity = Layer:extend("Identity")
M.Identity = Identity
Identity.supports_masking = true
function Identity:init(...) self:_kwargs({}, ...) end
function Identity:call(x) return x end

---------------------------------------------------------------------------
-- Flatten, Reshape, Permute
---------------------------------------------------------------------------

-- The product of dims (nil when one is unknown).
local function product(dims, from, to)
  local n = 1
  for i = from, to do
    if type(dims[i]) ~= "number" then return nil end
    n = n * dims[i]
  end
  return n
end

-- Flatten{data_format="channels_last"}: [B, d1, d2, ...] -> [B, d1 * d2 * ...]
-- ([B] -> [B, 1]); channels_first puts the channels last first, as Keras.
local Flatten = Layer:extend("Flatten")
M.Flatten = Flatten
function Flatten:init(...)
  local o = self:_kwargs({ "data_format" }, ...)
  local f = o.data_format or "channels_last"
  if f ~= "channels_last" and f ~= "channels_first" then
    binding.error("Flatten: data_format must be \"channels_last\" or \"channels_first\", got " .. tostring(f))
  end
  self.data_format = f
  self.input_spec = { min_ndim = 1 }
end
function Flatten:call(x)
  local shape = x.shape
  local rank = #shape
  if self.data_format == "channels_first" and rank > 2 then
    local perm = { 0 }
    for i = 2, rank - 1 do perm[#perm + 1] = i end
    perm[#perm + 1] = 1
    x = shape_ops.transpose(x, perm)
    shape = x.shape
  end
  local rest = product(shape, 2, rank)
  local batch = shape[1]
  if rest and batch ~= None then return shape_ops.reshape(x, { batch, rest }) end
  if rest and rest > 0 then return shape_ops.reshape(x, { -1, rest }) end
  if batch ~= None then return shape_ops.reshape(x, { batch, -1 }) end
  return shape_ops.reshape(x, { dynamic_shape.shape(x)[0], -1 }) -- the batch size when the graph runs
end
function Flatten:get_config()
  local c = Layer.get_config(self)
  c.data_format = self.data_format
  return c
end

-- Reshape{target_shape}: [B, ...] -> [B, target_shape...]; one target dim may be -1.
local Reshape = Layer:extend("Reshape")
M.Reshape = Reshape
-- A plain list of dims as the only argument: Reshape({4, -1}) as Keras's Reshape((4, -1)).
local function dims_only(...)
  local t = ...
  if select("#", ...) ~= 1 or type(t) ~= "table" or #t == 0 then return nil end
  for k, v in pairs(t) do
    if type(k) ~= "number" or type(v) ~= "number" then return nil end
  end
  return t
end

function Reshape:init(...)
  local list = dims_only(...)
  local o = list and { target_shape = list } or self:_kwargs({ "target_shape" }, ...)
  local t = o.target_shape
  if type(t) ~= "table" then
    binding.error("Reshape: target_shape must be a list of dims (without the batch), got " .. type(t))
  end
  local unknown = 0
  for i, d in ipairs(t) do
    if d == -1 or d == None then unknown = unknown + 1
    elseif type(d) ~= "number" or d < 0 or d ~= math.floor(d) then
      binding.error(string.format("Reshape: target_shape dims must be non-negative integers or -1, got %s at %d",
        tostring(d), i - 1))
    end
  end
  if unknown > 1 then binding.error("Reshape: target_shape can have at most one unknown (-1) dim") end
  local copy = {}
  for i, d in ipairs(t) do copy[i] = d == None and -1 or d end
  self.target_shape = copy
end
function Reshape:call(x)
  local shape = x.shape
  local target = { shape[1] == None and -1 or shape[1] }
  local has_unknown = false
  for i, d in ipairs(self.target_shape) do
    target[i + 1] = d
    if d == -1 then has_unknown = true end
  end
  if has_unknown and shape[1] == None then -- two unknowns: resolve the target's from the known dims
    local rest, known = product(shape, 2, #shape), 1
    if not rest then -- the batch size from the graph at run time, the -1 resolved by reshape
      local parts = { dynamic_shape.shape(x)[0] }
      for i, d in ipairs(self.target_shape) do parts[i + 1] = d end
      return shape_ops.reshape(x, parts)
    end
    for _, d in ipairs(self.target_shape) do if d ~= -1 then known = known * d end end
    if known == 0 or rest % known ~= 0 then
      binding.error(string.format("%s: cannot reshape an input of shape %s to %s", who(self), tostring(shape),
        layer.shape_text(self.target_shape)))
    end
    for i, d in ipairs(self.target_shape) do target[i + 1] = d == -1 and rest / known or d end
  end
  return shape_ops.reshape(x, target)
end
function Reshape:get_config()
  local c = Layer.get_config(self)
  c.target_shape = self.target_shape
  return c
end

-- Permute{dims}: reorders the non-batch dims; dims is a permutation of
-- 1..rank-1 (1-based over the dims after the batch, as Keras).
local Permute = Layer:extend("Permute")
M.Permute = Permute
function Permute:init(...)
  local list = dims_only(...)
  local o = list and { dims = list } or self:_kwargs({ "dims" }, ...)
  local dims = o.dims
  if type(dims) ~= "table" or #dims == 0 then
    binding.error("Permute: dims must be a permutation of 1..n (the dims after the batch), got " .. tostring(dims))
  end
  local seen = {}
  for _, d in ipairs(dims) do
    if type(d) ~= "number" or d < 1 or d > #dims or seen[d] then
      binding.error(string.format("Permute: dims must be a permutation of 1..%d (the batch dim 0 stays first), got {%s}",
        #dims, table.concat(dims, ", ")))
    end
    seen[d] = true
  end
  self.dims = dims
  self.input_spec = { ndim = #dims + 1 }
end
function Permute:call(x)
  local perm = { 0 }
  for i, d in ipairs(self.dims) do perm[i + 1] = d end
  return shape_ops.transpose(x, perm)
end
function Permute:get_config()
  local c = Layer.get_config(self)
  c.dims = self.dims
  return c
end

---------------------------------------------------------------------------
-- Lambda
---------------------------------------------------------------------------

-- Lambda{fn, output_shape=nil, mask=nil, arguments=nil} (Keras 3's order;
-- function= is also taken, as ["function"]): fn(inputs, arguments) as a
-- layer. mask, as Keras's: a function(inputs, previous_mask) giving the
-- output's mask, or a mask tensor; with it the layer supports masking.
-- Variables the function closes over are not tracked (as Keras warns):
-- keep weights in a Layer.
local Lambda = Layer:extend("Lambda")
M.Lambda = Lambda
function Lambda:init(...)
  local o = self:_kwargs({ "function", "output_shape", "mask", "arguments" }, ...)
  local fn = o["function"]
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    binding.error("Lambda: expects a function, e.g. tide.layers.Lambda{function(x) return x * 2 end}, got " ..
      type(fn))
  end
  self.fn = fn
  self.arguments = o.arguments
  self.output_shape = o.output_shape
  if o.mask ~= nil then
    self.mask = o.mask
    self.supports_masking = true
  end
end
function Lambda:compute_mask(inputs, mask)
  local m = rawget(self, "mask")
  if type(m) == "function" or (type(m) == "table" and getmetatable(m) and getmetatable(m).__call) then
    return m(inputs, mask)
  end
  return m
end
function Lambda:call(x, opts)
  if self.arguments ~= nil then return self.fn(x, self.arguments) end
  return self.fn(x)
end
function Lambda:get_config()
  local c = Layer.get_config(self)
  c["function"], c.arguments, c.output_shape, c.mask = self.fn, self.arguments, self.output_shape, rawget(self, "mask")
  return c
end

---------------------------------------------------------------------------
-- Masking
---------------------------------------------------------------------------

-- Masking{mask_value=0}: time steps [B, T, ...] whose features all equal
-- mask_value are masked (Keras's): they come out as zeros, and the output
-- carries the mask of the others, which RNN layers skip and losses ignore.
local Masking = Layer:extend("Masking")
M.Masking = Masking
Masking.supports_masking = true
function Masking:init(...)
  local o = self:_kwargs({ "mask_value" }, ...)
  local v = o.mask_value == nil and 0.0 or o.mask_value
  if type(v) ~= "number" then
    binding.error("Masking: mask_value must be a number, got " .. type(v))
  end
  self.mask_value = v
end
function Masking:compute_mask(x)
  return reduce_ops.reduce_any(math_ops.not_equal(x, self.mask_value), -1)
end
function Masking:call(x)
  local keep = reduce_ops.reduce_any(math_ops.not_equal(x, self.mask_value), -1, true)
  local y = x * math_ops.cast(keep, x.dtype)
  keras_mask.set(y, shape_ops.squeeze(keep, { -1 }))
  return y
end
function Masking:get_config()
  local c = Layer.get_config(self)
  c.mask_value = self.mask_value
  return c
end

---------------------------------------------------------------------------
-- Embedding
---------------------------------------------------------------------------

-- Embedding{input_dim, output_dim, embeddings_initializer="uniform"
-- (RandomUniform(-0.05, 0.05)), embeddings_regularizer=nil}: integer ids
-- [B, ...] -> [B, ..., output_dim], rows of embeddings [input_dim, output_dim].
-- Float ids are cast to int32, as Keras. mask_zero=true: id 0 is padding,
-- and the output carries the mask ids ~= 0 (Keras's), which RNN layers,
-- losses and metrics then honour.
local Embedding = Layer:extend("Embedding")
M.Embedding = Embedding
-- input_dim is Embedding's vocabulary size, not the base's input shape
Embedding._own_options = { input_dim = true }
function Embedding:init(...)
  local o = self:_kwargs({ "input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
    "embeddings_constraint", "mask_zero" }, ...)
  self.input_dim = positive_int(self, "input_dim", o.input_dim)
  self.output_dim = positive_int(self, "output_dim", o.output_dim)
  self.embeddings_initializer = initializers.get(o.embeddings_initializer or "uniform",
    "Embedding: embeddings_initializer")
  self.embeddings_regularizer = regularizers.get(o.embeddings_regularizer, "Embedding: embeddings_regularizer")
  self.embeddings_constraint = constraints.get(o.embeddings_constraint, "Embedding: embeddings_constraint")
  if o.mask_zero ~= nil and type(o.mask_zero) ~= "boolean" then
    binding.error("Embedding: mask_zero must be true or false, got " .. tostring(o.mask_zero))
  end
  self.mask_zero = o.mask_zero == true
  self.supports_masking = self.mask_zero
end
function Embedding:compute_mask(ids)
  if not self.mask_zero then return nil end
  return math_ops.not_equal(ids, 0)
end
function Embedding:build()
  self.embeddings = self:add_weight { name = "embeddings", shape = { self.input_dim, self.output_dim },
    initializer = self.embeddings_initializer, regularizer = self.embeddings_regularizer,
    constraint = self.embeddings_constraint }
end
-- Ids stay integers (no autocast): a Lua table becomes an int32 tensor.
function Embedding:_convert_input(x)
  if type(x) == "table" and not keras_tensor.is(x) and not keras_tensor.any(x) then
    return convert.tensor(x, "int32", "Embedding")
  end
  return x
end
function Embedding:call(ids)
  if not binding.istensor(ids) then
    binding.error(string.format("%s: expects a tensor of ids, got %s", who(self), type(ids)))
  end
  if not dtype.is_int[ids.dt] then ids = ids:cast("int32") end -- float ids, as Keras
  return shape_ops.gather(self.embeddings, ids)
end
function Embedding:get_config()
  local c = Layer.get_config(self)
  c.input_dim, c.output_dim, c.mask_zero = self.input_dim, self.output_dim, self.mask_zero
  c.embeddings_initializer = initializers.serialize(self.embeddings_initializer)
  c.embeddings_regularizer = regularizers.serialize(self.embeddings_regularizer)
  c.embeddings_constraint = constraints.serialize(self.embeddings_constraint)
  return c
end

return M
