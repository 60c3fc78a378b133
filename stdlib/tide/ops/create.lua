-- stdlib/tide/ops/create.lua — making tensors from nothing: zeros, ones, fill,
-- full, *_like, range, linspace, eye, and from_buffer (copies or zero-copy views
-- of C memory). These are tide.<name> functions, not methods.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local shape_arg = require("tide.ops.dynamic_shape").arg
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
-- A sandboxed VM (tide/vm.h) without ffi: a raw address would reach any memory.
local host = package.loaded["tide.host"]
local pointers_allowed = not host or host.allow_pointers ~= false
local floor = math.floor

local M = {}

local FILL, RANGE, LINSPACE, EYE = C.TIDE_OP_FILL, C.TIDE_OP_RANGE, C.TIDE_OP_LINSPACE, C.TIDE_OP_EYE
local RANGE_DYNAMIC = C.TIDE_OP_RANGE_DYNAMIC
local band, SYMBOLIC = bit.band, C.TIDE_TENSOR_SYMBOLIC
local F32, I32, I64, BOOL = C.TIDE_FLOAT32, C.TIDE_INT32, C.TIDE_INT64, C.TIDE_BOOL

-- The dtype TF infers for a Lua scalar: bool, int32 (int64 when large), float32.
local function value_dtype(v)
  if type(v) == "boolean" then return BOOL end
  if v == floor(v) and v == v and v ~= math.huge and v ~= -math.huge then
    return (v >= -2147483648 and v <= 2147483647) and I32 or I64
  end
  return F32
end

-- A Lua number (or boolean, or one-element tensor) and its inferred dtype;
-- with `symbolic_ok`, a traced one-element tensor comes back as itself.
local function scalar_arg(op, what, v, symbolic_ok)
  v = convert.unvariable(v)
  if istype(Tensor, v) and symbolic_ok and band(v.flags, SYMBOLIC) ~= 0 then
    if v.ndim > 1 or (v.ndim == 1 and v.dims[0] ~= 1) then
      binding.error(string.format("%s: %s must be a scalar, got shape %s", op, what, tostring(v.shape)))
    end
    return v, v.dt
  end
  if istype(Tensor, v) then
    if v.nelem ~= 1 then binding.error(string.format("%s: %s must be a scalar, got a tensor of %d elements", op, what,
        tonumber(v.nelem))) end
    return v:item(), v.dt
  end
  local tv = type(v)
  if tv ~= "number" and tv ~= "boolean" then
    binding.error(string.format("%s: %s must be a number, got %s", op, what, tv))
  end
  return v, value_dtype(v)
end

-- Run FILL: shape (Lua list), value (number or boolean), dtype code; or,
-- with `dyn` (a traced shape tensor), FILL taking that as its shape input
-- (then `shape`, when given, is what is known of it, -1 for a None dim).
local function run_fill(shape, value, dt, dyn)
  local a = dispatch.attrs()
  if shape then dispatch.set_ints(a, shape, "fill") end
  a.scalars[0] = type(value) == "boolean" and (value and 1 or 0) or value
  a.dtype = dt
  return dispatch.run(FILL, a, dyn and { dyn } or {}, 1)
end

-- zeros(shape, dtype="float32") as tf.zeros; shape may be tide.shape(x).
function M.zeros(shape, ...)
  local o = args.parse("zeros", { "dtype" }, ...)
  local list, dyn = shape_arg("zeros", shape)
  return run_fill(list, 0, dtype.code(o.dtype or "float32", "zeros"), dyn)
end

-- ones(shape, dtype="float32") as tf.ones; shape may be tide.shape(x).
function M.ones(shape, ...)
  local o = args.parse("ones", { "dtype" }, ...)
  local list, dyn = shape_arg("ones", shape)
  return run_fill(list, 1, dtype.code(o.dtype or "float32", "ones"), dyn)
end

-- A fill of shape `dims` with a scalar value; its dtype is the value's (as
-- tide.tensor infers it) unless given.
local function filler(name)
  return function(dims, value, ...)
    local o = args.parse(name, { "dtype" }, ...)
    local shape, dyn = shape_arg(name, dims)
    if value == nil then binding.error(name .. ": value is required") end
    local v, dt = scalar_arg(name, "value", value)
    return run_fill(shape, v, o.dtype and dtype.code(o.dtype, name) or dt, dyn)
  end
end

-- fill(dims, value, {dtype}) as tf.fill.
M.fill = filler("fill")
-- full(shape, value, {dtype}): numpy's and torch's name for fill.
M.full = filler("full")

