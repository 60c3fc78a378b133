-- stdlib/tide/io/npy.lua — tide.io.read_npy / write_npy: NumPy's .npy files
-- (one array), read and written by libtide (kernels/io/npy.c).
local binding = require "tide.binding"
local convert = require "tide.convert"

local C, Tensor, istensor = binding.C, binding.Tensor, binding.istensor
local fmt = string.format
local M = {}

local function check_path(what, path)
  if type(path) ~= "string" or path == "" then
    binding.error(fmt("%s: the path must be a non-empty string, got %s", what, type(path)))
  end
  if path:find("\0", 1, true) then binding.error(what .. ": the path contains a NUL byte") end
end

-- read_npy(path): the array in the .npy file as a tensor of its dtype and shape.
function M.read_npy(path)
  check_path("read_npy", path)
  local t = Tensor()
  if C.tide_npy_read(path, t) ~= 0 then binding.raise() end
  return binding.finish(t)
end

-- write_npy(path, x): x (a tensor or a Variable's value) as a .npy file that
-- numpy.load reads; the file is replaced atomically.
function M.write_npy(path, x)
  check_path("write_npy", path)
  if convert.is_variable(x) then x = convert.variable_handle(x) end
  if not istensor(x) then
    binding.error(fmt("write_npy: expects a tensor or a Variable to write, got %s", type(x)))
  end
  if C.tide_npy_write(path, x) ~= 0 then binding.raise() end
end

return M
