-- stdlib/tide/tracing/tf_types.lua — TF's top-level type names as tide values: Tensor, TensorShape, DType (type
-- checks and constructors), the TypeSpec family and IndexedSlices, type_spec_from_value, is_symbolic_tensor, the
-- enums, DeviceSpec, CriticalSection, get_logger, check_pinned, register_tensor_conversion_function and
-- nondifferentiable_batch_function (tide.<name>).
local binding = require "tide.binding"
local class = require "tide.class"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local tensor_shape = require "tide.tensor_shape"
local values = require "tide.tracing.values"
local spec = require "tide.tracing.spec"
local shape_ops = require "tide.ops.shape"
local fmt = string.format

local C = binding.C
local M = {}

local function fail(op, f, ...) binding.error(op .. ": " .. fmt(f, ...)) end

-- A "class" that Lua code checks values against: M.Tensor:is_instance(x) (TF's isinstance(x, tf.Tensor)), and
-- calling it builds a value as `make` does.
local function type_check(name, test, make)
  return setmetatable({ __name = name, is_instance = function(_, x) return test(x) == true end }, {
    __call = function(_, ...)
      if not make then fail(name, "is a type to check values against (%s:is_instance(x)), not a constructor", name) end
      return make(...)
    end,
    __tostring = function() return "class " .. name end,
  })
end

-- tide.Tensor: tide's tensors (eager and traced); tide.Tensor(value, dtype) is tide.tensor.
M.Tensor = type_check("Tensor", binding.istensor, function(v, dt) return convert.tensor(v, dt, "Tensor") end)
-- tide.TensorShape: tide.Shape, x.shape's class; tide.TensorShape({2, tide.None}) builds one (nil: unknown rank).
M.TensorShape = type_check("TensorShape", function(x) return type(x) == "table" and getmetatable(x) == tensor_shape.Shape end,
  function(dims)
    if type(dims) == "table" and getmetatable(dims) == tensor_shape.Shape then return dims end
    local list = spec.normalize_shape(dims, "TensorShape")
    if list == nil then return tensor_shape.unknown() end
    return setmetatable(list, tensor_shape.Shape)
  end)
-- tide.DType: the dtype constants (tide.float32 ...); tide.DType("float32") is tide.as_dtype.
M.DType = type_check("DType", dtype.is_dtype, function(v)
  if dtype.is_dtype(v) then return v end
  if type(v) ~= "string" then fail("DType", "expected a dtype name, got %s", type(v)) end
  return dtype.constants[dtype.names[dtype.code(v, "DType")]]
end)

-- is_symbolic_tensor(x) as tf.is_symbolic_tensor: true for a tensor of a graph tide.trace is building (it has no
-- value yet), false for eager tensors and everything else.
function M.is_symbolic_tensor(x)
  return binding.istensor(x) and bit.band(x.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0
end

-- ---- TypeSpecs ------------------------------------------------------------------------------

-- TypeSpec: the base of the specs (TF's tf.TypeSpec): value_type names the values a spec describes;
-- is_compatible_with(spec_or_value) compares the specs as TF's does (same class and compatible fields).
local TypeSpec = class("TypeSpec")
M.TypeSpec = TypeSpec
TypeSpec.value_type = "value"
function TypeSpec:__init() fail("TypeSpec", "is abstract: use TensorSpec, RaggedTensorSpec, ... or a class of your own") end
function TypeSpec:_fields() return {} end
function TypeSpec:is_compatible_with(other)
  if not class.is_instance(other, TypeSpec) then
    local ok, s = pcall(M.type_spec_from_value, other)
    if not ok then return false end
    other = s
  end
  if getmetatable(other) ~= getmetatable(self) then return false end
  local a, b = self:_fields(), other:_fields()
  for k, v in pairs(a) do
    local w = b[k]
    if type(v) == "table" and type(w) == "table" and v.is_compatible_with then
      if not v:is_compatible_with(w) then return false end
    elseif v ~= nil and w ~= nil and tostring(v) ~= tostring(w) then
      return false
    end
  end
  return true
end
function TypeSpec.__eq(a, b)
  if getmetatable(a) ~= getmetatable(b) then return false end
  local x, y = a:_fields(), b:_fields()
  for k, v in pairs(x) do if tostring(v) ~= tostring(y[k]) then return false end end
  for k in pairs(y) do if x[k] == nil then return false end end
  return true
end
function TypeSpec:__tostring()
  local parts, keys = {}, {}
  for k in pairs(self:_fields()) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(self:_fields()[k]) end
  return self.__name .. "(" .. table.concat(parts, ", ") .. ")"
end

local function shape_of(op, s)
  if type(s) == "table" and getmetatable(s) == tensor_shape.Shape then return s end
  local list = spec.normalize_shape(s, op)
  if list == nil then return tensor_shape.unknown() end
  return setmetatable(list, tensor_shape.Shape)
end

local function dtype_of(op, dt, default)
  if dt == nil then dt = default end
  return dtype.constants[dtype.names[dtype.code(dt, op)]]
end

-- NoneTensorSpec(): the spec of nil (TF's None values in a structure).
local NoneTensorSpec = class("NoneTensorSpec", TypeSpec)
M.NoneTensorSpec = NoneTensorSpec
NoneTensorSpec.value_type = "nil"
function NoneTensorSpec:__init() end

-- RaggedTensorSpec(shape=nil, dtype="float32", ragged_rank=nil, row_splits_dtype="int64"): a RaggedTensor's spec
-- (ragged_rank defaults to rank - 1).
local RaggedTensorSpec = class("RaggedTensorSpec", TypeSpec)
M.RaggedTensorSpec = RaggedTensorSpec
RaggedTensorSpec.value_type = "RaggedTensor"
function RaggedTensorSpec:__init(shape, dt, ragged_rank, row_splits_dtype)
  local op = "RaggedTensorSpec"
  self.shape = shape_of(op, shape)
  self.dtype = dtype_of(op, dt, "float32")
  local rank = self.shape.rank
  if ragged_rank == nil then
    if rank == nil then fail(op, "ragged_rank must be given when the shape's rank is unknown") end
    ragged_rank = rank - 1
  end
  if type(ragged_rank) ~= "number" or ragged_rank < 0 or ragged_rank % 1 ~= 0 or (rank and ragged_rank >= rank and rank > 0) then
    fail(op, "ragged_rank must be an integer in [0, rank), got %s", tostring(ragged_rank))
  end
  self.ragged_rank = ragged_rank
  self.row_splits_dtype = dtype_of(op, row_splits_dtype, "int64")
  if tostring(self.row_splits_dtype) ~= "int32" and tostring(self.row_splits_dtype) ~= "int64" then
    fail(op, "row_splits_dtype must be int32 or int64, got %s", tostring(self.row_splits_dtype))
  end
end
function RaggedTensorSpec:_fields()
  return { shape = self.shape, dtype = self.dtype, ragged_rank = self.ragged_rank,
    row_splits_dtype = self.row_splits_dtype }
end

-- IndexedSlicesSpec(shape=nil, dtype="float32", indices_dtype="int64", dense_shape_dtype=nil, indices_shape=nil).
local IndexedSlicesSpec = class("IndexedSlicesSpec", TypeSpec)
M.IndexedSlicesSpec = IndexedSlicesSpec
IndexedSlicesSpec.value_type = "IndexedSlices"
function IndexedSlicesSpec:__init(shape, dt, indices_dtype, dense_shape_dtype, indices_shape)
  local op = "IndexedSlicesSpec"
  self.shape = shape_of(op, shape)
  self.dtype = dtype_of(op, dt, "float32")
  self.indices_dtype = dtype_of(op, indices_dtype, "int64")
  self.dense_shape_dtype = dense_shape_dtype ~= nil and dtype_of(op, dense_shape_dtype) or nil
  self.indices_shape = indices_shape ~= nil and shape_of(op, indices_shape) or nil
end
function IndexedSlicesSpec:_fields()
  return { shape = self.shape, dtype = self.dtype, indices_dtype = self.indices_dtype,
    dense_shape_dtype = self.dense_shape_dtype }
end

-- TensorArraySpec(element_shape=nil, dtype="float32", dynamic_size=nil, infer_shape=true): a tide.TensorArray's.
local TensorArraySpec = class("TensorArraySpec", TypeSpec)
M.TensorArraySpec = TensorArraySpec
TensorArraySpec.value_type = "TensorArray"
function TensorArraySpec:__init(element_shape, dt, dynamic_size, infer_shape)
  local op = "TensorArraySpec"
  self.element_shape = shape_of(op, element_shape)
  self.dtype = dtype_of(op, dt, "float32")
  self.dynamic_size = dynamic_size
  self.infer_shape = infer_shape == nil and true or infer_shape
end
function TensorArraySpec:_fields()
  return { element_shape = self.element_shape, dtype = self.dtype, dynamic_size = self.dynamic_size,
    infer_shape = self.infer_shape }
end

-- OptionalSpec(element_spec): the spec of an optional value (TF's tf.experimental.Optional, which tide's
-- datasets give as a Lua value or nil): its element's spec.
local OptionalSpec = class("OptionalSpec", TypeSpec)
M.OptionalSpec = OptionalSpec
OptionalSpec.value_type = "Optional"
function OptionalSpec:__init(element_spec)
  if element_spec ~= nil and not class.is_instance(element_spec, TypeSpec) and not spec.is_spec(element_spec) then
    fail("OptionalSpec", "element_spec must be a TypeSpec or TensorSpec, got %s", type(element_spec))
  end
  self.element_spec = element_spec
end
function OptionalSpec:_fields() return { element_spec = self.element_spec } end

-- (metamethods are read from the instance's own class, not through __index: each spec class gets the base's)
for _, cls in ipairs { NoneTensorSpec, RaggedTensorSpec, IndexedSlicesSpec, TensorArraySpec, OptionalSpec } do
  cls.__tostring, cls.__eq = TypeSpec.__tostring, TypeSpec.__eq
end

-- ---- IndexedSlices ---------------------------------------------------------------------------

-- IndexedSlices(values, indices, dense_shape=nil) as tf.IndexedSlices: rows `indices` of a dense tensor (TF's
-- sparse gradient of a gather). tide's tapes give dense gradients; this is the value for code that builds or
-- reads one: :to_dense() (the rows scattered and summed), tide.tensor(slices) converts the same way.
local IndexedSlices = class("IndexedSlices")
M.IndexedSlices = IndexedSlices
function IndexedSlices:__init(values_, indices, dense_shape)
  local op = "IndexedSlices"
  self.values = convert.arg(values_, op .. " (values)")
  self.indices = convert.arg(indices, op .. " (indices)")
  local idt = dtype.names[self.indices.dt]
  if idt ~= "int32" and idt ~= "int64" then fail(op, "indices must be int32 or int64, got %s", idt) end
  if self.indices.ndim ~= 1 then fail(op, "indices must be 1-D, got shape %s", tostring(self.indices.shape)) end
  if dense_shape ~= nil then
    self.dense_shape = binding.istensor(dense_shape) and dense_shape or convert.tensor(dense_shape, "int64", op)
  end
  self.dtype = dtype.constants[dtype.names[self.values.dt]]
end
function IndexedSlices:to_dense()
  if not self.dense_shape then fail("IndexedSlices", "to_dense needs the dense_shape") end
  local shp = self.dense_shape:totable()
  local ops_scatter = require "tide.ops.index"
  return ops_scatter.scatter_nd(shape_ops.expand_dims(self.indices, -1), self.values, shp)
end
function IndexedSlices:__tostring()
  return fmt("IndexedSlices(indices=%s, values=%s, dense_shape=%s)", tostring(self.indices.shape),
    tostring(self.values.shape), self.dense_shape and table.concat(self.dense_shape:totable(), ",") or "None")
end

-- type_spec_from_value(value) as tf.type_spec_from_value: a tensor's TensorSpec (its shape and dtype), a
-- Variable's (its value's), nil's NoneTensorSpec, an IndexedSlices' IndexedSlicesSpec, and for any other object
-- whose class has a :_type_spec() method, that (tide.SparseTensor, tide.RaggedTensor, tide.TensorArray).
function M.type_spec_from_value(v)
  local op = "type_spec_from_value"
  if values.is_variable(v) then v = values.read_variable(v) end
  if binding.istensor(v) then return spec.TensorSpec.from_tensor(v) end
  if v == nil then return NoneTensorSpec() end
  if class.is_instance(v, IndexedSlices) then
    return IndexedSlicesSpec(v.values.shape, v.dtype, dtype.names[v.indices.dt],
      v.dense_shape and dtype.names[v.dense_shape.dt] or nil)
  end
  if type(v) == "table" and type(v._type_spec) == "function" then return v:_type_spec() end
  if type(v) == "number" or type(v) == "boolean" or type(v) == "string" or type(v) == "table" then
    local ok, t = pcall(convert.tensor, v, nil, op)
    if ok then return spec.TensorSpec.from_tensor(t) end
  end
  fail(op, "could not build a TypeSpec for a %s", type(v))
end

-- ---- enums --------------------------------------------------------------------------------

-- An enum as TF's: members with .name and .value, compared by identity; E[name] and E(value) find one.
local function enum(name, members)
  local e = { __name = name }
  local by_value = {}
  for _, m in ipairs(members) do
    local member = setmetatable({ name = m[1], value = m[2] }, {
      __tostring = function() return name .. "." .. m[1] end,
    })
    e[m[1]] = member
    by_value[m[2]] = member
  end
  return setmetatable(e, {
    __call = function(_, v)
      local m = by_value[v]
      if not m then fail(name, "no member has the value %s", tostring(v)) end
      return m
    end,
    __tostring = function() return "enum " .. name end,
  })
end

M.VariableAggregation = enum("VariableAggregation", { { "NONE", 0 }, { "SUM", 1 }, { "MEAN", 2 },
  { "ONLY_FIRST_REPLICA", 3 } })
M.VariableSynchronization = enum("VariableSynchronization", { { "AUTO", 0 }, { "NONE", 1 }, { "ON_WRITE", 2 },
  { "ON_READ", 3 } })
M.AggregationMethod = enum("AggregationMethod", { { "ADD_N", 0 }, { "DEFAULT", 0 }, { "EXPERIMENTAL_TREE", 1 },
  { "EXPERIMENTAL_ACCUMULATE_N", 2 } })
M.AggregationMethod.DEFAULT = M.AggregationMethod.ADD_N -- TF: DEFAULT is ADD_N
M.UnconnectedGradients = enum("UnconnectedGradients", { { "NONE", "none" }, { "ZERO", "zero" } })

-- ---- devices --------------------------------------------------------------------------------

-- DeviceSpec{job=, replica=, task=, device_type=, device_index=} as tf.DeviceSpec, with from_string and
-- to_string of "/job:x/replica:0/task:0/device:GPU:0" (also the short "/gpu:0" and "/cpu:0").
local DeviceSpec = class("DeviceSpec")
M.DeviceSpec = DeviceSpec
local FIELDS = { "job", "replica", "task", "device_type", "device_index" }
function DeviceSpec:__init(o)
  o = o or {}
  if type(o) ~= "table" then fail("DeviceSpec", "expects an options table {job=, replica=, task=, device_type=, device_index=}") end
  for k in pairs(o) do
    local known = false
    for _, f in ipairs(FIELDS) do if f == k then known = true end end
    if not known then fail("DeviceSpec", "unknown field %s (fields: %s)", tostring(k), table.concat(FIELDS, ", ")) end
  end
  self.job = o.job
  for _, k in ipairs { "replica", "task", "device_index" } do
    local v = o[k]
    if v ~= nil and (type(v) ~= "number" or v < 0 or v % 1 ~= 0) then
      fail("DeviceSpec", "%s must be a non-negative integer, got %s", k, tostring(v))
    end
    self[k] = v
  end
  self.device_type = o.device_type and tostring(o.device_type):upper() or nil
end

function DeviceSpec.from_string(s)
  local op = "DeviceSpec.from_string"
  if type(s) ~= "string" then fail(op, "expected a string, got %s", type(s)) end
  local o = {}
  for part in s:gmatch("[^/]+") do
    local key, rest = part:match("^([%w_]+):(.*)$")
    local lk = key and key:lower()
    if lk == "job" then o.job = rest
    elseif lk == "replica" and tonumber(rest) then o.replica = tonumber(rest)
    elseif lk == "task" and tonumber(rest) then o.task = tonumber(rest)
    elseif lk == "device" then
      local t, i = rest:match("^([%w_]+):?(.*)$")
      if not t then fail(op, "cannot read %q in %q", part, s) end
      o.device_type = t:upper()
      if i ~= "" and i ~= "*" then
        if not tonumber(i) then fail(op, "cannot read %q in %q", part, s) end
        o.device_index = tonumber(i)
      end
    elseif key and (lk == "cpu" or lk == "gpu" or lk == "tpu") and (rest == "*" or tonumber(rest)) then
      o.device_type = lk:upper()
      if rest ~= "*" then o.device_index = tonumber(rest) end
    elseif not key and (part:lower() == "cpu" or part:lower() == "gpu") then
      o.device_type = part:upper()
    else
      fail(op, "cannot read %q in %q", part, s)
    end
  end
  return DeviceSpec(o)
end

function DeviceSpec:to_string()
  local out = {}
  if self.job then out[#out + 1] = "/job:" .. self.job end
  if self.replica then out[#out + 1] = "/replica:" .. self.replica end
  if self.task then out[#out + 1] = "/task:" .. self.task end
  if self.device_type then
    out[#out + 1] = "/device:" .. self.device_type .. ":" .. (self.device_index and tostring(self.device_index) or "*")
  end
  return table.concat(out)
end
DeviceSpec.__tostring = DeviceSpec.to_string

-- replace{...}: a copy with those fields changed; make_merged_spec(other): other's fields win where set.
function DeviceSpec:replace(o)
  local t = {}
  for _, k in ipairs(FIELDS) do t[k] = self[k] end
  for k, v in pairs(o or {}) do t[k] = v end
  return DeviceSpec(t)
end
function DeviceSpec:make_merged_spec(other)
  local t = {}
  for _, k in ipairs(FIELDS) do t[k] = other[k] ~= nil and other[k] or self[k] end
  return DeviceSpec(t)
end
function DeviceSpec.__eq(a, b) return a:to_string() == b:to_string() end

-- ---- the rest ---------------------------------------------------------------------------------

-- CriticalSection() as tf.CriticalSection: cs:execute(fn) runs fn() with the section held and returns its results.
-- A Lua VM runs one coroutine at a time, so the section only has to refuse re-entry (fn calling execute on the same
-- section again, TF's deadlock error) and entry from another coroutine while fn has yielded.
local CriticalSection = class("CriticalSection")
M.CriticalSection = CriticalSection
function CriticalSection:__init(o)
  self.name = type(o) == "table" and o.name or (type(o) == "string" and o) or "CriticalSection"
end
local function leave(cs, ok, ...)
  cs._holder = nil
  if not ok then error((...), 0) end
  return ...
end
function CriticalSection:execute(fn, ...)
  if type(fn) ~= "function" then fail("CriticalSection:execute", "fn must be a function, got %s", type(fn)) end
  local me = coroutine.running() or "main"
  if self._holder ~= nil then
    if self._holder == me then
      fail("CriticalSection:execute", "attempting to lock a CriticalSection (%s) in which we are already running",
        self.name)
    end
    fail("CriticalSection:execute", "the section %s is held by a coroutine that has not finished its fn", self.name)
  end
  self._holder = me
  return leave(self, pcall(fn, ...))
end

-- get_logger() as tf.get_logger: tide's logger, with debug/info/warning/error (written to stderr with the level,
-- as Python's logging does) and setLevel/getEffectiveLevel.
local LEVELS = { DEBUG = 10, INFO = 20, WARNING = 30, WARN = 30, ERROR = 40, FATAL = 50, CRITICAL = 50 }
local logger = { name = "tensorflow", level = 0, write = function(s) io.stderr:write(s) end }
local function emit(level) return function(self, f, ...)
  if LEVELS[level] >= (self.level ~= 0 and self.level or 30) then
    self.write(fmt("%s:%s:%s\n", level, self.name, select("#", ...) > 0 and fmt(f, ...) or tostring(f)))
  end
end end
logger.debug, logger.info, logger.warning, logger.error = emit("DEBUG"), emit("INFO"), emit("WARNING"), emit("ERROR")
logger.warn, logger.fatal, logger.critical = logger.warning, emit("FATAL"), emit("CRITICAL")
function logger:setLevel(l)
  local v = type(l) == "number" and l or LEVELS[tostring(l):upper()]
  if not v then fail("get_logger", "unknown level %s (DEBUG, INFO, WARNING, ERROR, FATAL or a number)", tostring(l)) end
  self.level = v
end
function logger:getEffectiveLevel() return self.level ~= 0 and self.level or 30 end
for k, v in pairs(LEVELS) do logger[k] = v end
function M.get_logger() return logger end

-- check_pinned(tensor) as tf.check_pinned: TF checks a tensor sits in pinned host memory (for fast GPU copies);
-- tide's host tensors are plain memory and its GPU transfers copy through staging, so every tensor passes:
-- returns it (after checking it is one).
function M.check_pinned(t)
  if not binding.istensor(t) then fail("check_pinned", "expected a tensor, got %s", type(t)) end
  return t
end

-- register_tensor_conversion_function(base_type, fn, priority=100) as TF's: tide.tensor(x) (and every op taking
-- x) calls fn(x, dtype) for an instance x of the class base_type (a tide class, or a table of them) and uses the
-- tensor it returns. Lower priority runs first, as in TF.
function M.register_tensor_conversion_function(base_type, fn, priority)
  local op = "register_tensor_conversion_function"
  if type(fn) ~= "function" then fail(op, "conversion_func must be a function, got %s", type(fn)) end
  local list = (type(base_type) == "table" and base_type[1]) and base_type or { base_type }
  for i, b in ipairs(list) do
    if type(b) ~= "table" then fail(op, "base_type %d must be a class table, got %s", i, type(b)) end
    if b == M.Tensor or b == binding.Tensor then fail(op, "the conversion of tensors cannot be overridden") end
    convert.register_conversion(b, fn, priority or 100)
  end
end

-- nondifferentiable_batch_function(num_batch_threads, max_batch_size, batch_timeout_micros, ...) as TF's: a
-- decorator that batches concurrent calls of a serving function. tide's calls come one at a time (one Lua VM), so
-- each call is its own batch: the decorator returns fn, its outputs' gradients stopped (TF's is not differentiable).
function M.nondifferentiable_batch_function(num_batch_threads, max_batch_size, batch_timeout_micros, ...)
  local op = "nondifferentiable_batch_function"
  for _, a in ipairs { { "num_batch_threads", num_batch_threads }, { "max_batch_size", max_batch_size },
                       { "batch_timeout_micros", batch_timeout_micros } } do
    if type(a[2]) ~= "number" or a[2] < 0 or a[2] % 1 ~= 0 then
      fail(op, "%s must be a non-negative integer, got %s", a[1], tostring(a[2]))
    end
  end
  local tape = require "tide.tape"
  return function(fn)
    if type(fn) ~= "function" then fail(op, "expects the function to wrap, got %s", type(fn)) end
    return function(...)
      local out = { fn(...) }
      for i, y in ipairs(out) do
        if binding.istensor(y) then out[i] = tape.stop_gradient(y) end
      end
      return unpack(out)
    end
  end
end

return M
