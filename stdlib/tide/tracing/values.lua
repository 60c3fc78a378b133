-- stdlib/tide/tracing/values.lua — small helpers on the values control flow
-- and TensorArrays carry: dims with unknown (-1) entries, their text, and
-- Variables among them.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local args = require "tide.args"
local spec = require "tide.tracing.spec"
local tensor = require "tide.tensor"
local variable = require "tide.variable"
local tensor_shape = require "tide.tensor_shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local None = spec.None

local M = {}

function M.is_tensor(x) return istype(Tensor, x) end
M.symbolic = tensor.is_symbolic

-- True while some graph is being built on this thread (inside tide.trace).
function M.tracing() return C.tide_graph_building() ~= nil end

M.is_variable, M.read_variable = variable.is_variable, variable.read

-- Dims of t as a Lua list, -1 where unknown; nil when its rank is unknown
-- (a traced tensor of a TensorSpec of shape nil).
function M.dims_of(t)
  if t.ndim < 0 then return nil end
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end

function M.dims_text(dims)
  if tensor_shape.is_unknown_rank(dims) then return "<unknown>" end
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = (d == -1 or d == None) and "None" or tostring(d) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

function M.type_text(t)
  return dtype.names[t.dt] .. M.dims_text(M.dims_of(t))
end

function M.all_known(dims)
  if dims == nil then return false end
  for _, d in ipairs(dims) do if d == -1 or d == None then return false end end
  return true
end

-- An integer bound from a Lua number or an eager one-element tensor.
function M.count_arg(op, what, v)
  local n = args.int(op, what, v)
  if n < 0 then binding.error(string.format("%s: %s must be at least 0, got %d", op, what, n)) end
  return n
end

return M
