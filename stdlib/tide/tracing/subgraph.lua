-- stdlib/tide/tracing/subgraph.lua — tracing a cond branch or a loop body
-- into a subgraph of the graph being built, and making the node that owns it.
-- For tracing/control.lua, whose COND and WHILE nodes run them in C.
local binding = require "tide.binding"
local convert = require "tide.convert"
local context = require "tide.trace_context"
local scope = require "tide.scope"
local recorder = require "tide.tape_recorder"
local variable = require "tide.variable"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local pack = require("tide.varargs").pack

local M = {}

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- A symbolic input of g with dtype code dt and dims (-1 unknown; nil: an unknown rank).
local function graph_input(g, dt, dims)
  for i, d in ipairs(dims or {}) do dims_buf[i - 1] = d end
  local t = Tensor()
  if C.tide_graph_input(g, dt, dims and #dims or C.TIDE_UNKNOWN_RANK, dims_buf, t) ~= 0 then binding.raise() end
  return t
end

-- While a subgraph is traced, each recording tape is replaced by a
-- stand-in: tapes do not follow ops into subgraphs (their values exist only
-- inside the node). The stand-in notes in `used` the tensors the real tape
-- tracks that the subgraph uses (captured outer tensors, and its own reads
-- of watched variables, with used.var_of[read] = variable), so that the
-- node can get a gradient (tracing/control_grad.lua).
local function tape_stand_ins(used)
  used.var_of = used.var_of or {}
  local stand_ins = {}
  for i, tape in ipairs(recorder.tapes) do
    local tracked = setmetatable({}, { __index = tape._tracked })
    stand_ins[i] = {
      _paused = tape._paused,
      _tracked = tracked,
      _keep = function(_, node)
        for _, x in ipairs(node.inputs) do
          if rawget(tracked, x) == nil and tape._tracked[x] then used[#used + 1] = x end
        end
        for _, out in ipairs(node.outputs) do tracked[out] = true end
      end,
      _watches_variable = function(_, v) return tape:_watches_variable(v) end,
      _track_read = function(_, v, r)
        tape:_track_read(v, r) -- the read leads into the node: its gradient goes to v
        used[#used + 1] = r
        used.var_of[r] = v
      end,
    }
  end
  return stand_ins
end


-- The graph being built before g began is built again (a way out of
-- trace_sub; looked up now: a way out must not allocate).
local tide_graph_abandon = C.tide_graph_abandon
local function abandon_graph(g) tide_graph_abandon(g) end

-- Trace fn into a new graph built on top of the current one: descs
-- ({dt=, dims=} each) become its inputs, handed to make_args to build fn's
-- arguments. Returns the graph (finished, outputs not yet set) and fn's
-- results (packed). Lua side effects in fn happen now, once. Tracked
-- tensors of recording tapes that fn uses are appended to `used`.
local function trace_sub(name, fn, descs, make_args, used)
  local g = C.tide_graph_new(name)
  if g == nil then binding.raise() end
  g = ffi.gc(g, C.tide_graph_free)
  local outer = context.current()
  -- the branch belongs to the same traced function: its variables and
  -- first-trace flag; the variables it reads are noted in used.reads too
  local outer_vars = outer and outer.variables or {}
  local reads = used.reads or {}
  used.reads = reads
  local vars = setmetatable({}, { __newindex = function(t, k, v)
    rawset(t, k, v)
    outer_vars[k] = v
    reads[k] = true
  end })
  local ctx = setmetatable({ graph = g, variables = vars }, { __index = outer or { first = true } })
  -- Every way out (tide.scope) gives back the tapes, the graph being built
  -- and the traces in progress that were there before.
  local mark = scope.enter()
  scope.push(recorder.restore, recorder.tapes)
  scope.push(abandon_graph, g)
  scope.push(context.restore, #context.stack)
  local res = pack(scope.call("a tide.cond branch or tide.while_loop body being traced (tide.trace)", mark, function()
    if C.tide_graph_begin(g) ~= 0 then binding.raise() end
    context.push(ctx)
    -- Tapes do not follow ops into subgraphs: their values exist only inside the node.
    if recorder.active then recorder.tapes = tape_stand_ins(used) end
    local ins = {}
    for i, d in ipairs(descs) do ins[i] = graph_input(g, d.dt, d.dims) end
    return fn(make_args(ins))
  end))
  return g, res
end

-- A cond or while node owns its subgraphs once made. Their finalizers go
-- before the call and come back only when it fails: an error between the
-- two (a debug hook, an interrupt) then leaks a graph instead of freeing
-- one that a node still owns.
local tide_graph_free = C.tide_graph_free
local function disown(sub)
  ffi.gc(sub, nil)
  return sub
end
local function adopt(status, a, b)
  if status == 0 then return true end
  ffi.gc(a, tide_graph_free)
  ffi.gc(b, tide_graph_free)
  return false
end

-- The variable's tensor (what graphs name it by).
local variable_handle = convert.variable_handle

-- While tapes record: a read, in the graph being built and just before the
-- node, of each variable the node's subgraphs read (used.reads), so that a
-- gradient running them again reads these values (pinned, graph/split.c)
-- rather than the variables when the gradient runs.
local function pinned_reads(used)
  local pins = {}
  for v in pairs(used.reads or {}) do
    pins[#pins + 1] = { handle = variable_handle(v), read = variable.traced_read(v) }
  end
  return pins
end

-- Set g's outputs to the tensors in list.
local function set_outputs(g, list)
  local n = #list
  local arr = ffi.new("const tide_tensor *[?]", math.max(n, 1))
  for i, t in ipairs(list) do arr[i - 1] = t end
  if C.tide_graph_set_outputs(g, n, arr) ~= 0 then binding.raise() end
end

-- n blank headers for a node's results, and the array C fills.
local function result_headers(n)
  local outs = {}
  local arr = ffi.new("tide_tensor *[?]", math.max(n, 1))
  for i = 1, n do
    outs[i] = Tensor()
    arr[i - 1] = outs[i]
  end
  return outs, arr
end

M.trace_sub = trace_sub
M.disown = disown
M.adopt = adopt
M.pinned_reads = pinned_reads
M.set_outputs = set_outputs
M.result_headers = result_headers

return M
