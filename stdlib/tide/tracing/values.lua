-- stdlib/tide/tracing/values.lua — small helpers on the values control flow
-- and TensorArrays carry: dims with unknown (-1) entries, their text, zeros
-- of a value's shape also when it is known only at run time, and the lazy
-- link to tide.variable (which itself requires the tracing modules).
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local args = require "tide.args"
local convert = require "tide.convert"
local spec = require "tide.tracing.spec"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local create = require "tide.ops.create"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local None = spec.None

local M = {}

local BOOL = C.TIDE_BOOL

function M.is_tensor(x) return istype(Tensor, x) end
M.symbolic = tensor.is_symbolic

-- True while some graph is being built on this thread (inside tide.trace).
function M.tracing() return C.tide_graph_building() ~= nil end

-- tide.variable's is_variable and read, loaded at first use (tide.variable
-- requires the tracing modules).
local variable_module
local function variable()
  variable_module = variable_module or require "tide.variable"
  return variable_module
end
function M.is_variable(x) return type(x) == "table" and variable().is_variable(x) end
function M.read_variable(v) return variable().read(v) end

-- Dims of t as a Lua list, -1 where unknown.
function M.dims_of(t)
  local d = {}
  for i = 0, t.ndim - 1 do d[i + 1] = tonumber(t.dims[i]) end
  return d
end

function M.dims_text(dims)
  local parts = {}
  for i, d in ipairs(dims) do parts[i] = (d == -1 or d == None) and "None" or tostring(d) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

function M.type_text(t)
  return dtype.names[t.dt] .. M.dims_text(M.dims_of(t))
end

function M.all_known(dims)
  for _, d in ipairs(dims) do if d == -1 or d == None then return false end end
  return true
end

-- Zeros of x's dtype and shape, also when x's dims are known only at run time.
function M.zeros_of(x)
  if M.all_known(M.dims_of(x)) then return create.zeros_like(x) end
  local zero = convert.tensor(x.dt == BOOL and false or 0, dtype.names[x.dt])
  return math_ops.where(convert.tensor(false), x, zero)
end

-- An integer bound from a Lua number or an eager one-element tensor.
function M.count_arg(op, what, v)
  local n = args.int(op, what, v)
  if n < 0 then binding.error(string.format("%s: %s must be at least 0, got %d", op, what, n)) end
  return n
end

return M
