-- tests/spec/tools/api_coverage_spec.lua — tools/api_coverage.lua runs, counts what it should, and its
-- tables (renames, names left out on purpose) name only things that exist. No share is asserted here.
local tide = require "tide"
local cov = dofile("tools/api_coverage.lua")

local function in_list(module, name)
  for _, n in ipairs(cov.read_names(module)) do
    if n == name then return true end
  end
  return false
end

describe("tools/api_coverage.lua", function()
  it("has a name list for every module it reports, each of them non-empty", function()
    for _, mod in ipairs(cov.MODULES) do
      assert.truthy(#cov.read_names(mod.name) > 0, mod.name)
    end
  end)

  it("maps each rename to a TF name in its list and to a tide name that exists", function()
    local n = 0
    for module, renames in pairs(cov.RENAMES) do
      for tf_name, path in pairs(renames) do
        n = n + 1
        assert.truthy(in_list(module, tf_name), module .. "." .. tf_name .. " is in no name list")
        assert.is_not_nil(cov.rename_target(tide, module, tf_name), path .. " (for " .. module .. "." .. tf_name .. ") does not exist")
      end
    end
    assert.truthy(n > 0)
  end)

  it("leaves out only names in the lists, each with a reason, none also renamed", function()
    for module, left in pairs(cov.LEFT_OUT) do
      for name, why in pairs(left) do
        assert.truthy(in_list(module, name), module .. "." .. name .. " is in no name list")
        assert.are.equal("string", type(why))
        assert.truthy(#why > 10, module .. "." .. name .. " needs a reason")
        assert.is_nil((cov.RENAMES[module] or {})[name], module .. "." .. name .. " is both renamed and left out")
      end
    end
  end)

  it("counts a present name as covered, an absent one as missing, a rename by its tide name", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir) == 0)
    local f = assert(io.open(dir .. "/tf.txt", "wb"))
    f:write("# planted\nmatmul\nno_such_name_xyz\nfunction\n")
    f:close()
    local r = cov.measure(tide, { name = "tf", tide = "tide" }, dir)
    os.remove(dir .. "/tf.txt")
    os.remove(dir)
    assert.are.equal(3, r.total)
    assert.are.equal(2, r.covered)
    assert.are.same({ "no_such_name_xyz" }, r.missing)
  end)

  it("runs as a script and prints a share line per module, and the missing names when asked", function()
    local p = assert(io.popen("build/tide tools/api_coverage.lua tf.bitwise keras.layers --missing 2>&1"))
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("tf.bitwise%s+tide.bitwise%s+%d+ / %d+%s+[%d.]+%%"), out)
    assert.truthy(out:find("keras.layers%s+tide.layers%s+%d+ / %d+"), out)
    assert.truthy(out:find("keras.layers left out: TorchModuleWrapper (", 1, true), out)
    assert.is_nil(out:find("tf.math", 1, true))
  end)
end)
