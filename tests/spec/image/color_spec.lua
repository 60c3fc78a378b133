-- tests/spec/image/color_spec.lua — the colour ops against TF 2.21 (tests/fixtures/image_ops):
-- RGB <-> HSV, YUV, YIQ, grayscale; adjust_hue, saturation, contrast, gamma, brightness on
-- float and uint8 images (TF's conversions and saturation); gradients, traces, errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same
local Cc, A = E.color, E.adjust

describe("tide.image colour spaces", function()
  it("match TF both ways in float32 and float64 (TF's formulas: ties and greys as TF's)", function()
    local rgb = T(Cc.rgb)
    for _, name in ipairs { "hsv", "yuv", "yiq" } do
      local fwd, back = I["rgb_to_" .. name], I[name .. "_to_rgb"]
      same(fwd(rgb), Cc["rgb_to_" .. name], 1e-6, "rgb_to_" .. name)
      same(back(fwd(rgb)), Cc[name .. "_to_rgb"], 2e-6, name .. "_to_rgb")
      same(fwd(T(Cc.rgb_f64)), Cc["rgb_to_" .. name .. "_f64"], 1e-12, "rgb_to_" .. name .. " float64")
    end
    same(I.rgb_to_hsv(rgb), Cc.rgb_to_hsv, 0, "rgb_to_hsv exactly")
    same(I.hsv_to_rgb(T(Cc.hsv)), Cc.hsv_to_rgb_hsv, 1e-6, "hsv_to_rgb: hue 0, 1 and no saturation")
    same(I.rgb_to_grayscale(rgb), Cc.rgb_to_grayscale, 1e-6, "rgb_to_grayscale")
    same(I.rgb_to_grayscale(T(Cc.rgb_u8)), Cc.rgb_to_grayscale_u8, 0, "rgb_to_grayscale uint8")
    same(I.grayscale_to_rgb(T(Cc.gray)), Cc.gray_to_rgb, 0, "grayscale_to_rgb")
  end)

  it("differentiate: rgb_to_hsv's saturation and value as TF's gradient, all of it by finite differences", function()
    local H = Cc.hsv_grad
    same(ic.gradients(I.rgb_to_hsv, { T(H.x) }, T(H.w))[1], H.dx, 1e-5, "TF's saturation and value gradient")
    -- (TF's hue part is not the hue's derivative; tide's is, as the finite differences show)
    local x = gc.random({ 2, 3, 3 }, 0.1, 0.9, 11)
    gc.check(I.rgb_to_hsv, { x })
    gc.check(I.hsv_to_rgb, { gc.random({ 2, 3, 3 }, 0.05, 0.95, 12) })
    gc.check(I.rgb_to_yuv, { x })
    gc.check(I.yiq_to_rgb, { x })
    gc.check(I.grayscale_to_rgb, { gc.random({ 2, 2, 1 }, 0, 1, 13) })
  end)

  it("trace, and refuse what is not RGB", function()
    local rgb = T(Cc.rgb)
    local sig = ic.spec(rgb, { 1, 2, 3 })
    for _, f in ipairs { I.rgb_to_hsv, I.hsv_to_rgb, I.rgb_to_yuv, I.rgb_to_grayscale } do
      ic.eager_and_traced(f, rgb, sig)
    end
    h.errors("rgb_to_hsv: images must have 3 channels (the last dim), got shape (2, 2)", I.rgb_to_hsv, tide.zeros { 2, 2 })
    h.errors("rgb_to_hsv: images must be a float tensor, got uint8", I.rgb_to_hsv, T(Cc.rgb_u8))
    h.errors("grayscale_to_rgb: images must have 1 channels", I.grayscale_to_rgb, rgb)
  end)
end)

describe("tide.image adjustments", function()
  local rgb, u8 = T(Cc.rgb), T(Cc.rgb_u8)
  local F = { hue = I.adjust_hue, saturation = I.adjust_saturation, contrast = I.adjust_contrast }

  it("adjust_hue, adjust_saturation, adjust_contrast and adjust_gamma match TF on float and uint8 images", function()
    local n = 0
    for key, want in pairs(A) do
      local kind, is_u8, v = key:match("^(%a+)_(u?8?_?)(.+)$")
      local x = is_u8 == "u8_" and u8 or rgb
      local tol = is_u8 == "u8_" and 1 or 2e-6 -- (uint8: one step where TF's float sums round the other way)
      if F[kind] and not key:find("f64") then
        same(F[kind](x, tonumber(v)), want, tol, key)
        n = n + 1
      elseif kind == "gamma" then
        local g, k = v:match("^(.+)_(.+)$")
        same(I.adjust_gamma(x, tonumber(g), tonumber(k)), want, tol, key)
        n = n + 1
      end
    end
    assert(n == 38, "cases " .. n)
    same(I.adjust_hue(u8, 0.2), A["hue_u8_0.2"], 0, "hue uint8 exactly")
    same(I.adjust_contrast(rgb[0]:cast("float64"), 2.0), A["contrast_f64_2.0"], 1e-6, "contrast float64")
    same(I.adjust_brightness(rgb[0]:cast("float64"), 0.25), A.brightness_f64, 1e-6, "brightness float64")
    same(I.adjust_brightness(tide.tensor({ { { 0, 2 ^ 30, 2 ^ 31 - 1 } } }, "int32"), 0.3), A.brightness_i32, 0,
      "brightness int32 (saturating)")
  end)

  it("take tensor factors (a drawn or traced one), trace and differentiate", function()
    h.close(I.adjust_hue(rgb, tide.tensor(0.2)), I.adjust_hue(rgb, 0.2), 0)
    h.close(I.adjust_contrast(rgb, tide.tensor(1.5)), I.adjust_contrast(rgb, 1.5), 0)
    local sig = ic.spec(rgb, { 1, 2, 3 })
    ic.eager_and_traced(function(x) return I.adjust_hue(x, -0.3) end, rgb, sig)
    ic.eager_and_traced(function(x) return I.adjust_saturation(x, 1.3) end, rgb, sig)
    ic.eager_and_traced(function(x) return I.adjust_contrast(x, 0.7) end, rgb, sig)
    ic.eager_and_traced(function(x) return I.adjust_gamma(x, 1.7, 0.9) end, u8, ic.spec(u8, { 1, 2 }))
    local f = tide.trace(function(x, d) return I.adjust_hue(x, d) end)
    h.close(f(rgb, tide.tensor(0.4)), I.adjust_hue(rgb, 0.4), 0)
    -- float images stay in float32 (TF's rule: float64 goes through float32), so the checks are loose
    local x = tide.tensor(gc.random({ 1, 2, 3, 3 }, 0.1, 0.9, 21):totable(), "float32")
    local g = ic.gradients(function(t) return I.adjust_gamma(t, 2.0, 1.5) end, { x }, tide.ones_like(x))
    h.close(g[1], x * 3.0, 1e-6)
    g = ic.gradients(function(t) return I.adjust_contrast(t, 2.0) end, { x }, tide.ones_like(x))
    h.close(g[1], tide.ones_like(x), 1e-5) -- a shift of every pixel: its mean moves with it
  end)

  it("refuse what TF refuses", function()
    h.errors("adjust_hue: delta must be in the interval [-1, 1]", I.adjust_hue, rgb, 1.5)
    h.errors("adjust_gamma: gamma should be a non-negative real number", I.adjust_gamma, rgb, -1)
    h.errors("adjust_saturation: image must have 3 channels", I.adjust_saturation, rgb:slice { {}, {}, {}, { 0, 2 } }, 2)
    h.errors("adjust_contrast: images must have at least 3 dims", I.adjust_contrast, tide.zeros { 2, 3 }, 2)
    h.errors("adjust_brightness: delta must be a number or a scalar tensor", I.adjust_brightness, rgb, "much")
  end)
end)
