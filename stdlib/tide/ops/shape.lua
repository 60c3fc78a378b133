-- stdlib/tide/ops/shape.lua — shape ops as TensorFlow names them: views that
-- share storage (reshape, transpose, squeeze, expand_dims, broadcast_to, split,
-- unstack) and ops that copy (concat, stack, tile, pad, gather, one_hot, reverse).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local format = require "tide.format"
local dynamic_shape = require "tide.ops.dynamic_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local RESHAPE, TRANSPOSE, SQUEEZE = C.TIDE_OP_RESHAPE, C.TIDE_OP_TRANSPOSE, C.TIDE_OP_SQUEEZE
local EXPAND_DIMS, BROADCAST_TO, COPY = C.TIDE_OP_EXPAND_DIMS, C.TIDE_OP_BROADCAST_TO, C.TIDE_OP_COPY
local CONCAT, TILE, PAD, GATHER = C.TIDE_OP_CONCAT, C.TIDE_OP_TILE, C.TIDE_OP_PAD, C.TIDE_OP_GATHER
local ONE_HOT, REVERSE = C.TIDE_OP_ONE_HOT, C.TIDE_OP_REVERSE

local fmt = string.format
local shape_text = function(t) return format.shape_text(tensor.shape_of(t)) end

-- The input tensor of `op` (Lua numbers and tables convert); nil is an error.
local function input(v, op, pos, what)
  if istype(Tensor, v) then return v end
  if v == nil then binding.error(fmt("%s: %s is nil; expected a tensor", op, what or "the input")) end
  return convert.arg(v, op, pos)
end

-- A required list of integers (a Lua number or list, or an integer tensor).
local function int_list(op, what, v)
  if v == nil then binding.error(fmt("%s: %s is required", op, what)) end
  return args.int_list(op, what, v)
end

-- An integer (or one-element tensor); nil gives `default`, or an error when there is none.
local function int_arg(op, what, v, default)
  if v == nil then
    if default == nil then binding.error(fmt("%s: %s is required", op, what)) end
    return default
  end
  return args.int(op, what, v)
end

-- An op of one tensor (named `what` in errors) and one integer-list option
-- `opt` (TF's name) passed in attrs.ints; `optional` lets it be nil (the op's
-- default), `view` runs it as a view sharing the input's storage.
local function int_list_op(name, op, what, opt, optional, view)
  local run = view and dispatch.run_view or dispatch.run1
  local names = { opt, lists = { [opt] = true } } -- tide.tile(x, {}): {} is the empty list
  return function(x, ...)
    local o = args.parse(name, names, ...)
    x = input(x, name, 1, what)
    local list = o[opt]
    if list ~= nil or not optional then list = int_list(name, opt, list) end
    local a = dispatch.attrs()
    if list then dispatch.set_ints(a, list, name) end
    return run(op, a, x)
  end
end

-- `axis` normalized against rank n (negative counts from the end), or an error.
local function norm_axis(op, axis, n)
  if axis < -n or axis >= n then
    binding.error(fmt("%s: axis %d is out of range for rank %d (valid: %d to %d)", op, axis, n, -n, n - 1))
  end
  return axis < 0 and axis + n or axis
end

---------------------------------------------------------------------------
-- Views: the result shares the input's storage
---------------------------------------------------------------------------

-- A list of dims some of which are 0-d int tensors (tide.shape(x)[0] in a
-- trace), as TF packs one: eager tensors become numbers; with a traced one,
-- the parts stacked into a shape tensor, and the list of what is known now
-- (the numbers; -1 for the tensors), which sizes the traced result.
local function mixed_shape(shape)
  local symbolic = false
  for _, d in ipairs(shape) do
    if istype(Tensor, d) and tensor.is_symbolic(d) then symbolic = true end
  end
  if not symbolic then
    local list = {}
    for i, d in ipairs(shape) do list[i] = istype(Tensor, d) and tensor.item(d) or d end
    return list
  end
  local parts, hints = {}, {}
  for i, d in ipairs(shape) do
    if istype(Tensor, d) then
      if d.ndim > 0 then binding.error(fmt("reshape: shape entry %d must be a number or a 0-d tensor, got shape %s",
        i, shape_text(d))) end
      parts[i], hints[i] = d.dt == C.TIDE_INT32 and d or d:cast("int32"), -1
    else
      parts[i], hints[i] = convert.tensor(args.int("reshape", "shape entry", d), "int32"), d
    end
  end
  return M.stack(parts), hints
