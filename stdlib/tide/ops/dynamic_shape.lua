-- stdlib/tide/ops/dynamic_shape.lua — shapes as tensors (TF's tf.shape,
-- tf.size, tf.rank) and the shape arguments of creation and reshaping ops,
-- which may be such a tensor. A traced tensor whose dims are all known gets
-- its shape as a constant (as TF does); with unknown (None) dims the SHAPE op
-- computes it when the graph runs, and an op given that symbolic shape takes
-- it as an input (TIDE_OPF_SHAPE_INPUT) and sizes its result at run time.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local format = require "tide.format"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local SHAPE, SIZE = C.TIDE_OP_SHAPE, C.TIDE_OP_SIZE

-- FILL's attributes for int32 ones (its shape comes as an input).
local function fill_ones()
  local a = dispatch.attrs()
  a.scalars[0] = 1
  a.dtype = C.TIDE_INT32
  return a
end
local I32, I64 = C.TIDE_INT32, C.TIDE_INT64

-- The out_type option: int32 (default) or int64.
local function out_type(op, o)
  local dt = dtype.code(o.out_type or "int32", op)
  if dt ~= I32 and dt ~= I64 then
    binding.error(string.format("%s: out_type must be int32 or int64, got %s", op, dtype.names[dt]))
  end
  return dt
end

-- x's dims as a Lua list (unknown ones -1), and whether all are known (never
-- for an unknown rank: then the list is empty).
local function dims_of(x)
  if x.ndim < 0 then return {}, false end
  local d, known = {}, true
  for i = 0, x.ndim - 1 do
    d[i + 1] = tonumber(x.dims[i])
    known = known and d[i + 1] >= 0
  end
  return d, known
end
M.dims_of = dims_of

-- Run SHAPE or SIZE on x, or give the constant a traced x with known dims has.
local function shape_op(op, name, x, o, value)
  if x == nil then binding.error(name .. ": expects a tensor") end
  x = convert.arg(x, name)
  local dt = out_type(name, o)
  if tensor.is_symbolic(x) then
    local dims, known = dims_of(x)
    if known then return convert.tensor(value(dims), dtype.names[dt], name) end
  end
  local a = dispatch.attrs()
  a.dtype = dt
  return dispatch.run1(op, a, x)
end

-- shape(x, {out_type="int32"}) as tf.shape: x's dims as a 1-D int tensor.
function M.shape(x, ...)
  local o = args.parse("shape", { "out_type" }, ...)
  return shape_op(SHAPE, "shape", x, o, function(d) return d end)
end

-- num_elements(x, {out_type="int32"}) as tf.size: x's element count as a 0-d
-- int tensor (tide.size and x:size() give a Lua number, for known sizes).
function M.num_elements(x, ...)
  local o = args.parse("num_elements", { "out_type" }, ...)
  return shape_op(SIZE, "num_elements", x, o, function(d)
    local n = 1
    for i = 1, #d do n = n * d[i] end
    return n
  end)
end

-- rank(x) as tf.rank: x's number of dims as a 0-d int32 tensor: a constant,
-- or, for a traced tensor of unknown rank, the length of its shape when the graph runs.
function M.rank(x)
  if x == nil then binding.error("rank: expects a tensor") end
  x = convert.arg(x, "rank")
  if x.ndim < 0 then
    local a = dispatch.attrs()
    a.dtype = I32
    local s = dispatch.run1(SHAPE, a, x)
    a = dispatch.attrs()
    a.dtype = I32
    return dispatch.run1(SIZE, a, s)
  end
  return convert.tensor(x.ndim, "int32", "rank")
end

