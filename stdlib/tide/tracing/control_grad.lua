-- stdlib/tide/tracing/control_grad.lua — gradients through traced COND and
-- WHILE nodes, as TF 2 computes them: a cond's gradient is a cond on the
-- same predicate whose branches give each branch's VJP; a loop's gradient
-- replays the loop to stack each iteration's loop variables, then runs a
-- loop backwards over them applying the body's VJP.
--
-- A VJP is taken the way recompute_grad does: inside the gradient's own
-- subgraph a fresh tape watches the sources and runs the branch or body
-- again (its Lua side effects happen again, once per trace), then asks for
-- the gradient of sum(out * dy). The gradients are tide ops in subgraphs
-- traced by tide.cond and tide.while_loop themselves, so an outer tape
-- records them (a cond's gradient can be differentiated again).
local recorder = require "tide.tape_recorder"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local context = require "tide.trace_context"
local GradientTape = require("tide.tape").GradientTape
local spec = require "tide.tracing.spec"
local tensor_shape = require "tide.tensor_shape"
local values = require "tide.tracing.values"
local control = require "tide.tracing.control"
local pack, unpack = recorder.pack, unpack or table.unpack

local M = {}

local MAX_VALUES = control.MAX_VALUES

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

-- f(...) run again for a gradient, with the upvalues of snapshot `saved`
-- put back meanwhile, and the trace context saying so (replay): variable
-- updates in it record nothing (the forward node made them).
local function replay(saved, f, ...)
  local now = {}
  for k, u in ipairs(saved) do
    now[k] = select(2, debug.getupvalue(u[1], u[2]))
    debug.setupvalue(u[1], u[2], u[3])
  end
  local ctx = setmetatable({ replay = true }, { __index = context.current() })
  context.push(ctx)
  local res = pack(pcall(f, ...))
  context.pop(ctx)
  for k = #saved, 1, -1 do debug.setupvalue(saved[k][1], saved[k][2], now[k]) end
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
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
  if src.var then return create.zeros_like(rawget(src.var, "_handle")) end
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
-- (a snapshot of them), and flatten(packed branch results) -> list lined
-- up with outs.
function M.cond(used, outs, info)
  local srcs = sources(used)
  if #srcs > MAX_VALUES then return end -- too many to differentiate in one node; the tape sees no path
  local inputs = {}
  for i, s in ipairs(srcs) do inputs[i] = s.key end
  recorder.custom(inputs, outs, function(dys)
    local function branch(fn)
      return function()
        local gs = vjp(function() return info.flatten(pack(replay(info.saved, fn))) end, dys, srcs)
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
-- descs (the loop tensors' {dt=, dims=}), max (-1: no bound), saved (a
-- snapshot of cond and body),
-- cond_flat(tensors) -> flag and body_flat(tensors) -> flat list.
function M.while_loop(used, flat, results, info)
  local srcs = sources(used)
  local nf = #flat
  local floats = {} -- positions of the float loop tensors, which carry gradients
  for k = 1, nf do
    if is_float(flat[k]) then floats[#floats + 1] = k end
  end
  -- the replay carries a counter, the loop tensors and their stacks; the
  -- backward loop a counter, the float ones' gradients and the sources'
  if 1 + 2 * nf > MAX_VALUES or 1 + #floats + #srcs > MAX_VALUES then return end
  local inputs = {}
  for k = 1, nf do inputs[k] = flat[k] end
  for i, s in ipairs(srcs) do inputs[nf + i] = s.key end
  recorder.custom(inputs, results, function(dys)
    -- 1. Replay the loop, stacking the loop tensors: row j of stack k is
    -- loop tensor k as iteration j got it (row count: the last one out).
    local init, inv = { convert.tensor(0, "int32") }, { {} }
    for k = 1, nf do
      init[1 + k] = flat[k]
      init[1 + nf + k] = shape_ops.expand_dims(flat[k], 0)
      inv[1 + k] = invariant(info.descs[k].dims)
      inv[1 + nf + k] = invariant(info.descs[k].dims, spec.None)
    end
    local fwd = pack(control.while_loop(function(_, ...)
      return replay(info.saved, info.cond_flat, { ... })
    end, function(i, ...)
      local a = { ... }
      local vars = { unpack(a, 1, nf) }
      local new = replay(info.saved, info.body_flat, vars)
      local out = { math_ops.add(i, 1) }
      for k = 1, nf do
        out[1 + k] = new[k]
        out[1 + nf + k] = shape_ops.concat({ a[nf + k], shape_ops.expand_dims(new[k], 0) }, 0)
      end
      return unpack(out, 1, 1 + 2 * nf)
    end, init, { maximum_iterations = info.max >= 0 and info.max or nil, shape_invariants = inv }))
    local count = fwd[1]
    local stacks = { unpack(fwd, 2 + nf, 1 + 2 * nf) }

    -- 2. Run the body's VJP for j = count-1 down to 0.
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
      local gs = vjp(function() return replay(info.saved, info.body_flat, state) end, seeds, watch)
      local out = { math_ops.sub(j, 1) }
      for i = 1, #floats do out[1 + i] = gs[i] end
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
