-- tests/spec/layers/normalization_preprocessing_spec.lua — tide.layers.Normalization (Keras 3's preprocessing
-- layer) against TF 2.21's Keras (tests/fixtures/keras/normalization.lua): adapt on tensors, on tide.data
-- datasets (batched and not) and on lists of batches, given mean and variance, invert; traced calls, configs,
-- errors; and the Convolution* aliases.
local tide = require "tide"
local h = require "helpers"

local L = tide.layers
local F = dofile("tests/fixtures/keras/normalization.lua")
local TOL = 1e-5

-- Each case traces a new Function on purpose: no retracing advice.
require("tide.tracing.retracing").settings.enabled = false

local function config_of(case)
  local c = {}
  for k, v in pairs(case.config) do c[k] = v end
  if case.axis_none then c.axis = false end
  return c
end

local function adapted(case)
  local layer = L.Normalization(config_of(case))
  if case.kind == nil then return layer end
  local x = tide.tensor(case.data, "float32")
  if case.kind == "tensor" then
    layer:adapt(x)
  elseif case.kind == "batches" then
    layer:adapt(tide.data.Dataset.from_tensor_slices(x):batch(4))
  elseif case.kind == "rows" then
    layer:adapt(tide.data.Dataset.from_tensor_slices(x))
  end
  return layer
end

describe("Normalization against Keras", function()
  for _, case in ipairs(F.cases) do
    it(case.id .. ": adapt, call eagerly and traced, config", function()
      local layer = adapted(case)
      local t = tide.tensor(case.test, "float32")
      h.close(layer(t), case.output, TOL)
      h.close(tide.trace(function(v) return layer(v) end)(t), case.output, TOL)
      if case.mean then
        h.close(layer.adapt_mean:read_value(), case.mean, TOL)
        h.close(layer.adapt_variance:read_value(), case.variance, TOL)
      end
      local c = layer:get_config()
      assert.are.equal(case.keras_config.invert, c.invert)
      if not case.axis_none then assert.are.same(case.keras_config.axis, c.axis) end
    end)
  end

  it("adapts on a list of batches as on the dataset of those batches", function()
    local case = F.cases[2]
    local x = tide.tensor(case.data, "float32")
    local layer = L.Normalization()
    layer:adapt { x:slice { { 0, 4 } }, x:slice { { 4, 8 } }, x:slice { { 8, 10 } } }
    h.close(layer.adapt_mean:read_value(), case.mean, TOL)
    h.close(layer.adapt_variance:read_value(), case.variance, TOL)
  end)

  it("works in a functional model, with None batch dims, and round-trips its config", function()
    local inp = L.Input { shape = { 3 } }
    local norm = L.Normalization { mean = { 1, 2, 3 }, variance = { 1, 4, 9 } }
    local model = tide.Model { inp, norm(inp) }
    h.close(model(tide.tensor({ { 1, 4, 6 } }, "float32")), { { 0, 1, 1 } }, 1e-6)
    local again = L.Normalization:from_config(norm:get_config())
    h.close(again(tide.tensor({ { 1, 4, 6 } }, "float32")), { { 0, 1, 1 } }, 1e-6)
    local spec = L.serialize(norm)
    assert.are.equal("Normalization", spec.class_name)
  end)

  it("names what is wrong", function()
    h.errors("give both mean and variance", L.Normalization, { mean = 1 })
    h.errors("mean and variance must have the same shape", L.Normalization, { mean = { 1, 2 }, variance = { 1 } })
    h.errors("mean has rank 2, more than the 1 kept axes", L.Normalization, { mean = { { 1 } }, variance = { { 1 } } })
    h.errors("axis must be an integer, a list of integers or false", L.Normalization, { axis = "x" })
    h.errors("invert must be true or false", L.Normalization, { invert = 1 })
    h.errors("axis 3 is out of range", function() L.Normalization { axis = 3 }:adapt(tide.ones({ 2, 2 })) end)
    h.errors("adapt on a layer made with mean and variance", function()
      L.Normalization { mean = 1, variance = 1 }:adapt(tide.ones({ 2, 2 }))
    end)
    h.errors("does not match the layer's input shape", function()
      L.Normalization():adapt { tide.ones({ 2, 3 }), tide.ones({ 2, 4 }) }
    end)
    h.errors("the kept axis 1 must have a known size", function()
      local inp = L.Input { shape = { tide.None } }
      L.Normalization()(inp)
    end)
    h.errors("adapt: the dataset is empty", function()
      L.Normalization():adapt(tide.data.Dataset.from_tensor_slices(tide.ones({ 0, 2 })))
    end)
  end)
end)

describe("the Convolution aliases", function()
  it("are Keras 3's other names for the same classes", function()
    for alias, name in pairs { Convolution1D = "Conv1D", Convolution2D = "Conv2D", Convolution3D = "Conv3D",
      Convolution1DTranspose = "Conv1DTranspose", Convolution2DTranspose = "Conv2DTranspose",
      Convolution3DTranspose = "Conv3DTranspose", SeparableConvolution1D = "SeparableConv1D",
      SeparableConvolution2D = "SeparableConv2D" } do
      assert.are.equal(L[name], L[alias], alias)
    end
    local conv = L.Convolution1D { 2, 3 }
    assert.are.equal(2, conv.filters)
    h.errors("filters", L.Convolution2D, { filters = "x", kernel_size = 3 })
  end)
end)
