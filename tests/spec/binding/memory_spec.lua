-- tests/spec/binding/memory_spec.lua — the collector is paced by C's byte count: a
-- loop of 100,000 temporary 4 MB tensors stays under 2 GB of peak RSS, and
-- tide's allocator count comes back to its baseline after a collection.
-- The loop runs in a subprocess so that its VmHWM measures only the loop.
local program = require "tide_program"

local TIDE, read_file = program.path, program.read_file

-- ASan maps and unmaps every large block (each 4 MB temporary faults in
-- fresh pages), which makes 100,000 of them take ~10 minutes: sanitized
-- builds run a shorter loop with the same assertions.
local function sanitized()
  local maps = read_file("/proc/self/maps") or ""
  return maps:find("libasan", 1, true) ~= nil
end

local ITERATIONS = tonumber(os.getenv("TIDE_MEMORY_SPEC_ITERATIONS") or "") or (sanitized() and 2000 or 100000)
local GB = 1024 * 1024 * 1024

local loop_script = [[
local tide = require "tide"
local iterations = tonumber(arg[1])
local N = 1024 * 1024                      -- 1M float32 = 4 MB
local values = {}
for i = 1, N do values[i] = (i % 17) * 0.5 end
local x = tide.tensor(values, "float32")
values = nil
collectgarbage()
collectgarbage()
assert(x:size() == N and x.dtype == "float32")
local base = tide.config.memory_info().current
local start = os.time()
for i = 1, iterations do
  local t = x + 1.0                        -- a 4 MB temporary, dropped at once
end
local seconds = os.time() - start
local last = x + 1.0                       -- the op still computes the right values
local v = last:totable()
assert(v[1] == 1.5 and v[17] == 1.0 and v[N] == (N % 17) * 0.5 + 1, "wrong values")
last = nil
local info = tide.config.memory_info()
collectgarbage()
collectgarbage()
local after = tide.config.memory_info()
local status = assert(io.open("/proc/self/status")):read("*a")
print("hwm_kb=" .. assert(status:match("VmHWM:%s*(%d+) kB")))
print("base=" .. base)
print("peak=" .. info.peak)
print("before_collect=" .. info.current)
print("after_collect=" .. after.current)
print("allocations=" .. after.allocations)
print("seconds=" .. seconds)
]]

describe("memory", function()
  local result, out, err

  setup(function()
    local dir = program.make_tmpdir("memory_spec")
    local script = dir .. "/loop.lua"
    program.write_file(script, loop_script)
    local rc
    rc, out, err = program.sh(dir, program.quote(TIDE) .. " " .. program.quote(script) .. " " .. ITERATIONS)
    program.remove_tmpdir(dir)
    result = { rc = rc }
    for k, v in out:gmatch("([%w_]+)=(%d+)") do result[k] = tonumber(v) end
  end)

  it(ITERATIONS .. " temporary 4 MB tensors finish with peak RSS under 2 GB", function()
    assert.are.equal(0, result.rc, err)
    assert.truthy(result.hwm_kb, out .. err)
    assert.is_true(result.hwm_kb * 1024 < 2 * GB,
      string.format("peak RSS %.0f MB is not under 2 GB", result.hwm_kb / 1024))
    -- The allocator's own peak says the same: the collector kept up.
    assert.is_true(result.peak - result.base < 2 * GB,
      string.format("tide's peak %.0f MB above the baseline", (result.peak - result.base) / 2 ^ 20))
    -- Every iteration allocated (no caching hid the work).
    assert.is_true(result.allocations >= ITERATIONS)
  end)

  it("comes back to the baseline after a collection", function()
    assert.are.equal(0, result.rc, err)
    -- Within one 4 MB tensor of the baseline (exactly it, in practice).
    assert.is_true(math.abs(result.after_collect - result.base) <= 4 * 2 ^ 20,
      string.format("current %d bytes after collecting, baseline %d", result.after_collect, result.base))
  end)
end)
