-- stdlib/tide/applications/common.lua — what every keras.applications builder shares
-- (Keras 3's imagenet_utils): options, input shapes, the top, the weights, preprocess_input.
--
-- Keras's argument checks are kept in Keras's order, with its messages' sense, so a TF
-- user meets the same refusals; tide never downloads, so weights = "imagenet" names the
-- file Keras would fetch and asks for its path instead.
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local keras_tensor = require "tide.layers.keras_tensor"
local shape_ops = require "tide.ops.shape"
local tensor_shape = require "tide.tensor_shape"
local layers = require "tide.layers"
local options = require "tide.layers.options"
local models = require "tide.models"

local fmt = string.format
local None = tensor_shape.None
local M = {}

M.BASE_URL = "https://storage.googleapis.com/tensorflow/keras-applications/"

-- The options every application takes, with Keras's defaults (weights: nil,
-- since tide does not download Keras's default "imagenet").
M.COMMON = { "include_top", "weights", "input_tensor", "input_shape", "pooling", "classes",
  "classifier_activation", "name" }

-- opts(fn, o, extra): o checked (unknown names refused, naming fn), positional
-- entries mapped to Keras's order (extra's names first, then COMMON's), defaults filled in.
function M.opts(fn, o, extra)
  o = o or {}
  if type(o) ~= "table" then
    binding.error(fmt("%s: expected a table of options ({include_top = ..., weights = ...}), got %s", fn, type(o)))
  end
  local known, order = {}, {}
  for _, k in ipairs(extra or {}) do known[k] = true; order[#order + 1] = k end
  for _, k in ipairs(M.COMMON) do known[k] = true; order[#order + 1] = k end
  local out = {}
  for k, v in pairs(o) do
    if type(k) == "number" then
      if not order[k] then binding.error(fmt("%s: too many positional arguments (%d)", fn, k)) end
      out[order[k]] = v
    elseif not known[k] then
      binding.error(fmt("%s: unknown option '%s' (it takes %s)", fn, tostring(k), table.concat(order, ", ")))
    else
      if out[k] ~= nil then binding.error(fmt("%s: '%s' given twice", fn, k)) end
      out[k] = v
    end
  end
  if out.include_top == nil then out.include_top = true end
  if out.classes == nil then out.classes = 1000 end
  -- Keras's classifier_activation=None (the logits): tide.None or false, as Lua's nil means the default
  if out.classifier_activation == nil then out.classifier_activation = "softmax" end
  if out.classifier_activation == None or out.classifier_activation == false then
    out.classifier_activation = "linear"
  end
  if type(out.include_top) ~= "boolean" then
    binding.error(fmt("%s: include_top must be true or false, got %s", fn, tostring(out.include_top)))
  end
  if type(out.classes) ~= "number" or out.classes < 1 or out.classes % 1 ~= 0 then
    binding.error(fmt("%s: classes must be a positive integer, got %s", fn, tostring(out.classes)))
  end
  if out.pooling ~= nil and out.pooling ~= "avg" and out.pooling ~= "max" then
    binding.error(fmt("%s: pooling must be nil, \"avg\" or \"max\", got %s", fn, tostring(out.pooling)))
  end
  local w = out.weights
  if w ~= nil and type(w) ~= "string" then
    binding.error(fmt("%s: weights must be nil (random initialization), \"imagenet\" or the path to a weights file, " ..
      "got %s", fn, type(w)))
  end
  if w == "imagenet" and out.include_top and out.classes ~= 1000 then
    binding.error(fmt("%s: with weights = \"imagenet\" and include_top = true, classes must be 1000, got %d", fn,
      out.classes))
  end
  if w ~= nil and w ~= "imagenet" then
    local fh = io.open(w, "rb")
    if not fh then
      binding.error(fmt("%s: weights must be nil (random initialization), \"imagenet\" or the path to a weights " ..
        "file; no file '%s'", fn, w))
    end
    fh:close()
  end
  return out
end

-- The imagenet refusal: tide does not download; name the file and where it is
-- (subdir: a folder under BASE_URL, or a whole URL of its own).
function M.imagenet_error(fn, file_name, subdir)
  local base = subdir and subdir:match("^https://") and subdir or M.BASE_URL .. (subdir or "")
  binding.error(fmt("%s: weights = \"imagenet\": tide does not download weights. Fetch Keras's file %s%s " ..
    "(Keras keeps it in ~/.keras/models/ after keras.applications downloads it) and pass its path: " ..
    "weights = \"/path/to/%s\"", fn, base, file_name, file_name))
end

-- validate_activation: with ImageNet weights only softmax or none.
function M.check_activation(fn, act, weights)
  if weights == nil then return end
  if act ~= "softmax" and act ~= nil and act ~= "linear" then
    binding.error(fmt("%s: only classifier_activation = \"softmax\" or nil (\"linear\") is allowed with pretrained " ..
      "weights, got %s", fn, tostring(act)))
  end
end

local function shape_text(s)
  local p = {}
  for i, d in ipairs(s) do p[i] = d == None and "None" or tostring(d) end
  return "{" .. table.concat(p, ", ") .. "}"
end

-- input_shape(fn, o, default_size, min_size): Keras's obtain_input_shape
-- (channels_last): the {h, w, c} to build at.
function M.input_shape(fn, o, default_size, min_size)
  local s = o.input_shape
  local t = o.input_tensor
  if t ~= nil and not class.is_instance(t, keras_tensor.KerasTensor) then
    binding.error(fmt("%s: input_tensor must be a KerasTensor (tide.Input{...} or a layer's output)", fn))
  end
  if s == nil and t ~= nil then
    if t.ndim ~= 4 then binding.error(fmt("%s: input_tensor must be 4-D (batch, h, w, c), got %d-D", fn, t.ndim)) end
    s = { t.shape[2], t.shape[3], t.shape[4] }
  end
  if s ~= nil then
    if type(s) ~= "table" then binding.error(fmt("%s: input_shape must be a table {h, w, c}, got %s", fn, type(s))) end
    if #s ~= 3 then binding.error(fmt("%s: input_shape must have three entries {h, w, c}, got %d", fn, #s)) end
    local c = {}
    for i = 1, 3 do
      local d = s[i]
      if d == -1 then d = None end
      if d ~= None and (type(d) ~= "number" or d < 1 or d % 1 ~= 0) then
        binding.error(fmt("%s: input_shape[%d] must be a positive integer or tide.None, got %s", fn, i, tostring(s[i])))
      end
      c[i] = d
    end
    s = c
  end
  local default = { default_size, default_size, (s and s[3] ~= None) and s[3] or 3 }
  if o.weights == "imagenet" then default[3] = 3 end
  if o.weights == "imagenet" and o.include_top then
    if s and (s[1] ~= default[1] or s[2] ~= default[2] or s[3] ~= default[3]) then
      binding.error(fmt("%s: with include_top = true and weights = \"imagenet\", input_shape must be %s, got %s", fn,
        shape_text(default), shape_text(s)))
    end
    return default
  end
  if s then
    if s[3] ~= 3 and o.weights == "imagenet" then
      binding.error(fmt("%s: the input must have 3 channels with weights = \"imagenet\", got input_shape = %s", fn,
        shape_text(s)))
    end
    if (s[1] ~= None and s[1] < min_size) or (s[2] ~= None and s[2] < min_size) then
      binding.error(fmt("%s: input size must be at least %dx%d, got input_shape = %s", fn, min_size, min_size,
        shape_text(s)))
    end
  else
    s = o.include_top and default or { None, None, 3 }
  end
  if o.include_top and (s[1] == None or s[2] == None) then
    binding.error(fmt("%s: with include_top = true, input_shape must be static, got %s", fn, shape_text(s)))
  end
  return s
end

-- The model's input: a new tide.Input, or the given input_tensor (a KerasTensor).
function M.input(fn, o, shape)
  if o.input_tensor ~= nil then
    return o.input_tensor
  end
  return layers.Input { shape = shape }
end

-- top(x, o, avg_name, max_name): the classifier (GlobalAveragePooling2D +
-- Dense "predictions") or the pooling of a feature extractor.
function M.top(fn, x, o, avg_name, max_name)
  if o.include_top then
    x = layers.GlobalAveragePooling2D { name = avg_name }(x)
    M.check_activation(fn, o.classifier_activation, o.weights)
    return layers.Dense { o.classes, activation = o.classifier_activation, name = "predictions" }(x)
  end
  if o.pooling == "avg" then return layers.GlobalAveragePooling2D { name = avg_name }(x) end
  if o.pooling == "max" then return layers.GlobalMaxPooling2D { name = max_name }(x) end
  return x
end

-- finish(fn, inputs, outputs, o, name, file_name): the functional model, with
-- the weights file loaded (Keras 3's .weights.h5, a .keras file's, or the
-- legacy layout of the files keras.applications downloads).
function M.finish(fn, input, output, o, name, imagenet_file, subdir)
  if o.weights == "imagenet" then M.imagenet_error(fn, imagenet_file, subdir) end
  local model = models.Model { inputs = input, outputs = output, name = o.name or name }
  if o.weights ~= nil then model:load_weights(o.weights) end
  return model
end

---------------------------------------------------------------------------
-- preprocess_input (imagenet_utils.preprocess_input, channels_last)
---------------------------------------------------------------------------

local FLOATS = { float16 = true, bfloat16 = true, float32 = true, float64 = true }
local MEAN_CAFFE = { 103.939, 116.779, 123.68 } -- BGR
local MEAN_TORCH = { 0.485, 0.456, 0.406 }
local STD_TORCH = { 0.229, 0.224, 0.225 }

-- preprocess(x, mode): "tf" scales to [-1, 1], "torch" to [0, 1] then
-- normalizes by ImageNet's mean and std, "caffe" flips RGB to BGR and
-- subtracts ImageNet's BGR mean; x's last axis holds the 3 channels.
function M.preprocess(fn, x, mode)
  if type(x) == "number" or (type(x) ~= "table" and type(x) ~= "cdata") then
    binding.error(fmt("%s: x must be a tensor or a nested table of numbers, got %s", fn, type(x)))
  end
  x = convert.tensor(x, nil, fn)
  if not FLOATS[x.dtype] then x = x:cast("float32") end
  if mode == "tf" then return x / 127.5 - 1 end
  local shape = x.shape:as_list()
  if #shape < 1 or shape[#shape] ~= 3 then
    binding.error(fmt("%s: the last axis must hold the 3 colour channels, got shape %s", fn, tostring(x.shape)))
  end
  if mode == "torch" then
    x = x / 255
    return (x - convert.tensor(MEAN_TORCH, x.dtype)) / convert.tensor(STD_TORCH, x.dtype)
  end
  x = shape_ops.reverse(x, { -1 })
  return x - convert.tensor(MEAN_CAFFE, x.dtype)
end

return M
