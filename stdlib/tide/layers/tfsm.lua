-- stdlib/tide/layers/tfsm.lua — a TensorFlow SavedModel as a Keras layer: Keras 3's TFSMLayer and TF Hub's
-- KerasLayer (tide.hub.KerasLayer), called on a table of inputs by TF's names, giving a table of outputs by name.
-- The SavedModel is read by the saving floor, which hands its loader down (set_loader, from
-- tide.saved_model.tf_restore): the model's variables become this layer's Variables (trainable when the layer
-- is), and each endpoint a traced Function that reads them, so a tape through the call reaches them.
local binding = require "tide.binding"
local spec = require "tide.tracing.spec"
local layer = require "tide.layers.layer"

local Layer, who = layer.Layer, layer.who
local fmt = string.format
local unpack = unpack or table.unpack

local M = {}

local loader = nil
-- The saving floor's TF SavedModel restorer (tide.saved_model.tf_restore.restore).
function M.set_loader(fn) loader = fn end

local function restore(self, path)
  if type(path) ~= "string" or path == "" then
    binding.error(fmt("%s: filepath must be the path of a TF SavedModel folder, got %s", who(self), type(path)))
  end
  if not loader then
    binding.error(fmt("%s: the TF SavedModel reader is not loaded (use tide.layers from require \"tide\", or " ..
      "require \"tide.saved_model.tf_restore\")", who(self)))
  end
  local f = io.open(path .. "/saved_model.pb", "rb")
  if not f then
    binding.error(fmt("%s: '%s' is not a TF SavedModel folder (no saved_model.pb there)", who(self), path))
  end
  f:close()
  return loader(path)
end

-- The endpoint named `name` of the restored model r, or an error listing those there.
local function endpoint(self, r, name, what)
  local e = r.endpoints[name]
  if e then return e end
  binding.error(fmt("%s: %s '%s' is not an endpoint of %s; it has: %s", who(self), what, tostring(name), r.dir,
    table.concat(r.endpoint_names, ", ")))
end

-- Files the restored model's Variables in this layer (a tracked field), frozen with the layer.
local function adopt(self, r)
  rawset(self, "_restored", r)
  self.saved_model_variables = r.variables
  if not rawget(self, "_trainable") then
    for _, v in ipairs(r.variables) do v.trainable = false end
  end
  local _ = self.weights -- files each Variable in the tracking store now, with its flag as set
  rawset(self, "built", true)
end

