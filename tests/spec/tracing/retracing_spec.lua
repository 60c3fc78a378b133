-- tide.trace's retracing diagnostics (DESIGN §5): when 5 of the last 10
-- calls traced (TF's rule, configurable), one warning on stderr that says
-- which argument changed between the last two traces and what to do. Each
-- case runs a small script through the tide program and reads its stderr.
local tide = require "tide"
local h = require "helpers"

local program = require "tide_program"

local tmpdir

-- Run Lua source `code` as a script (after `local tide = require "tide"`);
-- returns exit status, stdout, stderr.
local function run(code)
  local script = tmpdir .. "/script.lua"
  program.write_file(script, 'local tide = require "tide"\n' .. code)
  return program.sh(tmpdir, program.quote(program.path) .. " " .. program.quote(script))
end

local function count(s, needle)
  local n, i = 0, 1
  while true do
    local a, b = s:find(needle, i, true)
    if not a then return n end
    n, i = n + 1, b + 1
  end
end

local function has(s, needle)
  assert(s:find(needle, 1, true), "expected to find:\n  " .. needle .. "\nin:\n" .. s)
end

setup(function() tmpdir = program.make_tmpdir("retracing_spec") end)
teardown(function() program.remove_tmpdir(tmpdir) end)

describe("the retracing warning", function()
  it("names the Lua number that changed and suggests a tensor or input_signature (train(num_steps))", function()
    local rc, out, err = run [[
local x = tide.tensor({1, 2}, "float32")
local train = tide.trace(function(num_steps, v) return v * num_steps end)
for i = 1, 12 do
  local r = train(i, x)
  if i == 12 then print(r:totable()[2]) end
end
]]
    assert.are.equal(0, rc)
    assert.are.equal("24\n", out) -- the warning is not an error: the script goes on
    assert.are.equal(1, count(err, "tide: warning:"))         -- once per burst, not at every retrace
    has(err, "5 of the last 5 calls to train (defined at")
    has(err, "script.lua:3, called at ")
    has(err, "script.lua:5) traced a new graph")
    has(err, "argument 1 (num_steps) changed from the Lua number 4 to the Lua number 5")
    has(err, "pass the value as a tensor (tide.tensor(v))")
    has(err, "input_signature")
    has(err, "reduce_retracing")
  end)

  it("names the shape that changed and suggests reduce_retracing or None dims", function()
    local _, _, err = run [[
local g = tide.trace(function(x) return x + 1 end)
for n = 1, 6 do g(tide.ones({n, 3})) end
]]
    assert.are.equal(1, count(err, "tide: warning:"))
    has(err, "argument 1 (x) changed from a float32 tensor of shape (4, 3) to a float32 tensor of shape (5, 3)")
    has(err, "reduce_retracing=true")
    has(err, "input_signature with tide.None")
  end)

  it("names a dtype change, a rank change, a nested value and an object", function()
    local _, _, err = run [[
local f = tide.trace(function(x) return x end)
for _, dt in ipairs{"float32", "float64", "int32", "int64", "int8"} do f(tide.ones({2}, dt)) end
local r = tide.trace(function(x) return x end)
for n = 1, 5 do local s = {} for i = 1, n do s[i] = 1 end r(tide.ones(s)) end
local step = tide.trace(function(x, cfg) return x * cfg.opt.lr end)
for i = 1, 5 do step(tide.ones({2}), {opt = {lr = i / 10}}) end
local use = tide.trace(function(x, layer) return layer.w * x end)
for i = 1, 5 do use(tide.ones({2}), setmetatable({w = tide.ones({2})}, {})) end
]]
    assert.are.equal(4, count(err, "tide: warning:"))
    has(err, "argument 1 (x) changed from an int64 tensor of shape (2,) to an int8 tensor of shape (2,)")
    has(err, "cast to one dtype")
    has(err, "argument 1 (x) changed from a float32 tensor of shape (1, 1, 1, 1) to a float32 tensor of shape " ..
      "(1, 1, 1, 1, 1)")
    has(err, "one trace for every rank")
    has(err, "argument 2 (cfg) at cfg.opt.lr changed from the Lua number 0.4 to the Lua number 0.5")
    has(err, "argument 2 (layer) changed from the object table: ")
    has(err, "pass the same object each time")
    has(err, "__tracing_type")
  end)

  it("catches tide.trace applied again to the same function in a loop", function()
    local _, _, err = run [[
local function step(x) return x * 2 end
local x = tide.ones({3})
for i = 1, 8 do
  local f = tide.trace(step)
  f(x)
end
]]
    assert.are.equal(1, count(err, "tide: warning:"))
    has(err, "5 of the last 5 calls to step")
    has(err, "tide.trace was applied to this Lua function 5 times (as if inside a loop)")
    has(err, "call tide.trace once, outside the loop, and reuse the Function")
    assert.is_nil(err:find("changed from", 1, true)) -- the arguments did not change
  end)

  it("catches a new closure traced on each pass of a loop (counted per function prototype, as TF's __code__)",
    function()
      local _, _, err = run [[
local x = tide.ones({3})
for i = 1, 8 do
  local f = tide.trace(function(v) return v * 3 end)
  f(x)
end
]]
      assert.are.equal(1, count(err, "tide: warning:"))
      has(err, "tide.trace was applied to 5 different closures of this Lua function")
    end)

  it("stays quiet when calls mostly reuse their traces", function()
    local rc, _, err = run [[
local f = tide.trace(function(x) return x * 2 end)
for n = 1, 4 do
  for rep = 1, 3 do f(tide.ones({n})) end
end
local g = tide.trace(function(x, k) return x * k end)
for i = 1, 40 do g(tide.ones({2}), math.floor(i / 4)) end  -- a new value every fourth call
local e = tide.trace(function(x, k) return x * k end)
tide.config.run_functions_eagerly(true)
for i = 1, 20 do e(tide.ones({2}), i) end                   -- eager: nothing traces
]]
    assert.are.equal(0, rc)
    assert.are.equal("", err)
  end)

  it("warns once per burst, and again for a later burst", function()
    local _, _, err = run [[
local f = tide.trace(function(x, k) return x * k end)
local x = tide.ones({2})
for i = 1, 30 do f(x, i) end          -- a burst: one warning
for i = 1, 20 do f(x, 1) end          -- calm: cached calls
for i = 100, 110 do f(x, i) end       -- another burst
]]
    assert.are.equal(2, count(err, "tide: warning:"))
  end)

  it("follows tide.config.set_retracing_warning", function()
    local _, _, err = run [[
tide.config.set_retracing_warning{threshold = 2, window = 3}
local s = tide.config.get_retracing_warning()
io.stderr:write(string.format("settings %s %d %d\n", tostring(s.enabled), s.threshold, s.window))
local f = tide.trace(function(x, k) return x * k end)
f(tide.ones({2}), 1)
f(tide.ones({2}), 2)
tide.config.set_retracing_warning(false)
local g = tide.trace(function(x, k) return x * k end)
for i = 1, 20 do g(tide.ones({2}), i) end
]]
    has(err, "settings true 2 3")
    assert.are.equal(1, count(err, "tide: warning:"))
    has(err, "2 of the last 2 calls to f")
  end)
end)

describe("tide.config.set_retracing_warning", function()
  local saved
  before_each(function() saved = tide.config.get_retracing_warning() end)
  after_each(function() tide.config.set_retracing_warning(saved) end)

  it("reads back what it set", function()
    tide.config.set_retracing_warning{ threshold = 3, window = 7 }
    assert.are.same({ enabled = true, threshold = 3, window = 7 }, tide.config.get_retracing_warning())
    tide.config.set_retracing_warning(false)
    assert.is_false(tide.config.get_retracing_warning().enabled)
    tide.config.set_retracing_warning(true)
    assert.are.same({ enabled = true, threshold = 3, window = 7 }, tide.config.get_retracing_warning())
  end)

  it("rejects bad settings", function()
    h.errors("threshold (6) must be at most window (5)", tide.config.set_retracing_warning,
      { threshold = 6, window = 5 })
    h.errors("threshold must be a positive integer, got 0", tide.config.set_retracing_warning, { threshold = 0 })
    h.errors("window must be a positive integer, got 2.5", tide.config.set_retracing_warning, { window = 2.5 })
    h.errors("unknown option 'limit'", tide.config.set_retracing_warning, { limit = 3 })
    h.errors("expected {threshold=, window=} or a boolean, got string", tide.config.set_retracing_warning, "on")
  end)
end)
