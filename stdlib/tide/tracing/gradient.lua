-- stdlib/tide/tracing/gradient.lua — a tape outside a traced function, as
-- TF does it: a call records one node, whose forward graph also gives the
-- values the backward needs (saved) and whose backward graph runs on them.
--
-- At the first call of a concrete function under a tape, fn is traced once
-- more with its gradient: fn runs under an inner tape into a forward graph,
-- then the tape's backward walk is traced, with symbolic output gradients,
-- into a backward graph built on top of it. The forward values the backward
-- uses are the ones it captured: the backward is detached to take them as
-- inputs (graph/split.c), and the forward gives them as extra outputs. A
-- call then runs the forward graph once (random draws, variable reads,
-- assignments and prints happen once, there) and keeps the saved values in
-- the tape node until the tape lets go of it; the gradient runs the backward
-- graph on them. The backward is itself a traced Function whose Lua
-- function walks the same tape again with the saved values standing in
-- (graph aliases), so a tape around the gradient differentiates it too.
local dtype = require "tide.dtype"
local binding = require "tide.binding"
local recorder = require "tide.tape_recorder"
local context = require "tide.trace_context"
local scope = require "tide.scope"
local zeros_like = require("tide.ops.create").zeros_like
local add = require("tide.ops.math").add
local variable = require "tide.variable"
local GradientTape = require("tide.tape").GradientTape
local spec = require "tide.tracing.spec"
local T = require "tide.tracing.trace_type"
local new_detector = require("tide.tracing.retracing").new_detector
local concrete = require "tide.tracing.concrete"
local Function = require("tide.tracing.function").Function
local pack, unpack = require("tide.varargs").pack, unpack or table.unpack
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local is_float = dtype.is_float
local variable_read = variable.read
local None = spec.None

local M = {}

local PASSES = C.TIDE_PASS_ALL

-- The dtype code of a Variable's value.
local function variable_dt(v) return variable.handle(v).dt end

