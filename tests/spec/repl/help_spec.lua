-- tests/spec/repl/help_spec.lua — tide.repl.help: the doc comment above a
-- definition, the definition line as signature, classes, modules, tensors.
local tide = require "tide"
local help = require "tide.repl.help"
local program = require "tide_program"

local function has(s, needle) return s:find(needle, 1, true) ~= nil end

describe("tide.repl.help", function()
  it("shows a library function's definition line, file and doc comment", function()
    local text = help.help_text(tide.reshape)
    assert.truthy(has(text, "function M.reshape(x, shape, ...)"), text)
    assert.truthy(has(text, "stdlib/tide/ops/shape.lua:"), text)
    assert.truthy(has(text, "reshape(tensor, shape): shape a list"), text)
  end)

  it("reads the comment block right above the definition, not a section rule", function()
    local dir = program.make_tmpdir("help_spec")
    local path = dir .. "/documented.lua"
    program.write_file(path, table.concat({
      "---------------------------------------------------------------------------",
      "-- scale(x, k): x times k; k defaults to 2.",
      "-- A second line of doc.",
      "local function scale(x, k) return x * (k or 2) end",
      "",
      "local function bare(a, ...) return a end",
      "return scale, bare",
    }, "\n"))
    local scale, bare = dofile(path)
    local text = help.help_text(scale)
    assert.truthy(has(text, "local function scale(x, k) return x * (k or 2) end"), text)
    assert.truthy(has(text, "scale(x, k): x times k; k defaults to 2.\nA second line of doc."), text)
    assert.falsy(has(text, "-----"), text)
    assert.truthy(has(help.help_text(bare), "(no doc comment above its definition)"))
    program.remove_tmpdir(dir)
  end)

  it("gives the parameters of a function without a source file", function()
    local f = assert(loadstring("return function(alpha, beta, ...) end", "=typed"))()
    local text = help.help_text(f, "f")
    assert.truthy(has(text, "f(alpha, beta, ...)"), text)
  end)

  it("says a C function is built in", function()
    assert.truthy(has(help.help_text(print, "print"), "built-in"))
  end)

  it("shows a class's doc and methods, also for an instance", function()
    local text = help.help_text(tide.layers.Dense)
    assert.truthy(has(text, "class Dense"), text)
    assert.truthy(has(text, "Dense{units, activation=nil"), text)
    assert.truthy(has(text, "methods: "), text)
    assert.truthy(has(text, "call"), text)
    assert.truthy(has(help.help_text(tide.layers.Dense(3)), "an instance of class Dense"))
  end)

  it("lists a module's members, lazy ones included", function()
    local text = help.help_text(tide, "tide")
    assert.truthy(has(text, "tide: a table of"), text)
    assert.truthy(has(text, "reshape()"), text)
    assert.truthy(has(text, "optimizers"), text)
  end)

  it("shows a tensor and its methods", function()
    local text = help.help_text(tide.tensor{1, 2})
    assert.truthy(has(text, "tide.Tensor([1 2]"), text)
    assert.truthy(has(text, "tensor methods: "), text)
    assert.truthy(has(text, "reshape"), text)
  end)

  it("explains itself with no argument, and names other values' types", function()
    assert.truthy(has(help.help_text(nil), "help(tide.reshape)"))
    assert.are.equal("number: 3", help.help_text(3))
  end)
end)
