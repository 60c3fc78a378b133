-- tests/spec/train/manager_interval_spec.lua — CheckpointManager's
-- checkpoint_interval and step_counter, and save's check_interval (TF's rules).
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local train = tide.train

describe("CheckpointManager checkpoint_interval", function()
  local dir
  before_each(function() dir = tmp.dir("manager") end)
  after_each(function() tmp.remove(dir) end)

  it("saves only when the step counter moved checkpoint_interval steps since the last save", function()
    local step = tide.Variable(0, { dtype = "int64" })
    local ck = train.Checkpoint { step = step }
    local m = train.CheckpointManager(ck, dir, { max_to_keep = false, step_counter = step, checkpoint_interval = 3 })
    assert.are.equal(3, m.checkpoint_interval)
    local written = {}
    for s = 0, 9 do
      step:assign(s)
      local p = m:save()
      if p then written[#written + 1] = s end
    end
    assert.are.same({ 0, 3, 6, 9 }, written)
    assert.are.equal(4, #m.checkpoints)
    step:assign(10)
    assert.is_nil(m:save())
    -- check_interval=false saves anyway, but never twice at one step
    assert.truthy(m:save { check_interval = false })
    assert.is_nil(m:save { check_interval = false })
    assert.are.equal(5, #m.checkpoints)
  end)

  it("refuses an interval without a step counter, and bad values", function()
    local ck = train.Checkpoint { v = tide.Variable(1.5) }
    h.errors("checkpoint_interval needs step_counter", train.CheckpointManager, ck, dir, { checkpoint_interval = 2 })
    h.errors("checkpoint_interval must be a non-negative integer, got -1", train.CheckpointManager, ck, dir,
      { checkpoint_interval = -1, step_counter = tide.Variable(0, { dtype = "int64" }) })
    h.errors("step_counter must be a Variable", train.CheckpointManager, ck, dir, { step_counter = "x" })
    local m = train.CheckpointManager(ck, dir)
    h.errors("check_interval must be a boolean", m.save, m, { check_interval = 1 })
    h.errors("unknown option 'foo'", m.save, m, { foo = 1 })
    -- no interval: every save writes
    assert.truthy(m:save())
    assert.truthy(m:save())
  end)
end)