-- ensure_shape(x, shape) as tf.ensure_shape: x with its static shape refined
-- by `shape` (a list of dims, tide.None or -1 where unknown): a traced x
-- whose dims are partly unknown gets the known ones (a reshape to its own
-- run-time shape, which the graph checks against them when it runs); a dim
-- that disagrees now is an error.
function M.ensure_shape(x, shape)
  if x == nil then binding.error("ensure_shape: expects a tensor") end
  x = convert.arg(x, "ensure_shape")
  if type(shape) ~= "table" or istype(Tensor, shape) then
    binding.error("ensure_shape: shape must be a list of dims (tide.None for unknown ones), got " .. type(shape))
  end
  local want = {}
  for i = 1, #shape do
    local d = shape[i]
    if type(d) ~= "number" then d = -1 end -- tide.None
    if d ~= math.floor(d) or d < -1 then
      binding.error(string.format("ensure_shape: dim %d must be a size or tide.None, got %s", i - 1, tostring(shape[i])))
    end
    want[i] = d
  end
  local dims = dims_of(x)
  if x.ndim >= 0 and x.ndim ~= #want then
    binding.error(string.format("ensure_shape: x has shape %s, which is not compatible with %s (the ranks differ)",
      format.shape_text(tensor.shape_of(x)), format.shape_text(want)))
  end
  local refined, gain = {}, false
  for i = 1, #want do
    local have, w = dims[i] or -1, want[i]
    if have >= 0 and w >= 0 and have ~= w then
      binding.error(string.format("ensure_shape: x has shape %s, which is not compatible with %s (dim %d)",
        format.shape_text(tensor.shape_of(x)), format.shape_text(want), i - 1))
    end
    refined[i] = have >= 0 and have or w
    gain = gain or (have < 0 and w >= 0)
  end
  if not gain then return x end
  local s = M.shape(x) -- (before the shared attrs are filled)
  local a = dispatch.attrs()
  dispatch.set_ints(a, refined, "ensure_shape")
  return dispatch.run(C.TIDE_OP_RESHAPE, a, { x, s }, 1)
end

-- size_along(x, axis): x's dim along axis (negative counts from the end) as a
-- 0-d int32 tensor: a constant when known while tracing, else read from
-- tide.shape(x) when the graph runs.
function M.size_along(x, axis)
  if x.ndim >= 0 then
    local ax = axis < 0 and axis + x.ndim or axis
    if ax >= 0 and ax < x.ndim and x.dims[ax] >= 0 then return convert.tensor(tonumber(x.dims[ax]), "int32") end
  end
  return M.shape(x)[axis]
end

-- reduced_shape(x, axes): x's shape with the dims `axes` names (a Lua list,
-- negative counting from the end) set to 1, as a 1-D int32 tensor computed
-- when the graph runs (TF's ReducedShape): the shape keepdims gives.
function M.reduced_shape(x, axes)
  local s = M.shape(x)
  local one = convert.tensor(1, "int32")
  local len = M.shape(s)                                         -- [1]: the rank
  local ones = dispatch.run(C.TIDE_OP_FILL, fill_ones(), { len }, 1) -- (the shared attrs filled after M.shape)
  local pos = dispatch.run(C.TIDE_OP_CUMSUM, nil, { ones }, 1)
  pos = dispatch.run(C.TIDE_OP_SUB, nil, { pos, one }, 1)        -- 0 .. rank - 1
  local rank = M.num_elements(s)
  local mask
  for _, a in ipairs(axes) do
    local at = convert.tensor(a, "int32")
    if a < 0 then at = dispatch.run(C.TIDE_OP_ADD, nil, { rank, at }, 1) end
    local hit = dispatch.run(C.TIDE_OP_EQUAL, nil, { pos, at }, 1)
    mask = mask and dispatch.run(C.TIDE_OP_LOGICAL_OR, nil, { mask, hit }, 1) or hit
  end
  if not mask then return s end
  return dispatch.run(C.TIDE_OP_WHERE, nil, { mask, one, s }, 1)
end

-- A shape argument of `op`: a number, a Lua list or an eager int tensor gives
-- (list, nil) with its dims read now; a traced (symbolic) 1-D int32 or int64
-- tensor gives (nil, tensor), for the op to take as its shape input.
function M.arg(op, v)
  if istype(Tensor, v) then
    if not dtype.is_int[v.dt] then
      binding.error(string.format("%s: shape must be an integer tensor, got %s %s (use :cast(\"int32\"))",
        op, dtype.names[v.dt], format.shape_text(tensor.shape_of(v))))
    end
    if v.ndim > 1 then
      binding.error(string.format("%s: shape must be a 1-D tensor, got shape %s", op,
        format.shape_text(tensor.shape_of(v))))
    end
    if tensor.is_symbolic(v) then -- its rank may be unknown too: a 1-D tensor when the graph runs
      if v.ndim > 1 or v.ndim == 0 or (v.dt ~= I32 and v.dt ~= I64) then
        binding.error(string.format("%s: a traced shape must be a 1-D int32 or int64 tensor, got %s %s", op,
          dtype.names[v.dt], format.shape_text(tensor.shape_of(v))))
      end
      return nil, v
    end
  end
  return args.shape(op, v), nil
end

return M
