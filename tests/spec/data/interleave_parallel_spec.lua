-- tests/spec/data/interleave_parallel_spec.lua — interleave with parallel > 1:
-- the same order as parallel = 1, inner passes that run in C each fill a buffer
-- on a prefetch thread of their own (at most `parallel`), joined when done.
local tide = require "tide"
local h = require "helpers"
local dataset = require "tide.data.dataset"
local D = tide.data.Dataset

local C = require("tide.binding").C

-- The pipeline's threads, counted where they are started and joined. The
-- process's count (/proc/self/status) is no use here: a thread that
-- pthread_join has returned for is still counted until the kernel has
-- finished its exit, which a loaded machine can delay past the next count
-- (CI saw base + 1 for two threads that way).
local function threads() return tonumber(C.tide_data_live_threads()) end

local function items(ds)
  local t = {}
  for x in ds:iter() do t[#t + 1] = x:item() end
  return t
end

-- Inner datasets of uneven lengths (x % 4 elements: some empty), run in C (a traced map).
local function inner_c(x)
  local v = x:item()
  return D.range(v * 100, v * 100 + v % 4):map(function(y) return y * 2 end)
end

describe("interleave with parallel", function()
  it("gives the elements in the order parallel = 1 gives", function()
    for _, cycle in ipairs { 1, 2, 3, 4 } do
      for _, block in ipairs { 1, 2, 3 } do
        local want = items(D.range(1, 10):interleave(inner_c, { cycle_length = cycle, block_length = block }))
        assert.are.equal(13, #want)
        for _, p in ipairs { 2, 3, tide.data.AUTOTUNE } do
          local ds = D.range(1, 10):interleave(inner_c, { cycle_length = cycle, block_length = block, parallel = p })
          assert.are.same(want, items(ds))
          assert.are.same(want, items(ds)) -- and again
        end
      end
    end
  end)

  it("keeps the order when inner datasets run in Lua (no threads for them)", function()
    local function inner_gen(x)
      local v = x:item()
      return D.from_generator(function()
        local i = -1
        return function() i = i + 1; if i < v then return v * 10 + i end end
      end, { output_signature = tide.TensorSpec({}, "int64") })
    end
    local want = items(D.range(1, 6):interleave(inner_gen, { cycle_length = 3, block_length = 2 }))
    assert.are.same(want, items(D.range(1, 6):interleave(inner_gen, { cycle_length = 3, block_length = 2,
      parallel = 3 })))
    assert.are.equal(15, #want)
  end)

  it("runs up to `parallel` inner passes on threads and joins them when the pass is dropped", function()
    local function long(x) return D.range(x:item() * 10000, x:item() * 10000 + 5000):map(function(y) return y + 1 end) end
    -- The collector is stopped while threads are counted: passes earlier
    -- specs dropped are joined by their finalizers, which must not run
    -- between two counts.
    local function live_threads(p)
      local ds = D.range(4):interleave(long, { cycle_length = 4, parallel = p })
      local nextf, close = dataset.open(ds)
      for _ = 1, 8 do assert.is_not_nil(nextf()) end -- every slot of the cycle is open
      local during = threads()
      close()
      return during
    end
    live_threads(4) -- warm up (pools that start once)
    collectgarbage("stop")
    finally(function() collectgarbage("restart") end)
    local base = threads()
    assert.are.equal(base, live_threads(1))
    assert.are.equal(base + 2, live_threads(2))
    assert.are.equal(base + 4, live_threads(4))
    assert.are.equal(base + 4, live_threads(tide.data.AUTOTUNE))
    assert.are.equal(base, threads()) -- all joined
  end)

  it("surfaces an inner pass's error at its element, and checks its arguments", function()
    local ds = D.range(3):interleave(function()
      return D.from_tensor_slices(tide.tensor { "1", "2", "bad" }):map(function(s) return tide.strings.to_number(s) end)
    end, { cycle_length = 2, parallel = 2 })
    h.errors("failed on element 2", function() ds:totable() end)
    h.errors("interleave: parallel must be a whole number >= 1", function()
      D.range(3):interleave(inner_c, { parallel = 0 })
    end)
  end)
end)