-- The endpoint's function called on inputs, a table by TF's input names; a table of its outputs by name.
local function call_endpoint(self, e, inputs)
  if type(inputs) ~= "table" or binding.istensor(inputs) then
    binding.error(fmt("%s: takes a table of inputs by name {%s = tensor, ...}, got %s", who(self),
      e.inputs[1] and e.inputs[1].name or "name", binding.istensor(inputs) and "a tensor" or type(inputs)))
  end
  local args, known = {}, {}
  for i, s in ipairs(e.inputs) do
    known[s.name] = true
    local x = inputs[s.name]
    if x == nil then
      local names = {}
      for j, t in ipairs(e.inputs) do names[j] = t.name end
      binding.error(fmt("%s: input '%s' is missing (the model takes %s)", who(self), s.name,
        table.concat(names, ", ")))
    end
    if not binding.istensor(x) then
      binding.error(fmt("%s: input '%s' must be a tensor, got %s", who(self), s.name, type(x)))
    end
    if not s:is_compatible_with(x) then
      binding.error(fmt("%s: input '%s' is %s %s, but the model takes %s %s", who(self), s.name, x.dtype,
        spec.dims_text(x.shape), s.dtype, spec.dims_text(s.shape)))
    end
    args[i] = x
  end
  for k in pairs(inputs) do
    if not known[k] then
      local names = {}
      for j, t in ipairs(e.inputs) do names[j] = t.name end
      binding.error(fmt("%s: the model has no input named '%s' (it takes %s)", who(self), tostring(k),
        table.concat(names, ", ")))
    end
  end
  local res = { e.fn(unpack(args, 1, #e.inputs)) }
  local out = {}
  for i, name in ipairs(e.outputs) do out[name] = res[i] end
  return out
end

-- Keras 3: TFSMLayer(filepath, call_endpoint = "serve", call_training_endpoint = nil, trainable = true, name =,
-- dtype =). The training endpoint, when given, is called when training is true.
local TFSMLayer = Layer:extend("TFSMLayer")
M.TFSMLayer = TFSMLayer

function TFSMLayer:init(...)
  local o = self:_kwargs({ "filepath", "call_endpoint", "call_training_endpoint" }, ...)
  local path = o.filepath
  local call = o.call_endpoint
  if call == nil then call = "serve" end
  if type(call) ~= "string" then binding.error(fmt("%s: call_endpoint must be a string", who(self))) end
  local training = o.call_training_endpoint
  if training ~= nil and type(training) ~= "string" then
    binding.error(fmt("%s: call_training_endpoint must be a string", who(self)))
  end
  local r = restore(self, path)
  rawset(self, "filepath", path)
  rawset(self, "call_endpoint", call)
  rawset(self, "call_training_endpoint", training)
  rawset(self, "_endpoint", endpoint(self, r, call, "call_endpoint"))
  if training then rawset(self, "_training_endpoint", endpoint(self, r, training, "call_training_endpoint")) end
  adopt(self, r)
end

function TFSMLayer:call(inputs, opts)
  local e = rawget(self, "_endpoint")
  if opts and opts.training and rawget(self, "_training_endpoint") then e = rawget(self, "_training_endpoint") end
  return call_endpoint(self, e, inputs)
end

function TFSMLayer:get_config()
  local config = Layer.get_config(self)
  config.filepath = rawget(self, "filepath")
  config.call_endpoint = rawget(self, "call_endpoint")
  config.call_training_endpoint = rawget(self, "call_training_endpoint")
  return config
end

-- TF Hub: hub.KerasLayer(handle, trainable = false, signature = nil, output_key = nil, name =). Without a
-- signature it calls "serving_default" (else the model's only endpoint); output_key picks one output.
local KerasLayer = Layer:extend("KerasLayer")
M.KerasLayer = KerasLayer

function KerasLayer:init(...)
  local o = self:_kwargs({ "handle", "signature", "output_key", "signature_outputs_as_dict" }, ...)
  local r = restore(self, o.handle)
  local sig = o.signature
  if sig == nil then
    sig = r.endpoints.serving_default and "serving_default" or (#r.endpoint_names == 1 and r.endpoint_names[1])
    if not sig then
      binding.error(fmt("%s: %s has no serving_default endpoint; name one with signature = (it has: %s)", who(self),
        r.dir, table.concat(r.endpoint_names, ", ")))
    end
  end
  if type(sig) ~= "string" then binding.error(fmt("%s: signature must be a string", who(self))) end
  local e = endpoint(self, r, sig, "signature")
  local key = o.output_key
  if key ~= nil then
    local found = false
    for _, n in ipairs(e.outputs) do found = found or n == key end
    if not found then
      binding.error(fmt("%s: output_key '%s' is not an output of signature '%s' (it has: %s)", who(self),
        tostring(key), sig, table.concat(e.outputs, ", ")))
    end
  end
  rawset(self, "handle", o.handle)
  rawset(self, "signature", sig)
  rawset(self, "output_key", key)
  rawset(self, "_endpoint", e)
  adopt(self, r)
end

-- TF Hub's default: not trainable unless trainable = true is given (Keras's layers default to trainable).
function KerasLayer:__init(...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  local given = type(last) == "table" and getmetatable(last) == nil and last.trainable ~= nil
  Layer.__init(self, ...)
  if not given then self.trainable = false end
end

function KerasLayer:call(inputs)
  local out = call_endpoint(self, rawget(self, "_endpoint"), inputs)
  local key = rawget(self, "output_key")
  if key then return out[key] end
  return out
end

function KerasLayer:get_config()
  local config = Layer.get_config(self)
  config.handle = rawget(self, "handle")
  config.signature = rawget(self, "signature")
  config.output_key = rawget(self, "output_key")
  return config
end

return M
