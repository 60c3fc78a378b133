-- tests/interop/onnx_export_write.lua DIR — models tide.onnx.export writes for
-- tests/interop/onnx_export_check.py: DIR/<case>.onnx, with the inputs it is run on and
-- the outputs tide computed, by ONNX's names, in DIR/<case>.inputs and .outputs (safetensors).
local tide = require "tide"
local L = tide.layers
local S = tide.TensorSpec
local None = tide.None
local dir = assert(arg[1], "usage: onnx_export_write.lua DIR")

local function case(name, obj, inputs, outputs, opts)
  tide.onnx.export(obj, dir .. "/" .. name .. ".onnx", opts)
  tide.safetensors.save_file(inputs, dir .. "/" .. name .. ".inputs")
  tide.safetensors.save_file(outputs, dir .. "/" .. name .. ".outputs")
end

tide.random.set_seed(11)

local mlp = tide.Sequential { tide.Input { shape = { 6 } }, L.Dense { 8, activation = "relu" },
  L.Dense { 8, activation = "gelu" }, L.Dense { 4, activation = "softmax" } }
local x = tide.random.normal { 5, 6 }
case("mlp", mlp, { inputs = x }, { output_0 = mlp(x) })
case("mlp_opset21", mlp, { inputs = x }, { output_0 = mlp(x) }, { opset = 21 }) -- GELU as one Gelu node from 20

local cnn = tide.Sequential { tide.Input { shape = { 12, 12, 3 } },
  L.Conv2D { 4, 3, padding = "same", activation = "relu" }, L.Conv2D { 6, 3, strides = 2, dilation_rate = 1 },
  L.DepthwiseConv2D { 3, padding = "same", depth_multiplier = 2 }, L.BatchNormalization {},
  L.MaxPooling2D { 2 }, L.AveragePooling2D { 2, strides = 1, padding = "same" }, L.Dropout { 0.5 },
  L.Flatten {}, L.Dense { 5 } }
cnn.layers[4].moving_mean:assign(tide.random.normal { 12 })
cnn.layers[4].moving_variance:assign(tide.random.uniform({ 12 }, { minval = 0.5, maxval = 2 }))
local img = tide.random.normal { 3, 12, 12, 3 }
case("cnn", cnn, { inputs = img }, { output_0 = cnn(img) })

local more = tide.Sequential { tide.Input { shape = { 4, 4, 2 } }, L.Conv2DTranspose { 3, 3, strides = 2 },
  L.Conv2DTranspose { 2, 3, strides = 2, padding = "same" }, L.SeparableConv2D { 4, 3 }, L.ZeroPadding2D { 1 },
  L.UpSampling2D { 2 }, L.GlobalAveragePooling2D {}, L.Dense { 4, activation = "swish" }, L.LeakyReLU {} }
local small = tide.random.normal { 2, 4, 4, 2 }
case("conv_more", more, { inputs = small }, { output_0 = more(small) })

local seq = tide.Sequential { tide.Input { shape = { 7 }, dtype = "int32" }, L.Embedding { 20, 4 },
  L.LSTM { 5, return_sequences = true }, L.Conv1D { 4, 3, padding = "causal" }, L.GlobalMaxPooling1D {} }
local ids = tide.random.uniform({ 3, 7 }, { maxval = 20, dtype = "int32" })
case("sequence", seq, { inputs = ids }, { output_0 = seq(ids) })

local inp = tide.Input { shape = { 5, 8 }, name = "tokens" }
local att = L.MultiHeadAttention { num_heads = 2, key_dim = 4 }(inp, inp)
local x1 = L.LayerNormalization {}(L.Add {} { inp, att })
local out = L.LayerNormalization {}(L.Add {} { x1, L.Dense { 8 }(L.Dense { 16, activation = "gelu" }(x1)) })
local block = tide.Model { inp, out }
local tokens = tide.random.normal { 2, 5, 8 }
case("transformer", block, { tokens = tokens }, { output_0 = block(tokens) })

