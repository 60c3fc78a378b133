-- stdlib/tide/tensor.lua — the tensor's Lua face: properties (shape, dtype,
-- ndim, device), reading values (item, totable), 0-based indexing and
-- slicing as views, writing through x[i] = v, and the Lua operators that
-- cannot return tensors (==, <, <=, #).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local dispatch = require "tide.dispatch"
local device = require "tide.device"
local format = require "tide.format"
local tensor_shape = require "tide.tensor_shape"
local args = require "tide.args"
local recorder = require "tide.tape_recorder"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local bit = require "bit"
local istype = ffi.istype

local M = {}
local props, impl = binding.properties, binding.impl

local Shape, None = tensor_shape.Shape, tensor_shape.None

local SYMBOLIC = C.TIDE_TENSOR_SYMBOLIC
local function symbolic(t) return bit.band(t.flags, SYMBOLIC) ~= 0 end
M.is_symbolic = symbolic

-- t's shape as a Shape (a 1-based Lua list of dims; tide.None where a
-- symbolic tensor's dim is unknown until its graph runs; TF's <unknown>
-- Shape, rank nil, when its rank is: t.ndim is then -1).
function M.shape_of(t)
  if t.ndim < 0 then return tensor_shape.unknown() end
  local s = {}
  for i = 0, t.ndim - 1 do
    local d = tonumber(t.dims[i])
    if d < 0 then d = None end
    s[i + 1] = d
  end
  return setmetatable(s, Shape)
end

-- Lua code cannot read a symbolic tensor's values: say what to do instead.
local function no_value(t, what)
  if symbolic(t) then
    binding.error(string.format("%s: this tensor is symbolic (it belongs to a function being traced by " ..
      "tide.trace); its value exists only when the traced function runs. Use tide ops on it, tide.print to " ..
      "see it at run time, tide.cond/tide.where for decisions, or return it from the function", what))
  end
end

props.shape = M.shape_of
props.dtype = function(t) return dtype.names[t.dt] end
props.device = function(t) return device.name_of(t.dev) end

---------------------------------------------------------------------------
-- Reading values
---------------------------------------------------------------------------

