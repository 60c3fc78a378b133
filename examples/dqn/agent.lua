-- examples/dqn/agent.lua — a double DQN agent: the Q-network (Dense 24-24-actions),
-- its target copy synced with get_weights/set_weights, epsilon-greedy acting and one traced training step.
-- Shapes: B = batch, N = observation size (4), A = actions (2).
local tide = require "tide"

local M = {}
local Agent = {}
Agent.__index = Agent

-- The Q-network: observations [B, N] -> one Q-value per action [B, A].
function M.q_network(n_obs, n_actions)
  local L = tide.layers
  return tide.Sequential {
    tide.Input { shape = { n_obs } },
    L.Dense { 24, activation = "relu" },
    L.Dense { 24, activation = "relu" },
    L.Dense { n_actions },
  }
end

-- dqn.Agent{n_obs, n_actions, gamma, learning_rate, epsilon = {start, stop, steps}, double = true}
function M.Agent(o)
  local self = setmetatable({
    n_obs = o.n_obs, n_actions = o.n_actions, gamma = o.gamma or 0.99,
    eps_start = o.epsilon[1], eps_stop = o.epsilon[2], eps_steps = o.epsilon[3],
    double = o.double ~= false, steps = 0,
  }, Agent)
  self.online = M.q_network(o.n_obs, o.n_actions)
  self.target = M.q_network(o.n_obs, o.n_actions)
  self:sync_target()
  self.optimizer = tide.optimizers.Adam { learning_rate = o.learning_rate or 1e-3 }
  self.loss_fn = tide.losses.Huber {}
  local vars = self.online.trainable_weights
  self.optimizer:build(vars) -- slots made outside the trace

  -- The greedy action for one observation [1, N]: traced once, then one C call a step.
  self.greedy = tide.trace(function(obs)
    return tide.argmax(self.online(obs), { axis = 1, output_type = "int32" })
  end, { name = "greedy", input_signature = { tide.TensorSpec({ 1, o.n_obs }, "float32") } })

  -- One step of gradient descent on a batch of transitions; returns the loss.
  -- The target r + gamma * Q_target(s', a*) is computed outside the tape, so no
  -- gradient flows into it; double DQN picks a* with the online network.
  self.train_step = tide.trace(function(obs, action, reward, next_obs, done)
    local q_next_target = self.target(next_obs)                                   -- [B, A]
    local best
    if self.double then
      best = tide.argmax(self.online(next_obs), { axis = 1, output_type = "int32" }) -- [B]
    else
      best = tide.argmax(q_next_target, { axis = 1, output_type = "int32" })
    end
    local q_next = tide.reduce_sum(q_next_target * tide.one_hot(best, self.n_actions), { axis = 1 }) -- [B]
    local target = reward + self.gamma * (1 - done) * q_next
    local taken = tide.one_hot(action, self.n_actions)                             -- [B, A]
    local tape = tide.GradientTape()
    local loss = tape:run(function()
      local q = tide.reduce_sum(self.online(obs, { training = true }) * taken, { axis = 1 }) -- [B]
      return self.loss_fn(target, q)
    end)
    self.optimizer:apply(tape:gradient(loss, vars), vars)
    return loss
  end, { name = "train_step" })
  return self
end

-- The target network takes the online network's weights.
function Agent:sync_target() self.target:set_weights(self.online:get_weights()) end

-- Epsilon after `self.steps` steps: linear from start to stop over eps_steps, then stop.
function Agent:epsilon()
  local f = math.min(1, self.steps / self.eps_steps)
  return self.eps_start + f * (self.eps_stop - self.eps_start)
end

-- An action for the observation obs (a Lua list): random with probability
-- epsilon (drawn from rng), else the network's greedy one. Counts a step.
function Agent:act(obs, rng)
  local eps = self:epsilon()
  self.steps = self.steps + 1
  if rng:next() < eps then return rng:int(self.n_actions) end
  return self:greedy_action(obs)
end

-- The network's greedy action for obs (a Lua list).
function Agent:greedy_action(obs)
  return self.greedy(tide.tensor({ obs }, "float32")):totable()[1]
end

return M
