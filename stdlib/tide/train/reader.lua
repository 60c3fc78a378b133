-- stdlib/tide/train/reader.lua — reading a checkpoint without the objects
-- that wrote it: tide.train.load_checkpoint (a reader) and list_variables, of
-- tide's checkpoints and of TF's (tide.train.tf_checkpoint), told apart by their files.
--
--   for _, p in ipairs(tide.train.list_variables("/tmp/run")) do print(p[1], table.concat(p[2], "x")) end
--   local r = tide.train.load_checkpoint("/tmp/run/ckpt-3"); local k = r:get_tensor(name)
local binding = require "tide.binding"
local class = require "tide.class"
local safetensors = require "tide.safetensors"
local checkpoint = require "tide.train.checkpoint"
local manager = require "tide.train.manager"
local tf_checkpoint = require "tide.train.tf_checkpoint"

local M = {}
local ffi, C = binding.ffi, binding.C
local fmt = string.format

local function is_file(path)
  local f = binding.open_file(path, "rb")
  if f == nil then return false end
  -- a folder opens on Linux but cannot be read
  local ok = f:read(1) ~= nil
  f:close()
  return ok
end

-- The checkpoint file `path` names: a checkpoint path (as save returned it),
-- its .safetensors file, or a folder whose index names its latest checkpoint.
local function resolve(what, path)
  if type(path) ~= "string" or path == "" then
    binding.error(fmt("%s: expects a checkpoint path or a folder, got %s", what, type(path)))
  end
  local file = checkpoint.file_of(path)
  binding.check_file(file) -- refused is an error, not "no checkpoint"
  if is_file(file) then return file end
  -- a file of another format (an HDF5 .h5, a .keras zip, TF's SavedModel, ...) says what it is
  binding.check_file(path)
  local phrase = ffi.new("const char *[1]")
  local kind = C.tide_file_kind(path, phrase)
  if kind ~= C.TIDE_FILE_UNKNOWN and kind ~= C.TIDE_FILE_CHECKPOINT_DIR then
    binding.error(fmt("%s: '%s' is no checkpoint: it is %s", what, path, ffi.string(phrase[0])))
  end
  local latest = manager.latest_checkpoint(path) -- a refused or corrupt index is an error, not "no checkpoint"
  if latest then return checkpoint.file_of(latest) end
  binding.error(fmt("%s: no checkpoint at '%s' (neither '%s', TF's '%s.index', nor a folder with a checkpoint "
    .. "index)", what, path, file, path))
end

local CheckpointReader = class("CheckpointReader")
M.CheckpointReader = CheckpointReader

function CheckpointReader:__init(path)
  local file = resolve("load_checkpoint", path)
  self.path = file
  self.format = "tide"
  self._file = safetensors.safe_open(file)
  local meta = self._file:metadata()
  if meta.format ~= checkpoint.FORMAT then
    self._file:close()
    binding.error(fmt("load_checkpoint: '%s' is not a tide checkpoint (its metadata says format %s)", file,
      meta.format and ("'" .. meta.format .. "'") or "none"))
  end
end

-- reader:has_tensor(name): whether the checkpoint holds a value under name.
function CheckpointReader:has_tensor(name)
  return type(name) == "string" and self._file._index[name] ~= nil
end

-- reader:get_tensor(name): the value saved under name (a new tensor).
function CheckpointReader:get_tensor(name)
  if not self:has_tensor(name) then
    binding.error(fmt("CheckpointReader.get_tensor: '%s' holds no value named '%s'", self.path, tostring(name)))
  end
  return self._file:get_tensor(name)
end

-- reader:get_variable_to_shape_map(): name -> shape (a Lua list) of every value.
function CheckpointReader:get_variable_to_shape_map()
  local out = {}
  for _, name in ipairs(self._file:keys()) do
    local _, shape = self._file:info(name)
    out[name] = shape
  end
  return out
end

-- reader:get_variable_to_dtype_map(): name -> dtype name of every value.
function CheckpointReader:get_variable_to_dtype_map()
  local out = {}
  for _, name in ipairs(self._file:keys()) do out[name] = (self._file:info(name)) end
  return out
end

-- reader:keys(): the names, sorted.
function CheckpointReader:keys() return self._file:keys() end

-- reader:close(): close the file (the collector closes it too).
function CheckpointReader:close() self._file:close() end

function CheckpointReader:__tostring() return fmt("<tide.train.CheckpointReader '%s'>", self.path) end

-- TF's checkpoint prefix that path names (a prefix with a .index, or a
-- folder whose index names one), or nil: then path is tide's.
local function tf_prefix(path)
  if type(path) ~= "string" or path == "" or is_file(checkpoint.file_of(path)) then return nil end
  local prefix = tf_checkpoint.prefix_of(path)
  if prefix then return prefix end
  local ok, latest = pcall(manager.latest_checkpoint, path)
  return ok and latest and tf_checkpoint.prefix_of(latest) or nil
end

-- load_checkpoint(path): a reader of the checkpoint at path (a checkpoint
-- path, or a folder: its latest checkpoint), as tf.train.load_checkpoint:
-- tide's checkpoint (path.safetensors), or TF's (path.index and its data files).
function M.load_checkpoint(path)
  local prefix = tf_prefix(path)
  if prefix then return tf_checkpoint.TFCheckpointReader(prefix) end
  return CheckpointReader(path)
end

-- list_variables(path): {name, shape} pairs of every value of the
-- checkpoint, sorted by name (tf.train.list_variables).
function M.list_variables(path)
  local prefix = tf_prefix(path)
  if prefix then
    local r = tf_checkpoint.TFCheckpointReader(prefix)
    local out = r:list_variables()
    r:close()
    return out
  end
  local r = CheckpointReader(path)
  local out = {}
  for _, name in ipairs(r:keys()) do
    local _, shape = r._file:info(name)
    out[#out + 1] = { name, shape }
  end
  r:close()
  return out
end

return M
