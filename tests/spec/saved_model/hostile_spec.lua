-- Corrupt, truncated and hostile SavedModels: each is a clear error naming
-- the file and what is wrong, never a crash; nothing in a file runs.
local tide = require "tide"
local prog = require "tide_program"
local sm = require "tide.saved_model"

describe("loading a broken SavedModel", function()
  local dir, json, path
  before_each(function()
    dir = prog.make_tmpdir("smbad")
    local v = tide.Variable(tide.tensor({1, 2}, "float32"), {name = "v"})
    local f = tide.trace(function(x)
      local y = tide.cond(tide.reduce_sum(x):gt(0), function() return x * v end, function() return x end)
      return tide.exp(y) + 1
    end, {input_signature = {tide.TensorSpec({2}, "float32", "x")}})
    sm.save(f, dir .. "/m")
    path = dir .. "/m/saved_model.json"
    json = prog.read_file(path)
  end)
  after_each(function() prog.remove_tmpdir(dir) end)

  -- Write the graph file with `from` replaced by `to` (once), and expect
  -- load to fail with a message containing each of `wants`.
  local function broken(from, to, ...)
    local s, n = json:gsub(from, to, 1)
    assert.are.equal(1, n, "pattern not found: " .. from)
    prog.write_file(path, s)
    local ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    err = tostring(err)
    for _, want in ipairs { ... } do assert.is_truthy(err:find(want, 1, true), err) end
    return err
  end

  it("the file loads as saved (the baseline)", function()
    assert.is_truthy(sm.load(dir .. "/m").signatures.serving_default)
  end)

  it("bad JSON", function() broken('"functions"', '"functions" ,,', path, "not valid JSON") end)
  it("truncated JSON", function()
    prog.write_file(path, json:sub(1, math.floor(#json / 2)))
    local ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("not valid JSON", 1, true))
  end)
  it("not a tide SavedModel", function() broken('"tide.saved_model"', '"other"', path, "not a tide SavedModel") end)
  it("a newer format version", function()
    broken('"version":%s*1', '"version": 7', path, "format version 7 is newer than this build of tide reads (1)")
  end)
  it("an unknown op", function() broken('"op":%s*"exp"', '"op": "os_execute"', path, "unknown op 'os_execute'") end)
  it("an unknown node kind", function() broken('"kind":%s*"const"', '"kind": "lua"', path, "unknown kind 'lua'") end)
  it("wrong arity", function()
    broken('"op":%s*"exp",%s*"in":%s*%[%[(%d+), 0%]%]', '"op": "exp", "in": [[%1, 0], [%1, 0]]', path,
      "op 'exp' takes 1 input, got 2")
  end)
  it("a reference out of range", function()
    broken('"outputs":%s*%[%[(%d+), 0%]%]%s*}%s*}%s*%]', '"outputs": [[999, 0]]}}]', path, "output 0 names node 999")
  end)
  it("an output index past a node's outputs", function()
    broken('"outputs":%s*%[%[(%d+), 0%]%]%s*}%s*}%s*%]', '"outputs": [[%1, 5]]}}]', path, "names output 5 of node")
  end)
  it("a cycle (a node reading itself or a later node)", function()
    broken('"op":%s*"exp",%s*"in":%s*%[%[(%d+), 0%]%]', '"op": "exp", "in": [[1000, 0]]', path,
      "which is not an earlier node", "no cycles")
  end)
  it("an absurd input shape", function()
    broken('"float32",%s*"shape":%s*%[2%]%s*}%s*%],%s*"nodes"', '"float32", "shape": [1e300]}], "nodes"', path,
      "input 0: dim 0 is not null or a size")
  end)
  it("too many dims", function()
    broken('"float32",%s*"shape":%s*%[2%]%s*}%s*%],%s*"nodes"', '"float32", "shape": [1,1,1,1,1,1,1,1,1]}], "nodes"',
      path, "has 9 dims")
  end)
  it("a variable index out of range", function() broken('"var":%s*0', '"var": 3', path, "names none of the model's") end)
  it("a constant naming no tensor", function()
    broken('"tensor":%s*"c%d+"', '"tensor": "nope"', path, "constant names no tensor")
  end)
  it("a bad attribute", function()
    broken('"op":%s*"exp",', '"op": "exp", "attrs": {"perm": 3},', path, "unknown attribute 'perm'")
  end)
  it("a capture naming a later node of the enclosing graph", function()
    broken('"kind":%s*"capture",%s*"of":%s*%[%d+', '"kind": "capture", "of": [90', path, "'of' names node 90")
  end)
  it("an op whose inputs the registry refuses: an error when the graph is built", function()
    local s = json:gsub('"op":%s*"exp"', '"op": "logical_not"', 1)
    prog.write_file(path, s)
    local m = sm.load(dir .. "/m") -- the file is well formed; the registry's inference refuses it
    local x = tide.tensor({1, 2}, "float32")
    local ok, err = pcall(m.signatures.serving_default, x)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("logical_not", 1, true), tostring(err))
    ok, err = pcall(m.c_function, m, "serving_default")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("logical_not", 1, true), tostring(err))
    assert.is_truthy(tostring(err):find("graph 'f', node", 1, true), tostring(err))
  end)

  it("a missing or truncated tensor file", function()
    local vpath = dir .. "/m/variables.safetensors"
    local bytes = prog.read_file(vpath)
    prog.write_file(vpath, bytes:sub(1, 5))
    local ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("the header length alone takes 8", 1, true), tostring(err))
    prog.write_file(vpath, bytes:sub(1, #bytes - 4))
    ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("pass the end of the data", 1, true), tostring(err))
    prog.write_file(vpath, "\255\255\255\255\255\255\255\127" .. bytes:sub(9))
    ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("passes the end of the file", 1, true), tostring(err))
    os.remove(vpath)
    ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find(vpath, 1, true), tostring(err))
  end)

  it("a tensor file with an absurd shape or an unknown dtype", function()
    local vpath = dir .. "/m/variables.safetensors"
    local bytes = prog.read_file(vpath)
    local s = bytes:gsub('"shape":%[2%]', '"shape":[9]', 1)
    prog.write_file(vpath, s)
    local ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("has shape [9] and dtype F32 (36 bytes)", 1, true), tostring(err))
    s = bytes:gsub('"F32"', '"F99"', 1)
    prog.write_file(vpath, s)
    ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("unknown dtype 'F99'", 1, true), tostring(err))
  end)

  it("deeply nested subgraphs", function()
    local deep = string.rep('{"name":"g","inputs":[],"nodes":[{"kind":"cond","in":[],"n_out":0,"then":', 40)
    prog.write_file(path, '{"format":"tide.saved_model","version":1,"variables":[],"functions":[{"name":"f",' ..
      '"inputs":[],"outputs":[],"graph":' .. deep .. "{}")
    local ok, err = pcall(sm.load, dir .. "/m")
    assert.is_false(ok)
  end)
end)
