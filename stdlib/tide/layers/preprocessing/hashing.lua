-- stdlib/tide/layers/preprocessing/hashing.lua — Keras 3's hashing layers: Hashing (values to bins by
-- TF's Fingerprint64, or SipHash with a salt) and HashedCrossing (feature crosses hashed into bins).
-- Both are registry ops (string_hash, cross_hashed) plus encodings, so they trace and run in tide.data maps.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local strings = require "tide.ops.strings"
local layer = require "tide.layers.layer"
local categorical = require "tide.layers.preprocessing.categorical"

local Layer, who = layer.Layer, layer.who
local fmt = string.format

local M = {}

local HASHING_MODES = { int = true, one_hot = true, multi_hot = true, count = true }

local function check_num_bins(self, n)
  if type(n) ~= "number" or n < 1 or n % 1 ~= 0 then
    binding.error(fmt("%s: num_bins must be a positive integer, got %s", who(self), tostring(n)))
  end
end

local function check_mode(self, mode, allowed, text)
  if not allowed[mode] then
    binding.error(fmt("%s: output_mode must be one of %s, got %s", who(self), text, tostring(mode)))
  end
end

-- The layer's dtype: given, or int64 for output_mode "int" (Keras's default), else the global policy.
local function set_dtype(self, dt, mode)
  if dt == nil and mode == "int" then dt = "int64" end
  self.dtype_policy = dt -- nil: the global policy
  if mode == "int" then
    local name = self.compute_dtype
    if name ~= "int32" and name ~= "int64" then
      binding.error(fmt('%s: output_mode "int" needs an integer dtype, int32 or int64; got %s', who(self), name))
    end
  end
end

-- Keras's encode_categorical_inputs on bin ids (int: a cast).
local function encode(self, ids)
  if self.output_mode == "int" then return math_ops.cast(ids, self.compute_dtype) end
  return categorical.encode(ids, self.output_mode, self.num_bins, self.compute_dtype)
end

---------------------------------------------------------------------------
-- Hashing{num_bins, mask_value=nil, salt=nil, output_mode="int", sparse=false}
---------------------------------------------------------------------------

local Hashing = Layer:extend("Hashing")
Hashing._own_options = { dtype = true } -- its default depends on output_mode
M.Hashing = Hashing

function Hashing:init(...)
  local o = self:_kwargs({ "num_bins", "mask_value", "salt", "output_mode", "sparse", "dtype" }, ...)
  check_num_bins(self, o.num_bins)
  self.num_bins = o.num_bins
  self.output_mode = o.output_mode or "int"
  check_mode(self, self.output_mode, HASHING_MODES, '"int", "one_hot", "multi_hot", "count"')
  if o.sparse then
    binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self)))
  end
  self.sparse = false
  self.mask_value = o.mask_value
  local salt = o.salt
  if salt ~= nil then -- an integer k means {k, k}, as Keras
    if type(salt) == "number" or type(salt) == "cdata" then salt = { salt, salt } end
    if type(salt) ~= "table" or #salt ~= 2 or salt[3] ~= nil then
      binding.error(fmt("%s: salt must be an integer or a list of two integers, got %s", who(self), tostring(o.salt)))
    end
    for i = 1, 2 do
      local v = salt[i]
      if not ((type(v) == "number" and v % 1 == 0) or type(v) == "cdata") then
        binding.error(fmt("%s: salt must be an integer or a list of two integers, got %s", who(self), tostring(v)))
      end
    end
    self.salt = { salt[1], salt[2] }
  end
  set_dtype(self, o.dtype, self.output_mode)
end

-- Values to bins: floats truncated to int64, numbers as decimal strings, then hashed;
-- with mask_value (and more than one bin), the mask gets bin 0 and the rest bins 1..num_bins-1.
function Hashing:_bins(x)
  local bins, mask = self.num_bins, nil
  if self.mask_value ~= nil and bins > 1 then
    bins = bins - 1
    mask = math_ops.equal(x, convert.tensor(self.mask_value, x.dtype, who(self) .. ": mask_value"))
  end
  local v = x
  if dtype.is_float[v.dt] then v = math_ops.cast(v, "int64") end
  if v.dtype ~= "string" then v = strings.as_string(v) end
  local ids
  if self.salt then ids = strings.to_hash_bucket_strong(v, bins, self.salt)
  else ids = strings.to_hash_bucket_fast(v, bins) end
  if mask then
    ids = math_ops.add(ids, 1)
    ids = math_ops.where(mask, math_ops.mul(ids, 0), ids)
  end
  return ids
