-- tests/sh/checkpoint_kill.lua — the two halves of tests/sh/test_checkpoint_kill.sh:
--   build/tide tests/sh/checkpoint_kill.lua child DIR   saves a large checkpoint in a loop, forever
--   build/tide tests/sh/checkpoint_kill.lua once DIR    the same, one save (it clears what a killed save left)
--   build/tide tests/sh/checkpoint_kill.lua check DIR   the latest checkpoint (and every listed one)
--                                                       loads, completely, with consistent values
local tide = require "tide"

local mode, dir = arg[1], arg[2]
local N = 1024 * 1024 -- floats per tensor: 4 tensors, 16 MiB

local function objects()
  local step = tide.Variable(0, { dtype = "int64" })
  local ws = {}
  for i = 1, 4 do ws[i] = tide.Variable(tide.zeros { N }) end
  return tide.train.Checkpoint { step = step, weights = ws }, step, ws
end

if mode == "child" or mode == "once" then
  local ckpt, step, ws = objects()
  local manager = tide.train.CheckpointManager(ckpt, dir, { max_to_keep = 2 })
  manager:restore_or_initialize()
  repeat
    step:assign_add(1)
    local s = step:item()
    for i, w in ipairs(ws) do w:assign(tide.fill({ N }, s * 10 + i, { dtype = "float32" })) end
    manager:save()
  until mode == "once"
elseif mode == "check" then
  local latest = tide.train.latest_checkpoint(dir)
  if latest == nil then
    print("none")
    os.exit(0)
  end
  local index = io.open(dir .. "/checkpoint"):read("*a")
  for name in index:gmatch('all_model_checkpoint_paths: "([^"]+)"') do
    local ckpt, step, ws = objects()
    ckpt:restore(dir .. "/" .. name):assert_consumed()
    local s = step:item()
    for i, w in ipairs(ws) do
      local v = w:read_value()
      local lo, hi = tide.reduce_min(v):item(), tide.reduce_max(v):item()
      if lo ~= s * 10 + i or hi ~= lo then
        io.stderr:write(string.format("%s: weights %d hold [%g, %g], step %d wants %d\n", name, i, lo, hi, s,
          s * 10 + i))
        os.exit(1)
      end
    end
  end
  local ckpt, step = objects()
  ckpt:restore(latest):assert_consumed()
  print(step:item())
  os.exit(0)
end