local ops = tide.trace(function(a, w, idx)
  local m = tide.matmul(a, w, { transpose_b = true })
  local b = tide.concat({ m, tide.square(m) - 1, tide.exp(-tide.abs(m)) }, 1)
  local c = tide.reshape(b, { -1, 3, 4 })
  local d = tide.reduce_sum(c, 1) + tide.reduce_mean(c, { 1 }, { keepdims = true }):slice { {}, 0 }
  local e = tide.gather(d, idx, { axis = 1 })
  local s = c:slice { {}, { 1, 3 }, { nil, nil, -1 } }
  return tide.maximum(e, 0.25) * tide.sigmoid(e) / (tide.reduce_max(d, -1, { keepdims = true }) + 2),
    tide.transpose(s, { 0, 2, 1 }), tide.argmax(d, 1), tide.pad(d, { { 0, 0 }, { 1, 2 } }, { constant_values = 3 })
end, { input_signature = { S({ None, 5 }, "float32", "a"), S({ 4, 5 }, "float32", "w"), S({ 3 }, "int64", "idx") } })
local a, w, idx = tide.random.normal { 3, 5 }, tide.random.normal { 4, 5 }, tide.tensor({ 2, 0, 3 }, "int64")
local r = { ops(a, w, idx) }
local outs = {}
for k, t in ipairs(r) do outs["output_" .. (k - 1)] = t end
case("ops", ops, { a = a, w = w, idx = idx }, outs)
for _, opset in ipairs { 13, 20 } do case("ops_opset" .. opset, ops, { a = a, w = w, idx = idx }, outs, { opset = opset }) end

local elementwise = tide.trace(function(v, n)
  return tide.floordiv(n, 3), tide.mod(n, -3), tide.math.floormod(v, 0.7), n / 2, tide.not_equal(n, 2),
    tide.math.squared_difference(v, 0.5), tide.math.divide_no_nan(v, tide.round(v)), tide.clip_by_value(v, -0.5, 0.5),
    tide.nn.relu6(v * 8), tide.math.rsqrt(tide.abs(v) + 1), tide.math.expm1(v), tide.math.log1p(tide.abs(v)),
    tide.math.erfc(v), tide.math.is_finite(v / tide.round(v)), tide.math.is_inf(v / tide.round(v)),
    tide.nn.leaky_relu(v, 0.3), tide.nn.elu(v), tide.cumsum(v, 1, { exclusive = true, reverse = true }),
    tide.reduce_any(tide.greater(v, 1), 1), tide.reduce_all(tide.less(v, 2)), tide.shape(v), tide.reduce_prod(v, 0),
    tide.math.truncatemod(n, 3), tide.math.truncatediv(n, -2), tide.nn.selu(v), tide.nn.softplus(v)
end, { input_signature = { S({ None, 4 }, "float32", "v"), S({ None, 4 }, "int32", "n") } })
local v = tide.random.normal { 3, 4 }
local n = tide.random.uniform({ 3, 4 }, { minval = -9, maxval = 9, dtype = "int32" })
local er = { elementwise(v, n) }
local eouts = {}
for k, t in ipairs(er) do eouts["output_" .. (k - 1)] = t end
case("elementwise", elementwise, { v = v, n = n }, eouts)

local resize = tide.trace(function(im, im3)
  return tide.image.resize(im, { 7, 5 }), tide.image.resize(im, { 6, 8 }, { method = "nearest" }),
    tide.image.resize(im3, { 2, 3 }), tide.image.resize(tide.cast(im3 * 10, "int32"), { 5, 5 })
end, { input_signature = { S({ None, 3, 4, 2 }, "float32", "im"), S({ 4, 4, 1 }, "float32", "im3") } })
local im, im3 = tide.random.normal { 2, 3, 4, 2 }, tide.random.normal { 4, 4, 1 }
local rr = { resize(im, im3) }
case("resize", resize, { im = im, im3 = im3 }, { output_0 = rr[1], output_1 = rr[2], output_2 = rr[3], output_3 = rr[4] })

local picks = tide.trace(function(p, i)
  local v, k = tide.math.top_k(p, 3)
  return v, k, tide.one_hot(i, 4), tide.one_hot(i, 3, { axis = 0, on_value = 5, off_value = -1, dtype = "int32" }),
    tide.gather_nd(p, tide.tensor({ { 1, 2 }, { 0, 5 } }, "int32")),
    tide.gather_nd(p, tide.tensor({ { 4 }, { 1 } }, "int64"), { batch_dims = 1 })
end, { input_signature = { S({ None, 6 }, "float32", "p"), S({ None, 2 }, "int32", "i") } })
local p6 = tide.tensor({ { 1, 5, 3, 5, 0, 2 }, { -1, -2, 7, 7, 7, 1 } }, "float32") -- ties: the lower index first
local i2 = tide.tensor({ { 0, 3 }, { -1, 5 } }, "int32")                            -- out of range: all off
local pr = { picks(p6, i2) }
local po = {}
for k, t in ipairs(pr) do po["output_" .. (k - 1)] = t end
case("picks", picks, { p = p6, i = i2 }, po)
print("onnx_export_write: wrote " .. dir)
