-- tests/sh/saved_model_fsync.lua — for tests/sh/test_saved_model_fsync.sh, two roles:
--   tide saved_model_fsync.lua save DIR        saves a traced function and a Keras model as SavedModels into
--                                              DIR/fn and DIR/keras, each twice (new, then replacing the first)
--   tide saved_model_fsync.lua check TRACE     reads strace's output of that run and says, for every model
--                                              moved into place, whether each of its files and its folder were
--                                              fsynced before the move and the parent folder after it
local mode = arg[1]

if mode == "save" then
  local tide = require "tide"
  local dir = arg[2]
  local w = tide.Variable(tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32"), { name = "w" })
  local f = tide.trace(function(x) return tide.matmul(x, w) + tide.tensor({ 5, 6 }, "float32") end,
    { input_signature = { tide.TensorSpec({ tide.None, 2 }, "float32", "x") } })
  local m = tide.Sequential { tide.Input { shape = { 3 } }, tide.layers.Dense(2) }
  for _ = 1, 2 do
    tide.saved_model.save(f, dir .. "/fn")
    m:save(dir .. "/keras")
  end
  print("saved")
  return
end

assert(mode == "check", "usage: saved_model_fsync.lua save DIR | check TRACE")
local FILES = { "saved_model.json", "variables.safetensors", "constants.safetensors" }

-- strace -f lines: "PID call(args) = result"
local events = {}
for line in io.lines(arg[2]) do
  local call, args, ret = line:match("^%d+%s+([%w_]+)%((.*)%)%s+=%s+(%-?%d+)")
  if call then events[#events + 1] = { call = call, args = args, ret = tonumber(ret) } end
end

local fd_path = {}        -- an open descriptor's path
local synced = {}         -- path -> true: its bytes were fsynced (a rename carries it)
local dir_synced_at = {}  -- folder -> index of its last fsync
local changed_at = {}     -- folder -> index of the last entry made or renamed in it
local function folder(p) return p:match("^(.*)/[^/]*$") end
local function strings(args)
  local out = {}
  for s in args:gmatch('"([^"]*)"') do out[#out + 1] = s end
  return out
end

local moves, problems = 0, {}
for i, e in ipairs(events) do
  if e.call == "openat" and e.ret >= 0 then
    local p = strings(e.args)[1]
    fd_path[e.ret] = p
    if e.args:find("O_CREAT", 1, true) then changed_at[folder(p)] = i end
  elseif (e.call == "fsync" or e.call == "fdatasync") and e.ret == 0 then
    local p = fd_path[tonumber(e.args:match("^(%d+)"))]
    if p then synced[p] = true; dir_synced_at[p] = i end
  elseif e.call == "close" then
    fd_path[tonumber(e.args:match("^(%d+)"))] = nil
  elseif (e.call == "rename" or e.call == "renameat2") and e.ret == 0 then
    local s = strings(e.args)
    local from, to = s[1], s[2]
    if from:match("%.tmp%-%d+%-%d+$") and not folder(from):match("%.tmp%-%d+%-%d+$") then
      -- a whole model moved into place: its files and folder must be durable first
      moves = moves + 1
      for _, f in ipairs(FILES) do
        if not synced[from .. "/" .. f] then
          problems[#problems + 1] = string.format("%s: %s was not fsynced before the folder was moved into place", to, f)
        end
      end
      if not dir_synced_at[from] or dir_synced_at[from] < (changed_at[from] or 0) then
        problems[#problems + 1] = string.format("%s: its folder was not fsynced after its last file was made", to)
      end
      local parent = folder(to)
      local later = false
      for j = i + 1, #events do
        local x = events[j]
        if x.call == "openat" and x.ret >= 0 and strings(x.args)[1] == parent then
          for k = j + 1, #events do
            local y = events[k]
            if (y.call == "fsync" or y.call == "fdatasync") and tonumber(y.args:match("^(%d+)")) == x.ret then
              later = y.ret == 0
              break
            end
            if y.call == "close" and tonumber(y.args:match("^(%d+)")) == x.ret then break end
          end
          if later then break end
        end
      end
      if not later then
        problems[#problems + 1] = string.format("%s: the parent folder was not fsynced after the move", to)
      end
    else
      synced[to], synced[from] = synced[from], nil
      changed_at[folder(to)] = i
    end
  end
end
print(string.format("models moved into place: %d", moves))
for _, p in ipairs(problems) do print("PROBLEM " .. p) end
