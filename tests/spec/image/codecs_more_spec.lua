-- tests/spec/image/codecs_more_spec.lua — decode_gif, decode_webp, decode_jxl and decode_image on them against
-- TensorFlow 2.21's pixels (tests/fixtures/images, written by codecs_more_gen.py: animations, frame offsets,
-- transparency, interlacing, alpha, grey, lossy and lossless), and truncated or garbage bytes: a clear error
-- naming the op, never a crash (these also run under SANITIZE=1).
local tide = require "tide"
local h = require "helpers"
local E = dofile("tests/fixtures/images/codecs_more_expected.lua")
local DIR = "tests/fixtures/images/"

local function read(name)
  local f = assert(io.open(DIR .. name, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- t is TF's result `want` (shape, dtype), its values within tol (0: exact).
local function same(t, want, what, tol)
  tol = tol or 0
  assert(t.dtype == want.dtype, string.format("%s: dtype %s, TF's %s", what, t.dtype, want.dtype))
  assert(table.concat(t.shape:as_list(), ",") == table.concat(want.shape, ","),
    string.format("%s: shape %s, TF's {%s}", what, tostring(t.shape), table.concat(want.shape, ",")))
  local got = h.values(t)
  for i = 1, #want.values do
    if math.abs(got[i] - want.values[i]) > tol then
      error(string.format("%s: value %d is %s, TF's %s", what, i, tostring(got[i]), tostring(want.values[i])), 0)
    end
  end
end

local function files(ext)
  local out = {}
  for name in pairs(E) do if name:match("%." .. ext .. "$") then out[#out + 1] = name end end
  table.sort(out)
  assert(#out > 0)
  return out
end

describe("tide.image.decode_gif", function()
  it("gives TF's frames: still, animated (offset frames), transparent, interlaced, a first frame off the canvas",
    function()
      for _, name in ipairs(files("gif")) do
        local bytes = read(name)
        same(tide.image.decode_gif(bytes), E[name].decode, name)
        same(tide.image.decode_image(bytes, { expand_animations = false }), E[name].image_first, name .. " first")
        same(tide.image.decode_image(bytes, { dtype = "float32" }), E[name].image_float32, name .. " float32")
        same(tide.image.decode_gif(tide.from_buffer(bytes, { #bytes }, "uint8")), E[name].decode, name .. " tensor")
      end
    end)
  it("refuses truncated and garbage bytes with the op's name", function()
    h.errors("decode_gif: invalid GIF data", tide.image.decode_gif, read("bad_truncated.gif"))
    h.errors("decode_gif: invalid GIF data: No screen descriptor", tide.image.decode_gif, read("bad_header_only.gif"))
    h.errors("decode_gif: not a GIF image", tide.image.decode_gif, "GIX89a....")
    h.errors("decode_gif: not a GIF image", tide.image.decode_gif, "")
    h.errors("decode_image: channels must be 0 or 3 for GIF, got 4", tide.image.decode_image, read("still.gif"),
      { channels = 4 })
    h.errors("decode_gif: contents must be", tide.image.decode_gif, 3)
  end)
end)

describe("tide.image.decode_webp", function()
  it("gives TF's pixels: lossless RGB and RGBA, lossy, an RGBA animation", function()
    for _, name in ipairs(files("webp")) do
      local bytes = read(name)
      same(tide.image.decode_webp(bytes), E[name].decode, name)
      if E[name].image then
        same(tide.image.decode_image(bytes), E[name].image, name .. " image")
        same(tide.image.decode_image(bytes, { expand_animations = false }), E[name].image_first, name .. " first")
      end
    end
    same(tide.image.decode_webp(read("rgba.webp"), { channels = 4 }), E["rgba.webp"].decode, "channels 4")
    same(tide.image.decode_webp(read("anim.webp"), { channels = 4 }), E["anim.webp"].decode, "animation, channels 4")
  end)
  it("refuses channels the file lacks, other dtypes, truncated and garbage bytes", function()
    h.errors("decode_webp: the number of channels asked for (4) does not match the file's (3)", tide.image.decode_webp,
      read("rgb.webp"), { channels = 4 })
    h.errors("decode_webp: a WebP animation decodes to 4 channels", tide.image.decode_webp, read("anim.webp"),
      { channels = 3 })
    h.errors("decode_webp: channels must be one of 0, 3 or 4 for WebP, got 1", tide.image.decode_webp,
      read("rgb.webp"), { channels = 1 })
    h.errors("decode_webp: dtype must be \"uint8\"", tide.image.decode_webp, read("rgb.webp"), { dtype = "float32" })
    h.errors("decode_image: WebP only supports uint8", tide.image.decode_image, read("rgb.webp"), { dtype = "float32" })
    h.errors("decode_webp: invalid WebP data", tide.image.decode_webp, read("bad_truncated.webp"))
    h.errors("decode_webp: invalid WebP data", tide.image.decode_webp, read("bad_garbage.webp"))
    h.errors("decode_webp: not a WebP image", tide.image.decode_webp, "RIFF1234WEBX")
  end)
end)

describe("tide.image.decode_jxl", function()
  it("gives TF's pixels: lossless RGB, RGBA and grey; lossy within 1 (libjxl versions round apart)", function()
    for _, name in ipairs(files("jxl")) do
      local tol = name:match("lossy") and 1 or 0
      same(tide.image.decode_jxl(read(name)), E[name].decode, name, tol)
      same(tide.image.decode_image(read(name)), E[name].image, name .. " image", tol)
    end
    same(tide.image.decode_jxl(read("gray.jxl"), { channels = 1 }), E["gray.jxl"].decode, "channels 1")
  end)
  it("refuses channels the file lacks, other dtypes, truncated and garbage bytes (no huge allocation)", function()
    h.errors("decode_jxl: the number of channels asked for (1) does not match the file's (3)", tide.image.decode_jxl,
      read("rgb.jxl"), { channels = 1 })
    h.errors("decode_jxl: the number of channels asked for (3) does not match the file's (1)", tide.image.decode_jxl,
      read("gray.jxl"), { channels = 3 })
    h.errors("decode_jxl: channels must be one of 0, 1, 3 or 4, got 2", tide.image.decode_jxl, read("rgb.jxl"),
      { channels = 2 })
    h.errors("decode_image: JPEG XL only supports uint8", tide.image.decode_image, read("rgb.jxl"), { dtype = "float32" })
    h.errors("decode_jxl: invalid JPEG XL data", tide.image.decode_jxl, read("bad_truncated.jxl"))
    h.errors("decode_jxl: the JPEG XL image is too large", tide.image.decode_jxl, read("bad_garbage.jxl"))
    h.errors("decode_jxl: not a JPEG XL image", tide.image.decode_jxl, "\255\216 a jpeg")
  end)
end)

describe("the new decoders", function()
  it("trace (their shapes known when the bytes are decoded) and run in tide.data maps", function()
    local f = tide.trace(function(b) return tide.image.decode_gif(b) end,
      { input_signature = { tide.TensorSpec({}, "string") } })
    same(f(tide.tensor(read("anim.gif"))), E["anim.gif"].decode, "traced")
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor { read("rgb.webp"), read("rgba.webp") })
      :map(function(b) return tide.image.decode_webp(b) end)
    local shapes = {}
    for img in ds:iter() do shapes[#shapes + 1] = table.concat(img.shape:as_list(), "x") end
    assert.are.same({ "1x5x7x3", "1x6x4x4" }, shapes)
  end)
end)
