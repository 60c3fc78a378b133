-- stdlib/tide/ops/update.lua — ops that return a copy of a tensor with part of
-- it replaced: slice_update (TF's tf.tensor_strided_slice_update).
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local format = require "tide.format"
local shape = require "tide.ops.shape"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

local SLICE, SLICE_UPDATE = C.TIDE_OP_SLICE, C.TIDE_OP_SLICE_UPDATE
local attrs_ct = ffi.typeof("tide_attrs")
local infer_in = ffi.new("const tide_tensor *[1]")
local infer_out = ffi.new("tide_tensor *[1]")

-- The dims of x:slice{spec} without its new axes (SLICE's inference; no data).
local function slice_dims(x, a)
  local blank = Tensor()
  infer_in[0], infer_out[0] = x, blank
  if C.tide_op_infer(SLICE, a, 1, infer_in, 1, infer_out) ~= 0 then binding.raise() end
  local dims = {}
  for i = 0, blank.ndim - 1 do dims[i + 1] = tonumber(blank.dims[i]) end
  return dims
end

-- update without the size-1 dims that the spec's tide.newaxis entries add to
-- the slice (the SLICE_UPDATE op sees the slice without them).
local function drop_newaxes(x, a, newaxes, update)
  -- x of unknown rank: the slice's shape is checked when the graph runs
  if x.ndim < 0 then return shape.squeeze(update, newaxes) end
  local dims = slice_dims(x, a)
  local full = {}
  for i, d in ipairs(dims) do full[i] = d end
  for _, pos in ipairs(newaxes) do table.insert(full, pos + 1, 1) end
  local same = update.ndim == #full
  for i = 1, #full do   -- an unknown (-1) dim of a traced tensor matches any
    local u = tonumber(update.dims[i - 1])
    if same and u ~= full[i] and u >= 0 and full[i] >= 0 then same = false end
  end
  if not same then
    binding.error(string.format("slice_update: update has shape %s but the slice has shape %s (x has shape %s)",
      format.shape_text(tensor.shape_of(update)), format.shape_text(full),
      format.shape_text(tensor.shape_of(x))))
  end
  -- squeeze rather than reshape: a traced update may have several unknown dims
  return shape.squeeze(update, newaxes)
end

-- slice_update(x, spec, update): a copy of x with x:slice{spec} replaced by
-- update, as tf.tensor_strided_slice_update. spec is x:slice's (indices,
-- {start, stop, step} ranges, {}, "...", tide.newaxis); update must have
-- exactly the slice's shape (TF does not broadcast it either); a Lua number
-- or table takes x's dtype.
function M.slice_update(x, spec, update)
  if x == nil then binding.error("slice_update: x is nil; expected a tensor") end
  x = convert.arg(x, "slice_update", 1)
  if spec == nil then binding.error("slice_update: spec is nil; expected a table spec such as {0, {1, 3}}") end
  if update == nil then binding.error("slice_update: update is nil; expected a tensor of the slice's shape") end
  if not istype(Tensor, update) then update = convert.coerce(update, x, "slice_update", 3) end
  local a = attrs_ct()   -- not dispatch's shared block: reshape below would overwrite it
  local newaxes = tensor.parse_slice_spec("slice_update", x.ndim, spec, a)
  if #newaxes > 0 then update = drop_newaxes(x, a, newaxes, update) end
  return dispatch.run(SLICE_UPDATE, a, { x, update })
end

return M
