-- stdlib/tide/scope.lua — undoing the state tide sets around a call of user
-- code (a recording tape, a trace in progress, the C recorder, paused tapes)
-- on every way out: a return, an error, a stack overflow, out of memory;
-- and refusing a coroutine.yield across such a call, with a clear error.
--
-- A boundary (tape:run, a trace, a cond branch, ...) runs
--
--     local mark = scope.enter()
--     scope.push(undo, a, b)      -- before it changes the state
--     ...change the state...
--     return scope.call("GradientTape:run", mark, fn, ...)
--
-- and scope.call runs undo(a, b) for every entry above mark, newest first,
-- however fn ends. Undo actions are inverse assignments that allocate
-- nothing and tolerate a change that never happened. They live on one
-- stack, so a way out that itself fails (a stack overflow in its cleanup)
-- is repaired by the next boundary out, and entries left when no boundary
-- runs at all are undone when the next one starts.
--
-- Yields: a boundary's function runs in its caller's coroutine (running it
-- in a coroutine of its own would catch the yield, but with this LuaJIT,
-- compiled closures run that way read their caller's locals wrong: see
-- docs/architecture.md). So scope
-- counts the boundaries running in each coroutine and replaces
-- coroutine.yield (once, when tide loads) with one that refuses to yield a
-- coroutine from inside its own boundary. A coroutine that the function
-- creates and resumes has none of its own, so it yields to the function
-- as usual.
local REGISTRY_KEY = "tide.scope"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  n = 0,         -- slots in use on the undo stack (three per entry)
  running = 0,   -- boundaries running now, in every coroutine
}
registry[REGISTRY_KEY] = M

local running = coroutine.running
local select, unpack, error, pcall = select, unpack or table.unpack, error, pcall
local pack = require("tide.varargs").pack

local undo = {}                                      -- entries: fn, a, b
local MAIN = {}                                      -- the key of the main coroutine (running() is nil there)
local depth = setmetatable({}, { __mode = "k" })     -- coroutine -> boundaries running in it
local innermost = setmetatable({}, { __mode = "k" }) -- coroutine -> the innermost one's name

-- Run the undo actions above mark, newest first. An entry leaves the stack
-- after its action ran, so an action cut short (a stack overflow, an error
-- from a debug hook) runs again at the next unwind; the count drops before
-- the slots are cleared, so no cut leaves it naming a cleared entry.
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

-- The mark of a boundary starting now. Entries found while no boundary
-- runs are left over from one whose way out failed: undo them first.
function M.enter()
  if M.n > 0 and M.running == 0 then unwind(0) end
  return M.n
end

-- Note an undo action fn(a, b) (push it before changing the state it undoes).
function M.push(fn, a, b)
  local n = M.n
  undo[n + 1], undo[n + 2], undo[n + 3] = fn, a, b
  M.n = n + 3
end

-- The arguments as a list with their count in n (nils kept).

-- fn's results packed (run under pcall: out of memory in it is caught).
local function packed(fn, ...) return pack(fn(...)) end

-- Run fn(...) as the body of the boundary `what` (entered at mark), undo
-- the state pushed since mark, and return fn's results or raise its error.
function M.call(what, mark, fn, ...)
  local co = running() or MAIN
  local outer_depth, outer_name, outer_running = depth[co] or 0, innermost[co], M.running
  innermost[co] = what           -- the inserts that may allocate come first:
  depth[co] = outer_depth + 1    -- out of memory in them leaves nothing counted
  M.running = outer_running + 1
  local ok, res = pcall(packed, fn, ...)
  -- Assignments only, before anything that calls or allocates: the counts
  -- come back on every way out, a stack overflow or out of memory included.
  depth[co] = outer_depth > 0 and outer_depth or nil
  innermost[co] = outer_name
  M.running = outer_running
  unwind(mark)
  if not ok then error(res, 0) end
  return unpack(res, 1, res.n)
end

-- Undo everything and count no boundary running: for a host between two
-- top-level chunks, when nothing of tide's can be running (the REPL calls it
-- after a line that failed: an interrupt can cut a way out short anywhere).
function M.reset()
  unwind(0)
  M.running = 0
  for k in pairs(depth) do depth[k] = nil end
  for k in pairs(innermost) do innermost[k] = nil end
end

-- coroutine.yield, refused inside a boundary of the yielding coroutine.
local plain_yield = coroutine.yield
local function checked_yield(...)
  local co = running()
  local what = co and innermost[co]
  if what then
    error(string.format("cannot yield across %s: coroutine.yield was called inside the function it runs, which " ..
      "must return before its coroutine yields (what tide set up for that call, a recording tape or a trace in " ..
      "progress, holds only while it runs); yield before or after the call", what), 2)
  end
  return plain_yield(...)
end
coroutine.yield = checked_yield

return M
