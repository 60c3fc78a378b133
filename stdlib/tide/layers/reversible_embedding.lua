-- stdlib/tide/layers/reversible_embedding.lua — Keras 3's ReversibleEmbedding: an Embedding that also maps
-- hidden states back to logits over the vocabulary (call with {reverse = true}): x @ embeddings^T when the
-- weights are tied, else x @ reverse_embeddings. B = batch, T = time, D = output_dim, V = input_dim.
local binding = require "tide.binding"
local math_ops = require "tide.ops.math"
local shape_ops = require "tide.ops.shape"
local linalg = require "tide.ops.linalg"
local layer = require "tide.layers.layer"
local core = require "tide.layers.core"

local who = layer.who
local fmt = string.format

local M = {}

local ReversibleEmbedding = core.Embedding:extend("ReversibleEmbedding")
M.ReversibleEmbedding = ReversibleEmbedding
ReversibleEmbedding._own_options = { input_dim = true }

-- ReversibleEmbedding{input_dim, output_dim, tie_weights=true, embeddings_initializer="uniform",
-- embeddings_regularizer=, embeddings_constraint=, mask_zero=false, reverse_dtype=, logit_soft_cap=}
function ReversibleEmbedding:init(...)
  local o = self:_kwargs({ "input_dim", "output_dim", "tie_weights", "embeddings_initializer",
    "embeddings_regularizer", "embeddings_constraint", "mask_zero", "reverse_dtype", "logit_soft_cap" }, ...)
  core.Embedding.init(self, { o.input_dim, o.output_dim, embeddings_initializer = o.embeddings_initializer,
    embeddings_regularizer = o.embeddings_regularizer, embeddings_constraint = o.embeddings_constraint,
    mask_zero = o.mask_zero })
  if o.tie_weights ~= nil and type(o.tie_weights) ~= "boolean" then
    binding.error(fmt("%s: tie_weights must be true or false, got %s", who(self), tostring(o.tie_weights)))
  end
  self.tie_weights = o.tie_weights ~= false
  if o.reverse_dtype ~= nil then
    local dtype = require "tide.dtype"
    local ok, code = pcall(dtype.code, o.reverse_dtype, "ReversibleEmbedding")
    if not ok or not dtype.is_float[code] then
      binding.error(fmt("%s: reverse_dtype must be a float dtype, got %s", who(self), tostring(o.reverse_dtype)))
    end
    self.reverse_dtype = dtype.names[code]
  end
  if o.logit_soft_cap ~= nil and (type(o.logit_soft_cap) ~= "number" or not (o.logit_soft_cap > 0)) then
    binding.error(fmt("%s: logit_soft_cap must be a number > 0, got %s", who(self), tostring(o.logit_soft_cap)))
  end
  self.logit_soft_cap = o.logit_soft_cap
end

function ReversibleEmbedding:build(input_shape)
  core.Embedding.build(self, input_shape)
  if not self.tie_weights then
    self.reverse_embeddings = self:add_weight { name = "reverse_embeddings", shape = { self.output_dim, self.input_dim },
      initializer = self.embeddings_initializer }
  end
end

-- Floats stay floats (the reverse call's hidden states); Lua tables of ids become int32, as Embedding's.
function ReversibleEmbedding:_convert_input(x) return core.Embedding._convert_input(self, x) end

-- layer(ids): the embeddings; layer(x, {reverse = true}): x [..., D] -> logits [..., V], soft-capped as
-- cap * tanh(logits / cap) when logit_soft_cap is set.
function ReversibleEmbedding:call(x, opts)
  local reverse = opts ~= nil and opts.reverse == true
  rawset(self, "_reverse_call", reverse)
  if not reverse then return core.Embedding.call(self, x) end
  if not binding.istensor(x) then
    binding.error(fmt("%s: the reverse call expects a tensor of hidden states [..., %d], got %s", who(self),
      self.output_dim, type(x)))
  end
  local d = x.shape[x.shape.rank]
  if type(d) == "number" and d ~= self.output_dim then
    binding.error(fmt("%s: the reverse call expects hidden states of last dim %d (output_dim), got shape %s",
      who(self), self.output_dim, tostring(x.shape)))
  end
  local kernel = self.tie_weights and shape_ops.transpose(self.embeddings:read_value())
    or self.reverse_embeddings:read_value()
  if self.reverse_dtype then
    x, kernel = math_ops.cast(x, self.reverse_dtype), math_ops.cast(kernel, self.reverse_dtype)
  elseif kernel.dtype ~= x.dtype then
    kernel = math_ops.cast(kernel, x.dtype)
  end
  local logits = linalg.matmul(x, kernel)
  local cap = self.logit_soft_cap
  if cap then logits = math_ops.tanh(logits / cap) * cap end
  return logits
end

-- Keras: the forward call's mask as Embedding's (mask_zero), none for the reverse call.
function ReversibleEmbedding:compute_mask(ids, mask)
  if rawget(self, "_reverse_call") then return nil end
  return core.Embedding.compute_mask(self, ids, mask)
end

function ReversibleEmbedding:get_config()
  local c = core.Embedding.get_config(self)
  c.tie_weights, c.reverse_dtype, c.logit_soft_cap = self.tie_weights, self.reverse_dtype, self.logit_soft_cap
  return c
end

return M
