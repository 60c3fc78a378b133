-- tests/spec/repl/complete_spec.lua — tide.repl.complete: globals and keywords,
-- fields of tables and modules (tide's lazy ones listed without loading them),
-- tensor methods and properties, string methods; nothing for what has no fields.
local tide = require "tide"
local repl = require "tide.repl"

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

describe("tide.repl.complete", function()
  setup(function()
    _G.tide = tide
    _G.repl_spec_x = tide.ones{2, 3}
    _G.repl_spec_s = "text"
    _G.repl_spec_t = { alpha = 1, alphabet = 2, beta = 3, [1] = "array part", nested = { inner = true } }
  end)
  teardown(function()
    _G.tide, _G.repl_spec_x, _G.repl_spec_s, _G.repl_spec_t = nil, nil, nil, nil
  end)

  it("completes globals and keywords", function()
    local c = set(repl.complete("pri"))
    assert.is_true(c.print)
    assert.are.same({ "repl_spec_s", "repl_spec_t", "repl_spec_x" }, repl.complete("repl_spec_"))
    assert.is_true(set(repl.complete("whi"))["while"])
    assert.is_true(set(repl.complete("ret"))["return"])
  end)

  it("completes fields of tables, sorted, with the path kept", function()
    assert.are.same({ "repl_spec_t.alpha", "repl_spec_t.alphabet" }, repl.complete("repl_spec_t.al"))
    assert.are.same({ "repl_spec_t.nested.inner" }, repl.complete("repl_spec_t.nested.in"))
    assert.are.same({}, repl.complete("repl_spec_t.zzz"))
    assert.are.same({}, repl.complete("repl_spec_t.missing.x"))
  end)

  it("lists tide's lazy modules without loading them, and members of loaded ones", function()
    local loaded = package.loaded["tide.callbacks"]
    assert.is_nil(rawget(tide, "callbacks"))
    assert.are.same({ "tide.callbacks" }, repl.complete("tide.callb"))
    assert.is_nil(rawget(tide, "callbacks"), "completing tide.callb loaded tide.callbacks")
    assert.are.equal(loaded, package.loaded["tide.callbacks"])
    assert.is_true(set(repl.complete("tide.la"))["tide.layers"])
  end)

  it("completes members of modules by path (loading the lazy module the path names)", function()
    assert.is_true(set(repl.complete("tide.nn.re"))["tide.nn.relu"])
    local c = set(repl.complete("tide.layers.De"))
    assert.is_true(c["tide.layers.Dense"])
    assert.is_true(c["tide.layers.DepthwiseConv2D"])
  end)

  it("completes tensor methods after ':' and methods and properties after '.'", function()
    assert.are.same({ "repl_spec_x:reshape" }, repl.complete("repl_spec_x:resh"))
    local dot = set(repl.complete("repl_spec_x.sh"))
    assert.is_true(dot["repl_spec_x.shape"])
    assert.is_nil(set(repl.complete("repl_spec_x:sh"))["repl_spec_x:shape"]) -- a property is no method
  end)

  it("completes string methods after ':'", function()
    assert.is_true(set(repl.complete("repl_spec_s:up"))["repl_spec_s:upper"])
  end)

  it("completes methods of class instances through their metatables", function()
    _G.repl_spec_layer = tide.layers.Dense(2)
    local c = set(repl.complete("repl_spec_layer:ca"))
    _G.repl_spec_layer = nil
    assert.is_true(c["repl_spec_layer:call"])
  end)

  it("offers nothing for words it cannot read", function()
    assert.are.same({}, repl.complete("1 + "))
    assert.are.same({}, repl.complete("repl_spec_x:reshape:fo"))
    assert.are.same({}, repl.complete("no_such_global_xyz.a"))
    assert.are.same({}, repl.complete("repl_spec_t.alpha.x")) -- a number has no fields
  end)
end)
