-- tests/spec/train/stale_temporaries_spec.lua — what a save killed mid-write
-- leaves (.<name>.tmp-<pid>-<n>-<hex>) is removed by the next save of the same
-- names, and nothing else is: other names, live or own processes, odd tails.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local exists = require("tide.file").exists
local binding = require "tide.binding"
local train = tide.train

local function touch(path)
  local f = assert(io.open(path, "wb"))
  f:write("partial")
  f:close()
end

-- A process id that just ended (its process is gone).
local function dead_pid()
  local p = io.popen("sh -c 'echo $$'")
  local pid = tonumber(p:read("*l"))
  p:close()
  return pid
end

local function own_pid()
  local f = io.open("/proc/self/stat")
  local pid = tonumber(f:read("*a"):match("^(%d+)"))
  f:close()
  return pid
end

describe("stale temporary files of killed saves", function()
  local dir
  before_each(function() dir = tmp.dir("stale") end)
  after_each(function() tmp.remove(dir) end)

  it("the manager's next save removes its own dead ones and keeps everything else", function()
    local dead, me = dead_pid(), own_pid()
    local doomed = {
      ("%s/.ckpt-3.safetensors.tmp-%d-7-1a2b"):format(dir, dead),
      ("%s/.checkpoint.tmp-%d-8-ff"):format(dir, dead),
    }
    local kept = {
      ("%s/.ckpt-3.safetensors.tmp-%d-7-1a2b"):format(dir, me),        -- this process: maybe writing it now
      ("%s/.ckpt-4.safetensors.tmp-1-7-1a2b"):format(dir),            -- a live process (init)
      ("%s/.other-3.safetensors.tmp-%d-7-1a2b"):format(dir, dead),    -- another prefix
      ("%s/.ckpt-3.safetensors.tmp-%d-7-xyz"):format(dir, dead),      -- not tide's tail
      ("%s/.ckpt-3.safetensors.tmp-%d-7"):format(dir, dead),
      ("%s/ckpt-3.safetensors.tmp-%d-7-1a"):format(dir, dead),        -- not hidden
      ("%s/.checkpoint2.tmp-%d-8-ff"):format(dir, dead),              -- not exactly the index
    }
    for _, p in ipairs(doomed) do touch(p) end
    for _, p in ipairs(kept) do touch(p) end
    local folder = ("%s/.ckpt-5.safetensors.tmp-%d-1-1"):format(dir, dead) -- a folder is never removed
    os.execute("mkdir -p " .. folder)
    local ck = train.Checkpoint { v = tide.Variable(1.5) }
    local m = train.CheckpointManager(ck, dir)
    m:save()
    for _, p in ipairs(doomed) do assert.is_false(exists(p), p) end
    for _, p in ipairs(kept) do assert.is_true(exists(p), p) end
    assert.is_true(exists(folder))
  end)

  it("Checkpoint:save removes its prefix's, write its file's", function()
    local dead = dead_pid()
    local a = ("%s/.run-1.safetensors.tmp-%d-1-a"):format(dir, dead)
    local b = ("%s/.final.safetensors.tmp-%d-1-b"):format(dir, dead)
    local c = ("%s/.finally.safetensors.tmp-%d-1-c"):format(dir, dead)
    touch(a); touch(b); touch(c)
    local ck = train.Checkpoint { v = tide.Variable(1.5) }
    ck:save(dir .. "/run")
    assert.is_false(exists(a))
    assert.is_true(exists(b))
    ck:write(dir .. "/final")
    assert.is_false(exists(b))
    assert.is_true(exists(c))
  end)

  it("the C call checks its arguments; a missing folder is no error", function()
    local C = binding.C
    assert.are.equal(0, C.tide_remove_stale_temporaries(dir .. "/none", "ckpt-", ".safetensors", nil))
    assert.are_not.equal(0, C.tide_remove_stale_temporaries(dir, "", nil, nil))
    h.errors("a folder and a name prefix are needed", function() binding.raise() end)
  end)
end)
