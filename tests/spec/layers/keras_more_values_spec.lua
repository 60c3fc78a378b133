-- tests/spec/layers/keras_more_values_spec.lua — the activation, reshaping,
-- pooling, normalization, wrapper, Dot, convolution and ConvLSTM layers against TensorFlow 2.21's
-- tf.keras (Keras 3), from tests/fixtures/keras/layers_more.lua (written by
-- layers_more_gen.py): each case builds the layer from Keras's own options,
-- sets Keras's weights, and compares the output, its mask, the losses, the
-- weights after the call, the gradients of sum(output * g) with respect to
-- the input and the trainable weights, and the config (1e-5 relative in float32).
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local keras_mask = require "tide.keras_mask"
local F = dofile("tests/fixtures/keras/layers_more.lua")

-- Options from the fixture (Keras's keyword arguments); a wrapper's layer is a spec too.
local function make(spec)
  local opts = {}
  for k, v in pairs(spec.opts or {}) do opts[k] = v end
  if type(opts.layer) == "table" and opts.layer.cls then opts.layer = make(opts.layer) end
  return L[spec.cls](opts)
end

local INT_INPUTS = { ids = true }
local function input(name)
  if type(name) == "table" then
    local out = {}
    for i, n in ipairs(name) do out[i] = input(n) end
    return out
  end
  return tide.tensor(F.inputs[name], INT_INPUTS[name] and "int32" or "float32")
end

-- The values of a nested config equal (Keras's None keys are absent in both);
-- names, trainable and dtype are left out at every level, as the fixture leaves them.
local SKIP = { name = true, trainable = true, dtype = true }
local function same_config(where, got, want)
  if type(want) == "table" then
    assert(type(got) == "table", string.format("%s: expected a table, got %s", where, tostring(got)))
    for k, v in pairs(want) do
      if not SKIP[k] then same_config(where .. "." .. tostring(k), got[k], v) end
    end
  elseif type(want) == "number" then
    assert(type(got) == "number" and math.abs(got - want) <= 1e-12 * math.max(1, math.abs(want)),
      string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  else
    assert(got == want, string.format("%s: expected %s, got %s", where, tostring(want), tostring(got)))
  end
end

-- Keys tide's config has beyond Keras's (documented in docs/tf_differences.md).
local EXTRA = { ELU = { alpha = true } }
local BASE = { name = true, trainable = true, dtype = true }
local function check_config(key, c, l)
  local got = l:get_config() -- (of a layer not built: Keras's RMSNormalization turns its axis into a list at build)
  same_config(key .. ": config", got, c.config)
  for k, v in pairs(got) do
    if not BASE[k] and c.config[k] == nil and not (EXTRA[c.cls] and EXTRA[c.cls][k]) then
      assert(v == nil, string.format("%s: config key '%s' is not Keras's", key, k))
    end
  end
  -- the config builds the same layer again, and Keras's config builds it too
  assert.are.same(got, L[c.cls]:from_config(got):get_config())
  local from_keras = L[c.cls]:from_config(c.config)
  same_config(key .. ": config from Keras's", from_keras:get_config(), c.config)
end

local function run_case(key, c)
  tide.layers.clear_session()
  local l = make(c)
  local x = input(c.x)
  local xs = type(c.x) == "table" and x or { x }
  l:build(require("tide.layers.layer").shapes_of(x))
  if c.weights and #c.weights > 0 then l:set_weights(c.weights) end
  local call = { training = c.call and c.call.training }
  if c.call and c.call.mask then
    local m = c.call.mask
    local flat = h.values(m)
    call.mask = tide.tensor(m, type(flat[1]) == "boolean" and "bool" or "float32")
  end
  local tape = tide.GradientTape { persistent = true }
  local y = tape:run(function()
    for _, t in ipairs(xs) do if t.dtype == "float32" then tape:watch(t) end end
    return l(x, call)
  end)
  local tol = 1e-5
  h.close(y, c.y, tol)
  assert.are.same(tide.tensor(c.y).shape:as_list(), y.shape:as_list())
  local m = keras_mask.get(y)
  if c.mask_out then
    assert(m ~= nil, key .. ": the output has no mask")
    h.close(m, c.mask_out, 0)
  else
    assert(m == nil, key .. ": the output has a mask, Keras's has none")
  end
  if c.losses then
    local losses = l.losses
    assert.are.equal(#c.losses, #losses)
    for i, v in ipairs(c.losses) do h.close(losses[i], { v }, 1e-5) end
  end
  if c.weights_after then
    local ws = l.weights
    assert.are.equal(#c.weights_after, #ws)
    for i, v in ipairs(c.weights_after) do h.close(ws[i]:read_value(), v, 1e-5) end
  end
  if c.g then
    local loss = tape:run(function() return tide.reduce_sum(y * tide.tensor(c.g, "float32")) end)
    local sources = {}
    for _, t in ipairs(xs) do sources[#sources + 1] = t end
    local tw = l.trainable_weights
    for _, v in ipairs(tw) do sources[#sources + 1] = v end
    local grads = tape:gradient(loss, sources)
    local dx = type(c.x) == "table" and c.dx or { c.dx }
    for i = 1, #xs do h.close(grads[i], dx[i], 1e-4) end
    assert.are.equal(#(c.dw or {}), #tw)
    for i, d in ipairs(c.dw or {}) do h.close(grads[#xs + i], d, 1e-4) end
  end
  check_config(key, c, make(c))
end

-- The cases by family (their keys' prefixes), each family one `it`, every case named on failure.
describe("Keras 3 layers against tf.keras", function()
  local keys = {}
  for k in pairs(F.cases) do keys[#keys + 1] = k end
  table.sort(keys)
  local groups = {
    { "activation layers: ReLU, LeakyReLU, ELU, PReLU, Softmax (masks)",
      { "relu", "leaky", "elu", "prelu", "softmax" } },
    { "reshaping: Cropping, ZeroPadding, UpSampling 1D/2D/3D, RepeatVector",
      { "cropping", "zero_padding", "upsampling", "repeat" } },
    { "pooling 1D/3D, channels_first, adaptive pooling, global pooling (keepdims, masks)",
      { "max_pool", "avg_pool", "adaptive", "gavg", "gmax" } },
    { "normalization: GroupNormalization, UnitNormalization, RMSNormalization, SpectralNormalization",
      { "group_norm", "instance_norm", "unit_norm", "rms_norm", "spectral" } },
    { "TimeDistributed (Dense, Conv2D, masks)", { "time_distributed" } },
    { "Dot (axes, normalize, ranks 2 to 4)", { "dot_" } },
    { "ActivityRegularization's loss", { "activity" } },
    { "convolutions: Conv1D (groups, causal), Conv3D, Conv1D/3DTranspose, DepthwiseConv1D, SeparableConv1D",
      { "conv1d", "conv3d", "depthwise_conv1d", "separable_conv1d" } },
    { "ConvLSTM1D/2D/3D (strides, dilation, same padding, sequences, go_backwards, masks)", { "conv_lstm" } },
  }
  local seen = {}
  for _, g in ipairs(groups) do
    it(g[1], function()
      local n = 0
      for _, k in ipairs(keys) do
        for _, prefix in ipairs(g[2]) do
          if k:sub(1, #prefix) == prefix and not seen[k] then
            seen[k] = true
            n = n + 1
            local ok, err = pcall(run_case, k, F.cases[k])
            if not ok then error(k .. ": " .. tostring(err), 0) end
          end
        end
      end
      assert.is_true(n > 0)
    end)
  end
  it("every fixture case belongs to a group above", function()
    for _, k in ipairs(keys) do assert(seen[k], k .. " was not run") end
  end)

  it("the merge functions add, subtract, multiply, average, maximum, minimum, concatenate, dot", function()
    local f = F.functions
    local a, b, c = tide.tensor(f.a, "float32"), tide.tensor(f.b, "float32"), tide.tensor(f.c, "float32")
    h.close(L.add { a, b, c }, f.add, 1e-6)
    h.close(L.subtract { a, b }, f.subtract, 1e-6)
    h.close(L.multiply { a, b }, f.multiply, 1e-6)
    h.close(L.average { a, b, c }, f.average, 1e-6)
    -- (the fixture writes float32 values in their shortest form: "exact" is within 1e-7)
    h.close(L.maximum { a, b, c }, f.maximum, 1e-7)
    h.close(L.minimum { a, b }, f.minimum, 1e-7)
    h.close(L.concatenate { a, b }, f.concatenate, 1e-7)
    h.close(L.concatenate({ a, b }, { axis = 0 }), f.concatenate0, 1e-7)
    h.close(L.concatenate({ a, b }, 0), f.concatenate0, 1e-7)
    h.close(L.dot({ a, b }, 1), f.dot, 1e-5)
    h.close(L.dot({ a, b }, { axes = -1, normalize = true }), f.dot_normalize, 1e-5)
  end)

  it("the configs of the layers without a value case", function()
    for cls, c in pairs(F.configs) do
      local opts = {}
      for k, v in pairs(c.opts) do opts[k] = v end
      local want = c.config
      if cls == "AlphaDropout" then -- (Python's None in a list: a hole in the Lua table)
        opts.noise_shape = { tide.None, 1, 4 }
        want = {}
        for k, v in pairs(c.config) do want[k] = v end
        want.noise_shape = { tide.None, 1, 4 }
      end
      local l = L[cls](opts)
      check_config(cls, { cls = cls, config = want }, l)
    end
  end)
end)
