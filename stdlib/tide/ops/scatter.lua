-- stdlib/tide/ops/scatter.lua — scatter_add, the inverse of gather: adds
-- blocks of updates into a copy of base at index positions along an axis.
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local args = require "tide.args"
local tensor = require "tide.tensor"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local SCATTER_ADD = C.TIDE_OP_SCATTER_ADD

-- An integer option (a Lua number or a one-element tensor), or `default` when nil.
local function int_opt(what, v, default)
  if v == nil then return default end
  if istype(Tensor, v) then v = tensor.item(v) end
  return args.int("scatter_add", what, v)
end

-- scatter_add(base, indices, updates, {axis=batch_dims, batch_dims=0}): a copy
-- of base with updates added where gather(base, indices, axis, batch_dims)
-- would read, so updates have gather's output shape:
-- base.shape[:axis] + indices.shape[batch_dims:] + base.shape[axis+1:].
-- Repeated indices accumulate; an index outside [0, base.shape[axis]) is an
-- error. tide's own op (TF spells this with tensor_scatter_nd_add); axis
-- defaults to batch_dims as in tf.gather.
function M.scatter_add(base, indices, updates, ...)
  local o = args.parse("scatter_add", { "axis", "batch_dims" }, ...)
  if base == nil then binding.error("scatter_add: base is nil; expected a tensor") end
  if indices == nil then binding.error("scatter_add: indices is nil; expected integer indices") end
  if updates == nil then binding.error("scatter_add: updates is nil; expected a tensor") end
  base = convert.arg(base, "scatter_add", 1)
  indices = convert.arg(indices, "scatter_add", 2)
  -- Lua numbers and tables of updates take base's dtype.
  if not istype(Tensor, updates) then updates = convert.coerce(updates, base, "scatter_add", 3) end
  local bd = int_opt("batch_dims", o.batch_dims, 0)
  local a = dispatch.attrs()
  a.axis = int_opt("axis", o.axis, bd)
  a.n = bd
  return dispatch.run(SCATTER_ADD, a, { base, indices, updates })
end

return M
