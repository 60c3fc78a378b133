-- stdlib/tide/io/example.lua — tf.train.Example from Lua: FixedLenFeature,
-- VarLenFeature, parse_example/parse_single_example, serialize_example (C: kernels/io/example.c).
local binding = require "tide.binding"
local bit = require "bit"
local class = require "tide.class"
local convert = require "tide.convert"
local dispatch = require "tide.dispatch"
local dtype = require "tide.dtype"
local shape_ops = require "tide.ops.shape"
local sparse = require "tide.sparse_tensor"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local M = {}

-- TF's Example holds three kinds of value list; a feature's dtype names one.
local TYPE_OF = { int64 = C.TIDE_FEATURE_INT64, float32 = C.TIDE_FEATURE_FLOAT, string = C.TIDE_FEATURE_BYTES }

-- A dtype argument as "int64", "float32" or "string" (aliases as tide's: "float", "long").
local function feature_dtype(what, dt)
  if dt == "string" then return dt end
  local code = dtype.name(dt) and dtype.codes[dtype.name(dt)]
  local name = code and dtype.names[code]
  if not TYPE_OF[name or ""] then
    binding.error(string.format("%s: dtype must be int64, float32 or string (the value lists a tf.train.Example holds), got %s",
      what, tostring(dt)))
  end
  return name
end

---------------------------------------------------------------------------
-- Feature specs
---------------------------------------------------------------------------

local FixedLenFeature = class("FixedLenFeature")
M.FixedLenFeature = FixedLenFeature

-- FixedLenFeature(shape, dtype, {default_value=}): a feature of exactly
-- prod(shape) values in every example, or the default where it is missing
-- (without one, a missing feature is an error). shape is a Lua list ({} for a scalar).
function FixedLenFeature:__init(shape, dt, opts)
  if type(shape) == "number" then shape = { shape } end
  if type(shape) ~= "table" or binding.istensor(shape) then
    binding.error("FixedLenFeature: shape must be a Lua list of dims ({} for a scalar), got " .. type(shape))
  end
  local dims = {}
  for i = 1, #shape do dims[i] = shape[i] end
  for k in pairs(shape) do
    if type(k) ~= "number" or k < 1 or k > #shape or k % 1 ~= 0 then
      binding.error("FixedLenFeature: shape must be a Lua list of dims, it has key " .. tostring(k))
    end
  end
  self.shape = dims
  self.dtype = feature_dtype("FixedLenFeature", dt)
  if opts ~= nil and type(opts) ~= "table" then
    binding.error("FixedLenFeature: options must be a table {default_value=}, got " .. type(opts))
  end
  for k in pairs(opts or {}) do
    if k ~= "default_value" then binding.error("FixedLenFeature: unknown option '" .. tostring(k) .. "' (options: default_value)") end
  end
  self.default_value = opts and opts.default_value
end

function FixedLenFeature:__tostring()
  return string.format("FixedLenFeature(shape={%s}, dtype=%s%s)", table.concat(self.shape, ", "), self.dtype,
    self.default_value ~= nil and ", default_value=..." or "")
end

local VarLenFeature = class("VarLenFeature")
M.VarLenFeature = VarLenFeature

-- VarLenFeature(dtype): a list of any length per example, parsed into a tide.SparseTensor.
function VarLenFeature:__init(dt)
  self.dtype = feature_dtype("VarLenFeature", dt)
end

function VarLenFeature:__tostring() return "VarLenFeature(dtype=" .. self.dtype .. ")" end

---------------------------------------------------------------------------
-- Parsing
---------------------------------------------------------------------------

local function product(dims)
  local n = 1
  for i = 1, #dims do n = n * dims[i] end
  return n
end

-- Check the spec f of feature `name` (TF's checks, before any parsing);
-- returns a FixedLenFeature's default as a tensor of its dtype, or nil.
local function check_spec(op, name, f)
  if type(name) ~= "string" then
    binding.error(string.format("%s: feature names must be strings, got %s", op, type(name)))
  end
  if name:find("\0", 1, true) then binding.error(string.format("%s: feature name %q holds a NUL byte", op, name)) end
  if not (class.is_instance(f, FixedLenFeature) or class.is_instance(f, VarLenFeature)) then
    local mt = type(f) == "table" and getmetatable(f)
    binding.error(string.format("%s: features[%q] must be a tide.io.FixedLenFeature or VarLenFeature, got %s", op, name,
      mt and mt.__name or type(f)))
  end
  if class.is_instance(f, VarLenFeature) then return nil end
  local nd = #f.shape
  if nd > C.TIDE_MAX_DIMS then
    binding.error(string.format("%s: feature %s: rank %d is more than the %d dims tide supports", op, name, nd, C.TIDE_MAX_DIMS))
  end
  for d = 1, nd do
    local v = f.shape[d]
    if type(v) ~= "number" then
      binding.error(string.format("%s: First dimension of shape for feature %s unknown. Consider using " ..
        "FixedLenSequenceFeature (tide has no FixedLenSequenceFeature yet: use VarLenFeature)", op, name))
    end
    if v < 0 or v % 1 ~= 0 then
      binding.error(string.format("%s: feature %s: shape dims must be whole numbers >= 0, got %s", op, name, tostring(v)))
    end
  end
  local def = f.default_value
  if def == nil then return nil end
  local size = product(f.shape)
  if f.dtype == "string" and binding.istensor(def) and def.dtype ~= "string" then
    binding.error(string.format("%s: feature %s: the default_value of a string feature must be strings, got a %s tensor",
      op, name, def.dtype))
  end
  local t = shape_ops.contiguous(convert.tensor(def, f.dtype, op))
  if tonumber(t.nelem) ~= size then
    binding.error(string.format("%s: feature %s: default_value has %d values but shape {%s} needs %d", op, name,
      tonumber(t.nelem), table.concat(f.shape, ", "), size))
  end
  return t
end

-- The registry ops (kernels/io/example_op.c), one per feature: eager on an
-- eager tensor, a graph node on a traced one (so a dataset's map that
-- parses records runs on the pipeline's C threads).
local OP_DENSE, OP_SPARSE = C.tide_op_lookup("parse_example_dense"), C.tide_op_lookup("parse_example_sparse")
local sparse_ins = ffi.new("const tide_tensor *[2]")
local sparse_outs = ffi.new("tide_tensor *[3]")
local no_default = {} -- dtype code -> an empty tensor standing for "no default" (the op ignores it)

-- The parsed value of feature `name` (spec f) of the string tensor ser.
local function parse_feature(op, ser, name, f, default)
  local code = dtype.codes[f.dtype]
  local key = convert.tensor(name, "string", op)
  local a = dispatch.attrs()
  a.dtype = code
  a.n = op == "parse_single_example" and 1 or 0
  if class.is_instance(f, FixedLenFeature) then
    dispatch.set_ints(a, f.shape, op)
    local d = default
    if d then
      a.m = 1
    else
      d = no_default[code] or convert.empty(code, { 0 }, op)
      no_default[code] = d
    end
    return dispatch.run(OP_DENSE, a, { ser, key, d })
  end
  -- VarLenFeature: a SparseTensor (three outputs: dispatch.run gives two at most)
  local indices, values, dense_shape = Tensor(), Tensor(), Tensor()
  sparse_ins[0], sparse_ins[1] = ser, key
  sparse_outs[0], sparse_outs[1], sparse_outs[2] = indices, values, dense_shape
  if C.tide_op_run(OP_SPARSE, a, 2, sparse_ins, 3, sparse_outs) ~= 0 then binding.raise() end
  binding.finish(indices)
  binding.finish(values)
  binding.finish(dense_shape)
  return sparse.SparseTensor(indices, values, dense_shape)
end

-- The common body: serialized is a list of Lua strings or a string tensor
-- (0-D or 1-D); batch says whether results carry a leading batch dim (a
-- list: always; a tensor: when it is 1-D).
local function parse(op, serialized, features, batch)
  if type(features) ~= "table" or binding.istensor(features) then
    binding.error(string.format("%s: features must be a table {name = FixedLenFeature or VarLenFeature}, got %s", op,
      type(features)))
  end
  local names = {}
  for name in pairs(features) do names[#names + 1] = name end
  for _, name in ipairs(names) do
    if type(name) ~= "string" then
      binding.error(string.format("%s: feature names must be strings, got %s", op, type(name)))
    end
  end
  table.sort(names)
  local ser
  if binding.istensor(serialized) then
    if serialized.ndim < 0 then
      binding.error(op .. ": the rank of serialized must be known (a traced input of unknown rank: give its " ..
        "TensorSpec a shape): one record and a batch parse differently")
    end
    ser = serialized
  else
    for k = 1, #serialized do
      if type(serialized[k]) ~= "string" then
        binding.error(string.format("%s: serialized example %d must be a string of bytes, got %s", op, k,
          type(serialized[k])))
      end
    end
    if not batch then ser = convert.tensor(serialized[1], "string", op)
    elseif #serialized == 0 then ser = convert.empty(dtype.codes.string, { 0 }, op)
    else ser = convert.tensor(serialized, "string", op) end
  end
  local defaults = {} -- every spec checked before any parsing
  for _, name in ipairs(names) do defaults[name] = check_spec(op, name, features[name]) or false end
  local out = {}
  for _, name in ipairs(names) do out[name] = parse_feature(op, ser, name, features[name], defaults[name] or nil) end
  return out
end

-- parse_single_example(serialized, features): one serialized tf.train.Example
-- (a Lua string or a scalar string tensor) parsed into a table by feature
-- name: a FixedLenFeature gives a tensor of its shape and dtype (string
-- features: a string tensor), a VarLenFeature a tide.SparseTensor of rank 1.
function M.parse_single_example(serialized, features)
  if binding.istensor(serialized) then
    if serialized.dtype ~= "string" or serialized.ndim > 0 then -- (an unknown rank: parse says so)
      binding.error(string.format("parse_single_example: serialized must be a scalar string tensor, got a %s tensor " ..
        "of shape [%s]", serialized.dtype, table.concat(serialized.shape, ", ")))
    end
    return parse("parse_single_example", serialized, features, false)
  end
  if type(serialized) ~= "string" then
    binding.error("parse_single_example: serialized must be a string of bytes (one tf.train.Example), got " ..
      type(serialized))
  end
  return parse("parse_single_example", { serialized }, features, false)
end

-- parse_example(serialized, features): a Lua list (or 1-D string tensor) of
-- serialized Examples parsed into batched values (a leading batch dim;
-- VarLen: rank-2 sparse), or one string parsed as parse_single_example does.
function M.parse_example(serialized, features)
  if type(serialized) == "string" then return parse("parse_example", { serialized }, features, false) end
  if binding.istensor(serialized) then
    if serialized.dtype ~= "string" or serialized.ndim > 1 then
      binding.error(string.format("parse_example: serialized must be a string tensor of rank 0 or 1, got a %s tensor " ..
        "of shape [%s]", serialized.dtype, table.concat(serialized.shape, ", ")))
    end
    return parse("parse_example", serialized, features, serialized.ndim == 1)
  end
  if type(serialized) ~= "table" then
    binding.error("parse_example: serialized must be a list of strings, a string tensor or one string, got " ..
      type(serialized))
  end
  return parse("parse_example", serialized, features, true)
end

---------------------------------------------------------------------------
-- Serializing
---------------------------------------------------------------------------

local NUMBERS_HINT = "say {int64_list = ...} or {float_list = ...}: a Lua number does not tell which"

-- The flat values of v as a contiguous tensor of dtype dt.
local function numeric_tensor(what, v, dt)
  local t = shape_ops.contiguous(convert.tensor(v, dt, what))
  if bit.band(t.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0 then
    binding.error(what .. ": a symbolic tensor (inside tide.trace) has no values to serialize")
  end
  return t
end

local int64_ct = ffi.typeof("int64_t")

-- Lua list v as a C array of int64_t or float (ints: Lua integers or int64 cdata, exact past 2^53).
local function numeric_array(what, kind, v)
  local n = #v
  for k in pairs(v) do
    if type(k) ~= "number" or k < 1 or k > n or k % 1 ~= 0 then
      binding.error(string.format("%s: %s must be a Lua list, it has key %s", what, kind, tostring(k)))
    end
  end
  local arr = ffi.new(kind == "int64_list" and "int64_t[?]" or "float[?]", math.max(n, 1))
  for i = 1, n do
    local x = v[i]
    if kind == "int64_list" then
      if type(x) == "cdata" and ffi.istype(int64_ct, x) then
        arr[i - 1] = x
      elseif type(x) ~= "number" or x % 1 ~= 0 or x < -2^63 or x >= 2^63 then
        binding.error(string.format("%s: int64_list value %d must be an integer, got %s", what, i, tostring(x)))
      else
        arr[i - 1] = x
      end
    else
      if type(x) ~= "number" then
        binding.error(string.format("%s: float_list value %d must be a number, got %s", what, i, type(x)))
      end
      arr[i - 1] = x
    end
  end
  return arr, n
end

local function add_numbers(b, name, kind, v)
  local what = "serialize_example: feature " .. name
  local ptr, n, anchor
  if binding.istensor(v) then
    if kind == "int64_list" and dtype.is_float[v.dt] then
      binding.error(what .. ": int64_list needs integers, got a " .. v.dtype .. " tensor")
    end
    if v.dtype == "string" then binding.error(what .. ": " .. kind .. " needs numbers, got a string tensor") end
    anchor = numeric_tensor(what, v, kind == "int64_list" and "int64" or "float32")
    ptr, n = anchor.data, anchor.nelem
  elseif type(v) == "table" then
    ptr, n = numeric_array(what, kind, v)
  else
    binding.error(string.format("%s: %s must be a list or a tensor, got %s", what, kind, type(v)))
  end
  if kind == "int64_list" then
    return C.tide_example_builder_add_int64(b, name, ffi.cast("const int64_t *", ptr), n)
  end
  return C.tide_example_builder_add_float(b, name, ffi.cast("const float *", ptr), n)
end

local function add_bytes(b, name, list)
  if binding.istensor(list) then
    if bit.band(list.flags, C.TIDE_TENSOR_SYMBOLIC) ~= 0 then
      binding.error("serialize_example: feature " .. name .. ": a symbolic tensor (inside tide.trace) has no values to serialize")
    end
    list = list:totable()
    if type(list) == "string" then list = { list } end
    local flat = {}
    local function walk(v)
      if type(v) == "table" then for i = 1, #v do walk(v[i]) end else flat[#flat + 1] = v end
    end
    walk(list)
    list = flat
  end
  local n = #list
  local ptrs = ffi.new("const uint8_t *[?]", math.max(n, 1))
  local lens = ffi.new("size_t[?]", math.max(n, 1))
  for k = 1, n do
    if type(list[k]) ~= "string" then
      binding.error(string.format("serialize_example: feature %s: bytes_list value %d must be a string, got %s", name, k,
        type(list[k])))
    end
    ptrs[k - 1] = ffi.cast("const uint8_t *", list[k])
    lens[k - 1] = #list[k]
  end
  return C.tide_example_builder_add_bytes(b, name, ptrs, lens, n)
end

local function is_string_list(v)
  if #v == 0 then return false end
  for i = 1, #v do
    if type(v[i]) ~= "string" then return false end
  end
  return true
end

-- Adds feature `name` = v to builder b.
local function add_feature(b, name, v)
  local what = "serialize_example: feature " .. name
  local rc
  if type(v) == "string" then
    rc = add_bytes(b, name, { v })
  elseif binding.istensor(v) and v.dtype == "string" then
    rc = add_bytes(b, name, v)
  elseif binding.istensor(v) then
    rc = add_numbers(b, name, dtype.is_float[v.dt] and "float_list" or "int64_list", v)
  elseif type(v) == "table" then
    local kind, n = nil, 0
    for k in pairs(v) do
      n = n + 1
      if k == "int64_list" or k == "float_list" or k == "bytes_list" then kind = k end
    end
    if kind and n == 1 then
      local list = v[kind]
      if kind == "bytes_list" then
        if type(list) == "string" then list = { list } end
        if type(list) ~= "table" and not (binding.istensor(list) and list.dtype == "string") then
          binding.error(what .. ": bytes_list must be a list of strings, got " .. type(list))
        end
        rc = add_bytes(b, name, list)
      else
        if type(list) == "number" then list = { list } end
        rc = add_numbers(b, name, kind, list)
      end
    elseif is_string_list(v) then
      rc = add_bytes(b, name, v)
    elseif n > 0 and type(v[1]) == "number" then
      binding.error(what .. ": " .. NUMBERS_HINT)
    elseif n == 0 then
      binding.error(what .. ": an empty list does not say its kind: give {int64_list = {}}, {float_list = {}} or " ..
        "{bytes_list = {}}")
    else
      binding.error(what .. ": expected a tensor, a string, a list of strings or one of {int64_list=}, {float_list=}, " ..
        "{bytes_list=}")
    end
  elseif type(v) == "number" then
    binding.error(what .. ": " .. NUMBERS_HINT)
  else
    binding.error(what .. ": cannot serialize a " .. type(v))
  end
  if rc ~= 0 then binding.raise() end
end

-- serialize_example{name = value}: a serialized tf.train.Example (a Lua
-- string). A value is {int64_list = list or tensor}, {float_list = ...},
-- {bytes_list = list of strings or string tensor}, a tensor (integer or bool
-- dtypes: int64_list; float dtypes: float_list; string: bytes_list), a string
-- or a list of strings (bytes_list).
-- Features are written in name order, so equal tables give equal bytes.
function M.serialize_example(features)
  if type(features) ~= "table" or binding.istensor(features) then
    binding.error("serialize_example: expects a table {name = value}, got " .. type(features))
  end
  local names = {}
  for name in pairs(features) do
    if type(name) ~= "string" then
      binding.error("serialize_example: feature names must be strings, got " .. type(name))
    end
    if name:find("\0", 1, true) then binding.error(string.format("serialize_example: feature name %q holds a NUL byte", name)) end
    names[#names + 1] = name
  end
  table.sort(names)
  local b = C.tide_example_builder_new()
  if b == nil then binding.raise() end
  b = ffi.gc(b, C.tide_example_builder_free)
  for _, name in ipairs(names) do add_feature(b, name, features[name]) end
  local size = tonumber(C.tide_example_builder_size(b))
  local buf = ffi.new("uint8_t[?]", math.max(size, 1))
  local wrote = tonumber(C.tide_example_builder_pack(b, buf))
  ffi.gc(b, nil)
  C.tide_example_builder_free(b)
  return ffi.string(buf, wrote)
end

return M
