-- tests/spec/train/reader_spec.lua — reading checkpoints without their
-- objects: tide.train.load_checkpoint (get_tensor, the shape and dtype maps)
-- and list_variables, from a checkpoint path or a managed folder; errors.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local train = tide.train

describe("tide.train.load_checkpoint and list_variables", function()
  local dir
  before_each(function() dir = tmp.dir("reader") end)
  after_each(function() tmp.remove(dir) end)

  local function saved()
    local w = tide.Variable(tide.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, "float32"))
    local n = tide.Variable(7, { dtype = "int64" })
    local ck = train.Checkpoint { net = { w = w }, n = n }
    return ck, w, n
  end

  it("reads values, shapes and dtypes by key from a checkpoint path", function()
    local ck, w = saved()
    local path = ck:save(dir .. "/ckpt")
    local r = train.load_checkpoint(path)
    assert.are.equal("tide", r.format)
    assert.are.same({ "n", "net/w", "save_counter" }, r:keys())
    h.close(r:get_tensor("net/w"), w:read_value():totable(), 0)
    assert.are.equal(7, r:get_tensor("n"):item())
    assert.are.same({ n = {}, ["net/w"] = { 2, 3 }, save_counter = {} }, r:get_variable_to_shape_map())
    assert.are.same({ n = "int64", ["net/w"] = "float32", save_counter = "int64" }, r:get_variable_to_dtype_map())
    assert.is_true(r:has_tensor("n"))
    assert.is_false(r:has_tensor("nope"))
    h.errors("holds no value named 'nope'", r.get_tensor, r, "nope")
    r:close()
    assert.are.same({ { "n", {} }, { "net/w", { 2, 3 } }, { "save_counter", {} } }, train.list_variables(path))
  end)

  it("reads a folder's latest checkpoint, as TF given a directory", function()
    local ck, w = saved()
    local m = train.CheckpointManager(ck, dir, { max_to_keep = 2 })
    m:save()
    w:assign(tide.fill({ 2, 3 }, 9.5))
    m:save()
    local r = train.load_checkpoint(dir)
    assert.truthy(r.path:find("ckpt%-2%.safetensors$"), r.path)
    h.close(r:get_tensor("net/w"), tide.fill({ 2, 3 }, 9.5):totable(), 0)
    assert.are.equal(3, #train.list_variables(dir))
  end)

  it("names what is missing or wrong", function()
    h.errors("no checkpoint at '" .. dir .. "/none'", train.load_checkpoint, dir .. "/none")
    h.errors("no checkpoint at '" .. dir .. "'", train.list_variables, dir)
    h.errors("expects a checkpoint path or a folder, got number", train.load_checkpoint, 3)
    tide.safetensors.save_file({ a = tide.ones({ 2 }) }, dir .. "/weights.safetensors")
    h.errors("is not a tide checkpoint", train.load_checkpoint, dir .. "/weights")
  end)
end)
