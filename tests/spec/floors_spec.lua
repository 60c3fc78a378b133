-- tests/spec/floors_spec.lua — the Lua library keeps its floors
-- (docs/architecture.md): tools/floors.lua finds no upward require, no cycle
-- and no computed module name in stdlib/ and bindings/, and it does find them
-- in sources planted to break each rule.
local floors = dofile("tools/floors.lua")

-- Floors for the planted sources: a (bottom), b, c (top).
local PLANTED = {
  { name = "a", modules = { "tide.a", "tide.a2" } },
  { name = "b", modules = { "tide.b", "tide.b.*" } },
  { name = "c", modules = { "tide.c" } },
}

local function check(files, exceptions)
  return floors.check(files, PLANTED, exceptions or {}, {})
end

describe("the Lua library's floors", function()
  it("hold in stdlib/ and bindings/: every module on a floor, every require down or sideways, no cycle", function()
    local files = floors.read_tree()
    assert.truthy(#files > 40, "expected the library's files, found " .. #files)
    local breaches = floors.check(files)
    assert.are.equal(0, #breaches, "\n" .. floors.report(breaches))
  end)

  it("are listed in docs/architecture.md in the same order as in tools/floors.lua", function()
    local f = assert(io.open("docs/architecture.md", "rb"))
    local doc = f:read("*a")
    f:close()
    local at = 0
    for _, fl in ipairs(floors.FLOORS) do
      local s = doc:find("| " .. fl.name .. " |", 1, true)
      assert.truthy(s, "docs/architecture.md has no row for floor " .. fl.name)
      assert.truthy(s > at, "floor " .. fl.name .. " is out of order in docs/architecture.md")
      at = s
      for _, m in ipairs(fl.modules) do
        local row = doc:sub(s, (doc:find("\n", s, true) or #doc))
        assert.truthy(row:find(m, 1, true), "docs/architecture.md's row for " .. fl.name .. " does not name " .. m)
      end
    end
  end)

  it("name the file and line of a require that points up a floor", function()
    local b = check {
      { path = "stdlib/tide/a.lua", source = 'local x = 1\nlocal function f()\n  return require("tide.c")\nend\n' },
      { path = "stdlib/tide/c.lua", source = 'return {}' },
    }
    assert.are.equal(1, #b)
    assert.are.equal("stdlib/tide/a.lua", b[1].file)
    assert.are.equal(3, b[1].line)
    assert.truthy(b[1].message:find("up a floor", 1, true), b[1].message)
  end)

  it("name a cycle on one floor with each step's file and line", function()
    local b = check {
      { path = "stdlib/tide/b/init.lua", source = 'local x = require "tide.b.one"\n' },
      { path = "stdlib/tide/b/one.lua", source = '\n\nlocal two = require "tide.b.two"\n' },
      { path = "stdlib/tide/b/two.lua", source = 'local function late() return require("tide.b") end\n' },
    }
    assert.are.equal(1, #b)
    local m = b[1].message
    assert.truthy(m:find("^cycle: "), m)
    assert.truthy(m:find("tide.b -> tide.b.one (stdlib/tide/b/init.lua:1)", 1, true), m)
    assert.truthy(m:find("tide.b.one -> tide.b.two (stdlib/tide/b/one.lua:3)", 1, true), m)
    assert.truthy(m:find("tide.b.two -> tide.b (stdlib/tide/b/two.lua:1)", 1, true), m)
  end)

  it("allow requires down a floor and sideways without a cycle", function()
    assert.are.equal(0, #check {
      { path = "stdlib/tide/a.lua", source = 'local ffi = require "ffi"\nlocal a2 = require "tide.a2"' },
      { path = "stdlib/tide/a2.lua", source = 'return {}' },
      { path = "stdlib/tide/c.lua", source = 'require "tide.a"; require("tide.b"); pcall(require, "jit.util")' },
      { path = "stdlib/tide/b/init.lua", source = 'return {}' },
    })
  end)

  it("refuse a computed module name, a module on no floor, and a require of a missing module", function()
    local b = check {
      { path = "stdlib/tide/a.lua", source = 'local name = "tide.c"\nlocal m = require(name)\nrequire "tide.zz"' },
      { path = "stdlib/tide/stray.lua", source = 'return {}' },
    }
    assert.are.equal(3, #b)
    assert.truthy(b[1].message:find("computed name", 1, true) and b[1].line == 2, b[1].message)
    assert.truthy(b[2].message:find("tide.zz", 1, true) and b[2].line == 3, b[2].message)
    assert.truthy(b[3].file == "stdlib/tide/stray.lua" and b[3].message:find("on no floor", 1, true), b[3].message)
  end)

  it("do not read requires in comments and strings, and do count lines through long strings", function()
    local src = table.concat({
      '-- require "tide.c"',
      '--[[ require("tide.c")',
      ']] local s = "require \'tide.c\'"',
      'local t = [==[',
      'require "tide.c" ]==]',
      'local obj = { require = function() end }',
      'obj.require("tide.c"); obj:require("tide.c")',
      'local up = require "tide.c"',
    }, "\n")
    local b = check {
      { path = "stdlib/tide/a.lua", source = src },
      { path = "stdlib/tide/c.lua", source = 'return {}' },
    }
    assert.are.equal(1, #b)
    assert.are.equal(8, b[1].line)
  end)

  it("take an exception with its reason, and report one that no longer matches", function()
    local files = {
      { path = "stdlib/tide/a.lua", source = 'require "tide.c"' },
      { path = "stdlib/tide/c.lua", source = 'return {}' },
    }
    assert.are.equal(0, #check(files, { { file = "stdlib/tide/a.lua", requires = "tide.c", reason = "planted" } }))
    local b = check(files, { { file = "stdlib/tide/a.lua", requires = "tide.c", reason = "planted" },
                             { file = "stdlib/tide/c.lua", requires = "tide.a", reason = "gone" } })
    assert.are.equal(1, #b)
    assert.truthy(b[1].message:find("matches no require", 1, true), b[1].message)
  end)

  it("name modules as require does", function()
    assert.are.equal("tide", floors.module_name("stdlib/tide/init.lua"))
    assert.are.equal("tide.grad", floors.module_name("stdlib/tide/grad/init.lua"))
    assert.are.equal("tide.ops.math", floors.module_name("stdlib/tide/ops/math.lua"))
    assert.are.equal("tide.binding", floors.module_name("bindings/tide/binding.lua"))
  end)
end)
