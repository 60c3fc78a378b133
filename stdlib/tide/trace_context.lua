-- stdlib/tide/trace_context.lua — the state of traces in progress: which
-- graph ops record into, symbolic tensors (what they are, where they were
-- made), and the hooks variables use while a function is traced.
local binding = require "tide.binding"
local C = binding.C
local band = bit.band

local REGISTRY_KEY = "tide.trace_context"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  stack = {},      -- traces in progress, innermost last: { graph = cdata, fn = Function, ... }
  run_observer = nil, -- function(concrete_function) called at each run of a traced function
                      -- (tide.summary.trace_on sets it), or nil
}
registry[REGISTRY_KEY] = M

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC

-- True when t is a symbolic tensor (a value of a graph being or once traced).
function M.is_symbolic(t)
  return band(t.flags, SYMBOLIC) ~= 0
end

-- The innermost trace in progress, or nil.
function M.current()
  return M.stack[#M.stack]
end

-- While tracing, Lua's print runs once per trace, not at each call: say so
-- once (TF's side-effect trap), and point to tide.print.
local plain_print
local hinted = false
local function tracing_print(...)
  if not hinted then
    hinted = true
    io.stderr:write("tide: print() inside a traced function runs only while it is traced (once per trace); " ..
      "use tide.print to print at every call\n")
  end
  return plain_print(...)
end

-- Note that the trace ctx uses variable v: ctx.variables[v] is the order of
-- first use, so a trace's variables list (and what saves it) is the same
-- from run to run (pairs over userdata keys follows addresses).
function M.note_variable(ctx, v)
  local vars = ctx.variables
  if not vars[v] then
    local n = (ctx.n_variables or 0) + 1
    ctx.n_variables = n
    vars[v] = n
  end
end

-- The variables ctx used, in the order of first use.
function M.variables_in_order(ctx)
  local list = {}
  for v, i in pairs(ctx.variables) do list[#list + 1] = { v, i == true and math.huge or i } end
  table.sort(list, function(a, b) return a[2] < b[2] end)
  for i, p in ipairs(list) do list[i] = p[1] end
  return list
end

function M.push(ctx)
  M.stack[#M.stack + 1] = ctx
  if #M.stack == 1 and _G.print ~= tracing_print then
    plain_print = _G.print
    _G.print = tracing_print
  end
end

-- Back to the traces in progress when #M.stack was `height` (the way out of
-- a trace, run by tide.scope on every one; Lua's print comes back with 0).
function M.restore(height)
  local stack = M.stack
  for i = #stack, height + 1, -1 do stack[i] = nil end
  if #stack == 0 and _G.print == tracing_print then _G.print = plain_print end
end

function M.pop(ctx)
  assert(M.stack[#M.stack] == ctx, "tracing: traces ended out of order")
  M.restore(#M.stack - 1)
end

-- fn(...) as the function a trace runs: its frame marks where the trace
-- starts on the stack (user_line looks no further down).
local function pass(...) return ... end
local function run_traced(fn, ...) return pass(fn(...)) end
M.run_traced = run_traced

-- "file.lua:12" of the first caller outside tide's own files. LuaJIT drops
-- the frame of a function that tail-calls (`return tide.tanh(x)`): when the
-- walk up the stack meets the frame where the trace started before any
-- frame of the user's, the op came from such a tail call in the traced
-- function, and the line named is where that function starts. The walk
-- stops at the first frame of the user's, so an op costs the same at any
-- depth of nested traced calls.
function M.user_line()
  local level = 3
  while true do
    local info = debug.getinfo(level, "Slf")
    if not info then return "?" end
    if info.func == run_traced then break end
    if info.what ~= "C" and not binding.is_internal(info.source) then
      return info.short_src .. ":" .. (info.currentline or 0)
    end
    level = level + 1
  end
  local ctx = M.stack[#M.stack]
  local f = ctx and ctx.fn
  -- A library wrapper traced for the user (a tf.data map's) names the user's function as user_fn.
  local fn = type(f) == "table" and (rawget(f, "user_fn") or rawget(f, "fn"))
  if type(fn) ~= "function" then return "?" end
  local d = debug.getinfo(fn, "S")
  return string.format("%s:%d (a tail call in the traced function that starts there)", d.short_src, d.linedefined)
end

-- Note where symbolic tensor t was made (binding.finish calls this).
function M.annotate(t)
  local ctx = M.stack[#M.stack]
  if ctx and t.inline_data.sym.graph_id == C.tide_graph_id(ctx.graph) then
    C.tide_graph_set_origin(ctx.graph, t, M.user_line())
  end
end

binding.on_symbolic = M.annotate

return M
