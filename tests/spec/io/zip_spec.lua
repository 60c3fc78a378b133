-- tests/spec/io/zip_spec.lua — tide.io.zip: Keras's .keras archives (stored
-- and deflated) read, archives written and read back (and by Python in make
-- interop), broken archives refused with errors naming the fault.
local h = require "helpers"
local tmp = require "tmp"
local zip = require "tide.io.zip"

local FIX = "tests/fixtures/keras_files/"

local function read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("tide.io.zip", function()
  it("reads a .keras archive Keras wrote, stored and deflated", function()
    for _, name in ipairs { "mlp.keras", "mlp_deflated.keras" } do
      local z = zip.open(FIX .. name)
      assert.same({ "metadata.json", "config.json", "model.weights.h5" }, z:names())
      assert.is_true(z:has("config.json"))
      assert.is_false(z:has("nope"))
      assert.truthy(z:read("metadata.json"):find('"keras_version"', 1, true))
      assert.equal("\137HDF\r\n\26\n", z:read("model.weights.h5"):sub(1, 8))
      h.errors("has no entry 'nope' (entries: metadata.json, config.json, model.weights.h5)",
        function() z:read("nope") end)
      z:close()
      h.errors("is closed", function() z:names() end)
    end
    local a, b = zip.open(FIX .. "mlp.keras"), zip.open(FIX .. "mlp_deflated.keras")
    assert.equal(a:read("model.weights.h5"), b:read("model.weights.h5"))
  end)

  it("writes an archive (atomically) that reads back, with binary and empty entries", function()
    local dir = tmp.dir("zip")
    local path = dir .. "/a.keras"
    local blob = {}
    for i = 0, 255 do blob[#blob + 1] = string.char(i) end
    blob = table.concat(blob):rep(10)
    local w = zip.writer()
    w:add("config.json", "{}"):add("bin", blob):add("empty", "")
    w:save(path)
    h.errors("already saved", function() w:add("x", "y") end)
    local z = zip.open(path)
    assert.same({ "config.json", "bin", "empty" }, z:names())
    assert.equal(blob, z:read("bin"))
    assert.equal("", z:read("empty"))
    local p = io.popen("ls -A " .. dir)
    assert.equal("a.keras\n", p:read("*a"))
    p:close()
    tmp.remove(dir)
  end)

  it("refuses what is not a zip, truncated archives and corrupt entries", function()
    h.errors("is not a readable zip archive", function() zip.open(FIX .. "mlp.weights.h5") end)
    h.errors("is not a readable zip archive", function() zip.open_bytes("", "empty") end)
    h.errors("cannot open", function() zip.open(FIX .. "no_such.keras") end)
    h.errors("the path is empty", function() zip.open("") end)
    local good = read_bytes(FIX .. "mlp.keras")
    for _, n in ipairs { 4, 22, 100, math.floor(#good / 2), #good - 1 } do
      h.errors("zip: 'cut'", function() zip.open_bytes(good:sub(1, n), "cut") end)
    end
    -- a byte of a stored entry's data changed: its CRC no longer matches
    local at = good:find("keras_version", 1, true)
    local bad = good:sub(1, at - 1) .. "K" .. good:sub(at + 1)
    local z = zip.open_bytes(bad, "crc")
    h.errors("entry 'metadata.json' cannot be read", function() z:read("metadata.json") end)
    -- every 61st byte flipped in turn: clean errors or data, nothing else
    for i = 1, #good, 61 do
      local flipped = good:sub(1, i - 1) .. string.char((good:byte(i) + 0x33) % 256) .. good:sub(i + 1)
      local ok, zz = pcall(zip.open_bytes, flipped, "flipped")
      if ok then
        for _, name in ipairs(zz:names()) do pcall(zz.read, zz, name) end
      else
        assert.truthy(tostring(zz):find("zip: 'flipped'", 1, true), tostring(zz))
      end
    end
  end)
end)
