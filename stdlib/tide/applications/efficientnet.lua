-- stdlib/tide/applications/efficientnet.lua — keras.applications.EfficientNetB0..B7: Keras 3's
-- efficientnet.py builder (stem, MBConv blocks with squeeze-excite, top), same names and order.
--
-- As Keras, the model starts with Rescaling(1/255) and a Normalization layer (its mean and
-- variance are weights, which ImageNet's files set), so preprocess_input is the identity.
-- Keras adds a Rescaling by ImageNet's std only for weights = "imagenet" (which tide refuses);
-- with weights = path it does not, and neither does tide.
local binding = require "tide.binding"
local tensor_shape = require "tide.tensor_shape"
local layers = require "tide.layers"
local initializers = require "tide.initializers"
local common = require "tide.applications.common"

local fmt = string.format
local None = tensor_shape.None
local M = {}

local function conv_init()
  return initializers.VarianceScaling { scale = 2.0, mode = "fan_out", distribution = "truncated_normal" }
end
local function dense_init()
  return initializers.VarianceScaling { scale = 1.0 / 3.0, mode = "fan_out", distribution = "uniform" }
end

-- Keras's DEFAULT_BLOCKS_ARGS: kernel_size, repeats, filters_in, filters_out, expand_ratio, strides
-- (id_skip true and se_ratio 0.25 for all).
M.DEFAULT_BLOCKS_ARGS = {
  { kernel_size = 3, repeats = 1, filters_in = 32, filters_out = 16, expand_ratio = 1, strides = 1 },
  { kernel_size = 3, repeats = 2, filters_in = 16, filters_out = 24, expand_ratio = 6, strides = 2 },
  { kernel_size = 5, repeats = 2, filters_in = 24, filters_out = 40, expand_ratio = 6, strides = 2 },
  { kernel_size = 3, repeats = 3, filters_in = 40, filters_out = 80, expand_ratio = 6, strides = 2 },
  { kernel_size = 5, repeats = 3, filters_in = 80, filters_out = 112, expand_ratio = 6, strides = 1 },
  { kernel_size = 5, repeats = 4, filters_in = 112, filters_out = 192, expand_ratio = 6, strides = 2 },
  { kernel_size = 3, repeats = 1, filters_in = 192, filters_out = 320, expand_ratio = 6, strides = 1 },
}

-- Keras's correct_pad for a stride-2 k x k convolution (an unknown size pads as an even one).
local function correct_pad(x, k)
  local h, w = x.shape[2], x.shape[3]
  local ah = type(h) == "number" and 1 - h % 2 or 1
  local aw = type(w) == "number" and 1 - w % 2 or 1
  local c = math.floor(k / 2)
  return { { c - ah, c }, { c - aw, c } }
end

-- Keras's block(): an inverted residual block with squeeze-and-excitation.
local function block(inputs, activation, drop_rate, name, a)
  local filters = a.filters_in * a.expand_ratio
  local x = inputs
  if a.expand_ratio ~= 1 then
    x = layers.Conv2D { filters, 1, padding = "same", use_bias = false, kernel_initializer = conv_init(),
      name = name .. "expand_conv" }(inputs)
    x = layers.BatchNormalization { axis = -1, name = name .. "expand_bn" }(x)
    x = layers.Activation { activation, name = name .. "expand_activation" }(x)
  end
  local conv_pad = "same"
  if a.strides == 2 then
    x = layers.ZeroPadding2D { padding = correct_pad(x, a.kernel_size), name = name .. "dwconv_pad" }(x)
    conv_pad = "valid"
  end
  x = layers.DepthwiseConv2D { a.kernel_size, strides = a.strides, padding = conv_pad, use_bias = false,
    depthwise_initializer = conv_init(), name = name .. "dwconv" }(x)
  x = layers.BatchNormalization { axis = -1, name = name .. "bn" }(x)
  x = layers.Activation { activation, name = name .. "activation" }(x)
  local filters_se = math.max(1, math.floor(a.filters_in * 0.25))
  local se = layers.GlobalAveragePooling2D { name = name .. "se_squeeze" }(x)
  se = layers.Reshape { { 1, 1, filters }, name = name .. "se_reshape" }(se)
  se = layers.Conv2D { filters_se, 1, padding = "same", activation = activation, kernel_initializer = conv_init(),
    name = name .. "se_reduce" }(se)
  se = layers.Conv2D { filters, 1, padding = "same", activation = "sigmoid", kernel_initializer = conv_init(),
    name = name .. "se_expand" }(se)
  x = layers.Multiply { name = name .. "se_excite" } { x, se }
  x = layers.Conv2D { a.filters_out, 1, padding = "same", use_bias = false, kernel_initializer = conv_init(),
    name = name .. "project_conv" }(x)
  x = layers.BatchNormalization { axis = -1, name = name .. "project_bn" }(x)
  if a.strides == 1 and a.filters_in == a.filters_out then
    if drop_rate > 0 then
      x = layers.Dropout { drop_rate, noise_shape = { None, 1, 1, 1 }, name = name .. "drop" }(x)
    end
    x = layers.Add { name = name .. "add" } { x, inputs }
  end
  return x
end

-- build(fn, c, opts): Keras's EfficientNet(width_coefficient, depth_coefficient, default_size,
-- dropout_rate, drop_connect_rate = 0.2, depth_divisor = 8, activation = "swish", blocks_args)
-- with c = {width, depth, size, dropout, name, weights_name, blocks_args =}.
function M.build(fn, c, opts)
  local o = common.opts(fn, opts)
  local shape = common.input_shape(fn, o, c[3], 32)
  local input = common.input(fn, o, shape)
  local width, depth, divisor, activation = c[1], c[2], 8, "swish"
  local function round_filters(f)
    f = f * width
    local new = math.max(divisor, math.floor((f + divisor / 2) / divisor) * divisor)
    if new < 0.9 * f then new = new + divisor end
    return new
  end
  local function round_repeats(r) return math.ceil(depth * r) end
  local x = layers.Rescaling { 1.0 / 255.0 }(input)
  x = layers.Normalization { axis = -1 }(x)
  x = layers.ZeroPadding2D { padding = correct_pad(x, 3), name = "stem_conv_pad" }(x)
  x = layers.Conv2D { round_filters(32), 3, strides = 2, padding = "valid", use_bias = false,
    kernel_initializer = conv_init(), name = "stem_conv" }(x)
  x = layers.BatchNormalization { axis = -1, name = "stem_bn" }(x)
  x = layers.Activation { activation, name = "stem_activation" }(x)
  local blocks_args = c.blocks_args or M.DEFAULT_BLOCKS_ARGS
  local total = 0
  for _, a in ipairs(blocks_args) do total = total + round_repeats(a.repeats) end
  local b = 0
  for i, args in ipairs(blocks_args) do
    if args.repeats <= 0 then
      binding.error(fmt("%s: the number of repeats must be > 0, got %s", fn, tostring(args.repeats)))
    end
    local a = {}
    for k, v in pairs(args) do a[k] = v end
    a.filters_in, a.filters_out = round_filters(a.filters_in), round_filters(a.filters_out)
    for j = 0, round_repeats(args.repeats) - 1 do
      if j > 0 then
        a.strides = 1
        a.filters_in = a.filters_out
      end
      x = block(x, activation, 0.2 * b / total, fmt("block%d%s_", i, string.char(j + 97)), a)
      b = b + 1
    end
  end
  x = layers.Conv2D { round_filters(1280), 1, padding = "same", use_bias = false, kernel_initializer = conv_init(),
    name = "top_conv" }(x)
  x = layers.BatchNormalization { axis = -1, name = "top_bn" }(x)
  x = layers.Activation { activation, name = "top_activation" }(x)
  if o.include_top then
    x = layers.GlobalAveragePooling2D { name = "avg_pool" }(x)
    if c[4] > 0 then x = layers.Dropout { c[4], name = "top_dropout" }(x) end
    common.check_activation(fn, o.classifier_activation, o.weights)
    x = layers.Dense { o.classes, activation = o.classifier_activation, kernel_initializer = dense_init(),
      name = "predictions" }(x)
  elseif o.pooling == "avg" then
    x = layers.GlobalAveragePooling2D { name = "avg_pool" }(x)
  elseif o.pooling == "max" then
    x = layers.GlobalMaxPooling2D { name = "max_pool" }(x)
  end
  local file = fmt("%s%s.h5", c[5], o.include_top and "" or "_notop")
  return common.finish(fn, input, x, o, c[5], file, "https://storage.googleapis.com/keras-applications/")
end

-- {width, depth, default size, dropout, name} of B0..B7, as Keras's.
local VARIANTS = {
  { 1.0, 1.0, 224, 0.2 }, { 1.0, 1.1, 240, 0.2 }, { 1.1, 1.2, 260, 0.3 }, { 1.2, 1.4, 300, 0.3 },
  { 1.4, 1.8, 380, 0.4 }, { 1.6, 2.2, 456, 0.4 }, { 1.8, 2.6, 528, 0.5 }, { 2.0, 3.1, 600, 0.5 },
}
-- EfficientNetB0..B7{include_top = true, weights = nil, input_tensor =, input_shape =,
-- pooling =, classes = 1000, classifier_activation = "softmax", name =}.
for i, v in ipairs(VARIANTS) do
  local fn = fmt("EfficientNetB%d", i - 1)
  M[fn] = function(o) return M.build(fn, { v[1], v[2], v[3], v[4], fmt("efficientnetb%d", i - 1) }, o) end
end

-- preprocess_input(x): the identity (the model rescales and normalizes), as Keras's.
function M.preprocess_input(x) return x end

return M
