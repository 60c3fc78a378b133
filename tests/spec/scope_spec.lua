-- tide.scope: what tide sets around a call of user code (recording tapes,
-- traces in progress, the C recorder, paused tapes, Lua's print) is undone
-- on every way out: errors, stack overflow, out of memory, errors in error
-- handlers, errors anywhere (a debug hook), and coroutine yields (refused).
local tide = require "tide"
local h = require "helpers"
local program = require "tide_program"
local binding = require "tide.binding"
local scope = require "tide.scope"
local recorder = require "tide.tape_recorder"
local context = require "tide.trace_context"
local C = binding.C

local plain_print = print
local function f32(v) return tide.tensor(v, "float32") end

-- Nothing is set: no tape records, nothing is traced, nothing waits to be undone.
local function assert_clean()
  assert.is_false(recorder.active)
  assert.are.equal(0, #recorder.tapes)
  assert.are.equal(0, scope.n)
  assert.are.equal(0, #context.stack)
  assert.is_true(C.tide_graph_building() == nil)
  assert.are.equal(plain_print, _G.print)
  -- a trainable Variable reads as its values, and ops on it are eager
  local v = tide.Variable({1, 2})
  local r = v + 1
  assert.is_false(context.is_symbolic(r))
  assert.are.same({2, 3}, r:totable())
end

-- fn(...) run as a coroutine's body: resume's results (packed).
local function in_coroutine(fn, ...)
  local co = coroutine.create(fn)
  return { coroutine.resume(co, ...) }, co
end

describe("a coroutine.yield across a boundary", function()
  it("inside a traced function is refused, and tracing is off for all other code", function()
    local v = tide.Variable({1, 2})
    local f = tide.trace(function(x)
      coroutine.yield("inside")
      return x + v
    end)
    local res, co = in_coroutine(function() return f(f32{1, 2}) end)
    assert.is_false(res[1])
    assert.truthy(tostring(res[2]):find("cannot yield across a traced function (tide.trace)", 1, true))
    assert.are.equal("dead", coroutine.status(co))
    assert_clean()
    assert.are.same({2, 4}, (v + v):totable())
  end)

  it("leaves nothing on when the coroutine catches the error and is never resumed", function()
    local f = tide.trace(function(x)
      coroutine.yield()
      return x
    end)
    local co = coroutine.create(function()
      local ok, err = pcall(f, f32{1})
      coroutine.yield(ok, err) -- suspended for good
    end)
    local _, ok, err = coroutine.resume(co)
    assert.is_false(ok)
    assert.truthy(err:find("cannot yield across", 1, true))
    assert.are.equal("suspended", coroutine.status(co))
    assert_clean()
    -- the Function traces again for the same argument types (no "calls itself")
    local g = tide.trace(function(x) return x * 2 end)
    assert.are.same({4}, g(f32{2}):totable())
  end)

  it("inside GradientTape:run is refused, and the tape stops recording", function()
    local v = tide.Variable({1, 2})
    local tape = tide.GradientTape()
    local res = in_coroutine(function()
      return tape:run(function()
        local y = v * 2
        coroutine.yield(y)
        return y
      end)
    end)
    assert.is_false(res[1])
    assert.truthy(tostring(res[2]):find("cannot yield across GradientTape:run", 1, true))
    assert_clean()
    local kept = #tape._nodes
    for _ = 1, 10 do local _ = v * 3 end
    assert.are.equal(kept, #tape._nodes)
    -- the tape still gives the gradient of what it recorded before
    assert.is_true(kept > 0)
  end)

  it("inside tape:stop_recording is refused, and the tape records again", function()
    local x = tide.Variable(3.0)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local ok, err = pcall(function()
        return coroutine.wrap(function()
          return tape:stop_recording(function() coroutine.yield() end)
        end)()
      end)
      assert.is_false(ok)
      assert.truthy(err:find("cannot yield across GradientTape:stop_recording", 1, true))
      assert.is_false(tape._paused)
      return x * x
    end)
    assert.are.equal(6, tape:gradient(y, x):item())
    assert_clean()
  end)

  it("inside tide.custom_gradient's function is refused, and no tape stays paused", function()
    local f = tide.custom_gradient(function(x)
      coroutine.yield()
      return x, function(dy) return dy end
    end)
    local x = tide.Variable(2.0)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local res = in_coroutine(function() return f(x) end)
      assert.is_false(res[1])
      assert.truthy(tostring(res[2]):find("tide.custom_gradient", 1, true))
      assert.are.equal(1, #recorder.tapes)
      return x * 5
    end)
    assert.are.equal(5, tape:gradient(y, x):item())
    assert_clean()
  end)

  it("inside a traced tide.cond branch or while_loop body is refused; eagerly they may yield", function()
    local branch = tide.trace(function(x)
      return tide.cond(tide.reduce_sum(x):gt(0), function() coroutine.yield() return x end, function() return -x end)
    end)
    local res = in_coroutine(function() return branch(f32{1}) end)
    assert.is_false(res[1])
    assert.truthy(tostring(res[2]):find("cannot yield across a tide.cond branch or tide.while_loop body being " ..
      "traced (tide.trace)", 1, true))
    assert_clean()
    local loop = tide.trace(function(x)
      return tide.while_loop(function(i) return i:lt(3) end, function(i) coroutine.yield() return i + 1 end, {x})
    end)
    res = in_coroutine(function() return loop(tide.tensor(0)) end)
    assert.is_false(res[1])
    assert.truthy(tostring(res[2]):find("cannot yield across", 1, true))
    assert_clean()
    -- eager control flow is plain Lua: the yields reach the caller
    local gen = coroutine.wrap(function()
      local r = tide.cond(true, function() coroutine.yield("in cond") return 1 end, function() return 2 end)
      local n = tide.while_loop(function(i) return i < 2 end, function(i) coroutine.yield("in loop") return i + 1 end, {0})
      return r, n
    end)
    assert.are.equal("in cond", gen())
    assert.are.equal("in loop", gen())
    assert.are.equal("in loop", gen())
    local r, n = gen()
    assert.are.equal(1, r)
    assert.are.equal(2, n)
    assert_clean()
  end)

  it("allows coroutines that the function creates and resumes: their ops are recorded", function()
    local x = tide.Variable(2.0)
    local tape = tide.GradientTape()
    local y = tape:run(function()
      local gen = coroutine.wrap(function()
        for k = 1, 3 do coroutine.yield(x * k) end
      end)
      return gen() + gen() + gen() -- 6x
    end)
    assert.are.equal(6, tape:gradient(y, x):item())
    -- traced: the generator runs while the function is traced
    local f = tide.trace(function(a)
      local gen = coroutine.wrap(function() coroutine.yield(a * 2) coroutine.yield(a * 3) end)
      return gen() + gen()
    end)
    assert.are.same({5, 10}, f(f32{1, 2}):totable())
    assert_clean()
  end)

  it("is refused inside a coroutine resumed by a boundary's function, which goes on as before", function()
    local x = tide.Variable(2.0)
    local outer = tide.GradientTape()
    local y = outer:run(function()
      local co = coroutine.create(function()
        local inner = tide.GradientTape()
        return inner:run(function()
          coroutine.yield("across inner")
          return x
        end)
      end)
      local ok, err = coroutine.resume(co)
      assert.is_false(ok)
      assert.truthy(err:find("cannot yield across GradientTape:run", 1, true))
      assert.are.equal(1, #recorder.tapes)
      assert.are.equal(outer, recorder.tapes[1])
      return x * x * x
    end)
    assert.are.equal(12, outer:gradient(y, x):item())
    assert_clean()
  end)
end)

describe("the ways out of a boundary", function()
  it("undo nested tapes after a stack overflow, and later ops are not recorded (the 511 MB leak)", function()
    local function nest(n)
      if n == 0 then return 1 end
      return tide.GradientTape():run(nest, n - 1)
    end
    local ok, err = pcall(nest, 20000)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("stack overflow", 1, true))
    assert_clean()
    local v = tide.Variable(tide.zeros({25600})) -- 100 KB, trainable
    binding.collect()
    local before = tide.config.memory_info().current
    for _ = 1, 5000 do local _ = v * 2 end
    binding.collect()
    assert.is_true(tide.config.memory_info().current - before < 2 ^ 20)
  end)

  it("undo nested traces after a stack overflow", function()
    local f = tide.trace(function(x) return x + 1 end)
    for _ = 2, 6000 do
      local g = f
      f = tide.trace(function(x) return g(x) * 1 end)
    end
    local ok, err = pcall(f, f32{1, 2})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("stack overflow", 1, true))
    assert_clean()
  end)

  it("undo the state when an error handler itself overflows the stack", function()
    local function overflow() return 1 + overflow() end
    local tape = tide.GradientTape()
    local ok = xpcall(function()
      return tape:run(function() return tide.trace(function(x) error("boom") end)(f32{1}) end)
    end, overflow)
    assert.is_false(ok)
    assert_clean()
    -- a handler inside the boundary's function that overflows: the boundary goes on
    local x = tide.Variable(3.0)
    local y = tape:run(function()
      assert.is_false(xpcall(error, overflow, "inner"))
      return x * x
    end)
    assert.are.equal(6, tape:gradient(y, x):item())
    assert_clean()
  end)

  it("keep an error's value, and a boundary's results with their nils", function()
    local obj = { code = 7 }
    local ok, err = pcall(function() return tide.GradientTape():run(function() error(obj) end) end)
    assert.is_false(ok)
    assert.are.equal(obj, err)
    local a, b, c, d = tide.GradientTape():run(function() return 1, nil, 3, nil end)
    assert.are.same({1, nil, 3, nil}, {a, b, c, d})
    assert.are.equal(4, select("#", tide.GradientTape():run(function() return 1, nil, 3, nil end)))
    assert_clean()
  end)

  it("name the user's line for an error whose frames a tail call dropped", function()
    local f = tide.trace(function(x) return tide.reshape(x, {7}) end)
    local err = h.errors("reshape", function() local y = f(f32{1, 2}) return y end)
    assert.truthy(err:find("scope_spec.lua:%d+: reshape"), err)
    err = h.errors("reshape", function() local y = tide.GradientTape():run(tide.reshape, f32{1, 2}, {7}) return y end)
    assert.truthy(err:find("scope_spec.lua:%d+: reshape"), err)
  end)

  it("undo the state after out of memory (in a program of its own, under an address-space limit)", function()
    local dir = program.make_tmpdir("scope_oom")
    local script = dir .. "/oom.lua"
    program.write_file(script, [==[
local tide = require "tide"
local ffi = require "ffi"
local scope = require "tide.scope"
local recorder = require "tide.tape_recorder"
local context = require "tide.trace_context"
ffi.cdef[[ struct tide_test_rlimit { unsigned long cur, max; };
  int getrlimit(int, struct tide_test_rlimit *); int setrlimit(int, const struct tide_test_rlimit *); ]]

local RLIMIT_AS = 9
local function vmsize()
  local f = io.open("/proc/self/status")
  local s = f:read("*a")
  f:close()
  return tonumber(s:match("VmSize:%s*(%d+)")) * 1024
end
local old = ffi.new("struct tide_test_rlimit")
assert(ffi.C.getrlimit(RLIMIT_AS, old) == 0)
local v = tide.Variable(tide.zeros({1000}))
local function hog() local t = {} for i = 1, 1e9 do t[i] = {i, i} end end
-- fn under a limit of 64 MB more than now: Lua runs out of memory in hog
local function starve(fn)
  local lim = ffi.new("struct tide_test_rlimit", vmsize() + 64 * 2 ^ 20, old.max)
  assert(ffi.C.setrlimit(RLIMIT_AS, lim) == 0)
  local ok, err = pcall(fn)
  assert(ffi.C.setrlimit(RLIMIT_AS, old) == 0)
  collectgarbage()
  collectgarbage()
  return ok, err
end
local function state(ok, err)
  print(tostring(ok) .. " " .. tostring(err) .. " active=" .. tostring(recorder.active) .. " tapes=" ..
    #recorder.tapes .. " scope=" .. scope.n .. " traces=" .. #context.stack .. " building=" ..
    tostring(ffi.C.tide_graph_building() ~= nil) .. " print=" .. tostring(print == _G.print))
end
state(starve(function() return tide.GradientTape():run(function() local y = v * 2; hog() end) end))
local f = tide.trace(function(x) local y = x * v; hog(); return y end)
state(starve(function() return f(tide.zeros({1000})) end))
local g = tide.trace(function(x)
  return tide.cond(tide.reduce_sum(x):ge(0), function() hog() return x end, function() return x end)
end)
state(starve(function() return tide.GradientTape():run(function() return g(tide.zeros({3})) end) end))
print(tostring(v * 2 + 1):match("symbolic") or "eager")
]==])
    local rc, out, err = program.sh(dir, program.quote(program.path) .. " " .. program.quote(script))
    program.remove_tmpdir(dir)
    assert.are.equal(0, rc, err)
    local clean = " active=false tapes=0 scope=0 traces=0 building=false print=true"
    assert.are.equal(table.concat({
      "false not enough memory" .. clean,
      "false not enough memory" .. clean,
      "false not enough memory" .. clean,
      "eager", ""}, "\n"), out)
  end)

  it("undo the state after an error raised anywhere (a debug hook, as Ctrl-C at the REPL), at the latest when the REPL's line ends", function()
    local x = tide.Variable(2.0)
    local function step()
      local tape = tide.GradientTape()
      local f = tide.trace(function(a)
        local b = tide.cond(tide.reduce_sum(a):gt(0), function() return a * x end, function() return a end)
        return tape:stop_recording(function() return b + 1 end)
      end)
      return tape:run(function() return f(f32{1, 2}) end)
    end
    local armed, calls, at = false, 0, 0
    local function hook()
      calls = calls + 1
      if armed and calls == at then
        armed = false
        error("stdin:1: interrupted!", 0) -- what the REPL's Ctrl-C raises
      end
    end
    jit.off() -- count hooks run in the interpreter only
    -- the VM instructions of one step, then an error at every 5th of them
    at = -1
    debug.sethook(hook, "", 1)
    pcall(function()
      calls = 0
      step()
    end)
    debug.sethook()
    local total = calls
    local injected = 0
    for n = 1, total, 5 do
      at = n
      debug.sethook(hook, "", 1)
      local ok, err = pcall(function()
        calls, armed = 0, true
        local done, r = pcall(step)
        armed = false -- (here, whatever the step did: the hook fires inside this pcall only)
        if not done then error(r, 0) end
        return r
      end)
      armed = false
      debug.sethook()
      -- (an error caught by a pcall of tide's own can let the step finish)
      if not ok then
        assert.are.equal("stdin:1: interrupted!", err)
        injected = injected + 1
      end
      -- what an interrupted way out left is undone where the REPL's line ends
      if not ok then scope.reset() end
      assert_clean()
    end
    jit.on()
    assert.is_true(total > 1000)
    assert.is_true(injected > total / 5 / 2)
    assert.are.same({3, 5}, step():totable())
  end)

  it("are repaired at the next boundary when one's own way out failed and none runs", function()
    local stale = { _paused = false, _tracked = {}, _keep = function() end }
    scope.push(recorder.pop, stale) -- what a way out cut short leaves
    recorder.push(stale)
    assert.is_true(recorder.active)
    tide.GradientTape():run(function() end)
    assert_clean()
  end)
end)
