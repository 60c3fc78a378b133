-- examples/dqn/cartpole.lua — CartPole-v1 in plain Lua, with Gymnasium's exact
-- physics, rewards and episode ends, and the seeded generator its resets draw from.
-- Gym's constants and Euler step (gymnasium/envs/classic_control/cartpole.py):
-- the state is float64 (Lua numbers), the observation the policy sees is the
-- same four numbers (the network casts them to float32, as Gym's observation is).
-- tests/spec/examples/cartpole_spec.lua replays Gymnasium's own trajectories.
-- examples/embed/cartpole_game.c repeats this file in C, generator included,
-- so that one seed starts the same episodes in both.
local M = {}

M.GRAVITY = 9.8
M.MASSCART = 1.0
M.MASSPOLE = 0.1
M.TOTAL_MASS = M.MASSPOLE + M.MASSCART
M.LENGTH = 0.5 -- half the pole's length
M.POLEMASS_LENGTH = M.MASSPOLE * M.LENGTH
M.FORCE_MAG = 10.0
M.TAU = 0.02 -- seconds between state updates
M.THETA_THRESHOLD = 12 * 2 * math.pi / 360
M.X_THRESHOLD = 2.4
M.MAX_STEPS = 500 -- CartPole-v1's TimeLimit
M.N_ACTIONS = 2
M.N_OBS = 4

-- A Lehmer generator (Park and Miller's MINSTD, multiplier 48271): exact in
-- doubles, so Lua and C draw the same numbers from one seed. Its own object,
-- so the environment's stream does not depend on what else draws numbers.
local Rng = {}
Rng.__index = Rng
local MODULUS = 2147483647

-- seed: any integer; 0 and multiples of the modulus are moved off the fixed point.
function M.Rng(seed)
  if type(seed) ~= "number" or seed ~= math.floor(seed) then
    error("cartpole.Rng: seed must be an integer, got " .. tostring(seed), 2)
  end
  local s = seed % MODULUS
  if s == 0 then s = 1 end
  return setmetatable({ state = s }, Rng)
end

-- A number in (0, 1).
function Rng:next()
  self.state = (self.state * 48271) % MODULUS
  return self.state / MODULUS
end

-- A number in (lo, hi).
function Rng:uniform(lo, hi) return lo + (hi - lo) * self:next() end

-- An integer in [0, n).
function Rng:int(n) return math.min(n - 1, math.floor(self:next() * n)) end

local Env = {}
Env.__index = Env

-- cartpole.Env(seed): an environment whose resets draw from Rng(seed).
function M.Env(seed)
  local env = setmetatable({ rng = M.Rng(seed or 0), state = nil, steps = 0, done = true }, Env)
  return env
end

-- Start an episode: each of the four state numbers uniform in (-0.05, 0.05).
-- Returns the observation {x, x_dot, theta, theta_dot} (a fresh table).
function Env:reset()
  local r = self.rng
  self.state = { r:uniform(-0.05, 0.05), r:uniform(-0.05, 0.05), r:uniform(-0.05, 0.05), r:uniform(-0.05, 0.05) }
  self.steps, self.done = 0, false
  return { self.state[1], self.state[2], self.state[3], self.state[4] }
end

-- Set the state directly (tests replay Gym's trajectories from their start).
function Env:set_state(s)
  self.state = { s[1], s[2], s[3], s[4] }
  self.steps, self.done = 0, false
end

-- One step of 0.02 s pushing left (0) or right (1). Returns the observation,
-- the reward (1 for every step, the last one included, as Gym's), whether the
-- pole fell or the cart left the track (terminated) and whether the 500-step
-- limit ended the episode (truncated).
function Env:step(action)
  if action ~= 0 and action ~= 1 then
    error("cartpole: action must be 0 (push left) or 1 (push right), got " .. tostring(action), 2)
  end
  if self.done then error("cartpole: step after the episode ended; call reset first", 2) end
  local s = self.state
  local x, x_dot, theta, theta_dot = s[1], s[2], s[3], s[4]
  local force = action == 1 and M.FORCE_MAG or -M.FORCE_MAG
  local costheta, sintheta = math.cos(theta), math.sin(theta)
  local temp = (force + M.POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / M.TOTAL_MASS
  local thetaacc = (M.GRAVITY * sintheta - costheta * temp) /
      (M.LENGTH * (4.0 / 3.0 - M.MASSPOLE * (costheta * costheta) / M.TOTAL_MASS))
  local xacc = temp - M.POLEMASS_LENGTH * thetaacc * costheta / M.TOTAL_MASS
  -- Euler, in Gym's order: each position moves with the old velocity.
  x = x + M.TAU * x_dot
  x_dot = x_dot + M.TAU * xacc
  theta = theta + M.TAU * theta_dot
  theta_dot = theta_dot + M.TAU * thetaacc
  s[1], s[2], s[3], s[4] = x, x_dot, theta, theta_dot
  self.steps = self.steps + 1
  local terminated = x < -M.X_THRESHOLD or x > M.X_THRESHOLD or theta < -M.THETA_THRESHOLD or
      theta > M.THETA_THRESHOLD
  local truncated = self.steps >= M.MAX_STEPS -- Gym's TimeLimit: both flags may be set
  self.done = terminated or truncated
  return { x, x_dot, theta, theta_dot }, 1.0, terminated, truncated
end

return M
