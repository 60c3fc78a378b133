-- stdlib/tide/summary/graph.lua — traced graphs for TensorBoard's graph
-- dashboard: summary.graph, trace_on/trace_off/trace_export (TF2's names).
--
--   tide.summary.trace_on{graph = true}
--   step(x, y)                         -- a tide.trace'd function runs
--   writer:as_default(function() tide.summary.trace_export{name = "step", step = 0} end)
local binding = require "tide.binding"
local args = require "tide.args"
local context = require "tide.trace_context"
local variable = require "tide.variable"
local defaults = require "tide.summary.defaults"
local ffi, C = binding.ffi, binding.C

local M = {}
local fmt = string.format

-- The ConcreteFunctions a value stands for: a ConcreteFunction, or each
-- concrete function a traced Function has made so far.
local function concretes_of(fn, what)
  if type(fn) == "table" and fn._g ~= nil and fn.graph ~= nil then return { fn } end
  if type(fn) == "table" and type(fn._concrete) == "table" then
    if #fn._concrete == 0 then
      binding.error(what .. ": the traced function has not been traced yet; call it (or get_concrete_function) first")
    end
    return fn._concrete
  end
  binding.error(what .. ": expected a traced function (tide.trace) or one of its concrete functions, got " ..
    type(fn))
end

-- The name of each graph input: the TensorSpec's name, else the Lua
-- parameter's name for a top-level tensor argument, else nil (C: input_<i>).
local function input_names(cf)
  local names = {}
  local params = cf.function_ and cf.function_._params or {}
  for i, item in ipairs(cf._args.items or {}) do
    if item.kind == "tensor" and item.slot then names[item.slot] = item.name or params[i] end
  end
  return names
end

local function strings(list, n)
  local arr = ffi.new("const char *[?]", math.max(n, 1))
  for i = 1, n do arr[i - 1] = list[i] end
  return arr
end

-- cf's graph as a serialized TensorFlow GraphDef (a Lua string), with every
-- node's name under `scope` when given ("train_function/").
function M.graph_def(cf, scope)
  local ins = input_names(cf)
  local n_in = tonumber(C.tide_graph_num_inputs(cf._g))
  local vars = cf.variables or {}
  local handles = ffi.new("tide_tensor *[?]", math.max(#vars, 1))
  local vnames = {}
  for i, v in ipairs(vars) do
    handles[i - 1] = variable.handle(v)
    vnames[i] = tostring(v.name or "Variable"):gsub(":%d+$", "")
  end
  local n_out = tonumber(C.tide_graph_num_outputs(cf._g))
  local bytes, len = ffi.new("uint8_t *[1]"), ffi.new("size_t[1]")
  local rc = C.tide_graph_tf_graph_def(cf._g, scope, n_in, strings(ins, n_in), 0, nil, #vars, handles,
    strings(vnames, #vars), bytes, len)
  local _ = { ins, vnames, vars }
  if rc ~= 0 then binding.raise() end
  local s = ffi.string(bytes[0], len[0])
  C.tide_graph_tf_graph_def_free(bytes[0])
  return s
end

-- The graphs of cfs as one GraphDef: one alone as it is; several each under
-- its function's name (made unique), so their nodes do not collide.
-- Returns the concatenated bytes (GraphDefs merge by concatenation) and the list.
local function graph_defs(cfs)
  local list = {}
  if #cfs == 1 then
    list[1] = M.graph_def(cfs[1])
  else
    local used = {}
    for i, cf in ipairs(cfs) do
      local name = (cf.name or "function"):gsub("[^%w_.%-]", "_")
      local base, k = name, 0
      while used[name] do k = k + 1; name = base .. "_" .. k end
      used[name] = true
      list[i] = M.graph_def(cf, name .. "/")
    end
  end
  return list
end

-- Write graphs (a list of GraphDef strings) with writer handle w.
local function write(w, tag, step, list)
  local n = #list
  local all = table.concat(list)
  local rc = C.tide_summary_write_graph(w, tag, step, ffi.cast("const uint8_t *", all), #all)
  if rc ~= 0 then binding.raise() end
  return n
end

-- The writer and step a graph summary goes to (nil: nothing to write).
local function target(what, step)
  local w = defaults.state.writer
  if w == nil or not defaults.recording() then return nil end
  if context.current() ~= nil then
    binding.error(what .. ": cannot be called inside a traced function (it writes the graphs of traced functions)")
  end
  return w:handle(what), step
end

-- summary.graph(fn, {step=0}): the graph of a traced function (each of its
-- concrete functions) or of a ConcreteFunction, to the default writer as the
-- run's graph (tf.summary.graph). True when written, false with no default writer.
function M.graph(fn, opts)
  -- a Function is a table of string keys: the options table is read by hand
  if opts ~= nil and type(opts) ~= "table" then opts = { step = opts } end
  local o = opts or {}
  for k in pairs(o) do
    if k ~= "step" then binding.error(fmt("summary.graph: unknown option '%s' (step)", tostring(k))) end
  end
  local cfs = concretes_of(fn, "summary.graph")
  local w = target("summary.graph")
  if not w then return false end
  local step = o.step == nil and 0 or defaults.resolve_step(o.step, "graph", "graph")
  write(w, nil, step, graph_defs(cfs))
  return true
end

-- Graph tracing (trace_on/trace_export): the concrete functions run since
-- trace_on, in first-run order.
local tracing = nil

local function observe(cf)
  if tracing.seen[cf] then return end
  tracing.seen[cf] = true
  tracing.list[#tracing.list + 1] = cf
end

-- trace_on{graph=true, profiler=false}: from now on, remember the graph of
-- every traced function that runs, for trace_export.
function M.trace_on(...)
  local o = args.parse("summary.trace_on", { "graph", "profiler", "profiler_outdir" }, ...)
  if o.profiler then
    binding.error("summary.trace_on: profiler=true is not supported (tide's profiler is tide.profiler); " ..
      "pass graph=true only")
  end
  if tracing then
    io.stderr:write("tide: summary.trace_on: tracing is already on; the graphs collected so far are kept\n")
    return
  end
  tracing = { seen = setmetatable({}, { __mode = "k" }), list = {}, graph = o.graph ~= false }
  context.run_observer = observe
end

-- trace_off(): stop and forget the graphs collected.
function M.trace_off()
  tracing = nil
  context.run_observer = nil
end

-- trace_export{name=, step=}: write the graphs of the traced functions run
-- since trace_on to the default writer (the run's graph, and under `name`
-- as tf.summary.trace_export's tagged graph), then stop tracing. Returns
-- the number of graphs written; 0 (with a warning) when none ran.
function M.trace_export(...)
  local o = args.parse("summary.trace_export", { "name", "step", "profiler_outdir" }, ...)
  if type(o.name) ~= "string" or o.name == "" then
    binding.error("summary.trace_export: name must be a non-empty string, e.g. trace_export{name = \"my_trace\", step = 0}")
  end
  if not tracing then
    binding.error("summary.trace_export: tracing is not on; call tide.summary.trace_on{graph = true} first")
  end
  local t = tracing
  M.trace_off()
  local w = target("summary.trace_export")
  if not w then return 0 end
  local step = defaults.resolve_step(o.step, "trace_export", o.name)
  if not t.graph then return 0 end
  if #t.list == 0 then
    io.stderr:write(fmt("tide: summary.trace_export '%s': no traced function ran since trace_on; nothing written\n",
      o.name))
    return 0
  end
  return write(w, o.name, step, graph_defs(t.list))
end

return M
