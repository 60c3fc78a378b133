-- tests/spec/image/codecs_spec.lua — decode_png, decode_jpeg, decode_bmp, decode_image and
-- encode_png against TensorFlow 2.21's decoded pixels (tests/fixtures/images,
-- written by gen.py and bmp_gen.py there), and garbage, truncated and hostile bytes: a clear
-- error naming the format, never a crash (these also run under SANITIZE=1).
local tide = require "tide"
local h = require "helpers"
local E = dofile("tests/fixtures/images/expected.lua")
local DIR = "tests/fixtures/images/"

local function read(name)
  local f = assert(io.open(DIR .. name, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Assert tensor t is exactly TF's result `want` (shape, dtype, values); TF's
-- uint16 comes back as int32 (tide has no uint16).
local function same(t, want, what)
  local dt = want.dtype == "uint16" and "int32" or want.dtype
  assert(t.dtype == dt, string.format("%s: dtype %s, TF's %s", what, t.dtype, want.dtype))
  assert(table.concat(t.shape:as_list(), ",") == table.concat(want.shape, ","),
    string.format("%s: shape %s, TF's {%s}", what, tostring(t.shape), table.concat(want.shape, ",")))
  local got = h.values(t)
  for i = 1, #want.values do
    if got[i] ~= want.values[i] then
      error(string.format("%s: value %d is %s, TF's %s", what, i, tostring(got[i]), tostring(want.values[i])), 0)
    end
  end
end

describe("tide.image.decode_png", function()
  for name, cases in pairs(E.png) do
    it("gives TF's pixels for " .. name .. " with every channels and dtype", function()
      local bytes = read(name)
      for key, want in pairs(cases) do
        local ch, dt = key:match("^c(%d)_(%w+)$")
        same(tide.image.decode_png(bytes, { channels = tonumber(ch), dtype = dt }), want, name .. " " .. key)
      end
    end)
  end

  it("reads a 1-D uint8 tensor of the bytes, also a strided one", function()
    local bytes = read("rgb.png")
    local t = tide.from_buffer(bytes, { #bytes }, "uint8")
    same(tide.image.decode_png(t), E.png["rgb.png"].c0_uint8, "tensor")
    local doubled = tide.stack({ t, t }, 1):reshape { 2 * #bytes } -- each byte twice
    same(tide.image.decode_png(doubled:slice { { 0, nil, 2 } }), E.png["rgb.png"].c0_uint8, "strided")
  end)

  it("refuses bad options, naming them", function()
    local bytes = read("gray.png")
    h.errors("channels must be one of 0, 1, 3, 4, got 2", tide.image.decode_png, bytes, { channels = 2 })
    h.errors("dtype must be \"uint8\" or \"uint16\"", tide.image.decode_png, bytes, { dtype = "float32" })
    h.errors("contents must be the encoded bytes", tide.image.decode_png, 42)
    h.errors("1-D uint8 tensor", tide.image.decode_png, tide.zeros({ 2, 2 }, "uint8"))
  end)
end)

describe("tide.image.decode_jpeg", function()
  for name, cases in pairs(E.jpeg) do
    it("gives TF's pixels for " .. name, function()
      local bytes = read(name)
      local opts = {
        default = {}, c1 = { channels = 1 }, c3 = { channels = 3 }, ratio2 = { ratio = 2 },
        fast = { dct_method = "INTEGER_FAST" }, accurate = { dct_method = "INTEGER_ACCURATE" },
      }
      for key, want in pairs(cases) do same(tide.image.decode_jpeg(bytes, opts[key]), want, name .. " " .. key) end
    end)
  end

  it("refuses bad options, naming them", function()
    local bytes = read("gray.jpg")
    h.errors("channels must be one of 0, 1, 3, got 4", tide.image.decode_jpeg, bytes, { channels = 4 })
    h.errors("ratio must be 1, 2, 4 or 8, got 3", tide.image.decode_jpeg, bytes, { ratio = 3 })
    h.errors("dct_method must be", tide.image.decode_jpeg, bytes, { dct_method = "FLOAT" })
  end)
end)

describe("tide.image.decode_bmp", function()
  local B = dofile("tests/fixtures/images/bmp_expected.lua")
  it("reads 8, 24 and 32-bit BMPs, bottom-up and top-down, padded rows, as TF for channels 0, 3 and 4", function()
    local n = 0
    for _, name in ipairs { "rgb24.bmp", "rgba32_top_down.bmp", "gray8.bmp", "rgb24_wide_top_down.bmp" } do
      for _, c in ipairs { 0, 3, 4 } do
        same(tide.image.decode_bmp(read(name), { channels = c }), B[name]["c" .. c], name .. " channels " .. c)
        n = n + 1
      end
      if B[name].image_float32 then
        local f = tide.image.decode_image(read(name), { dtype = "float32" })
        assert.are.same(B[name].image_float32.shape, f.shape:as_list())
        h.close(f:reshape { -1 }, B[name].image_float32.values, 1e-7)
      end
    end
    assert.are.equal(12, n)
    -- a top-down file through decode_image's float path (TF 2.21 crashes there: its buffer takes the signed height)
    h.close(tide.image.decode_image(read("rgba32_top_down.bmp"), { dtype = "float32" }),
      tide.image.convert_image_dtype(tide.image.decode_bmp(read("rgba32_top_down.bmp")), "float32"), 0)
    local s = read("rgb24.bmp")
    same(tide.image.decode_bmp(tide.from_buffer(s, { #s }, "uint8")), B["rgb24.bmp"].c0, "uint8 tensor")
    same(tide.image.decode_bmp(tide.tensor(s)), B["rgb24.bmp"].c0, "string tensor")
  end)

  it("refuses what TF refuses (sizes that do not add up, 16 bits, zero sizes, short files), never a crash", function()
    local n = 0
    for name in pairs(B.refused) do
      local ok, err = pcall(tide.image.decode_bmp, read("bad_" .. name .. ".bmp"))
      assert(not ok and tostring(err):find("decode_bmp: ", 1, true), name .. ": " .. tostring(err))
      n = n + 1
    end
    assert.are.equal(6, n)
    h.errors("decode_bmp: not a BMP image", tide.image.decode_bmp, "\137PNG not a bmp")
    h.errors("decode_bmp: channels must be one of 0, 3 or 4 for BMP, got 1", tide.image.decode_bmp, read("rgb24.bmp"),
      { channels = 1 })
    -- hostile headers: a huge width or height, a pixel offset past the end, a negative one
    local s = read("rgb24.bmp")
    local function with(at, bytes) return s:sub(1, at) .. bytes .. s:sub(at + #bytes + 1) end
    h.errors("the image is too large", tide.image.decode_bmp, with(18, "\255\255\255\127"))
    h.errors("the image is too large", tide.image.decode_bmp, with(22, "\0\0\0\128"))
    h.errors("they differ by", tide.image.decode_bmp, with(10, "\255\255\0\0"))
    h.errors("pixel data offset -1", tide.image.decode_bmp, with(10, "\255\255\255\255"))
  end)
end)

describe("tide.image.decode_image", function()
  it("tells PNG from JPEG by the signature", function()
    same(tide.image.decode_image(read("rgba.png")), E.png["rgba.png"].c0_uint8, "png")
    same(tide.image.decode_image(read("gray.jpg")), E.jpeg["gray.jpg"].default, "jpeg")
    same(tide.image.decode_image(read("rgb.png"), { channels = 1 }), E.png["rgb.png"].c1_uint8, "png channels")
    local bytes = read("rgb.png")
    same(tide.image.decode_image(tide.from_buffer(bytes, { #bytes }, "uint8")), E.png["rgb.png"].c0_uint8, "tensor")
    h.errors("decode_image: unknown image format", tide.image.decode_image, "II*\0 a TIFF and so on")
    -- (GIF is read since decode_gif: a broken one is refused by its decoder)
    h.errors("decode_gif: invalid GIF data", tide.image.decode_image, "GIF89a and so on")
    same(tide.image.decode_image(read("rgb24.bmp")), dofile("tests/fixtures/images/bmp_expected.lua")["rgb24.bmp"].c0,
      "bmp")
  end)
end)

describe("tide.image.encode_png", function()
  it("round-trips 8-bit images of 1 to 4 channels and every compression level", function()
    for c = 1, 4 do
      local img = tide.random.uniform({ 5, 7, c }, { maxval = 256, dtype = "int32", seed = c }):cast("uint8")
      for _, level in ipairs { -1, 0, 9 } do
        local bytes = tide.image.encode_png(img, { compression = level })
        assert(type(bytes) == "string" and bytes:sub(1, 4) == "\137PNG")
        h.close(tide.image.decode_png(bytes), img, 0)
      end
    end
  end)

  it("round-trips 16-bit samples (int32 0..65535) and strided images", function()
    local img = tide.random.uniform({ 3, 4, 3 }, { maxval = 65536, dtype = "int32", seed = 7 })
    h.close(tide.image.decode_png(tide.image.encode_png(img), { dtype = "uint16" }), img, 0)
    local u8 = tide.random.uniform({ 6, 4, 3 }, { maxval = 256, dtype = "int32", seed = 8 }):cast("uint8")
    local view = u8:slice { { 0, nil, 2 }, {}, {} }
    h.close(tide.image.decode_png(tide.image.encode_png(view)), view, 0)
  end)

  it("gives the bytes as a tensor with encode_png_tensor", function()
    local img = tide.zeros({ 2, 2, 1 }, "uint8")
    local t = tide.image.encode_png_tensor(img)
    assert.are.equal("uint8", t.dtype)
    assert.are.equal(#tide.image.encode_png(img), t.shape[1])
  end)

  it("refuses what PNG cannot hold", function()
    h.errors("image must be uint8", tide.image.encode_png, tide.zeros({ 2, 2, 1 }))
    h.errors("1 to 4 channels", tide.image.encode_png, tide.zeros({ 2, 2, 5 }, "uint8"))
    h.errors("1 to 4 channels", tide.image.encode_png, tide.zeros({ 2, 2 }, "uint8"))
    h.errors("at least one pixel", tide.image.encode_png, tide.zeros({ 0, 2, 1 }, "uint8"))
    h.errors("compression must be -1 to 9", tide.image.encode_png, tide.zeros({ 1, 1, 1 }, "uint8"), { compression = 10 })
    h.errors("16-bit samples (0 to 65535), got 70000", tide.image.encode_png, tide.fill({ 1, 1, 1 }, 70000))
  end)
end)

-- Big-endian u32.
local function be32(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
end

describe("decoders given garbage, truncated or hostile bytes", function()
  local png, jpg = read("rgb.png"), read("baseline.jpg")
  local prog = read("progressive.jpg")

  it("name the format and the problem for garbage", function()
    h.errors("decode_png: not a PNG image", tide.image.decode_png, "")
    h.errors("decode_png: not a PNG image", tide.image.decode_png, "hello, world, this is no image")
    h.errors("decode_jpeg: not a JPEG image", tide.image.decode_jpeg, "")
    h.errors("decode_jpeg: not a JPEG image", tide.image.decode_jpeg, png)
    h.errors("decode_png: not a PNG image", tide.image.decode_png, jpg)
    h.errors("decode_jpeg: invalid JPEG data", tide.image.decode_jpeg, "\255\216\255\219 then nonsense")
  end)

  it("name the truncation for every cut of a file", function()
    for cut = 8, #png - 1 do
      h.errors("decode_png: invalid PNG data", tide.image.decode_png, png:sub(1, cut))
    end
    for _, data in ipairs { jpg, prog } do
      for cut = 2, #data - 3, 7 do
        h.errors("decode_jpeg: invalid JPEG data", tide.image.decode_jpeg, data:sub(1, cut))
      end
    end
  end)

  it("never crash on corrupted bytes (each byte flipped in turn)", function()
    local seen = 0
    for _, case in ipairs { { tide.image.decode_png, png }, { tide.image.decode_jpeg, jpg }, { tide.image.decode_jpeg, prog } } do
      local fn, data = case[1], case[2]
      for i = 1, #data, 3 do
        local bad = data:sub(1, i - 1) .. string.char((data:byte(i) + 97) % 256) .. data:sub(i + 1)
        local ok, err = pcall(fn, bad)
        if not ok then
          assert(tostring(err):find("invalid %a+ data") or tostring(err):find("not a %a+ image"), tostring(err))
          seen = seen + 1
        end
      end
    end
    assert(seen > 0)
  end)

  it("refuse huge declared dimensions before allocating", function()
    -- the IHDR of rgb.png rewritten to 60000 x 60000 (its CRC fixed by libpng's rule? no: recomputed below)
    local function crc32(s)
      local crc = 0xffffffff
      for i = 1, #s do
        crc = bit.bxor(crc, s:byte(i))
        for _ = 1, 8 do
          local m = -bit.band(crc, 1)
          crc = bit.bxor(bit.rshift(crc, 1), bit.band(0xedb88320, m))
        end
      end
      crc = bit.bnot(crc)
      return crc < 0 and crc + 4294967296 or crc
    end
    local function with_size(w, hgt)
      local ihdr = "IHDR" .. be32(w) .. be32(hgt) .. png:sub(25, 29)
      return png:sub(1, 12) .. ihdr .. be32(crc32(ihdr)) .. png:sub(34)
    end
    h.errors("decode_png: the image is too large: 60000x60000", tide.image.decode_png, with_size(60000, 60000))
    h.errors("more than 178 bytes of data can hold", tide.image.decode_png, with_size(4000, 4000))
    -- JPEG's SOF0 frame header: height and width at offsets 5 and 7 of the segment
    local sof = jpg:find("\255\192", 1, true)
    assert(sof, "baseline.jpg has a SOF0 marker")
    local huge = jpg:sub(1, sof + 4) .. "\255\220\255\220" .. jpg:sub(sof + 9)
    h.errors("the header declares 65500x65500 pixels", tide.image.decode_jpeg, huge)
    local big = jpg:sub(1, sof + 4) .. "\31\64\31\64" .. jpg:sub(sof + 9) -- 8000 x 8000
    h.errors("more than the data can hold", tide.image.decode_jpeg, big)
  end)
end)

describe("decoders on string tensors", function()
  local bytes = assert(io.open("tests/fixtures/images/rgb.png", "rb")):read("a")
  local jpeg = assert(io.open("tests/fixtures/images/baseline.jpg", "rb")):read("a")

  it("take a scalar string tensor as TF does, eagerly, traced and in a dataset's map", function()
    local want = tide.image.decode_png(bytes):totable()
    assert.are.same(want, tide.image.decode_png(tide.tensor(bytes, "string")):totable())
    local f = tide.trace(function(s) return tide.image.decode_jpeg(s, { channels = 3 }) end,
      { input_signature = { tide.TensorSpec({}, "string") } })
    assert.are.same(tide.image.decode_jpeg(jpeg, { channels = 3 }):totable(), f(tide.tensor(jpeg, "string")):totable())
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor({ bytes, bytes }, "string"))
      :map(function(s) return tide.image.decode_png(s) end, { parallel = 2 })
    local n = 0
    for img in ds:iter() do
      n = n + 1
      assert.are.same(want, img:totable())
    end
    assert.are.equal(2, n)
  end)

  it("refuse a string tensor that is not a scalar, and garbage in one", function()
    local h = require "helpers"
    h.errors("contents must be a scalar string tensor", tide.image.decode_png, tide.tensor({ bytes }, "string"))
    h.errors("decode_png", tide.image.decode_png, tide.tensor("not a png at all", "string"))
  end)
end)
