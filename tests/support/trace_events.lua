-- tests/support/trace_events.lua — reading the Chrome trace tide.profiler
-- writes, for the profiler specs:
--   local ev = require "trace_events"
--   local xs, names = ev.events_of(trace); ev.find_all(xs, pred); ev.inside(a, b)
local M = {}

-- The "X" (complete) events of a trace, and thread names by tid.
function M.events_of(trace)
  local xs, names = {}, {}
  for _, e in ipairs(trace.traceEvents) do
    if e.ph == "X" then xs[#xs + 1] = e
    elseif e.ph == "M" and e.name == "thread_name" then names[e.tid] = e.args.name end
  end
  return xs, names
end

-- The events for which pred(e) is true, in order.
function M.find_all(xs, pred)
  local out = {}
  for _, e in ipairs(xs) do if pred(e) then out[#out + 1] = e end end
  return out
end

-- inner lies within outer on the same thread (1 µs of rounding allowed).
function M.inside(inner, outer)
  return inner.tid == outer.tid and inner.ts >= outer.ts - 0.001 and
    inner.ts + inner.dur <= outer.ts + outer.dur + 0.002
end

return M
