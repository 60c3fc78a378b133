-- stdlib/tide/io/idx.lua — tide.io.read_idx: an IDX file (MNIST's format,
-- plain or gzipped) into a uint8 tensor of its shape, read by libtide
-- (kernels/io/idx.c: zlib straight into the tensor's buffer).
local binding = require "tide.binding"

local C, Tensor = binding.C, binding.Tensor
local M = {}

-- read_idx(path): the IDX file's data as a uint8 tensor of its shape (no Lua
-- string copies: Fashion-MNIST's training images are 47 MB).
function M.read_idx(path)
  if type(path) ~= "string" then
    binding.error("read_idx: expects a file path, got " .. type(path))
  end
  local t = Tensor()
  if C.tide_read_idx(path, t) ~= 0 then binding.raise() end
  return binding.finish(t)
end

return M
