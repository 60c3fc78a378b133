-- tests/spec/support_spec.lua — the spec helpers themselves (tests/support):
-- h.close checks the shape when the expected value has one, and tmp removes
-- what it handed out and a spec left behind.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"

describe("h.close", function()
  it("compares a tensor with a nested table or a tensor by shape, then by value", function()
    h.close(tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } }, { { 1, 2, 3 }, { 4, 5, 6 } })
    h.close(tide.tensor(3), tide.tensor(3))
    h.close({ { 1, 2 }, { 3, 4 } }, { { 1, 2 }, { 3, 4 } })
    h.errors("expected shape (2, 3), got (3, 2)", h.close, tide.tensor { { 1, 2 }, { 3, 4 }, { 5, 6 } },
      { { 1, 2, 3 }, { 4, 5, 6 } })
    h.errors("expected shape (2, 3), got (6)", h.close, tide.tensor { 1, 2, 3, 4, 5, 6 }, { { 1, 2, 3 }, { 4, 5, 6 } })
    h.errors("expected shape (6), got (2, 3)", h.close, tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } },
      tide.tensor { 1, 2, 3, 4, 5, 6 })
    h.errors("expected shape (), got (1)", h.close, tide.tensor { 3 }, tide.tensor(3))
    h.errors("expected shape (2, 2), got (1, 4)", h.close, { { 1, 2, 3, 4 } }, { { 1, 2 }, { 3, 4 } })
    h.errors("value 2: expected 2, got 5", h.close, tide.tensor { { 1, 5 } }, { { 1, 2 } })
  end)

  it("compares with a flat list or a number by count and value, whatever the shape", function()
    h.close(tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } }, { 1, 2, 3, 4, 5, 6 })
    h.close(tide.tensor(3), 3)
    h.close(tide.tensor { 3 }, 3)
    h.errors("expected 5 values, got 6", h.close, tide.tensor { { 1, 2, 3 }, { 4, 5, 6 } }, { 1, 2, 3, 4, 5 })
  end)
end)

describe("tmp", function()
  local function exists(p)
    local f = io.open(p, "rb")
    if f then f:close() end
    return f ~= nil
  end

  it("remove_made removes the folders and files a spec left, and nothing it removed or did not make", function()
    local dir = tmp.dir("support")
    local inside = dir .. "/x.txt"
    local f = assert(io.open(inside, "w"))
    f:write("x")
    f:close()
    local name = tmp.name(".csv")
    f = assert(io.open(name, "w"))
    f:write("y")
    f:close()
    local gone = tmp.dir("support")
    tmp.remove(gone)
    assert.truthy(exists(inside) and exists(name))
    assert.are.equal(2, tmp.remove_made())
    assert.falsy(exists(inside))
    assert.falsy(exists(dir .. "/."))
    assert.falsy(exists(name))
    assert.are.equal(0, tmp.remove_made())
  end)
end)
