-- tests/spec/applications/applications_spec.lua — tide.applications against Keras 3's own
-- keras.applications (tests/fixtures/keras/apps_gen.py): outputs with Keras's weight files
-- (Keras 3's .weights.h5 and the legacy layout keras.applications downloads), the layer lists
-- of the full-size models, preprocess_input, decode_predictions, and the refusals.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local resnet = require "tide.applications.resnet"
local efficientnet = require "tide.applications.efficientnet"

local A = tide.applications
local FIX = "tests/fixtures/keras/apps/"
local E = dofile(FIX .. "apps.lua")
local inputs = require("tide.io.h5").open(FIX .. "inputs.h5")
local X_MB = inputs:read("mobilenet_v2")
local X_RS = inputs:read("resnet_small")
inputs:close()

local function mobilenet(o)
  local opts = { alpha = 0.35, input_shape = { 64, 64, 3 } }
  for k, v in pairs(o or {}) do opts[k] = v end
  return A.MobileNetV2(opts)
end

-- The output shape of each layer (its last call's), as Keras's summary lists it (None = -1).
local function output_shapes(model)
  local last = {}
  for _, node in ipairs(rawget(model, "_graph").nodes) do last[node.layer] = node end
  local out = {}
  for i, l in ipairs(model.layers) do
    local node = last[l]
    local kt = node and node.outputs or l.output
    if type(kt) == "table" and kt[1] ~= nil and kt.shape == nil then kt = kt[1] end
    local s = {}
    for k = 1, #kt.shape do s[k] = kt.shape[k] == tide.None and -1 or kt.shape[k] end
    out[i] = s
  end
  return out
end

-- model's layers against Keras's summary want (the first n of its layers when n is given:
-- a model built without the top, as Keras's summary of the full one begins).
local function same_summary(model, want, n)
  assert.equal(want.name, model.name)
  assert.equal(n or #want.layers, #model.layers)
  local shapes = output_shapes(model)
  for i, l in ipairs(model.layers) do
    local w = want.layers[i]
    local cls = getmetatable(l).__name
    -- layers Keras names itself (input_layer_7, global_average_pooling2d_2): the name without its counter
    local auto = w.name:match("^(input_layer)") or w.name:match("^(global_%a+_pooling2d)") or
      w.name:match("^(rescaling)") or w.name:match("^(normalization)")
    if auto then
      assert.equal(auto, (l.name:gsub("_%d+$", "")), "layer " .. i)
    else
      assert.equal(w.name, l.name, "layer " .. i)
    end
    assert.equal(w.class, cls, "class of " .. w.name)
    assert.same(w.shape, shapes[i], "output shape of " .. w.name)
    assert.equal(w.params, l:count_params(), "params of " .. w.name)
  end
  if not n then assert.equal(want.params, model:count_params()) end
end

describe("tide.applications", function()
  it("MobileNetV2 with Keras 3's .weights.h5 predicts what Keras predicted", function()
    local m = mobilenet { classes = 10, weights = FIX .. "mobilenet_v2.weights.h5" }
    assert.equal("mobilenetv2_0.35_64", m.name)
    h.close(m:predict(X_MB, { verbose = 0 }), E.mobilenet_v2.top, 1e-4)
  end)

  it("loads the legacy layout keras.applications downloads (matched by layer position)", function()
    local function small(o)
      local opts = { input_shape = { 48, 40, 3 }, classes = 5 }
      for k, v in pairs(o) do opts[k] = v end
      return resnet.build("ResNet", { { 4, 2, 1 }, { 6, 2 }, { 8, 1 }, { 8, 1 } }, opts, "resnet_small")
    end
    local m = small { weights = FIX .. "resnet_small_legacy.h5" }
    h.close(m(X_RS), E.resnet_small.top, 1e-4)
    -- the same file into a model without the top is refused with the counts, one of other
    -- widths with every shape that differs, and nothing is set
    local nt = small { include_top = false }
    h.errors("holds weights for 47 layers, but the model has 46 layers with weights", function()
      nt:load_weights(FIX .. "resnet_small_legacy.h5")
    end)
    local wide = resnet.build("ResNet", { { 4, 2, 1 }, { 6, 2 }, { 8, 1 }, { 16, 1 } },
      { input_shape = { 48, 40, 3 }, classes = 5 }, "resnet_wide")
    local before = wide:get_weights()[1]:totable() -- conv1's kernel, which alone would fit
    local err = h.errors("does not fit the model (TF-Keras's legacy weights layout, matched by layer position)",
      function() wide:load_weights(FIX .. "resnet_small_legacy.h5") end)
    assert.truthy(err:find("layer 'conv5_block1_0_conv' weight 0", 1, true))
    assert.truthy(err:find("layer 'predictions' weight 0", 1, true))
    assert.same(before, wide:get_weights()[1]:totable())
    -- what Keras 3's own legacy writer makes (variable-length names, which tide does not read)
    h.errors("is a legacy TF-Keras model file", function()
      m:load_weights("tests/fixtures/keras_files/hostile/legacy_model.h5")
    end)
  end)

  it("MobileNetV2 without the top: feature maps, avg and max pooling as Keras", function()
    local full = mobilenet { classes = 10, weights = FIX .. "mobilenet_v2.weights.h5" }
    for _, pooling in ipairs { "none", "avg", "max" } do
      local m = mobilenet { include_top = false, pooling = pooling ~= "none" and pooling or nil }
      for _, l in ipairs(m.layers) do
        if #l.weights > 0 then l:set_weights(full:get_layer(l.name):get_weights()) end
      end
      local y = m(X_MB)
      assert.same(E.mobilenet_v2["no_top_shape_" .. pooling], y.shape:as_list())
      if pooling == "none" then y = y:slice { {}, {}, {}, { 0, 6 } } end
      h.close(y, E.mobilenet_v2["no_top_" .. pooling], 1e-4)
    end
  end)

  it("ResNet's builder, narrow, with Keras's weights predicts what Keras's ResNet() predicted", function()
    local m = resnet.build("ResNet", { { 4, 2, 1 }, { 6, 2 }, { 8, 1 }, { 8, 1 } },
      { input_shape = { 48, 40, 3 }, classes = 5, weights = FIX .. "resnet_small.weights.h5" }, "resnet_small")
    same_summary(m, E.resnet_small.summary)
    h.close(m:predict(X_RS, { verbose = 0 }), E.resnet_small.top, 1e-4)
  end)

  it("MobileNetV2, ResNet50/101/152 and VGG16/19 have Keras's layers: names, classes, shapes, params", function()
    same_summary(A.MobileNetV2 {}, E.summaries.MobileNetV2)
    same_summary(A.MobileNetV2 { alpha = 0.35, input_shape = { 96, 96, 3 }, include_top = false },
      E.summaries.MobileNetV2_035_96_no_top)
    same_summary(A.ResNet50 {}, E.summaries.ResNet50)
    same_summary(A.ResNet101 {}, E.summaries.ResNet101)
    same_summary(A.ResNet152 {}, E.summaries.ResNet152)
    -- VGG's top holds 124M parameters, whose initialization takes seconds: the convolutions
    -- against the start of Keras's list, the top's layers by name and class on a 32x32 input
    local vgg16 = E.summaries.VGG16.layers
    same_summary(A.VGG16 { include_top = false, input_shape = { 224, 224, 3 } }, E.summaries.VGG16, #vgg16 - 4)
    same_summary(A.VGG19 { include_top = false, input_shape = { 224, 224, 3 } }, E.summaries.VGG19, #E.summaries.VGG19.layers - 4)
    local small = A.VGG16 { input_shape = { 32, 32, 3 }, classes = 3 }
    for i = #vgg16 - 3, #vgg16 do
      assert.equal(vgg16[i].name, small.layers[i].name)
      assert.equal(vgg16[i].class, getmetatable(small.layers[i]).__name)
    end
    assert.equal(vgg16[#vgg16 - 1].params, small.layers[#vgg16 - 1]:count_params()) -- fc2: 4096 x 4096 + 4096
  end)

  it("EfficientNet's builder, narrow, with Keras's weights predicts what Keras's EfficientNet() predicted; " ..
    "EfficientNetB0 has Keras's layers", function()
    local EF = dofile(FIX .. "efficientnet.lua")
    local f = require("tide.io.h5").open(FIX .. "inputs_efficientnet.h5")
    local x = f:read("efficientnet_small")
    f:close()
    local m = efficientnet.build("EfficientNet", { 0.25, 0.5, 32, 0.2, "efficientnet_small" },
      { input_shape = { 32, 32, 3 }, classes = 5, weights = FIX .. "efficientnet_small.weights.h5" })
    same_summary(m, EF.summary)
    h.close(m:predict(x, { verbose = 0 }), EF.top, 1e-4)
    same_summary(A.EfficientNetB0 {}, EF.b0)
    assert.equal(x, A.efficientnet.preprocess_input(x)) -- the model rescales and normalizes itself
    h.errors("https://storage.googleapis.com/keras-applications/efficientnetb3_notop.h5", A.EfficientNetB3,
      { include_top = false, weights = "imagenet" })
  end)

  it("takes None image sizes without the top, and an input_tensor", function()
    local m = A.ResNet50 { include_top = false, pooling = "avg", input_shape = { tide.None, tide.None, 3 } }
    assert.same({ 1, 2048 }, m(tide.zeros { 1, 40, 36, 3 }).shape:as_list())
    local x = tide.Input { shape = { 32, 32, 3 } }
    local v = A.VGG16 { include_top = false, input_tensor = x }
    assert.equal(x, v.inputs[1])
    assert.same({ -1, 1, 1, 512 }, output_shapes(v)[#v.layers])
    local mb = A.MobileNetV2 { include_top = false }
    -- an unknown size pads as an even one (Keras's correct_pad): 48 -> 24 -> 12 -> 6 -> 3 -> 1
    assert.same({ 1, 2, 1, 1280 }, mb(tide.zeros { 1, 64, 48, 3 }).shape:as_list())
  end)

  it("serves as a frozen base in a bigger model (transfer learning), then fine-tunes", function()
    local L = tide.layers
    local base = A.MobileNetV2 { alpha = 0.35, input_shape = { 32, 32, 3 }, include_top = false }
    base.trainable = false
    local x = tide.Input { shape = { 32, 32, 3 } }
    local y = L.Dense { 3, activation = "softmax" }(L.GlobalAveragePooling2D {}(base(x, { training = false })))
    local model = tide.Model { x, y }
    model:compile { optimizer = "adam", loss = "sparse_categorical_crossentropy" }
    assert.equal(2, #model.trainable_weights)
    local xs = tide.random.uniform({ 4, 32, 32, 3 }, { seed = 2 })
    local ys = tide.constant({ 0, 1, 2, 0 }, "int32")
    local conv, head = base:get_layer("Conv1"), model.layers[#model.layers]
    local k0, bn0, h0 = conv:get_weights()[1], base:get_layer("bn_Conv1"):get_weights()[3], head:get_weights()[1]
    model:fit(xs, ys, { epochs = 1, batch_size = 4, verbose = 0 })
    assert.same(k0:totable(), conv:get_weights()[1]:totable())
    assert.same(bn0:totable(), base:get_layer("bn_Conv1"):get_weights()[3]:totable()) -- statistics kept
    assert.is_true(tide.reduce_max(tide.abs(head:get_weights()[1] - h0)):item() > 0)
    base.trainable = true
    model:compile { optimizer = tide.optimizers.Adam { learning_rate = 1e-3 }, loss = "sparse_categorical_crossentropy" }
    assert.equal(2 + #base.trainable_weights, #model.trainable_weights)
    model:fit(xs, ys, { epochs = 1, batch_size = 4, verbose = 0 })
    assert.is_true(tide.reduce_max(tide.abs(conv:get_weights()[1] - k0)):item() > 0)
  end)

  it("preprocess_input: caffe (ResNet, VGG), tf (MobileNetV2) and torch modes as Keras", function()
    local x = tide.constant(E.preprocess.x, "float32")
    h.close(A.resnet50.preprocess_input(x), E.preprocess.caffe, 1e-4)
    h.close(A.vgg16.preprocess_input(x), E.preprocess.caffe, 1e-4)
    h.close(A.mobilenet_v2.preprocess_input(x), E.preprocess.tf, 1e-6)
    h.close(A.imagenet_utils.preprocess_input(x, { mode = "torch" }), E.preprocess.torch, 1e-5)
    h.close(A.imagenet_utils.preprocess_input(E.preprocess.x), E.preprocess.caffe, 1e-4)
    h.errors("the last axis must hold the 3 colour channels", A.resnet.preprocess_input, tide.zeros { 2, 4 })
    h.errors("mode must be \"caffe\", \"tf\" or \"torch\"", A.imagenet_utils.preprocess_input, x, { mode = "x" })
  end)

  it("decode_predictions reads Keras's class index from the path given, else says where to get it", function()
    local path = tmp.name(".json")
    local f = assert(io.open(path, "w"))
    local parts = {}
    for i = 0, 999 do parts[#parts + 1] = string.format('"%d": ["n%08d", "class_%d"]', i, i, i) end
    f:write("{" .. table.concat(parts, ", ") .. "}")
    f:close()
    local rows = {}
    for r = 1, 2 do
      local row = {}
      for i = 1, 1000 do row[i] = 0 end
      row[8], row[3], row[501] = 0.5, 0.3, 0.2 - r * 0.1
      rows[r] = row
    end
    local got = A.resnet50.decode_predictions(tide.constant(rows), { top = 3, class_index = path })
    assert.equal(2, #got)
    assert.same({ "n00000007", "class_7" }, { got[1][1][1], got[1][1][2] })
    assert.same({ "n00000002", "class_2" }, { got[1][2][1], got[1][2][2] })
    assert.same({ "n00000500", "class_500" }, { got[1][3][1], got[1][3][2] })
    h.close(got[2][3][3], 0, 1e-7)
    h.close(got[1][1][3], 0.5, 1e-7)
    h.errors("top must be a positive integer", A.resnet50.decode_predictions, tide.constant(rows),
      { top = 0, class_index = path })
    h.errors("expects a batch of predictions of shape (samples, 1000)", A.resnet50.decode_predictions,
      tide.zeros { 2, 10 }, { class_index = path })
    h.errors("imagenet_class_index.json", A.resnet50.decode_predictions, tide.zeros { 1, 1000 },
      { class_index = path .. ".missing" })
    h.errors("tide does not download it", A.resnet50.decode_predictions, tide.zeros { 1, 1000 },
      { class_index = path .. ".missing" })
    tmp.remove(path)
  end)

  it("classifier_activation = tide.None (Keras's None) or false gives the logits", function()
    local m = A.MobileNetV2 { alpha = 0.35, input_shape = { 32, 32, 3 }, classes = 4, classifier_activation = tide.None }
    assert.equal("linear", m:get_layer("predictions"):get_config().activation)
    local s = A.MobileNetV2 { alpha = 0.35, input_shape = { 32, 32, 3 }, classes = 4 }
    assert.equal("softmax", s:get_layer("predictions"):get_config().activation)
    h.errors("only classifier_activation = \"softmax\" or nil (\"linear\") is allowed with pretrained weights",
      A.MobileNetV2, { alpha = 0.35, input_shape = { 32, 32, 3 }, classes = 10, classifier_activation = "relu",
        weights = FIX .. "mobilenet_v2.weights.h5" })
  end)

  it("refuses bad options with Keras's reasons", function()
    h.errors("tide does not download weights. Fetch Keras's file https://storage.googleapis.com/tensorflow/" ..
      "keras-applications/resnet/resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5",
      A.ResNet50, { include_top = false, weights = "imagenet" })
    h.errors("mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_224_no_top.h5", A.MobileNetV2,
      { include_top = false, weights = "imagenet" })
    h.errors("mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96.h5", A.MobileNetV2,
      { alpha = 0.35, input_shape = { 96, 96, 3 }, weights = "imagenet" })
    h.errors("classes must be 1000", A.ResNet50, { weights = "imagenet", classes = 10 })
    h.errors("alpha must be one of 0.35", A.MobileNetV2, { alpha = 0.6, weights = "imagenet" })
    h.errors("input_shape must be {224, 224, 3}", A.VGG16, { weights = "imagenet", input_shape = { 128, 128, 3 } })
    h.errors("with include_top = true, input_shape must be static", A.ResNet50,
      { input_shape = { tide.None, tide.None, 3 } })
    h.errors("input size must be at least 32x32", A.ResNet50, { include_top = false, input_shape = { 16, 64, 3 } })
    h.errors("input_shape must have three entries", A.VGG16, { input_shape = { 64, 64 } })
    h.errors("pooling must be nil, \"avg\" or \"max\"", A.ResNet50, { include_top = false, pooling = "sum" })
    h.errors("unknown option 'alpah'", A.MobileNetV2, { alpah = 0.5 })
    h.errors("ResNet50: unknown option 'alpha'", A.ResNet50, { alpha = 0.5 })
    h.errors("no file 'no/such.h5'", A.ResNet50, { weights = "no/such.h5" })
    h.errors("include_top must be true or false", A.VGG16, { include_top = "yes" })
    h.errors("classes must be a positive integer", A.VGG16, { classes = 0 })
    h.errors("input_tensor must be a KerasTensor", A.VGG16, { input_tensor = tide.zeros { 1, 32, 32, 3 } })
    -- the weights of another architecture: every mismatch named, nothing loaded
    h.errors("does not fit the model", A.ResNet50,
      { include_top = false, input_shape = { 64, 64, 3 }, weights = FIX .. "resnet_small.weights.h5" })
  end)
end)
