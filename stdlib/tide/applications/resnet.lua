-- stdlib/tide/applications/resnet.lua — keras.applications.ResNet50/101/152: Keras 3's
-- resnet.py builder (conv1, pool1, stacks of residual_block_v1, the top), same names and order.
local layers = require "tide.layers"
local common = require "tide.applications.common"

local fmt = string.format
local M = {}

local function bn(name) return layers.BatchNormalization { axis = -1, epsilon = 1.001e-5, name = name } end

-- Keras's residual_block_v1 (the bottleneck; the shortcut is built first, as Keras builds it).
function M.residual_block_v1(x, filters, kernel_size, stride, conv_shortcut, name)
  local shortcut = x
  if conv_shortcut then
    shortcut = layers.Conv2D { 4 * filters, 1, strides = stride, name = name .. "_0_conv" }(x)
    shortcut = bn(name .. "_0_bn")(shortcut)
  end
  x = layers.Conv2D { filters, 1, strides = stride, name = name .. "_1_conv" }(x)
  x = bn(name .. "_1_bn")(x)
  x = layers.Activation { "relu", name = name .. "_1_relu" }(x)
  x = layers.Conv2D { filters, kernel_size, padding = "same", name = name .. "_2_conv" }(x)
  x = bn(name .. "_2_bn")(x)
  x = layers.Activation { "relu", name = name .. "_2_relu" }(x)
  x = layers.Conv2D { 4 * filters, 1, name = name .. "_3_conv" }(x)
  x = bn(name .. "_3_bn")(x)
  x = layers.Add { name = name .. "_add" } { shortcut, x }
  return layers.Activation { "relu", name = name .. "_out" }(x)
end

-- Keras's stack_residual_blocks_v1: block1 with a convolution shortcut, then blocks-1 more.
function M.stack_v1(x, filters, blocks, stride1, name)
  x = M.residual_block_v1(x, filters, 3, stride1 or 2, true, name .. "_block1")
  for i = 2, blocks do x = M.residual_block_v1(x, filters, 3, 1, false, fmt("%s_block%d", name, i)) end
  return x
end

-- ResNet(fn, stacks, o, model_name, weights_name): Keras's ResNet() with
-- preact = false and use_bias = true (the v1 models); stacks is a list of
-- {filters, blocks, stride1} for conv2.. conv5.
function M.build(fn, stacks, opts, model_name, weights_name)
  local o = common.opts(fn, opts)
  local shape = common.input_shape(fn, o, 224, 32)
  local input = common.input(fn, o, shape)
  local x = layers.ZeroPadding2D { padding = { { 3, 3 }, { 3, 3 } }, name = "conv1_pad" }(input)
  x = layers.Conv2D { 64, 7, strides = 2, use_bias = true, name = "conv1_conv" }(x)
  x = bn("conv1_bn")(x)
  x = layers.Activation { "relu", name = "conv1_relu" }(x)
  x = layers.ZeroPadding2D { padding = { { 1, 1 }, { 1, 1 } }, name = "pool1_pad" }(x)
  x = layers.MaxPooling2D { 3, strides = 2, name = "pool1_pool" }(x)
  for i, s in ipairs(stacks) do x = M.stack_v1(x, s[1], s[2], s[3], fmt("conv%d", i + 1)) end
  x = common.top(fn, x, o, "avg_pool", "max_pool")
  local file = fmt("%s_weights_tf_dim_ordering_tf_kernels%s.h5", weights_name or model_name,
    o.include_top and "" or "_notop")
  return common.finish(fn, input, x, o, model_name, file, "resnet/")
end

-- ResNet50/101/152{include_top = true, weights = nil, input_tensor =, input_shape =,
-- pooling =, classes = 1000, classifier_activation = "softmax", name =}.
function M.ResNet50(o)
  return M.build("ResNet50", { { 64, 3, 1 }, { 128, 4 }, { 256, 6 }, { 512, 3 } }, o, "resnet50")
end
function M.ResNet101(o)
  return M.build("ResNet101", { { 64, 3, 1 }, { 128, 4 }, { 256, 23 }, { 512, 3 } }, o, "resnet101")
end
function M.ResNet152(o)
  return M.build("ResNet152", { { 64, 3, 1 }, { 128, 8 }, { 256, 36 }, { 512, 3 } }, o, "resnet152")
end

-- preprocess_input(x): RGB to BGR, ImageNet's mean subtracted (mode "caffe").
function M.preprocess_input(x) return common.preprocess("resnet.preprocess_input", x, "caffe") end

return M
