-- tests/spec/saved_model/onnx_export_spec.lua — tide.onnx.export (kernels/io/onnx_write*.c): Keras models and
-- traced functions written as ONNX and read back by tide's own reader give the model's outputs (onnxruntime's
-- check is tests/interop/onnx_export_check.sh); unmapped ops, bad options and failed writes give clear errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local prog = require "tide_program"
local L = tide.layers
local S = tide.TensorSpec
local None = tide.None

local dir
setup(function() dir = tmp.dir("onnx_export") end)
teardown(function() tmp.remove(dir) end)

local function round_trip(obj, x, tol, opts)
  local path = dir .. "/m.onnx"
  tide.onnx.export(obj, path, opts)
  local m = tide.onnx.load(path)
  return m, path
end

local function read_all(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("tide.onnx.export", function()
  it("writes a Keras MLP (Dense, activations, softmax) that tide's reader runs the same, any batch", function()
    tide.random.set_seed(1)
    local model = tide.Sequential { tide.Input { shape = { 6 } }, L.Dense { 8, activation = "relu" },
      L.Dense { 8, activation = "tanh" }, L.Dense { 4, activation = "softmax" } }
    local m = round_trip(model)
    assert.are.equal("onnx", m.format)
    assert.are.equal(17, m.opset)
    assert.are.equal(1, #m.inputs)
    assert.are.equal(None, m.inputs[1].shape[1]) -- the batch is a symbolic dim
    assert.are.equal(6, m.inputs[1].shape[2])
    for _, n in ipairs { 5, 1 } do
      local x = tide.random.normal { n, 6 }
      h.close(m(x), model(x):totable(), 1e-6)
    end
  end)

  it("writes a Keras CNN (Conv2D NHWC as NCHW Conv, depthwise, pools, BatchNorm, Flatten, Dropout)", function()
    tide.random.set_seed(2)
    local model = tide.Sequential { tide.Input { shape = { 12, 12, 3 } },
      L.Conv2D { 4, 3, padding = "same", activation = "relu" },
      L.Conv2D { 6, 3, strides = 2, padding = "valid" },
      L.DepthwiseConv2D { 3, padding = "same", depth_multiplier = 2 },
      L.BatchNormalization {}, L.MaxPooling2D { 2 }, L.AveragePooling2D { 2, strides = 1, padding = "same" },
      L.Dropout { 0.5 }, L.Flatten {}, L.Dense { 5 } }
    -- BatchNorm's moving statistics away from 0 and 1, so inference mode is seen
    local bn = model.layers[4]
    bn.moving_mean:assign(tide.random.normal { 12 })
    bn.moving_variance:assign(tide.random.uniform({ 12 }, { minval = 0.5, maxval = 2 }))
    local m = round_trip(model)
    local x = tide.random.normal { 3, 12, 12, 3 }
    h.close(m(x), model(x):totable(), 2e-5)
  end)

  it("writes LayerNormalization and a Transformer block (MultiHeadAttention, residuals, a GELU MLP)", function()
    tide.random.set_seed(3)
    local inp = tide.Input { shape = { 5, 8 } }
    local att = L.MultiHeadAttention { num_heads = 2, key_dim = 4 }(inp, inp)
    local x1 = L.LayerNormalization {}(L.Add {} { inp, att })
    local ff = L.Dense { 8 }(L.Dense { 16, activation = "gelu" }(x1))
    local out = L.LayerNormalization { epsilon = 1e-5 }(L.Add {} { x1, ff })
    local model = tide.Model { inp, out }
    local m = round_trip(model)
    local x = tide.random.normal { 2, 5, 8 }
    h.close(m(x), model(x):totable(), 2e-5)
  end)

  it("writes a traced function of elementwise, reduction, reshape, concat, slice, gather and matmul ops", function()
    local f = tide.trace(function(x, w, idx)
      local a = tide.matmul(x, w)                                   -- [B, 4]
      local b = tide.concat({ a, tide.square(a) - 1, tide.exp(-tide.abs(a)) }, 1) -- [B, 12]
      local c = tide.reshape(b, { -1, 3, 4 })
      local d = tide.reduce_sum(c, 1) + tide.reduce_mean(c, { 1 }, { keepdims = true }):slice { {}, 0 }
      local e = tide.gather(d, idx, { axis = 1 })
      local s = c:slice { {}, { 1, 3 }, { nil, nil, -1 } }            -- slice with a negative step
      local r = tide.maximum(e, 0.25) * tide.sigmoid(e) / (tide.reduce_max(d, -1, { keepdims = true }) + 2)
      return r, tide.transpose(s, { 0, 2, 1 }), tide.argmax(d, 1), tide.cast(tide.greater(d, 0), "float32")
    end, { input_signature = { S({ None, 5 }, "float32", "x"), S({ 5, 4 }, "float32", "w"),
      S({ 3 }, "int32", "idx") } })
    local m = round_trip(f)
    assert.are.same({ "x", "w", "idx" }, { m.inputs[1].name, m.inputs[2].name, m.inputs[3].name })
    local x, w, idx = tide.random.normal { 3, 5 }, tide.random.normal { 5, 4 }, tide.tensor({ 2, 0, 3 }, "int32")
    local got = m { x = x, w = w, idx = idx }
    local want = { f(x, w, idx) }
    for k = 1, 4 do
      local name = "output_" .. (k - 1)
      assert.are.equal(want[k].dtype, got[name].dtype, name)
      h.close(got[name], want[k]:totable(), 1e-5)
    end
  end)

  it("writes the elementwise ops ONNX lacks as compositions, with TF's signs and dtypes", function()
    local f = tide.trace(function(x, n)
      return tide.floordiv(n, 3), tide.mod(n, -3), tide.math.floormod(x, 0.7), n / 2, tide.not_equal(n, 2),
        tide.math.squared_difference(x, 0.5), tide.math.divide_no_nan(x, tide.round(x)),
        tide.clip_by_value(x, -0.5, 0.5), tide.nn.relu6(x * 8), tide.math.rsqrt(tide.abs(x) + 1), tide.math.expm1(x),
        tide.math.log1p(tide.abs(x)), tide.math.erfc(x), tide.math.is_finite(x / tide.round(x)),
        tide.math.is_inf(x / tide.round(x)), tide.nn.leaky_relu(x, 0.3), tide.nn.elu(x),
        tide.where(tide.greater(x, 0), x, -x), tide.tile(x, { 2, 1 }),
        tide.broadcast_to(tide.expand_dims(x[0], 0), { 3, 4 }), tide.squeeze(tide.reshape(x, { -1, 1, 4 }), { 1 }),
        tide.reduce_any(tide.greater(x, 1), 1), tide.reduce_all(tide.less(x, 2)), tide.shape(x),
        tide.reduce_prod(x, 0), tide.reduce_min(n, 1, { keepdims = true }), tide.argmin(x, 1, { output_type = "int64" }),
        tide.nn.log_softmax(x), tide.math.truncatemod(n, 3), tide.math.truncatediv(n, -2), tide.nn.selu(x),
        tide.nn.softplus(x), tide.math.sign(x), tide.nn.gelu(x, { approximate = true }), tide.math.reciprocal(x + 3)
    end, { input_signature = { S({ None, 4 }, "float32", "x"), S({ None, 4 }, "int32", "n") } })
    tide.random.set_seed(6)
    local x = tide.random.normal { 3, 4 }
    local n = tide.random.uniform({ 3, 4 }, { minval = -9, maxval = 9, dtype = "int32" })
    local want = { f(x, n) }
    assert.are.equal(35, #want)
    local m = round_trip(f)
    local got = m { x = x, n = n }
    for k = 1, #want do
      local g = got["output_" .. (k - 1)]
      assert.are.equal(want[k].dtype, g.dtype, "output " .. k)
      local exact = want[k].dtype ~= "float32"
      h.close(g:cast("float64"), want[k]:cast("float64"):totable(), exact and 0 or 1e-5)
    end
  end)

  it("writes Conv2DTranspose (ConvTranspose), SeparableConv2D, padding, upsampling, Embedding, LSTM, Conv1D", function()
    tide.random.set_seed(7)
    local more = tide.Sequential { tide.Input { shape = { 4, 4, 2 } }, L.Conv2DTranspose { 3, 3, strides = 2 },
      L.Conv2DTranspose { 2, 3, strides = 2, padding = "same" }, L.SeparableConv2D { 4, 3 }, L.ZeroPadding2D { 1 },
      L.UpSampling2D { 2 }, L.GlobalAveragePooling2D {}, L.Dense { 4, activation = "swish" } }
    local x = tide.random.normal { 2, 4, 4, 2 }
    h.close(round_trip(more)(x), more(x):totable(), 2e-5)
    local seq = tide.Sequential { tide.Input { shape = { 7 }, dtype = "int32" }, L.Embedding { 20, 4 },
      L.LSTM { 5, return_sequences = true }, L.Conv1D { 4, 3, padding = "causal" }, L.GlobalMaxPooling1D {} }
    local ids = tide.random.uniform({ 3, 7 }, { maxval = 20, dtype = "int32" })
    h.close(round_trip(seq)(ids), seq(ids):totable(), 2e-5)
  end)

  it("writes tide.image.resize as Resize (bilinear up and down, nearest at whole upscales, rank 3, ints)", function()
    local f = tide.trace(function(im, im3)
      return tide.image.resize(im, { 7, 5 }), tide.image.resize(im, { 6, 8 }, { method = "nearest" }),
        tide.image.resize(im3, { 2, 3 }), tide.image.resize(tide.cast(im3 * 10, "int32"), { 5, 5 })
    end, { input_signature = { S({ None, 3, 4, 2 }, "float32", "im"), S({ 4, 4, 1 }, "float32", "im3") } })
    tide.random.set_seed(8)
    local im, im3 = tide.random.normal { 2, 3, 4, 2 }, tide.random.normal { 4, 4, 1 }
    local want = { f(im, im3) }
    local got = round_trip(f) { im = im, im3 = im3 }
    for k = 1, 4 do
      local g = got["output_" .. (k - 1)]
      assert.are.same(want[k].shape:as_list(), g.shape:as_list())
      h.close(g, want[k]:totable(), 1e-6)
    end
    local odd = tide.trace(function(a) return tide.image.resize(a, { 5, 4 }, { method = "nearest" }) end,
      { input_signature = { S({ 1, 3, 4, 1 }, "float32") } })
    h.errors("nearest from 3 to 5 is not a whole-number upscale", function() tide.onnx.export(odd, dir .. "/odd.onnx") end)
  end)

  it("writes one_hot as TF has it (an index out of range, negative too, gives all off), top_k, gather_nd, cumsum", function()
    local f = tide.trace(function(x, i)
      local v, k = tide.math.top_k(x, 3)
      return tide.one_hot(i, 4), tide.one_hot(i, 3, { axis = 0, on_value = 5, off_value = -1, dtype = "int32" }),
        tide.one_hot(tide.cast(i, "uint8"), 4), v, k, tide.gather_nd(x, tide.tensor({ { 1, 2 } }, "int32")),
        tide.gather_nd(x, tide.tensor({ { 4 }, { 0 } }, "int64"), { batch_dims = 1 }), tide.cumsum(x, 1),
        tide.cumsum(x, 0, { exclusive = true, reverse = true }), tide.cumsum(i, -1, { reverse = true })
    end, { input_signature = { S({ None, 6 }, "float32", "x"), S({ None, 2 }, "int32", "i") } })
    local x = tide.tensor({ { 1, 5, 3, 5, 0, 2 }, { -1, -2, 7, 7, 7, 1 } }, "float32") -- ties: lower index first
    local i = tide.tensor({ { 0, 3 }, { -1, 5 } }, "int32")
    local want = { f(x, i) }
    assert.are.equal(10, #want)
    -- tide's reader maps TopK, GatherND and CumSum (kernels/io/onnx_ops_more.c): all read back
    local got = round_trip(f) { x = x, i = i }
    for k = 1, #want do
      local g = got["output_" .. (k - 1)]
      assert.are.equal(want[k].dtype, g.dtype, "output " .. k)
      assert.are.same(want[k].shape:as_list(), g.shape:as_list(), "output " .. k)
      h.close(g, want[k]:totable(), 0)
    end
  end)

  it("exports a Lua function with an input_signature, and names inputs and outputs as asked", function()
    local v = tide.Variable(tide.tensor { { 1, 2 }, { 3, 4 } }:cast("float32"), { name = "weights" })
    local path = dir .. "/named.onnx"
    tide.onnx.export(function(x) return { y = tide.matmul(x, v) + 1 } end, path,
      { input_signature = { S({ None, 2 }, "float32") }, input_names = { "features" }, output_names = { "scores" } })
    local m = tide.onnx.load(path)
    assert.are.equal("features", m.inputs[1].name)
    assert.are.equal("scores", m.outputs[1].name)
    h.close(m { features = tide.tensor { { 1, 1 } }:cast("float32") }.scores, { { 5, 7 } }, 0)
  end)

  it("writes opsets 13 to 21 (reductions' axes as attributes or inputs, GELU composed or one op)", function()
    tide.random.set_seed(4)
    local f = tide.trace(function(x)
      return tide.reduce_mean(tide.nn.gelu(x), 1) + tide.reduce_max(x, 1), tide.nn.gelu(x, { approximate = true })
    end, { input_signature = { S({ None, 6 }, "float32", "x") } })
    local x = tide.random.normal { 2, 6 }
    local w1, w2 = f(x)
    for _, opset in ipairs { 13, 17, 18, 20, 21 } do
      local m = round_trip(f, nil, nil, { opset = opset })
      assert.are.equal(opset, m.opset)
      local got = m { x = x }
      h.close(got.output_0, w1:totable(), 1e-6)
      h.close(got.output_1, w2:totable(), 1e-6)
    end
  end)

  it("names every op with no ONNX mapping once, with where it was recorded", function()
    local f = tide.trace(function(x)
      local a = tide.linalg.cholesky(x)
      local b = tide.linalg.cholesky(a)
      return tide.cumprod(b, 1), tide.math.lgamma(b)
    end, { input_signature = { S({ 3, 3 }, "float32") } })
    local path = dir .. "/unmapped.onnx"
    local ok, err = pcall(tide.onnx.export, f, path)
    assert.is_false(ok)
    err = tostring(err)
    assert.matches("3 op%(s%) have no ONNX mapping at opset 17", err)
    assert.matches("cholesky %(first at [^)]*onnx_export_spec.lua:%d+%)", err)
    assert.matches("lgamma", err)
    assert.matches("cumprod", err)
    local _, count = err:gsub("cholesky", "")
    assert.are.equal(1, count)
    assert.is_nil(io.open(path, "rb"))
  end)

  it("refuses bad arguments with messages that say what is wrong", function()
    local f = tide.trace(function(x) return x + 1 end, { input_signature = { S({ 2 }, "float32", "x") } })
    local path = dir .. "/bad.onnx"
    h.errors("opset 12 is not written (opsets 13 to 21 are)", function() tide.onnx.export(f, path, { opset = 12 }) end)
    h.errors("opset must be an integer", function() tide.onnx.export(f, path, { opset = 1.5 }) end)
    h.errors("path must be a file name string", function() tide.onnx.export(f, "") end)
    h.errors("output_names must be a list of 1 names", function()
      tide.onnx.export(f, path, { output_names = { "a", "b" } })
    end)
    h.errors("output name 'x' is also an input's name", function()
      tide.onnx.export(f, path, { output_names = { "x" } })
    end)
    h.errors("unknown option 'colour'", function() tide.onnx.export(f, path, { colour = 1 }) end)
    h.errors("has no input_signature", function() tide.onnx.export(tide.trace(function(x) return x end), path) end)
    h.errors("needs an input_signature", function() tide.onnx.export(function(x) return x end, path) end)
    h.errors("expected a Keras model, a traced function", function() tide.onnx.export(42, path) end)
    h.errors("input_names[1] must be a non-empty string", function()
      tide.onnx.export(f, path, { input_names = { "" } })
    end)
    h.errors("two outputs are named 'y'", function()
      tide.onnx.export(tide.trace(function(x) return x, x end, { input_signature = { S({ 2 }, "float32", "x") } }),
        path, { output_names = { "y", "y" } })
    end)
    h.errors("a concrete function has its inputs already", function()
      tide.onnx.export(f:get_concrete_function(), path, { input_signature = { S({ 2 }, "float32") } })
    end)
    local model = tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 1 } }
    h.errors("a Keras model's inputs come from the model", function()
      tide.onnx.export(model, path, { input_signature = { S({ 2 }, "float32") } })
    end)
    h.errors("input_signature must be a list of TensorSpecs", function()
      tide.onnx.export(f, path, { input_signature = 3 })
    end)
    h.errors("onnx.export", function() tide.onnx.export(f, dir .. "/no/such/folder/m.onnx") end)
  end)

  it("leaves an existing file as it was when an export fails", function()
    local path = dir .. "/keep.onnx"
    local good = tide.trace(function(x) return x * 2 end, { input_signature = { S({ 2 }, "float32", "x") } })
    tide.onnx.export(good, path)
    local before = read_all(path)
    local bad = tide.trace(function(x) return tide.linalg.cholesky(x) end, { input_signature = { S({ 2, 2 }, "float32") } })
    assert.has_error(function() tide.onnx.export(bad, path) end)
    assert.are.equal(before, read_all(path))
    h.close(tide.onnx.load(path)(tide.tensor({ 1, 2 }, "float32")), { 2, 4 }, 0)
  end)

  it("is what `tide export script.lua m.onnx` (or --format onnx, --opset) writes", function()
    prog.write_file(dir .. "/model.lua", [[
      local tide = require "tide"
      tide.random.set_seed(5)
      return tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense { 2, activation = "sigmoid" } }
    ]])
    prog.write_file(dir .. "/five.lua", "return 5")
    local function run(args)
      return prog.sh(dir, "cd " .. prog.quote(dir) .. " && " .. prog.quote(prog.path) .. " export " .. args)
    end
    local rc, out, err = run("model.lua m.onnx")
    assert.are.equal(0, rc, err)
    assert.matches("exported the Keras model to m.onnx %(ONNX opset 17%)", out)
    local m = tide.onnx.load(dir .. "/m.onnx")
    assert.are.equal(17, m.opset)
    tide.random.set_seed(5)
    local model = tide.Sequential { tide.Input { shape = { 3 } }, L.Dense { 2, activation = "sigmoid" } }
    local x = tide.random.normal { 4, 3 }
    h.close(m(x), model(x):totable(), 1e-6)
    rc, out, err = run("--format onnx --opset 13 model.lua other_name")
    assert.are.equal(0, rc, err)
    assert.matches("ONNX opset 13", out)
    assert.are.equal(13, tide.onnx.load(dir .. "/other_name").opset)
    rc, _, err = run("--format tflite model.lua m.onnx")
    assert.are.equal(2, rc)
    assert.matches("unknown %-%-format 'tflite' %(saved_model or onnx%)", err)
    rc, _, err = run("--opset 13 model.lua saved_dir")
    assert.are.equal(2, rc)
    assert.matches("%-%-opset is for %-%-format onnx", err)
    rc, _, err = run("five.lua m5.onnx")
    assert.are.equal(1, rc)
    assert.matches("'five.lua' returned a number; for ONNX it must return a Keras model or a traced function", err)
  end)
end)
