-- stdlib/tide/layers/attention/dot.lua — Keras 3's Attention (Luong's dot-product, or "concat"
-- scores) and AdditiveAttention (Bahdanau's): scores of query [B, Tq, dim] against key
-- [B, Tv, dim], a softmax over the values (masks, causal mask), dropout when training.
-- Called as layer({query, value[, key]}, {mask = {query_mask, value_mask}, ...}).
local binding = require "tide.binding"
local keras_mask = require "tide.keras_mask"
local layer = require "tide.layers.layer"
local linalg = require "tide.ops.linalg"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"
local nn = require "tide.ops.nn"
local common = require "tide.layers.attention.common"

local Layer, who = layer.Layer, layer.who

local M = {}

-- Keras's _validate_inputs: a list of 2 or 3 inputs, a list of 2 or 3 masks.
local function check_inputs(self, inputs, mask)
  local name = getmetatable(self).__name
  if type(inputs) ~= "table" or common.is_tensorish(inputs) or inputs[1] == nil then
    binding.error(string.format("%s: must be called on a list of inputs, namely {query, value} or {query, value, " ..
      "key}", who(self)))
  end
  local n = #inputs
  if n < 2 or n > 3 then
    binding.error(string.format("%s: accepts inputs list of length 2 or 3, namely {query, value} or {query, value, " ..
      "key}; got length %d", name, n))
  end
  if mask ~= nil and (type(mask) ~= "table" or common.is_tensorish(mask)) then
    binding.error(string.format("%s: mask must be a list, namely {query_mask, value_mask}", who(self)))
  end
end

-- Attention{use_scale=false, score_mode="dot", dropout=0, seed=nil}:
-- scores query . key (scaled by a learned scalar with use_scale), or with
-- "concat", concat_score_weight * sum(tanh(scale * (query + key))).
-- layer({query, value[, key]}, {mask = {query_mask, value_mask},
-- return_attention_scores = false, training =, use_causal_mask = false}):
-- the output [B, Tq, dim] (zeros where the query is masked), or {output,
-- scores} with return_attention_scores.
local Attention = Layer:extend("Attention")
M.Attention = Attention
Attention.supports_masking = true

function Attention:init(...)
  local o = self:_kwargs({ "use_scale", "score_mode", "dropout", "seed" }, ...)
  self:_setup(o, false, "dot")
end

function Attention:_setup(o, default_scale, default_mode)
  local name = getmetatable(self).__name
  local use_scale = o.use_scale
  if use_scale == nil then use_scale = default_scale end
  if type(use_scale) ~= "boolean" then
    binding.error(string.format("%s: use_scale must be true or false, got %s", name, tostring(use_scale)))
  end
  self.use_scale = use_scale
  local mode = o.score_mode or default_mode
  if mode ~= "dot" and mode ~= "concat" then
    binding.error(string.format("%s: invalid value for score_mode: expected one of \"dot\", \"concat\", got %s", name,
      tostring(mode)))
  end
  self.score_mode = mode
  local rate = o.dropout or 0.0
  if type(rate) ~= "number" or rate < 0 or rate >= 1 then
    binding.error(string.format("%s: dropout must be a number in [0, 1), got %s", name, tostring(rate)))
  end
  self.dropout = rate
  if o.seed ~= nil and (type(o.seed) ~= "number" or o.seed % 1 ~= 0) then
    binding.error(string.format("%s: seed must be an integer, got %s", name, tostring(o.seed)))
  end
  self.seed = o.seed
end

function Attention:build(shapes)
  check_inputs(self, shapes)
  if self.use_scale then
    self.scale = self:add_weight { name = "scale", shape = {}, initializer = "ones" }
  end
  if self.score_mode == "concat" then
    self.concat_score_weight = self:add_weight { name = "concat_score_weight", shape = {}, initializer = "ones" }
  end
end

-- [B, Tq, Tv] scores of query against key.
function Attention:_calculate_scores(query, key)
  if self.score_mode == "dot" then
    local scores = linalg.matmul(query, key, false, true)
    if self.scale then scores = scores * self.scale end
    return scores
  end
  local q, k = shape_ops.expand_dims(query, -2), shape_ops.expand_dims(key, -3)
  local sum = q + k
  if self.scale then sum = self.scale * sum end
  return self.concat_score_weight * reduce_ops.reduce_sum(math_ops.tanh(sum), -1)
end

-- Keras's _apply_scores: masked scores minus 1e9 (65504 in float16), softmax,
-- dropout when training, then the weighted values.
function Attention:_apply_scores(scores, value, mask, training)
  if mask ~= nil then
    local pad = math_ops.logical_not(common.bool(mask))
    if pad.ndim == 2 then pad = shape_ops.expand_dims(pad, -2) end
    local big = scores.dtype == "float16" and 65504.0 or 1.0e9
    scores = math_ops.where(pad, scores - big, scores)
  end
  local weights = nn.softmax(scores, -1)
  if training and self.dropout > 0 then weights = nn.dropout(weights, self.dropout, { seed = self.seed }) end
  return linalg.matmul(weights, value), weights
end

function Attention:call(inputs, opts)
  local mask = opts.mask
  check_inputs(self, inputs, mask)
  local q, v = inputs[1], inputs[2]
  local k = inputs[3] or v
  local q_mask = mask and mask[1] or nil
  local v_mask = mask and mask[2] or nil
  if v_mask ~= nil then v_mask = common.bool(v_mask) end
  local scores = self:_calculate_scores(q, k)
  local s_mask = v_mask
  if opts.use_causal_mask then
    local c = common.causal_mask(q, k)                 -- [1, Tq, Tv]
    s_mask = v_mask ~= nil and math_ops.logical_and(shape_ops.expand_dims(v_mask, -2), c) or c
  end
  local out, weights = self:_apply_scores(scores, v, s_mask, opts.training)
  if q_mask ~= nil then
    q_mask = common.bool(q_mask)
    out = math_ops.where(shape_ops.expand_dims(q_mask, -1), out, 0)
    keras_mask.set(out, q_mask)
  end
  if opts.return_attention_scores then return { out, weights } end
  return out
end

-- The output carries the query's mask (set by call).
function Attention:compute_mask() return nil end

function Attention:get_config()
  local c = Layer.get_config(self)
  c.use_scale, c.score_mode, c.dropout, c.seed = self.use_scale, self.score_mode, self.dropout, self.seed
  return c
end

-- AdditiveAttention{use_scale=true, dropout=0, seed=nil}: scores
-- sum(scale * tanh(query + key)) over the features, scale a learned [dim]
-- vector (glorot_uniform) with use_scale; called as Attention.
local AdditiveAttention = Attention:extend("AdditiveAttention")
M.AdditiveAttention = AdditiveAttention

function AdditiveAttention:init(...)
  local o = self:_kwargs({ "use_scale", "dropout", "seed" }, ...)
  self:_setup(o, true, "dot")
end

function AdditiveAttention:build(shapes)
  check_inputs(self, shapes)
  local dim = shapes[1][#shapes[1]]
  if type(dim) ~= "number" then
    binding.error(string.format("%s: the query's last dimension must be known to build the scale, got %s", who(self),
      layer.shape_text(shapes[1])))
  end
  if self.use_scale then
    self.scale = self:add_weight { name = "scale", shape = { dim }, initializer = "glorot_uniform" }
  end
end

function AdditiveAttention:_calculate_scores(query, key)
  local q, k = shape_ops.expand_dims(query, -2), shape_ops.expand_dims(key, -3)
  local t = math_ops.tanh(q + k)
  if self.scale then t = self.scale * t end
  return reduce_ops.reduce_sum(t, -1)
end

function AdditiveAttention:get_config()
  local c = Attention.get_config(self)
  c.score_mode = nil
  return c
end

return M
