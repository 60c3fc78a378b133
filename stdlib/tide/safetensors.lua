-- stdlib/tide/safetensors.lua — tide.safetensors: safetensors files as Python's
-- `safetensors` package has them (save_file, load_file, safe_open, load_metadata),
-- over kernels/io/safetensors.c, which checks every byte of a file before
-- allocating and writes atomically (temporary file, fsync, rename, fsync the folder).
--
--   tide.safetensors.save_file({w = w, b = b}, "weights.safetensors", {metadata = {step = "10"}})
--   local t = tide.safetensors.load_file("weights.safetensors")   -- t.w, t.b
local binding = require "tide.binding"
local convert = require "tide.convert"

local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istensor = binding.istensor
local fmt = string.format

local M = {}

local function check_path(what, path)
  if type(path) ~= "string" or path == "" then
    binding.error(fmt("safetensors.%s: the path must be a non-empty string, got %s", what, type(path)))
  end
  if path:find("\0", 1, true) then binding.error(fmt("safetensors.%s: the path contains a NUL byte", what)) end
end

local function describe(v)
  if istensor(v) then return "a tensor" end
  return type(v)
end

---------------------------------------------------------------------------
-- Writing
---------------------------------------------------------------------------

-- The tensor to save for v: a tensor, or a Variable's current value.
local function value_of(what, name, v)
  if convert.is_variable(v) then v = convert.variable_handle(v) end
  if not istensor(v) then
    binding.error(fmt("safetensors.%s: '%s' is %s; only tensors and Variables can be saved", what, name,
      describe(v)))
  end
  return v
end

-- metadata: a table of string keys to strings (numbers are written as
-- strings, as they would be read back); anything else is an error.
local function metadata_lists(what, metadata)
  local keys, values = {}, {}
  if metadata == nil then return keys, values end
  if type(metadata) ~= "table" then
    binding.error(fmt("safetensors.%s: metadata must be a table of strings, got %s", what, type(metadata)))
  end
  for k, v in pairs(metadata) do
    if type(k) ~= "string" then
      binding.error(fmt("safetensors.%s: metadata keys must be strings, got %s", what, type(k)))
    end
    if type(v) == "number" then v = tostring(v) end
    if type(v) ~= "string" then
      binding.error(fmt("safetensors.%s: metadata '%s' is %s; values must be strings", what, k, type(v)))
    end
    if (k .. v):find("\0", 1, true) then
      binding.error(fmt("safetensors.%s: metadata '%s' contains a NUL byte", what, k))
    end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for i, k in ipairs(keys) do values[i] = metadata[k] end
  for i, v in ipairs(values) do values[i] = tostring(v) end
  return keys, values
end

local function string_array(list)
  local n = #list
  local arr = ffi.new("const char *[?]", n + 1)
  for i = 1, n do arr[i - 1] = list[i] end
  return arr
end

