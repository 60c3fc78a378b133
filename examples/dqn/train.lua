-- examples/dqn/train.lua — a DQN agent learns CartPole-v1, then its policy is
-- saved as a SavedModel that examples/embed/cartpole_game.c plays from C with no Lua.
--   build/tide examples/dqn/train.lua [--fast] [--out DIR] [--seed N]
-- Full run: trains until the average return over 100 consecutive episodes
-- reaches 195 (CartPole's "solved"), or fails after 1,000 episodes.
-- --fast: a few seconds of training; fails unless the last 10 episodes'
-- average return is twice the first 10's (make test runs it: tests/sh/test_dqn.sh).
-- --out DIR: writes DIR/policy (model:save of the Q-network) and
-- DIR/greedy_returns.txt, the returns of greedy episodes played by the saved
-- graph as C runs it, for the C game to check itself against.
local tide = require "tide"
io.stdout:setvbuf("line") -- progress lines as they come, also into a pipe or file

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local cartpole = dofile(here .. "/cartpole.lua")
local replay = dofile(here .. "/replay.lua")
local dqn = dofile(here .. "/agent.lua")

local opts = { fast = false, out = nil, seed = 1 }
do
  local i = 1
  while arg and arg[i] do
    local a = arg[i]
    if a == "--fast" then opts.fast = true
    elseif a == "--out" and arg[i + 1] then opts.out, i = arg[i + 1], i + 1
    elseif a == "--seed" and tonumber(arg[i + 1]) then opts.seed, i = tonumber(arg[i + 1]), i + 1
    else
      io.stderr:write("usage: tide examples/dqn/train.lua [--fast] [--out DIR] [--seed N]\n")
      os.exit(2)
    end
    i = i + 1
  end
end

-- Hyperparameters. Full: the usual DQN settings for CartPole. Fast: 3,000
-- environment steps (the episode that passes them ends), a shorter warm-up and
-- exploration, a faster target sync, a larger step size and a shorter horizon.
local H = opts.fast and {
  max_episodes = 200, max_steps = 3000, memory = 10000, batch = 32, warmup = 200, learning_rate = 3e-3,
  gamma = 0.95, epsilon = { 1.0, 0.05, 1500 }, sync_every = 100, train_every = 1,
} or {
  max_episodes = 1000, max_steps = math.huge, memory = 50000, batch = 64, warmup = 1000, learning_rate = 5e-4,
  gamma = 0.99, epsilon = { 1.0, 0.01, 10000 }, sync_every = 500, train_every = 1,
}
local SOLVED, WINDOW = 195, 100
local GREEDY_EPISODES, GREEDY_SEED = 5, 12345 -- what --out plays back through the saved graph

tide.random.set_seed(opts.seed)                 -- the networks' initial weights
local env = cartpole.Env(opts.seed)             -- the episodes' start states
local rng = cartpole.Rng(opts.seed + 1000)      -- exploration and batch sampling
local memory = replay.Memory { H.memory, H.batch, n_obs = cartpole.N_OBS }
local agent = dqn.Agent {
  n_obs = cartpole.N_OBS, n_actions = cartpole.N_ACTIONS, gamma = H.gamma,
  learning_rate = H.learning_rate, epsilon = H.epsilon, double = true,
}

local now = require("tide.models.progbar").now -- a monotonic wall clock, in seconds
local t0, cpu0 = now(), os.clock() -- wall and process CPU time (a loaded machine's wall time is not ours)
local returns, total_steps, train_steps, solved_at = {}, 0, 0, nil
local function mean(list, a, b)
  local s = 0
  for i = a, b do s = s + list[i] end
  return s / (b - a + 1)
end

for episode = 1, H.max_episodes do
  local obs, ret = env:reset(), 0
  while true do
    local action = agent:act(obs, rng)
    local next_obs, reward, terminated, truncated = env:step(action)
    memory:add(obs, action, reward, next_obs, terminated)
    ret, total_steps, obs = ret + reward, total_steps + 1, next_obs
    if memory.size >= H.warmup and total_steps % H.train_every == 0 then
      agent.train_step(memory:sample(rng))
      train_steps = train_steps + 1
    end
    if total_steps % H.sync_every == 0 then agent:sync_target() end
    if terminated or truncated then break end
  end
  returns[episode] = ret
  local avg = mean(returns, math.max(1, episode - WINDOW + 1), episode)
  if episode % 10 == 0 or (episode >= WINDOW and avg >= SOLVED) then
    print(string.format("episode %d: return %d, average of the last %d: %.1f, epsilon %.3f, steps %d (%.1f s)",
      episode, ret, math.min(episode, WINDOW), avg, agent:epsilon(), total_steps, now() - t0))
  end
  if not opts.fast and episode >= WINDOW and avg >= SOLVED then
    solved_at = episode
    break
  end
  if total_steps >= H.max_steps then break end
end
local wall, cpu = now() - t0, os.clock() - cpu0
print(string.format("traces: train_step %d, greedy %d; %d environment steps, %d training steps",
  agent.train_step:trace_count(), agent.greedy:trace_count(), total_steps, train_steps))

if opts.fast then
  local n, k = #returns, 10
  local first, last = mean(returns, 1, k), mean(returns, n - k + 1, n)
  print(string.format("fast: average return of the first %d episodes %.1f, of the last %d %.1f (%d episodes, %.1f s, " ..
    "CPU %.1f s)", k, first, k, last, n, wall, cpu))
  if not (last >= 2 * first) then
    io.stderr:write(string.format("train.lua --fast: the return did not improve: first %d episodes %.1f, " ..
      "last %d %.1f (expected at least twice)\n", k, first, k, last))
    os.exit(1)
  end
else
  if not solved_at then
    io.stderr:write(string.format("train.lua: not solved in %d episodes (average of the last %d: %.1f)\n",
      H.max_episodes, WINDOW, mean(returns, #returns - WINDOW + 1, #returns)))
    os.exit(1)
  end
  print(string.format("solved at episode %d: average return of episodes %d-%d is %.1f; %d steps, %.1f s (CPU %.1f s)",
    solved_at, solved_at - WINDOW + 1, solved_at, mean(returns, solved_at - WINDOW + 1, solved_at), total_steps, wall,
    cpu))
end

if opts.out then
  os.execute("mkdir -p '" .. opts.out:gsub("'", "'\\''") .. "'")
  local dir = opts.out .. "/policy"
  agent.online:save(dir)
  -- Play greedy episodes with the saved graph as C rebuilds it (what
  -- tide_model_load runs), from seed GREEDY_SEED's start states: the C game
  -- started with that seed must play the very same episodes.
  local policy = tide.saved_model.load(dir):c_function("serving_default")
  local play = cartpole.Env(GREEDY_SEED)
  local list = {}
  for e = 1, GREEDY_EPISODES do
    local obs, ret, done = play:reset(), 0, false
    while not done do
      local q = policy(tide.tensor({ obs }, "float32")):totable()[1]
      local reward, terminated, truncated
      obs, reward, terminated, truncated = play:step(q[2] > q[1] and 1 or 0) -- a tie: 0, as argmax
      ret, done = ret + reward, terminated or truncated
    end
    list[e] = string.format("%d", ret)
  end
  local f = assert(io.open(opts.out .. "/greedy_returns.txt", "w"))
  f:write(string.format("seed %d returns %s\n", GREEDY_SEED, table.concat(list, " ")))
  f:close()
  print(string.format("saved %s; greedy returns of the saved policy (seed %d): %s", dir, GREEDY_SEED,
    table.concat(list, " ")))
end
