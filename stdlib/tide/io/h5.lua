-- stdlib/tide/io/h5.lua — tide.io.h5: HDF5 files (Keras's .weights.h5) over
-- kernels/io/h5_file.c and h5_write.c: the whole tree read and checked at open,
-- datasets read into tensors; files built in memory and saved atomically.
--
--   local f = tide.io.h5.open("m.weights.h5")
--   for _, node in ipairs(f:tree()) do print(node.path, node.kind) end
--   local w = f:read("layers/dense/vars/0")
local binding = require "tide.binding"
local convert = require "tide.convert"
local json = require "tide.json"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local fmt = string.format

local M = {}

local function check_string(what, s, name)
  if type(s) ~= "string" then binding.error(fmt("h5.%s: %s must be a string, got %s", what, name, type(s))) end
  if s:find("\0", 1, true) then binding.error(fmt("h5.%s: %s contains a NUL byte", what, name)) end
end

---------------------------------------------------------------------------
-- Reading
---------------------------------------------------------------------------

local File = {}
File.__index = File

local function close_handle(h) C.tide_h5_close(h) end

local function wrap(h, name)
  if h == nil then binding.raise() end
  h = ffi.gc(h, close_handle)
  local tree = json.decode(ffi.string(C.tide_h5_tree(h)), "h5")
  local self = setmetatable({ _h = h, name = name, _tree = tree, _by_path = {} }, File)
  for _, node in ipairs(tree) do self._by_path[node.path] = node end
  return self
end

-- open(path): the HDF5 file at path (through the file policy), walked whole.
function M.open(path)
  check_string("open", path, "the path")
  if path == "" then binding.error("h5.open: the path is empty") end
  return wrap(C.tide_h5_open(path), path)
end

-- open_bytes(bytes, name): the same over a Lua string's bytes (a .keras
-- archive's model.weights.h5); name names it in messages.
function M.open_bytes(bytes, name)
  if type(bytes) ~= "string" then binding.error("h5.open_bytes: bytes must be a string, got " .. type(bytes)) end
  name = name or "(memory)"
  check_string("open_bytes", name, "the name")
  return wrap(C.tide_h5_open_memory(bytes, #bytes, name), name)
end

local function handle(self)
  local h = rawget(self, "_h")
  if h == nil then binding.error(fmt("h5: '%s' is closed", self.name)) end
  return h
end

-- The objects in walk order: {path=, kind="group"|"dataset", attrs={...},
-- and for datasets dtype= (nil when unreadable, with why=) and shape=}.
function File:tree()
  handle(self)
  return self._tree
end

-- The node at path ("" is the root), or nil.
function File:get(path)
  handle(self)
  return self._by_path[path]
end

-- The dataset at path, as a new tensor.
function File:read(path)
  local h = handle(self)
  check_string("read", path, "the dataset path")
  local t = Tensor()
  if C.tide_h5_read(h, path, t) ~= 0 then binding.raise() end
  return binding.finish(t)
end

function File:close()
  local h = rawget(self, "_h")
  if h ~= nil then
    ffi.gc(h, nil)
    C.tide_h5_close(h)
    self._h = nil
  end
end

---------------------------------------------------------------------------
-- Writing
---------------------------------------------------------------------------

local Writer = {}
Writer.__index = Writer

-- create(name): an empty HDF5 file in memory (name names it in messages).
function M.create(name)
  name = name or "(memory)"
  check_string("create", name, "the name")
  local h = C.tide_h5_create(name)
  if h == nil then binding.raise() end
  return setmetatable({ _h = ffi.gc(h, close_handle), name = name }, Writer)
end

-- The group at path and its missing parents.
function Writer:group(path)
  check_string("group", path, "the path")
  if C.tide_h5_make_group(self._h, path) ~= 0 then binding.raise() end
  return self
end

-- A string attribute on the object at path ("" is the root).
function Writer:attr(path, name, value)
  check_string("attr", path, "the path")
  check_string("attr", name, "the attribute name")
  check_string("attr", value, "the attribute value")
  if C.tide_h5_set_attr(self._h, path, name, value) ~= 0 then binding.raise() end
  return self
end

-- The dataset at path holding t (a tensor or a Variable's value).
function Writer:write(path, t)
  check_string("write", path, "the path")
  if convert.is_variable(t) then t = convert.variable_handle(t) end
  if not binding.istensor(t) then binding.error(fmt("h5.write: '%s': expects a tensor, got %s", path, type(t))) end
  local st = C.tide_h5_write(self._h, path, t)
  binding.keep_alive(t)
  if st ~= 0 then binding.raise() end
  return self
end

-- The file's bytes now (a Lua string).
function Writer:bytes()
  local n = ffi.new("size_t[1]")
  local p = C.tide_h5_image(self._h, n)
  if p == nil then binding.raise() end
  return ffi.string(p, n[0])
end

-- Write the file to path atomically (temporary file, fsync, rename).
function Writer:save(path)
  check_string("save", path, "the path")
  if C.tide_h5_save(self._h, path) ~= 0 then binding.raise() end
end

return M
