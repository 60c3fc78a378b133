-- tests/spec/examples/dqn_spec.lua — the pieces of examples/dqn: the replay memory
-- (ring order, batches, errors) and the agent (epsilon schedule, target sync, the traced step learns).
local tide = require "tide"
local cartpole = dofile("examples/dqn/cartpole.lua")
local replay = dofile("examples/dqn/replay.lua")
local dqn = dofile("examples/dqn/agent.lua")

describe("examples/dqn/replay.lua", function()
  it("keeps the last `capacity` transitions and samples batches of them as tensors", function()
    local m = replay.Memory { 4, 8 }
    for i = 1, 6 do m:add({ i, i, i, i }, i % 2, i * 10, { -i, 0, 0, 0 }, i == 6) end
    assert.are.equal(4, m.size)
    local obs, action, reward, next_obs, done = m:sample(cartpole.Rng(3))
    assert.are.same({ 8, 4 }, obs.shape)
    assert.are.equal("int32", action.dtype)
    assert.are.same({ 8 }, reward.shape)
    local o, a, r, n, d = obs:totable(), action:totable(), reward:totable(), next_obs:totable(), done:totable()
    local seen = {}
    for b = 1, 8 do
      local i = o[b][1]
      assert.is_true(i >= 3 and i <= 6, "transition " .. i .. " was overwritten")
      assert.are.same({ i, i, i, i }, o[b])
      assert.are.equal(i % 2, a[b])
      assert.are.equal(i * 10, r[b])
      assert.are.equal(-i, n[b][1])
      assert.are.equal(i == 6 and 1 or 0, d[b])
      seen[i] = true
    end
    local count = 0
    for _ in pairs(seen) do count = count + 1 end
    assert.is_true(count >= 2, "a batch of 8 from 4 transitions drew only one")
  end)

  it("refuses bad sizes and sampling an empty memory", function()
    assert.has_error(function() replay.Memory { 0, 8 } end, "replay.Memory: capacity must be a whole number >= 1, got 0")
    assert.has_error(function() replay.Memory { 4, 1.5 } end,
      "replay.Memory: batch_size must be a whole number >= 1, got 1.5")
    assert.has_error(function() replay.Memory { 4, 2 }:sample(cartpole.Rng(1)) end,
      "replay.Memory: sample from an empty memory")
  end)
end)

describe("examples/dqn/agent.lua", function()
  it("decays epsilon linearly, then holds it", function()
    local a = dqn.Agent { n_obs = 4, n_actions = 2, epsilon = { 1.0, 0.1, 10 } }
    assert.are.equal(1.0, a:epsilon())
    a.steps = 5
    assert.is_true(math.abs(a:epsilon() - 0.55) < 1e-12)
    a.steps = 100
    assert.is_true(math.abs(a:epsilon() - 0.1) < 1e-12)
  end)

  it("starts the target as a copy and syncs it with set_weights", function()
    tide.random.set_seed(3)
    local a = dqn.Agent { n_obs = 4, n_actions = 2, epsilon = { 1, 0.1, 10 } }
    local x = tide.tensor({ { 0.1, -0.2, 0.03, 0.4 } }, "float32")
    assert.are.same(a.online(x):totable(), a.target(x):totable())
    local m = replay.Memory { 64, 16 }
    local rng = cartpole.Rng(5)
    for _ = 1, 64 do
      m:add({ rng:next(), rng:next(), rng:next(), rng:next() }, rng:int(2), 1, { rng:next(), 0, 0, 0 }, false)
    end
    a.train_step(m:sample(rng))
    assert.are_not.same(a.online(x):totable(), a.target(x):totable()) -- trained: the target lags
    a:sync_target()
    assert.are.same(a.online(x):totable(), a.target(x):totable())
  end)

  it("fits Q to the reward of terminal transitions (the traced step learns)", function()
    tide.random.set_seed(4)
    local a = dqn.Agent { n_obs = 4, n_actions = 2, learning_rate = 1e-2, epsilon = { 1, 0.1, 10 } }
    -- every transition terminal with reward 1 for action 1 and 0 for action 0
    local m = replay.Memory { 256, 64 }
    local rng = cartpole.Rng(6)
    for _ = 1, 256 do
      local act = rng:int(2)
      m:add({ rng:next(), rng:next(), rng:next(), rng:next() }, act, act, { 0, 0, 0, 0 }, true)
    end
    local first
    for step = 1, 300 do
      local loss = a.train_step(m:sample(rng)):item()
      first = first or loss
    end
    assert.are.equal(1, a.train_step:trace_count())
    local q = a.online(tide.tensor({ { 0.5, 0.5, 0.5, 0.5 } }, "float32")):totable()[1]
    assert.is_true(math.abs(q[1] - 0) < 0.1 and math.abs(q[2] - 1) < 0.1, "Q = " .. q[1] .. ", " .. q[2])
    assert.are.equal(1, a:greedy_action { 0.5, 0.5, 0.5, 0.5 })
  end)

  it("acts at random with probability epsilon, else greedily", function()
    tide.random.set_seed(5)
    local a = dqn.Agent { n_obs = 4, n_actions = 2, epsilon = { 0, 0, 1 } } -- always greedy
    local g = a:greedy_action { 0.1, 0.1, 0.1, 0.1 }
    for _ = 1, 20 do assert.are.equal(g, a:act({ 0.1, 0.1, 0.1, 0.1 }, cartpole.Rng(1))) end
    local r = dqn.Agent { n_obs = 4, n_actions = 2, epsilon = { 1, 1, 1 } } -- always random
    local counts, rng = { [0] = 0, [1] = 0 }, cartpole.Rng(2)
    for _ = 1, 200 do
      local act = r:act({ 0.1, 0.1, 0.1, 0.1 }, rng)
      counts[act] = counts[act] + 1
    end
    assert.is_true(counts[0] > 60 and counts[1] > 60, counts[0] .. " / " .. counts[1])
    assert.are.equal(220, a.steps + r.steps)
  end)
end)