-- The number of elements (TF's tf.size).
function M.size(t)
  if not istype(Tensor, t) then binding.error("size: expected a tensor, got " .. type(t)) end
  return tonumber(t.nelem)
end

-- The value of a one-element tensor as a Lua number (or boolean).
function M.item(t)
  if not istype(Tensor, t) then binding.error("item: expected a tensor, got " .. type(t)) end
  no_value(t, "item")
  t = device.cpu(t) -- values are read in host memory
  if t.nelem ~= 1 then
    binding.error(string.format("item: the tensor has %d elements (shape %s); item() needs exactly one",
      tonumber(t.nelem), format.shape_text(M.shape_of(t))))
  end
  local v = format.element(t, 0)
  binding.keep_alive(t)
  return v
end

-- Nested Lua tables (1-based) of the values; a number for a 0-d tensor.
function M.totable(t)
  if not istype(Tensor, t) then binding.error("totable: expected a tensor, got " .. type(t)) end
  no_value(t, "totable")
  t = device.cpu(t)
  local read = format.reader(t)
  local nd = t.ndim
  if nd == 0 then
    local v = read(0)
    binding.keep_alive(t)
    return v
  end
  local dims, strides = {}, {}
  for i = 0, nd - 1 do dims[i + 1], strides[i + 1] = tonumber(t.dims[i]), tonumber(t.strides[i]) end
  local function build(d, off)
    local out = {}
    local n, s = dims[d], strides[d]
    if d == nd then
      for i = 0, n - 1 do out[i + 1] = read(off + i * s) end
    else
      for i = 0, n - 1 do out[i + 1] = build(d + 1, off + i * s) end
    end
    return out
  end
  local out = build(1, 0)
  binding.keep_alive(t)
  return out
end

---------------------------------------------------------------------------
-- Indexing and slicing (0-based, negative from the end), as views
---------------------------------------------------------------------------

-- tide.newaxis in a slice spec inserts a dimension of size 1.
M.newaxis = setmetatable({}, { __tostring = function() return "tide.newaxis" end })

local SLICE, EXPAND_DIMS = C.TIDE_OP_SLICE, C.TIDE_OP_EXPAND_DIMS


-- x[i]: the i-th sub-tensor along the first dim (a view).
function impl.index(t, i)
  args.int("index", "index", i)
  if t.ndim == 0 then binding.error("index: cannot index a 0-d tensor (use :item())") end
  if t.ndim < 0 then -- an unknown rank: a spec for dim 0 only, the other dims whole (checked when it runs)
    local a = dispatch.attrs()
    a.ints[0], a.ints[2], a.nints, a.n = i, 1, 3, 1
    return dispatch.run_view(SLICE, a, t)
  end
  local d0 = tonumber(t.dims[0])
  if d0 >= 0 and (i < -d0 or i >= d0) then   -- an unknown (-1) dim of a traced tensor: checked at run
    binding.error(string.format("index: index %d is out of range for dimension 0 of size %d", i, d0))
  end
  local a = dispatch.attrs()
  for d = 0, t.ndim - 1 do a.ints[3 * d + 2] = 1 end
  a.ints[0] = i
  a.nints = 3 * t.ndim
  a.n = 1                                  -- shrink dim 0
  local mask = 0                           -- every other dim: whole
  for d = 1, t.ndim - 1 do mask = bit.bor(mask, bit.lshift(1, d), bit.lshift(1, d + 8)) end
  a.m = mask
  return dispatch.run_view(SLICE, a, t)
end

-- Mark dim `dim` of slice attrs `a` whole (step 1, begin and end masked);
-- returns the new mask. (A function of its own, not a closure inside
-- parse_slice_spec: creating a closure aborts LuaJIT's traces.)
local function full_dim(a, dim, mask)
  a.ints[3 * dim + 2] = 1
  return bit.bor(mask, bit.lshift(1, dim), bit.lshift(1, dim + 8))
end

-- Parse a slice spec (see M.slice) for a tensor of rank nd into the attrs
-- `a` (SLICE's layout: ints, n = shrink mask, m = begin/end masks). Returns
-- the output positions of the tide.newaxis entries, in order. Errors name `op`.
-- slice and slice_update (tide.ops.update) share it. nd < 0 (an unknown
-- rank): the entries name the leading dims and the others are whole, as
-- SLICE takes them; a '...' must then come last.
function M.parse_slice_spec(op, nd, spec, a)
  if type(spec) ~= "table" then binding.error(op .. ": expected a table spec such as {0, {1, 3}}") end
  local n = spec.n or #spec
  if nd < 0 then
    for k = 1, n do
      if spec[k] == "..." and k < n then
        binding.error(op .. ": '...' followed by more entries needs the tensor's rank, which is unknown until " ..
          "its graph runs (a TensorSpec of shape nil); index the leading dims, or give the input_signature a rank")
      end
    end
    if spec[n] == "..." then n = n - 1 end
  end
  -- Expand "..." and count the dims the spec consumes.
  local used, ellipsis = 0, nil
  for k = 1, n do
    local e = spec[k]
    if e == "..." then
      if ellipsis then binding.error(op .. ": only one '...' is allowed") end
      ellipsis = k
    elseif e ~= M.newaxis then
      used = used + 1
    end
  end
  if nd >= 0 and used > nd then
    binding.error(string.format("%s: %d indices for a tensor of rank %d", op, used, nd))
  end
  local d = 0
  local newaxes = {}     -- output positions of inserted dims
  local out_pos = 0
  local shrink, mask = 0, 0
  for k = 1, n do
    local e = spec[k]
    if e == "..." then
      for _ = 1, nd - used do mask = full_dim(a, d, mask); d = d + 1; out_pos = out_pos + 1 end
    elseif e == M.newaxis then
      newaxes[#newaxes + 1] = out_pos
      out_pos = out_pos + 1
    elseif type(e) == "number" then
      args.int(op, "index", e)
      a.ints[3 * d] = e
      a.ints[3 * d + 2] = 1
      shrink = bit.bor(shrink, bit.lshift(1, d))
      d = d + 1
    elseif type(e) == "table" and not istype(Tensor, e) then
      local start, stop, step = e[1], e[2], e[3]
      if step == nil then step = 1 end
      args.int(op, "step", step)
      if step == 0 then binding.error(op .. ": step cannot be zero") end
      a.ints[3 * d + 2] = step
      if start == nil then mask = bit.bor(mask, bit.lshift(1, d))
      else a.ints[3 * d] = args.int(op, "start", start) end
      if stop == nil then mask = bit.bor(mask, bit.lshift(1, d + 8))
      else a.ints[3 * d + 1] = args.int(op, "stop", stop) end
      d = d + 1
      out_pos = out_pos + 1
    else
      binding.error(string.format("%s: entry %d must be an index, a {start, stop, step} range, '...' or " ..
        "tide.newaxis, got %s", op, k, tostring(e)))
    end
  end
  if nd < 0 then nd = d end -- the leading dims named; SLICE takes the rest whole
  while d < nd do mask = full_dim(a, d, mask); d = d + 1 end
  a.nints = 3 * nd
  a.n = shrink
  a.m = mask
  return newaxes
end

-- x:slice{spec...}: one entry per dim: an index (drops the dim), a range
-- {start, stop, step} (stop excluded; any may be nil), {} (all), "..." (all
-- remaining dims) or tide.newaxis.
function M.slice(t, spec)
  if not istype(Tensor, t) then binding.error("slice: expected a tensor, got " .. type(t)) end
  local a = dispatch.attrs()
  local newaxes = M.parse_slice_spec("slice", t.ndim, spec, a)
  local out = dispatch.run_view(SLICE, a, t)
  for _, pos in ipairs(newaxes) do
    local e = dispatch.attrs()
    e.axis = pos
    out = dispatch.run_view(EXPAND_DIMS, e, out)
  end
  return out
end

-- x[i] = v: write v (a number, table or tensor, broadcast) into x[i].
function impl.setindex(t, i, v)
  local view = impl.index(t, i)
  M.assign_into(view, v, "setindex")
end

-- Copy v (broadcast, converted to dst's dtype when a Lua value) into dst,
-- unchecked: tide.Variable's own v[i] = x writes through this.
function M.write_into(dst, v, what)
  local src = istype(Tensor, v) and v or convert.coerce(v, dst, what, 2)
  if C.tide_tensor_copy_into(dst, src) ~= 0 then binding.raise() end
  return dst
end

-- Copy v (broadcast, converted to dst's dtype when a Lua value) into dst.
-- A tensor a recording GradientTape tracks is refused: its nodes may have
-- saved it, and the write is not recorded (TF's tensors cannot be written).
-- So is a value read from a tide.Variable (it shares the variable's storage,
-- and the variable and its other reads would change with it): as in TF, a
-- read is immutable; the variable is updated through itself.
function M.assign_into(dst, v, what)
  if recorder.active and recorder.tracks(dst) then
    binding.error(what .. ": in-place write to a tensor a recording GradientTape tracks (the gradient would " ..
      "silently use the new values); use tide.slice_update, which is differentiable, or write outside tape:run")
  end
  if C.tide_tensor_is_variable_data(dst) then
    binding.error(string.format("%s: in-place write into a value read from a tide.Variable (shape %s, %s): a read " ..
      "is immutable, as in TF, and shares the variable's storage; update the variable itself (v[i] = x, " ..
      "v:assign(x), v:assign(tide.slice_update(v, spec, x))), or write into a copy of the value of its own " ..
      "(tide.identity(x))", what, format.shape_text(M.shape_of(dst)), dtype.names[dst.dt]))
  end
  return M.write_into(dst, v, what)
end

-- x:copy_(v): write v into x in place (Torch style); returns x.
function M.copy_(t, v)
  if not istype(Tensor, t) then binding.error("copy_: expected a tensor, got " .. type(t)) end
  return M.assign_into(t, v, "copy_")
end

---------------------------------------------------------------------------
-- Lua operators that return Lua values
---------------------------------------------------------------------------

function impl.len(t)
  if t.ndim == 0 then binding.error("#: a 0-d tensor has no length (use :size() or :item())") end
  if t.ndim < 0 then
    binding.error("#: the tensor's rank is unknown until its graph runs (a TensorSpec of shape nil); use " ..
      "tide.shape(x)[0] for its length then")
  end
  return tonumber(t.dims[0])
end

-- A Lua number for one side of a comparison of one-element values.
local function scalar_value(v, op)
  v = convert.unvariable(v) -- v < x with a Variable on one side and a tensor on the other
  if istype(Tensor, v) then
    if symbolic(v) then
      binding.error(string.format("%s: Lua comparison operators need values, and this tensor is symbolic (it " ..
        "belongs to a function being traced): use tide.cond(pred, true_fn, false_fn) to branch, and " ..
        "a:lt(b), a:le(b), tide.equal(a, b) for tensor comparisons", op))
    end
    if v.nelem ~= 1 then
      binding.error(string.format("%s: comparing a tensor of shape %s with a Lua operator; use tide.%s(a, b) " ..
        "for elementwise results (or a:%s(b)), and tide.reduce_all to combine them", op,
        format.shape_text(M.shape_of(v)), op == "==" and "equal" or (op == "<" and "less" or "less_equal"),
        op == "==" and "eq" or (op == "<" and "lt" or "le")))
    end
    return M.item(v)
  end
  return v
end

-- a == b: identity, or value equality when both hold one element (or one is
-- a Lua number or boolean and the tensor holds one element). Two tensors of
-- more elements are an error pointing to tide.equal (never a silent identity
-- test); a tensor is never equal to other Lua values (nil, tables, strings).
function impl.eq(a, b)
  if rawequal(a, b) then return true end
  local ta, tb = istype(Tensor, a), istype(Tensor, b)
  -- A one-element tensor equals the Lua number or boolean it holds.
  if ta and not tb then
    local tv = type(b)
    if tv ~= "number" and tv ~= "boolean" then return false end -- x == nil and the like
    if symbolic(a) then scalar_value(a, "==") end
    if (tv ~= "number" and tv ~= "boolean") or a.nelem ~= 1 then return false end
    return M.item(a) == b
  end
  if tb and not ta then return impl.eq(b, a) end
  if symbolic(a) or symbolic(b) then scalar_value(symbolic(a) and a or b, "==") end
  return scalar_value(a, "==") == scalar_value(b, "==")
end

-- a < b and a <= b on one-element tensors (or Lua numbers) give Lua booleans.
function impl.lt(a, b) return scalar_value(a, "<") < scalar_value(b, "<") end
function impl.le(a, b) return scalar_value(a, "<=") <= scalar_value(b, "<=") end

impl.tostring = function(t) return format.tostring(binding.istensor(t) and device.cpu(t) or t) end

return M