-- zeros_like/ones_like: `value` in x's shape, in x's dtype unless one is given.
local function like(op, x, value, ...)
  local o = args.parse(op, { "dtype" }, ...)
  if x == nil then binding.error(op .. ": expects a tensor") end
  x = convert.arg(x, op)
  local shape, unknown = {}, x.ndim < 0 -- an unknown rank: the shape comes when the graph runs
  for i = 0, x.ndim - 1 do
    shape[i + 1] = tonumber(x.dims[i])
    unknown = unknown or shape[i + 1] < 0
  end
  local dt = o.dtype and dtype.code(o.dtype, op) or x.dt
  if not unknown then return run_fill(shape, value, dt) end
  -- A traced x with unknown (None) dims: FILL takes x's shape when the graph
  -- runs; its ints keep the dims known now (-1 the others), so the result
  -- is as well shaped as x while tracing.
  local a = dispatch.attrs()
  a.dtype = C.TIDE_INT64
  return run_fill(shape, value, dt, dispatch.run1(C.TIDE_OP_SHAPE, a, x))
end

-- zeros_like(x, dtype=nil): zeros of x's shape and dtype (or the one given).
function M.zeros_like(x, ...) return like("zeros_like", x, 0, ...) end

-- ones_like(x, dtype=nil): ones of x's shape and dtype (or the one given).
function M.ones_like(x, ...) return like("ones_like", x, 1, ...) end

-- range(start, limit=nil, delta=1, dtype=nil) as tf.range: range(5) is
-- 0, 1, 2, 3, 4. The dtype is int32 when every argument is an integer
-- (int64 when one is large), else float32; tensor arguments bring theirs.
function M.range(start, ...)
  local o = args.parse("range", { "limit", "delta", "dtype" }, ...)
  if start == nil then binding.error("range: start (or limit) is required") end
  local limit, delta = o.limit, o.delta
  if limit == nil then start, limit = 0, start end
  if delta == nil then delta = 1 end
  local s, ds = scalar_arg("range", "start", start, true)
  local l, dl = scalar_arg("range", "limit", limit, true)
  local d, dd = scalar_arg("range", "delta", delta, true)
  local dt
  if o.dtype then
    dt = dtype.code(o.dtype, "range")
  else -- the widest of the three, as TF infers it
    local order = { [C.TIDE_INT8] = 1, [C.TIDE_UINT8] = 1, [I32] = 2, [I64] = 3, [C.TIDE_BFLOAT16] = 4,
                    [C.TIDE_FLOAT16] = 4, [F32] = 5, [C.TIDE_FLOAT64] = 6 }
    dt = ds
    for _, x in ipairs { dl, dd } do
      if (order[x] or 0) > (order[dt] or 0) then dt = x end
    end
    if dt == BOOL then binding.error("range: start, limit and delta must be numbers, got booleans") end
  end
  if istype(Tensor, s) or istype(Tensor, l) or istype(Tensor, d) then
    -- a bound known only when the traced function runs: range_dynamic takes
    -- the three as 0-d tensors of the dtype, and its length is read then
    local name = dtype.names[dt]
    local ins = {}
    for i, v in ipairs { s, l, d } do
      if istype(Tensor, v) then
        if v.ndim ~= 0 then v = v:reshape {} end
        if v.dt ~= dt then -- TF casts the bounds to the dtype first
          local ca = dispatch.attrs()
          ca.dtype = dt
          v = dispatch.run1(C.TIDE_OP_CAST, ca, v)
        end
        ins[i] = v
      else
        ins[i] = convert.tensor(v, name, "range")
      end
    end
    local a = dispatch.attrs()
    a.dtype = dt
    return dispatch.run(RANGE_DYNAMIC, a, ins, 1)
  end
  local a = dispatch.attrs()
  a.scalars[0], a.scalars[1], a.scalars[2] = s, l, d
  a.dtype = dt
  return dispatch.run(RANGE, a, {}, 1)
end

-- linspace(start, stop, num, {dtype}) as tf.linspace: num evenly spaced
-- values, the last exactly stop. float32 unless start is a tensor or dtype given.
function M.linspace(start, stop, num, ...)
  local o = args.parse("linspace", { "dtype" }, ...)
  local s, ds = scalar_arg("linspace", "start", start)
  local e = scalar_arg("linspace", "stop", stop)
  if num == nil then binding.error("linspace: num is required") end
  args.int("linspace", "num", num)
  local dt = o.dtype and dtype.code(o.dtype, "linspace") or (istype(Tensor, start) and ds or F32)
  local a = dispatch.attrs()
  a.ints[0] = num
  a.nints = 1
  a.scalars[0], a.scalars[1] = s, e
  a.dtype = dt
  return dispatch.run(LINSPACE, a, {}, 1)
end

