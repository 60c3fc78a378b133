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
    h.errors("is not a zip archive: it is an HDF5 file", function() zip.open(FIX .. "mlp.weights.h5") end)
    h.errors("is not a readable zip archive", function() zip.open_bytes(read_bytes(FIX .. "mlp.weights.h5"), "h5") end)
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

-- libtide loads the HDF5/zip plugin (libtide_formats.so) on first use; a
-- process that cannot load it gets an error saying which file and why.
describe("libtide_formats.so, loaded on first use", function()
  local program = require "tide_program"

  local function run_with_plugin(plugin, code)
    local dir = program.make_tmpdir("formats")
    local rc, out, err = program.sh(dir, "TIDE_FORMATS_LIBRARY=" .. program.quote(plugin) .. " "
      .. program.quote(program.path) .. " -e " .. program.quote(code))
    program.remove_tmpdir(dir)
    return rc, out, err
  end

  it("is not loaded by a program that opens no HDF5 or zip file", function()
    local rc, out = run_with_plugin(program.build .. "/libtide_formats.so", [[
      local t = require "tide"
      local _ = (t.ones{ 2 } + 1):totable()
      local maps = io.open("/proc/self/maps"):read("*a")
      print(maps:find("libtide_formats", 1, true) and "loaded" or "not loaded")
      print(maps:find("libhdf5", 1, true) and "hdf5" or "no hdf5")]])
    assert.equal(0, rc)
    assert.equal("not loaded\nno hdf5\n", out)
  end)

  it("names the missing plugin, for HDF5 and zip alike", function()
    local rc, _, err = run_with_plugin("/nonexistent/libtide_formats.so", [[
      local h5, zip = require "tide.io.h5", require "tide.io.zip"
      local ok, e1 = pcall(h5.open, "a.h5")
      local ok2, e2 = pcall(zip.open, "a.zip")
      assert(not ok and not ok2)
      io.stderr:write(e1, "\n", e2, "\n")]])
    assert.equal(0, rc)
    local n = 0
    for line in err:gmatch("[^\n]+") do
      n = n + 1
      assert.truthy(line:find("need libtide_formats.so, which did not load: /nonexistent/libtide_formats.so", 1, true),
        line)
    end
    assert.equal(2, n)
  end)

  it("refuses a library that is not the plugin", function()
    local rc, _, err = run_with_plugin(program.build .. "/libtide.so", [[
      local ok, e = pcall(require("tide.io.zip").open, "a.zip")
      assert(not ok)
      io.stderr:write(e, "\n")]])
    assert.equal(0, rc)
    assert.truthy(err:find("libtide.so is not the HDF5/zip plugin of this libtide", 1, true), err)
  end)
end)