end

-- reshape(tensor, shape): shape a list (one entry may be -1; entries may be
-- 0-d int tensors, as tide.shape(x)[0] in a trace), an int tensor, or numbers
-- (x:reshape(2, 3)). A view when strides allow, else a copy.
function M.reshape(x, shape, ...)
  x = input(x, "reshape", 1, "tensor")
  shape = convert.unvariable(shape)
  if type(shape) == "number" and select("#", ...) > 0 then
    shape = { shape, ... }
  elseif type(shape) == "table" and not istype(Tensor, shape) and shape.shape ~= nil then
    shape = shape.shape
  end
  local hints
  if type(shape) == "table" and not istype(Tensor, shape) then
    for _, d in ipairs(shape) do
      if istype(Tensor, d) then shape, hints = mixed_shape(shape); break end
    end
  end
  local a = dispatch.attrs() -- (after the stack above: the attrs are shared)
  if istype(Tensor, shape) and tensor.is_symbolic(shape) then -- tide.shape(...) in a trace
    if hints then dispatch.set_ints(a, hints, "reshape") end
    local _, dyn = dynamic_shape.arg("reshape", shape)
    return dispatch.run(RESHAPE, a, { dispatch.promote(x), dyn }, 1)
  end
  local list = int_list("reshape", "shape", shape)
  dispatch.set_ints(a, list, "reshape")
  return dispatch.run_view(RESHAPE, a, x)
end

-- transpose(a, perm): dims permuted (perm nil reverses them), as a view.
M.transpose = int_list_op("transpose", TRANSPOSE, "a", "perm", true, true)

-- squeeze(input, axis): drop the given size-1 dims (nil: every size-1 dim), as a view.
M.squeeze = int_list_op("squeeze", SQUEEZE, nil, "axis", true, true)

-- expand_dims(input, axis): a size-1 dim inserted at axis (-1 appends).
function M.expand_dims(x, ...)
  local o = args.parse("expand_dims", { "axis" }, ...)
  x = input(x, "expand_dims", 1)
  local axis = int_arg("expand_dims", "axis", o.axis)
  local a = dispatch.attrs()
  a.axis = axis
  return dispatch.run_view(EXPAND_DIMS, a, x)
end

-- broadcast_to(input, shape): a stride-0 view with numpy's broadcasting rules.
local broadcast_list = int_list_op("broadcast_to", BROADCAST_TO, nil, "shape", false, true)
function M.broadcast_to(x, shape, ...)
  if istype(Tensor, shape) and tensor.is_symbolic(shape) then -- tide.shape(...) in a trace
    args.parse("broadcast_to", {}, ...)
    x = input(x, "broadcast_to", 1)
    local _, dyn = dynamic_shape.arg("broadcast_to", shape)
    return dispatch.run(BROADCAST_TO, dispatch.attrs(), { dispatch.promote(x), dyn }, 1)
  end
  return broadcast_list(x, shape, ...)
end

-- identity(x): a copy of x's values with a storage of its own (TF's
-- tf.identity; differentiable). A Variable gives a copy of its current value
-- that can be written in place.
function M.identity(x)
  x = input(x, "identity", 1)
  return dispatch.run1(COPY, nil, x)
end

