-- stdlib/tide/applications/vgg.lua — keras.applications.VGG16 and VGG19: Keras 3's
-- vgg16.py/vgg19.py (five blocks of 3x3 convolutions and max pooling, the fc1/fc2 top).
local layers = require "tide.layers"
local common = require "tide.applications.common"

local fmt = string.format
local M = {}

-- build(fn, convs, o, name): convs[i] = the number of convolutions in block i.
local function build(fn, convs, opts, name)
  local o = common.opts(fn, opts)
  local shape = common.input_shape(fn, o, 224, 32)
  local input = common.input(fn, o, shape)
  local x = input
  local filters = { 64, 128, 256, 512, 512 }
  for b, n in ipairs(convs) do
    for c = 1, n do
      x = layers.Conv2D { filters[b], { 3, 3 }, activation = "relu", padding = "same",
        name = fmt("block%d_conv%d", b, c) }(x)
    end
    x = layers.MaxPooling2D { { 2, 2 }, strides = { 2, 2 }, name = fmt("block%d_pool", b) }(x)
  end
  if o.include_top then
    x = layers.Flatten { name = "flatten" }(x)
    x = layers.Dense { 4096, activation = "relu", name = "fc1" }(x)
    x = layers.Dense { 4096, activation = "relu", name = "fc2" }(x)
    common.check_activation(fn, o.classifier_activation, o.weights)
    x = layers.Dense { o.classes, activation = o.classifier_activation, name = "predictions" }(x)
  else
    x = common.top(fn, x, o)
  end
  local file = fmt("%s_weights_tf_dim_ordering_tf_kernels%s.h5", name, o.include_top and "" or "_notop")
  return common.finish(fn, input, x, o, name, file, name .. "/")
end

-- VGG16/VGG19{include_top = true, weights = nil, input_tensor =, input_shape =,
-- pooling =, classes = 1000, classifier_activation = "softmax", name =}.
function M.VGG16(o) return build("VGG16", { 2, 2, 3, 3, 3 }, o, "vgg16") end
function M.VGG19(o) return build("VGG19", { 2, 2, 4, 4, 4 }, o, "vgg19") end

-- preprocess_input(x): RGB to BGR, ImageNet's mean subtracted (mode "caffe").
function M.preprocess_input(x) return common.preprocess("vgg16.preprocess_input", x, "caffe") end

return M
