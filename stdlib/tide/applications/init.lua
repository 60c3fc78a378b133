-- stdlib/tide/applications/init.lua — tide.applications (keras.applications): the model
-- builders and, per family, Keras's modules with their preprocess_input/decode_predictions.
--
-- One file per family (mobilenet_v2, resnet, vgg, efficientnet) over common.lua (Keras's imagenet_utils).
local binding = require "tide.binding"
local common = require "tide.applications.common"
local efficientnet = require "tide.applications.efficientnet"
local imagenet = require "tide.applications.imagenet"
local mobilenet_v2 = require "tide.applications.mobilenet_v2"
local resnet = require "tide.applications.resnet"
local vgg = require "tide.applications.vgg"

local M = {}

-- keras.applications.<family>: the builders, preprocess_input, decode_predictions.
local function family(mod, builders)
  local t = { preprocess_input = mod.preprocess_input, decode_predictions = imagenet.decode_predictions }
  for _, name in ipairs(builders) do
    t[name] = mod[name]
    M[name] = mod[name]
  end
  return t
end

M.mobilenet_v2 = family(mobilenet_v2, { "MobileNetV2" })
M.resnet = family(resnet, { "ResNet50", "ResNet101", "ResNet152" })
M.resnet50 = { ResNet50 = resnet.ResNet50, preprocess_input = resnet.preprocess_input,
  decode_predictions = imagenet.decode_predictions }
M.efficientnet = family(efficientnet, { "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3",
  "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7" })
M.vgg16 = family(vgg, { "VGG16" })
M.vgg19 = family(vgg, { "VGG19" })
M.vgg19.preprocess_input = function(x) return common.preprocess("vgg19.preprocess_input", x, "caffe") end

-- keras.applications.imagenet_utils
M.imagenet_utils = {
  decode_predictions = imagenet.decode_predictions,
  -- preprocess_input(x, {mode = "caffe" | "tf" | "torch"})
  preprocess_input = function(x, opts)
    local mode = (type(opts) == "table" and (opts.mode or opts[1])) or (type(opts) == "string" and opts) or "caffe"
    if mode ~= "caffe" and mode ~= "tf" and mode ~= "torch" then
      binding.error(string.format("imagenet_utils.preprocess_input: mode must be \"caffe\", \"tf\" or \"torch\", got %s",
        tostring(mode)))
    end
    return common.preprocess("imagenet_utils.preprocess_input", x, mode)
  end,
}

return M
