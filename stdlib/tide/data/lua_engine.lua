-- stdlib/tide/data/lua_engine.lua — passes run in the Lua state (each stage's
-- reader is its module's, data/stages/), which engine opens a pass, and user functions called here.
--
-- A stage that needs Lua (a generator, an untraced function, window, ...)
-- runs here, and so do the stages above it, each read by its own module's
-- Lua reader; a subtree below it that runs wholly in C is opened there and
-- read from Lua.
local binding = require "tide.binding"
local structure = require "tide.data.structure"
local stage = require "tide.data.stage"
local c_engine = require "tide.data.c_engine"
local map_fn = require "tide.data.map_fn"

local M = {}
local pack = require("tide.varargs").pack

---------------------------------------------------------------------------
-- Which engine runs a pass
---------------------------------------------------------------------------

-- For specs and benches: with the switch on, every pass runs here, stage by
-- stage (the sources only C can read are still read by C under their Lua
-- reader), so that both engines can be held to the same answers.
local forced = false

-- Set the switch (true: the Lua engine runs every pass); returns its previous setting.
function M.force(on)
  local prev = forced
  forced = on == true
  return prev
end

-- True when a pass over ds runs in C: every stage of it can, and the switch is off.
function M.in_c(ds) return not forced and c_engine.supports(ds) end

-- A pass over ds in the engine that runs it: next() gives the next element's
-- components (a list) or nil at the end; close() ends it early.
function M.open_input(ds)
  if M.in_c(ds) then return c_engine.open(ds) end
  return M.open(ds)
end

-- A pass over ds whose own stage runs here (inputs open in the engine that runs them).
function M.open_lua(ds)
  return stage.of(ds).lua(ds, M.open_input)
end

-- A pass at the top: a forgotten iterator ends (a cache learns it was
-- partial) when it is collected. Closed exactly once: by hand, at its end or
-- by the collector (closing it again from the finalizer, during a full
-- collection, hung LuaJIT about once in 30 runs of interleave_parallel_spec).
function M.open(ds)
  local nextf, close = M.open_lua(ds)
  if close then
    local finished = false
    local proxy = newproxy(true)
    getmetatable(proxy).__gc = function() if not finished then finished = true; close() end end
    return function()
      if finished then return nil end
      local _ = proxy
      local flat = nextf()
      if flat == nil then finished = true; close() end
      return flat
    end, function() if not finished then finished = true; close() end end
  end
  return nextf, close
end

-- The first element of a pass over ds (its components), or nil when ds is empty.
function M.first_element(ds)
  local nextf, close = M.open_input(ds)
  local flat = nextf()
  if close then close() end
  return flat
end

---------------------------------------------------------------------------
-- User functions called on elements, one at a time
---------------------------------------------------------------------------

-- An element of fn's results (res packed), checked against a template
-- (nil: the first element's); the flat components and their template.
function M.results_flat(what, index, template, res)
  local t, leaves = structure.flatten_results(what, res.n, unpack(res, 1, res.n))
  if template and not structure.same(t, template) then
    binding.error(string.format("%s: element %d: the function returned a different structure than it did for " ..
      "the first element", what, index))
  end
  return leaves, t
end

-- Call fn on an element in Lua; its results (packed) or an error naming the element.
function M.call_eager(what, fn, template, flat, index)
  local res = pack(pcall(fn, structure.values(template, flat)))
  if not res[1] then
    binding.error(string.format("%s: the function failed on element %d: %s", what, index, tostring(res[2])))
  end
  return pack(unpack(res, 2, res.n))
end

-- A predicate's verdict on element i (filter, take_while): its traced graph
-- (ds.compiled) or, untraced, the Lua function ds.fn; either must give a
-- bool (a scalar tensor or a Lua boolean). Errors name `what` and the element.
function M.predicate(what, ds, flat, i)
  local keep
  if ds.compiled then
    local out, err = map_fn.run(ds.compiled, flat)
    if not out then binding.error(string.format("%s: the predicate failed on element %d: %s", what, i, err)) end
    keep = out[1]
  else
    local res = pack(pcall(ds.fn, structure.values(ds.input.template, flat)))
    if not res[1] then
      binding.error(string.format("%s: the predicate failed on element %d: %s", what, i, tostring(res[2])))
    end
    keep = res[2]
  end
  if binding.istensor(keep) then
    if keep.nelem ~= 1 or structure.dtype_name(keep) ~= "bool" then
      binding.error(string.format("%s: the predicate must return a bool scalar, got %s %s (element %d)", what,
        structure.dtype_name(keep), tostring(keep.shape), i))
    end
    keep = keep:item()
  end
  if type(keep) ~= "boolean" then
    binding.error(string.format("%s: the predicate must return a bool, got %s (element %d)", what, type(keep), i))
  end
  return keep
end

return M
