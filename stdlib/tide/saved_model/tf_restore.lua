-- stdlib/tide/saved_model/tf_restore.lua — a TF SavedModel (TF Hub's layout) restored to fine-tune: its variables
-- as tide.Variables, each signature a traced Function that replays the mapped graph (replay.lua) reading them.
-- The graph is the one kernels/io/tf_saved_model.c maps (tide_tf_saved_model_def gives it as data), so the ops
-- and checks are the reader's; running it through the ops instead of as a finished C graph is what lets a
-- GradientTape see the Variables (each op finds its gradient by registry name, tracing/gradient.lua records a
-- call of the Function as one node). Sets the loader of tide.layers.TFSMLayer and tide.hub.KerasLayer.
local binding = require "tide.binding"
local dtype = require "tide.dtype"
local variable = require "tide.variable"
local Function = require("tide.tracing.function").Function
local replay = require "tide.saved_model.replay"
local tf = require "tide.saved_model.tf"
local tfsm_layer = require "tide.layers.tfsm"
local ffi, C, Tensor = binding.ffi, binding.C, binding.Tensor

local M = {}

local function share(t)
  local r = Tensor()
  if C.tide_tensor_share(r, t) ~= 0 then binding.raise() end
  return binding.finish(r)
end

-- restore(dir): the TF SavedModel in dir as
--   { dir, variables = {Variable, ...} (the model's order), keys = {checkpoint key, ...},
--     endpoints = { name = { fn = Function, inputs = {TensorSpec...} (TF's names, sorted), outputs = {name...} } },
--     endpoint_names = {name, ...} (sorted) }
-- Each Variable starts from the checkpoint's value (a copy: the model's C graphs keep theirs); float variables
-- are trainable (as a TF Hub model's trainable_variables), others not.
function M.restore(dir)
  local loaded = tf.load(dir)
  local m = loaded._tf
  local self = { dir = dir, variables = {}, keys = {}, endpoints = {}, endpoint_names = {}, _loaded = loaded }
  for k = 0, C.tide_tf_saved_model_num_variables(m) - 1 do
    local key = ffi.string(C.tide_tf_saved_model_variable_name(m, k))
    local value = share(C.tide_tf_saved_model_variable(m, k))
    local name = key:gsub("/%.ATTRIBUTES/VARIABLE_VALUE$", "")
    self.variables[k + 1] = variable.Variable(value,
      { name = name, trainable = dtype.is_float[dtype.code(value.dtype)] == true })
    self.keys[k + 1] = key
  end
  local pdef = ffi.new("const tide_graph_def *[1]")
  for k = 0, C.tide_tf_saved_model_num_signatures(m) - 1 do
    local sname = ffi.string(C.tide_tf_saved_model_signature_name(m, k))
    local f = loaded.functions[sname]
    if C.tide_tf_saved_model_def(m, k, pdef) ~= 0 then binding.raise() end
    -- a closure of its own prototype per endpoint: tide.trace counts retraces by prototype
    local make = assert(loadstring("local run, def, vars, model = ... " ..
      "return function(...) local _ = model; return run(def, vars, ...) end", "=tf_saved_model:" .. sname))
    local fn = Function(make(replay.run, pdef[0], self.variables, loaded),
      { input_signature = f.input_signature, name = sname })
    self.endpoints[sname] = { fn = fn, inputs = f.input_signature, outputs = f.output_names }
    self.endpoint_names[#self.endpoint_names + 1] = sname
  end
  table.sort(self.endpoint_names)
  return self
end

tfsm_layer.set_loader(M.restore)

return M
