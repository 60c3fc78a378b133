-- tests/spec/data/autotune_spec.lua — tide.data's AUTOTUNE (kernels/data/
-- autotune.c): the parallelism tuner's decisions on modelled stages (exact,
-- through tide_data_autotune_simulate), the CPU budget in live passes, order
-- and errors at every setting a pass may start from, parked workers at
-- shutdown, and the prefetch depth carried between passes.
local tide = require "tide"
local binding = require "tide.binding"
local c_engine = require "tide.data.c_engine"
local h = require "helpers"
local D = tide.data.Dataset
local ffi, C = binding.ffi, binding.C
local AUTOTUNE = tide.data.AUTOTUNE

ffi.cdef [[ int usleep(unsigned int usec); ]]

local threads = h.threads

-- The tuner over `windows` windows of a stage that takes cycle[v + 1] ns per
-- element and holds its caller share[v + 1] of the time at parallelism v:
-- the values after each window, and the last.
local function simulate(start, budget, cycle, share, windows)
  local hi = #cycle - 1
  local c, s = ffi.new("double[?]", hi + 1, cycle), ffi.new("double[?]", hi + 1, share)
  local trace = ffi.new("int[?]", windows)
  local last = C.tide_data_autotune_simulate(start, hi, budget, c, s, windows, trace)
  local t = {}
  for w = 0, windows - 1 do t[w + 1] = trace[w] end
  return t, last
end

local function max_of(t)
  local m = -1
  for _, v in ipairs(t) do m = math.max(m, v) end
  return m
end

-- Windows (of the last n) spent at value v.
local function count_at(t, v, n)
  local k = 0
  for i = #t - n + 1, #t do if t[i] == v then k = k + 1 end end
  return k
end

describe("the parallelism tuner (modelled stages)", function()
  it("gives a consumer that the stage keeps up with the fewest threads: the caller's own", function()
    -- the consumer's time sets the pace at every parallelism; the map holds it up 1% of the time
    local trace, last = simulate(1, 4, { 1e6, 1e6, 1e6, 1e6, 1e6 }, { 0.01, 0.01, 0.01, 0.01, 0.01 }, 60)
    assert.are.equal(0, last)
    assert.is_true(max_of(trace) <= 1) -- never tried more: nothing was waiting
    assert.are.equal(60 - 4, count_at(trace, 0, 56)) -- settled after one trial
  end)

  it("grows a slow map with a fast consumer up to the budget and never past it", function()
    local cycle, share = { 4e6 }, { 0.95 }
    for p = 1, 8 do cycle[p + 1], share[p + 1] = 3e6 / p, 0.9 end
    local trace, last = simulate(1, 4, cycle, share, 80)
    assert.are.equal(4, last)
    assert.are.equal(4, max_of(trace))
    local trace2, last2 = simulate(1, 8, cycle, share, 120)
    assert.are.equal(8, last2)
    assert.is_true(max_of(trace2) <= 8)
  end)

  it("keeps the map in its caller's thread when hand-offs cost more than the work", function()
    -- Fashion-MNIST's scaling on 2 cores: a worker makes each element slower than the caller does
    local trace = simulate(1, 2, { 1.0e6, 1.5e6, 1.4e6 }, { 0.6, 0.8, 0.7 }, 200)
    assert.is_true(count_at(trace, 0, 100) >= 80) -- retrying more workers only now and then (backoff)
  end)

  it("tries two workers from the caller's thread when one alone does not pay", function()
    -- a heavy map (JPEG decoding) on an idle machine: one worker runs it on one thread as the caller did
    local trace = simulate(0, 2, { 2e6, 2.02e6, 1.05e6 }, { 0.9, 0.9, 0.5 }, 200)
    assert.is_true(count_at(trace, 2, 100) >= 80)
  end)

  it("stops where one more worker no longer pays", function()
    local trace = simulate(1, 4, { 9e6, 4e6, 2.1e6, 2.05e6, 2.2e6 }, { 0.9, 0.8, 0.5, 0.5, 0.5 }, 200)
    assert.is_true(count_at(trace, 2, 100) >= 80)
    assert.are.equal(3, max_of(trace)) -- tried, never kept, and 4 never tried
  end)

  it("drops to a smaller budget at once", function()
    local trace = simulate(4, 1, { 5e6, 4e6, 3e6, 2e6, 1e6 }, { 0.9, 0.9, 0.9, 0.9, 0.9 }, 3)
    assert.are.equal(1, trace[1])
    assert.are.equal(-1, C.tide_data_autotune_simulate(0, -1, 1, nil, nil, 1, nil))
  end)
end)

