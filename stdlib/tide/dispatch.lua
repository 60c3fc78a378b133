-- stdlib/tide/dispatch.lua — running a registry op from Lua and offering it
-- to the tape recorder. Eager or traced, the C registry decides (a symbolic
-- input records a graph node). Builders for the hot one- and two-input ops,
-- a general runner with attributes, and the promotion of small inline
-- tensors before views share their storage.
local binding = require "tide.binding"
local convert = require "tide.convert"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local band = require("bit").band
local coerce, arg = convert.coerce, convert.arg
local recorder = require "tide.tape_recorder"

local M = {}

local track, raise, collect_for_retry = binding.track, binding.raise, binding.collect_for_retry
local INLINE = C.TIDE_TENSOR_INLINE

local attrs = ffi.new("tide_attrs")
local attrs_size = ffi.sizeof("tide_attrs")
local MAX_IN = 64
local ins = ffi.new("const tide_tensor *[?]", MAX_IN)
local outs = ffi.new("tide_tensor *[?]", 4)

-- The shared attribute block, zeroed. Fill it, then call run* at once.
function M.attrs()
  ffi.fill(attrs, attrs_size)
  return attrs
end

-- Write a Lua list of integers into attrs.ints.
function M.set_ints(a, list, op)
  local n = #list
  if n > C.TIDE_MAX_INTS then binding.error(string.format("%s: too many values (%d)", op, n)) end
  for i = 1, n do a.ints[i - 1] = list[i] end
  a.nints = n
end

local finish = binding.finish
M.finish = finish

-- Views share storage, so a small tensor keeping its data inline moves it
-- to a storage first (once) and gets its finalizer.
function M.promote(t)
  if band(t.flags, INLINE) ~= 0 then
    if C.tide_tensor_promote(t) ~= 0 then raise() end
    track(t)
  end
  return t
end

-- Ops of more than two outputs (all_reduce_sum over a bucket, a replayed
-- SavedModel node): the same call with an output array of their own.
local function run_many(op, a, inputs, nout)
  local res, out_arr = {}, ffi.new("tide_tensor *[?]", nout)
  for k = 1, nout do res[k] = Tensor() end
  local n = #inputs
  local in_arr = ffi.new("const tide_tensor *[?]", math.max(n, 1))
  local function fill()
    for i = 1, n do in_arr[i - 1] = inputs[i] end
    for k = 1, nout do out_arr[k - 1] = res[k] end
  end
  fill()
  if C.tide_op_run(op, a, n, in_arr, nout, out_arr) ~= 0 then
    if not collect_for_retry() then raise() end
    fill() -- finalizers may have run ops
    if C.tide_op_run(op, a, n, in_arr, nout, out_arr) ~= 0 then raise() end
  end
  for k = 1, nout do finish(res[k]) end
  if recorder.active and recorder.any_wanted(inputs) then recorder.op(op, a, inputs, res) end
  return unpack(res, 1, nout)
end

-- Run op with the given attrs on the inputs (a Lua list of tensors), giving
-- `nout` outputs (returned as multiple values). The input array holds raw
-- pointers, which keep nothing alive: the outputs are allocated first, so no
-- collection can run between filling the array and the call.
function M.run(op, a, inputs, nout)
  nout = nout or 1
  if nout > 2 then return run_many(op, a, inputs, nout) end
  local o1, o2 = Tensor(), nout > 1 and Tensor() or nil
  local n = #inputs
  local in_arr = n > MAX_IN and ffi.new("const tide_tensor *[?]", n) or ins
  for i = 1, n do in_arr[i - 1] = inputs[i] end
  outs[0] = o1
  if o2 then outs[1] = o2 end
  if C.tide_op_run(op, a, n, in_arr, nout, outs) ~= 0 then
    if not collect_for_retry() then raise() end
    for i = 1, n do in_arr[i - 1] = inputs[i] end -- finalizers may have run ops
    outs[0] = o1
    if o2 then outs[1] = o2 end
    if C.tide_op_run(op, a, n, in_arr, nout, outs) ~= 0 then raise() end
  end
  finish(o1)
  if o2 then finish(o2) end
  if recorder.active and recorder.any_wanted(inputs) then recorder.op(op, a, inputs, { o1, o2 }) end
  if o2 then return o1, o2 end
  return o1 -- exactly one value, so f(x, tide.zeros(...)) passes no extra nil
end

-- Run a one-input op with attrs.
function M.run1(op, a, x)
  local out = Tensor()
  ins[0] = x
  outs[0] = out
  if C.tide_op_run(op, a, 1, ins, 1, outs) ~= 0 then
    if not collect_for_retry() then raise() end
    ins[0] = x
    outs[0] = out
    if C.tide_op_run(op, a, 1, ins, 1, outs) ~= 0 then raise() end
  end
  finish(out)
  if recorder.active then recorder.op1(op, a, x, out) end
  return out
end

-- Run a view op: the input is promoted first so the result truly shares it.
function M.run_view(op, a, x)
  M.promote(x)
  return M.run1(op, a, x)
end

-- An op of one input and no attributes: tide.exp(x).
function M.unary(name, op)
  return function(x)
    if not istype(Tensor, x) then x = arg(x, name, 1) end
    local out = Tensor()
    if C.tide_op_unary(op, out, x) ~= 0 then raise() end
    finish(out)
    if recorder.active then recorder.op1(op, nil, x, out) end
    return out
  end
end

-- An op of two broadcast inputs: tide.add(a, b); a Lua number takes the
-- other operand's dtype.
function M.binary(name, op)
  return function(a, b)
    if not istype(Tensor, a) then a = coerce(a, b, name, 1) end
    if not istype(Tensor, b) then b = coerce(b, a, name, 2) end
    local out = Tensor()
    if C.tide_op_binary(op, out, a, b) ~= 0 then raise() end
    finish(out)
    if recorder.active then recorder.op2(op, a, b, out) end
    return out
  end
end

return M
