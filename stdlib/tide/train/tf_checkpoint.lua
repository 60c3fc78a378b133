-- stdlib/tide/train/tf_checkpoint.lua — TensorFlow's own checkpoints (tensor bundles:
-- prefix.index + prefix.data-*), read over kernels/io/tensor_bundle.c, as tf.train.load_checkpoint.
--
--   local r = tide.train.load_checkpoint("run/ckpt-3")   -- TF's files run/ckpt-3.index, .data-*
--   r:keys()   -- "_CHECKPOINTABLE_OBJECT_GRAPH", "model/_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE", ...
--   local k = r:get_tensor("model/_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE")
local binding = require "tide.binding"
local class = require "tide.class"
local file = require "tide.file"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local fmt = string.format

local M = {}

-- A file (not a folder) at path.
local function is_file(path) return file.exists(path) and not file.is_dir(path) end

-- The TF checkpoint prefix that `path` names, or nil: a prefix whose
-- `.index` exists (or that `.index` file itself), as TF's readers take it.
function M.prefix_of(path)
  if type(path) ~= "string" or path == "" then return nil end
  if is_file(path .. ".index") then return path end
  local stem = path:match("^(.+)%.index$")
  if stem and is_file(path) then return stem end
  return nil
end

local TFCheckpointReader = class("TFCheckpointReader")
M.TFCheckpointReader = TFCheckpointReader

local function close_handle(h) C.tide_tensor_bundle_close(h) end

-- TFCheckpointReader(prefix): the checkpoint's index read and checked (C);
-- the data files are read one tensor at a time.
function TFCheckpointReader:__init(prefix)
  if type(prefix) ~= "string" or prefix == "" or prefix:find("\0", 1, true) then
    binding.error(fmt("load_checkpoint: expects a checkpoint prefix, got %s", type(prefix)))
  end
  local h = C.tide_tensor_bundle_open(prefix)
  if h == nil then binding.raise() end
  self._h = ffi.gc(h, close_handle)
  self.path = prefix
  self.format = "tf"
  self._keys, self._index = {}, {}
  local len = ffi.new("int64_t[1]")
  for i = 0, tonumber(C.tide_tensor_bundle_count(h)) - 1 do
    local key = ffi.string(C.tide_tensor_bundle_key(h, i, len), len[0])
    self._keys[i + 1] = key
    self._index[key] = i
  end
end

local function handle(self)
  local h = rawget(self, "_h")
  if h == nil then binding.error(fmt("TF checkpoint '%s' is closed", self.path)) end
  return h
end

-- reader:keys(): every key, sorted (what tf.train.list_variables lists, the
-- object graph _CHECKPOINTABLE_OBJECT_GRAPH included).
function TFCheckpointReader:keys()
  handle(self)
  local out = {}
  for i, k in ipairs(self._keys) do out[i] = k end
  return out
end

-- reader:has_tensor(key): whether the checkpoint holds a value under key.
function TFCheckpointReader:has_tensor(key)
  return type(key) == "string" and self._index[key] ~= nil
end

-- reader:get_tensor(key): the value saved under key, a new tensor with TF's
-- dtype (int64 and float64 exact; strings as string tensors); its bytes
-- checked against the checksum the index holds. A dtype tide lacks is an error.
function TFCheckpointReader:get_tensor(key)
  local h = handle(self)
  local i = type(key) == "string" and self._index[key]
  if not i then
    binding.error(fmt("CheckpointReader.get_tensor: '%s' holds no value named '%s'", self.path, tostring(key)))
  end
  local t = Tensor()
  if C.tide_tensor_bundle_read(h, i, t) ~= 0 then binding.raise() end
  return binding.finish(t)
end

local function shape_of(h, i)
  local nd = ffi.new("int32_t[1]")
  local dims = C.tide_tensor_bundle_shape(h, i, nd)
  local shape = {}
  for k = 1, nd[0] do shape[k] = tonumber(dims[k - 1]) end
  return shape
end

-- reader:get_variable_to_shape_map(): key -> shape (a Lua list) of every value.
function TFCheckpointReader:get_variable_to_shape_map()
  local h = handle(self)
  local out = {}
  for i, k in ipairs(self._keys) do out[k] = shape_of(h, i - 1) end
  return out
end

-- reader:get_variable_to_dtype_map(): key -> TF's dtype name ("float32",
-- "string", and names of dtypes tide lacks: "uint16", "complex64", ...).
function TFCheckpointReader:get_variable_to_dtype_map()
  local h = handle(self)
  local out = {}
  for i, k in ipairs(self._keys) do out[k] = ffi.string(C.tide_tensor_bundle_dtype_name(h, i - 1)) end
  return out
end

-- reader:list_variables(): {key, shape} pairs, sorted by key.
function TFCheckpointReader:list_variables()
  local h = handle(self)
  local out = {}
  for i, k in ipairs(self._keys) do out[i] = { k, shape_of(h, i - 1) } end
  return out
end

-- reader:close(): free the index (the collector frees it too).
function TFCheckpointReader:close()
  local h = rawget(self, "_h")
  if h ~= nil then
    ffi.gc(h, nil)
    C.tide_tensor_bundle_close(h)
    self._h = nil
  end
end

function TFCheckpointReader:__tostring() return fmt("<tide.train.CheckpointReader TF '%s'>", self.path) end

return M
