-- stdlib/tide/tape.lua — tide.GradientTape (TF's, with run() for `with`),
-- stop_gradient, custom_gradient and recompute_grad. A tape keeps the nodes
-- of ops on tensors it tracks; gradient() walks them backwards calling each
-- op's gradient (tide.grad), which are tide ops themselves, so an outer tape
-- records them and higher-order gradients work.
local binding = require "tide.binding"
local class = require "tide.class"
local recorder = require "tide.tape_recorder"
local scope = require "tide.scope"
local variable = require "tide.variable"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local create = require "tide.ops.create"
local shape_ops = require "tide.ops.shape"
local dynamic_shape = require "tide.ops.dynamic_shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local add = math_ops.add
local is_symbolic = require("tide.tensor").is_symbolic
local ffi, Tensor = binding.ffi, binding.Tensor
local istype = ffi.istype
local is_variable = variable.is_variable
local pack, unpack = require("tide.varargs").pack, unpack or table.unpack

local M = {}

local GradientTape = class("GradientTape")
M.GradientTape = GradientTape

-- Float tensors carry gradients; integer and bool ones never do (as TF).
local function differentiable(t)
  return dtype.is_float[t.dt]
end

-- GradientTape{persistent=false, watch_accessed_variables=true}, as tf.GradientTape.
function GradientTape:__init(...)
  local o = args.parse("GradientTape", { "persistent", "watch_accessed_variables" }, ...)
  self.persistent = args.bool("GradientTape", "persistent", o.persistent, false)
  self.watch_accessed_variables = args.bool("GradientTape", "watch_accessed_variables",
    o.watch_accessed_variables, true)
  self._paused = false
  self._depth = 0     -- nesting of run() calls: the tape records while > 0
  self:reset()
end

-- Forget everything recorded (the tape can record again). Inside run, as
-- TF's reset in the context, recording goes on from a clean record.
function GradientTape:reset()
  self._nodes = {}
  self._tracked = setmetatable({}, { __mode = "k" }) -- tensor -> true (weak: dead tensors leave)
  self._watched_vars = {}                           -- Variable -> true (explicit watch)
  self._reads = {}                                  -- Variable -> list of read tensors
  self._var_order = {}                              -- Variables in first-read order
  self._used = false
  if self._depth > 0 then recorder.push(self) end     -- back on when gradient() had popped it
end

-- Called by the recorder: keep a node and track its float outputs.
function GradientTape:_keep(node)
  local nodes = self._nodes
  nodes[#nodes + 1] = node
  local tracked = self._tracked
  for _, out in ipairs(node.outputs) do
    if differentiable(out) then tracked[out] = true end
  end
end

-- True when reads of v are tracked: watched explicitly, or a trainable float
-- variable while watch_accessed_variables is on (TF's rule).
function GradientTape:_watches_variable(v)
  if self._watched_vars[v] then return true end
  return self.watch_accessed_variables and variable.is_trainable(v) and differentiable(variable.handle(v))
end

-- Called by Variable reads: r is a read of v that this tape tracks.
function GradientTape:_track_read(v, r)
  local reads = self._reads[v]
  if not reads then
    reads = {}
    self._reads[v] = reads
    self._var_order[#self._var_order + 1] = v
  end
  reads[#reads + 1] = r
  self._tracked[r] = true
end

-- The way out of tape:run (tide.scope runs it on every one): back to the
-- nesting depth it had, and off the recording tapes when that is 0.
local function end_run(tape, depth)
  tape._depth = depth
  if depth == 0 then recorder.pop(tape) end
end

-- tape:run(fn, ...): record while fn runs; returns fn's results. fn may not
-- yield across it (the tape would go on recording whatever runs meanwhile).
function GradientTape:run(fn, ...)
  if type(fn) ~= "function" then binding.error("GradientTape:run: expected a function, got " .. type(fn)) end
  if self._used then
    binding.error("GradientTape: this non-persistent tape already computed its gradients; make a new " ..
      "tape (or one with {persistent=true})")
  end
  local mark = scope.enter()
  scope.push(end_run, self, self._depth)
  self._depth = self._depth + 1
  if self._depth == 1 then recorder.push(self) end
  return scope.call("GradientTape:run", mark, fn, ...)
end

-- tape:watch(x): track a tensor (or a Variable, or a table of them). A
-- watched Variable is listed by watched_variables() from now on, as in TF.
function GradientTape:watch(x)
  if is_variable(x) then
    self._watched_vars[x] = true
    if not self._reads[x] then
      self._reads[x] = {}
      self._var_order[#self._var_order + 1] = x
    end
  elseif istype(Tensor, x) then
    if differentiable(x) then self._tracked[x] = true end
  elseif type(x) == "table" then
    for _, v in pairs(x) do self:watch(v) end
  else
    binding.error("GradientTape:watch: expected a tensor or a Variable, got " .. type(x))
  end
end

local function set_paused(tape, paused) tape._paused = paused end

-- tape:stop_recording(fn, ...): run fn without this tape recording.
function GradientTape:stop_recording(fn, ...)
  local mark = scope.enter()
  scope.push(set_paused, self, self._paused)
  self._paused = true
  return scope.call("GradientTape:stop_recording", mark, fn, ...)
end

-- The variables this tape saw read, in first-read order.
function GradientTape:watched_variables()
  local out = {}
  for i, v in ipairs(self._var_order) do out[i] = v end
  return out
end

-- The gradient table key of a source and the reads that make it up.
local function source_reads(tape, s)
  if is_variable(s) then return tape._reads[s] or {} end
  return { s }
end

local zeros_like, ones_like = create.zeros_like, create.ones_like

-- Map f over a source structure (a tensor, a Variable, or nested tables).
local function map_sources(s, f, path)
  if istype(Tensor, s) or is_variable(s) then return f(s, path) end
  if type(s) == "table" then
    local out = {}
    for k, v in pairs(s) do out[k] = map_sources(v, f, path .. "[" .. tostring(k) .. "]") end
    return out
  end
  binding.error(string.format("GradientTape:gradient: source%s must be a tensor or a Variable, got %s", path, type(s)))
end

-- Accumulate g into grads[t].
local function accumulate(grads, t, g)
  local prev = grads[t]
  grads[t] = prev and add(prev, g) or g
end

-- The seed of target i: ones, or output_gradients[i] (a Lua value broadcast
-- to the target's shape; a tensor must have its shape and dtype).
local function seed_of(t, seed, i)
  if seed == nil then return ones_like(t) end
  if not istype(Tensor, seed) then
    seed = convert.coerce(seed, t, "gradient", 3)
    if seed.ndim == 0 then -- a target of unknown rank: its shape when the graph runs
      return shape_ops.broadcast_to(seed, t.ndim < 0 and dynamic_shape.shape(t) or t.shape:as_list())
    end
  end
  if seed.dt ~= t.dt then
    binding.error(string.format("GradientTape:gradient: output_gradients[%d] is %s but target %d is %s", i,
      dtype.names[seed.dt], i, dtype.names[t.dt]))
  end
  if seed.ndim >= 0 and t.ndim >= 0 and seed.shape ~= t.shape then -- an unknown rank fits any (TF's is_compatible_with)
    binding.error(string.format("GradientTape:gradient: output_gradients[%d] has shape %s but target %d has shape %s",
      i, tostring(seed.shape), i, tostring(t.shape)))
  end
  return seed
end

-- The op gradients (tide.grad, a family file per op family) load at the
-- first gradient(): a script that only runs ops forward never pays for them.
local grad

-- Walk the nodes backwards from the seeded grads. A gradient is dropped once
-- its node used it (unless `keep`, a source, wants it), and a non-persistent
-- tape lets go of each node as it goes, so what only backward needed can be
-- collected during the walk rather than after it.
local function walk(tape, grads, keep)
  grad = grad or require "tide.grad"
  local nodes, tracked = tape._nodes, tape._tracked
  local release = not tape.persistent
  for i = #nodes, 1, -1 do
    local node = nodes[i]
    if release then nodes[i] = nil end
    local outs = node.outputs
    local dys, any = {}, false
    for k = 1, #outs do
      local out = outs[k]
      local g = grads[out]
      if g then
        dys[k], any = g, true
        if not keep[out] then grads[out] = nil end
      end
    end
    if any then
      local ins = node.inputs
      local n = #ins
      if n <= 3 then -- most ops: the gradients in locals, no table
        local d1, d2, d3 = grad.backward(node, dys, tracked)
        if d1 and tracked[ins[1]] then accumulate(grads, ins[1], d1) end
        if d2 and n > 1 and tracked[ins[2]] then accumulate(grads, ins[2], d2) end
        if d3 and n > 2 and tracked[ins[3]] then accumulate(grads, ins[3], d3) end
      else
        local dxs = pack(grad.backward(node, dys, tracked))
        for j = 1, n do
          local inp, g = ins[j], dxs[j]
          if g and tracked[inp] then accumulate(grads, inp, g) end
        end
      end
    end
  end
end

-- tape:gradient(target, sources, {output_gradients=, unconnected_gradients="none"|"zero"|"error"}):
-- d(sum of target) / d(each source), shaped like `sources`. Inside tape:run,
-- as TF: a persistent tape records the gradient's own ops (so it can
-- differentiate them again); a non-persistent one stops recording.
function GradientTape:gradient(target, sources, ...)
  local o = args.parse("gradient", { "output_gradients", "unconnected_gradients" }, ...)
  if self._used then
    binding.error("GradientTape:gradient: a non-persistent tape can compute gradients only once; create it " ..
      "with tide.GradientTape{persistent=true} to call gradient() again")
  end
  local unconnected = o.unconnected_gradients or "none"
  if unconnected ~= "none" and unconnected ~= "zero" and unconnected ~= "error" then
    binding.error("GradientTape:gradient: unconnected_gradients must be \"none\", \"zero\" or \"error\", got " ..
      tostring(unconnected))
  end
  if sources == nil then binding.error("GradientTape:gradient: sources are required") end

  -- Seed the targets.
  local single = istype(Tensor, target) or is_variable(target)
  local targets = single and { target } or target
  if type(targets) ~= "table" then
    binding.error("GradientTape:gradient: target must be a tensor (or a list of tensors), got " .. type(target))
  end
  -- output_gradients: a list matching the targets (TF's), or for one target
  -- its seed itself (a tensor, Variable or Lua value; {g} is the list of one).
  local seeds = o.output_gradients
  if seeds ~= nil then
    if istype(Tensor, seeds) or is_variable(seeds) or type(seeds) ~= "table" then
      seeds = { seeds }
    elseif single and #seeds ~= 1 then
      seeds = { seeds } -- a Lua value of the target's shape, e.g. {1, 10}
    elseif #seeds > #targets then
      binding.error(string.format("GradientTape:gradient: output_gradients has %d entries but there are %d " ..
        "targets (give one per target)", #seeds, #targets))
    end
    for i = 1, #targets do
      if is_variable(seeds[i]) then seeds[i] = variable.read_value(seeds[i]) end
    end
  end
  if not self.persistent then recorder.pop(self) end -- TF pops it: nothing more is recorded
  local grads = {}
  for i, t in ipairs(targets) do
    if is_variable(t) then t = variable.handle(t) end
    if not istype(Tensor, t) then
      binding.error(string.format("GradientTape:gradient: target %d must be a tensor, got %s", i, type(t)))
    end
    if differentiable(t) then accumulate(grads, t, seed_of(t, seeds and seeds[i], i)) end
  end

  -- The sources' tensors keep their gradients through the walk.
  local keep = {}
  map_sources(sources, function(s)
    for _, r in ipairs(source_reads(self, s)) do keep[r] = true end
  end, "")
  local ok, err = pcall(walk, self, grads, keep)
  if not ok then
    if not self.persistent then self._used = true end -- its nodes are partly gone
    error(err, 0)
  end

  -- Gather each source's gradient, shaped like the sources.
  local result = map_sources(sources, function(s, path)
    local g
    for _, r in ipairs(source_reads(self, s)) do
      local gr = grads[r]
      if gr then g = g and add(g, gr) or gr end
    end
    local t = is_variable(s) and variable.handle(s) or s
    if not g and differentiable(t) then -- (g == nil would run the tensor __eq metamethod)
      if unconnected == "zero" then
        g = zeros_like(t)
      elseif unconnected == "error" then
        binding.error(string.format("GradientTape:gradient: source%s (%s, shape %s) is not connected to the " ..
          "target: no op recorded on this tape used it (was it read inside tape:run?)",
          path == "" and "" or " " .. path, is_variable(s) and ("Variable '" .. s.name .. "'") or
          "tensor", tostring(t.shape)))
      end
    end
    return g
  end, "")
  if not self.persistent then
    self._used = true
    self._nodes = {}
    self._reads = {}
  end
  return result
end

---------------------------------------------------------------------------
-- Gradient control outside the tape
---------------------------------------------------------------------------

-- tide.stop_gradient(x): the same values, never tracked by any tape.
M.stop_gradient = recorder.stop_gradient

-- The tensor arguments of a call (Variables read through the tapes), in order.
local function tensor_args(op, list)
  local out = {}
  for i = 1, list.n do
    local v = list[i]
    if is_variable(v) then v = variable.read(v) end
    if istype(Tensor, v) then out[#out + 1] = v end
  end
  return out
end

-- A function's results as a list: its one table result, or the values themselves.
local function as_list(res)
  if res.n == 1 and type(res[1]) == "table" and not istype(Tensor, res[1]) then return res[1] end
  local out = {}
  for i = 1, res.n do out[i] = res[i] end
  return out
end

-- Run f(...) with no tape recording; returns f's results (packed) and the
-- variables it read that a recording tape would have tracked, in read order.
local function run_noting_variables(f, ...)
  local outer = recorder.tapes
  local probe = GradientTape { persistent = false }
  probe._keep = function() end -- it only notes variable reads; no node is kept
  probe._watches_variable = function(_, v)
    for i = 1, #outer do
      if not outer[i]._paused and outer[i]:_watches_variable(v) then return true end
    end
    return false
  end
  local res = pack(recorder.paused(function(...)
    recorder.push(probe) -- onto the paused (empty) list, which every way out of paused drops
    return f(...)
  end, ...))
  return res, probe:watched_variables()
end

-- "variable 'a'" or "variables 'a', 'b'".
local function variable_names(vars)
  local names = {}
  for i, v in ipairs(vars) do names[i] = "'" .. tostring(v.name) .. "'" end
  return (#vars == 1 and "variable " or "variables ") .. table.concat(names, ", ")
end

-- "[2, 3]" for t's dims (-1: unknown until a traced graph runs).
local function dims_text(t)
  if t.ndim < 0 then return "<unknown>" end
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tostring(tonumber(t.dims[i])) end
  return "[" .. table.concat(d, ", ") .. "]"
end

-- The gradients grad_fn returned (gs, a packed list), checked against the
-- inputs they belong to: each is nil (unconnected) or a tensor of its
-- input's dtype and shape (a Lua value converts to the input's dtype), as TF
-- checks them. `vars` are the variables after the ninputs arguments.
local function checked_grads(gs, inputs, ninputs, vars)
  local out = {}
  for k = 1, #inputs do
    local g, x = gs[k], inputs[k]
    local what = k <= ninputs and string.format("input %d", k) or
      string.format("variable '%s'", tostring(vars[k - ninputs].name))
    if g ~= nil then
      if is_variable(g) then g = variable.read(g) end
      if not istype(Tensor, g) then
        local tg = type(g)
        if tg ~= "number" and tg ~= "boolean" and tg ~= "table" then
          binding.error(string.format("custom_gradient: the gradient function returned a %s for %s; expected a " ..
            "tensor (or nil when it has no gradient)", tg, what))
        end
        g = convert.coerce(g, x, "custom_gradient", k)
      end
      if g.dt ~= x.dt then
        binding.error(string.format("custom_gradient: the gradient for %s is %s but the input is %s (%s)", what,
          dtype.names[g.dt], dtype.names[x.dt], dims_text(x)))
      end
      local same = g.ndim == x.ndim or g.ndim < 0 or x.ndim < 0 -- an unknown rank: checked when the graph runs
      for i = 0, g.ndim - 1 do
        if x.ndim < 0 then break end
        if not same then break end
        local a, b = g.dims[i], x.dims[i]
        same = a == b or a < 0 or b < 0
      end
      if not same then
        binding.error(string.format("custom_gradient: the gradient for %s has shape %s but the input has shape %s",
          what, dims_text(g), dims_text(x)))
      end
    end
    out[k] = g
  end
  return unpack(out, 1, #inputs)
end

-- tide.custom_gradient(f): f(...) returns y, grad_fn; the returned function
-- computes y and records one node whose gradient is grad_fn(dy...) (returning
-- one gradient per tensor argument, in order). f's own ops are not recorded.
-- When f reads variables a tape watches, grad_fn is called as
-- grad_fn(dy..., {variables = {v...}}) and returns, after the arguments'
-- gradients, a list of the variables' ones (TF's grad_fn(*dy, variables=)
-- returning (grad_inputs, grad_vars)).
function M.custom_gradient(f)
  if type(f) ~= "function" then binding.error("custom_gradient: expected a function, got " .. type(f)) end
  return function(...)
    local argv = pack(...)
    local inputs = tensor_args("custom_gradient", argv)
    local ninputs = #inputs
    local res, read = run_noting_variables(f, ...)
    local vars, is_arg = {}, {}                   -- as TF: the variables that are not arguments
    for i = 1, argv.n do
      if argv[i] then is_arg[argv[i]] = true end
    end
    for _, v in ipairs(read) do
      if not is_arg[v] then vars[#vars + 1] = v end
    end
    local grad_fn = res[res.n]
    if type(grad_fn) ~= "function" then
      binding.error("custom_gradient: the function must return its outputs and then a gradient function")
    end
    res.n = res.n - 1
    local outputs = {}
    for i = 1, res.n do
      if not istype(Tensor, res[i]) then binding.error("custom_gradient: output " .. i .. " is not a tensor") end
      outputs[i] = res[i]
    end
    if recorder.active then
      for _, v in ipairs(vars) do inputs[#inputs + 1] = variable.read(v) end
      recorder.custom(inputs, outputs, function(dys)
        local nout = #outputs
        local filled = {}
        for i = 1, nout do filled[i] = dys[i] or zeros_like(outputs[i]) end
        if #vars == 0 then
          local gs = pack(grad_fn(unpack(filled, 1, nout)))
          if gs.n > ninputs then
            binding.error(string.format("custom_gradient: the gradient function returned %d gradients for %d tensor " ..
              "input(s)", gs.n, ninputs))
          end
          return checked_grads(gs, inputs, ninputs, vars)
        end
        filled[nout + 1] = { variables = vars }
        local gs = pack(grad_fn(unpack(filled, 1, nout + 1)))
        local vg = gs[ninputs + 1]
        if type(vg) ~= "table" or istype(Tensor, vg) or is_variable(vg) then
          binding.error("custom_gradient: f reads " .. variable_names(vars) .. ", so its gradient function must " ..
            "return their gradients (a list, after the arguments' gradients), as TF's grad_fn(..., variables=) does")
        end
        local out = {}
        for k = 1, ninputs do out[k] = gs[k] end
        for k = 1, #vars do out[ninputs + k] = vg[k] end
        return checked_grads(out, inputs, ninputs, vars)
      end)
    end
    return unpack(res, 1, res.n)
  end
end

-- True for a function, or a table whose metatable has __call (a layer).
local function callable(f)
  if type(f) == "function" then return true end
  local mt = type(f) == "table" and getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

-- In a traced function the recomputation must wait for the backward pass and
-- stay apart from the forward pass (else CSE merges the two and every
-- intermediate stays alive): as TF's recompute_grad does, the float inputs f
-- is run on again take a data dependency on the incoming gradient dy (0, or
-- NaN where dy's first element is NaN). Eagerly nothing needs it.
local function after_gradient(x, dy)
  if dy == nil or not is_symbolic(dy) or not dtype.is_float[tonumber(x.dt)] then return x end
  local first = reduce_ops.reduce_sum(shape_ops.reshape(dy, { -1 }):slice { { 0, 1 } })
  local dt = dtype.names[tonumber(first.dt)]
  local dep = math_ops.where(math_ops.equal(first, first), convert.tensor(0, dt), convert.tensor(0 / 0, dt))
  return add(x, math_ops.cast(dep, x.dtype))
end

-- tide.recompute_grad(f): like f (a function, or a layer), but its
-- intermediates are not kept: the backward pass runs f again under a tape of
-- its own (gradient checkpointing). Variables f reads get their gradients too.
function M.recompute_grad(f)
  if not callable(f) then binding.error("recompute_grad: expected a function or a layer, got " .. type(f)) end
  return function(...)
    local argv = pack(...)
    if not recorder.active then return f(...) end
    -- Forward without keeping intermediates; note the variables f reads.
    local res, vars = run_noting_variables(f, ...)
    local inputs = tensor_args("recompute_grad", argv)
    local ninputs = #inputs
    for _, v in ipairs(vars) do inputs[#inputs + 1] = variable.read(v) end
    local outputs = as_list(res)
    recorder.custom(inputs, outputs, function(dys)
      local dy
      for k = 1, #outputs do dy = dy or dys[k] end
      -- f's tensor arguments, each after the gradient (Variables stay themselves)
      local again_args, again_inputs, k = {}, {}, 0
      for i = 1, argv.n do
        local v = argv[i]
        if istype(Tensor, v) then
          k = k + 1
          v = after_gradient(v, dy)
          again_inputs[k] = v
        elseif is_variable(v) then
          k = k + 1
          again_inputs[k] = inputs[k]
        end
        again_args[i] = v
      end
      local tape = GradientTape { persistent = false }
      local again = pack(tape:run(function()
        for j = 1, ninputs do tape:watch(again_inputs[j]) end
        return f(unpack(again_args, 1, argv.n))
      end))
      local outs = as_list(again)
      local srcs = {}
      for j = 1, ninputs do srcs[j] = again_inputs[j] end
      for _, v in ipairs(vars) do srcs[#srcs + 1] = v end
      local seeds, targets = {}, {}
      for j, out in ipairs(outs) do
        if dys[j] then
          targets[#targets + 1] = out
          seeds[#seeds + 1] = dys[j]
        end
      end
      local gs = tape:gradient(targets, srcs, { output_gradients = seeds })
      return unpack(gs, 1, #srcs)
    end)
    return unpack(res, 1, res.n)
  end
end

return M
