-- tests/spec/image/quality_spec.lua — psnr, ssim, ssim_multiscale, total_variation,
-- image_gradients and sobel_edges against TF 2.21 (tests/fixtures/image_ops), with TF's
-- gradients of ssim and psnr, float64 finite differences, traces and errors.
local tide = require "tide"
local h = require "helpers"
local gc = require "gradcheck"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same
local Q = E.quality

describe("tide.image.psnr and ssim", function()
  local a, b = T(Q.a), T(Q.b)

  it("match TF on float and uint8 images, with options, a map, and multiscale (odd sizes too)", function()
    same(I.psnr(a, b, 1.0), Q.psnr, 1e-5, "psnr")
    same(I.psnr(T(Q.a_u8), T(Q.b_u8), 255), Q.psnr_u8, 1e-5, "psnr uint8")
    same(I.psnr(a, a, 1.0), Q.psnr_same, 0, "psnr of equal images (inf)")
    same(I.ssim(a, b, 1.0), Q.ssim, 1e-6, "ssim")
    same(I.ssim(T(Q.a_u8), T(Q.b_u8), 255), Q.ssim_u8, 1e-6, "ssim uint8")
    same(I.ssim(a, b, 1.0, { filter_size = 5, filter_sigma = 0.8, k1 = 0.02, k2 = 0.05 }), Q.ssim_small, 1e-6, "options")
    same(I.ssim(a[0], b[0], 1.0, { filter_size = 7, return_index_map = true }), Q.ssim_map, 2e-6, "index map")
    local ma, mb = T(Q.ms_a), T(Q.ms_b)
    same(I.ssim_multiscale(ma, mb, 1.0, { power_factors = { 0.3, 0.5, 0.2 }, filter_size = 5 }), Q.ssim_multiscale,
      1e-6, "ssim_multiscale")
    local odd = { {}, { 0, 23 }, { 0, 21 }, {} }
    same(I.ssim_multiscale(ma:slice(odd), mb:slice(odd), 1.0, { power_factors = { 0.6, 0.4 }, filter_size = 3 }),
      Q.ssim_multiscale_odd, 1e-6, "ssim_multiscale, odd sizes")
  end)

  it("have TF's gradients, and trace", function()
    local w = T(Q.ssim_grad.w)
    same(ic.gradients(function(x) return I.ssim(x, b, 1.0, { filter_size = 5 }) end, { a }, w)[1], Q.ssim_grad.da, 1e-6,
      "ssim gradient")
    same(ic.gradients(function(x) return I.psnr(x, b, 1.0) end, { a }, w)[1], Q.psnr_grad.da, 1e-4, "psnr gradient")
    local f = tide.trace(function(x, y) return I.ssim(x, y, 1.0, { filter_size = 5 }) end,
      { input_signature = { tide.TensorSpec({ tide.None, 16, 18, 3 }, "float32"), tide.TensorSpec({ tide.None, 16, 18, 3 }, "float32") } })
    h.close(f(a, b), I.ssim(a, b, 1.0, { filter_size = 5 }), 1e-6)
    ic.eager_and_traced(function(x) return I.psnr(x, b, 1.0) end, a, nil, 1e-6)
  end)

  it("refuse images of other shapes or smaller than the filter", function()
    h.errors("ssim: the two images' last three dims must agree, got shapes (2, 16, 18, 3) and (2, 16, 17, 3)", I.ssim,
      a, b:slice { {}, {}, { 0, 17 }, {} }, 1.0)
    h.errors("ssim: the images (shape (2, 8, 9, 3)) must be at least filter_size 11 high and wide", I.ssim,
      a:slice { {}, { 0, 8 }, { 0, 9 }, {} }, b:slice { {}, { 0, 8 }, { 0, 9 }, {} }, 1.0)
    h.errors("psnr: images must have at least 3 dims", I.psnr, tide.zeros { 3, 3 }, tide.zeros { 3, 3 }, 1)
  end)
end)

describe("tide.image.total_variation, image_gradients and sobel_edges", function()
  local a = T(Q.a)

  it("match TF", function()
    same(I.total_variation(a[0]), Q.tv3, 1e-3, "total_variation of an image")
    same(I.total_variation(a), Q.tv4, 1e-3, "total_variation of a batch")
    same(I.total_variation(T(Q.a_u8)[0]:cast("int32")), Q.tv_u8, 0, "int32")
    local s = a:slice { {}, { 0, 5 }, { 0, 6 }, {} }
    local dy, dx = I.image_gradients(s)
    same(dy, Q.image_gradients.dy, 0, "dy")
    same(dx, Q.image_gradients.dx, 0, "dx")
    same(I.sobel_edges(s), Q.sobel, 1e-6, "sobel_edges")
    same(I.sobel_edges(a:slice { { 0, 1 }, { 0, 4 }, { 0, 4 }, {} }:cast("float64")), Q.sobel_f64, 1e-12, "float64")
  end)

  it("differentiate (float64 finite differences) and trace", function()
    local x = gc.random({ 2, 4, 5, 2 }, -1, 1, 17)
    gc.check(I.total_variation, { x })
    gc.check(function(t) return (I.image_gradients(t)) end, { x })
    gc.check(function(t) return select(2, I.image_gradients(t)) end, { x })
    gc.check(I.sobel_edges, { x }, { none = false })
    ic.eager_and_traced(I.total_variation, a)
    ic.eager_and_traced(I.sobel_edges, a, ic.spec(a, { 1 }))
  end)

  it("refuse other ranks and integer images for sobel", function()
    h.errors("image_gradients: image must be [batch, height, width, channels]", I.image_gradients, a[0])
    h.errors("sobel_edges: image must be a float tensor, got uint8", I.sobel_edges, T(Q.a_u8))
    h.errors("total_variation: images must be [height, width, channels]", I.total_variation, tide.zeros { 4, 4 })
  end)
end)