-- save_file(tensors, path, {metadata=}): tensors is a table name -> tensor
-- (or Variable); writes path atomically. Names must be strings other than
-- "__metadata__"; metadata a table of strings.
function M.save_file(tensors, path, opts)
  if type(tensors) ~= "table" or istensor(tensors) or convert.is_variable(tensors) then
    binding.error(fmt("safetensors.save_file: expects a table of tensors by name, got %s", describe(tensors)))
  end
  check_path("save_file", path)
  if opts ~= nil and type(opts) ~= "table" then
    binding.error(fmt("safetensors.save_file: the third argument is an options table {metadata=}, got %s",
      type(opts)))
  end
  for k in pairs(opts or {}) do
    if k ~= "metadata" then binding.error(fmt("safetensors.save_file: unknown option '%s' (expected: metadata)",
      tostring(k))) end
  end
  local names, values = {}, {}
  for name in pairs(tensors) do
    if type(name) ~= "string" then
      binding.error(fmt("safetensors.save_file: tensor names must be strings, got the %s key %s", type(name),
        tostring(name)))
    end
    if name:find("\0", 1, true) then binding.error(fmt("safetensors.save_file: the name '%s' contains a NUL byte",
      name)) end
    names[#names + 1] = name
  end
  table.sort(names)
  for i, name in ipairs(names) do values[i] = value_of("save_file", name, tensors[name]) end
  local keys, mvalues = metadata_lists("save_file", opts and opts.metadata)
  local n = #names
  local tarr = ffi.new("const tide_tensor *[?]", n + 1)
  for i = 1, n do tarr[i - 1] = values[i] end
  local st = C.tide_safetensors_save(path, n, string_array(names), tarr, #keys, string_array(keys),
    string_array(mvalues))
  for i = 1, n do binding.keep_alive(values[i]) end
  if st ~= 0 then binding.raise() end
end

---------------------------------------------------------------------------
-- Reading
---------------------------------------------------------------------------

local File = {}
File.__index = File

local function close_handle(h) C.tide_safetensors_close(h) end

-- safe_open(path): the file open with its header checked; f:keys(),
-- f:get_tensor(name), f:metadata(), f:close() (also closed when collected).
function M.safe_open(path)
  check_path("safe_open", path)
  local h = C.tide_safetensors_open(path)
  if h == nil then binding.raise() end
  h = ffi.gc(h, close_handle)
  local self = setmetatable({ _h = h, path = path, _index = {} }, File)
  for i = 0, tonumber(C.tide_safetensors_count(h)) - 1 do
    self._index[ffi.string(C.tide_safetensors_name(h, i))] = i
  end
  return self
end

local function handle(self)
  local h = rawget(self, "_h")
  if h == nil then binding.error(fmt("safetensors: '%s' is closed", self.path)) end
  return h
end

-- The tensor names, sorted.
function File:keys()
  handle(self)
  local out = {}
  for name in pairs(self._index) do out[#out + 1] = name end
  table.sort(out)
  return out
end

-- The tensor called name (a new tensor read from the file).
function File:get_tensor(name)
  local h = handle(self)
  local i = self._index[name]
  if i == nil then
    binding.error(fmt("safetensors: '%s' holds no tensor named '%s'", self.path, tostring(name)))
  end
  local t = Tensor()
  if C.tide_safetensors_read(h, i, t) ~= 0 then binding.raise() end
  return binding.finish(t)
end

-- The dtype name and shape (a Lua list) of the tensor called name, without reading it.
local info_dtype, info_ndim = ffi.new("int32_t[1]"), ffi.new("int32_t[1]")
local info_dims = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
function File:info(name)
  local h = handle(self)
  local i = self._index[name]
  if i == nil then
    binding.error(fmt("safetensors: '%s' holds no tensor named '%s'", self.path, tostring(name)))
  end
  if C.tide_safetensors_info(h, i, info_dtype, info_ndim, info_dims) ~= 0 then binding.raise() end
  local shape = {}
  for k = 1, info_ndim[0] do shape[k] = tonumber(info_dims[k - 1]) end
  return ffi.string(C.tide_dtype_name(info_dtype[0])), shape
end

-- The __metadata__ table (empty when the file has none).
function File:metadata()
  local h = handle(self)
  local out = {}
  for i = 0, tonumber(C.tide_safetensors_metadata_count(h)) - 1 do
    out[ffi.string(C.tide_safetensors_metadata_key(h, i))] = ffi.string(C.tide_safetensors_metadata_value(h, i))
  end
  return out
end

function File:close()
  local h = rawget(self, "_h")
  if h ~= nil then
    ffi.gc(h, nil)
    C.tide_safetensors_close(h)
    self._h = nil
  end
end

-- load_file(path): a table name -> tensor of every tensor in the file.
function M.load_file(path)
  check_path("load_file", path)
  local f = M.safe_open(path)
  local out = {}
  local ok, err = pcall(function()
    for name in pairs(f._index) do out[name] = f:get_tensor(name) end
  end)
  f:close()
  if not ok then error(err, 0) end
  return out
end

-- load_metadata(path): the file's __metadata__ (a table of strings), with
-- the header checked but no tensor read.
function M.load_metadata(path)
  check_path("load_metadata", path)
  local f = M.safe_open(path)
  local meta = f:metadata()
  f:close()
  return meta
end

return M
