-- tests/spec/io/read_file_spec.lua — tide.io.read_file (tf.io.read_file, an op with an effect) and the
-- decode_image op a string tensor goes to: eager and traced, in a dataset map, and their errors.
local tide = require "tide"
local tmp = require "tmp"
local c_engine = require "tide.data.c_engine"

local IMG = "tests/fixtures/images/"

local function bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

describe("tide.io.read_file", function()
  it("reads a whole file as a 0-d string tensor, from a Lua string or a string tensor", function()
    local t = tide.io.read_file(IMG .. "rgb24.bmp")
    assert.are.equal("string", t.dtype)
    assert.are.equal(0, t.ndim)
    assert.are.equal(bytes(IMG .. "rgb24.bmp"), t:item())
    assert.are.equal(bytes(IMG .. "rgb24.bmp"), tide.io.read_file(tide.tensor(IMG .. "rgb24.bmp", "string")):item())
  end)

  it("reads again at each call of a traced function, a constant path too (never folded)", function()
    local dir = tmp.dir("read_file")
    local path = dir .. "/x.txt"
    local function put(s)
      local f = assert(io.open(path, "wb"))
      f:write(s)
      f:close()
    end
    put("one")
    local f = tide.trace(function() return tide.io.read_file(path) end)
    assert.are.equal("one", f():item())
    put("two, longer")
    assert.are.equal("two, longer", f():item())
    local g = tide.trace(function(p) return tide.strings.length(tide.io.read_file(p)) end)
    assert.are.equal(11, g(tide.tensor(path, "string")):item())
    tmp.remove(dir)
  end)

  it("reads files on a pipeline's threads", function()
    local ds = tide.data.Dataset.from_tensor_slices(tide.tensor({ IMG .. "rgb24.bmp", IMG .. "anim.gif" }, "string"))
      :map(tide.io.read_file, { parallel = 2 })
    assert.is_true(c_engine.supports(ds))
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:item() end
    assert.are.same({ bytes(IMG .. "rgb24.bmp"), bytes(IMG .. "anim.gif") }, got)
  end)

  it("names the file and the problem", function()
    local function err(pattern, ...)
      local ok, e = pcall(tide.io.read_file, ...)
      assert.is_false(ok)
      assert.matches(pattern, tostring(e), 1, true)
    end
    err("read_file: cannot open 'tests/no_such_file'", "tests/no_such_file")
    err("read_file: cannot open 'tests/fixtures'", "tests/fixtures") -- a folder
    err("read_file: the path is empty", "")
    err("filename holds a NUL byte", "a\0b")
    err("filename must be a scalar string tensor, got a 1-D string tensor", tide.tensor({ "a", "b" }, "string"))
    err("filename must be a string or a 0-d string tensor, got number", 3)
  end)
end)

describe("tide.image.decode_image of a string tensor (the decode_image op)", function()
  it("tells the format from the bytes: the same pixels as each decoder", function()
    local f = tide.trace(function(p) return tide.image.decode_image(tide.io.read_file(p), { expand_animations = false }) end)
    for name, ref in pairs {
      ["baseline.jpg"] = function(s) return tide.image.decode_jpeg(s) end,
      ["rgb24.bmp"] = function(s) return tide.image.decode_bmp(s) end,
      ["rgba.png"] = function(s) return tide.image.decode_png(s) end,
      ["anim.gif"] = function(s) return tide.image.decode_gif(s)[0] end,
      ["anim.webp"] = function(s) return tide.image.decode_webp(s)[0] end,
      ["gray.jxl"] = function(s) return tide.image.decode_jxl(s) end,
    } do
      local s = bytes(IMG .. name)
      local got = tide.image.decode_image(tide.tensor(s, "string"), { expand_animations = false })
      assert.are.same(ref(s):totable(), got:totable(), name)
      -- traced, from the file's path
      assert.are.same(ref(s):totable(), f(tide.tensor(IMG .. name, "string")):totable(), name .. " traced")
    end
    -- channels, and a float dtype as tf.io.decode_image converts
    local g = tide.image.decode_image(tide.tensor(bytes(IMG .. "rgba.png"), "string"),
      { channels = 1, dtype = "float32", expand_animations = false })
    assert.are.equal(1, g.shape[3])
    assert.are.equal("float32", g.dtype)
    -- an eager string tensor with expand_animations=true decodes as the bytes do (a GIF's frames)
    assert.are.equal(4, tide.image.decode_image(tide.tensor(bytes(IMG .. "anim.gif"), "string")).ndim)
  end)

  it("refuses what it cannot decode, naming the format", function()
    local function err(pattern, fn)
      local ok, e = pcall(fn)
      assert.is_false(ok)
      assert.matches(pattern, tostring(e), 1, true)
    end
    local function dec(s, o)
      o = o or {}
      o.expand_animations = false
      return function() return tide.image.decode_image(tide.tensor(s, "string"), o) end
    end
    err("decode_image: unknown image format", dec("not an image at all"))
    err("JPEG does not support 4 channels", dec(bytes(IMG .. "baseline.jpg"), { channels = 4 }))
    err("channels must be 0, 3 or 4 for BMP, got 1", dec(bytes(IMG .. "rgb24.bmp"), { channels = 1 }))
    err("channels must be 0 or 3 for GIF, got 4", dec(bytes(IMG .. "anim.gif"), { channels = 4 }))
    err("channels must be one of 0, 1, 3 or 4, got 2", dec(bytes(IMG .. "rgba.png"), { channels = 2 }))
    err("decode_image: invalid PNG data", dec(bytes(IMG .. "rgba.png"):sub(1, 40))) -- truncated: the PNG reader's words
    err("pass expand_animations=false", function()
      return tide.trace(function(b) return tide.image.decode_image(b) end)(tide.tensor("x", "string"))
    end)
  end)
end)
