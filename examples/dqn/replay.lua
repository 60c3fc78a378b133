-- examples/dqn/replay.lua — the replay memory: a ring buffer of transitions in
-- flat float arrays, and uniform batches drawn from it as tide tensors.
-- Plain C arrays (LuaJIT's FFI) rather than one tensor per transition: storing
-- a step is five stores, and a batch becomes five tensors with one copy each.
local ffi = require "ffi"
local tide = require "tide"

local M = {}
local Memory = {}
Memory.__index = Memory

-- replay.Memory{capacity, batch_size, n_obs = 4}
function M.Memory(o)
  local cap, batch, n_obs = o.capacity or o[1], o.batch_size or o[2], o.n_obs or 4
  for name, v in pairs { capacity = cap, batch_size = batch, n_obs = n_obs } do
    if type(v) ~= "number" or v < 1 or v ~= math.floor(v) then
      error(string.format("replay.Memory: %s must be a whole number >= 1, got %s", name, tostring(v)), 2)
    end
  end
  return setmetatable({
    capacity = cap, batch_size = batch, n_obs = n_obs, size = 0, next = 0,
    obs = ffi.new("float[?]", cap * n_obs), next_obs = ffi.new("float[?]", cap * n_obs),
    action = ffi.new("int32_t[?]", cap), reward = ffi.new("float[?]", cap), done = ffi.new("float[?]", cap),
    -- one batch, filled by sample and copied into tensors
    b_obs = ffi.new("float[?]", batch * n_obs), b_next_obs = ffi.new("float[?]", batch * n_obs),
    b_action = ffi.new("int32_t[?]", batch), b_reward = ffi.new("float[?]", batch), b_done = ffi.new("float[?]", batch),
  }, Memory)
end

-- Store one transition (the oldest is overwritten once the memory is full).
-- done: the episode *terminated* here (the pole fell), so the target does not
-- look past it; a time-limit cut is not done (the state had a future).
function Memory:add(obs, action, reward, next_obs, done)
  local i, n = self.next, self.n_obs
  for k = 0, n - 1 do
    self.obs[i * n + k] = obs[k + 1]
    self.next_obs[i * n + k] = next_obs[k + 1]
  end
  self.action[i], self.reward[i], self.done[i] = action, reward, done and 1 or 0
  self.next = (i + 1) % self.capacity
  self.size = math.min(self.size + 1, self.capacity)
end

-- A batch drawn uniformly (with replacement) with rng:int; returns the tensors
-- obs [B, n] float32, action [B] int32, reward [B], next_obs [B, n], done [B].
function Memory:sample(rng)
  if self.size == 0 then error("replay.Memory: sample from an empty memory", 2) end
  local B, n = self.batch_size, self.n_obs
  for b = 0, B - 1 do
    local i = rng:int(self.size)
    for k = 0, n - 1 do
      self.b_obs[b * n + k] = self.obs[i * n + k]
      self.b_next_obs[b * n + k] = self.next_obs[i * n + k]
    end
    self.b_action[b], self.b_reward[b], self.b_done[b] = self.action[i], self.reward[i], self.done[i]
  end
  return tide.from_buffer(self.b_obs, { B, n }), tide.from_buffer(self.b_action, { B }, "int32"),
      tide.from_buffer(self.b_reward, { B }), tide.from_buffer(self.b_next_obs, { B, n }),
      tide.from_buffer(self.b_done, { B })
end

return M
