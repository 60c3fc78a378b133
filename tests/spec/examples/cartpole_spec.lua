-- tests/spec/examples/cartpole_spec.lua — examples/dqn/cartpole.lua replays
-- Gymnasium's CartPole-v1 (tests/fixtures/cartpole/gen.py), and its generator and errors.
local cartpole = dofile("examples/dqn/cartpole.lua")
local runs = dofile("tests/fixtures/cartpole/trajectories.lua")

-- Gym's sin/cos (numpy's) and libm's may differ in the last bit; over 500
-- steps that stays far below this (a wrong constant or step order is ~1e-3).
local TOL = 1e-9

describe("examples/dqn/cartpole.lua", function()
  for _, run in ipairs(runs) do
    it("replays Gymnasium's CartPole-v1: " .. run.name, function()
      local env = cartpole.Env(1)
      env:set_state(run.start)
      for t = 1, #run.actions do
        local obs, reward, terminated, truncated = env:step(run.actions[t])
        for k = 1, 4 do
          local want = run.states[t][k]
          if math.abs(obs[k] - want) > TOL * math.max(1, math.abs(want)) then
            error(string.format("step %d, state[%d]: got %.17g, Gym %.17g", t, k, obs[k], want))
          end
        end
        assert.are.equal(run.rewards[t], reward)
        assert.are.equal(run.terminated[t], terminated, "terminated at step " .. t)
        assert.are.equal(run.truncated[t], truncated, "truncated at step " .. t)
      end
      assert.is_true(env.done)
    end)
  end

  it("covers each way an episode ends", function()
    local ends = {}
    for _, run in ipairs(runs) do
      local n = #run.actions
      ends[#ends + 1] = (run.terminated[n] and "terminated" or "") .. (run.truncated[n] and "truncated" or "")
    end
    assert.are.same({ "terminated", "terminated", "terminated", "truncated" }, ends)
    assert.are.equal(500, #runs[4].actions)
  end)

  it("resets to states uniform in (-0.05, 0.05), the same for the same seed", function()
    local a, b, c = cartpole.Env(7), cartpole.Env(7), cartpole.Env(8)
    local lo, hi, differs = 1, -1, false
    for _ = 1, 200 do
      local sa, sb, sc = a:reset(), b:reset(), c:reset()
      assert.are.same(sa, sb)
      for k = 1, 4 do
        lo, hi = math.min(lo, sa[k]), math.max(hi, sa[k])
        if sa[k] ~= sc[k] then differs = true end
      end
    end
    assert.is_true(lo > -0.05 and lo < -0.045, "lowest " .. lo)
    assert.is_true(hi < 0.05 and hi > 0.045, "highest " .. hi)
    assert.is_true(differs)
  end)

  it("draws MINSTD's numbers (the C game's generator is the same)", function()
    local r = cartpole.Rng(1)
    -- MINSTD with multiplier 48271 from seed 1: 48271, 182605794, 1291394886
    for _, want in ipairs { 48271, 182605794, 1291394886 } do
      assert.are.equal(want, math.floor(r:next() * 2147483647 + 0.5))
    end
  end)

  it("refuses bad actions, steps after the end and non-integer seeds", function()
    local env = cartpole.Env(1)
    assert.has_error(function() env:step(0) end, "cartpole: step after the episode ended; call reset first")
    env:reset()
    assert.has_error(function() env:step(2) end, "cartpole: action must be 0 (push left) or 1 (push right), got 2")
    assert.has_error(function() env:step("1") end, "cartpole: action must be 0 (push left) or 1 (push right), got 1")
    assert.has_error(function() cartpole.Rng(1.5) end, "cartpole.Rng: seed must be an integer, got 1.5")
  end)
end)
