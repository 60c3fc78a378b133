-- stdlib/tide/initializers/init_scope.lua — run a function eagerly even while a
-- function is traced or a tape records (TF's tf.init_scope): initial values.
--
-- A layer first called inside tide.trace builds its weights there. Their
-- initial values must be eager tensors (a Variable's storage is filled once,
-- now), not graph nodes, and no tape should record making them. So the
-- graphs being built on this thread are ended for the call (innermost
-- first) and begun again after it in the same order, which restores each
-- one's parent and recorder exactly; the tapes are paused the same way.
-- Both are undone through tide.scope on every way out. The trace itself
-- stays in progress (tide.trace_context), so tide.Variable still applies
-- its rule: variables are made only on a function's first trace.
local binding = require "tide.binding"
local scope = require "tide.scope"
local recorder = require "tide.tape_recorder"
local C = binding.C

local M = {}

-- Undo: begin the ended graphs again, outermost first. tide_graph_begin
-- allocates nothing and refuses a graph that is already being built, so
-- running this twice (a cut-short way out) changes nothing.
local function resume(graphs)
  for i = #graphs, 1, -1 do C.tide_graph_begin(graphs[i]) end
end

-- fn(...) run eagerly with no tape recording; its results.
function M.run(fn, ...)
  if C.tide_graph_building() == nil and not recorder.active then return fn(...) end
  local graphs = {}
  local mark = scope.enter()
  scope.push(resume, graphs)
  scope.push(recorder.restore, recorder.tapes)
  local g = C.tide_graph_building()
  while g ~= nil do
    graphs[#graphs + 1] = g
    if C.tide_graph_end(g) ~= 0 then binding.raise() end
    g = C.tide_graph_building()
  end
  recorder.tapes = {}
  recorder.active = false
  return scope.call("tide.init_scope (making initial values)", mark, fn, ...)
end

return M
