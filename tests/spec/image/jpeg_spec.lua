-- tests/spec/image/jpeg_spec.lua — encode_jpeg and what is built on it (adjust_jpeg_quality,
-- is_jpeg, extract_jpeg_shape, decode_and_crop_jpeg) against TF 2.21: TF's decoder reads
-- tide's files to the same pixels as TF's own (tests/fixtures/image_ops), traced, and errors.
local tide = require "tide"
local h = require "helpers"
local ic = require "image_cases"
local E = dofile("tests/fixtures/image_ops/expected.lua")
local I = tide.image
local T, same = ic.tensor_of, ic.same
local J = E.jpeg

describe("tide.image.encode_jpeg", function()
  local photo = T(J.photo)

  it("writes files that decode to TF's pixels at each quality and option", function()
    for _, q in ipairs { 95, 50, 10 } do
      local bytes = I.encode_jpeg(photo, { quality = q })
      assert.are.equal("\255\216\255", bytes:sub(1, 3))
      same(I.decode_jpeg(bytes), J["decoded_q" .. q], 0, "quality " .. q)
    end
    same(I.decode_jpeg(I.encode_jpeg(T(J.photo_gray), { quality = 80 })), J.decoded_gray_q80, 0, "grayscale")
    same(I.decode_jpeg(I.encode_jpeg(photo, { quality = 75, progressive = true })), J.decoded_progressive_q75, 0,
      "progressive")
    same(I.decode_jpeg(I.encode_jpeg(photo, { quality = 90, chroma_downsampling = false })), J.decoded_444_q90, 0, "4:4:4")
    local small = I.encode_jpeg(photo, { optimize_size = true })
    assert(#small <= #I.encode_jpeg(photo), "optimize_size makes no larger file")
    same(I.decode_jpeg(small), J.decoded_q95, 0, "optimized Huffman tables: the same pixels")
    local strided = photo:transpose { 1, 0, 2 }:contiguous():transpose { 1, 0, 2 }
    assert.are.equal(I.encode_jpeg(photo), I.encode_jpeg(strided))
  end)

  it("takes the quality as a tensor, also traced, and gives a tensor of bytes", function()
    local f = tide.trace(function(x, q) return I.encode_jpeg_tensor(x, { quality = q }) end)
    local bytes = f(photo, tide.tensor(50))
    assert.are.equal("uint8", bytes.dtype)
    same(I.decode_jpeg(bytes), J.decoded_q50, 0, "traced")
  end)

  it("refuses what TF refuses", function()
    h.errors("encode_jpeg: quality must be in [0, 100], got 101", I.encode_jpeg, photo, { quality = 101 })
    h.errors("encode_jpeg: image must be uint8, got float32", I.encode_jpeg, photo:cast("float32"))
    h.errors("encode_jpeg: image must have 1 or 3 channels, got shape [2, 2, 2]", I.encode_jpeg,
      tide.zeros({ 2, 2, 2 }, "uint8"))
    h.errors("encode_jpeg: image must be 3-dimensional", I.encode_jpeg, tide.zeros({ 2, 2 }, "uint8"))
    h.errors("encode_jpeg: image must have 3 channels", I.encode_jpeg, tide.zeros({ 2, 2, 1 }, "uint8"), { format = "rgb" })
    h.errors("density_unit must be \"in\" or \"cm\"", I.encode_jpeg, photo, { density_unit = "px" })
    h.errors("encode_jpeg: cannot encode the image as JPEG: its size 0x4", I.encode_jpeg, tide.zeros({ 0, 4, 3 }, "uint8"))
  end)
end)

describe("tide.image.adjust_jpeg_quality and the JPEG helpers", function()
  local photo = T(J.photo)

  it("adjust_jpeg_quality matches TF on uint8 and float images", function()
    for _, q in ipairs { 95, 50, 10 } do same(I.adjust_jpeg_quality(photo, q), J["adjust_q" .. q], 0, "quality " .. q) end
    same(I.adjust_jpeg_quality(photo:cast("float32") / 255, 60), J.adjust_float_q60, 0, "float image")
    ic.eager_and_traced(function(x) return I.adjust_jpeg_quality(x, 30) end, photo, ic.spec(photo, { 1, 2 }))
    h.errors("adjust_jpeg_quality: image must be [height, width, channels]", I.adjust_jpeg_quality,
      photo:reshape { 1, 12, 15, 3 }, 50)
  end)

  it("extract_jpeg_shape, decode_and_crop_jpeg and is_jpeg match TF", function()
    local bytes = I.encode_jpeg(photo)
    same(I.extract_jpeg_shape(bytes), J.shape, 0, "shape")
    same(I.decode_and_crop_jpeg(bytes, { 2, 3, 6, 8 }), J.crop, 0, "crop")
    assert.is_true(I.is_jpeg(bytes))
    assert.is_false(I.is_jpeg(I.encode_png(photo)))
    assert.is_false(I.is_jpeg(""))
    assert.is_true(I.is_jpeg(tide.from_buffer(bytes, { #bytes }, "uint8")))
    h.errors("decode_and_crop_jpeg: crop window {10, 3, 6, 8} is not valid for an image of 12x15",
      I.decode_and_crop_jpeg, bytes, { 10, 3, 6, 8 })
  end)
end)
