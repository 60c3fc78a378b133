-- stdlib/tide/tape_recorder.lua — the recorder between ops and gradient tapes.
-- Ops call recorder.op/op1/op2 only while recorder.active (some tape records),
-- so the eager path pays one table load when nothing records; nothing is
-- allocated for an op no tape tracks. A tape keeps a node for an op when one
-- of its inputs is tracked (watched, or produced by a node it kept); the
-- op's float outputs become tracked in turn. Also stop_gradient: a tensor
-- no tape tracks.
local binding = require "tide.binding"
local convert = require "tide.convert"
local scope = require "tide.scope"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor

-- One instance per Lua state, like tide.binding: a module loaded again after
-- package.loaded was cleared (busted does that between spec files) must
-- still see the tapes that the first instance's GradientTape pushed.
local REGISTRY_KEY = "tide.tape_recorder"
local registry = debug.getregistry()
if registry[REGISTRY_KEY] then return registry[REGISTRY_KEY] end

local M = {
  active = false,   -- true while at least one tape records
  tapes = {},       -- the tapes recording now, innermost last
}
registry[REGISTRY_KEY] = M

local NO_GRAD = {}
for op = 0, tonumber(C.TIDE_NUM_OPS) - 1 do
  NO_GRAD[op] = bit.band(C.tide_op_flags(op), C.TIDE_OPF_NO_GRAD) ~= 0
end

local attrs_ct = ffi.typeof("tide_attrs")
local attrs_size = ffi.sizeof(attrs_ct)

-- A node: what an op did, for its gradient. `op` is a registry code (its
-- gradient comes from tide.grad) unless `grad_fn` is set (custom gradients).
local function new_node(op, attrs, inputs, outputs, grad_fn)
  local saved
  if attrs ~= nil then
    saved = attrs_ct()
    ffi.copy(saved, attrs, attrs_size)
  end
  return { op = op, attrs = saved, inputs = inputs, outputs = outputs, grad_fn = grad_fn }
end

-- True when a recording, unpaused tape tracks t (an op on it makes a node).
local function wanted(t)
  local tapes = M.tapes
  for i = 1, #tapes do
    local tape = tapes[i]
    if not tape._paused and tape._tracked[t] then return true end
  end
  return false
end

-- True when a recording tape tracks one of the tensors of the list (asked
-- before building an op's output list).
function M.any_wanted(list)
  for k = 1, #list do
    if wanted(list[k]) then return true end
  end
  return false
end

-- Offer a node to every recording tape; each keeps it if it tracks an input.
local function offer(op, attrs, inputs, outputs, grad_fn)
  local node
  local tapes = M.tapes
  for i = 1, #tapes do
    local tape = tapes[i]
    if not tape._paused then
      local tracked = tape._tracked
      for k = 1, #inputs do
        if tracked[inputs[k]] then
          node = node or new_node(op, attrs, inputs, outputs, grad_fn)
          tape:_keep(node)
          break
        end
      end
    end
  end
end

-- An eager op ran: op code, its attrs (or nil), input and output lists.
function M.op(op, attrs, inputs, outputs)
  if NO_GRAD[op] then return end
  offer(op, attrs, inputs, outputs, nil)
end

-- An eager op of one input x and one output ran (attrs may be nil): the
-- node and its lists are made only when a tape tracks x.
function M.op1(op, attrs, x, out)
  if NO_GRAD[op] then return end
  local node
  local tapes = M.tapes
  for i = 1, #tapes do
    local tape = tapes[i]
    if not tape._paused and tape._tracked[x] then
      node = node or new_node(op, attrs, { x }, { out }, nil)
      tape:_keep(node)
    end
  end
end

-- An eager op of two inputs, no attrs and one output ran (the elementwise
-- binaries): the node is made only when a tape tracks a or b.
function M.op2(op, a, b, out)
  if NO_GRAD[op] then return end
  local node
  local tapes = M.tapes
  for i = 1, #tapes do
    local tape = tapes[i]
    if not tape._paused then
      local tracked = tape._tracked
      if tracked[a] or tracked[b] then
        node = node or new_node(op, nil, { a, b }, { out }, nil)
        tape:_keep(node)
      end
    end
  end
end

-- A custom node (custom_gradient, recompute_grad): grad_fn(dys) returns the
-- gradients of the inputs.
function M.custom(inputs, outputs, grad_fn)
  offer(nil, nil, inputs, outputs, grad_fn)
end

-- True when a recording tape (paused or not) tracks t: writing into t in
-- place would change values its nodes saved for the gradient.
function M.tracks(t)
  local tapes = M.tapes
  for i = 1, #tapes do
    if tapes[i]._tracked[t] then return true end
  end
  return false
end

-- Add a tape to the recording ones (innermost last; once).
function M.push(tape)
  local tapes = M.tapes
  for i = 1, #tapes do
    if tapes[i] == tape then return end
  end
  tapes[#tapes + 1] = tape
  M.active = true
end

-- Remove a tape from the recording ones (nothing when it is not there).
function M.pop(tape)
  local tapes = M.tapes
  for i = #tapes, 1, -1 do
    if tapes[i] == tape then
      table.remove(tapes, i)
      break
    end
  end
  M.active = #tapes > 0
end

-- Make `tapes` (a list M.tapes held before) the recording ones again.
function M.restore(tapes)
  M.tapes = tapes
  M.active = #tapes > 0
end

-- Run fn with every tape paused (nothing records); returns fn's results.
-- The tapes record again on every way out (tide.scope); `what` names the
-- call in the error of a yield across it.
function M.paused_as(what, fn, ...)
  local mark = scope.enter()
  scope.push(M.restore, M.tapes)
  M.tapes = {}
  M.active = false
  return scope.call(what, mark, fn, ...)
end

function M.paused(fn, ...)
  return M.paused_as("a function run with the tapes paused (tide.custom_gradient, tide.recompute_grad)", fn, ...)
end

-- tide.stop_gradient(x): the same values in a tensor of its own, which no
-- tape tracks (a Variable's own tensor is taken unread, so no tape notes it).
function M.stop_gradient(x)
  if convert.is_variable(x) then x = convert.variable_handle(x) end
  x = convert.arg(x, "stop_gradient")
  local r = Tensor()
  C.tide_tensor_share(r, x)
  if r.storage ~= nil then binding.track(r) end
  return r
end

return M
