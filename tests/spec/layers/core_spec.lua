-- tests/spec/layers/core_spec.lua — behaviour of the core, merge and
-- normalization layers beyond TF's values: Input and KerasTensors, Dropout's
-- statistics, options, configs, and each layer's errors.
local tide = require "tide"
local h = require "helpers"
local L = tide.layers

describe("tide.layers", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(3)
  end)

  it("Input gives a KerasTensor; calling layers on it builds them and gives output specs", function()
    local inp = L.Input { shape = { 8 } }
    assert.is_true(L.is_keras_tensor(inp))
    assert.are.equal("(None, 8)", tostring(inp.shape))
    assert.are.equal("float32", inp.dtype)
    assert.are.equal("input_layer", inp.name)
    assert.are.equal("InputLayer", getmetatable(inp.node.layer).__name)
    local d = L.Dense { 4, activation = "relu" }
    local hdn = d(inp)
    assert.is_true(d.built)
    assert.are.equal("(None, 4)", tostring(hdn.shape))
    assert.are.equal(d, hdn.node.layer)
    assert.are.equal(inp, hdn.node.inputs)
    local other = L.Input { shape = { 4 }, batch_size = 2, name = "side", dtype = "float64" }
    assert.are.equal("(2, 4)", tostring(other.shape))
    assert.are.equal("float64", other.dtype)
    local merged = L.Concatenate() { hdn, L.Dense { 4 }(L.Input { shape = { 3 } }) }
    assert.are.equal("(None, 8)", tostring(merged.shape))
    assert.are.equal(2, #merged.node.inputs)
    local flat = L.Flatten()(L.Input { shape = { 5, 6 } })
    assert.are.equal("(None, 30)", tostring(flat.shape))
    local ids = L.Input { shape = { 7 }, dtype = "int32" }
    local emb = L.Embedding { 10, 3 }(ids)
    assert.are.equal("(None, 7, 3)", tostring(emb.shape))
    -- the layer still works eagerly afterwards, and its losses hold no symbolic tensors
    assert.are.same({ 2, 4 }, d(tide.ones { 2, 8 }).shape:as_list())
    assert.are.same({}, d.losses)
    h.errors("InputLayer: shape is required", L.Input, {})
    h.errors("Dense 'dense': expected axis -1 of the input to have size 8, got shape (None, 9)", d, L.Input { shape = { 9 } })
  end)

  it("Dropout: Keras's scaling, rate, noise_shape (tide.None = the input's), seed; identity when inferring", function()
    local x = tide.ones { 200, 100 }
    local y = L.Dropout { 0.25 }(x, { training = true })
    local kept = tide.reduce_sum(y:ne(0):cast("float32")):item() / 20000
    assert.is_true(math.abs(kept - 0.75) < 0.02)
    h.close(tide.reduce_max(y), { 1 / 0.75 }, 1e-6)
    assert.are.equal(x, L.Dropout { 0.5 }(x))                      -- inference: the input itself
    assert.are.equal(x, L.Dropout { 0 }(x, { training = true }))
    local shared = L.Dropout { 0.5, noise_shape = { tide.None, 1 } }(tide.ones { 6, 5 }, { training = true })
    for _, row in ipairs(shared:totable()) do
      for _, v in ipairs(row) do assert.are.equal(row[1], v) end -- one draw per row
    end
    tide.random.set_seed(9)
    local a = L.Dropout { 0.5, seed = 4 }(tide.ones { 20 }, { training = true })
    tide.random.set_seed(9)
    local b = L.Dropout { 0.5, seed = 4 }(tide.ones { 20 }, { training = true })
    assert.are.same(a:totable(), b:totable())
    local dc = L.Dropout { 0.5, seed = 4, name = "drop" }:get_config()
    assert.are.same({ rate = 0.5, seed = 4, name = "drop", trainable = true, dtype = "float32" }, dc)
    h.errors("Dropout: rate must be a number in [0, 1)", L.Dropout, { 1 })
    h.errors("Dropout: rate must be a number in [0, 1)", L.Dropout, {})
    h.errors("noise_shape must be a list", L.Dropout, { 0.5, noise_shape = 3 })
  end)

  it("Flatten (channels_first), Reshape and Permute options and errors", function()
    local x = tide.range(24, { dtype = "float32" }):reshape(1, 2, 3, 4)
    local cf = L.Flatten { data_format = "channels_first" }(x)
    h.close(cf, tide.transpose(x, { 0, 2, 3, 1 }):reshape(1, 24):totable(), 0)
    assert.are.same({ 3, 1 }, L.Flatten()(tide.ones { 3 }).shape:as_list())
    h.errors("data_format must be", L.Flatten, { data_format = "nchw" })
    assert.are.same({ 1, 4, 6 }, L.Reshape({ 4, -1 })(x).shape:as_list()) -- a bare list, as Keras's tuple
    assert.are.same({ 1, 4, 2, 3 }, L.Permute({ 3, 1, 2 })(x).shape:as_list())
    assert.are.same({ 1, 12, 2 }, L.Reshape { target_shape = { 12, 2 }, name = "r" }(x).shape:as_list())
    h.errors("at most one unknown", L.Reshape, { { -1, -1 } })
    h.errors("target_shape must be a list", L.Reshape, { target_shape = 3 })
    h.errors("reshape", L.Reshape { { 5 } }, x)
    h.errors("Permute: dims must be a permutation of 1..2", L.Permute, { { 0, 1 } })
    h.errors("expected an input of rank 3", L.Permute { { 2, 1 } }, x)
    assert.are.same({ target_shape = { 6, -1 } }, (function()
      local c = L.Reshape { { 6, -1 } }:get_config()
      return { target_shape = c.target_shape }
    end)())
  end)

  it("Lambda passes arguments and refuses non-functions", function()
    local scale = L.Lambda { function(x, args) return x * args.k end, arguments = { k = 3 } }
    assert.are.same({ 3, 6 }, scale(tide.tensor({ 1, 2 }, "float32")):totable())
    local f = L.Lambda { ["function"] = function(x) return x + 1 end }
    assert.are.same({ 2 }, f(tide.tensor({ 1 }, "float32")):totable())
    h.errors("Lambda: expects a function", L.Lambda, { 3 })
  end)

  it("Embedding: its initializer (uniform in +-0.05), config and errors", function()
    local e = L.Embedding { 1000, 50 }
    e({ 0 })
    local w = e.embeddings:read_value()
    assert.is_true(tide.reduce_max(w):item() <= 0.05 and tide.reduce_min(w):item() >= -0.05)
    assert.is_true(tide.reduce_max(w):item() > 0.049)
    local c = e:get_config()
    assert.are.same({ 1000, 50, false, "RandomUniform" }, { c.input_dim, c.output_dim, c.mask_zero,
      c.embeddings_initializer.class_name })
    h.errors("Embedding: mask_zero must be true or false, got 1", L.Embedding, { 4, 2, mask_zero = 1 })
    h.errors("Embedding: input_dim must be a positive integer", L.Embedding, { 0, 2 })
    h.errors("Embedding: output_dim must be a positive integer", L.Embedding, { 3 })
    h.errors("gather", e, { 1000 }) -- an id out of range
  end)

  it("merge layers check their inputs", function()
    local a, b = tide.ones { 2, 3 }, tide.ones { 2, 4 }
    h.errors("Add 'add': inputs cannot be merged: shapes (2, 3) and (2, 4) do not broadcast", L.Add(), { a, b })
    h.errors("merge layer is called on a list", L.Multiply(), a)
    h.errors("takes exactly 2 inputs, got 3", L.Subtract(), { a, a, a })
    h.errors("must match in every dim but the concatenation axis", L.Concatenate { axis = 0 }, { a, b })
    h.errors("axis 3 is out of range", L.Concatenate { axis = 3 }, { a, a })
    h.errors("Add 'add_1': expected a tensor (or a Lua table of numbers), got string", function()
      local add = L.Add()
      add { a, a }
      add { a, "x" }
    end)
    assert.are.same({ 2, 3 }, L.Add() { a, tide.ones { 3 } }.shape:as_list()) -- broadcasting, as Keras
    assert.are.equal(-1, L.Concatenate():get_config().axis)
  end)

  it("convolution and pooling layers check their options and input", function()
    h.errors("Conv2D: filters must be a positive integer", L.Conv2D, { 0, 3 })
    h.errors("Conv2D: kernel_size is required", L.Conv2D, { 4 })
    h.errors("Conv2D: kernel_size must be an integer or a list of 2 integers", L.Conv2D, { 4, { 1, 2, 3 } })
    h.errors("Conv2D: padding must be \"valid\" or \"same\", got causal", L.Conv2D, { 4, 3, padding = "causal" })
    h.errors("only data_format=\"channels_last\"", L.Conv2D, { 4, 3, data_format = "channels_first" })
    h.errors("strides > 1 together with dilation_rate > 1", L.Conv2D, { 4, 3, strides = 2, dilation_rate = 2 })
    h.errors("Conv1D: the number of filters must be evenly divisible by the number of groups", L.Conv1D, { 4, 3, groups = 3 })
    h.errors("expected an input of rank 4, got shape (2, 3)", L.Conv2D { 4, 3 }, tide.ones { 2, 3 })
    local c = L.Conv2D { 4, 3 }
    c(tide.ones { 1, 5, 5, 2 })
    assert.are.same({ 3, 3, 2, 4 }, c.kernel.shape:as_list()) -- HWIO
    h.errors("expected axis -1 of the input to have size 2", c, tide.ones { 1, 5, 5, 3 })
    local cfg = c:get_config()
    assert.are.same({ 4, { 3, 3 }, { 1, 1 }, "valid", { 1, 1 } }, { cfg.filters, cfg.kernel_size, cfg.strides,
      cfg.padding, cfg.dilation_rate })
    assert.are.same(cfg, L.Conv2D:from_config(cfg):get_config())
    -- causal: output t depends on inputs up to t only
    local causal = L.Conv1D { 1, 3, padding = "causal", kernel_initializer = "ones", use_bias = false }
    assert.are.same({ { { 1 }, { 3 }, { 6 }, { 9 } } },
      causal(tide.tensor({ { { 1 }, { 2 }, { 3 }, { 4 } } }, "float32")):totable())
    h.errors("MaxPooling2D: padding must be", L.MaxPooling2D, { padding = "full" })
    h.errors("ZeroPadding2D: padding must be", L.ZeroPadding2D, { -1 })
    h.errors("UpSampling2D: only interpolation=\"nearest\"", L.UpSampling2D, { interpolation = "bilinear" })
    h.errors("expected an input of rank 4", L.GlobalAveragePooling2D(), tide.ones { 2, 3 })
    assert.are.same({ 2, 2 }, L.MaxPooling2D():get_config().strides)
  end)

  it("normalization layers check their options and input", function()
    h.errors("BatchNormalization: momentum must be a number", L.BatchNormalization, { momentum = "x" })
    h.errors("axis 2 is out of range for an input of rank 2", L.BatchNormalization { axis = 2 }, tide.ones { 2, 3 })
    h.errors("axis must be an integer or a list", L.LayerNormalization, { axis = "last" })
    local bn = L.BatchNormalization()
    bn(tide.ones { 2, 3 })
    h.errors("expected an input of rank 2", bn, tide.ones { 2, 3, 1 })
    h.errors("expected axis -1 of the input to have size 3", bn, tide.ones { 2, 4 })
    local c = bn:get_config()
    assert.are.same({ -1, 0.99, 1e-3, true, true }, { c.axis, c.momentum, c.epsilon, c.center, c.scale })
    assert.are.same(c, L.BatchNormalization:from_config(c):get_config())
    local lc = L.LayerNormalization():get_config()
    assert.are.same({ -1, 1e-3 }, { lc.axis, lc.epsilon })
    local ln = L.LayerNormalization { center = false, scale = false }
    ln(tide.ones { 2, 3 })
    assert.are.equal(0, #ln.weights)
  end)
end)
