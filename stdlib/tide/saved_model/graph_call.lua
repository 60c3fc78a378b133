-- stdlib/tide/saved_model/graph_call.lua — calling a loaded model's graph (a TF SavedModel's signature, an
-- ONNX model) from Lua: inputs checked against the model's specs, the outputs in order.
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype

local M = {}
local unpack = unpack or table.unpack
local fmt = string.format

-- The graph g as a function of its inputs in specs' order, giving its n_out outputs in order. `owner` (the
-- model) is kept alive by the function, since g reads what it holds; `who` starts the messages
-- ("signature 'serving_default'", "ONNX model").
function M.positional(owner, g, specs, n_out, who)
  local nin = #specs
  return function(...)
    local _ = owner
    if select("#", ...) ~= nin then
      local names = {}
      for i, s in ipairs(specs) do names[i] = s.name end
      binding.error(fmt("%s takes %d inputs (%s), got %d", who, nin, table.concat(names, ", "), select("#", ...)))
    end
    local ins = ffi.new("const tide_tensor *[?]", math.max(nin, 1))
    local a = { ... }
    for i = 1, nin do
      local x = a[i]
      if not istype(Tensor, x) then
        binding.error(fmt("%s: input '%s' must be a tensor, got %s", who, specs[i].name, type(x)))
      end
      if not specs[i]:is_compatible_with(x) then
        binding.error(fmt("%s: input '%s' is %s %s, but the model takes %s %s", who, specs[i].name, x.dtype,
          spec.dims_text(x.shape), specs[i].dtype, spec.dims_text(specs[i].shape)))
      end
      ins[i - 1] = x
    end
    local outs, res = ffi.new("tide_tensor *[?]", math.max(n_out, 1)), {}
    for i = 1, n_out do
      res[i] = Tensor()
      outs[i - 1] = res[i]
    end
    if C.tide_graph_run(g, nin, ins, n_out, outs) ~= 0 then binding.raise() end
    for i = 1, n_out do binding.finish(res[i]) end
    return unpack(res, 1, n_out)
  end
end

return M
