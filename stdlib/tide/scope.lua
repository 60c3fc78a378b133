-- stdlib/tide/scope.lua — undoing the state tide sets around a call of user
-- code (a recording tape, a trace in progress, the C recorder, paused tapes)
-- on every way out: a return, an error, a stack overflow, out of memory, and
-- a coroutine.yield across it, which is refused with a clear error.
--
-- A boundary (tape:run, a trace, a cond branch, ...) runs
--
--     local mark = scope.enter()
--     scope.push(undo, a, b)      -- before it changes the state
--     ...change the state...
--     return scope.call("GradientTape:run", mark, fn, ...)
--
-- and scope.call runs undo(a, b) for every entry above mark, newest first,
-- however fn ends. Undo actions are inverse assignments that cannot fail
-- (and tolerate a change that never happened), kept on one stack, so that
-- an exit which itself fails (a stack overflow in its cleanup) is repaired
-- by the next boundary out.
--
-- Coroutines: the outermost boundary (none is running in this coroutine)
-- runs fn in a coroutine of its own. A yield inside fn then reaches that
-- boundary instead of suspending the state with it: the boundary unwinds
-- and raises "cannot yield across ...". Inner boundaries, running inside
-- that coroutine, only pcall. A coroutine that fn creates and resumes runs
-- while fn does, so it sees the state; its own boundaries are outermost in
-- it, so a yield out of them is refused too.
local binding = require "tide.binding"

local REGISTRY_KEY = "tide.scope"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  n = 0, -- slots in use on the undo stack (three per entry)
}
registry[REGISTRY_KEY] = M

local running, create, resume, status = coroutine.running, coroutine.create, coroutine.resume, coroutine.status
local error = error

local undo = {}                                      -- entries: fn, a, b
local guards = setmetatable({}, { __mode = "k" })    -- coroutines that run a boundary's fn
local active = {}                                    -- guards whose fn is running, outermost first

-- True while some guard's fn is running (it resumed the code running now).
-- A guard whose bookkeeping failed (out of memory) is dropped here.
local function guard_running()
  for i = #active, 1, -1 do
    local s = status(active[i])
    if s == "normal" or s == "running" then return true end
    active[i] = nil
  end
  return false
end

-- Run the undo actions above mark, newest first. An entry leaves the stack
-- after its action ran, so an action cut short (a stack overflow, an error
-- from a debug hook) runs again at the next unwind; and the count drops
-- before the slots are cleared, so no cut leaves it naming a cleared entry.
local function unwind(mark)
  local n = M.n
  while n > mark do
    local fn = undo[n - 2]
    if fn then fn(undo[n - 1], undo[n]) end
    M.n = n - 3
    undo[n - 2], undo[n - 1], undo[n] = nil, nil, nil
    n = n - 3
  end
end
M.unwind = unwind

-- The mark of a boundary starting now. Entries found when no boundary is
-- running are left over from one whose own cleanup failed: undo them first.
function M.enter()
  if M.n > 0 then
    local co = running()
    if not (co and guards[co]) and not guard_running() then unwind(0) end
  end
  return M.n
end

-- Note an undo action fn(a, b) (push it before changing the state it undoes).
function M.push(fn, a, b)
  local n = M.n
  undo[n + 1], undo[n + 2], undo[n + 3] = fn, a, b
  M.n = n + 3
end

-- The body of a guard coroutine.
local function body(fn, ...) return fn(...) end

-- A new guard coroutine, noted as running.
local function new_guard()
  local g = create(body)
  guards[g] = true
  active[#active + 1] = g
  return g
end

-- msg (raised in a guard with no line of the user's) with the position of
-- the user's line that called the boundary, if this coroutine has one.
local function placed(msg)
  binding.unplaced = nil
  local level = 2
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and not binding.is_internal(info.source) then
      return info.short_src .. ":" .. (info.currentline or 0) .. ": " .. msg
    end
    level = level + 1
  end
  binding.unplaced = msg -- for a guard further out
  return msg
end

-- The end of a boundary whose fn ran under pcall: unwind first (nothing is
-- allocated before, so out of memory cannot skip it), then results or error.
local function after_pcall(mark, ok, ...)
  unwind(mark)
  if not ok then error((...), 0) end
  return ...
end

-- The end of a boundary whose fn ran in guard g (resumed: ok, ...).
local function after_guard(what, mark, g, ok, ...)
  if active[#active] == g then active[#active] = nil end
  unwind(mark)
  if not ok then
    local err = ...
    if binding.unplaced ~= nil and rawequal(err, binding.unplaced) then err = placed(err) end
    error(err, 0)
  end
  if status(g) ~= "dead" then
    binding.error(string.format("cannot yield across %s: coroutine.yield was called inside the function it " ..
      "runs, which must return before its coroutine yields (what tide set up for that call, a recording tape " ..
      "or a trace in progress, holds only while it runs); yield before or after the call", what))
  end
  return ...
end

-- fn(...) in a new guard coroutine, then after_guard.
local function guarded(what, mark, fn, ...)
  local made, g = pcall(new_guard)
  if not made then
    unwind(mark)
    error(g, 0)
  end
  return after_guard(what, mark, g, resume(g, fn, ...))
end

-- Run fn(...) as the body of the boundary `what` (entered at mark), undo
-- the state pushed since mark, and return fn's results or raise its error.
function M.call(what, mark, fn, ...)
  local co = running()
  if co and guards[co] then return after_pcall(mark, pcall(fn, ...)) end
  return guarded(what, mark, fn, ...)
end

-- M.call, but fn always runs at the bottom of a coroutine of its own (a
-- trace: the Lua line of an op is looked for no further down).
M.call_apart = guarded

return M
