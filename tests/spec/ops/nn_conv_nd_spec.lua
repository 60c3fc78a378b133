-- tests/spec/ops/nn_conv_nd_spec.lua — tide.nn.conv3d, conv3d_transpose and
-- conv1d_transpose (composed from the 2-D ops) against TF 2.21's values and
-- gradients (tests/fixtures/conv/values.lua from gen.py beside it: strides,
-- dilations, both paddings), float64 finite differences, None dims in a trace, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local nn = tide.nn
local F = dofile("tests/fixtures/conv/values.lua")

local function call(c, x, f)
  local o = { strides = c.strides, padding = c.padding, dilations = c.dilations }
  if c.op == "conv3d" then return nn.conv3d(x, f, o) end
  return nn[c.op](x, f, c.output_shape, o)
end

local function list(v) return type(v) == "table" and table.concat(v, ",") or tostring(v) end
local function name(c)
  return string.format("%s x%s f%s strides %s dilations %s %s", c.op, tostring(tide.tensor(c.x).shape),
    tostring(tide.tensor(c.f).shape), list(c.strides), list(c.dilations), c.padding)
end

describe("tide.nn.conv3d, conv3d_transpose, conv1d_transpose", function()
  it("give TF's values and gradients (float32 and float64)", function()
    for _, c in ipairs(F.cases) do
      for _, dt in ipairs { "float32", "float64" } do
        local x, f = tide.tensor(c.x, dt), tide.tensor(c.f, dt)
        local tape = tide.GradientTape { persistent = true }
        local y = tape:run(function()
          tape:watch(x)
          tape:watch(f)
          return call(c, x, f)
        end)
        local ok, err = pcall(function()
          assert.are.same(tide.tensor(c.y).shape:as_list(), y.shape:as_list())
          h.close(y, c.y, 1e-5)
          local loss = tape:run(function() return tide.reduce_sum(y * tide.tensor(c.g, dt)) end)
          local g = tape:gradient(loss, { x, f })
          h.close(g[1], c.dx, 1e-5)
          h.close(g[2], c.df, 1e-5)
        end)
        if not ok then error(name(c) .. " " .. dt .. ": " .. tostring(err), 0) end
      end
    end
  end)

  it("match float64 finite differences, second order too", function()
    local x3, f3 = gc.random({ 1, 4, 3, 3, 2 }, -1, 1, 3), gc.random({ 2, 2, 2, 2, 2 }, -1, 1, 5)
    gc.check(function(x, f) return nn.conv3d(x, f, { strides = { 2, 1, 1 }, padding = "SAME" }) end, { x3, f3 },
      { none = false, second_order = true })
    gc.check(function(x, f) return nn.conv3d(x, f, { dilations = { 2, 1, 1 }, padding = "VALID" }) end, { x3, f3 },
      { none = false })
    local xt = gc.random({ 1, 2, 3, 2, 2 }, -1, 1, 9)
    gc.check(function(x, f) return nn.conv3d_transpose(x, f, { 1, 4, 6, 4, 2 }, { strides = 2, padding = "SAME" }) end,
      { xt, f3 }, { none = false, second_order = true })
    gc.check(function(x, f)
      return nn.conv3d_transpose(x, f, { 1, 5, 4, 3, 2 }, { strides = { 2, 1, 1 }, dilations = { 2, 1, 1 },
        padding = "VALID" })
    end, { xt, f3 }, { none = false })
    gc.check(function(x, f) return nn.conv1d_transpose(x, f, { 2, 7, 3 }, { strides = 2, padding = "VALID" }) end,
      { gc.random({ 2, 3, 2 }, -1, 1, 4), gc.random({ 2, 3, 2 }, -1, 1, 6) }, { second_order = true })
  end)

  it("trace with the batch, height and width None", function()
    local x = tide.random.normal { 2, 5, 4, 6, 2 }
    local f = tide.random.normal { 3, 2, 3, 2, 3 }
    local ft = tide.random.normal { 3, 2, 3, 3, 2 }
    local fn = tide.trace(function(a)
      return nn.conv3d(a, f, { strides = { 2, 2, 1 }, padding = "SAME" })
    end, { input_signature = { tide.TensorSpec({ tide.None, 5, tide.None, tide.None, 2 }, "float32") } })
    local y = fn(x)
    h.close(y, nn.conv3d(x, f, { strides = { 2, 2, 1 }, padding = "SAME" }):totable(), 1e-6)
    local t = tide.trace(function(a)
      return nn.conv3d_transpose(a, ft, { tide.shape(a)[0], 6, 8, 6, 3 }, { strides = 2, padding = "SAME" })
    end, { input_signature = { tide.TensorSpec({ tide.None, 3, 4, 3, 2 }, "float32") } })
    local xt = tide.random.normal { 2, 3, 4, 3, 2 }
    h.close(t(xt), nn.conv3d_transpose(xt, ft, { 2, 6, 8, 6, 3 }, { strides = 2, padding = "SAME" }):totable(), 1e-6)
  end)

  it("name what is wrong", function()
    local x, f = tide.zeros { 1, 4, 4, 4, 2 }, tide.zeros { 2, 2, 2, 2, 3 }
    h.errors("conv3d: input must be 5-D [batch, depth, height, width, channels], got shape (4, 4, 4, 2)",
      function() nn.conv3d(tide.zeros { 4, 4, 4, 2 }, f) end)
    h.errors("conv3d: input has 3 channel(s) but filters (2, 2, 2, 2, 3) expect 2",
      function() nn.conv3d(tide.zeros { 1, 4, 4, 4, 3 }, f) end)
    h.errors("conv3d: strides must be a number or a list of 3 or 5, got a list of 2",
      function() nn.conv3d(x, f, { strides = { 1, 2 } }) end)
    h.errors("conv3d: padding must be \"SAME\" or \"VALID\", got CAUSAL",
      function() nn.conv3d(x, f, { padding = "CAUSAL" }) end)
    h.errors("conv3d: data_format must be \"NDHWC\"", function() nn.conv3d(x, f, { data_format = "NCDHW" }) end)
    h.errors("conv3d: the input's depth 1 is smaller than the dilated kernel's 3",
      function() nn.conv3d(tide.zeros { 1, 1, 4, 4, 2 }, f, { padding = "VALID", dilations = { 2, 1, 1 } }) end)
    h.errors("conv3d: the input's depth (dim 1) must be known while tracing", function()
      tide.trace(function(a) return nn.conv3d(a, f) end,
        { input_signature = { tide.TensorSpec({ 1, tide.None, 4, 4, 2 }, "float32") } })(x)
    end)
    local ft = tide.zeros { 2, 2, 2, 3, 2 }
    h.errors("conv3d_transpose: output_shape's depth 5 does not map back to the input's 4",
      function() nn.conv3d_transpose(x, ft, { 1, 5, 4, 4, 3 }, { padding = "SAME", strides = 2 }) end)
    h.errors("conv3d_transpose: output_shape has 4 channel(s) but filters (2, 2, 2, 3, 2) make 3",
      function() nn.conv3d_transpose(x, ft, { 1, 4, 4, 4, 4 }) end)
    h.errors("conv3d_transpose: output_shape must be a list of 5 entries",
      function() nn.conv3d_transpose(x, ft, { 4, 4, 4, 3 }) end)
    h.errors("conv1d_transpose: filters must be 3-D [width, out_channels, in_channels], got shape (2, 2)",
      function() nn.conv1d_transpose(tide.zeros { 1, 4, 2 }, tide.zeros { 2, 2 }, { 1, 4, 2 }) end)
  end)
end)
