-- stdlib/tide/tracing/control_grad.lua — gradients through traced COND and
-- WHILE nodes, as TF 2 computes them: a cond's gradient is a cond on the
-- same predicate whose branches give each branch's VJP; a loop keeps each
-- iteration's loop variables as it runs (stacked), and its gradient is a
-- loop backwards over them applying the body's VJP.
--
-- A VJP is taken the way recompute_grad does: inside the gradient's own
-- subgraph a fresh tape watches the sources and runs the branch or body
-- again (its Lua side effects happen again, once per trace), then asks for
-- the gradient of sum(out * dy). The gradients are tide ops in subgraphs
-- traced by tide.cond and tide.while_loop themselves, so an outer tape
-- records them (a cond's gradient can be differentiated again).
local binding = require "tide.binding"
local recorder = require "tide.tape_recorder"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local context = require "tide.trace_context"
local scope = require "tide.scope"
local GradientTape = require("tide.tape").GradientTape
local spec = require "tide.tracing.spec"
local tensor_shape = require "tide.tensor_shape"
local values = require "tide.tracing.values"
local control = require "tide.tracing.control"
local pack, unpack = require("tide.varargs").pack, unpack or table.unpack
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor

local M = {}


-- The upvalues of Lua functions fns (and of the Lua functions among them,
-- a few levels deep), as {fn, index, value} each: taken before a branch or
-- loop is traced, so that running it again later sees the values it saw
-- then (`y = tide.cond(p, function() return y * 2 end, ...)` reassigns the
-- y the branch reads before any gradient runs the branch again).
function M.snapshot(fns)
  local saved, seen = {}, {}
  local function walk(f, depth)
    if seen[f] or depth > 4 or debug.getinfo(f, "S").what == "C" then return end
    seen[f] = true
    local i = 1
    while true do
      local name, v = debug.getupvalue(f, i)
      if not name then break end
      saved[#saved + 1] = { f, i, v }
      if type(v) == "function" then walk(v, depth + 1) end
      i = i + 1
    end
  end
  for _, f in ipairs(fns) do walk(f, 1) end
  return saved
end

-- Set the upvalues that snapshot `saved` lists to `values` (a replay's way
-- out: what they held before it).
local function put_upvalues(saved, values)
  for k = #saved, 1, -1 do debug.setupvalue(saved[k][1], saved[k][2], values[k]) end
end

-- f(...) run again for a gradient, with the upvalues of snapshot info.saved
-- put back meanwhile, the variables it reads pinned to what the forward node
-- read (info.pins: reads made just before it), and the trace context saying
-- so (replay): variable updates in it record nothing (the forward node made
-- them).
local function replay(info, f, ...)
  local saved = info.saved
  local g = C.tide_graph_building()
  for _, p in ipairs(info.pins or {}) do
    if C.tide_graph_pin_variable(g, p.handle, p.read) ~= 0 then binding.raise() end
  end
  local now = {}
  for k, u in ipairs(saved) do now[k] = select(2, debug.getupvalue(u[1], u[2])) end
  local mark = scope.enter() -- every way out puts the upvalues and the traces back (tide.scope)
  scope.push(put_upvalues, saved, now)
  scope.push(context.restore, #context.stack)
  for _, u in ipairs(saved) do debug.setupvalue(u[1], u[2], u[3]) end
  context.push(setmetatable({ replay = true }, { __index = context.current() }))
  return scope.call("a branch run again for its gradient", mark, f, ...)
end

local function is_float(t) return t and dtype.is_float[t.dt] or false end

-- The distinct tracked things a node's subgraphs used (see tape_stand_ins
-- in control.lua), as sources {key=, t=} (a captured outer tensor) or
-- {key=, var=} (a variable; key is its first read, which carries the
-- whole gradient of the variable on the outer tape).
local function sources(used)
  local seen, list = {}, {}
  local var_of = used.var_of or {}
  for _, t in ipairs(used) do
    local v = var_of[t]
    local id = v or t
    if not seen[id] then
      seen[id] = true
      list[#list + 1] = v and { key = t, var = v } or { key = t, t = t }
    end
  end
  return list
end

-- Zeros shaped like a source (a variable's are a constant of its shape).
local function zero_of(src)
  if src.var then return create.zeros_like(convert.variable_handle(src.var)) end
  return create.zeros_like(src.t)
end

-- The VJP of fn at the sources: fn() returns a flat list (with n) of
-- tensors or nils lined up with dys; returns, per source in watch, the
-- gradient of sum over k of sum(out_k * dy_k), zeros where none flows.
local function vjp(fn, dys, watch)
  local tape = GradientTape { watch_accessed_variables = false }
  for _, s in ipairs(watch) do tape:watch(s.var or s.t) end
  local total = tape:run(function() -- the product too: the tape must see it
    local outs, sum = fn(), nil
    for k = 1, outs.n do
      local out, dy = outs[k], dys[k]
      if out and dy and is_float(out) then
        local term = reduce.reduce_sum(math_ops.mul(out, dy))
        sum = sum and math_ops.add(sum, term) or term
      end
    end
    return sum
  end)
  local gs = {}
  if total then
    local srcs = {}
    for i, s in ipairs(watch) do srcs[i] = s.var or s.t end
    gs = tape:gradient(total, srcs)
  end
  for i, s in ipairs(watch) do
    if not gs[i] then gs[i] = zero_of(s) end
  end
  return gs
end

-- A COND node was built with outputs outs while tapes recorded; used lists
-- what its branches took from them. info: pred, true_fn, false_fn, saved
-- (a snapshot of them), pins (see replay), and flatten(packed branch
-- results) -> list lined up with outs.
function M.cond(used, outs, info)
  local srcs = sources(used)
  local inputs = {}
  for i, s in ipairs(srcs) do inputs[i] = s.key end
  recorder.custom(inputs, outs, function(dys)
    local function branch(fn)
      return function()
        local gs = vjp(function() return info.flatten(pack(replay(info, fn))) end, dys, srcs)
        return unpack(gs, 1, #srcs)
      end
    end
    return control.cond(info.pred, branch(info.true_fn), branch(info.false_fn))
  end)
end

-- Shape invariants from a loop variable's desc dims (-1 unknown), with
-- `lead` (a dim or tide.None) in front when given; dims nil (an unknown rank)
-- gives the invariant of unknown rank (stacked or not).
local function invariant(dims, lead)
  if dims == nil then return tensor_shape.unknown() end
  local s = {}
  if lead then s[1] = lead end
  for _, d in ipairs(dims) do s[#s + 1] = d == -1 and spec.None or d end
  s.n = #s
  return s
end

-- A WHILE node over flat loop tensors was built with outputs results while
-- tapes recorded; used lists what cond and body took from them. info:
-- saved (a snapshot of cond and body), pins (see replay) and
-- body_flat(tensors) -> flat list.
-- The node is made to keep its iteration count and each iteration's loop
-- tensors (stacked as it runs, in O(N): graph/while_stack.c, TF's
-- accumulators); the gradient is a loop from the last iteration down to the
-- first that applies the body's VJP at the loop tensors row j of the stacks
-- hold. The stacks are outputs of the node too, so a gradient that reached
-- them (a second order: the backward loop reads them) flows back as well.
function M.while_loop(used, flat, results, info)
  local srcs = sources(used)
  local nf = #flat
  local floats = {} -- positions of the float loop tensors, which carry gradients
  for k = 1, nf do
    if is_float(flat[k]) then floats[#floats + 1] = k end
  end
  local inputs = {}
  for k = 1, nf do inputs[k] = flat[k] end
  for i, s in ipairs(srcs) do inputs[nf + i] = s.key end
  local count, stacks = Tensor(), {}
  local arr = ffi.new("tide_tensor *[?]", nf)
  for k = 1, nf do
    stacks[k] = Tensor()
    arr[k - 1] = stacks[k]
  end
  local why
  if C.tide_graph_while_stack(C.tide_graph_building(), results[1], count, nf, arr) ~= 0 then
    why = select(2, pcall(binding.raise)) -- e.g. a loop tensor of the highest rank: its stack cannot be made
  end
  if why then -- a gradient through the loop says why when it is asked for
    recorder.custom(inputs, results, function() error(why, 0) end)
    return
  end
  binding.finish(count)
  for k = 1, nf do binding.finish(stacks[k]) end
  local outputs = {}
  for k = 1, nf do outputs[k], outputs[nf + k] = results[k], stacks[k] end
  recorder.custom(inputs, outputs, function(dys)
    -- Run the body's VJP for j = count-1 down to 0; the gradients carried
    -- are those of the loop tensors as iteration j+1 got them.
    local binit = { math_ops.sub(count, 1) }
    for i, k in ipairs(floats) do binit[1 + i] = dys[k] or create.zeros_like(results[k]) end
    for i, s in ipairs(srcs) do binit[1 + #floats + i] = zero_of(s) end
    local nb = #binit
    local back = pack(control.while_loop(function(j) return math_ops.greater_equal(j, 0) end, function(j, ...)
      local a = { ... }
      local state, watch, seeds = {}, {}, {}
      for k = 1, nf do state[k] = shape_ops.gather(stacks[k], j) end
      for i, k in ipairs(floats) do
        watch[i] = { t = state[k] }
        seeds[k] = a[i]
      end
      for _, s in ipairs(srcs) do watch[#watch + 1] = s end
      local gs = vjp(function() return replay(info, info.body_flat, state) end, seeds, watch)
      local out = { math_ops.sub(j, 1) }
      for i, k in ipairs(floats) do
        local d = dys[nf + k] -- a gradient that reached row j of the stack itself
        out[1 + i] = d and math_ops.add(gs[i], shape_ops.gather(d, j)) or gs[i]
      end
      for i = 1, #srcs do
        out[1 + #floats + i] = math_ops.add(a[#floats + i], gs[#floats + i])
      end
      return unpack(out, 1, nb)
    end, binit))

    local res = {}
    for i, k in ipairs(floats) do res[k] = back[1 + i] end
    for i = 1, #srcs do res[nf + i] = back[1 + #floats + i] end
    return unpack(res, 1, nf + #srcs)
  end)
end

control.set_gradients(M) -- cond and while_loop call these when a tape records

return M