-- eye(num_rows, num_columns=nil, batch_shape=nil, dtype="float32") as tf.eye:
-- a batch_shape gives a batch of identities (matrix_diag of ones, as TF's).
function M.eye(num_rows, ...)
  local o = args.parse("eye", { "num_columns", "batch_shape", "dtype" }, ...)
  if num_rows == nil then binding.error("eye: num_rows is required") end
  num_rows = args.int("eye", "num_rows", num_rows)
  local cols = o.num_columns == nil and num_rows or args.int("eye", "num_columns", o.num_columns)
  local dt = dtype.code(o.dtype or "float32", "eye")
  if num_rows < 0 or cols < 0 then
    binding.error(string.format("eye: num_rows and num_columns must be >= 0, got %d and %d", num_rows, cols))
  end
  if o.batch_shape ~= nil then
    local batch = args.int_list("eye", "batch_shape", o.batch_shape)
    batch[#batch + 1] = math.min(num_rows, cols)
    local ones = run_fill(batch, 1, dt) -- before the attrs: the block is shared
    local a = dispatch.attrs()
    a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.nints = 0, 0, num_rows, cols, 4
    a.m = 2
    return dispatch.run(C.TIDE_OP_MATRIX_DIAG, a, { ones }, 1)
  end
  local a = dispatch.attrs()
  a.ints[0], a.ints[1] = num_rows, cols
  a.nints = 2
  a.dtype = dt
  return dispatch.run(EYE, a, {}, 1)
end

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)

-- from_buffer(ptr, shape, dtype="float32", {copy=true, owner=nil}): a tensor
-- over C memory (a cdata pointer or array) or a Lua string's bytes, row-major.
-- copy=true copies the bytes; copy=false makes a zero-copy view of a cdata
-- pointer that keeps `owner` (default: the pointer's cdata) alive until the
-- last view of it is gone. A string cannot be viewed (strings are immutable).
-- A bool copy maps every nonzero byte to 1 (true), as TF and numpy read them;
-- a zero-copy bool view keeps the bytes, and every op reads nonzero as true.
function M.from_buffer(ptr, shape, ...)
  local o = args.parse("from_buffer", { "dtype", "copy", "owner" }, ...)
  local list, n = args.shape("from_buffer", shape)
  local dt = dtype.code(o.dtype or "float32", "from_buffer")
  local copy = args.bool("from_buffer", "copy", o.copy, true)
  local nbytes = n * dtype.size[dt]
  local tp = type(ptr)
  if tp == "string" then
    if not copy then
      binding.error("from_buffer: copy=false needs a cdata pointer; a Lua string is immutable (use copy=true)")
    end
    if #ptr < nbytes then
      binding.error(string.format("from_buffer: the string has %d bytes but shape and dtype need %d", #ptr, nbytes))
    end
  elseif tp == "cdata" and not istype(Tensor, ptr) then
    if not pointers_allowed then
      binding.error("from_buffer: raw pointers are not allowed in this sandbox (pass a Lua string, or let the " ..
        "host allow ffi)")
    end
    local ct = tostring(ffi.typeof(ptr))
    if ct:find("%[") then -- an array knows its size
      local size = ffi.sizeof(ptr)
      if size and size < nbytes then
        binding.error(string.format("from_buffer: the array has %d bytes but shape and dtype need %d", size, nbytes))
      end
    elseif not ct:find("%*") then
      binding.error("from_buffer: expected a cdata pointer or array, got " .. ct)
    end
    if ptr == nil and nbytes > 0 then binding.error("from_buffer: the pointer is NULL") end
  else
    binding.error("from_buffer: expected a cdata pointer or a Lua string, got " .. tp)
  end
  if copy then
    local t = convert.empty(dt, list, "from_buffer")
    if nbytes > 0 then ffi.copy(ffi.cast("void *", t.data), ptr, nbytes) end
    if dt == C.TIDE_BOOL then -- any nonzero byte is true (TF, numpy): a copy holds 0 and 1 only
      local p = ffi.cast("uint8_t *", t.data)
      for i = 0, n - 1 do
        if p[i] > 1 then p[i] = 1 end
      end
      binding.keep_alive(t)
    end
    return t
  end
  for i = 1, #list do dims_buf[i - 1] = list[i] end
  local owner = o.owner
  if owner == nil then owner = ptr end
  local token = binding.hold_owner(owner)
  local t = Tensor()
  if C.tide_tensor_wrap(t, ffi.cast("void *", ptr), dt, #list, dims_buf, nil, C.tide_release_token, token) ~= 0 then
    C.tide_release_token(token, nil) -- let the owner go again
    binding.raise()
  end
  return binding.track(t)
end

return M
