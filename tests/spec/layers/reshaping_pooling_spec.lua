-- tests/spec/layers/reshaping_pooling_spec.lua — ZeroPadding, Cropping,
-- UpSampling 1D/2D/3D, RepeatVector and the 1D/3D and global poolings beyond
-- Keras's values (keras_more_values_spec): options and their errors, shapes
-- of KerasTensors, None dims in traces, float64 gradient checks of the 3-D
-- pooling and repeat compositions, and GlobalAveragePooling1D's masks.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local L = tide.layers
local keras_mask = require "tide.keras_mask"

local function none_spec(x)
  local d = {}
  for i = 1, x.ndim do d[i] = tide.None end
  return tide.TensorSpec(d, x.dtype)
end

-- layer traced over all-None dims (and over known ones) gives its eager values.
local function traced_equals(layer, x)
  local want = layer(x):totable()
  h.close(tide.trace(function(v) return layer(v) end, { input_signature = { none_spec(x) } })(x), want, 1e-6)
  h.close(tide.trace(function(v) return layer(v) end)(x), want, 1e-6)
end

describe("reshaping and pooling layers", function()
  before_each(function()
    L.clear_session()
    tide.random.set_seed(8)
    tide.config.set_retracing_warning(false) -- a Function per layer, on purpose
  end)
  after_each(function() tide.config.set_retracing_warning(true) end)

  it("ZeroPadding and Cropping: the argument forms, configs as Keras's, and their errors", function()
    assert.are.same({ 2, 1 }, L.ZeroPadding1D { { 2, 1 } }.padding)
    assert.are.same({ { 1, 1 }, { 2, 2 } }, L.ZeroPadding2D { { 1, 2 } }.padding)
    assert.are.same({ { 3, 3 }, { 3, 3 }, { 3, 3 } }, L.ZeroPadding3D { 3 }.padding)
    assert.are.same({ { 1, 1 }, { 1, 1 }, { 1, 1 } }, L.Cropping3D().cropping)
    assert.are.same({ { 0, 0 }, { 0, 0 } }, L.Cropping2D().cropping)
    assert.are.same({ 1, 1 }, L.Cropping1D().cropping)
    h.errors("ZeroPadding3D: padding must be an integer, {d1, d2, d3}", L.ZeroPadding3D, { { 1, 2 } })
    h.errors("Cropping2D: cropping must be an integer", L.Cropping2D, { { { 1, -1 }, { 0, 0 } } })
    h.errors("ZeroPadding1D: padding must be", L.ZeroPadding1D, { 1.5 })
    h.errors("data_format must be \"channels_last\" or \"channels_first\"", L.ZeroPadding2D, { data_format = "NCHW" })
    h.errors("Cropping1D: takes no data_format", L.Cropping1D, { 1, data_format = "channels_first" })
    h.errors("Cropping1D 'cropping1d_2': cropping (2, 2) must leave some of the input's dim 1 (size 4)",
      L.Cropping1D { 2 }, tide.ones { 1, 4, 2 })
    h.errors("expected an input of rank 5", L.ZeroPadding3D(), tide.ones { 1, 2, 3, 4 })
  end)

  it("UpSampling and RepeatVector: options and errors", function()
    assert.are.same({ 2, 2, 2 }, L.UpSampling3D().size)
    assert.are.equal(2, L.UpSampling1D().size)
    h.errors("UpSampling1D: size must be a positive integer", L.UpSampling1D, { { 2 } })
    h.errors("UpSampling3D: size must be an integer or a list of 3 integers", L.UpSampling3D, { { 2, 2 } })
    h.errors("UpSampling2D: only interpolation=\"nearest\"", L.UpSampling2D, { interpolation = "bilinear" })
    h.errors("RepeatVector: n must be a positive integer", L.RepeatVector, { 0 })
    h.errors("expected an input of rank 2", L.RepeatVector { 2 }, tide.ones { 1, 2, 3 })
  end)

  it("KerasTensors get Keras's output shapes, unknown spatial dims included", function()
    local seq = L.Input { shape = { tide.None, 3 } }
    assert.are.equal("(None, None, 3)", tostring(L.Cropping1D { { 1, 2 } }(seq).shape))
    assert.are.equal("(None, None, 3)", tostring(L.UpSampling1D { 3 }(seq).shape))
    assert.are.equal("(None, None, 3)", tostring(L.ZeroPadding1D()(seq).shape))
    assert.are.equal("(None, None, 3)", tostring(L.MaxPooling1D()(seq).shape))
    assert.are.equal("(None, 3)", tostring(L.GlobalAveragePooling1D()(seq).shape))
    local vol = L.Input { shape = { 4, 6, 8, 2 } }
    assert.are.equal("(None, 2, 3, 4, 2)", tostring(L.MaxPooling3D()(vol).shape))
    assert.are.equal("(None, 2, 3, 4, 2)", tostring(L.AveragePooling3D { 3, strides = 2, padding = "same" }(vol).shape))
    assert.are.equal("(None, 6, 10, 12, 2)", tostring(L.ZeroPadding3D { { 1, 2, 2 } }(vol).shape))
    assert.are.equal("(None, 2, 4, 6, 2)", tostring(L.Cropping3D()(vol).shape))
    assert.are.equal("(None, 8, 6, 16, 2)", tostring(L.UpSampling3D { { 2, 1, 2 } }(vol).shape))
    assert.are.equal("(None, 1, 1, 1, 2)", tostring(L.GlobalMaxPooling3D { keepdims = true }(vol).shape))
    assert.are.equal("(None, 3, 4)", tostring(L.RepeatVector { 3 }(L.Input { shape = { 4 } }).shape))
    local model = tide.Model { inputs = vol, outputs = L.GlobalAveragePooling3D()(L.MaxPooling3D()(vol)) }
    assert.are.same({ 5, 2 }, model:predict(tide.ones { 5, 4, 6, 8, 2 }).shape:as_list())
  end)

  it("every layer traced with None dims gives its eager values", function()
    local s1, s3 = tide.random.normal { 2, 7, 3 }, tide.random.normal { 2, 5, 4, 6, 2 }
    for _, layer in ipairs { L.ZeroPadding1D { { 1, 2 } }, L.Cropping1D { { 2, 1 } }, L.UpSampling1D { 2 },
                             L.MaxPooling1D { 3, strides = 2, padding = "same" }, L.AveragePooling1D(),
                             L.GlobalAveragePooling1D(), L.GlobalMaxPooling1D { keepdims = true } } do
      traced_equals(layer, s1)
    end
    for _, layer in ipairs { L.ZeroPadding3D(), L.Cropping3D { { { 1, 0 }, { 0, 1 }, { 2, 2 } } }, L.UpSampling3D(),
                             L.MaxPooling3D { { 2, 3, 2 }, padding = "same" }, L.AveragePooling3D { 2, strides = 1 },
                             L.GlobalAveragePooling3D(), L.GlobalMaxPooling3D { data_format = "channels_first" },
                             L.MaxPooling3D { 2, data_format = "channels_first" } } do
      traced_equals(layer, s3)
    end
    traced_equals(L.Cropping2D { 1, data_format = "channels_first" }, tide.random.normal { 2, 3, 5, 4 })
    traced_equals(L.RepeatVector { 4 }, tide.random.normal { 3, 2 })
  end)

  it("3-D pooling as two 2-D pools equals a direct window max and mean (VALID and SAME)", function()
    local x = tide.random.normal { 1, 3, 4, 5, 2 }
    local v = x:totable()
    local function window(d0, h0, w0, k, fn)
      local acc, n = nil, 0
      for d = d0, d0 + k[1] - 1 do for i = h0, h0 + k[2] - 1 do for j = w0, w0 + k[3] - 1 do
        local e = v[1][d] and v[1][d][i] and v[1][d][i][j] -- outside the volume: SAME's padding, left out
        if e then acc, n = fn(acc, e[1]), n + 1 end
      end end end
      return acc, n
    end
    local max = L.MaxPooling3D { { 2, 3, 2 }, strides = { 1, 1, 2 } }(x)
    local mean = L.AveragePooling3D { { 2, 2, 3 }, strides = 1, padding = "same" }(x)
    local mx, mn = max:totable(), mean:totable()
    for d = 1, 2 do for i = 1, 2 do for j = 1, 2 do
      local m = window(d, i, 2 * j - 1, { 2, 3, 2 }, function(a, e) return a and math.max(a, e) or e end)
      h.close({ mx[1][d][i][j][1] }, { m }, 1e-7)
    end end end
    for d = 1, 3 do for i = 1, 4 do for j = 1, 5 do
      -- SAME with an even window pads more after: the window starts at the element
      local s, n = window(d, i, j - 1, { 2, 2, 3 }, function(a, e) return (a or 0) + e end)
      h.close({ mn[1][d][i][j][1] }, { s / n }, 1e-5)
    end end end
  end)

  it("gradients (float64) of the 3-D pools, UpSampling3D, Cropping3D, ZeroPadding3D and RepeatVector", function()
    local x = tide.random.normal({ 2, 4, 3, 5, 2 }, { dtype = "float64" })
    local function f64(layer) return function(v) return layer(v) end end
    gc.check(f64(L.MaxPooling3D { 2, dtype = "float64" }), { x })
    gc.check(f64(L.MaxPooling3D { { 3, 2, 2 }, strides = { 1, 2, 2 }, padding = "same", dtype = "float64" }), { x })
    gc.check(f64(L.AveragePooling3D { { 2, 3, 2 }, padding = "same", dtype = "float64" }), { x })
    gc.check(f64(L.AveragePooling1D { 2, strides = 1, dtype = "float64" }), { tide.random.normal({ 2, 5, 3 },
      { dtype = "float64" }) })
    gc.check(f64(L.UpSampling3D { { 2, 1, 3 }, dtype = "float64" }), { x })
    gc.check(f64(L.Cropping3D { dtype = "float64" }), { x })
    gc.check(f64(L.ZeroPadding3D { 1, dtype = "float64" }), { x })
    gc.check(f64(L.RepeatVector { 3, dtype = "float64" }), { tide.random.normal({ 2, 4 }, { dtype = "float64" }) })
  end)

  it("GlobalAveragePooling1D averages the unmasked steps and drops the mask; GlobalMaxPooling1D ignores it", function()
    local ids = tide.tensor({ { 3, 1, 0, 0 }, { 2, 0, 0, 0 } }, "int32")
    local emb = L.Embedding { 5, 2, mask_zero = true }
    local e = emb(ids)
    local pooled = L.GlobalAveragePooling1D()(e)
    local ev = e:totable()
    h.close(pooled, { { (ev[1][1][1] + ev[1][2][1]) / 2, (ev[1][1][2] + ev[1][2][2]) / 2 }, ev[2][1] }, 1e-6)
    assert.is_nil(keras_mask.get(pooled))
    local cf = L.GlobalAveragePooling1D { data_format = "channels_first", keepdims = true }
    local et = tide.transpose(e, { 0, 2, 1 })
    h.close(cf(et, { mask = keras_mask.get(e) }), tide.reshape(pooled, { 2, 2, 1 }):totable(), 1e-6)
    h.errors("the mask must be [batch, steps]", L.GlobalAveragePooling1D(), e, { mask = tide.ones { 2, 4, 2 } })
    -- Keras 3's GlobalMaxPooling1D does not support masks: it warns once and drops it
    local text = h.stderr_of(function() L.GlobalMaxPooling1D()(e) end)
    assert.is_truthy(text:find("does not support masking", 1, true))
  end)

  it("adaptive pooling: windows covering each dim, as PyTorch's; known spatial dims; gradients (float64)", function()
    local x = tide.range(0, 10, 1, "float32"):reshape(1, 10, 1)
    h.close(L.AdaptiveAveragePooling1D { 4 }(x), { { { 1 }, { 3 }, { 6 }, { 8 } } }, 1e-6) -- [0,3) [2,5) [5,8) [7,10)
    h.close(L.AdaptiveMaxPooling1D { 4 }(x), { { { 2 }, { 4 }, { 7 }, { 9 } } }, 0)
    local img = L.Input { shape = { 9, 7, 3 } }
    assert.are.equal("(None, 3, 2, 3)", tostring(L.AdaptiveAveragePooling2D { { 3, 2 } }(img).shape))
    assert.are.equal("(None, 9, 1, 1)", tostring(L.AdaptiveMaxPooling2D { 1, data_format = "channels_first" }(img).shape))
    h.errors("the input's spatial dims must be known", function() L.AdaptiveAveragePooling1D { 2 }(L.Input {
      shape = { tide.None, 3 } }) end)
    h.errors("AdaptiveMaxPooling3D: output_size is required", L.AdaptiveMaxPooling3D, {})
    h.errors("AdaptiveAveragePooling2D: output_size must be an integer or a list of 2 integers",
      L.AdaptiveAveragePooling2D, { { 1, 2, 3 } })
    local v = tide.random.normal({ 2, 5, 4, 3, 2 }, { dtype = "float64" })
    local sig = { input_signature = { tide.TensorSpec({ tide.None, 5, 4, 3, 2 }, "float64") } }
    for _, layer in ipairs { L.AdaptiveAveragePooling3D { { 2, 3, 2 }, dtype = "float64" },
                             L.AdaptiveMaxPooling3D { { 3, 2, 1 }, dtype = "float64" } } do
      h.close(tide.trace(function(t) return layer(t) end, sig)(v), layer(v):totable(), 1e-12)
      gc.check(function(t) return layer(t) end, { v }, { none = false }) -- (the spatial dims must be known)
    end
  end)

  it("pooling options and their errors", function()
    assert.are.same({ 2 }, L.MaxPooling1D().pool_size)
    assert.are.same({ 3, 3, 3 }, L.AveragePooling3D { 3 }.strides)
    assert.are.equal(L.MaxPooling3D, L.MaxPool3D)
    assert.are.equal(L.GlobalAveragePooling1D, L.GlobalAvgPool1D)
    h.errors("MaxPooling3D: padding must be \"valid\" or \"same\"", L.MaxPooling3D, { padding = "full" })
    h.errors("AveragePooling1D: pool_size must be an integer or a list of 1 integers", L.AveragePooling1D, { { 2, 2 } })
    h.errors("MaxPooling3D: strides must hold positive integers", L.MaxPooling3D, { 2, strides = 0 })
    h.errors("GlobalMaxPooling3D: keepdims must be true or false", L.GlobalMaxPooling3D, { keepdims = 1 })
    h.errors("expected an input of rank 3", L.MaxPooling1D(), tide.ones { 2, 3, 4, 5 })
  end)
end)
