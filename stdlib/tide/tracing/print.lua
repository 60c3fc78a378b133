-- stdlib/tide/tracing/print.lua — tide.print (TF's tf.print): prints tensors
-- and Lua values separated by spaces, now when eager and at every run of a
-- traced function (a print node), in one format for both.
local binding = require "tide.binding"
local context = require "tide.trace_context"
local variable = require "tide.variable"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}

-- tide.print(...): tensors print as nested brackets (at most 3 values at
-- each end of a dimension, as tf.print's summarize=3), other values with
-- tostring; {sep=, end_=} are not supported: one space, one newline.
function M.print(...)
  local n = select("#", ...)
  local pieces, tensors = {}, {}
  for i = 1, n do
    local v = select(i, ...)
    if variable.is_variable(v) then v = variable.read(v) end
    if istype(Tensor, v) then
      tensors[#tensors + 1] = v
      pieces[i] = "%t"
    else
      pieces[i] = (type(v) == "string" and v or tostring(v)):gsub("%%", "%%%%")
    end
  end
  local text = table.concat(pieces, " ")
  local arr = ffi.new("const tide_tensor *[?]", math.max(#tensors, 1))
  for i, t in ipairs(tensors) do arr[i - 1] = t end
  local g = C.tide_graph_building()
  local rc
  if g ~= nil then
    rc = C.tide_graph_print(g, text, #tensors, arr)
  else
    for _, t in ipairs(tensors) do
      if context.is_symbolic(t) then
        binding.error("print: a symbolic tensor of a traced function is used outside its trace")
      end
    end
    rc = C.tide_print(text, #tensors, arr)
  end
  for _, t in ipairs(tensors) do -- symbolic ones hold no data (and nelem -1 with a None dim or an unknown rank)
    if not context.is_symbolic(t) then binding.keep_alive(t) end
  end
  if rc ~= 0 then binding.raise() end
end

return M
