-- tests/spec/repl/show_spec.lua — tide.repl.show: how the REPL prints a result.
local tide = require "tide"
local show = require "tide.repl.show"

describe("tide.repl.show", function()
  it("prints strings as they are at the top, quoted inside tables", function()
    assert.are.equal("text", show.show("text"))
    assert.are.equal('{"a\\nb"}', show.show({ "a\nb" }))
  end)

  it("prints scalars as tostring", function()
    assert.are.equal("42", show.show(42))
    assert.are.equal("nil", show.show(nil))
    assert.are.equal("true", show.show(true))
  end)

  it("prints tensors as tide does, summarized when large", function()
    local t = tide.ones{2000}
    assert.are.equal(tostring(t), show.show(t))
    assert.truthy(show.show(t):find("...", 1, true))
  end)

  it("prints a small table on one line: array part, then keys sorted", function()
    assert.are.equal("{1, 2, b = 2, [\"not id\"] = 3, z = 1}",
      show.show({ 1, 2, z = 1, b = 2, ["not id"] = 3 }))
    assert.are.equal("{}", show.show({}))
  end)

  it("stops at the depth limit and caps entries", function()
    assert.are.equal("{1, {2, {...}}}", show.show({ 1, { 2, { 3 } } }))
    local big = {}
    for i = 1, 50 do big[i] = i end
    local text = show.show(big)
    assert.truthy(text:find("... (30 more)", 1, true), text)
    assert.falsy(text:find("21", 1, true), text)
  end)

  it("breaks a wide table over lines, indented", function()
    local t = { first = string.rep("a", 40), second = string.rep("b", 40) }
    assert.are.equal('{\n  first = "' .. string.rep("a", 40) .. '",\n  second = "' .. string.rep("b", 40) .. '"\n}',
      show.show(t))
  end)

  it("marks cycles instead of recursing", function()
    local t = { name = "loop" }
    t.self = t
    assert.truthy(show.show(t):find("<cycle: table", 1, true))
  end)

  it("uses __tostring for objects that have one", function()
    local obj = setmetatable({}, { __tostring = function() return "custom object" end })
    assert.are.equal("{custom object}", show.show({ obj }))
    assert.are.equal("custom object", show.show(obj))
  end)

  it("joins several results with tabs", function()
    assert.are.equal("1\tnil\t{2}", show.show_all(1, nil, { 2 }))
  end)
end)
