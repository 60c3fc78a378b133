-- stdlib/tide/tracing/tensor_array.lua — tide.TensorArray (TF 2's
-- tf.TensorArray), eager and traced alike; carried through tide.cond and
-- tide.while_loop (tracing/control.lua) as its one buffer tensor.
local binding = require "tide.binding"
local class = require "tide.class"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local values = require "tide.tracing.values"
local tensor = require "tide.tensor"
local tensor_shape = require "tide.tensor_shape"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local create = require "tide.ops.create"
local update = require "tide.ops.update"
local scatter = require "tide.ops.scatter"
local dynamic_shape = require "tide.ops.dynamic_shape"
local C = binding.C
local unpack = unpack or table.unpack
local None = spec.None
local is_tensor, symbolic, tracing = values.is_tensor, values.symbolic, values.tracing
local is_variable, read_variable = values.is_variable, values.read_variable
local dims_of, dims_text = values.dims_of, values.dims_text
local all_known, count_arg = values.all_known, values.count_arg

local M = {}

local I32 = C.TIDE_INT32

local TensorArray = class("TensorArray")
M.TensorArray = TensorArray
function M.is_ta(x) return getmetatable(x) == TensorArray end

---------------------------------------------------------------------------
-- tide.TensorArray
---------------------------------------------------------------------------
-- A TensorArray is functional (TF 2's): write and unstack return a new one.
-- It holds one tensor, a buffer of shape [size, element...] whose row i is
-- element i (zeros where nothing was written, as TF reads unwritten
-- elements of a known shape), so it works the same eagerly and traced and
-- rides through while_loop and cond as that one tensor. With dynamic_size
-- the buffer grows (exactly) to the largest index written.

-- An element shape from a list of sizes and tide.None (or -1), or nil.
local function element_shape_arg(v)
  if v == nil then return nil end
  if type(v) ~= "table" then binding.error("TensorArray: element_shape must be a list of sizes and tide.None") end
  local out = {}
  for i = 1, (v.n or #v) do
    local d = v[i]
    if d == None or d == -1 then out[i] = -1
    elseif type(d) == "number" and d >= 0 and d == math.floor(d) then out[i] = d
    else binding.error(string.format("TensorArray: element_shape entry %d must be a size or tide.None, got %s", i,
      tostring(d))) end
  end
  return out
end

-- The more specific of two compatible shapes, or nil when they conflict.
local function merge_shapes(a, b)
  if a == nil then return b end
  if b == nil then return a end
  if #a ~= #b then return nil end
  local out = {}
  for i = 1, #a do
    if a[i] == -1 then out[i] = b[i]
    elseif b[i] == -1 or b[i] == a[i] then out[i] = a[i]
    else return nil end
  end
  return out
end

local function shape_list(dims)
  local s = {}
  for i, d in ipairs(dims) do s[i] = d == -1 and None or d end
  return setmetatable(s, tensor_shape.Shape)
end

-- TensorArray(dtype, {size=, dynamic_size=false, clear_after_read=,
-- element_shape=, infer_shape=true}) as tf.TensorArray. size is a number or
-- a scalar tensor (a symbolic size is known only at run time: the buffer then
-- has that many rows when the graph runs, and its row count is None here).
function TensorArray:__init(dt, ...)
  local o = args.parse("TensorArray", { "size", "dynamic_size", "clear_after_read", "tensor_array_name", "handle",
    "flow", "infer_shape", "element_shape", "colocate_with_first_write_call", "name" }, ...)
  if dt == nil then binding.error("TensorArray: dtype is required") end
  local code = dtype.code(dt, "TensorArray")
  if o.handle ~= nil or o.flow ~= nil then binding.error("TensorArray: handle and flow are not supported") end
  self.dtype = dtype.names[code]
  self._dt = code
  self.dynamic_size = args.bool("TensorArray", "dynamic_size", o.dynamic_size, false)
  self._infer_shape = args.bool("TensorArray", "infer_shape", o.infer_shape, true)
  self._element_shape = element_shape_arg(o.element_shape)
  local size = o.size
  if is_variable(size) then size = read_variable(size) end
  if size == nil then
    binding.error("TensorArray: size is required (size=0, dynamic_size=true makes an array that grows)")
  end
  if is_tensor(size) and symbolic(size) then
    if size.dt ~= I32 and size.dt ~= C.TIDE_INT64 then
      binding.error("TensorArray: size must be an integer, got a " .. dtype.names[size.dt] .. " tensor")
    end
    self._size = 0
    self._size_t = shape_ops.reshape(math_ops.cast(size, "int32"), { 1 })
  else
    self._size = count_arg("TensorArray", "size", size)
  end
  local es = self._element_shape
  if es and all_known(es) then self._buffer = self:_zeros(es) end
end

-- Zeros for a buffer: self's size rows (a number, or the symbolic size) of
-- elements of shape `dims` (a list whose -1 dims are 1 here: a write
-- broadcasts them) or `shape` (a value's shape, a 1-D int32 tensor).
function TensorArray:_zeros(dims, shape)
  local n = rawget(self, "_size_t")
  if n == nil and not shape then
    local d = { self._size }
    for i, v in ipairs(dims) do d[i + 1] = v < 0 and 1 or v end
    return create.zeros(d, { dtype = self.dtype })
  end
  local parts = { n or convert.tensor({ self._size }, "int32") }
  if shape then parts[2] = shape
  elseif #dims > 0 then
    local d = {}
    for i, v in ipairs(dims) do d[i] = v < 0 and 1 or v end
    parts[2] = convert.tensor(d, "int32")
  end
  return create.zeros(#parts == 1 and n or shape_ops.concat(parts, 0), { dtype = self.dtype })
end

-- A TensorArray like self with another buffer and element shape.
function TensorArray:_with(buffer, element_shape)
  local t = setmetatable({}, TensorArray)
  for k, v in pairs(self) do t[k] = v end
  t._buffer = buffer
  t._element_shape = element_shape
  return t
end

-- self with zeros for a buffer shaped like `like` (a buffer a loop body or a
-- branch made). An element dim known only at run time is 1 here: the first
-- write broadcasts it to the value's (writes by a run-time index do).
function TensorArray:_with_zeros(like)
  local es = { unpack(dims_of(like), 2) }
  return self:_with(self:_zeros(es), merge_shapes(self._element_shape, es) or es)
end

-- The tensors two TensorArrays carry (for cond branches and loop bodies that
-- must agree); why(text) fails. A branch that never wrote one gets zeros.
function M.leaves(a, b, why)
  if a._dt ~= b._dt then why(string.format("the TensorArrays hold %s and %s", a.dtype, b.dtype)) end
  local ba, bb = rawget(a, "_buffer"), rawget(b, "_buffer")
  if ba == nil and bb == nil then return {}, {} end
  if ba == nil then ba = rawget(a:_with_zeros(bb), "_buffer") end
  if bb == nil then bb = rawget(b:_with_zeros(ba), "_buffer") end
  if ba.ndim ~= bb.ndim then
    why(string.format("the TensorArrays' elements have ranks %d and %d", ba.ndim - 1, bb.ndim - 1))
  end
  return { ba }, { bb }
end

-- A TensorArray described by ta whose buffer comes from next_tensor (if any).
function M.from_buffer(ta, next_tensor)
  if not next_tensor then return ta end
  local b = next_tensor()
  local es = { unpack(dims_of(b), 2) }
  return ta:_with(b, merge_shapes(rawget(ta, "_element_shape"), es) or es)
end

-- Integer index from a Lua number or an eager tensor, or a symbolic scalar.
local function index_arg(op, i)
  if i == nil then binding.error(op .. ": index is nil") end
  if is_variable(i) then i = read_variable(i) end
  if is_tensor(i) then
    if i.dt ~= I32 and i.dt ~= C.TIDE_INT64 then
      binding.error(string.format("%s: index must be an integer, got a %s tensor", op, dtype.names[i.dt]))
    end
    if symbolic(i) then
      for _, d in ipairs(dims_of(i) or {}) do -- an unknown rank: one element is checked when it runs
        if d ~= 1 and d ~= -1 then binding.error(op .. ": index must be a scalar, got shape " .. dims_text(dims_of(i))) end
      end
      return nil, shape_ops.reshape(i, {})
    end
    if i.nelem ~= 1 then binding.error(op .. ": index must be a scalar, got shape " .. dims_text(dims_of(i))) end
    i = tensor.item(i)
  end
  local k = args.int(op, "index", i)
  return k
end

-- The number of rows of buffer b as an int32 scalar tensor (read when the
-- graph runs if unknown while tracing), and an int32 vector of that many zeros.
local function row_count(b) return dynamic_shape.size_along(b, 0) end
local function row_zeros(b)
  local rows = tonumber(b.dims[0])
  if rows >= 0 then return create.zeros({ rows }, { dtype = "int32" }) end
  return create.zeros(shape_ops.reshape(row_count(b), { 1 }), { dtype = "int32" })
end

-- A zeros element-shaped like value, as one row [1, ...].
local function zero_row(value)
  return shape_ops.expand_dims(create.zeros_like(value), 0)
end

-- Checked value for write: a tensor of the array's dtype, element shape fitting.
function TensorArray:_value(op, value)
  if value == nil then binding.error(op .. ": value is nil") end
  if is_variable(value) then value = read_variable(value) end
  if not is_tensor(value) then value = convert.tensor(value, self.dtype, op) end
  if value.dt ~= self._dt then
    binding.error(string.format("%s: the TensorArray holds %s but the value is %s (cast it)", op, self.dtype,
      dtype.names[value.dt]))
  end
  if value.ndim < 0 then -- its elements live in one buffer [size, element dims...]
    binding.error(string.format("%s: the value's rank is unknown until the traced function runs (a TensorSpec of " ..
      "shape nil), and a TensorArray keeps its elements in one buffer of known rank; give the value a rank " ..
      "(tide.None for unknown dims)", op))
  end
  return value
end

-- The element shape after adding one of shape dims (error when it conflicts).
function TensorArray:_element_after(op, dims)
  local es = rawget(self, "_element_shape")
  local merged = merge_shapes(es, dims)
  if es and not merged then
    binding.error(string.format("%s: the value has shape %s but the TensorArray's elements have shape %s", op,
      dims_text(dims), dims_text(es)))
  end
  if not self._infer_shape then return es end
  return merged
end

-- write(index, value): a new TensorArray with element index set to value.
-- index is a number or an integer scalar tensor (symbolic in loops).
function TensorArray:write(index, value)
  local op = "TensorArray.write"
  local k, kt = index_arg(op, index)
  value = self:_value(op, value)
  local es = self:_element_after(op, dims_of(value))
  local b = rawget(self, "_buffer")
  if b == nil then -- first write: rows of zeros shaped like value
    local dims = dims_of(value)
    b = all_known(dims) and self:_zeros(dims) or self:_zeros(nil, dynamic_shape.shape(value))
  end
  if b.ndim - 1 ~= value.ndim then
    binding.error(string.format("%s: the value has shape %s but the TensorArray's elements have shape %s", op,
      dims_text(dims_of(value)), dims_text({ unpack(dims_of(b), 2) })))
  end
  local rows = tonumber(b.dims[0])
  -- exact: the buffer's elements surely have value's shape (else a write broadcasts them to it). A dim
  -- known only at run time is not sure: a loop's buffer starts as zeros with 1 there (_with_zeros).
  local exact = true
  for i = 1, value.ndim do
    local d = tonumber(value.dims[i - 1])
    exact = exact and d >= 0 and tonumber(b.dims[i]) == d
  end
  if k then
    if k < 0 then binding.error(string.format("%s: index %d is negative", op, k)) end
    if rows >= 0 and exact then
      if k >= rows then
        if not self.dynamic_size then
          binding.error(string.format("%s: index %d is out of range: the TensorArray has size %d and is not " ..
            "dynamic_size", op, k, rows))
        end
        local pads = { { 0, k + 1 - rows } }
        for i = 1, value.ndim do pads[i + 1] = { 0, 0 } end
        b = shape_ops.pad(b, pads)
      end
      return self:_with(update.slice_update(b, { k }, value), es)
    end
    if rows >= 0 and k >= rows and not self.dynamic_size then
      binding.error(string.format("%s: index %d is out of range: the TensorArray has size %d and is not " ..
        "dynamic_size", op, k, rows))
    end
    kt = convert.tensor(k, "int32")
  end
  -- index known only at run time: grow if allowed, then replace the row by a mask
  if self.dynamic_size then
    -- append max(index + 1 - rows, 0) rows of zeros: one concat, no loop (a gradient through a loop
    -- stacks its variables, which must keep their shape)
    local need = math_ops.add(math_ops.cast(kt, "int32"), 1)
    local extra = math_ops.maximum(math_ops.subtract(need, row_count(b)), convert.tensor(0, "int32"))
    local zeros_shape = shape_ops.concat({ shape_ops.reshape(extra, { 1 }), dynamic_shape.shape(value) }, 0)
    -- a buffer not surely element-shaped like value is broadcast to it first (concat does not broadcast)
    if not exact then b = math_ops.where(convert.tensor(true, "bool"), b, zero_row(value)) end
    b = shape_ops.concat({ b, create.zeros(zeros_shape, { dtype = self.dtype }) }, 0)
  end
  -- scatter_add checks the index against the rows at run time
  local hit = scatter.scatter_add(row_zeros(b), shape_ops.reshape(math_ops.cast(kt, "int32"), { 1 }),
    convert.tensor({ 1 }, "int32"))
  local mask = math_ops.cast(hit, "bool")
  for _ = 1, value.ndim do mask = shape_ops.expand_dims(mask, -1) end
  return self:_with(math_ops.where(mask, shape_ops.expand_dims(value, 0), b), es)
end

-- read(index): element index (zeros where nothing was written).
function TensorArray:read(index)
  local op = "TensorArray.read"
  local k, kt = index_arg(op, index)
  local b = rawget(self, "_buffer")
  if b == nil then
    local es = rawget(self, "_element_shape")
    if k and k >= self._size and not self.dynamic_size and not rawget(self, "_size_t") then
      binding.error(string.format("%s: index %d is out of range: the TensorArray has size %d", op, k, self._size))
    end
    if es and all_known(es) then return create.zeros(es, { dtype = self.dtype }) end
    binding.error(op .. ": nothing was written to the TensorArray and its element shape is unknown")
  end
  local rows = tonumber(b.dims[0])
  if k and rows >= 0 then
    if k < 0 or k >= rows then
      binding.error(string.format("%s: index %d is out of range: the TensorArray has size %d", op, k, rows))
    end
    return b[k]
  end
  return shape_ops.gather(b, kt or convert.tensor(k, "int32"))
end

-- stack(): the elements as one tensor [size, element...].
function TensorArray:stack()
  local b = rawget(self, "_buffer")
  if b then return b end
  local es = rawget(self, "_element_shape")
  if es and all_known(es) then
    local dims = { self._size }
    for i, d in ipairs(es) do dims[i + 1] = d end
    return create.zeros(dims, { dtype = self.dtype })
  end
  binding.error("TensorArray.stack: nothing was written and the element shape is unknown (give element_shape)")
end

-- gather(indices): the elements at indices, stacked.
function TensorArray:gather(indices)
  if indices == nil then binding.error("TensorArray.gather: indices is nil") end
  return shape_ops.gather(self:stack(), indices)
end

-- concat(): the elements joined along their first dim.
function TensorArray:concat()
  local b = self:stack()
  if b.ndim < 2 then binding.error("TensorArray.concat: the elements must have rank at least 1") end
  local dims = dims_of(b)
  local shape = { -1 }
  for i = 3, #dims do shape[#shape + 1] = dims[i] end
  return shape_ops.reshape(b, shape)
end

-- unstack(value): a new TensorArray whose elements are value's rows.
function TensorArray:unstack(value)
  local op = "TensorArray.unstack"
  value = self:_value(op, value)
  if value.ndim < 1 then binding.error(op .. ": value must have rank at least 1, got a scalar") end
  local dims = dims_of(value)
  local es = self:_element_after(op, { unpack(dims, 2) })
  local n = dims[1]
  if n >= 0 and not self.dynamic_size and not rawget(self, "_size_t") then
    if n > self._size then
      binding.error(string.format("%s: value has %d rows but the TensorArray has size %d and is not dynamic_size", op,
        n, self._size))
    end
    if n < self._size then -- the rows after value's stay zeros
      local pads = { { 0, self._size - n } }
      for i = 2, #dims do pads[i] = { 0, 0 } end
      value = shape_ops.pad(value, pads)
    end
  end
  return self:_with(value, es)
end

-- scatter(indices, value): a new TensorArray with element indices[j] = value[j].
function TensorArray:scatter(indices, value)
  local op = "TensorArray.scatter"
  if indices == nil then binding.error(op .. ": indices is nil") end
  value = self:_value(op, value)
  local idx = is_tensor(indices) and indices or convert.tensor(indices, "int32", op)
  if idx.ndim ~= 1 then binding.error(op .. ": indices must be a list (rank 1)") end
  local ta = self
  local n = tonumber(idx.dims[0])
  if n < 0 then binding.error(op .. ": the number of indices must be known when tracing") end
  for j = 0, n - 1 do
    local i = symbolic(idx) and shape_ops.gather(idx, convert.tensor(j, "int32")) or idx[j]
    ta = ta:write(i, shape_ops.gather(value, convert.tensor(j, "int32")))
  end
  return ta
end

-- size(): the number of elements, an int32 scalar tensor.
function TensorArray:size()
  local b = rawget(self, "_buffer")
  if b then return row_count(b) end
  local n = rawget(self, "_size_t")
  return n and shape_ops.reshape(n, {}) or convert.tensor(self._size, "int32")
end

-- ta.element_shape: a Shape (tide.None where unknown), or nil when unknown.
TensorArray.__index = function(ta, k)
  if k == "element_shape" then
    local es = rawget(ta, "_element_shape")
    return es and shape_list(es) or nil
  end
  local m = TensorArray[k]
  if m == nil and type(k) == "string" and k:sub(1, 1) ~= "_" then
    binding.error("TensorArray has no method or property '" .. k .. "'")
  end
  return m
end

-- identity(), close(): TF's bookkeeping; nothing to do for a functional array.
function TensorArray:identity() return self end
function TensorArray:close() end

TensorArray.__tostring = function(ta)
  local b = rawget(ta, "_buffer")
  return string.format("<tide.TensorArray %s size=%s element_shape=%s%s>", ta.dtype,
    b and (tonumber(b.dims[0]) >= 0 and tostring(tonumber(b.dims[0])) or "None")
      or (rawget(ta, "_size_t") and "None" or tostring(ta._size)),
    ta._element_shape and dims_text(ta._element_shape) or "<unknown>", ta.dynamic_size and " dynamic" or "")
end

return M