describe("AUTOTUNE in a pass", function()
  local function map_state(ds)
    for _, e in ipairs(ds:_autotune_state()) do if e.stage == "map" then return e.parallel end end
  end

  it("gives a consumer busy with its own work at most one worker (the CPU budget)", function()
    local ds = D.range(400):map(function(v) return v * 2 end, { parallel = AUTOTUNE })
    local mapped = c_engine.handle(ds)
    C.tide_dataset_set_autotuned(mapped, C.tide_data_autotune_parallelism()) -- start with every worker
    local most, n = 0, 0
    for v in ds:iter() do
      n = n + 1
      assert.are.equal(2 * (n - 1), v:item())
      C.usleep(200) -- the consumer's own work: it keeps its core busy (sleeping here stands in for it)
      most = math.max(most, C.tide_data_live_threads())
    end
    assert.are.equal(400, n)
    assert.is_true(map_state(ds) <= 1, "tuned to " .. map_state(ds))
    -- at most the workers it started with and the prefetch thread, never more
    assert.is_true(most <= C.tide_data_autotune_parallelism() + 1)
  end)

  it("never starts more workers than the cores", function()
    local x = tide.ones({ 64, 64 }, "float32")
    local ds = D.range(3000):map(function(v) return tide.matmul(x * tide.cast(v, "float32"), x):sum() end,
      { parallel = AUTOTUNE })
    local most = 0
    for _ in ds:iter() do most = math.max(most, C.tide_data_live_threads()) end
    assert.is_true(most <= C.tide_data_autotune_parallelism() + 1, "threads: " .. most) -- + prefetch's
    local p = map_state(ds)
    assert.is_true(p >= 0 and p <= C.tide_data_autotune_parallelism())
    assert.are.equal(0, C.tide_data_live_threads())
  end)

  it("keeps the input's order and names a failing element from every starting setting", function()
    for _, start in ipairs { 0, 1, 2 } do
      local ds = D.range(3000):map(function(v) return v + 1 end, { parallel = AUTOTUNE })
      C.tide_dataset_set_autotuned(c_engine.handle(ds), start)
      local n = 0
      for v in ds:iter() do
        n = n + 1
        assert.are.equal(n, v:item())
        if n % 500 == 0 then C.usleep(20000) end -- the consumer's pace changes: the tuner moves
      end
      assert.are.equal(3000, n)
      local bad = D.from_tensor_slices(tide.tensor { "1", "2", "3", "x", "5" })
        :map(function(s) return tide.strings.to_number(s) end, { parallel = AUTOTUNE })
      C.tide_dataset_set_autotuned(c_engine.handle(bad), start)
      h.errors("map: the function failed on element 3", function() bad:totable() end)
    end
    local shuffled = D.range(500):map(function(v) return v end, { parallel = AUTOTUNE, deterministic = false })
    local seen = {}
    for v in shuffled:iter() do seen[#seen + 1] = v:item() end
    table.sort(seen)
    for i = 1, 500 do assert.are.equal(i - 1, seen[i]) end
  end)

  it("joins parked and running workers when a pass is dropped midway, and frees its elements", function()
    local x = tide.ones({ 1000, 64 }, "float32")
    local ds = D.from_tensor_slices(x):map(function(v) return v * 2 end, { parallel = AUTOTUNE }):batch(10)
    h.drop(function() ds:iter()() end)
    local before_threads, before_bytes = threads(), binding.memory_stats.current
    for _, start in ipairs { 0, 1, 2, 0 } do
      C.tide_dataset_set_autotuned(c_engine.handle(ds.input), start)
      h.drop(function()
        local it = ds:iter()
        it()
        it()
      end)
    end
    assert.are.equal(0, C.tide_data_live_threads())
    assert.are.equal(before_threads, h.threads_down_to(before_threads))
    assert.are.equal(before_bytes, binding.memory_stats.current)
  end)

  it("carries settings to the next pass and checks what it is given", function()
    local ds = D.range(2000):map(function(v) return v end, { parallel = AUTOTUNE }):prefetch(AUTOTUNE)
    assert.are.same({}, ds:_autotune_state()) -- no pass yet
    for _ in ds:iter() do C.usleep(50) end
    local st = ds:_autotune_state()
    assert.are.equal("prefetch", st[1].stage)
    assert.is_true(st[1].depth >= 1 and st[1].depth <= 64)
    assert.are.equal("map", st[2].stage)
    C.tide_dataset_set_autotuned(c_engine.handle(ds), 5)
    assert.are.equal(5, ds:_autotune_state()[1].depth)
    h.errors("a tuned depth must be at least 1, got 0", function()
      if C.tide_dataset_set_autotuned(c_engine.handle(ds), 0) ~= 0 then binding.raise() end
    end)
    h.errors("only a map or prefetch given AUTOTUNE", function()
      if C.tide_dataset_set_autotuned(c_engine.handle(D.range(3):prefetch(2)), 1) ~= 0 then binding.raise() end
    end)
    assert.are.equal(-1, C.tide_dataset_autotuned(c_engine.handle(D.range(3):map(function(v) return v end,
      { parallel = 2 }))))
  end)
end)
