-- tests/support/helpers.lua — small assertions shared by specs:
--   local h = require "helpers"
--   h.close(actual_table_or_tensor, expected_table, tol) -- the shape too, when expected has one
--   h.errors("substring of the message", fn, ...)
--   h.drop(fn) -- fn's iterators and passes, dropped and collected
--   h.threads() -- this process's threads now
--   h.threads_down_to(n) -- the same, once joined threads have left the count (waits up to 2 s)
--   local text, result = h.stderr_of(fn) -- what fn wrote to io.stderr
local M = {}

local function flatten(v, out)
  out = out or {}
  if type(v) == "table" then
    for i = 1, #v do flatten(v[i], out) end
  else
    out[#out + 1] = v
  end
  return out
end

-- Values of a tensor (or nested table) as a flat Lua list.
function M.values(v)
  if type(v) == "cdata" then v = v:totable() end
  return flatten(v)
end

-- The dims of a tensor or Variable, or of a nested Lua table (its first
-- element's, level by level); a flat list gives {n}, a plain value {}.
local function dims_of(v)
  if type(v) == "cdata" or type(v) == "userdata" then
    local ok, shape = pcall(function() return v.shape end)
    if ok and type(shape) == "table" then
      local d = {}
      for i = 1, #shape do d[i] = shape[i] end
      return d
    end
    return nil
  end
  local d = {}
  while type(v) == "table" do
    d[#d + 1] = #v
    v = v[1]
  end
  return d
end

local function dims_text(d) return "(" .. table.concat(d, ", ") .. ")" end

-- Assert elementwise |a - b| <= tol (+ tol * |b|); NaN matches NaN; strings
-- must be equal. When `expected` has a shape (a tensor, or a nested table:
-- {{1, 2}, {3, 4}} is 2 x 2), `actual` must have that shape; a flat list or a
-- number compares with any shape holding as many values.
function M.close(actual, expected, tol)
  tol = tol or 1e-6
  local t = type(expected)
  local want = (t == "cdata" or t == "userdata" or (t == "table" and type(expected[1]) == "table"))
    and dims_of(expected)
  if want then
    local got = dims_of(actual)
    if got and dims_text(got) ~= dims_text(want) then
      error(string.format("expected shape %s, got %s", dims_text(want), dims_text(got)), 2)
    end
  end
  local a, e = M.values(actual), M.values(expected)
  assert(#a == #e, string.format("expected %d values, got %d", #e, #a))
  for i = 1, #a do
    local x, y = a[i], e[i]
    local ok
    if type(y) == "boolean" or type(y) == "string" then ok = x == y
    elseif y ~= y then ok = x ~= x
    elseif y == math.huge or y == -math.huge then ok = x == y
    else ok = math.abs(x - y) <= tol + tol * math.abs(y) end
    assert(ok, string.format("value %d: expected %s, got %s", i, tostring(y), tostring(x)))
  end
end

-- Assert fn(...) raises an error whose message contains `needle` (plain text).
function M.errors(needle, fn, ...)
  local ok, err = pcall(fn, ...)
  assert(not ok, "expected an error containing '" .. needle .. "', but the call succeeded")
  err = tostring(err)
  assert(err:find(needle, 1, true), "expected an error containing '" .. needle .. "', got: " .. err)
  return err
end

-- This process's threads (the entries of /proc/self/task, as its status counts them).
function M.threads()
  local p = assert(io.open("/proc/self/status"))
  local s = p:read("*a")
  p:close()
  return tonumber(s:match("Threads:%s*(%d+)"))
end

-- This process's threads once those already joined have left the count:
-- the kernel still counts a thread for a moment after pthread_join has
-- returned for it (until its exit is finished), longer on a loaded machine.
-- Waits up to 2 s for the count to come down to `want`; returns the count.
function M.threads_down_to(want)
  local ffi = require "ffi"
  pcall(ffi.cdef, "int usleep(unsigned int usec);")
  local n = M.threads()
  for _ = 1, 400 do
    if n <= want then break end
    ffi.C.usleep(5000)
    n = M.threads()
  end
  return n
end

-- What fn() wrote to io.stderr (tide's one-time notes and warnings), and
-- fn's first result; an error in fn is raised again once stderr is back.
function M.stderr_of(fn)
  local real, got = io.stderr, {}
  io.stderr = { write = function(self, ...) for _, s in ipairs { ... } do got[#got + 1] = s end return self end }
  local ok, res = pcall(fn)
  io.stderr = real
  if not ok then error(res, 0) end
  return table.concat(got), res
end

-- Run fn (which makes iterators or passes and drops them midway) so that
-- nothing of it stays reachable, then collect: what fn made goes to the
-- finalizers now, deterministically. fn runs in a coroutine of its own, so
-- no dead stack slot of the caller's frame still holds one of its values
-- (LuaJIT marks every slot of a live frame), and JIT traces are flushed,
-- since a compiled trace keeps the closures it was specialized on (an
-- iterator called in a hot loop) as constants.
function M.drop(fn, ...)
  local co = coroutine.create(fn)
  local ok, err = coroutine.resume(co, ...)
  if not ok then error(debug.traceback(co, tostring(err)), 2) end
  assert(coroutine.status(co) == "dead", "h.drop: fn yielded instead of returning")
  co = nil
  if jit then jit.flush() end
  local binding = require "tide.binding"
  binding.collect()
  binding.collect() -- what the first cycle's finalizers let go of goes in the second
end

return M
