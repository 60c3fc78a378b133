-- stdlib/tide/tracing/gradient.lua — a tape outside a traced function: a
-- call of a concrete function records one node, whose gradient is itself a
-- traced function (TF's: the forward runs as one graph, so does the backward).
-- The backward function of a concrete function is made on the first gradient
-- through it: it takes the call's tensors and the upstream gradients, runs
-- fn again under a tape of its own inside its trace, and returns the
-- gradients of the tensors and of the float variables the graph reads.
local dtype = require "tide.dtype"
local binding = require "tide.binding"
local recorder = require "tide.tape_recorder"
local zeros_like = require("tide.ops.create").zeros_like
local variable_read = require("tide.variable").read
local GradientTape = require("tide.tape").GradientTape
local spec = require "tide.tracing.spec"
local T = require "tide.tracing.trace_type"
local new_detector = require("tide.tracing.retracing").new_detector
local concrete = require "tide.tracing.concrete"
local Function = require("tide.tracing.function").Function
local pack, unpack = recorder.pack, unpack or table.unpack
local is_float = dtype.is_float
local C = binding.C

local M = {}

-- The float variables the graph reads (only those can have gradients), kept
-- per concrete function: the order is the order of the node's inputs.
local function float_variables(cf)
  local vars = cf._float_vars
  if vars then return vars end
  vars = {}
  for _, v in ipairs(cf.variables) do
    if is_float[rawget(v, "_handle").dt] then vars[#vars + 1] = v end
  end
  cf._float_vars = vars
  return vars
end

-- The positions of the graph's float outputs (the ones a gradient flows into).
local function float_outputs(cf)
  local fo = cf._float_out
  if fo then return fo end
  fo = {}
  for k, o in ipairs(cf._out_syms) do
    if is_float[o.dt] then fo[#fo + 1] = k end
  end
  cf._float_out = fo
  return fo
end

-- True when this call of cf must be recorded: it has a float output and a
-- recording tape tracks one of its tensors or watches a variable it reads.
function M.records(cf, slots)
  if #float_outputs(cf) == 0 then return false end
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

-- True when a spec of the list has a None dim (or an unknown rank: shape nil).
local function has_none(sig)
  for _, sp in ipairs(sig) do
    if sp.shape == nil then return true end
    for _, d in ipairs(sp.shape) do
      if d == spec.None then return true end
    end
  end
  return false
end

-- The backward function of cf: a traced Function of (cf's tensors...,
-- upstream gradients of its float outputs...) returning the gradients of
-- those tensors, then of cf's float variables (nil where none flows). Its
-- input_signature is cf's own (None dims stay None), so it traces once,
-- unless its gradients need static dims (see below).
local function backward_function(cf)
  local fwd, args_t, nin = cf.function_, cf._args, cf._nin
  local slot_t = {}
  local function collect(t)
    if t.kind == "tensor" then slot_t[t.slot] = t
    elseif t.kind == "table" then
      for _, item in ipairs(t.items) do collect(item) end
    end
  end
  collect(args_t)
  local sig = {}
  for i = 1, nin do sig[i] = spec.TensorSpec(slot_t[i].dims, slot_t[i].dtype) end
  local fo = float_outputs(cf)
  for j, k in ipairs(fo) do
    local o = cf._out_syms[k]
    sig[nin + j] = spec.TensorSpec(T.tensor_dims(o), dtype.names[o.dt])
  end
  local vars = float_variables(cf)
  local function backward(...)
    local xs = { ... }
    -- Only what the node's inputs are: cf's tensors and its float variables
    -- (the outer tape decides which of them it wanted).
    local tape = GradientTape { watch_accessed_variables = false }
    local outs = tape:run(function()
      for i = 1, nin do
        if is_float[xs[i].dt] then tape:watch(xs[i]) end
      end
      for _, v in ipairs(vars) do tape:watch(v) end
      local a = T.rebuild(args_t, xs)
      local res = pack(fwd.fn(unpack(a, 1, args_t.n)))
      local flat = {}
      T.list_template(res.n, flat, unpack(res, 1, res.n)) -- the tensors in the graph's output order
      return flat
    end)
    local targets, seeds = {}, {}
    for j, k in ipairs(fo) do
      targets[j] = outs[k]
      seeds[j] = xs[nin + j]
    end
    local srcs = {}
    for i = 1, nin do srcs[i] = xs[i] end
    for i, v in ipairs(vars) do srcs[nin + i] = v end
    local gs = tape:gradient(targets, srcs, { output_gradients = seeds })
    return unpack(gs, 1, nin + #vars)
  end
  local name = fwd.name .. "_backward"
  local bwd = Function(backward, { input_signature = sig, name = name })
  if has_none(sig) then
    -- Some gradients read static dims (tide.grad's reduce and linalg ones
    -- reshape to the input's dims): with None dims those fail to trace, and
    -- the backward then traces once per shape it meets instead.
    local ok = pcall(bwd.get_concrete_function, bwd)
    if not ok then bwd = Function(backward, { name = name }) end
  end
  -- Its traces are not the user's retracing: every backward function shares
  -- the one Lua prototype above (the shared detector would count them all),
  -- and one traced per shape is the fallback above, not the user's doing.
  bwd._detector = new_detector()
  bwd._quiet = true
  return bwd
end

-- The gradients of the node's inputs (cf's tensors, then the reads of its
-- float variables) given its outputs' (dys[k], nil where none flowed).
local function backward(cf, inputs, outputs, dys)
  local bwd = cf._backward
  if not bwd then
    bwd = backward_function(cf)
    cf._backward = bwd
  end
  local nin = cf._nin
  local a = {}
  for i = 1, nin do a[i] = inputs[i] end
  local fo = cf._float_out
  for j, k in ipairs(fo) do a[nin + j] = dys[k] or zeros_like(outputs[k]) end
  local gs = pack(bwd(unpack(a, 1, nin + #fo)))
  return unpack(gs, 1, nin + #cf._float_vars)
end

-- True when cf's graph (its cond and while branches included) draws random
-- numbers, assigns variables or prints: the backward function runs fn again,
-- so its random numbers would differ from the forward's and its effects
-- would happen twice.
local function stateful(cf)
  local s = cf._stateful
  if s == nil then
    s = C.tide_graph_has_effects(cf.graph.handle) ~= 0
    cf._stateful = s
  end
  return s
end

-- Run cf on the call's tensors and record the call as one node: its inputs
-- are the tensors and reads of cf's float variables (read here, so that
-- each recording tape sees the reads it watches, as an eager read would be
-- seen); returns fn's results. A graph with stateful ops is not run: fn
-- runs eagerly (as under run_functions_eagerly), which is what it computes.
function M.call(cf, slots)
  if stateful(cf) then -- fn runs eagerly instead: the tapes see each op, each effect happens once
    local a = T.rebuild(cf._args, slots)
    return cf.function_.fn(unpack(a, 1, cf._args.n))
  end
  local inputs = {}
  local nin = cf._nin
  for i = 1, nin do inputs[i] = slots[i] end
  for i, v in ipairs(float_variables(cf)) do inputs[nin + i] = variable_read(v) end
  local outputs = cf:_run_outputs(slots)
  recorder.custom(inputs, outputs, function(dys) return backward(cf, inputs, outputs, dys) end)
  return cf:_results(outputs)
end

concrete.set_tape_call(M.records, M.call)

return M