-- The float variables the graph reads (only those can have gradients), kept
-- per concrete function.
local function float_variables(cf)
  local vars = cf._float_vars
  if vars then return vars end
  vars = {}
  for _, v in ipairs(cf.variables) do
    if is_float[variable_dt(v)] then vars[#vars + 1] = v end
  end
  cf._float_vars = vars
  return vars
end

-- True when cf has a float output (the ones a gradient flows into).
local function has_float_output(cf)
  local h = cf._has_float_out
  if h == nil then
    h = false
    for _, o in ipairs(cf._out_syms) do
      if is_float[o.dt] then h = true end
    end
    cf._has_float_out = h
  end
  return h
end

-- True when this call of cf must be recorded: it has a float output and a
-- recording tape tracks one of its tensors or watches a variable it reads.
function M.records(cf, slots)
  if not has_float_output(cf) then return false end
  if recorder.any_wanted(slots) then return true end
  local vars = float_variables(cf)
  if #vars == 0 then return false end
  local tapes = recorder.tapes
  for i = 1, #tapes do
    local tape = tapes[i]
    if not tape._paused then
      for _, v in ipairs(vars) do
        if tape:_watches_variable(v) then return true end
      end
    end
  end
  return false
end

---------------------------------------------------------------------------
-- Tracing fn with its gradient
---------------------------------------------------------------------------

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- A symbolic input of g of dtype code dt and dims (a list, None or -1
-- unknown; nil: an unknown rank).
local function graph_input(g, dt, dims)
  local t = Tensor()
  if dims == nil then
    if C.tide_graph_input(g, dt, C.TIDE_UNKNOWN_RANK, nil, t) ~= 0 then binding.raise() end
    return t
  end
  for i, d in ipairs(dims) do dims_buf[i - 1] = (d == None or d == -1) and -1 or d end
  if C.tide_graph_input(g, dt, #dims, dims_buf, t) ~= 0 then binding.raise() end
  return t
end

-- Dims of tensor t as a list (-1 unknown; nil for an unknown rank).
local function dims_of(t)
  if t.ndim < 0 then return nil end
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end

-- Set g's outputs to the tensors of list.
local function set_outputs(g, list)
  local arr = ffi.new("const tide_tensor *[?]", math.max(#list, 1))
  for i, t in ipairs(list) do arr[i - 1] = t end
  if C.tide_graph_set_outputs(g, #list, arr) ~= 0 then binding.raise() end
end

-- "graph:node:index" naming the value of symbolic tensor t (nil for an eager one).
local function value_key(t)
  if bit.band(t.flags, C.TIDE_TENSOR_SYMBOLIC) == 0 then return nil end
  local s = t.inline_data.sym
  return tostring(s.graph_id) .. ":" .. tonumber(s.node) .. ":" .. tonumber(s.index)
end

-- The trace in progress notes the aliases made in it (foreign value key ->
-- { sym = the foreign tensor, to = the local one }), so that a backward of
-- a backward (third order) can alias them again: values of the first
-- forward stay in use through every later backward.
local function note_alias(foreign, to)
  local ctx = context.current()
  if not ctx then return end
  ctx.aliases = ctx.aliases or {}
  ctx.aliases[value_key(foreign)] = { sym = foreign, to = to }
end

-- The tensors the tape knows (nodes' inputs and outputs, variable reads,
-- watched placeholders) by the value of g they name (key -> list): an op of
-- the backward uses a value through any of them. A tensor of another graph
-- that an alias made stand for a value of g counts as naming it.
local function tape_objects(tape, resolve, placeholders)
  local by_key, seen = {}, {}
  local function note(t)
    if seen[t] then return end
    seen[t] = true
    local key = resolve(t)
    if key then
      local list = by_key[key]
      if not list then
        list = {}
        by_key[key] = list
      end
      list[#list + 1] = t
    end
  end
  for _, node in ipairs(tape._nodes) do
    for _, t in ipairs(node.inputs) do note(t) end
    for _, t in ipairs(node.outputs) do note(t) end
  end
  for _, reads in pairs(tape._reads) do
    for _, r in ipairs(reads) do note(r) end
  end
  for _, p in pairs(placeholders) do note(p) end
  return by_key
end

-- The gradients of the pair's sources (fn's tensors, then the variables it
-- read; nil where none flows), or of those listed in `only` (positions),
-- given seeds of its float outputs and, for extra, of the saved values
-- listed in pair.full_idx.
local function backward_walk(pair, seeds, extra, only)
  local targets, out_seeds = {}, {}
  for j, t in ipairs(pair.targets) do
    targets[j] = t
    out_seeds[j] = seeds[j]
  end
  for j, i in ipairs(extra and pair.full_idx or {}) do
    targets[#targets + 1] = pair.objects[i][1]
    out_seeds[#out_seeds + 1] = extra[j]
  end
  local srcs = pair.srcs
  if only then
    srcs = {}
    for j, i in ipairs(only) do srcs[j] = pair.srcs[i] end
  end
  return pair.tape:gradient(targets, srcs, { output_gradients = out_seeds })
end

-- The Lua function of a backward Function: (output seeds..., [saved
-- values' seeds...,] saved values...) -> the sources' gradients. It walks
-- the forward's tape again with the saved values standing in for the
-- forward values they hold: in the graph (aliases), and for tapes that
-- record it (a node from each saved value to the tensors that named it, so
-- a second-order gradient reaches the saved values).
local function backward_lua(pair, full, only)
  local nfo, nsaved = #pair.targets, pair.nsaved
  local nextra = full and #pair.full_idx or 0
  return function(...)
    local a = { ... }
    local g = C.tide_graph_building()
    for i = 1, nsaved do
      local p = a[nfo + nextra + i]
      if C.tide_graph_alias(g, pair.saved_syms[i], p) ~= 0 then binding.raise() end
      note_alias(pair.saved_syms[i], p)
      for _, f in ipairs(pair.saved_foreign[i]) do
        if C.tide_graph_alias(g, f, p) ~= 0 then binding.raise() end
        note_alias(f, p)
      end
      local objs = pair.objects[i]
      if recorder.active and objs and is_float[p.dt] then
        recorder.custom({ p }, objs, function(dys)
          local s
          for k = 1, #objs do
            if dys[k] then s = s and add(s, dys[k]) or dys[k] end
          end
          return s
        end)
      end
    end
    local seeds, extra = {}, nil
    for j = 1, nfo do seeds[j] = a[j] end
    if full then
      extra = {}
      for j = 1, nextra do extra[j] = a[nfo + j] end
    end
    local gs = backward_walk(pair, seeds, extra, only)
    return unpack(gs, 1, only and #only or #pair.srcs)
  end
end

-- A backward Function of the pair (full: also taking the saved values'
-- seeds; only: giving the gradients of those sources alone) for these input
-- specs. Its traces are not the user's retracing (they share the one Lua
-- prototype above), so it has a detector of its own.
local function backward_function(pair, full, sig, only)
  local name = pair.name .. (full and "_backward_full" or "_backward")
  local bwd = Function(backward_lua(pair, full, only), { input_signature = sig, name = name })
  bwd._detector = new_detector()
  bwd._quiet = true
  return bwd
end

-- The pair's first-order backward Function, holding the backward graph
-- already traced with the forward as its one concrete function.
local function adopt_backward(pair, b, grads, bvars)
  local sig, slots = {}, {}
  for j, t in ipairs(pair.targets) do sig[j] = spec.TensorSpec(T.tensor_dims(t), dtype.names[t.dt]) end
  for i, s in ipairs(pair.saved_syms) do sig[#pair.targets + i] = spec.TensorSpec(T.tensor_dims(s), dtype.names[s.dt]) end
  pair.sig = sig
  local bwd = backward_function(pair, false, sig)
  local template = T.spec_template(#sig, slots, unpack(sig, 1, #sig))
  local out_template, outs = concrete.output_template(pack(unpack(grads, 1, #pair.srcs)))
  local cf = concrete.ConcreteFunction(bwd, b, template, #slots, out_template, outs, bvars)
  bwd._concrete[1] = cf
  bwd._traces = 1
  return bwd, cf
end

-- A way out of tracing a pair (tide.scope): the C side builds what it built before.
local tide_graph_abandon = C.tide_graph_abandon -- looked up now: a way out must not allocate
local function abandon_graph(g) tide_graph_abandon(g) end
-- Errors that say nothing of the function traced: the REPL's Ctrl-C, out of memory.
local function transient(err)
  return type(err) ~= "string" or err:find("interrupted!$") ~= nil or err:find("not enough memory", 1, true) ~= nil
end
local PAIR = "a traced function with its gradient (tide.trace under a GradientTape)"

-- Trace cf's fn with its gradient for the argument template `target`;
-- returns the pair: forward graph, backward Function and what they share.
local function trace_pair(cf, target)
  local fn = cf.function_
  local pair = { name = fn.name, nin = cf._nin }
  local g = ffi.gc(C.tide_graph_new(fn.name .. "_forward"), C.tide_graph_free)
  local b = ffi.gc(C.tide_graph_new(fn.name .. "_backward"), C.tide_graph_free)
  if g == nil or b == nil then binding.raise() end
  local ctx = { graph = g, fn = fn, variables = {}, first = false }
  local bctx = { graph = b, fn = fn, variables = {}, first = false }
  local grads
  local function trace_both()
    local placeholders = {}
    local function make_placeholders(t)
      if t.kind == "tensor" then
        placeholders[t.slot] = graph_input(g, dtype.codes[t.dtype], t.dims)
      elseif t.kind == "table" then
        for _, item in ipairs(t.items) do make_placeholders(item) end
      end
    end
    make_placeholders(target)
    local call_args = T.rebuild(target, placeholders)
    context.push(ctx)
    -- fn under a tape watching its float tensors and every float variable it reads
    local tape = GradientTape { persistent = true, watch_accessed_variables = false }
    tape._watches_variable = function(_, v) return is_float[variable_dt(v)] or false end
    local res = pack(tape:run(function()
      for i = 1, pair.nin do
        if is_float[placeholders[i].dt] then tape:watch(placeholders[i]) end
      end
      return fn.fn(unpack(call_args, 1, target.n))
    end))
    pair.out_template, pair.outs = concrete.output_template(res)
    pair.tape = tape
    pair.vars = tape:watched_variables()
    local srcs = {}
    for i = 1, pair.nin do srcs[i] = placeholders[i] end
    for i, v in ipairs(pair.vars) do srcs[pair.nin + i] = v end
    pair.srcs = srcs
    pair.targets, pair.fo = {}, {}
    for k, o in ipairs(pair.outs) do
      if is_float[o.dt] then
        pair.targets[#pair.targets + 1] = o
        pair.fo[#pair.fo + 1] = k
      end
    end
    -- the backward, on top of the forward: what it takes from it is captured
    if C.tide_graph_begin(b) ~= 0 then binding.raise() end
    context.push(bctx)
    local seeds = {}
    for j, t in ipairs(pair.targets) do seeds[j] = graph_input(b, t.dt, dims_of(t)) end
    grads = backward_walk(pair, seeds)
    local bouts = {}
    for i = 1, #srcs do
      if grads[i] then bouts[#bouts + 1] = grads[i] end
    end
    set_outputs(b, bouts)
    context.pop(bctx)
    if C.tide_graph_end(b) ~= 0 then binding.raise() end
    -- the values it captured: the backward's inputs after the seeds, the forward's outputs after fn's results
    local n = C.tide_graph_num_captures(b)
    local saved = {}
    local arr = ffi.new("tide_tensor *[?]", math.max(n, 1))
    for i = 1, n do
      saved[i] = Tensor()
      arr[i - 1] = saved[i]
    end
    if C.tide_graph_detach(b, n, arr) ~= 0 then binding.raise() end
    pair.saved_syms, pair.nsaved = saved, n
    local fouts = {}
    for k, o in ipairs(pair.outs) do fouts[k] = o end
    for i = 1, n do fouts[#pair.outs + i] = saved[i] end
    set_outputs(g, fouts)
    -- the tensors naming each saved value (for a second order through it),
    -- and the other graphs' values aliased to it (fn is itself a backward)
    local aliases = ctx.aliases or {}
    local gid = tostring(C.tide_graph_id(g)) .. ":"
    local function resolve(t)
      local key = value_key(t)
      if not key then return nil end
      local a = aliases[key]
      if a then key = value_key(a.to) end
      return key:sub(1, #gid) == gid and key or nil
    end
    local by_key = tape_objects(tape, resolve, placeholders)
    local foreign = {}
    for _, a in pairs(aliases) do
      local key = value_key(a.to)
      foreign[key] = foreign[key] or {}
      table.insert(foreign[key], a.sym)
    end
    pair.objects, pair.full_idx, pair.saved_foreign = {}, {}, {}
    for i = 1, n do
      local key = value_key(saved[i])
      local objs = by_key[key]
      pair.objects[i] = objs
      pair.saved_foreign[i] = foreign[key] or {}
      if objs and is_float[saved[i].dt] then pair.full_idx[#pair.full_idx + 1] = i end
    end
  end
  -- every way out ends both graphs (abandoning g ends b built on top of it)
  -- and pops the trace contexts (tide.scope)
  local mark = scope.enter()
  scope.push(abandon_graph, g)
  scope.push(context.restore, #context.stack)
  local ok, err = pcall(scope.call, PAIR, mark, function()
    if C.tide_graph_begin(g) ~= 0 then binding.raise() end
    return recorder.paused_as(PAIR, trace_both)
  end)
  if not ok then
    -- a failure of the moment (Ctrl-C, out of memory) is not the function's:
    -- raise it now rather than remember it as why the gradient cannot be traced
    if transient(err) then error(err, 0) end
    return nil, err
  end
  if C.tide_graph_finalize(g, PASSES) ~= 0 or C.tide_graph_finalize(b, PASSES) ~= 0 then
    return nil, ffi.string(C.tide_last_error())
  end
  local bvars = {}
  for _, v in ipairs(context.variables_in_order(bctx)) do bvars[#bvars + 1] = v end
  pair.forward = g
  pair.fvars = ctx.variables -- the variables the forward reads or assigns (kept alive with it)
  pair.backward, pair.backward_cf = adopt_backward(pair, b, grads, bvars)
  pair.nout = #pair.outs
  pair.ins = ffi.new("const tide_tensor *[?]", math.max(pair.nin, 1))
  pair.outarr = ffi.new("tide_tensor *[?]", math.max(pair.nout + pair.nsaved, 1))
  return pair
end

-- True when the template has a tensor with a None dim.
local function has_none(t)
  if t.kind == "tensor" then
    if t.dims == nil then return true end -- an unknown rank
    for _, d in ipairs(t.dims) do
      if d == None then return true end
    end
  elseif t.kind == "table" then
    for _, item in ipairs(t.items) do
      if has_none(item) then return true end
    end
  end
  return false
end

-- The template with the call's dims where it has None ones.
local function concrete_template(t, slots)
  if t.kind == "tensor" then
    local s = slots[t.slot]
    local dims = {}
    for i = 1, s.ndim do dims[i] = tonumber(s.dims[i - 1]) end
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    c.dims = dims
    return c
  elseif t.kind == "table" then
    local c = {}
    for k, v in pairs(t) do c[k] = v end
    c.items = {}
    for i, item in ipairs(t.items) do c.items[i] = concrete_template(item, slots) end
    return c
  end
  return t
end

-- "2x3,4": the call's tensors' dims (a per-shape pair's key).
local function shape_key(slots)
  local parts = {}
  for i, s in ipairs(slots) do
    local d = {}
    for k = 0, s.ndim - 1 do d[k + 1] = tostring(tonumber(s.dims[k])) end
    parts[i] = table.concat(d, "x")
  end
  return table.concat(parts, ",")
end

-- The pair for this call of cf: one for cf's own template (None dims stay
-- None); where tracing that fails (some gradients need static dims) one per
-- shape of the call; { why = message } when the gradient cannot be traced
-- at all (then the gradient raises it, as an eager tape would).
local function pair_for(cf, slots)
  local taped = cf._taped
  if not taped then
    taped = { by_shape = {} }
    cf._taped = taped
    local pair, why = trace_pair(cf, cf._args)
    taped.generic = pair or false
    taped.why = why
    taped.none = has_none(cf._args)
  end
  if taped.generic then return taped.generic end
  if not taped.none then return { why = taped.why } end
  local key = shape_key(slots)
  local pair = taped.by_shape[key]
  if not pair then
    local why
    pair, why = trace_pair(cf, concrete_template(cf._args, slots))
    pair = pair or { why = why }
    taped.by_shape[key] = pair
  end
  return pair
end

-- The pair's backward Function that also takes the saved values' seeds
-- (made when a gradient first reaches a saved value: a second order).
local function full_backward(pair)
  if pair.backward_full then return pair.backward_full end
  local sig = {}
  local function add_spec(t) sig[#sig + 1] = spec.TensorSpec(T.tensor_dims(t), dtype.names[t.dt]) end
  for _, t in ipairs(pair.targets) do add_spec(t) end
  for _, i in ipairs(pair.full_idx) do add_spec(pair.saved_syms[i]) end
  for _, s in ipairs(pair.saved_syms) do add_spec(s) end
  pair.backward_full = backward_function(pair, true, sig)
  return pair.backward_full
end

-- The pair's backward Function for the sources a tape needs (positions
-- in `only`, a subset): the gradients of the others are not computed (a
-- tape watching only the variables skips the data's gradient). Traced again
-- from the saved values when first asked for.
local function partial_backward(pair, only, key)
  pair.by_need = pair.by_need or {}
  local bwd = pair.by_need[key]
  if not bwd then
    bwd = backward_function(pair, false, pair.sig, only)
    pair.by_need[key] = bwd
  end
  return bwd
end

---------------------------------------------------------------------------
-- A call under a tape
---------------------------------------------------------------------------

-- The node's inputs: cf's tensors, then reads of the variables (read here,
-- so that each recording tape sees the reads it watches, as an eager read
-- would be seen).
local function node_inputs(nin, slots, vars)
  local inputs = {}
  for i = 1, nin do inputs[i] = slots[i] end
  for i, v in ipairs(vars) do inputs[nin + i] = variable_read(v) end
  return inputs
end

-- cf's graph when its gradient cannot be traced: the node's gradient
-- raises why.
local function call_untraceable(cf, slots, why)
  local inputs = node_inputs(cf._nin, slots, float_variables(cf))
  local outputs = cf:_run_outputs(slots)
  recorder.custom(inputs, outputs, function() error(why, 0) end)
  return cf:_results(outputs)
end

-- Run cf as the pair's forward graph on the call's tensors and record the
-- call as one node: inputs cf's tensors and the variables' reads, outputs
-- fn's results and the saved values; returns fn's results.
function M.call(cf, slots)
  local pair = pair_for(cf, slots)
  if pair.why then return call_untraceable(cf, slots, pair.why) end
  local nin, nout, nsaved = pair.nin, pair.nout, pair.nsaved
  local inputs = node_inputs(nin, slots, pair.vars)
  local all, arr = {}, pair.outarr
  for i = 1, nout + nsaved do
    all[i] = Tensor()
    arr[i - 1] = all[i]
  end
  local ins = pair.ins
  for i = 1, nin do ins[i - 1] = slots[i] end
  if C.tide_graph_run(pair.forward, nin, ins, nout + nsaved, arr) ~= 0 then binding.raise() end
  for i = 1, nout + nsaved do binding.finish(all[i]) end
  local outputs, saved = {}, {}
  for k = 1, nout do outputs[k] = all[k] end
  for i = 1, nsaved do saved[i] = all[nout + i] end
  recorder.custom(inputs, all, function(dys, needs)
    local args = {}
    for j, k in ipairs(pair.fo) do args[j] = dys[k] or zeros_like(outputs[k]) end
    local full = false
    for _, i in ipairs(pair.full_idx) do
      if dys[nout + i] then full = true end
    end
    local bwd, only = pair.backward, nil
    if full then -- a gradient reached a saved value (a second order through the backward)
      bwd = full_backward(pair)
      for _, i in ipairs(pair.full_idx) do args[#args + 1] = dys[nout + i] or zeros_like(saved[i]) end
    elseif needs then -- the sources this tape needs: when fewer than all, a backward for them alone
      local key = {}
      only = {}
      for i = 1, #inputs do
        local need = needs[inputs[i]] and true or false
        key[i] = need and "1" or "0"
        if need then only[#only + 1] = i end
      end
      if #only < #inputs then
        bwd = partial_backward(pair, only, table.concat(key))
      else
        only = nil
      end
    end
    for i = 1, nsaved do args[#args + 1] = saved[i] end
    local gs = pack(bwd(unpack(args, 1, #args)))
    if not only then return unpack(gs, 1, #pair.srcs) end
    local res = {}
    for j, i in ipairs(only) do res[i] = gs[j] end
    return unpack(res, 1, #pair.srcs)
  end)
  local out = T.rebuild(pair.out_template, outputs)
  return unpack(out, 1, pair.out_template.n)
end

concrete.set_tape_call(M.records, M.call)

return M