-- contiguous(x): x itself when row-major without gaps, else a contiguous copy.
function M.contiguous(x)
  x = input(x, "contiguous", 1)
  if C.tide_tensor_is_contiguous(x) then return x end
  return dispatch.run1(COPY, nil, x)
end

-- The size of `value` along a normalized axis, and that axis.
local function dim_at(op, value, axis)
  if value.ndim == 0 then binding.error(fmt("%s: the input is 0-d; it needs at least one dimension", op)) end
  if value.ndim < 0 then
    binding.error(fmt("%s: the number of results depends on the size of dimension %d, and the input's rank is " ..
      "unknown until the traced function runs (a TensorSpec of shape nil); give the input_signature a shape " ..
      "with that dimension's size", op, axis))
  end
  local ax = norm_axis(op, axis, value.ndim)
  return tonumber(value.dims[ax]), ax
end

-- The error for an op whose views need the size of a dim that a traced
-- tensor knows only when its graph runs (TF cannot infer it either).
local function unknown_dim(op, value, ax)
  binding.error(fmt("%s: dimension %d of shape %s is unknown (None) until the traced function runs, and the " ..
    "number of results depends on it; give that dimension a size in the input_signature", op, ax,
    shape_text(value)))
end

-- A view of value with [start, stop) along axis ax (the SLICE op via x:slice).
local function slab(value, ax, start, stop)
  local spec = {}
  for d = 1, ax do spec[d] = {} end
  spec[ax + 1] = { start, stop }
  return tensor.slice(value, spec)
end

