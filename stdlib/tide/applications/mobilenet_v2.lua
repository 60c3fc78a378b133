-- stdlib/tide/applications/mobilenet_v2.lua — keras.applications.MobileNetV2: the same
-- layers, names and order as Keras 3's mobilenet_v2.py, so Keras's weight files load.
local binding = require "tide.binding"
local layers = require "tide.layers"
local common = require "tide.applications.common"

local fmt = string.format
local M = {}

-- Keras's _make_divisible: v rounded to a multiple of divisor, never 10% below v.
local function make_divisible(v, divisor)
  local new_v = math.max(divisor, math.floor((v + divisor / 2) / divisor) * divisor)
  if new_v < 0.9 * v then new_v = new_v + divisor end
  return new_v
end

-- Keras's correct_pad for a stride-2 3x3 depthwise convolution.
local function correct_pad(x)
  local h, w = x.shape[2], x.shape[3]
  local ah = type(h) == "number" and 1 - h % 2 or 1
  local aw = type(w) == "number" and 1 - w % 2 or 1
  return { { 1 - ah, 1 }, { 1 - aw, 1 } }
end

local function bn(name)
  return layers.BatchNormalization { axis = -1, epsilon = 1e-3, momentum = 0.999, name = name }
end

-- Keras's _inverted_res_block.
local function inverted_res_block(inputs, expansion, stride, alpha, filters, block_id)
  local in_channels = inputs.shape[4]
  local pointwise_filters = make_divisible(math.floor(filters * alpha), 8)
  local x = inputs
  local prefix = fmt("block_%d_", block_id)
  if block_id > 0 then
    x = layers.Conv2D { expansion * in_channels, kernel_size = 1, padding = "same", use_bias = false,
      name = prefix .. "expand" }(x)
    x = bn(prefix .. "expand_BN")(x)
    x = layers.ReLU { 6.0, name = prefix .. "expand_relu" }(x)
  else
    prefix = "expanded_conv_"
  end
  if stride == 2 then x = layers.ZeroPadding2D { padding = correct_pad(x), name = prefix .. "pad" }(x) end
  x = layers.DepthwiseConv2D { kernel_size = 3, strides = stride, use_bias = false,
    padding = stride == 1 and "same" or "valid", name = prefix .. "depthwise" }(x)
  x = bn(prefix .. "depthwise_BN")(x)
  x = layers.ReLU { 6.0, name = prefix .. "depthwise_relu" }(x)
  x = layers.Conv2D { pointwise_filters, kernel_size = 1, padding = "same", use_bias = false,
    name = prefix .. "project" }(x)
  x = bn(prefix .. "project_BN")(x)
  if in_channels == pointwise_filters and stride == 1 then
    return layers.Add { name = prefix .. "add" } { inputs, x }
  end
  return x
end

-- {filters, stride, expansion} of blocks 0..16, as Keras lists them.
local BLOCKS = {
  { 16, 1, 1 }, { 24, 2, 6 }, { 24, 1, 6 }, { 32, 2, 6 }, { 32, 1, 6 }, { 32, 1, 6 }, { 64, 2, 6 }, { 64, 1, 6 },
  { 64, 1, 6 }, { 64, 1, 6 }, { 96, 1, 6 }, { 96, 1, 6 }, { 96, 1, 6 }, { 160, 2, 6 }, { 160, 1, 6 }, { 160, 1, 6 },
  { 320, 1, 6 },
}

local SIZES = { [96] = true, [128] = true, [160] = true, [192] = true, [224] = true }
local ALPHAS = { 0.35, 0.5, 0.75, 1.0, 1.3, 1.4 }

-- MobileNetV2{alpha = 1.0, input_shape =, include_top = true, weights = nil,
-- input_tensor =, pooling =, classes = 1000, classifier_activation = "softmax", name =}.
function M.MobileNetV2(opts)
  local fn = "MobileNetV2"
  local o = common.opts(fn, opts, { "input_shape", "alpha" })
  local alpha = o.alpha == nil and 1.0 or o.alpha
  if type(alpha) ~= "number" or alpha <= 0 then
    binding.error(fmt("%s: alpha must be a positive number, got %s", fn, tostring(alpha)))
  end
  -- the default size: the input's when square and one of Keras's sizes
  local default_size = 224
  local s = o.input_shape
  if s == nil and o.input_tensor ~= nil and type(o.input_tensor) == "table" and o.input_tensor.shape then
    s = { o.input_tensor.shape[2], o.input_tensor.shape[3] }
  end
  if type(s) == "table" and s[1] == s[2] and SIZES[s[1]] then default_size = s[1] end
  local shape = common.input_shape(fn, o, default_size, 32)
  local rows = shape[1]
  if o.weights == "imagenet" then
    local ok = false
    for _, a in ipairs(ALPHAS) do ok = ok or math.abs(a - alpha) < 1e-9 end
    if not ok then
      binding.error(fmt("%s: with weights = \"imagenet\", alpha must be one of 0.35, 0.5, 0.75, 1.0, 1.3 or 1.4, " ..
        "got %s", fn, tostring(alpha)))
    end
    if shape[1] ~= shape[2] or not SIZES[shape[1]] then rows = 224 end
  end
  local input = common.input(fn, o, shape)
  local x = layers.Conv2D { make_divisible(32 * alpha, 8), kernel_size = 3, strides = { 2, 2 }, padding = "same",
    use_bias = false, name = "Conv1" }(input)
  x = bn("bn_Conv1")(x)
  x = layers.ReLU { 6.0, name = "Conv1_relu" }(x)
  for id, b in ipairs(BLOCKS) do
    x = inverted_res_block(x, b[3], b[2], alpha, b[1], id - 1)
  end
  -- no alpha on the last convolution below 1 (the paper's choice, as Keras)
  local last = alpha > 1.0 and make_divisible(1280 * alpha, 8) or 1280
  x = layers.Conv2D { last, kernel_size = 1, use_bias = false, name = "Conv_1" }(x)
  x = bn("Conv_1_bn")(x)
  x = layers.ReLU { 6.0, name = "out_relu" }(x)
  x = common.top(fn, x, o)
  local alpha_txt = fmt("%.2f", alpha)
  local file = fmt("mobilenet_v2_weights_tf_dim_ordering_tf_kernels_%s_%s%s.h5", tostring(alpha):find("%.") and
    tostring(alpha) or tostring(alpha) .. ".0", tostring(rows), o.include_top and "" or "_no_top")
  return common.finish(fn, input, x, o, fmt("mobilenetv2_%s_%s", alpha_txt, tostring(rows)), file,
    "mobilenet_v2/")
end

-- preprocess_input(x): pixels in [0, 255] to [-1, 1] (mode "tf").
function M.preprocess_input(x) return common.preprocess("mobilenet_v2.preprocess_input", x, "tf") end

return M