end

function Hashing:call(x)
  x = convert.tensor(convert.unvariable(x), nil, who(self))
  if x.dtype == "bool" then
    binding.error(fmt("%s: expected string, integer or float inputs, got bool", who(self)))
  end
  if self.output_mode == "one_hot" and x.ndim > 0 and x.shape[x.ndim] == 1 then
    x = shape_ops.squeeze(x, { x.ndim - 1 })
  end
  return encode(self, self:_bins(x))
end

function Hashing:get_config()
  local c = Layer.get_config(self)
  c.num_bins, c.salt, c.mask_value = self.num_bins, self.salt, self.mask_value
  c.output_mode, c.sparse = self.output_mode, self.sparse
  return c
end

---------------------------------------------------------------------------
-- HashedCrossing{num_bins, output_mode="int", sparse=false}
---------------------------------------------------------------------------

local CROSSING_MODES = { int = true, one_hot = true }

local HashedCrossing = Layer:extend("HashedCrossing")
HashedCrossing._own_options = { dtype = true }
M.HashedCrossing = HashedCrossing

function HashedCrossing:init(...)
  local o = self:_kwargs({ "num_bins", "output_mode", "sparse", "name", "dtype" }, ...)
  check_num_bins(self, o.num_bins)
  self.num_bins = o.num_bins
  self.output_mode = o.output_mode or "int"
  check_mode(self, self.output_mode, CROSSING_MODES, '"int", "one_hot"')
  if o.sparse then
    binding.error(fmt("%s: sparse = true is not supported (dense outputs only)", who(self)))
  end
  self.sparse = false
  set_dtype(self, o.dtype, self.output_mode)
end

-- call({x1, x2, ...}): each of shape (), (batch) or (batch, 1), all the same, strings or integers.
function HashedCrossing:call(inputs)
  if type(inputs) ~= "table" or binding.istensor(inputs) then
    binding.error(fmt("%s: expects a list of at least two inputs, got %s", who(self),
      binding.istensor(inputs) and "a tensor" or type(inputs)))
  end
  local n = convert.list_length(inputs, who(self), "inputs")
  if n < 2 then binding.error(fmt("%s: expects at least two inputs, got %d", who(self), n)) end
  local list, rank, first = {}, nil, nil
  for i = 1, n do
    local t = convert.tensor(convert.unvariable(inputs[i]), nil, who(self))
    if t.dtype ~= "string" and not dtype.is_int[t.dt] then
      binding.error(fmt("%s: every input must be a string or integer tensor; input %d is %s", who(self), i, t.dtype))
    end
    if t.ndim < 0 then binding.error(fmt("%s: input %d has an unknown rank (give its TensorSpec a shape)", who(self), i)) end
    local shape = t.shape:as_list()
    if t.ndim > 2 or (t.ndim == 2 and shape[2] ~= 1) then
      binding.error(fmt("%s: every input must have shape (), (batch) or (batch, 1); input %d has %s", who(self), i,
        tostring(t.shape)))
    end
    if rank == nil then rank, first = t.ndim, tostring(t.shape)
    elseif t.ndim ~= rank or tostring(t.shape) ~= first then
      binding.error(fmt("%s: every input must have the same shape; input 1 is %s, input %d %s", who(self), first, i,
        tostring(t.shape)))
    end
    if t.ndim == 0 then t = shape_ops.reshape(t, { 1, 1 })
    elseif t.ndim == 1 then t = shape_ops.expand_dims(t, -1) end
    list[i] = t
  end
  local ids = strings.cross_hashed_dense(list, self.num_bins, nil, who(self))
  if rank == 0 then ids = shape_ops.reshape(ids, {})
  elseif rank == 1 then ids = shape_ops.squeeze(ids, { 1 }) end
  return encode(self, ids)
end

function HashedCrossing:get_config()
  local c = Layer.get_config(self)
  c.num_bins, c.output_mode, c.sparse = self.num_bins, self.output_mode, self.sparse
  return c
end

return M
