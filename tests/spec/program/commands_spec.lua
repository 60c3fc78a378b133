-- tests/spec/program/commands_spec.lua — `tide export`, `tide run` and `tide
-- summary` as a user runs them: SavedModels of a Keras model, a traced
-- function and a module, inputs and outputs as .npy and safetensors, --help,
-- and the errors (one line on stderr; exit status 2 for the command line or a
-- missing file, 1 for a failure).
local program = require "tide_program"
local tide = require "tide"

local TIDE = program.path
local shell_quote, write_file = program.quote, program.write_file
local tmpdir

local function tmp(name) return tmpdir .. "/" .. name end

-- Run the tide program in tmpdir with these arguments; rc, stdout, stderr.
local function run(args)
  local parts = { "cd " .. shell_quote(tmpdir) .. " &&", shell_quote(TIDE) }
  for _, a in ipairs(args) do parts[#parts + 1] = shell_quote(a) end
  return program.sh(tmpdir, table.concat(parts, " "))
end

local function has(s, needle) return s:find(needle, 1, true) ~= nil end

local function lines(s) return select(2, s:gsub("\n", "")) end

local function ok_run(args)
  local rc, out, err = run(args)
  assert.are.equal(0, rc, table.concat(args, " ") .. "\n" .. err)
  return out
end

-- A failing run: its status and one line on stderr holding `needle`.
local function fails(args, status, needle)
  local rc, out, err = run(args)
  assert.are.equal(status, rc, table.concat(args, " ") .. "\n" .. out .. err)
  assert.are.equal(1, lines(err), err)
  assert.truthy(has(err, needle), err)
  return err
end

setup(function()
  tmpdir = program.make_tmpdir("commands_spec")
  write_file(tmp("mlp.lua"), [[
local tide = require "tide"
tide.random.set_seed(3)
local m = tide.Sequential{ tide.Input{shape = {4}}, tide.layers.Dense(8, {activation = "relu"}),
  tide.layers.Dense(3, {activation = "softmax"}) }
m:compile{optimizer = "adam", loss = "sparse_categorical_crossentropy"}
return m
]])
  write_file(tmp("fn.lua"), [[
local tide = require "tide"
local w = tide.Variable(tide.tensor({{1, 2}, {3, 4}}, "float32"), {name = "w"})
return tide.trace(function(x, y) return {sum = x:matmul(w) + y, twice = x * 2} end,
  {input_signature = {tide.TensorSpec({tide.None, 2}, "float32", "x"), tide.TensorSpec({2}, "float32", "y")}})
]])
  write_file(tmp("module.lua"), [[
local tide = require "tide"
local scale = tide.Variable(tide.tensor({3}, "int32"), {name = "scale"})
local triple = tide.trace(function(n) return n * scale end,
  {input_signature = {tide.TensorSpec({tide.None}, "int32", "n")}})
local negate = tide.trace(function(n) return -n end, {input_signature = {tide.TensorSpec({tide.None}, "int32", "n")}})
return {signatures = {triple = triple, negate = negate}, variables = {scale}}
]])
  write_file(tmp("gather.lua"), [[
local tide = require "tide"
local values = tide.Variable(tide.tensor({10, 20, 30}, "int32"), {name = "values"})
return tide.trace(function(n) return tide.gather(values, n) end,
  {input_signature = {tide.TensorSpec({tide.None}, "int32", "n")}})
]])
  write_file(tmp("five.lua"), "return 5\n")
  write_file(tmp("boom.lua"), "error('boom in the script')\n")
  write_file(tmp("run"), "print('the script named run')\n")
  tide.io.write_npy(tmp("x4.npy"), tide.tensor({ { 1, 2, 3, 4 }, { -1, 0, 1, 0.5 } }, "float32"))
  tide.io.write_npy(tmp("x2.npy"), tide.tensor({ { 1, 0 }, { 0, 1 }, { 1, 1 } }, "float32"))
  tide.io.write_npy(tmp("y.npy"), tide.tensor({ 10, 20 }, "float32"))
  tide.io.write_npy(tmp("x5.npy"), tide.ones({ 2, 5 }, "float32"))
  tide.io.write_npy(tmp("x4_f64.npy"), tide.ones({ 2, 4 }, "float64"))
  tide.io.write_npy(tmp("n.npy"), tide.tensor({ 1, 2, 3 }, "int32"))
  tide.safetensors.save_file({ x = tide.tensor({ { 1, 1 } }, "float32"), y = tide.tensor({ 1, 2 }, "float32") },
    tmp("xy.safetensors"))
  tide.safetensors.save_file({ x = tide.tensor({ { 1, 1 } }, "float32"), z = tide.tensor({ 1, 2 }, "float32") },
    tmp("xz.safetensors"))
  ok_run { "export", "mlp.lua", "mlp_model" }
  ok_run { "export", "fn.lua", "fn_model" }
  ok_run { "export", "module.lua", "module_model" }
  ok_run { "export", "gather.lua", "gather_model" }
end)
teardown(function() program.remove_tmpdir(tmpdir) end)

describe("tide export", function()
  it("saves a Keras model with model:save (load_model rebuilds it) and a traced function", function()
    local m = tide.models.load_model(tmp("mlp_model"))
    assert.are.same({ 2, 3 }, m:predict(tide.io.read_npy(tmp("x4.npy"))).shape)
    local loaded = tide.saved_model.load(tmp("fn_model"))
    local out = loaded.signatures.serving_default(tide.ones({ 1, 2 }), tide.tensor({ 0, 0 }, "float32"))
    assert.are.same({ { 4, 6 } }, out.sum:totable())
  end)

  it("says what the script returned when it is not a model", function()
    fails({ "export", "five.lua", "d" }, 1, "'five.lua' returned a number; it must return a Keras model")
    local rc, _, err = run { "export", "boom.lua", "d" }
    assert.are.equal(1, rc)
    assert.truthy(has(err, "boom in the script"), err)
    assert.truthy(has(err, "stack traceback"), err) -- an error in the user's script keeps its traceback
  end)

  it("refuses a missing script and a wrong command line with status 2", function()
    fails({ "export", "nothere.lua", "d" }, 2, "cannot open 'nothere.lua'")
    fails({ "export", "mlp.lua" }, 2, "expects 2 arguments, got 1")
    fails({ "export", "--fast", "mlp.lua", "d" }, 2, "unrecognized option '--fast'")
  end)
end)

describe("tide run", function()
  it("prints the outputs of serving_default for a .npy input", function()
    local out = ok_run { "run", "mlp_model", "--input", "x4.npy" }
    assert.truthy(out:match("^output_0: tide%.Tensor%("), out)
    assert.truthy(has(out, "shape=(2, 3), dtype=float32)"), out)
  end)

  it("writes the outputs as .npy, equal to the model's predict", function()
    ok_run { "run", "mlp_model", "--input", "x4.npy", "--output", "probs.npy" }
    local got = tide.io.read_npy(tmp("probs.npy"))
    local want = tide.models.load_model(tmp("mlp_model"), { compile = false }):predict(tide.io.read_npy(tmp("x4.npy")))
    assert.are.same(want.shape, got.shape)
    assert.is_true(tide.reduce_max(tide.abs(got - want)):item() < 1e-6)
  end)

  it("runs an ONNX model file by ONNX's names", function()
    local E = dofile("tests/fixtures/onnx/expected.lua")
    tide.io.write_npy(tmp("mlp_x.npy"), tide.tensor(E.mlp.in_x, "float32"))
    os.execute("cp tests/fixtures/onnx/mlp.onnx " .. shell_quote(tmp("m.onnx")))
    local out = ok_run { "run", "m.onnx", "--input", "mlp_x.npy", "--output", "probs.npy" }
    local got = tide.io.read_npy(tmp("probs.npy"))
    assert.are.same({ 3, 4 }, got.shape)
    local want = tide.tensor(E.mlp.out_probs, "float32")
    assert.is_true(tide.reduce_max(tide.abs(got - want)):item() < 1e-6, out)
    fails({ "run", "m.onnx", "--input", "x=mlp_x.npy", "--input", "y=mlp_x.npy" }, 2,
      "signature 'serving_default' has no input named y (its inputs: x)")
    out = ok_run { "summary", "m.onnx" }
    assert.truthy(has(out, "ONNX model m.onnx (opset 14)"), out)
    assert.truthy(has(out, "x: float32 (None, 6)"), out)
  end)

  it("matches safetensors inputs by name and writes every output to safetensors", function()
    ok_run { "run", "fn_model", "--input", "xy.safetensors", "--output", "out.safetensors" }
    local out = tide.safetensors.load_file(tmp("out.safetensors"))
    assert.are.same({ { 5, 8 } }, out.sum:totable())
    assert.are.same({ { 2, 2 } }, out.twice:totable())
  end)

  it("takes NAME=FILE.npy inputs and prints outputs by name", function()
    local out = ok_run { "run", "fn_model", "--input", "x=x2.npy", "--input", "y=y.npy" }
    assert.truthy(has(out, "sum: tide.Tensor("), out)
    assert.truthy(has(out, "twice: tide.Tensor("), out)
    assert.truthy(has(out, "[[11. 22.]\n [13. 24.]\n [14. 26.]]"), out)
  end)

  it("runs the signature --signature names", function()
    local out = ok_run { "run", "module_model", "--signature", "triple", "--input", "n.npy" }
    assert.truthy(has(out, "output_0: tide.Tensor([3 6 9], shape=(3,), dtype=int32)"), out)
    out = ok_run { "run", "module_model", "--signature=negate", "--input", "n.npy" }
    assert.truthy(has(out, "[-1 -2 -3]"), out)
  end)

  it("refuses wrong command lines and missing files with status 2, in one line", function()
    fails({ "run", "mlp_model" }, 2, "--input FILE is required")
    fails({ "run", "mlp_model", "--input" }, 2, "'--input' needs a value")
    fails({ "run", "mlp_model", "--input", "x4.npy", "--bogus" }, 2, "unrecognized option '--bogus'")
    fails({ "run", "nodir", "--input", "x4.npy" }, 2, "cannot open 'nodir'")
    fails({ "run", "x4.npy", "--input", "x4.npy" }, 2, "'x4.npy' is not a folder")
    fails({ "run", "mlp_model", "--input", "missing.npy" }, 2, "cannot open 'missing.npy'")
    fails({ "run", "mlp_model", "--input", "mlp.lua" }, 2, "inputs are .npy or .safetensors files")
    fails({ "run", "mlp_model", "--input", "x4.npy", "--output", "o.txt" }, 2, "written to .npy or .safetensors")
    fails({ "run", "mlp_model", "--input", "x4.npy", "--signature", "nope" }, 2,
      "the model has no signature 'nope' (it has serving_default)")
    fails({ "run", "module_model", "--input", "n.npy" }, 2, "no serving_default; choose one with --signature")
    fails({ "run", "fn_model", "--input", "x2.npy" }, 2, "takes 2 inputs (x, y): give NAME=FILE.npy")
    fails({ "run", "fn_model", "--input", "xz.safetensors" }, 2, "has no input named z (its inputs: x, y)")
    fails({ "run", "fn_model", "--input", "x=x2.npy" }, 2, "input 'y' of signature 'serving_default' is not given")
    fails({ "run", "fn_model", "--input", "xy.safetensors", "--output", "o.npy" }, 2,
      "has 2 outputs (sum, twice): write them to a .safetensors file")
  end)

  it("fails with status 1 on inputs the signature does not take, or a folder that is no SavedModel", function()
    fails({ "run", "mlp_model", "--input", "x5.npy" }, 1,
      "input 'inputs' (from x5.npy) is float32 (2, 5), but signature 'serving_default' takes float32 (None, 4)")
    fails({ "run", "mlp_model", "--input", "x4_f64.npy" }, 1, "is float64 (2, 4), but signature")
    fails({ "run", ".", "--input", "x4.npy" }, 1, "cannot load the SavedModel in '.'")
    -- a kernel that fails while the signature runs (n.npy holds 1, 2, 3; index 3 is out of range):
    -- its message in one line, no file:line of tide's own code and no traceback (docs/repl.md)
    local err = fails({ "run", "gather_model", "--input", "n.npy" }, 1,
      "tide run: gather: indices[2] = 3 is not in [0, 3)")
    assert.falsy(has(err, ".lua:"), err)
    assert.falsy(has(err, "traceback"), err)
  end)
end)

describe("tide summary", function()
  it("prints signatures with their specs, variables and a Keras model's layers", function()
    local out = ok_run { "summary", "mlp_model" }
    assert.truthy(has(out, "serving_default\n    inputs:\n      inputs: float32 (None, 4)\n    outputs:\n" ..
      "      output_0: float32 (None, 3)\n"), out)
    assert.truthy(has(out, "model/1/dense/kernel: float32 (4, 8)\n"), out)
    assert.truthy(has(out, "Total: 203 values, 67 trainable"), out)
    assert.truthy(has(out, 'Model: "sequential"'), out)
    assert.truthy(has(out, "dense_1 (Dense)"), out)
  end)

  it("prints every signature of a module, and no layers where there is no Keras model", function()
    local out = ok_run { "summary", "module_model" }
    assert.truthy(has(out, "  negate\n    inputs:\n      n: int32 (None,)\n    outputs:\n      output_0: int32 (None,)"), out)
    assert.truthy(has(out, "  triple\n"), out)
    assert.truthy(has(out, "scale: int32 (1,)"), out)
    assert.falsy(has(out, "Model:"), out)
  end)

  it("refuses a wrong command line and a missing folder with status 2", function()
    fails({ "summary" }, 2, "expects 1 argument, got 0")
    fails({ "summary", "a", "b" }, 2, "expects 1 argument, got 2")
    fails({ "summary", "nodir" }, 2, "cannot open 'nodir'")
  end)
end)

describe("the commands' help", function()
  it("--help for each command prints its usage on stdout with status 0", function()
    for _, cmd in ipairs { "export", "run", "summary" } do
      local rc, out, err = run { cmd, "--help" }
      assert.are.equal(0, rc, err)
      assert.truthy(out:match("^usage: tide " .. cmd), out)
      assert.are.equal("", err)
    end
  end)

  it("tide --help lists the commands; a script named like one runs after --", function()
    local out = ok_run { "--help" }
    for _, cmd in ipairs { "export script.lua dir", "run dir --input file", "summary dir" } do
      assert.truthy(has(out, cmd), out)
    end
    assert.are.equal("the script named run\n", ok_run { "--", "run" })
    assert.are.equal("the script named run\n", ok_run { "./run" })
  end)
end)
