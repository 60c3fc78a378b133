-- stdlib/tide/saved_model/tf.lua — TensorFlow's SavedModels (saved_model.pb + variables/), read and
-- mapped onto tide's ops by C (kernels/io/tf_saved_model.c): signatures take and give tensors by TF's names.
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local graph_call = require "tide.saved_model.graph_call"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor
local istype = ffi.istype
local None, TensorSpec = spec.None, spec.TensorSpec

local M = {}
local unpack = unpack or table.unpack
local fmt = string.format

local dims_buf = ffi.new("int64_t[?]", C.TIDE_MAX_DIMS)
local ndim_buf = ffi.new("int[1]")

-- A tensor sharing the C tensor t (the model keeps t alive).
local function share(t)
  local r = Tensor()
  if C.tide_tensor_share(r, t) ~= 0 then binding.raise() end
  return binding.finish(r)
end

-- Signature k's input (or output) specs as the SavedModel declares them, named by TF's names.
local function specs_of(m, k, outputs)
  local name_of = outputs and C.tide_tf_saved_model_output_name or C.tide_tf_saved_model_input_name
  local spec_of = outputs and C.tide_tf_saved_model_output_spec or C.tide_tf_saved_model_input_spec
  local specs = {}
  local i = 0
  while true do
    local name = name_of(m, k, i)
    if name == nil then break end
    local dt = spec_of(m, k, i, ndim_buf, dims_buf)
    local shape
    if ndim_buf[0] >= 0 then
      shape = {}
      for d = 0, ndim_buf[0] - 1 do
        local v = tonumber(dims_buf[d])
        shape[d + 1] = v < 0 and None or v
      end
    end
    specs[i + 1] = TensorSpec(shape, ffi.string(C.tide_dtype_name(dt)), ffi.string(name))
    i = i + 1
  end
  return specs
end

-- Signature k as a function of its inputs in order (TF's names, sorted), giving its outputs in order.
local function positional(model, m, k, sname, specs, n_out)
  return graph_call.positional(model, C.tide_tf_saved_model_graph(m, k), specs, n_out, fmt("signature '%s'", sname))
end

-- load(dir): the TF SavedModel in dir, as {format = "tensorflow", signatures = {name = fn}, functions =
-- {name = fn}, variables = {checkpoint key = tensor}}. signatures[name]{x = t} takes a table of inputs by
-- TF's names and returns a table of outputs by TF's names; functions[name](t, ...) takes them in order
-- (input_signature lists them) and returns the outputs in order (output_names and output_signature list them).
function M.load(dir)
  if type(dir) ~= "string" or dir == "" then binding.error("saved_model.load: dir must be a path string") end
  local p = ffi.new("tide_tf_saved_model *[1]")
  if C.tide_tf_saved_model_open(dir, p) ~= 0 then binding.raise() end
  local m = ffi.gc(p[0], C.tide_tf_saved_model_free)
  local self = { format = "tensorflow", _tf = m, signatures = {}, functions = {}, variables = {} }
  for k = 0, C.tide_tf_saved_model_num_variables(m) - 1 do
    self.variables[ffi.string(C.tide_tf_saved_model_variable_name(m, k))] = share(C.tide_tf_saved_model_variable(m, k))
  end
  for k = 0, C.tide_tf_saved_model_num_signatures(m) - 1 do
    local sname = ffi.string(C.tide_tf_saved_model_signature_name(m, k))
    local specs, out_specs = specs_of(m, k, false), specs_of(m, k, true)
    local outs = {}
    for i, s in ipairs(out_specs) do outs[i] = s.name end
    local fn = positional(self, m, k, sname, specs, #outs)
    self.functions[sname] = setmetatable({ input_signature = specs, output_signature = out_specs, output_names = outs,
      name = sname },
      { __call = function(_, ...) return fn(...) end })
    self.signatures[sname] = function(inputs)
      if type(inputs) ~= "table" or istype(Tensor, inputs) then
        binding.error(fmt("signature '%s' takes a table of inputs by name {%s = tensor, ...}", sname,
          specs[1] and specs[1].name or "name"))
      end
      local a = {}
      for i, s in ipairs(specs) do
        if inputs[s.name] == nil then binding.error(fmt("signature '%s': input '%s' is missing", sname, s.name)) end
        a[i] = inputs[s.name]
      end
      for key in pairs(inputs) do
        local known = false
        for _, s in ipairs(specs) do known = known or s.name == key end
        if not known then binding.error(fmt("signature '%s' has no input named '%s'", sname, tostring(key))) end
      end
      local res = { fn(unpack(a, 1, #specs)) }
      local r = {}
      for i, name in ipairs(outs) do r[name] = res[i] end
      return r
    end
  end
  return self
end

return M
