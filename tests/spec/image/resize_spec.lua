-- tests/spec/image/resize_spec.lua — tide.image.resize against TF2's
-- tf.image.resize (tests/fixtures/images: half-pixel centers, bilinear to
-- 1e-5, nearest exactly), its gradients against TF's and float64 finite
-- differences (tests/support/grad_cases_nn.lua), eagerly and traced.
local tide = require "tide"
local h = require "helpers"
local E = dofile("tests/fixtures/images/expected.lua")
local R = E.resize

local function tensor_of(want)
  local dt = want.dtype == "uint16" and "int32" or want.dtype
  return tide.tensor(want.values, dt):reshape(want.shape)
end

local function same_shape(t, want, what)
  assert(table.concat(t.shape:as_list(), ",") == table.concat(want.shape, ","),
    string.format("%s: shape %s, TF's {%s}", what, tostring(t.shape), table.concat(want.shape, ",")))
end

describe("tide.image.resize", function()
  local inputs = { x4 = tensor_of(R.x4), x3 = tensor_of(R.x3) }

  it("matches TF for every size, method and rank (bilinear to 1e-5, nearest exactly)", function()
    local n = 0
    for key, want in pairs(R) do
      local method, which, hh, ww = key:match("^(%a+)_(x%d)_(%d+)x(%d+)$")
      if method then
        local got = tide.image.resize(inputs[which], { tonumber(hh), tonumber(ww) }, { method = method })
        same_shape(got, want, key)
        assert.are.equal(want.dtype, got.dtype, key)
        h.close(got, tensor_of(want), method == "bilinear" and 1e-5 or 0)
        n = n + 1
      end
    end
    assert(n >= 20, "fixture cases ran: " .. n)
  end)

  it("gives the same traced, also with None dims", function()
    local x = inputs.x4
    for _, method in ipairs { "bilinear", "nearest" } do
      local f = function(t) return tide.image.resize(t, { 7, 9 }, { method = method }) end
      local want = f(x)
      h.close(tide.trace(f)(x), want, 0)
      local sig = { tide.TensorSpec({ tide.None, tide.None, tide.None, tide.None }, "float32") }
      h.close(tide.trace(f, { input_signature = sig })(x), want, 0)
    end
  end)

  it("keeps float64 for float64 images and halves become float32 (as TF)", function()
    assert.are.equal("float64", tide.image.resize(tide.zeros({ 2, 2, 1 }, "float64"), { 3, 3 }).dtype)
    assert.are.equal("float32", tide.image.resize(tide.zeros({ 2, 2, 1 }, "float16"), { 3, 3 }).dtype)
    assert.are.equal("float32", tide.image.resize(tide.zeros({ 2, 2, 1 }, "int32"), { 3, 3 }).dtype)
    assert.are.equal("float16", tide.image.resize(tide.zeros({ 2, 2, 1 }, "float16"), { 3, 3 }, { method = "nearest" }).dtype)
    local x = tide.tensor({ { { 1 }, { 2 } }, { { 3 }, { 4 } } }, "float16")
    h.close(tide.image.resize(x, { 3, 3 }), tide.image.resize(x:cast("float32"), { 3, 3 }), 0)
  end)

  it("reads strided images", function()
    local x = inputs.x4
    local view = x:transpose { 0, 2, 1, 3 }
    h.close(tide.image.resize(view, { 3, 4 }), tide.image.resize(view + 0, { 3, 4 }), 0)
  end)

  it("refuses bad arguments, naming them", function()
    local x = inputs.x3
    h.errors("resize: method must be \"bilinear\" or \"nearest\"", tide.image.resize, x, { 2, 2 }, { method = "area" })
    h.errors("resize: size must be {height, width}", tide.image.resize, x, { 2 })
    h.errors("resize: size must be positive", tide.image.resize, x, { 0, 2 })
    h.errors("resize: images must be [height, width, channels]", tide.image.resize, tide.zeros { 2, 2 }, { 2, 2 })
    h.errors("antialias=true is not supported yet", tide.image.resize, x, { 2, 2 }, { antialias = true })
    h.errors("no pixels to resize from", tide.image.resize, tide.zeros { 0, 3, 1 }, { 2, 2 })
    h.errors("images must be a numeric tensor", tide.image.resize, tide.zeros({ 2, 2, 1 }, "bool"), { 2, 2 })
  end)
end)

describe("tide.image.resize gradients", function()
  it("match TF's ResizeBilinearGrad and ResizeNearestNeighborGrad", function()
    local x = tensor_of(R.x4)
    for key, case in pairs(E.grad) do
      local method, hh, ww = key:match("^(%a+)_(%d+)x(%d+)$")
      local w = tensor_of(case.w)
      local tape = tide.GradientTape()
      local loss = tape:run(function()
        tape:watch(x)
        return tide.reduce_sum(tide.image.resize(x, { tonumber(hh), tonumber(ww) }, { method = method }) * w)
      end)
      h.close(tape:gradient(loss, x), tensor_of(case.dx), 1e-5)
    end
  end)

  -- The float64 finite-difference cases of both methods and of their gradient
  -- ops (second order) are tests/support/grad_cases_nn.lua's.
  it("gives no gradient to integer images", function()
    local x = tide.tensor({ { { 1 }, { 2 } } }, "int32")
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      tape:watch(x)
      return tide.reduce_sum(tide.image.resize(x, { 3, 3 }))
    end)
    assert.is_nil(tape:gradient(loss, x))
  end)
end)
