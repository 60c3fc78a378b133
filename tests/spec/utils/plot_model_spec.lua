-- tests/spec/utils/plot_model_spec.lua — model_to_dot byte for byte against Keras 3 + pydot's text
-- (tests/fixtures/keras_utils/gen_dot.py), plot_model's .dot file, its rendering through `dot`, and its errors.
local tide = require "tide"
local json = require "tide.json"
local visualization = require "tide.models.visualization"
local U = tide.utils

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function err(pattern, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error matching " .. pattern)
  assert.matches(pattern, tostring(e), 1, true)
end

local K = json.decode(read("tests/fixtures/keras_utils/model_dot.json"), "model_dot.json")
-- Keras names nodes by Python's id(); the generator wrote "@<layer name>", tide names them "<layer name>"
local function keras(k) return (K[k]:gsub('"@', '"')) end

local function models()
  local seq = tide.Sequential { tide.Input { shape = { 4 }, name = "x" },
    tide.layers.Dense { 8, activation = "relu", name = "hidden" }, tide.layers.Dropout { 0.1, name = "drop" },
    tide.layers.Dense { 2, name = "out" }, name = "seq" }
  local a = tide.Input { shape = { 3 }, name = "a" }
  local b = tide.Input { shape = { 3 }, name = "b" }
  local s = tide.layers.Add { name = "sum" }({ a, b })
  local h = tide.layers.Dense { 5, activation = "tanh", name = "h" }(s)
  local c = tide.layers.Concatenate { name = "cat" }({ h, a })
  local o = tide.layers.Dense { 1, name = "o", trainable = false }(c)
  return seq, tide.Model { { a, b }, o, name = "fun" }
end

describe("model_to_dot", function()
  local seq, fun = models()
  it("writes Keras's graph of a Sequential", function()
    assert.are.equal(keras("seq_default"), U.model_to_dot(seq):to_string())
    assert.are.equal(keras("seq_all"), U.model_to_dot(seq, { show_shapes = true, show_dtype = true,
      show_layer_activations = true, show_trainable = true, rankdir = "LR", dpi = 96 }):to_string())
  end)
  it("writes Keras's graph of a functional model: Inputs, every call's edges, shapes, trainable", function()
    assert.are.equal(keras("fun_default"), U.model_to_dot(fun):to_string())
    assert.are.equal(keras("fun_shapes"), U.model_to_dot(fun, { show_shapes = true, show_layer_names = false,
      show_trainable = true }):to_string())
    assert.are.equal(6, #U.model_to_dot(fun).edges)
  end)
  it("names what is wrong", function()
    local unbuilt = tide.Sequential { tide.layers.Dense { 2 } }
    err("model_to_dot: this model has not yet been built", U.model_to_dot, unbuilt)
    err("model_to_dot: expects a model, got string", U.model_to_dot, "m")
    err("model_to_dot: rankdir must be", U.model_to_dot, seq, { rankdir = "UP" })
    err("model_to_dot: show_shapes must be a boolean", U.model_to_dot, seq, { show_shapes = 1 })
    err("model_to_dot: dpi must be a positive number", U.model_to_dot, seq, { dpi = 0 })
    err("model_to_dot: expand_nested is not supported yet", U.model_to_dot, seq, { expand_nested = true })
    err("model_to_dot: unknown option 'to_file'", U.model_to_dot, seq, { to_file = "a.png" })
    err("model_to_dot: unknown option 'layer_range'", U.model_to_dot, seq, { layer_range = { 1, 2 } })
  end)
end)

describe("plot_model", function()
  local seq = models()
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "'"))
  end)
  after_each(function()
    os.execute("rm -rf '" .. dir .. "'")
    visualization.dot_program = "dot"
  end)

  it("writes a .dot file as asked, with Keras's plot_model defaults (no layer names)", function()
    U.plot_model(seq, { to_file = dir .. "/m.dot" })
    local text = read(dir .. "/m.dot")
    assert.are.equal(U.model_to_dot(seq, { show_layer_names = false }):to_string(), text)
    assert.is_nil(text:find("(Dense)", 1, true))
  end)

  it("writes the .dot file, then renders the image with Graphviz's dot program", function()
    local fake = dir .. "/fake-dot"
    local f = assert(io.open(fake, "w"))
    f:write('#!/bin/sh\n# fake-dot -Tpng in.dot -o out: the format and both paths, as dot takes them\n' ..
      'printf "%s\\n" "$1" > "$4"; cat "$2" >> "$4"\n')
    f:close()
    os.execute("chmod +x '" .. fake .. "'")
    visualization.dot_program = fake
    U.plot_model(seq, { to_file = dir .. "/m.png", show_shapes = true })
    local dot_text = read(dir .. "/m.dot")
    assert.are.equal("-Tpng\n" .. dot_text, read(dir .. "/m.png"))
    U.plot_model(seq, { to_file = dir .. "/n" }) -- no suffix: png, as Keras
    assert.truthy(read(dir .. "/n"):find("^%-Tpng\n"))
  end)

  it("says so when Graphviz's dot is missing, after writing the .dot file", function()
    visualization.dot_program = "tide-no-such-dot-program"
    err("wrote the graph to '" .. dir .. "/m.dot', but rendering '" .. dir .. "/m.png' needs Graphviz's " ..
      "`tide-no-such-dot-program` program, which is not installed", U.plot_model, seq, { to_file = dir .. "/m.png" })
    assert.truthy(read(dir .. "/m.dot"):find("digraph G {", 1, true))
  end)

  it("names what is wrong", function()
    err("plot_model: to_file must be a file name", U.plot_model, seq, { to_file = 5 })
    err("plot_model: this model has not yet been built", U.plot_model, tide.Sequential { tide.layers.Dense { 1 } })
    err("plot_model: cannot write", U.plot_model, seq, { to_file = dir .. "/no/such/dir/m.dot" })
  end)
end)