-- split(value, num_or_size_splits, axis=0): a Lua list of views. An integer
-- splits into that many equal parts; a list gives the sizes (one may be -1).
function M.split(value, num_or_size_splits, ...)
  local o = args.parse("split", { "axis", "num" }, ...)
  value = input(value, "split", 1, "value")
  local spec = num_or_size_splits
  if spec == nil then binding.error("split: num_or_size_splits is required") end
  if istype(Tensor, spec) and spec.ndim == 0 then spec = tensor.item(spec) end
  local n, ax = dim_at("split", value, int_arg("split", "axis", o.axis, 0))
  if n < 0 then unknown_dim("split", value, ax) end
  local sizes
  if type(spec) == "number" then
    local k = args.int("split", "num_or_size_splits", spec)
    if k <= 0 then binding.error(fmt("split: the number of splits must be positive, got %d", k)) end
    if n % k ~= 0 then
      binding.error(fmt("split: dimension %d of size %d cannot be split into %d equal parts (shape %s)", ax, n, k,
        shape_text(value)))
    end
    sizes = {}
    for i = 1, k do sizes[i] = n / k end
  else
    sizes = int_list("split", "num_or_size_splits", spec)
    local unknown, total = nil, 0
    for i, s in ipairs(sizes) do
      if s == -1 then
        if unknown then binding.error("split: at most one size can be -1") end
        unknown = i
      elseif s < 0 then
        binding.error(fmt("split: size %d is negative (%d)", i, s))
      else
        total = total + s
      end
    end
    if unknown then
      if total > n then
        binding.error(fmt("split: sizes sum to %d, more than dimension %d of size %d", total, ax, n))
      end
      sizes[unknown] = n - total
    elseif total ~= n then
      binding.error(fmt("split: sizes sum to %d but dimension %d has size %d (shape %s)", total, ax, n,
        shape_text(value)))
    end
  end
  if o.num ~= nil and args.int("split", "num", o.num) ~= #sizes then
    binding.error(fmt("split: num is %d but there are %d splits", o.num, #sizes))
  end
  local out, at = {}, 0
  for i, s in ipairs(sizes) do
    out[i] = slab(value, ax, at, at + s)
    at = at + s
  end
  return out
end

-- unstack(value, num=nil, axis=0): a Lua list of the views value[..., i, ...].
function M.unstack(value, ...)
  local o = args.parse("unstack", { "num", "axis" }, ...)
  value = input(value, "unstack", 1, "value")
  local n, ax = dim_at("unstack", value, int_arg("unstack", "axis", o.axis, 0))
  if n < 0 then unknown_dim("unstack", value, ax) end
  if o.num ~= nil and args.int("unstack", "num", o.num) ~= n then
    binding.error(fmt("unstack: num is %d but dimension %d has size %d (shape %s)", o.num, ax, n, shape_text(value)))
  end
  local out = {}
  for i = 0, n - 1 do
    local spec = {}
    for d = 1, ax do spec[d] = {} end
    spec[ax + 1] = i
    out[i + 1] = tensor.slice(value, spec)
  end
  return out
end

---------------------------------------------------------------------------
-- Ops that copy
---------------------------------------------------------------------------

-- The tensors of a Lua list `values` (Lua numbers/tables take the dtype of
-- the first tensor in the list).
local function tensor_list(op, values)
  if values == nil then binding.error(op .. ": values is nil; expected a Lua list of tensors") end
  if type(values) ~= "table" or istype(Tensor, values) then
    binding.error(fmt("%s: values must be a Lua list of tensors, got %s", op,
      istype(Tensor, values) and "a tensor" or type(values)))
  end
  local n = convert.list_length(values, op, "values")
  if n == 0 then binding.error(op .. ": values is an empty list") end
  local like
  for i = 1, n do
    local v = convert.unvariable(values[i])
    if istype(Tensor, v) then like = v; break end
  end
  local out = {}
  for i = 1, n do
    out[i] = istype(Tensor, values[i]) and values[i] or convert.coerce(values[i], like, op, i)
  end
  return out
end

-- concat(values, axis): the tensors of a Lua list joined along axis.
function M.concat(values, ...)
  local o = args.parse("concat", { "axis" }, ...)
  local list = tensor_list("concat", values)
  local axis = int_arg("concat", "axis", o.axis)
  local a = dispatch.attrs()
  a.axis = axis
  return dispatch.run(CONCAT, a, list)
end

-- stack(values, axis=0): tensors of one shape joined along a new axis.
function M.stack(values, ...)
  local o = args.parse("stack", { "axis" }, ...)
  local list = tensor_list("stack", values)
  local fi = 1 -- the shapes are compared against a value of known rank, if any
  for i = 2, #list do
    if list[fi].ndim < 0 then fi = i end
  end
  local first = list[fi]
  local r = first.ndim
  local axis = int_arg("stack", "axis", o.axis, 0)
  if r >= 0 and (axis < -(r + 1) or axis > r) then
    binding.error(fmt("stack: axis %d is out of range for stacking tensors of rank %d (valid: %d to %d)", axis, r,
      -(r + 1), r))
  end
  for i = 1, #list do
    local t = list[i]
    if t.dt ~= first.dt then
      binding.error(fmt("stack: values[%d] is %s but values[%d] is %s (convert with :cast(\"%s\"))", i,
        dtype.names[t.dt], fi, dtype.names[first.dt], dtype.names[first.dt]))
    end
    local same = t.ndim == r or t.ndim < 0 -- an unknown rank: concat checks the shapes when the graph runs
    for d = 0, (t.ndim < 0 and -1 or r - 1) do   -- an unknown (-1) dim of a traced tensor matches any; concat merges them
      if same and t.dims[d] ~= first.dims[d] and t.dims[d] >= 0 and first.dims[d] >= 0 then same = false end
    end
    if not same then
      binding.error(fmt("stack: values[%d] has shape %s but values[%d] has shape %s; stack needs equal shapes", i,
        shape_text(t), fi, shape_text(first)))
    end
  end
  local expanded = {}
  for i = 1, #list do
    local a = dispatch.attrs()
    a.axis = axis
    expanded[i] = dispatch.run1(EXPAND_DIMS, a, list[i])   -- a view, or a copy of inline data
  end
  local a = dispatch.attrs()
  a.axis = axis
  return dispatch.run(CONCAT, a, expanded)
end
convert.set_stack(M.stack) -- tide.tensor{t1, t2} packs tensors with it

-- tile(input, multiples): the input repeated multiples[i] times along dim i.
M.tile = int_list_op("tile", TILE, nil, "multiples", false, false)

-- paddings as a Lua list of {before, after} pairs, one per dim of x.
local function pad_pairs(x, paddings)
  if paddings == nil then binding.error("pad: paddings is required") end
  local rows = paddings
  if istype(Tensor, rows) then
    if not dtype.is_int[rows.dt] then
      binding.error("pad: paddings must be an integer tensor, got " .. dtype.names[rows.dt])
    end
    rows = rows.ndim == 2 and tensor.totable(rows) or nil
    if not rows then binding.error("pad: a paddings tensor must have shape (rank, 2)") end
  end
  if type(rows) ~= "table" then
    binding.error("pad: paddings must be a list of {before, after} pairs, got " .. type(rows))
  end
  if x.ndim >= 0 and #rows ~= x.ndim then -- an unknown rank: checked when the graph runs
    binding.error(fmt("pad: paddings has %d pairs but the input has rank %d (shape %s)", #rows, x.ndim,
      shape_text(x)))
  end
  local pairs_ = {}
  for i = 1, #rows do
    local p = rows[i]
    if type(p) ~= "table" or #p ~= 2 then
      binding.error(fmt("pad: paddings[%d] must be a {before, after} pair", i))
    end
    local b, e = args.int("pad", "paddings", p[1]), args.int("pad", "paddings", p[2])
    if b < 0 or e < 0 then
      binding.error(fmt("pad: paddings for dimension %d are (%d, %d); they must be >= 0", i - 1, b, e))
    end
    pairs_[i] = { b, e }
  end
  return pairs_
end

-- Index i of a dim of size n reflected back inside [0, n) (REFLECT excludes
-- the edge, SYMMETRIC repeats it), as tf.pad.
local function mirror(i, n, symmetric)
  if i < 0 then return symmetric and -i - 1 or -i end
  if i >= n then return symmetric and 2 * n - 1 - i or 2 * (n - 1) - i end
  return i
end

-- pad(tensor, paddings, mode="CONSTANT", constant_values=0) as tf.pad.
local PAD_ARGS = { "paddings", "mode", "constant_values", lists = { paddings = true } }
function M.pad(x, ...)
  local o = args.parse("pad", PAD_ARGS, ...)
  x = input(x, "pad", 1, "tensor")
  local pp = pad_pairs(x, o.paddings)
  local mode = o.mode == nil and "CONSTANT" or o.mode
  if type(mode) ~= "string" then binding.error("pad: mode must be a string, got " .. type(mode)) end
  mode = mode:upper()
  if mode == "CONSTANT" then
    local v = o.constant_values
    if v == nil then
      if x.dt == C.TIDE_BOOL then v = false else v = 0 end
    end
    if istype(Tensor, v) then v = tensor.item(v) end
    convert.scalar(v, x.dt, "pad: constant_values")   -- checks v fits the dtype
    if type(v) == "boolean" then v = v and 1 or 0 end
    local a = dispatch.attrs()
    for d = 1, #pp do a.ints[2 * d - 2], a.ints[2 * d - 1] = pp[d][1], pp[d][2] end
    a.nints = 2 * #pp
    a.scalars[0] = v
    return dispatch.run1(PAD, a, x)
  end
  if mode ~= "REFLECT" and mode ~= "SYMMETRIC" then
    binding.error(fmt("pad: unknown mode '%s' (expected CONSTANT, REFLECT or SYMMETRIC)", o.mode))
  end
  -- Mirror modes: one gather per padded dim, of indices reflected inside it.
  if x.ndim < 0 then
    binding.error(fmt("pad: %s padding needs the input's dims, and its rank is unknown until the traced function " ..
      "runs (a TensorSpec of shape nil); give the input_signature a shape, or pad with CONSTANT", mode))
  end
  local symmetric = mode == "SYMMETRIC"
  local out = x
  for d = 1, #pp do
    local b, e = pp[d][1], pp[d][2]
    if b > 0 or e > 0 then
      local n = tonumber(x.dims[d - 1])
      if n < 0 then
        binding.error(fmt("pad: %s padding of dimension %d needs its size, unknown (None) until the traced " ..
          "function runs (shape %s); give it a size in the input_signature or pad with CONSTANT", mode, d - 1,
          shape_text(x)))
      end
      local limit = symmetric and n or n - 1
      if b > limit or e > limit then
        binding.error(fmt("pad: %s paddings for dimension %d are (%d, %d) but must be at most %d for size %d", mode,
          d - 1, b, e, limit, n))
      end
      local idx = {}
      for j = 1, n + b + e do idx[j] = mirror(j - 1 - b, n, symmetric) end
      out = M.gather(out, convert.tensor(idx, "int32"), d - 1)
    end
  end
  if rawequal(out, x) then return dispatch.run1(COPY, nil, x) end
  return out
end

-- gather(params, indices, axis=batch_dims, batch_dims=0) as tf.gather: slices
-- of params along axis picked by indices (int32 or int64; a number or list).
function M.gather(params, indices, ...)
  local o = args.parse("gather", { "axis", "batch_dims" }, ...)
  params = input(params, "gather", 1, "params")
  if indices == nil then binding.error("gather: indices is nil; expected integer indices") end
  indices = convert.arg(indices, "gather", 2)
  local bd = int_arg("gather", "batch_dims", o.batch_dims, 0)
  local axis = int_arg("gather", "axis", o.axis, bd)   -- TF: axis defaults to batch_dims
  local a = dispatch.attrs()
  a.axis = axis
  a.n = bd
  return dispatch.run(GATHER, a, { params, indices })
end

-- A Lua number for a one_hot value (a boolean or a one-element tensor).
local function one_hot_value(v, dt, what)
  if istype(Tensor, v) then v = tensor.item(v) end
  convert.scalar(v, dt, "one_hot: " .. what)   -- checks v fits the dtype
  if type(v) == "boolean" then return v and 1 or 0 end
  return v
end

-- one_hot(indices, depth, on_value=1, off_value=0, axis=-1, dtype="float32"):
-- an index outside [0, depth) gives a row of off_value, as TF.
function M.one_hot(indices, ...)
  local o = args.parse("one_hot", { "depth", "on_value", "off_value", "axis", "dtype" }, ...)
  indices = input(indices, "one_hot", 1, "indices")
  local depth = int_arg("one_hot", "depth", o.depth)
  local dt_name = o.dtype
  if dt_name == nil then   -- TF: the dtype of on_value/off_value when they are tensors
    local like = istype(Tensor, o.on_value) and o.on_value or istype(Tensor, o.off_value) and o.off_value
    dt_name = like and dtype.names[like.dt] or "float32"
  end
  local code = dtype.code(dt_name, "one_hot")
  local is_bool = code == C.TIDE_BOOL
  local on, off = o.on_value, o.off_value
  if on == nil then on = is_bool and true or 1 end
  if off == nil then off = (not is_bool) and 0 or false end
  on, off = one_hot_value(on, code, "on_value"), one_hot_value(off, code, "off_value")
  local axis = int_arg("one_hot", "axis", o.axis, -1)
  local a = dispatch.attrs()
  a.n = depth
  a.axis = axis
  a.dtype = code
  a.scalars[0], a.scalars[1] = on, off
  return dispatch.run1(ONE_HOT, a, indices)
end

-- reverse(tensor, axis): a copy with the listed axes reversed.
M.reverse = int_list_op("reverse", REVERSE, "tensor", "axis", false, false)

return M
